//! Every send is seen: a send refused before it is routed — no parts, an invalid
//! handoff payload, a runtime shutting down — still emits `a2a.send.initiated` and
//! then `a2a.send.failed` with the reason, like every other refusal, so monitoring
//! counts every send.

use std::time::Duration;

use agentyard::handoff::{self, HandoffPayload, TaskDelegation};
use agentyard::{AgentDescriptor, Error, Event, EventDetail, EventKind, Message, Role, Runtime};
use agentyard_tests::{Echo, EventLog};

const SOON: Duration = Duration::from_secs(5);

async fn runtime() -> Runtime {
    let echo = Echo::default();
    Runtime::builder()
        .agent(AgentDescriptor::new("echo"), move |_| echo.clone())
        .build()
        .await
        .expect("runtime starts")
}

/// The send events of the log, as (kind, reason) in order.
fn send_events(log: &EventLog) -> Vec<(EventKind, String)> {
    log.matching(|e: &Event| matches!(e.kind, EventKind::SendInitiated | EventKind::SendFailed))
        .iter()
        .map(|e| {
            let reason = match &e.detail {
                EventDetail::Reason { reason } => reason.clone(),
                _ => String::new(),
            };
            (e.kind, reason)
        })
        .collect()
}

/// Waits for the failed event, then checks the pair and returns the reason.
async fn initiated_then_failed(log: &EventLog) -> String {
    log.wait_for(SOON, "the failed event", |e| {
        e.kind == EventKind::SendFailed
    })
    .await;
    let events = send_events(log);
    assert_eq!(
        events.iter().map(|(kind, _)| *kind).collect::<Vec<_>>(),
        [EventKind::SendInitiated, EventKind::SendFailed],
        "{events:?}"
    );
    let failed = log.matching(|e: &Event| e.kind == EventKind::SendFailed);
    assert_eq!(failed[0].to.as_ref(), "echo", "the event names the target");
    events[1].1.clone()
}

#[tokio::test]
async fn a_message_without_parts_is_announced_and_failed_with_the_reason() {
    let runtime = runtime().await;
    let log = EventLog::start(&runtime);
    let error = runtime
        .send("echo", Message::new(Role::User, Vec::new()))
        .await
        .expect_err("no parts");
    assert!(matches!(error, Error::InvalidMessage(_)), "{error:?}");
    let reason = initiated_then_failed(&log).await;
    assert!(reason.contains("parts"), "reason: {reason}");
}

#[tokio::test]
async fn an_invalid_payload_is_announced_and_failed_with_the_reason() {
    let runtime = runtime().await;
    let log = EventLog::start(&runtime);
    let payload = HandoffPayload::from(
        TaskDelegation::builder()
            .task_id("job-1")
            .task_title("Review")
            .task_description("Review PR #42")
            .build()
            .expect("a valid delegation"),
    );
    let mut message = handoff::into_message(Role::User, "please review", &payload);
    // Two handoff parts: a message carries at most one.
    let handoff_part = message.parts[1].clone();
    message.parts.push(handoff_part);
    let error = runtime
        .send("echo", message)
        .await
        .expect_err("an invalid payload");
    assert!(matches!(error, Error::InvalidMessage(_)), "{error:?}");
    let reason = initiated_then_failed(&log).await;
    assert!(reason.contains("handoff payload"), "reason: {reason}");
}

#[tokio::test]
async fn a_send_during_shutdown_is_announced_and_failed_with_the_reason() {
    let runtime = runtime().await;
    runtime.shutdown(Duration::from_secs(1)).await;
    let log = EventLog::start(&runtime);
    let error = runtime
        .send("echo", Message::user_text("too late"))
        .await
        .expect_err("shut down");
    assert!(matches!(error, Error::ShuttingDown), "{error:?}");
    let reason = initiated_then_failed(&log).await;
    assert!(reason.contains("shutting down"), "reason: {reason}");
}
