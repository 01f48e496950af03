//! Idempotency on the single send path (the seed's TC-02 and TC-07): a send repeated
//! with the same key returns the first send's task, marked deduplicated, without
//! running the agent again — whether the repeat comes after the first finished or
//! while it is still running — and a handoff payload's own id serves as the key.

use std::time::Duration;

use agentyard::handoff::{HandoffPayload, TaskDelegation};
use agentyard::{
    Agent, AgentDescriptor, AgentError, EventKind, Message, Runtime, SendRequest, TaskContext,
    TaskState,
};
use agentyard_tests::{Asking, Calls, Echo, EventLog, Gated, eventually, status_text, within};

const SOON: Duration = Duration::from_secs(5);

async fn runtime_with(name: &str, agent: impl Agent + Clone) -> Runtime {
    Runtime::builder()
        .agent(AgentDescriptor::new(name), move |_| agent.clone())
        .build()
        .await
        .expect("runtime starts")
}

#[tokio::test]
async fn a_repeated_key_returns_the_first_task_without_running_the_agent_again() {
    let echo = Echo::default();
    let runtime = runtime_with("echo", echo.clone()).await;
    let log = EventLog::start(&runtime);
    let request =
        |text: &str| SendRequest::new("echo", Message::user_text(text)).idempotency_key("order-7");

    let first = runtime
        .supervisor()
        .send_and_wait(request("place order 7"))
        .await
        .expect("the first send runs");
    let again = runtime
        .supervisor()
        .send_and_wait(request("place order 7 (retry)"))
        .await
        .expect("the repeat is answered");
    let submitted_again = runtime
        .send_request(request("place order 7 (second retry)"))
        .await
        .expect("the repeat is answered");

    assert!(!first.deduplicated);
    assert!(again.deduplicated);
    assert!(submitted_again.deduplicated);
    assert_eq!(again.task.id, first.task.id);
    assert_eq!(submitted_again.task.id, first.task.id);
    assert_eq!(again.task.status.state, TaskState::Completed);
    assert_eq!(status_text(&again.task), "echo: place order 7");
    assert_eq!(echo.calls.count(), 1, "the agent ran once");

    log.wait_for(SOON, "two deduplicated events", |_| {
        log.count(EventKind::SendDeduplicated) == 2
    })
    .await;
    for event in log.matching(|e| e.kind == EventKind::SendDeduplicated) {
        assert_eq!(event.task_id.as_ref(), Some(&first.task.id), "{event:?}");
        assert_eq!(event.idempotency_key.as_deref(), Some("order-7"));
    }
    assert_eq!(
        log.count(EventKind::SendCompleted),
        1,
        "a deduplicated send ends with its own event, not a second completion"
    );
}

#[tokio::test]
async fn different_keys_and_different_agents_do_not_collide() {
    let echo = Echo::default();
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("a"), {
            let echo = echo.clone();
            move |_| echo.clone()
        })
        .agent(AgentDescriptor::new("b"), {
            let echo = echo.clone();
            move |_| echo.clone()
        })
        .build()
        .await
        .expect("runtime starts");
    let send = |to: &str, key: &str| {
        runtime
            .supervisor()
            .send_and_wait(SendRequest::new(to, Message::user_text("hi")).idempotency_key(key))
    };

    let a1 = send("a", "k1").await.expect("sent");
    let a2 = send("a", "k2").await.expect("sent");
    let b1 = send("b", "k1").await.expect("sent");

    assert!(!a1.deduplicated && !a2.deduplicated && !b1.deduplicated);
    assert_ne!(a1.task.id, a2.task.id);
    assert_ne!(a1.task.id, b1.task.id);
    assert_eq!(echo.calls.count(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_sends_with_one_key_run_the_agent_once() {
    let gated = Gated::default();
    let runtime = runtime_with("slow", gated.clone()).await;
    let log = EventLog::start(&runtime);

    let senders: Vec<_> = (0..8)
        .map(|i| {
            let supervisor = runtime.supervisor().clone();
            tokio::spawn(async move {
                supervisor
                    .send_and_wait(
                        SendRequest::new("slow", Message::user_text(format!("attempt {i}")))
                            .idempotency_key("charge-card-42"),
                    )
                    .await
            })
        })
        .collect();
    eventually(SOON, "the first send reached the agent", async || {
        gated.started.count() == 1
    })
    .await;
    eventually(SOON, "every repeat joined the first", async || {
        log.count(EventKind::SendDeduplicated) == 7
    })
    .await;
    gated.gate.open();

    let mut results = Vec::new();
    for sender in senders {
        let done = within(SOON, "a concurrent send", sender)
            .await
            .expect("the sender task did not panic")
            .expect("every send is answered");
        results.push(done);
    }
    let first_id = &results[0].task.id;
    assert!(results.iter().all(|d| &d.task.id == first_id));
    assert!(
        results
            .iter()
            .all(|d| d.task.status.state == TaskState::Completed),
        "the repeats waited for the first send's outcome"
    );
    assert_eq!(results.iter().filter(|d| !d.deduplicated).count(), 1);
    assert_eq!(gated.started.count(), 1, "the agent ran once");
}

/// Records the typed payloads it receives.
#[derive(Clone, Default)]
struct Worker {
    calls: Calls,
    payloads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Agent for Worker {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.calls.hit();
        if let Some(payload) = ctx.payload() {
            self.payloads
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(payload.subject_id().to_owned());
        }
        ctx.reply_text("on it");
        Ok(())
    }
}

fn delegation(task_id: &str) -> HandoffPayload {
    TaskDelegation::builder()
        .task_id(task_id)
        .task_title("Write the release notes")
        .task_description("Summarise the changes since 0.1")
        .build()
        .expect("a valid delegation")
        .into()
}

#[tokio::test]
async fn a_handoff_task_id_serves_as_the_key_when_none_is_given() {
    let worker = Worker::default();
    let runtime = runtime_with("writer", worker.clone()).await;
    let log = EventLog::start(&runtime);
    let handoff = |text: &str, task_id: &str| {
        SendRequest::new("writer", Message::user_text(text))
            .from("planner")
            .payload(delegation(task_id))
    };

    let first = runtime
        .supervisor()
        .send_and_wait(handoff("please write the notes", "task-001"))
        .await
        .expect("the delegation runs");
    let resent = runtime
        .supervisor()
        .send_and_wait(handoff("please write the notes (resent)", "task-001"))
        .await
        .expect("the resend is answered");
    let other = runtime
        .supervisor()
        .send_and_wait(handoff("another task", "task-002"))
        .await
        .expect("another delegation runs");

    assert!(!first.deduplicated);
    assert!(resent.deduplicated);
    assert_eq!(resent.task.id, first.task.id);
    assert!(!other.deduplicated);
    assert_ne!(other.task.id, first.task.id);
    assert_eq!(worker.calls.count(), 2);
    assert_eq!(
        *worker.payloads.lock().unwrap_or_else(|e| e.into_inner()),
        ["task-001", "task-002"],
        "the agent got the typed payloads"
    );
    let dedup = log
        .wait_for(SOON, "the deduplicated event", |e| {
            e.kind == EventKind::SendDeduplicated
        })
        .await;
    assert_eq!(
        dedup.idempotency_key.as_deref(),
        Some("task_delegation:task-001")
    );
    assert_eq!(
        dedup.payload_type.map(|t| t.as_str()),
        Some("task_delegation")
    );
}

#[tokio::test]
async fn a_repeat_of_a_send_waiting_for_input_returns_at_once() {
    let asking = Asking::default();
    let runtime = runtime_with("asker", asking.clone()).await;
    let request =
        || SendRequest::new("asker", Message::user_text("paint the shed")).idempotency_key("shed");

    let first = runtime
        .supervisor()
        .send_and_wait(request())
        .await
        .expect("the first send runs");
    assert_eq!(first.task.status.state, TaskState::InputRequired);

    let again = within(
        SOON,
        "a repeated send_and_wait of a task waiting for input",
        runtime.supervisor().send_and_wait(request()),
    )
    .await
    .expect("the repeat is answered");
    assert!(again.deduplicated);
    assert_eq!(again.task.id, first.task.id);
    assert_eq!(again.task.status.state, TaskState::InputRequired);
    assert_eq!(asking.calls.count(), 1);
}
