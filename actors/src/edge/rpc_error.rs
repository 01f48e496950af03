//! The one mapping from runtime and edge errors to JSON-RPC error objects (the table is
//! in the [module docs](super)): `From<Error>` and `From<EdgeError>` for
//! [`JsonRpcError`], and the edge's own refusals (a bad header, an agent not served,
//! a media type refused). Nothing else in the edge builds an error object; -32007 is
//! the transport's [`no_extended_card`](agentyard_transport::service::no_extended_card).

use agentyard_policy::RejectionKind;
use agentyard_transport::TaskId;
use agentyard_transport::a2a::TaskState;
use agentyard_transport::handoff::InvalidPayload;
use agentyard_transport::jsonrpc::JsonRpcError;
use serde_json::{Value, json};

use super::EdgeError;
use crate::error::Error;
use crate::store::StoreError;

/// The code of a send the policy refused (a server error of the JSON-RPC range that
/// A2A leaves free).
pub const POLICY_REJECTED: i64 = -32010;

/// The code of a send the runtime cannot take now: a concurrency limit and its queue
/// are full, or the runtime is shutting down. Always retryable.
pub const UNAVAILABLE: i64 = -32011;

/// The JSON-RPC error a client gets for a runtime error: the message is the error's
/// own text (it names the task, agent, rule or limit), and `data` says the same in a
/// form a program can branch on, always with a `reason`.
#[must_use]
pub fn from_runtime(error: &Error) -> JsonRpcError {
    match error {
        Error::TaskNotFound(task_id) => JsonRpcError::task_not_found()
            .with_message(error.to_string())
            .with_data(json!({"reason": "task_not_found", "taskId": task_id})),
        Error::TaskNotCancelable { task_id, state } => JsonRpcError::task_not_cancelable()
            .with_message(error.to_string())
            .with_data(json!({"reason": "task_not_cancelable", "taskId": task_id, "state": state})),
        Error::TaskTerminal { task_id, state } => JsonRpcError::invalid_params()
            .with_message(error.to_string())
            .with_data(json!({"reason": "task_terminal", "taskId": task_id, "state": state})),
        Error::TaskMismatch { task_id, .. } => JsonRpcError::invalid_params()
            .with_message(error.to_string())
            .with_data(json!({"reason": "task_mismatch", "taskId": task_id})),
        Error::InvalidMessage(_) => JsonRpcError::invalid_params()
            .with_message(error.to_string())
            .with_data(json!({"reason": "invalid_message"})),
        Error::DelegationCycle { agent, context_id } => JsonRpcError::invalid_params()
            .with_message(error.to_string())
            .with_data(json!({
                "reason": "delegation_cycle",
                "agent": agent,
                "contextId": context_id,
            })),
        Error::UnknownAgent(agent) => JsonRpcError::invalid_params()
            .with_message(error.to_string())
            .with_data(json!({"reason": "unknown_agent", "agent": agent})),
        Error::PolicyRejected { rejection, .. } => {
            let mut data = json!({
                "reason": "policy_rejected",
                "policy": rejection.kind().code(),
                "retryable": matches!(rejection.kind(), RejectionKind::RateLimited { .. }),
            });
            if let Some(after) = rejection.retry_after() {
                // Rounded up, so a client that waits this long is not refused again.
                let ms = after.as_nanos().div_ceil(1_000_000);
                data["retryAfterMs"] = Value::from(u64::try_from(ms).unwrap_or(u64::MAX));
            }
            JsonRpcError::new(POLICY_REJECTED, error.to_string()).with_data(data)
        }
        Error::Busy { scope, queue } => JsonRpcError::new(UNAVAILABLE, error.to_string())
            .with_data(
                json!({"reason": "busy", "scope": scope, "queue": queue, "retryable": true}),
            ),
        Error::ShuttingDown => JsonRpcError::new(UNAVAILABLE, error.to_string())
            .with_data(json!({"reason": "shutting_down", "retryable": true})),
        Error::SessionUnavailable { agent, .. } => {
            tracing::warn!(%error, "session unavailable");
            JsonRpcError::internal_error()
                .with_message(error.to_string())
                .with_data(
                    json!({"reason": "session_unavailable", "agent": agent, "retryable": true}),
                )
        }
        Error::Store(StoreError::NotFound(task_id)) => {
            from_runtime(&Error::TaskNotFound(task_id.clone()))
        }
        Error::Store(StoreError::Terminal { task_id, state }) => {
            from_runtime(&Error::TaskTerminal {
                task_id: task_id.clone(),
                state: *state,
            })
        }
        Error::Remote(remote) => {
            tracing::warn!(error = %remote, "remote agent unavailable");
            JsonRpcError::internal_error()
                .with_message(remote.to_string())
                .with_data(json!({"reason": "remote_unavailable", "retryable": true}))
        }
        Error::Store(store) => {
            // Internals stay in the log; the client learns only that the store failed.
            tracing::error!(error = %store, source = ?std::error::Error::source(store), "task store failed");
            JsonRpcError::internal_error()
                .with_message("Internal error: the task store failed")
                .with_data(json!({"reason": "store_failed", "retryable": true}))
        }
    }
}

/// The JSON-RPC error for an edge refusal (push notification configs).
#[must_use]
pub fn from_edge(error: &EdgeError) -> JsonRpcError {
    let reason = match error {
        EdgeError::InvalidWebhookUrl { .. } => "invalid_webhook_url",
        EdgeError::WebhookRefused { .. } => "webhook_refused",
        EdgeError::UnsupportedAuthentication { .. } => "unsupported_authentication",
        EdgeError::TooManyConfigs { .. } => "too_many_push_configs",
        EdgeError::ConfigNotFound { .. } => "push_config_not_found",
        other => {
            tracing::error!(error = %other, "edge error while answering a call");
            return JsonRpcError::internal_error()
                .with_message(format!("Internal error: {other}"))
                .with_data(json!({"reason": "internal"}));
        }
    };
    JsonRpcError::invalid_params()
        .with_message(error.to_string())
        .with_data(json!({"reason": reason}))
}

impl From<Error> for JsonRpcError {
    fn from(error: Error) -> Self {
        from_runtime(&error)
    }
}

impl From<EdgeError> for JsonRpcError {
    fn from(error: EdgeError) -> Self {
        from_edge(&error)
    }
}

/// -32602: the call names an agent this server does not serve.
pub(crate) fn not_served(agent: &str) -> JsonRpcError {
    JsonRpcError::invalid_params()
        .with_message(format!("no agent named `{agent}` is served here"))
        .with_data(json!({"reason": "unknown_agent", "agent": agent}))
}

/// -32602: the send came back through another runtime to an agent already waiting on
/// its chain of sends (`Error::DelegationCycle` is the same refusal within one
/// runtime, where the conversation is known too).
pub(crate) fn delegation_cycle_across(agent: &str) -> JsonRpcError {
    JsonRpcError::invalid_params()
        .with_message(format!(
            "delegation cycle: agent `{agent}` is already waiting on this chain of sends \
             (it came back through another runtime); sending to it again would loop"
        ))
        .with_data(json!({"reason": "delegation_cycle", "agent": agent}))
}

/// -32003: push notifications are switched off on this server.
pub(crate) fn push_disabled() -> JsonRpcError {
    JsonRpcError::push_notification_not_supported()
        .with_message(
            "Push Notification is not supported: push notifications are disabled on this server",
        )
        .with_data(json!({"reason": "push_disabled"}))
}

/// -32603: a task stream that did not start with its task (the runtime always
/// starts one so; this is a bug, said plainly).
pub(crate) fn stream_without_task(task_id: Option<&TaskId>) -> JsonRpcError {
    let message = match task_id {
        Some(id) => {
            format!("Internal error: the stream of task `{id}` did not start with the task")
        }
        None => String::from("Internal error: the task stream did not start with the task"),
    };
    JsonRpcError::internal_error().with_message(message)
}

/// -32004 (A2A 1.0 `SubscribeToTask`): the task has already ended.
pub(crate) fn ended_task_not_subscribable(task_id: &TaskId, state: TaskState) -> JsonRpcError {
    JsonRpcError::unsupported_operation()
        .with_message(format!(
            "Unsupported operation: task `{task_id}` has already ended ({state}); GetTask returns it"
        ))
        .with_data(json!({"taskId": task_id, "state": state}))
}

/// -32602: the message's handoff data part is not a valid payload.
pub(crate) fn invalid_payload(invalid: &InvalidPayload) -> JsonRpcError {
    JsonRpcError::invalid_params()
        .with_message(format!(
            "invalid message: the handoff payload in `message.parts` is invalid: {invalid}"
        ))
        .with_data(json!({"reason": "invalid_payload"}))
}

/// -32602: the `Idempotency-Key` header has `problem`.
pub(crate) fn invalid_idempotency_key(problem: &str) -> JsonRpcError {
    JsonRpcError::invalid_params()
        .with_message(format!("the Idempotency-Key header {problem}"))
        .with_data(json!({"reason": "invalid_idempotency_key"}))
}

/// -32005: the agent produces none of the media types the request accepts.
pub(crate) fn output_mode_not_accepted(
    agent: &str,
    accepted: &[String],
    produced: &[String],
) -> JsonRpcError {
    JsonRpcError::content_type_not_supported()
        .with_message(format!(
            "Incompatible content types: agent `{agent}` produces {produced:?}, and the request accepts only {accepted:?}"
        ))
        .with_data(json!({
            "reason": "output_mode_not_accepted",
            "accepted": accepted,
            "produced": produced,
        }))
}

/// -32005: part `index` of the message is of a media type the agent does not accept.
pub(crate) fn input_mode_not_accepted(
    agent: &str,
    index: usize,
    media: &str,
    accepted: &[String],
) -> JsonRpcError {
    JsonRpcError::content_type_not_supported()
        .with_message(format!(
            "Incompatible content types: `message.parts[{index}]` is {media}, and agent `{agent}` accepts only {accepted:?}"
        ))
        .with_data(json!({
            "reason": "input_mode_not_accepted",
            "part": index,
            "mediaType": media,
            "accepted": accepted,
        }))
}

/// -32602 with `detail` after the standard message.
pub(crate) fn invalid_params(detail: String) -> JsonRpcError {
    let error = JsonRpcError::invalid_params();
    let message = format!("{}: {detail}", error.message);
    error.with_message(message)
}

#[cfg(test)]
mod tests;
