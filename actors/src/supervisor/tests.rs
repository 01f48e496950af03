mod caller_run;
mod delegation;

use super::*;
use crate::agent::{Agent, AgentError, TaskContext};
use crate::store::InMemoryTaskStore;
use agentyard_policy::AllowAll;
use agentyard_transport::a2a::{Message, TaskState};

struct Echo;

impl Agent for Echo {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(text);
        Ok(())
    }
}

async fn supervisor(warm_sessions: usize) -> Supervisor {
    Supervisor::start(
        SupervisorConfig {
            warm_sessions,
            ..SupervisorConfig::default()
        },
        vec![Registration::new(AgentDescriptor::new("echo"), |_| Echo)],
        Arc::new(AllowAll),
        Arc::new(InMemoryTaskStore::new()),
    )
    .await
    .expect("supervisor")
}

fn in_context(context: &str) -> SendRequest {
    SendRequest::new(
        "echo",
        Message::user_text("hi").with_context_id(ContextId::new(context)),
    )
}

/// Waits until every session's work has let go of it (the answer comes back before
/// the work is dropped).
async fn settle(supervisor: &Supervisor, warm: usize) {
    for _ in 0..1_000 {
        if supervisor.core.sessions.warm_len() == warm && supervisor.core.sessions.all_idle() {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("the sessions did not settle");
}

/// The reply is one message, shared by the task's history and its final status (and
/// its log and events), not a copy in each.
#[tokio::test]
async fn the_reply_is_one_message_shared_by_the_history_and_the_status() {
    let supervisor = supervisor(4).await;
    let done = supervisor
        .send_and_wait(in_context("shared"))
        .await
        .expect("answered");
    let status = done.task.status.message.as_ref().expect("a reply");
    let history = done.task.history.as_deref().unwrap_or_default();
    assert_eq!(history.len(), 2, "the message sent and the reply");
    assert_eq!(status.text(), "hi");
    assert!(
        Arc::ptr_eq(status, &history[1]),
        "the status and the history hold the same reply"
    );
}

#[tokio::test]
async fn the_warm_line_stays_bounded_when_one_conversation_goes_on_and_on() {
    let supervisor = supervisor(4).await;
    for _ in 0..1_000 {
        supervisor
            .send_and_wait(in_context("long"))
            .await
            .expect("answered");
    }
    settle(&supervisor, 1).await;
    let entries = supervisor.core.sessions.warm_entries();
    assert!(
        entries <= 2 + 64 + 1,
        "stale entries are dropped as they pile up: {entries} for one warm session"
    );
    assert_eq!(supervisor.session_count(), 1);
}

#[tokio::test]
async fn the_warm_count_follows_the_sessions_in_and_out() {
    let supervisor = supervisor(3).await;
    for i in 0..10 {
        supervisor
            .send_and_wait(in_context(&format!("c{i}")))
            .await
            .expect("answered");
    }
    settle(&supervisor, 3).await;
    assert_eq!(supervisor.session_count(), 3);

    // A warm session taken for a send leaves the count, and comes back when it settles.
    supervisor
        .send_and_wait(in_context("c9"))
        .await
        .expect("answered");
    settle(&supervisor, 3).await;
    assert_eq!(supervisor.session_count(), 3);

    // Removed by hand or by the sweep: out of the count too.
    assert!(supervisor.stop_session("echo", &ContextId::new("c9")));
    assert_eq!(supervisor.core.sessions.warm_len(), 2);
    supervisor.passivate_all_idle();
    assert_eq!(supervisor.core.sessions.warm_len(), 0);
    assert_eq!(supervisor.session_count(), 0);
}

#[tokio::test]
async fn session_counts_are_per_agent_and_follow_passivation() {
    let supervisor = supervisor(8).await;
    assert!(supervisor.session_counts().is_empty());
    for context in ["a", "b", "c"] {
        supervisor
            .send_and_wait(in_context(context))
            .await
            .expect("answered");
    }
    settle(&supervisor, 3).await;
    assert_eq!(supervisor.session_counts().get("echo"), Some(&3));
    assert!(supervisor.stop_session("echo", &ContextId::new("b")));
    assert_eq!(supervisor.session_counts().get("echo"), Some(&2));
    supervisor.passivate_all_idle();
    // An agent with no live session is not listed at all.
    assert!(supervisor.session_counts().is_empty());
}

#[tokio::test]
async fn a_send_refused_for_its_task_releases_its_idempotency_key() {
    let supervisor = supervisor(4).await;
    let mut bad = in_context("k").idempotency_key("once");
    bad.message.task_id = Some(TaskId::new("no-such-task"));
    let refused = supervisor.send_and_wait(bad).await;
    assert!(
        matches!(refused, Err(Error::TaskNotFound(_))),
        "{refused:?}"
    );
    // The key was released, not kept with the refusal: the corrected send runs.
    let done = supervisor
        .send_and_wait(in_context("k").idempotency_key("once"))
        .await
        .expect("the corrected send is accepted");
    assert!(!done.deduplicated);
    assert_eq!(done.task.status.state, TaskState::Completed);
    // And it, having made a task, keeps the key.
    let again = supervisor
        .send_and_wait(in_context("k").idempotency_key("once"))
        .await
        .expect("a repeat");
    assert!(again.deduplicated);
    assert_eq!(again.task.id, done.task.id);
}

/// An echo supervisor whose store keeps one ended task: the next to end makes it
/// forget the one before.
async fn keeping_one_ended_task() -> Supervisor {
    Supervisor::start(
        SupervisorConfig::default(),
        vec![Registration::new(AgentDescriptor::new("echo"), |_| Echo)],
        Arc::new(AllowAll),
        Arc::new(InMemoryTaskStore::new().finished_task_limit(1)),
    )
    .await
    .expect("supervisor")
}

/// Another send ends, and the store (keeping one ended task) forgets `task_id`.
async fn another_ends_and_the_store_forgets(supervisor: &Supervisor, task_id: &TaskId) {
    supervisor
        .send_and_wait(in_context("second"))
        .await
        .expect("the second answered");
    assert!(
        matches!(
            supervisor.get_task(task_id, None).await,
            Err(Error::TaskNotFound(_))
        ),
        "the store kept one ended task, the second"
    );
}

/// A waiter gets its task as it settled even when the store has forgotten it since:
/// here the store keeps one ended task, and another send ends before the waiter of
/// the first asks for it.
#[tokio::test]
async fn a_waiter_gets_its_settled_task_after_the_store_forgot_it() {
    let supervisor = keeping_one_ended_task().await;
    let mut first = in_context("first");
    let (submitted, watcher, run) = supervisor
        .submit(&mut first, Follow::State)
        .await
        .expect("submitted");
    // The first task's turn runs to its end, but its waiter has not asked yet.
    run.expect("the caller runs the turn").run().await;
    another_ends_and_the_store_forgets(&supervisor, &submitted.task.id).await;
    let task = supervisor
        .settle(&submitted, watcher)
        .await
        .expect("the waiter has its task");
    assert_eq!(task.id, submitted.task.id);
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(
        task.status.message.as_ref().map(|m| m.text()).as_deref(),
        Some("hi")
    );
    assert_eq!(task.history.as_deref().map(<[_]>::len), Some(2));
}

/// The two halves a blocking send with a webhook is made of (the webhook is stored in
/// between) answer the task as it settled too, not as the store has it by then.
#[tokio::test]
async fn a_pending_send_is_answered_with_its_settled_task_after_the_store_forgot_it() {
    let supervisor = keeping_one_ended_task().await;
    let mut pending = supervisor
        .send_pending(in_context("first"))
        .await
        .expect("pending");
    assert_eq!(pending.task().status.state, TaskState::Submitted);
    let task_id = pending.task().id.clone();
    pending
        .run
        .as_mut()
        .expect("the caller runs the turn")
        .run()
        .await;
    another_ends_and_the_store_forgets(&supervisor, &task_id).await;
    let answered = supervisor
        .wait_pending(pending, Duration::from_secs(5))
        .await
        .expect("the pending send has its task");
    assert_eq!(answered.task.id, task_id);
    assert_eq!(answered.task.status.state, TaskState::Completed);
    assert_eq!(
        answered
            .task
            .status
            .message
            .as_ref()
            .map(|m| m.text())
            .as_deref(),
        Some("hi")
    );
}
