use std::time::Duration;

use agentyard_transport::ContextId;
use agentyard_transport::a2a::TaskState;
use tokio_util::task::TaskTracker;

use super::*;
use crate::agent::{Agent, AgentError};
use crate::context::TaskContext;
use crate::port::tests::TestPort;
use crate::store::TaskStore;

struct Replies;

impl Agent for Replies {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        ctx.reply_text("done");
        Ok(())
    }
}

async fn spawn() -> ActorRef<SessionMsg> {
    let key = SessionKey {
        agent: Arc::from("echo"),
        context_id: ContextId::new("c"),
    };
    let (actor, _) = ractor::Actor::spawn(
        None,
        SessionActor,
        SessionActor::args(Arc::new(Replies) as Arc<dyn DynAgent>, &key, Runs::InTurn),
    )
    .await
    .expect("spawned");
    actor
}

/// Polls the store until the task reaches `state` (with a deadline).
async fn reaches(port: &TestPort, task_id: &agentyard_transport::TaskId, state: TaskState) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let task = port.store.get(task_id, Some(0)).await.expect("store");
        if task.is_some_and(|t| t.status.state == state) {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "never {state}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test]
async fn delivered_work_runs_on_the_sessions_agent() {
    let port = TestPort::new();
    let actor = spawn().await;
    let opened = port.open("hi").await;
    let task_id = opened.events.task_id.clone();
    let tracker = TaskTracker::new();
    actor
        .cast(SessionMsg::Deliver(Box::new(opened.work(&port, &tracker))))
        .expect("delivered");
    reaches(&port, &task_id, TaskState::Completed).await;
}

#[tokio::test]
async fn after_a_drain_work_is_handed_back_not_lost() {
    // The passivation handshake: what landed before the drain runs; what comes after
    // is refused with the work in the error, for the sender to take to a fresh
    // session.
    let port = TestPort::new();
    let actor = spawn().await;
    let before = port.open("before").await;
    let before_id = before.events.task_id.clone();
    let tracker = TaskTracker::new();
    actor
        .cast(SessionMsg::Deliver(Box::new(before.work(&port, &tracker))))
        .expect("delivered");
    actor.drain().expect("drains");
    let after = port.open("after").await;
    let after_id = after.events.task_id.clone();
    let refused = actor.cast(SessionMsg::Deliver(Box::new(after.work(&port, &tracker))));
    let Err(ractor::MessagingErr::SendErr(SessionMsg::Deliver(work))) = refused else {
        panic!("a send after the drain must get its work back");
    };
    assert_eq!(work.events.task_id, after_id);
    reaches(&port, &before_id, TaskState::Completed).await;
}

#[tokio::test]
async fn the_handlers_future_holds_only_the_boxed_turn() {
    // ractor's loop future, kept for each live session's life, holds the largest of
    // its handlers' futures twice; an `async fn` handler keeping its arguments took
    // an idle session's loop into the allocator's next size class
    // (docs/benchmarks.md).
    let port = TestPort::new();
    let actor = spawn().await;
    let opened = port.open("hi").await;
    let task_id = opened.events.task_id.clone();
    let tracker = TaskTracker::new();
    let key = SessionKey {
        agent: Arc::from("echo"),
        context_id: ContextId::new("c"),
    };
    let mut state = SessionState {
        agent: Arc::new(Replies),
        key,
        runs: Runs::InTurn,
    };
    let turn = SessionActor.handle(
        actor.clone(),
        SessionMsg::Deliver(Box::new(opened.work(&port, &tracker))),
        &mut state,
    );
    // 16 bytes in a release build, 24 in a debug one; the `async fn` kept 72.
    assert!(
        std::mem::size_of_val(&turn) <= 32,
        "the handler's future is {} bytes",
        std::mem::size_of_val(&turn)
    );
    turn.await.expect("the turn runs");
    reaches(&port, &task_id, TaskState::Completed).await;
}
