use std::time::Duration;

use agentyard_transport::TaskId;
use agentyard_transport::a2a::Task;
use tokio_util::task::TaskTracker;

use super::*;
use crate::agent::{Agent, AgentError};
use crate::port::tests::TestPort;
use crate::store::TaskStore;

/// Runs `agent` on a fresh task of the test port and returns the task as it ended.
async fn run(agent: impl Agent) -> (Task, Arc<TestPort>) {
    let port = TestPort::new();
    let opened = port.open("hi").await;
    let task_id = opened.events.task_id.clone();
    let tracker = TaskTracker::new();
    opened
        .work(&port, &tracker)
        .run(Arc::new(agent) as Arc<dyn DynAgent>)
        .await;
    let task = port
        .store
        .get(&task_id, None)
        .await
        .expect("store")
        .expect("task");
    (task, port)
}

fn status_text(task: &Task) -> String {
    task.status
        .message
        .as_deref()
        .map(Message::text)
        .unwrap_or_default()
}

struct Replies;

impl Agent for Replies {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        ctx.reply_text("done");
        Ok(())
    }
}

#[tokio::test]
async fn ok_completes_with_the_reply_and_offers_the_session() {
    let (task, port) = run(Replies).await;
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(status_text(&task), "done");
    assert_eq!(
        task.history.map(|h| h.len()),
        Some(2),
        "the reply joins the history"
    );
    // Once by the finish (the task ended), once when the work lets go of it.
    assert_eq!(port.settled_count(), 2);
}

struct AsksThenErrs;

impl Agent for AsksThenErrs {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        ctx.require_input("which one?");
        Err("the lookup broke".into())
    }
}

#[tokio::test]
async fn an_error_after_an_outcome_fails_the_task_and_says_what_was_dropped() {
    let (task, _) = run(AsksThenErrs).await;
    assert_eq!(task.status.state, TaskState::Failed);
    let text = status_text(&task);
    assert!(text.contains("the lookup broke"), "{text}");
    assert!(text.contains("input-required outcome"), "{text}");
}

struct Panics;

impl Agent for Panics {
    async fn handle(&self, _ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        panic!("boom")
    }
}

#[tokio::test]
async fn a_panic_fails_the_task_with_its_text() {
    let (task, _) = run(Panics).await;
    assert_eq!(task.status.state, TaskState::Failed);
    assert!(status_text(&task).contains("panicked: boom"));
}

#[tokio::test]
async fn work_dropped_before_it_ran_fails_its_task_visibly() {
    let port = TestPort::new();
    let opened = port.open("hi").await;
    let task_id = opened.events.task_id.clone();
    let tracker = TaskTracker::new();
    drop(opened.work(&port, &tracker));
    expect_failed_to_be_sent_again(&port, &task_id).await;
}

/// The future `run` returns holds the work until its first poll: dropped before it
/// (a caller that stopped waiting first, a runtime shutting down), the task fails
/// as if the work had been dropped.
#[tokio::test]
async fn a_turn_dropped_before_its_first_poll_fails_its_task_visibly() {
    let port = TestPort::new();
    let opened = port.open("hi").await;
    let task_id = opened.events.task_id.clone();
    let tracker = TaskTracker::new();
    drop(
        opened
            .work(&port, &tracker)
            .run(Arc::new(Replies) as Arc<dyn DynAgent>),
    );
    expect_failed_to_be_sent_again(&port, &task_id).await;
}

/// Polls the store until the task has failed asking to be sent again.
async fn expect_failed_to_be_sent_again(port: &TestPort, task_id: &TaskId) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let task = port.store.get(task_id, None).await.expect("store");
        if let Some(task) = task.filter(|t| t.status.state == TaskState::Failed) {
            assert!(status_text(&task).contains("send it again"));
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "never failed");
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn a_canceled_task_is_not_run() {
    let port = TestPort::new();
    let opened = port.open("hi").await;
    opened.cancel.cancel();
    let tracker = TaskTracker::new();
    opened
        .work(&port, &tracker)
        .run(Arc::new(Panics) as Arc<dyn DynAgent>)
        .await;
    assert_eq!(port.live.len(), 1, "left to the cancel that ends it");
}
