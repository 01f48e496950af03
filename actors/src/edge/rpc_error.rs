//! The one mapping from runtime and edge errors to JSON-RPC error objects (the table is
//! in the [module docs](super)).

use agentyard_policy::RejectionKind;
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

#[cfg(test)]
mod tests;
