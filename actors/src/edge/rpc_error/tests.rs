use std::time::Duration;

use agentyard_policy::{Rejection, RejectionKind};
use agentyard_transport::a2a::TaskState;
use agentyard_transport::{ContextId, TaskId};
use serde_json::json;

use super::*;
use crate::limits::LimitScope;

fn task() -> TaskId {
    TaskId::new("t-9")
}

#[test]
fn task_not_found_is_32001_naming_the_task() {
    let error = from_runtime(&Error::TaskNotFound(task()));
    assert_eq!(error.code, -32001);
    assert!(error.message.contains("t-9"), "{}", error.message);
    assert_eq!(
        error.data,
        Some(json!({"reason": "task_not_found", "taskId": "t-9"}))
    );
}

#[test]
fn task_not_cancelable_is_32002_with_the_state() {
    let error = from_runtime(&Error::TaskNotCancelable {
        task_id: task(),
        state: TaskState::Completed,
    });
    assert_eq!(error.code, -32002);
    assert!(error.message.contains("completed"), "{}", error.message);
    assert_eq!(
        error.data.as_ref().and_then(|d| d.get("state")),
        Some(&json!("completed"))
    );
}

#[test]
fn message_problems_are_invalid_params() {
    let cases = [
        (
            Error::TaskTerminal {
                task_id: task(),
                state: TaskState::Failed,
            },
            "task_terminal",
        ),
        (
            Error::TaskMismatch {
                task_id: task(),
                owner: "agent `other`".to_owned(),
            },
            "task_mismatch",
        ),
        (
            Error::InvalidMessage("`message.parts` is empty".to_owned()),
            "invalid_message",
        ),
        (Error::UnknownAgent("ghost".to_owned()), "unknown_agent"),
    ];
    for (runtime, reason) in cases {
        let text = runtime.to_string();
        let error = from_runtime(&runtime);
        assert_eq!(error.code, -32602, "{text}");
        assert_eq!(error.message, text);
        assert_eq!(
            error.data.as_ref().and_then(|d| d.get("reason")),
            Some(&json!(reason))
        );
    }
}

#[test]
fn a_rate_limited_send_is_retryable_after_the_wait() {
    let rejection = Rejection::new(
        RejectionKind::RateLimited {
            retry_after: Duration::from_micros(1_500_001),
        },
        "send from `alice` to `echo` via http denied: rate limit exceeded",
    );
    let error = from_runtime(&Error::PolicyRejected {
        reason: rejection.to_string(),
        rejection,
    });
    assert_eq!(error.code, POLICY_REJECTED);
    assert!(
        error.message.contains("rate limit exceeded"),
        "{}",
        error.message
    );
    assert_eq!(
        error.data,
        Some(json!({
            "reason": "policy_rejected",
            "policy": "rate_limited",
            "retryable": true,
            "retryAfterMs": 1501,
        }))
    );
}

#[test]
fn a_denied_send_is_not_retryable() {
    let rejection = Rejection::new(RejectionKind::DefaultDeny, "no rule allows it");
    let error = from_runtime(&Error::PolicyRejected {
        reason: rejection.to_string(),
        rejection,
    });
    assert_eq!(error.code, POLICY_REJECTED);
    assert_eq!(
        error.data,
        Some(json!({"reason": "policy_rejected", "policy": "default_deny", "retryable": false}))
    );
}

#[test]
fn busy_and_shutting_down_are_unavailable_and_retryable() {
    let busy = from_runtime(&Error::Busy {
        scope: LimitScope::Agent,
        queue: 4,
    });
    assert_eq!(busy.code, UNAVAILABLE);
    assert!(busy.message.contains("per-agent"), "{}", busy.message);
    assert_eq!(
        busy.data,
        Some(json!({"reason": "busy", "scope": "agent", "queue": 4, "retryable": true}))
    );
    let down = from_runtime(&Error::ShuttingDown);
    assert_eq!(down.code, UNAVAILABLE);
    assert_eq!(
        down.data,
        Some(json!({"reason": "shutting_down", "retryable": true}))
    );
}

#[test]
fn store_errors_keep_their_meaning_and_hide_backend_details() {
    let missing = from_runtime(&Error::Store(StoreError::NotFound(task())));
    assert_eq!(missing.code, -32001);
    let ended = from_runtime(&Error::Store(StoreError::Terminal {
        task_id: task(),
        state: TaskState::Canceled,
    }));
    assert_eq!(ended.code, -32602);
    let backend = from_runtime(&Error::Store(StoreError::Backend(
        "connection to db-7.internal:5432 refused".into(),
    )));
    assert_eq!(backend.code, -32603);
    assert!(!backend.message.contains("db-7"), "{}", backend.message);
}

#[test]
fn an_unavailable_session_is_an_internal_error_naming_the_agent() {
    let error = from_runtime(&Error::SessionUnavailable {
        agent: "planner".to_owned(),
        context_id: ContextId::new("c-1"),
        reason: "the agent factory panicked".to_owned(),
    });
    assert_eq!(error.code, -32603);
    assert!(error.message.contains("planner"), "{}", error.message);
}

#[test]
fn webhook_refusals_are_invalid_params_naming_the_url() {
    let error = from_edge(&EdgeError::WebhookRefused {
        url: "http://10.0.0.8/hook".to_owned(),
        reason: "10.0.0.8 is a private-network address".to_owned(),
    });
    assert_eq!(error.code, -32602);
    assert!(
        error.message.contains("http://10.0.0.8/hook"),
        "{}",
        error.message
    );
    assert_eq!(error.data, Some(json!({"reason": "webhook_refused"})));
}

#[test]
fn edge_errors_that_are_not_refusals_are_internal() {
    let error = from_edge(&EdgeError::Start("boom".to_owned()));
    assert_eq!(error.code, -32603);
}

#[test]
fn a_cycle_within_one_runtime_and_one_across_two_give_the_same_reason() {
    let within = from_runtime(&Error::DelegationCycle {
        agent: "planner".to_owned(),
        context_id: ContextId::new("c-1"),
    });
    let across = delegation_cycle_across("planner");
    for error in [&within, &across] {
        assert_eq!(error.code, -32602);
        let data = error.data.as_ref().expect("data");
        assert_eq!(data["reason"], "delegation_cycle");
        assert_eq!(data["agent"], "planner");
        assert!(error.message.contains("`planner`"), "{}", error.message);
    }
    assert!(
        across.message.contains("another runtime"),
        "{}",
        across.message
    );
}
