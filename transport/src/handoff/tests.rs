//! Tests of the handoff module, one file per concern.

mod message;
mod parse;
pub(super) mod round_trip;
mod rules;
mod summary;

use serde_json::{Value, json};

use super::{HandoffPayload, InvalidPayload};

/// The fields an error names, in order.
fn fields(error: &InvalidPayload) -> Vec<&str> {
    error.errors().iter().map(|e| e.field.as_str()).collect()
}

/// Reads `value` as a payload, expecting it to be invalid.
fn invalid(value: Value) -> InvalidPayload {
    match HandoffPayload::from_json_value(&value) {
        Ok(payload) => panic!("expected {value} to be rejected, got {payload:?}"),
        Err(error) => error,
    }
}

/// Reads `value` as a payload, expecting it to be valid.
fn valid(value: Value) -> HandoffPayload {
    match HandoffPayload::from_json_value(&value) {
        Ok(payload) => payload,
        Err(error) => panic!("expected {value} to be accepted: {error}"),
    }
}

/// A minimal valid payload of each type, to modify in a test.
fn minimal(payload_type: &str) -> Value {
    match payload_type {
        "task_delegation" => json!({
            "payloadType": "task_delegation",
            "taskId": "task-001",
            "taskTitle": "Code review",
            "taskDescription": "Review PR #42",
        }),
        "status_report" => json!({
            "payloadType": "status_report",
            "taskId": "task-001",
            "status": "in_progress",
        }),
        "question" => json!({
            "payloadType": "question",
            "questionId": "q-001",
            "question": "Which branch?",
        }),
        "answer" => json!({
            "payloadType": "answer",
            "questionId": "q-001",
            "answer": "main",
        }),
        other => panic!("no minimal payload for {other}"),
    }
}

/// `minimal(payload_type)` with `key` set to `value` (`null` removes nothing:
/// it sets JSON null).
fn with(payload_type: &str, key: &str, value: Value) -> Value {
    let mut payload = minimal(payload_type);
    payload[key] = value;
    payload
}

/// `minimal(payload_type)` without `key`.
fn without(payload_type: &str, key: &str) -> Value {
    let mut payload = minimal(payload_type);
    if let Some(object) = payload.as_object_mut() {
        object.remove(key);
    }
    payload
}
