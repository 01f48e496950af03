//! The events of the single send path (the seed's coordinator tests, §7.1): a send
//! emits `a2a.send.initiated` first and `a2a.send.completed` (or `failed`) last, with
//! the task's status updates and the agent's answer (`a2a.response`) in between, and every event names the entry point the
//! send came in through.

use std::sync::Arc;
use std::time::Duration;

use agentyard::policy::EntryPoint;
use agentyard::{
    Agent, AgentDescriptor, AgentError, Event, EventDetail, EventKind, Message, Runtime,
    SendRequest, TaskContext, TaskState,
};
use agentyard_tests::{Echo, EventLog, Fragile};

const SOON: Duration = Duration::from_secs(5);

/// An event's kind and, for a status update, the state it reports.
fn step(event: &Event) -> (EventKind, Option<TaskState>) {
    let state = match &event.detail {
        EventDetail::Status { update } => Some(update.status.state),
        _ => None,
    };
    (event.kind, state)
}

#[tokio::test]
async fn a_send_and_wait_emits_initiated_then_statuses_then_completed() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("echo"), |_| Echo::default())
        .build()
        .await
        .expect("runtime starts");
    let log = EventLog::start(&runtime);

    let done = runtime
        .send_and_wait("echo", Message::user_text("hi"))
        .await
        .expect("the send succeeds");
    let task_id = done.task.id.clone();
    log.wait_for(SOON, "the completed event", |e| {
        e.kind == EventKind::SendCompleted
    })
    .await;

    let steps: Vec<_> = log.events().iter().map(|e| step(e)).collect();
    assert_eq!(
        steps,
        [
            (EventKind::SendInitiated, None),
            (EventKind::TaskStatus, Some(TaskState::Submitted)),
            (EventKind::TaskStatus, Some(TaskState::Working)),
            (EventKind::TaskStatus, Some(TaskState::Completed)),
            (EventKind::Response, None),
            (EventKind::SendCompleted, None),
        ]
    );
    let events = log.events();
    for event in &events[1..] {
        assert_eq!(event.task_id.as_ref(), Some(&task_id), "{event:?}");
        assert_eq!(event.context_id.as_ref(), Some(&done.task.context_id));
    }
    let finals: Vec<bool> = events
        .iter()
        .filter_map(|e| match &e.detail {
            EventDetail::Status { update } => Some(update.is_final),
            _ => None,
        })
        .collect();
    assert_eq!(
        finals,
        [false, false, true],
        "only the last status is final"
    );
}

#[tokio::test]
async fn every_event_of_a_send_names_its_entry_point() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("echo"), |_| Echo::default())
        .build()
        .await
        .expect("runtime starts");
    let log = EventLog::start(&runtime);
    let relay = EntryPoint::other("discord_dm_relay");

    runtime
        .supervisor()
        .send_and_wait(
            SendRequest::new("echo", Message::user_text("from a sibling bot"))
                .entry_point(relay)
                .from("sibling-bot"),
        )
        .await
        .expect("the send succeeds");
    runtime
        .send_and_wait("echo", Message::user_text("from the api"))
        .await
        .expect("the send succeeds");
    eventually_two_completions(&log).await;

    let events = log.events();
    let from_relay: Vec<_> = events
        .iter()
        .filter(|e| e.from.as_deref() == Some("sibling-bot"))
        .collect();
    let from_api: Vec<_> = events.iter().filter(|e| e.from.is_none()).collect();
    assert_eq!(from_relay.len(), 6, "{from_relay:?}");
    assert_eq!(from_api.len(), 6, "{from_api:?}");
    for event in from_relay {
        assert_eq!(event.entry_point, relay, "{event:?}");
        assert_eq!(&*event.to, "echo");
    }
    for event in from_api {
        assert_eq!(event.entry_point, EntryPoint::Api, "{event:?}");
    }
}

async fn eventually_two_completions(log: &EventLog) {
    agentyard_tests::eventually(SOON, "two sends completed", async || {
        log.count(EventKind::SendCompleted) == 2
    })
    .await;
}

/// Hands every message on to `echo` and replies with what came back.
struct Front;

impl Agent for Front {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let inner = ctx
            .send_and_wait("echo", Message::user_text(ctx.message().text()))
            .await?;
        let reply = agentyard_tests::status_text(&inner.task);
        ctx.reply_text(format!("front: {reply}"));
        Ok(())
    }
}

#[tokio::test]
async fn a_send_between_agents_is_an_agent_entry_point_from_the_sender() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("front"), |_| Front)
        .agent(AgentDescriptor::new("echo"), |_| Echo::default())
        .build()
        .await
        .expect("runtime starts");
    let log = EventLog::start(&runtime);

    let done = runtime
        .send_and_wait("front", Message::user_text("hi"))
        .await
        .expect("the send succeeds");
    assert_eq!(agentyard_tests::status_text(&done.task), "front: echo: hi");
    eventually_two_completions(&log).await;

    let inner: Vec<Arc<Event>> = log.matching(|e| &*e.to == "echo");
    assert_eq!(
        inner.first().map(|e| e.kind),
        Some(EventKind::SendInitiated)
    );
    assert_eq!(inner.last().map(|e| e.kind), Some(EventKind::SendCompleted));
    for event in &inner {
        assert_eq!(event.entry_point, EntryPoint::Agent, "{event:?}");
        assert_eq!(event.from.as_deref(), Some("front"), "{event:?}");
    }
    let outer = log.matching(|e| &*e.to == "front");
    assert!(outer.iter().all(|e| e.entry_point == EntryPoint::Api));
    assert_eq!(
        outer.last().map(|e| e.kind),
        Some(EventKind::SendCompleted),
        "the outer send ends last, after the inner one"
    );
}

#[tokio::test]
async fn a_failing_agent_ends_its_send_with_a_failed_event_carrying_the_reason() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("fragile"), |_| Fragile::default())
        .build()
        .await
        .expect("runtime starts");
    let log = EventLog::start(&runtime);

    let done = runtime
        .send_and_wait("fragile", Message::user_text("error"))
        .await
        .expect("the send itself goes through");
    assert_eq!(done.task.status.state, TaskState::Failed);
    let failed = log
        .wait_for(SOON, "the failed event", |e| {
            e.kind == EventKind::SendFailed
        })
        .await;

    let steps: Vec<_> = log.events().iter().map(|e| step(e)).collect();
    assert_eq!(steps.first(), Some(&(EventKind::SendInitiated, None)));
    assert_eq!(steps.last(), Some(&(EventKind::SendFailed, None)));
    assert!(steps.contains(&(EventKind::TaskStatus, Some(TaskState::Failed))));
    assert!(
        matches!(&failed.detail, EventDetail::Reason { reason } if reason.contains(agentyard_tests::agents::ERROR_TEXT)),
        "{:?}",
        failed.detail
    );
    assert_eq!(log.count(EventKind::SendCompleted), 0);
}
