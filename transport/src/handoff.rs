//! Typed handoff payloads: task delegation, status report, question, answer.
//!
//! Agents that only exchange free text must guess each other's intent, cannot
//! tell a retry from a new request, and leave logs that say little. A handoff
//! payload is a small typed object that travels beside the free text: the text
//! stays for humans (and for receivers that do not know payloads), the payload is
//! the contract machines act on.
//!
//! # Payloads
//!
//! One JSON object, fields in camelCase, with a `payloadType` discriminator:
//!
//! | `payloadType` | required | optional | [`Intent`] |
//! |---|---|---|---|
//! | `task_delegation` | `taskId`, `taskTitle`, `taskDescription` | `context`, `deadline`, `priority`, `acceptanceCriteria` | `delegate` |
//! | `status_report` | `taskId`, `status` | `completedWork`, `remainingWork`, `blockers`, `progressPercent`, `artifacts` | `report` |
//! | `question` | `questionId`, `question` | `context`, `urgency`, `options` | `ask` |
//! | `answer` | `questionId`, `answer` | `confidence`, `references` | `respond` |
//!
//! Rules (every one is checked, and every broken one is reported at once as a
//! [`FieldError`] naming the field by its JSON path):
//!
//! - required fields are present; ids and required strings are not blank;
//! - optional strings are strings; `acceptanceCriteria`, `blockers`,
//!   `artifacts`, `options` and `references` are arrays of strings;
//! - `priority` is one of `critical`, `high`, `medium`, `low`;
//!   `status` one of `in_progress`, `completed`, `blocked`, `failed`;
//!   `urgency` one of `urgent`, `normal`, `low`;
//! - `deadline` is an RFC 3339 time (`2026-03-06T18:00:00+09:00`);
//! - `progressPercent` is an integer from 0 to 100;
//!   `confidence` a number from 0.0 to 1.0;
//! - `null` counts as absent for an optional field; unknown fields are ignored.
//!
//! # Two ways in
//!
//! - **Typed**: the builders ([`TaskDelegation::builder`] and the others) check
//!   every rule in `build()` and return [`InvalidPayload`] listing every invalid
//!   field, so a sender gets a clear error. Deserializing a [`HandoffPayload`]
//!   runs the same rules, so a value of the type is always valid.
//! - **Untyped**: [`parse_payload_json`] never fails. Text that is not a payload
//!   becomes free text; a payload that breaks rules becomes free text *with* its
//!   problems, so that the caller can record a warning and go on with the text,
//!   as the seed requires for backward compatibility.
//!
//! # What a payload gives the receiver
//!
//! - its intent ([`PayloadType::intent`]), so no free-text classification is
//!   needed; for free text this module offers none and [`ParsedPayload::intent`]
//!   is `None`;
//! - an idempotency key for retries and dedupe
//!   ([`HandoffPayload::idempotency_key`]) and the id that ties an exchange
//!   together ([`HandoffPayload::subject_id`]);
//! - a short summary for a model's context ([`HandoffPayload::summary`],
//!   [`build_message_context`]).

mod json;
mod payload;
mod summary;
mod validate;

pub use json::{ParsedPayload, parse_payload_json};
pub use payload::{
    Answer, AnswerBuilder, HandoffPayload, Intent, PayloadType, Priority, Question,
    QuestionBuilder, ReportStatus, StatusReport, StatusReportBuilder, TaskDelegation,
    TaskDelegationBuilder, Urgency,
};
pub use summary::{SUMMARY_HEADING, build_message_context};
pub use validate::{FieldError, InvalidPayload};

#[cfg(test)]
mod tests;
