//! Bad days seen from a caller: a task store that refuses writes fails the send with a
//! clear error, and a task whose outcome the store did not keep is never reported
//! done: its waiters and streams get a final `failed` naming the store, and nobody
//! waits forever.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use agentyard::store::{StoreError, TaskOwner, TaskStore};
use agentyard::{
    AgentDescriptor, Artifact, ContextId, EventKind, InMemoryTaskStore, Message, MessageId,
    Runtime, SendRequest, StreamEvent, Task, TaskId, TaskState, TaskStatus,
};
use agentyard_tests::agents::{Echo, Gated};
use agentyard_tests::{EventLog, eventually, within};
use async_trait::async_trait;
use futures::StreamExt as _;

/// What the store refuses.
const FINE: u8 = 0;
const NO_WRITES: u8 = 1;
const NO_ENDINGS: u8 = 2;
/// Answers a waiting send's insert and then loses it, as a durable store that
/// answers it once queued does when the database fails before the commit.
const LOSE_INSERTS: u8 = 3;

/// The in-memory store, refusing writes as `mode` says (a full disk, a database down).
#[derive(Debug, Default)]
struct Flaky {
    inner: InMemoryTaskStore,
    mode: Arc<AtomicU8>,
}

impl Flaky {
    fn refuse(&self, ending: bool) -> Result<(), StoreError> {
        match self.mode.load(Ordering::SeqCst) {
            NO_WRITES => Err(StoreError::Unavailable("disk full".into())),
            NO_ENDINGS if ending => Err(StoreError::Unavailable("disk full".into())),
            _ => Ok(()),
        }
    }
}

#[async_trait]
impl TaskStore for Flaky {
    async fn insert(&self, task: Task) -> Result<(), StoreError> {
        self.refuse(false)?;
        self.inner.insert(task).await
    }
    async fn insert_owned(&self, task: Task, owner: TaskOwner) -> Result<(), StoreError> {
        self.refuse(false)?;
        self.inner.insert_owned(task, owner).await
    }
    async fn insert_owned_unanswered(
        &self,
        task: Task,
        owner: TaskOwner,
    ) -> Result<(), StoreError> {
        if self.mode.load(Ordering::SeqCst) == LOSE_INSERTS {
            return Ok(());
        }
        self.insert_owned(task, owner).await
    }
    async fn owner(&self, id: &TaskId) -> Result<Option<TaskOwner>, StoreError> {
        self.inner.owner(id).await
    }
    async fn context_principal(
        &self,
        context_id: &ContextId,
    ) -> Result<Option<Arc<str>>, StoreError> {
        self.inner.context_principal(context_id).await
    }
    async fn get(&self, id: &TaskId, n: Option<usize>) -> Result<Option<Task>, StoreError> {
        self.inner.get(id, n).await
    }
    async fn set_status(&self, id: &TaskId, status: TaskStatus) -> Result<TaskState, StoreError> {
        self.refuse(status.state.is_terminal())?;
        self.inner.set_status(id, status).await
    }
    async fn append_history(&self, id: &TaskId, message: Arc<Message>) -> Result<(), StoreError> {
        self.refuse(false)?;
        self.inner.append_history(id, message).await
    }
    async fn put_artifact(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
    ) -> Result<Arc<Artifact>, StoreError> {
        self.refuse(false)?;
        self.inner.put_artifact(id, artifact, append).await
    }
    async fn append_event(
        &self,
        id: &TaskId,
        event: &StreamEvent,
    ) -> Result<Option<u64>, StoreError> {
        self.inner.append_event(id, event).await
    }
    async fn events_after(
        &self,
        id: &TaskId,
        after: u64,
    ) -> Result<Vec<(u64, StreamEvent)>, StoreError> {
        self.inner.events_after(id, after).await
    }
    async fn context_history(
        &self,
        context_id: &ContextId,
        before: Option<&MessageId>,
        limit: usize,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        self.inner.context_history(context_id, before, limit).await
    }
}

/// The in-memory store, refusing what `mode` says when it says it.
fn flaky(mode: &Arc<AtomicU8>) -> Flaky {
    Flaky {
        inner: InMemoryTaskStore::new(),
        mode: Arc::clone(mode),
    }
}

async fn runtime(mode: &Arc<AtomicU8>) -> Runtime {
    Runtime::builder()
        .store(flaky(mode))
        .agent(AgentDescriptor::new("echo"), |_| Echo::default())
        .build()
        .await
        .expect("the runtime starts")
}

/// A send to echo, answered within ten seconds whatever the store does.
async fn send_within_deadline(runtime: &Runtime) -> agentyard::Result<agentyard::Settled> {
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        runtime.send_and_wait("echo", Message::user_text("hi")),
    )
    .await
    .expect("the waiter is not left waiting")
}

/// A status that says the task failed because the store did not keep it.
fn assert_failed_by_the_store(status: &TaskStatus) {
    assert_eq!(status.state, TaskState::Failed);
    let why = status
        .message
        .as_deref()
        .map(Message::text)
        .unwrap_or_default();
    assert!(why.contains("task store"), "{why}");
}

/// Once the store is fine again, a send completes.
async fn sends_complete_again(runtime: &Runtime) {
    let settled = runtime
        .send_and_wait("echo", Message::user_text("hi"))
        .await
        .expect("answered");
    assert_eq!(settled.task.status.state, TaskState::Completed);
}

#[tokio::test]
async fn a_store_that_refuses_writes_fails_the_send_by_name_and_recovers_with_it() {
    let mode = Arc::new(AtomicU8::new(NO_WRITES));
    let runtime = runtime(&mode).await;
    let error = runtime
        .send_and_wait("echo", Message::user_text("hi"))
        .await
        .expect_err("nothing stored, nothing acknowledged");
    let text = error.to_string();
    assert!(text.contains("store"), "{text}");
    // The store is back: so are sends.
    mode.store(FINE, Ordering::SeqCst);
    sends_complete_again(&runtime).await;
    runtime.shutdown(std::time::Duration::from_secs(1)).await;
}

#[tokio::test]
async fn an_outcome_the_store_did_not_keep_is_never_reported_done() {
    let mode = Arc::new(AtomicU8::new(NO_ENDINGS));
    let runtime = runtime(&mode).await;
    // A waiter is woken and told the task failed, by the store, as a stream is.
    let settled = send_within_deadline(&runtime)
        .await
        .expect("the store can still be read");
    assert_failed_by_the_store(&settled.task.status);
    // A stream ends with a final `failed` that names the store.
    let stream = runtime
        .stream("echo", Message::user_text("hi"))
        .await
        .expect("accepted");
    let events: Vec<StreamEvent> = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        Box::pin(stream).collect(),
    )
    .await
    .expect("the stream ends");
    let Some(StreamEvent::StatusUpdate(last)) = events.last() else {
        panic!("no final update: {events:?}");
    };
    assert!(last.is_final);
    assert_failed_by_the_store(&last.status);
    runtime.shutdown(std::time::Duration::from_secs(1)).await;
}

/// A keyed repeat that waits beside the first send hears the same outcome: both are
/// told the task failed, by the store, not one of them `working` as the store has it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_waiter_of_an_outcome_the_store_did_not_keep_hears_it_failed() {
    const SOON: std::time::Duration = std::time::Duration::from_secs(10);
    let mode = Arc::new(AtomicU8::new(NO_ENDINGS));
    let gated = Gated::default();
    let runtime = Runtime::builder()
        .store(flaky(&mode))
        .agent(AgentDescriptor::new("slow"), {
            let gated = gated.clone();
            move |_| gated.clone()
        })
        .build()
        .await
        .expect("the runtime starts");
    let log = EventLog::start(&runtime);
    let send = || {
        let supervisor = runtime.supervisor().clone();
        tokio::spawn(async move {
            let request =
                SendRequest::new("slow", Message::user_text("hi")).idempotency_key("once");
            supervisor.send_and_wait(request).await
        })
    };
    let first = send();
    eventually(SOON, "the first send reached the agent", async || {
        gated.started.count() == 1
    })
    .await;
    let repeat = send();
    eventually(SOON, "the repeat joined the first", async || {
        log.count(EventKind::SendDeduplicated) == 1
    })
    .await;
    gated.gate.open();
    for (who, waiter) in [("the first send", first), ("the repeat", repeat)] {
        let settled = within(SOON, who, waiter)
            .await
            .expect("joined")
            .expect("the store can still be read");
        assert_failed_by_the_store(&settled.task.status);
    }
    runtime.shutdown(std::time::Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_send_whose_insert_the_store_lost_is_answered_not_left_waiting() {
    let mode = Arc::new(AtomicU8::new(LOSE_INSERTS));
    let runtime = runtime(&mode).await;
    let settled = send_within_deadline(&runtime).await;
    match settled {
        Ok(settled) => assert_ne!(settled.task.status.state, TaskState::Completed),
        Err(error) => assert!(error.to_string().contains("not found"), "{error}"),
    }
    mode.store(FINE, Ordering::SeqCst);
    sends_complete_again(&runtime).await;
    runtime.shutdown(std::time::Duration::from_secs(1)).await;
}
