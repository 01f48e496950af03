//! A [`Port`] with no supervisor behind it, for the unit tests of the modules below
//! the supervisor: an in-memory store, a bus, a live table, and sends that are
//! recorded and refused.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use agentyard_policy::EntryPoint;
use agentyard_transport::ContextId;
use agentyard_transport::a2a::{Message, Task, TaskState};
use tokio_util::task::TaskTracker;

use super::*;
use crate::cancel::Cancel;
use crate::channel::{TaskChannel, TaskEvents};
use crate::context::{Finish, TaskContext};
use crate::error::Error;
use crate::events::Envelope;
use crate::handoff::Handoff;
use crate::limits::Limiter;
use crate::store::{InMemoryTaskStore, TaskOwner};
use crate::task::Work;

/// The test port.
#[derive(Debug)]
pub(crate) struct TestPort {
    pub(crate) store: InMemoryTaskStore,
    pub(crate) events: EventBus,
    pub(crate) live: LiveTasks,
    pub(crate) history_depth: usize,
    /// Every send asked of the port, as it arrived.
    pub(crate) sent: Mutex<Vec<SendRequest>>,
    /// How many times a session was offered to the warm set.
    pub(crate) settled: AtomicUsize,
}

impl TestPort {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            store: InMemoryTaskStore::new(),
            events: EventBus::new(64),
            live: LiveTasks::default(),
            history_depth: 20,
            sent: Mutex::new(Vec::new()),
            settled: AtomicUsize::new(0),
        })
    }

    pub(crate) fn settled_count(&self) -> usize {
        self.settled.load(Ordering::SeqCst)
    }

    pub(crate) fn sent(&self) -> Vec<SendRequest> {
        self.sent.lock().expect("not poisoned").clone()
    }

    /// A task of agent `echo` in conversation `c`, submitted with `text`, stored and
    /// live; what its work needs to run.
    pub(crate) async fn open(&self, text: &str) -> Opened {
        let task_id = TaskId::mint();
        let context_id = ContextId::new("c");
        let mut message = Message::user_text(text).with_context_id(context_id.clone());
        message.task_id = Some(task_id.clone());
        let mut task = Task::new(
            task_id.clone(),
            context_id.clone(),
            TaskStatus::new(TaskState::Submitted),
        );
        task.history = Some(vec![message.clone().into()]);
        self.store
            .insert_owned(task, TaskOwner::new("echo", None))
            .await
            .expect("stored");
        let events = TaskEvents::new(
            task_id,
            context_id.clone(),
            TaskChannel::new(TaskState::Submitted, 8),
            Envelope {
                entry_point: EntryPoint::Api,
                from: None,
                to: Arc::from("echo"),
                context_id: Some(context_id.clone()),
                task_id: None,
                payload_type: None,
                payload_json: None,
                intent: None,
                idempotency_key: None,
                accepted: std::time::Instant::now(),
                metrics: None,
            },
        );
        let session = Arc::new(SessionShared::new(Limiter::new(1, 4), 0));
        let cancel = Cancel::new();
        self.live
            .create(Arc::from("echo"), events.clone(), cancel.clone(), &session);
        Opened {
            key: SessionKey {
                agent: Arc::from("echo"),
                context_id,
            },
            message,
            events,
            cancel,
            session,
        }
    }
}

/// An open task, as the send path leaves it for its work.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) key: SessionKey,
    pub(crate) message: Message,
    pub(crate) events: TaskEvents,
    pub(crate) cancel: Cancel,
    pub(crate) session: Arc<SessionShared>,
}

impl Opened {
    /// The context an agent handling this task gets, `hops` deep.
    pub(crate) fn context(&self, port: &Arc<TestPort>, hops: u32) -> TaskContext {
        TaskContext {
            port: Arc::clone(port) as Arc<dyn Port>,
            agent: Arc::from("echo"),
            task_id: self.events.task_id.clone(),
            context_id: self.events.context_id.clone(),
            message: self.message.clone().into(),
            payload: None,
            intent: None,
            request_metadata: None,
            extensions: Vec::new(),
            sender: None,
            entry_point: EntryPoint::Api,
            hops,
            waiting: Arc::default(),
            history: tokio::sync::OnceCell::new(),
            cancel: self.cancel.clone(),
            events: self.events.clone(),
            stored: crate::context::Stored::lifted(),
            reply: None,
            finish: Finish::Completed,
        }
    }

    /// The work that runs this task.
    pub(crate) fn work(self, port: &Arc<TestPort>, tracker: &TaskTracker) -> Work {
        Work {
            port: Arc::clone(port) as Arc<dyn Port>,
            agent_name: Arc::from("echo"),
            message: self.message.into(),
            handoff: Handoff::inspect(&Message::user_text(""), None),
            metadata: None,
            extensions: Vec::new(),
            sender: None,
            hops: 0,
            waiting: Arc::default(),
            cancel: self.cancel,
            events: self.events,
            _permits: None,
            started: false,
            key: self.key,
            session: self.session,
            _tracked: tracker.token(),
            cause: agentyard_transport::trace::Cause::default(),
        }
    }
}

impl Port for TestPort {
    fn store(&self) -> &dyn TaskStore {
        &self.store
    }

    fn events(&self) -> &EventBus {
        &self.events
    }

    fn live(&self) -> &LiveTasks {
        &self.live
    }

    fn history_depth(&self) -> usize {
        self.history_depth
    }

    fn cancel_grace(&self) -> Duration {
        Duration::from_millis(50)
    }

    fn settled(&self, _key: &SessionKey, _session: &Arc<SessionShared>) {
        self.settled.fetch_add(1, Ordering::SeqCst);
    }

    fn send(&self, request: SendRequest) -> BoxFuture<'_, Result<Submitted>> {
        let to = request.to.clone();
        self.sent.lock().expect("not poisoned").push(request);
        Box::pin(async move { Err(Error::UnknownAgent(to)) })
    }

    fn send_and_wait(&self, request: SendRequest) -> BoxFuture<'_, Result<Settled>> {
        let to = request.to.clone();
        self.sent.lock().expect("not poisoned").push(request);
        Box::pin(async move { Err(Error::UnknownAgent(to)) })
    }
}

#[tokio::test]
async fn finishing_a_task_ends_it_once_and_offers_its_session() {
    let port = TestPort::new();
    let opened = port.open("hi").await;
    let task_id = opened.events.task_id.clone();
    let mut state = opened.events.channel.watch();
    finish_task(&*port, &task_id, TaskStatus::new(TaskState::Completed))
        .await
        .expect("finished");
    assert_eq!(port.settled_count(), 1);
    assert_eq!(port.live.len(), 0);
    state.changed().await.expect("the waiter is told");
    assert_eq!(state.get(), TaskState::Completed);
    // A second finish (a cancel that lost the race) finds it ended in the store.
    let again = finish_task(&*port, &task_id, TaskStatus::new(TaskState::Canceled)).await;
    assert!(matches!(again, Err(StoreError::Terminal { .. })));
    assert_eq!(port.settled_count(), 1);
}

#[tokio::test]
async fn a_turn_that_stops_for_input_keeps_the_task_live() {
    let port = TestPort::new();
    let opened = port.open("hi").await;
    finish_task(
        &*port,
        &opened.events.task_id,
        TaskStatus::new(TaskState::InputRequired),
    )
    .await
    .expect("finished");
    assert_eq!(port.live.len(), 1, "waiting for input is not the end");
    assert_eq!(port.settled_count(), 0);
}
