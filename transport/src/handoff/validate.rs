//! The rules every payload obeys, and the error that lists every broken one.
//!
//! Both ways in (a typed builder and JSON) end in the builders' `finish`, which
//! calls the checks here, so the rules are written once.

use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::payload::Deadline;

/// One invalid field of a payload.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FieldError {
    /// Where the field is, as a JSON path relative to the payload object:
    /// `confidence`, `acceptanceCriteria[2]`; `$` is the payload object itself.
    /// Errors about a payload inside an A2A message are relative to the message
    /// (`parts[1].data.confidence`).
    pub field: String,
    /// What is wrong with it, for a human: `is required`,
    /// `must be from 0.0 to 1.0`.
    pub problem: String,
}

impl FieldError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// The same error with `prefix` (a JSON path) in front of its field.
    pub(super) fn under(mut self, prefix: &str) -> Self {
        self.field = if self.field == ROOT {
            prefix.to_owned()
        } else {
            format!("{prefix}.{}", self.field)
        };
        self
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

/// The path of the payload object itself.
pub(super) const ROOT: &str = "$";

/// A handoff payload broke one or more rules; [`errors`](Self::errors) lists
/// every one, in field order, at most one per field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid handoff payload: {}", list(.errors))]
pub struct InvalidPayload {
    errors: Vec<FieldError>,
}

impl InvalidPayload {
    /// Every invalid field (never empty).
    pub fn errors(&self) -> &[FieldError] {
        &self.errors
    }

    /// The invalid fields, by value.
    pub fn into_errors(self) -> Vec<FieldError> {
        self.errors
    }

    /// A single problem.
    pub(super) fn one(field: &str, problem: impl Into<String>) -> Self {
        InvalidPayload {
            errors: vec![FieldError::new(field, problem)],
        }
    }

    /// The error listing `errors`; an empty list (a bug in a caller) still
    /// yields a non-empty error.
    pub(super) fn from_errors(errors: Vec<FieldError>) -> Self {
        if errors.is_empty() {
            return InvalidPayload::one(ROOT, "is invalid");
        }
        InvalidPayload { errors }
    }

    /// The same errors with `prefix` in front of each field.
    pub(super) fn under(self, prefix: &str) -> Self {
        InvalidPayload {
            errors: self
                .errors
                .into_iter()
                .map(|error| error.under(prefix))
                .collect(),
        }
    }
}

fn list(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Problems found so far. Keeps the first problem per field: a field that is
/// present but of the wrong JSON type is not also reported as missing.
#[derive(Debug, Default)]
pub(super) struct Problems {
    errors: Vec<FieldError>,
}

impl Problems {
    /// Runs `check` on a fresh list; `check` returns `Some` only when it found
    /// nothing (the builders' `finish` contract).
    pub(super) fn run<T>(
        check: impl FnOnce(&mut Problems) -> Option<T>,
    ) -> Result<T, InvalidPayload> {
        let mut problems = Problems::default();
        let value = check(&mut problems);
        problems.into_result(value)
    }

    /// `Ok(value)` when there are no problems.
    pub(super) fn into_result<T>(self, value: Option<T>) -> Result<T, InvalidPayload> {
        match value {
            Some(value) if self.errors.is_empty() => Ok(value),
            // `finish` only returns `None` after adding a problem; `from_errors`
            // keeps the error non-empty even if a future check forgets to.
            _ => Err(InvalidPayload::from_errors(self.errors)),
        }
    }

    /// Puts the problems in the order of `fields` (top-level field names), so
    /// that shape problems found while reading JSON and rule problems found after
    /// it read as one list in field order. Stable: list items keep their order.
    pub(super) fn sort_by_field_order(&mut self, fields: &[&str]) {
        self.errors.sort_by_key(|error| {
            let top = error.field.split(['.', '[']).next().unwrap_or_default();
            fields.iter().position(|field| *field == top)
        });
    }

    pub(super) fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    pub(super) fn push(&mut self, field: impl Into<String>, problem: impl Into<String>) {
        let field = field.into();
        if !self.errors.iter().any(|error| error.field == field) {
            self.errors.push(FieldError::new(field, problem));
        }
    }

    /// A required value: present.
    pub(super) fn required<T>(&mut self, field: &str, value: Option<T>) -> Option<T> {
        if value.is_none() {
            self.push(field, "is required");
        }
        value
    }

    /// A required string or id: present and not blank. Blank counts as missing
    /// because an id of spaces cannot tell two tasks apart and a title of spaces
    /// tells the receiver nothing.
    pub(super) fn required_text(&mut self, field: &str, value: Option<String>) -> Option<String> {
        let value = self.required(field, value)?;
        if value.trim().is_empty() {
            self.push(field, "must not be empty");
            return None;
        }
        Some(value)
    }

    /// `deadline`: writable as RFC 3339, so that it survives the wire; the text
    /// is kept so that writing the payload later cannot fail.
    pub(super) fn deadline(
        &mut self,
        field: &str,
        value: Option<OffsetDateTime>,
    ) -> Option<Deadline> {
        let at = value?;
        match at.format(&Rfc3339) {
            Ok(text) => Some(Deadline { at, text }),
            Err(_) => {
                self.push(
                    field,
                    "must be an RFC 3339 time (year 0000 to 9999, offset in whole minutes)",
                );
                None
            }
        }
    }

    /// `progressPercent`: 0 to 100.
    pub(super) fn check_percent(&mut self, field: &str, value: Option<u8>) {
        if value.is_some_and(|percent| percent > 100) {
            self.push(field, PERCENT_PROBLEM);
        }
    }

    /// `confidence`: 0.0 to 1.0 inclusive; NaN fails the range test too.
    pub(super) fn check_confidence(&mut self, field: &str, value: Option<f64>) {
        if value.is_some_and(|confidence| !(0.0..=1.0).contains(&confidence)) {
            self.push(field, CONFIDENCE_PROBLEM);
        }
    }
}

/// The problem text for a `progressPercent` out of range or not an integer.
pub(super) const PERCENT_PROBLEM: &str = "must be an integer from 0 to 100";

/// The problem text for a `confidence` out of range or not a number.
pub(super) const CONFIDENCE_PROBLEM: &str = "must be a number from 0.0 to 1.0";
