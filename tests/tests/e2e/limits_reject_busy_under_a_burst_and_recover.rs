//! Concurrency limits: past a limit a send waits in a bounded line; past the line it is
//! refused at once with `Error::Busy` and an `a2a.send.busy` event. Every send that
//! got in completes, a refused send leaves no session behind, and once the burst is
//! over sends go through again.
//!
//! The agent waits at a gate the test holds closed, so exactly `limit` sends run and
//! `queue` wait while the burst arrives; which sends are refused is then certain.

use std::time::Duration;

use agentyard::{
    AgentDescriptor, ContextId, Error, EventKind, LimitScope, Message, Result, Runtime,
    RuntimeBuilder, Settled, TaskState,
};
use agentyard_tests::{EventLog, Gated, eventually, within};
use tokio::task::JoinHandle;

const SOON: Duration = Duration::from_secs(5);

type Pending = JoinHandle<Result<Settled>>;

fn spawn_send(runtime: &Runtime, to: &'static str, message: Message) -> Pending {
    let runtime = runtime.clone();
    tokio::spawn(async move { runtime.send_and_wait(to, message).await })
}

/// Sends `messages` at once and waits until the `refused` sends that cannot get in
/// have been refused; returns their errors and the accepted sends, still waiting.
async fn burst(
    runtime: &Runtime,
    messages: Vec<(&'static str, Message)>,
    refused: usize,
) -> (Vec<Error>, Vec<Pending>) {
    let pending: Vec<Pending> = messages
        .into_iter()
        .map(|(to, message)| spawn_send(runtime, to, message))
        .collect();
    eventually(SOON, "the refused sends return", async || {
        pending.iter().filter(|p| p.is_finished()).count() >= refused
    })
    .await;
    let (done, waiting): (Vec<Pending>, Vec<Pending>) =
        pending.into_iter().partition(JoinHandle::is_finished);
    let mut errors = Vec::new();
    for handle in done {
        match handle.await.expect("the send task did not panic") {
            Ok(completed) => panic!(
                "a send completed while the gate was closed: {:?}",
                completed.task
            ),
            Err(error) => errors.push(error),
        }
    }
    assert_eq!(errors.len(), refused, "refused: {errors:?}");
    (errors, waiting)
}

async fn all_complete(accepted: Vec<Pending>) {
    for handle in accepted {
        let done = within(SOON, "an accepted send", handle)
            .await
            .expect("the send task did not panic")
            .expect("an accepted send is never refused later");
        assert_eq!(done.task.status.state, TaskState::Completed);
    }
}

async fn start(builder: RuntimeBuilder, gated: &Gated, names: &[&str]) -> Runtime {
    let mut builder = builder;
    for name in names {
        let gated = gated.clone();
        builder = builder.agent(AgentDescriptor::new(*name), move |_| gated.clone());
    }
    builder.build().await.expect("runtime starts")
}

fn assert_busy(errors: &[Error], scope: LimitScope, queue: usize) {
    for error in errors {
        assert!(
            matches!(error, Error::Busy { scope: s, queue: q } if *s == scope && *q == queue),
            "expected busy at the {scope} limit, got {error:?}"
        );
    }
}

#[tokio::test]
async fn a_burst_past_the_agent_limit_and_its_queue_is_refused_busy_then_recovers() {
    let gated = Gated::default();
    let runtime = start(
        Runtime::builder().agent_limit(2).agent_queue(2),
        &gated,
        &["worker"],
    )
    .await;
    let log = EventLog::start(&runtime);

    let messages = (0..10)
        .map(|i| ("worker", Message::user_text(format!("job {i}"))))
        .collect();
    let (refused, accepted) = burst(&runtime, messages, 6).await;

    assert_busy(&refused, LimitScope::Agent, 2);
    assert_eq!(accepted.len(), 4, "two run and two wait");
    // Each send is a new conversation: a refused one must not leave its session
    // behind, or a flood past the limit would fill memory with idle sessions.
    assert_eq!(
        runtime.supervisor().session_count(),
        4,
        "one per accepted send"
    );
    eventually(
        SOON,
        "the two running sends reached the agent",
        async || gated.started.count() == 2,
    )
    .await;
    eventually(SOON, "a busy event per refused send", async || {
        log.count(EventKind::SendBusy) == 6
    })
    .await;

    gated.gate.open();
    all_complete(accepted).await;
    assert_eq!(gated.finished.count(), 4, "only accepted sends ran");

    for i in 0..6 {
        let done = runtime
            .send_and_wait("worker", Message::user_text(format!("after {i}")))
            .await
            .expect("after the burst, sends go through again");
        assert_eq!(done.task.status.state, TaskState::Completed);
    }
}

#[tokio::test]
async fn a_burst_past_the_global_limit_is_refused_busy_whatever_the_agent() {
    let gated = Gated::default();
    let runtime = start(
        Runtime::builder().global_limit(1).global_queue(1),
        &gated,
        &["a", "b"],
    )
    .await;

    let messages = ["a", "b", "a", "b"]
        .into_iter()
        .map(|to| (to, Message::user_text("work")))
        .collect();
    let (refused, accepted) = burst(&runtime, messages, 2).await;

    assert_busy(&refused, LimitScope::Global, 1);
    assert_eq!(
        runtime.supervisor().session_count(),
        2,
        "one per accepted send"
    );
    gated.gate.open();
    all_complete(accepted).await;
    assert_eq!(gated.finished.count(), 2);
    for to in ["a", "b"] {
        runtime
            .send_and_wait(to, Message::user_text("after"))
            .await
            .expect("after the burst, sends go through again");
    }
}

#[tokio::test]
async fn a_burst_into_one_session_is_refused_busy_past_its_queue() {
    let gated = Gated::default();
    let runtime = start(Runtime::builder().session_queue(1), &gated, &["worker"]).await;
    let context = ContextId::new("one-conversation");

    let messages = (0..4)
        .map(|i| {
            let message = Message::user_text(format!("msg {i}")).with_context_id(context.clone());
            ("worker", message)
        })
        .collect();
    let (refused, accepted) = burst(&runtime, messages, 2).await;

    assert_busy(&refused, LimitScope::Session, 1);
    gated.gate.open();
    all_complete(accepted).await;
    runtime
        .send_and_wait(
            "worker",
            Message::user_text("after").with_context_id(context.clone()),
        )
        .await
        .expect("the session takes messages again");
}

#[tokio::test]
async fn a_keyed_send_refused_busy_can_be_retried_with_the_same_key() {
    let gated = Gated::default();
    let runtime = start(
        Runtime::builder().agent_limit(1).agent_queue(1),
        &gated,
        &["worker"],
    )
    .await;
    let keyed = || {
        agentyard::SendRequest::new("worker", Message::user_text("charge"))
            .idempotency_key("payment-9")
    };

    // One send runs and one waits in line: the keyed send finds no room.
    let messages = (0..2)
        .map(|i| ("worker", Message::user_text(format!("occupy {i}"))))
        .collect();
    let (_, occupying) = burst(&runtime, messages, 0).await;
    eventually(SOON, "one runs", async || gated.started.count() == 1).await;
    let error = runtime
        .supervisor()
        .send(keyed())
        .await
        .expect_err("no slot and no room in line");
    assert!(matches!(error, Error::Busy { .. }), "{error:?}");

    gated.gate.open();
    all_complete(occupying).await;
    // The line is empty now, so at worst the retry waits in it.
    let retried = runtime
        .supervisor()
        .send_and_wait(keyed())
        .await
        .expect("the refused send left its key free");
    assert!(
        !retried.deduplicated,
        "it is the first send that got a task"
    );
    assert_eq!(retried.task.status.state, TaskState::Completed);
    assert_eq!(gated.finished.count(), 3);
}
