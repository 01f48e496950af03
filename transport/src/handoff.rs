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
//! One JSON object, fields in camelCase, with a `payloadType` discriminator
//! (`type` is accepted on input, see below):
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
//! **The discriminator.** agentyard always *writes* `payloadType` (the name the
//! events and the data part's marker use too). On input it also accepts `type`,
//! the seed's name, so a payload written as in the seed
//! (`{"type": "task_delegation", ...}`) is a typed payload. An object with both
//! keys is read only when they agree; otherwise the error names both. A `type`
//! that names no payload type (`{"type": "greeting"}`) is someone else's JSON,
//! not a payload.
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
//! # On the wire: the handoff extension
//!
//! Payloads travel between runtimes as an A2A profile extension identified by
//! [`HANDOFF_EXTENSION_URI`], `https://agentyard.dev/extensions/handoff/v1`.
//! This section is its specification; another runtime that follows it can
//! exchange payloads with agentyard.
//!
//! - **Agent card.** An agent that reads payloads lists the URI in
//!   `capabilities.extensions` (`required: false`: free text keeps working).
//! - **Activation.** A client that sends payloads lists the URI in the
//!   `X-A2A-Extensions` request header; the agent echoes it in the response.
//! - **Message.** A message carrying a payload has a `text` part with the free
//!   text (what a receiver that ignores the extension acts on) and **one** `data`
//!   part with the payload, and lists the URI in the message's `extensions`.
//! - **The data part.** `data` is the payload object exactly as in the table
//!   above, `payloadType` included, so that it stands on its own when copied out
//!   of the message. `metadata` has one key, the extension URI, whose value is
//!   `{"payloadType": "<type>"}`: it marks the part as the payload (a message may
//!   carry other data parts) and lets routers and logs read the type without
//!   reading the payload. The two `payloadType`s must agree. The version lives
//!   in the URI: an incompatible change gets `/v2`; compatible additions
//!   (optional fields) stay `/v1`, which is why unknown fields are ignored.
//! - **Receiving.** A receiver finds the data part whose metadata has the URI
//!   key ([`payload_from_message`]); no such part means a plain free-text
//!   message. A part that breaks a rule is reported with paths from the message
//!   (`parts[1].data.confidence`); more than one handoff part is an error.
//!
//! A `message/send` request's message delegating a task:
//!
//! ```json
//! {
//!   "kind": "message",
//!   "messageId": "9f1c2b9e-4c1d-4a57-9a43-3f0f7f3f2a10",
//!   "role": "user",
//!   "contextId": "ctx-42",
//!   "extensions": ["https://agentyard.dev/extensions/handoff/v1"],
//!   "parts": [
//!     { "kind": "text", "text": "Please review PR #42 before Friday evening." },
//!     {
//!       "kind": "data",
//!       "data": {
//!         "payloadType": "task_delegation",
//!         "taskId": "task-001",
//!         "taskTitle": "Code review",
//!         "taskDescription": "Review PR #42 (retry logic in the HTTP client)",
//!         "deadline": "2026-03-06T18:00:00+09:00",
//!         "priority": "high",
//!         "acceptanceCriteria": ["No open comments", "CI green"]
//!       },
//!       "metadata": {
//!         "https://agentyard.dev/extensions/handoff/v1": { "payloadType": "task_delegation" }
//!       }
//!     }
//!   ]
//! }
//! ```
//!
//! In Rust:
//!
//! ```
//! use agentyard_transport::a2a::Role;
//! use agentyard_transport::handoff::{self, HandoffPayload, Intent, Priority, TaskDelegation};
//!
//! let task = TaskDelegation::builder()
//!     .task_id("task-001")
//!     .task_title("Code review")
//!     .task_description("Review PR #42 (retry logic in the HTTP client)")
//!     .priority(Priority::High)
//!     .build()?;
//! let message = handoff::into_message(
//!     Role::User,
//!     "Please review PR #42 before Friday evening.",
//!     &HandoffPayload::from(task),
//! );
//!
//! // The receiver:
//! match handoff::payload_from_message(&message) {
//!     Some(Ok(payload)) => assert_eq!(payload.intent(), Intent::Delegate),
//!     Some(Err(invalid)) => panic!("tell the sender: {invalid}"),
//!     None => panic!("free text only: classify it some other way"),
//! }
//! # Ok::<(), handoff::InvalidPayload>(())
//! ```
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
mod message;
mod payload;
mod summary;
mod validate;

pub use json::{ParsedPayload, parse_payload_json};
pub use message::{HANDOFF_EXTENSION_URI, attach_to_message, into_message, payload_from_message};
pub use payload::{
    Answer, AnswerBuilder, HandoffPayload, Intent, PayloadType, Priority, Question,
    QuestionBuilder, ReportStatus, StatusReport, StatusReportBuilder, TaskDelegation,
    TaskDelegationBuilder, Urgency,
};
pub use summary::{SUMMARY_HEADING, build_message_context};
pub use validate::{FieldError, InvalidPayload};

#[cfg(test)]
mod tests;
