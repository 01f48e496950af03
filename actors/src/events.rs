//! Typed runtime events and the bus that fans them out.
//!
//! Every send emits `a2a.send.initiated` first and exactly one of
//! `a2a.send.policy_rejected`, `a2a.send.deduplicated`, `a2a.send.busy`,
//! `a2a.send.completed` or `a2a.send.failed` last; task status and artifact updates
//! come in between, and `a2a.response` (the agent's answer) comes right before
//! `a2a.send.completed`. Each event carries the send's entry point, sender, target,
//! contextId, taskId, payload type, raw payload (`payloadJson`) and intent,
//! idempotency key and a timestamp.
//!
//! # The response event
//!
//! `a2a.response` is the agent's turn ending with an answer (task `completed`,
//! `input-required` or `auth-required`). Its `payloadType`, `payloadJson` and
//! `intent` describe the *answer's* handoff payload (absent when the answer is free
//! text); `inResponseToPayloadType` is the payload type of the send it answers (the
//! `question` an `answer` answers, the `task_delegation` a `status_report` reports
//! on). Its `from` and `to` stay those of the send, so that every event of one send
//! groups by them: the answer goes from `to` back to `from`.
//!
//! The bus is a bounded broadcast channel: a subscriber that falls behind loses the
//! oldest events and is told how many ([`Received::Lagged`]); it never slows the
//! runtime down. Events are built only when someone is subscribed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use agentyard_policy::EntryPoint;
use agentyard_transport::a2a::{Message, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use agentyard_transport::handoff::{self, HandoffPayload, Intent, PayloadType};
use agentyard_transport::{ContextId, TaskId};
use serde::Serialize;
use tokio::sync::broadcast;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub enum EventKind {
    /// A send entered the supervisor (always the first event of a send).
    #[serde(rename = "a2a.send.initiated")]
    SendInitiated,
    /// The policy refused the send; the agent did not run.
    #[serde(rename = "a2a.send.policy_rejected")]
    SendPolicyRejected,
    /// The idempotency key was seen before; the first send's task was returned.
    #[serde(rename = "a2a.send.deduplicated")]
    SendDeduplicated,
    /// A concurrency limit and its queue were full; the send was refused.
    #[serde(rename = "a2a.send.busy")]
    SendBusy,
    /// The agent finished handling the message (task completed, or waiting for input).
    #[serde(rename = "a2a.send.completed")]
    SendCompleted,
    /// The send failed: routing failed, or its task failed, was canceled or rejected.
    #[serde(rename = "a2a.send.failed")]
    SendFailed,
    /// The agent answered: its turn ended `completed`, `input-required` or
    /// `auth-required` (right before `a2a.send.completed`). See the module docs.
    #[serde(rename = "a2a.response")]
    Response,
    /// A text part looked like a handoff payload but failed validation, so the message
    /// travels as free text (the problems are in the detail).
    #[serde(rename = "a2a.payload.fallback")]
    PayloadFallback,
    /// A task changed status.
    #[serde(rename = "a2a.task.status")]
    TaskStatus,
    /// A task produced (a chunk of) an artifact.
    #[serde(rename = "a2a.task.artifact")]
    TaskArtifact,
    /// A push notification could not be delivered: its webhook refused it, its host
    /// did not resolve or resolved to an address the operator does not allow, or every
    /// attempt failed (the reason, with the webhook URL, is in the detail).
    #[serde(rename = "a2a.push.failed")]
    PushFailed,
    /// A workflow node began (an attempt of it, for agent nodes).
    #[serde(rename = "workflow.node.started")]
    WorkflowNodeStarted,
    /// A workflow node completed.
    #[serde(rename = "workflow.node.completed")]
    WorkflowNodeCompleted,
    /// A workflow node failed for good (the error is in the detail).
    #[serde(rename = "workflow.node.error")]
    WorkflowNodeError,
}

impl EventKind {
    /// The event's name, e.g. `a2a.send.initiated`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::SendInitiated => "a2a.send.initiated",
            Self::SendPolicyRejected => "a2a.send.policy_rejected",
            Self::SendDeduplicated => "a2a.send.deduplicated",
            Self::SendBusy => "a2a.send.busy",
            Self::SendCompleted => "a2a.send.completed",
            Self::SendFailed => "a2a.send.failed",
            Self::Response => "a2a.response",
            Self::PayloadFallback => "a2a.payload.fallback",
            Self::TaskStatus => "a2a.task.status",
            Self::TaskArtifact => "a2a.task.artifact",
            Self::PushFailed => "a2a.push.failed",
            Self::WorkflowNodeStarted => "workflow.node.started",
            Self::WorkflowNodeCompleted => "workflow.node.completed",
            Self::WorkflowNodeError => "workflow.node.error",
        }
    }

    /// Every kind, in the order of the send's life.
    pub const ALL: [Self; 14] = [
        Self::SendInitiated,
        Self::PayloadFallback,
        Self::SendPolicyRejected,
        Self::SendDeduplicated,
        Self::SendBusy,
        Self::TaskStatus,
        Self::TaskArtifact,
        Self::Response,
        Self::SendCompleted,
        Self::SendFailed,
        Self::PushFailed,
        Self::WorkflowNodeStarted,
        Self::WorkflowNodeCompleted,
        Self::WorkflowNodeError,
    ];

    /// The kind named `name` (as [`EventKind::name`] writes it).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.name() == name)
    }
}

/// What an event says beyond its envelope.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase", tag = "detail")]
#[non_exhaustive]
pub enum EventDetail {
    /// Nothing more.
    None,
    /// Why a send was rejected or failed, or what a fallback found wrong.
    Reason {
        /// The reason, in words.
        reason: String,
    },
    /// The status update, exactly as A2A streams it.
    Status {
        /// The update.
        update: TaskStatusUpdateEvent,
    },
    /// The artifact update, exactly as A2A streams it.
    Artifact {
        /// The update.
        update: TaskArtifactUpdateEvent,
    },
    /// The agent's answer (on `a2a.response`): the status message it ended its turn
    /// with, if any.
    Response {
        /// The answer.
        message: Option<Message>,
    },
    /// A workflow node's progress (on `workflow.node.*`).
    #[serde(rename_all = "camelCase")]
    WorkflowNode {
        /// The workflow.
        workflow: String,
        /// The run's id.
        run_id: String,
        /// The task the run is the work of, when it runs as an agent.
        run_task_id: Option<TaskId>,
        /// The node.
        node: String,
        /// Why the node failed (on `workflow.node.error`).
        error: Option<String>,
    },
}

/// One runtime event.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// What happened.
    #[serde(rename = "type")]
    pub kind: EventKind,
    /// Where the send came in: `api`, `agent`, `http`, `workflow`.
    pub entry_point: EntryPoint,
    /// The sender, if known (an agent name or an authenticated principal).
    pub from: Option<Arc<str>>,
    /// The target agent type.
    pub to: Arc<str>,
    /// The conversation, once known.
    pub context_id: Option<ContextId>,
    /// The task, once known.
    pub task_id: Option<TaskId>,
    /// The handoff payload type; absent for free text.
    pub payload_type: Option<PayloadType>,
    /// The handoff payload as it was received (the JSON of the data part, the
    /// untyped payload text, or the typed payload as written), for replay and
    /// debugging; absent for free text. On `a2a.payload.fallback` it is the text
    /// that was rejected as a payload.
    pub payload_json: Option<Arc<str>>,
    /// On `a2a.response`: the payload type of the send being answered.
    pub in_response_to_payload_type: Option<PayloadType>,
    /// The intent: the payload type's for a payload, else what the runtime's
    /// intent classifier said of the free text (absent without one).
    pub intent: Option<Intent>,
    /// The send's idempotency key, if any.
    pub idempotency_key: Option<Arc<str>>,
    /// When the event was emitted.
    #[serde(serialize_with = "rfc3339")]
    pub timestamp: SystemTime,
    /// The rest.
    #[serde(flatten)]
    pub detail: EventDetail,
}

impl Event {
    /// An event from outside the send path (a workflow runner's node events): `kind`
    /// with `detail`, from `from` to `to`, at entry point `entry_point`, now.
    #[must_use]
    pub fn new(
        kind: EventKind,
        entry_point: EntryPoint,
        from: Option<&str>,
        to: &str,
        detail: EventDetail,
    ) -> Self {
        Self {
            kind,
            entry_point,
            from: from.map(Arc::from),
            to: Arc::from(to),
            context_id: None,
            task_id: None,
            payload_type: None,
            payload_json: None,
            in_response_to_payload_type: None,
            intent: None,
            idempotency_key: None,
            timestamp: SystemTime::now(),
            detail,
        }
    }
}

fn rfc3339<S: serde::Serializer>(v: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::clock::rfc3339(*v))
}

/// The send-level facts every event of one send repeats.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    pub(crate) entry_point: EntryPoint,
    pub(crate) from: Option<Arc<str>>,
    pub(crate) to: Arc<str>,
    pub(crate) context_id: Option<ContextId>,
    pub(crate) task_id: Option<TaskId>,
    pub(crate) payload_type: Option<PayloadType>,
    pub(crate) payload_json: Option<Arc<str>>,
    pub(crate) intent: Option<Intent>,
    pub(crate) idempotency_key: Option<Arc<str>>,
    /// When the supervisor accepted the send (for `agentyard_send_duration_seconds`).
    pub(crate) accepted: std::time::Instant,
    /// The target agent's metric handles, when metrics are on and the agent exists.
    pub(crate) metrics: Option<Arc<crate::metrics::AgentMetrics>>,
}

impl Envelope {
    /// Counts the send's closing `outcome` under its agent (nothing when metrics are
    /// off or the agent does not exist); a send whose turn settled, at `settled`,
    /// also records how long it took since it was accepted.
    pub(crate) fn count(
        &self,
        outcome: crate::metrics::Outcome,
        settled: Option<std::time::Instant>,
    ) {
        if let Some(metrics) = &self.metrics {
            let took = settled.map(|at| at.saturating_duration_since(self.accepted));
            metrics.send(self.entry_point, outcome, took);
        }
    }

    pub(crate) fn event(&self, kind: EventKind, detail: EventDetail) -> Event {
        Event {
            kind,
            entry_point: self.entry_point,
            from: self.from.clone(),
            to: Arc::clone(&self.to),
            context_id: self.context_id.clone(),
            task_id: self.task_id.clone(),
            payload_type: self.payload_type,
            payload_json: self.payload_json.clone(),
            in_response_to_payload_type: None,
            intent: self.intent,
            idempotency_key: self.idempotency_key.clone(),
            timestamp: SystemTime::now(),
            detail,
        }
    }

    /// The `a2a.payload.fallback` event: no payload, but the rejected text as
    /// `payloadJson` and what was wrong with it.
    pub(crate) fn fallback(&self, rejected: &Arc<str>, problems: String) -> Event {
        let mut event = self.event(
            EventKind::PayloadFallback,
            EventDetail::Reason { reason: problems },
        );
        event.payload_json = Some(Arc::clone(rejected));
        event
    }

    /// The `a2a.response` event for the agent's answer `message`: the payload
    /// fields describe the answer's own handoff payload, and
    /// `inResponseToPayloadType` the send's.
    pub(crate) fn response(&self, message: Option<&Message>) -> Event {
        let answer = message
            .and_then(handoff::payload_from_message)
            .and_then(Result::ok);
        let mut event = self.event(
            EventKind::Response,
            EventDetail::Response {
                message: message.cloned(),
            },
        );
        event.in_response_to_payload_type = self.payload_type;
        event.payload_type = answer.as_ref().map(HandoffPayload::payload_type);
        event.intent = event.payload_type.map(PayloadType::intent);
        event.payload_json = answer
            .and(message)
            .and_then(crate::handoff::raw_data_part)
            .map(Arc::from);
        event
    }
}

/// The runtime's event bus.
#[derive(Debug, Clone)]
pub(crate) struct EventBus {
    tx: broadcast::Sender<Arc<Event>>,
    /// The live subscriptions to every event. Counted apart from the channel: every
    /// send asks whether anyone listens several times, and the channel's own count
    /// takes its tail's lock, one shared by every sender on every core.
    watchers: Arc<AtomicUsize>,
    /// The subscriptions to the status changes of some tasks only.
    statuses: Arc<StatusWatchers>,
}

/// Which tasks' `a2a.task.status` events a status subscription wants.
pub(crate) type WantsStatus = Arc<dyn Fn(&TaskId) -> bool + Send + Sync>;

/// The filters of the live status subscriptions ([`EventBus::subscribe_statuses`]).
/// The push notifier is one, on by default: subscribed to every event, it had each
/// send build and broadcast half a dozen events (and woke up for each) to find the
/// rare task that has a webhook; ~9% of an HTTP send's instructions.
#[derive(Default)]
struct StatusWatchers {
    /// How many tasks the status subscriptions want at the moment, summed over their
    /// [`StatusInterest`]s. Read on every status change of every task: while it is
    /// zero (no task has a webhook, the usual case) the filters are not asked, and
    /// their lock, whose count every core would otherwise write a few times a send,
    /// is not taken.
    interest: AtomicUsize,
    filters: std::sync::RwLock<Vec<(u64, WantsStatus)>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for StatusWatchers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatusWatchers")
            .field("interest", &self.interest.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl StatusWatchers {
    fn wants(&self, task_id: &TaskId) -> bool {
        if self.interest.load(Ordering::Acquire) == 0 {
            return false;
        }
        self.filters
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .any(|(_, wants)| wants(task_id))
    }
}

/// A status subscriber's count of the tasks it wants, added to the bus's sum
/// ([`StatusWatchers::interest`]): a filter only ever says yes for a task counted
/// here, since the bus does not ask the filters while the sum is zero. Taken from
/// the bus before the filter is subscribed, so that the state the filter reads can
/// count into it; gives its count back when dropped.
#[derive(Debug)]
pub(crate) struct StatusInterest {
    statuses: Arc<StatusWatchers>,
    mine: AtomicUsize,
}

impl StatusInterest {
    /// One more task wanted: counted before a filter may say so.
    pub(crate) fn add(&self) {
        self.mine.fetch_add(1, Ordering::AcqRel);
        self.statuses.interest.fetch_add(1, Ordering::AcqRel);
    }

    /// How many tasks this subscriber counts now.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.mine.load(Ordering::Acquire)
    }

    /// One task fewer wanted.
    pub(crate) fn remove(&self) {
        // Never below this subscriber's own count: a stray `remove` must not take
        // another subscriber's interest away.
        if self
            .mine
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
        {
            self.statuses.interest.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for StatusInterest {
    fn drop(&mut self) {
        self.statuses
            .interest
            .fetch_sub(*self.mine.get_mut(), Ordering::AcqRel);
    }
}

impl EventBus {
    pub(crate) fn new(capacity: usize) -> Self {
        // tokio allocates the whole ring now, and panics on a capacity it cannot.
        let capacity = capacity.clamp(1, crate::SupervisorConfig::MAX_EVENT_CAPACITY);
        let (tx, _) = broadcast::channel(capacity);
        Self {
            tx,
            watchers: Arc::default(),
            statuses: Arc::default(),
        }
    }

    /// Whether anyone listens (so that an event that is costly to build can be
    /// built ahead of [`emit`](Self::emit) only when it will be sent).
    pub(crate) fn is_watched(&self) -> bool {
        self.watchers.load(Ordering::Acquire) > 0
    }

    /// Emits the event `make` builds, building it only if anyone listens.
    pub(crate) fn emit(&self, make: impl FnOnce() -> Event) {
        if self.is_watched() {
            self.send(make());
        }
    }

    /// Emits the `a2a.task.status` event of `task_id` that `make` builds, building it
    /// only if anyone listens to every event or a status subscription wants it.
    pub(crate) fn emit_status(&self, task_id: &TaskId, make: impl FnOnce() -> Event) {
        if self.is_watched() || self.statuses.wants(task_id) {
            self.send(make());
        }
    }

    fn send(&self, event: Event) {
        tracing::debug!(
            event = event.kind.name(),
            entry_point = %event.entry_point,
            to = %event.to,
            task_id = event.task_id.as_ref().map(TaskId::as_str),
            "event"
        );
        // Err only means every subscriber left in the meantime.
        let _ = self.tx.send(Arc::new(event));
    }

    pub(crate) fn subscribe(&self) -> Subscription {
        // Counted before the receiver exists, so an event sent after `subscribe`
        // returns is never skipped as unwatched.
        let watching = Watching::All {
            _place: Counted::new(&self.watchers),
        };
        Subscription {
            rx: self.tx.subscribe(),
            _watching: watching,
        }
    }

    /// A count of wanted tasks for a status subscriber to keep (see
    /// [`StatusInterest`]), starting at none.
    pub(crate) fn status_interest(&self) -> StatusInterest {
        StatusInterest {
            statuses: Arc::clone(&self.statuses),
            mine: AtomicUsize::new(0),
        }
    }

    /// A subscription that has the bus build the status changes of the tasks `wants`
    /// names (and no other event) for it. It receives whatever the bus sends, which
    /// is every event while anyone subscribes to them all: its reader filters too.
    /// `wants` is asked only while some [`StatusInterest`] counts a task (see
    /// [`status_interest`](Self::status_interest)): a filter that wants a task has
    /// counted it there first.
    pub(crate) fn subscribe_statuses(&self, wants: WantsStatus) -> Subscription {
        let id = self.statuses.next_id.fetch_add(1, Ordering::Relaxed);
        // As in `subscribe`: in place before the receiver exists.
        self.statuses
            .filters
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((id, wants));
        Subscription {
            rx: self.tx.subscribe(),
            _watching: Watching::Statuses(Arc::clone(&self.statuses), id),
        }
    }
}

/// What a subscription holds of the bus while it lives: its place among the
/// subscribers to every event, or its status filter.
#[derive(Debug)]
enum Watching {
    All { _place: Counted },
    Statuses(Arc<StatusWatchers>, u64),
}

impl Drop for Watching {
    fn drop(&mut self) {
        if let Self::Statuses(statuses, id) = self {
            statuses
                .filters
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .retain(|(other, _)| other != id);
        }
    }
}

/// A place in [`EventBus::watchers`], taken when made and given up when it drops.
#[derive(Debug)]
struct Counted(Arc<AtomicUsize>);

impl Counted {
    fn new(watchers: &Arc<AtomicUsize>) -> Self {
        watchers.fetch_add(1, Ordering::AcqRel);
        Self(Arc::clone(watchers))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What [`Subscription::recv`] gives.
#[derive(Debug, Clone)]
pub enum Received {
    /// The next event.
    Event(Arc<Event>),
    /// This subscriber fell behind and this many events were dropped for it.
    Lagged(u64),
}

/// A live subscription to the runtime's events.
#[derive(Debug)]
pub struct Subscription {
    rx: broadcast::Receiver<Arc<Event>>,
    _watching: Watching,
}

impl Subscription {
    /// Waits for the next event; `None` once the runtime is gone.
    pub async fn recv(&mut self) -> Option<Received> {
        match self.rx.recv().await {
            Ok(event) => Some(Received::Event(event)),
            Err(broadcast::error::RecvError::Lagged(n)) => Some(Received::Lagged(n)),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }

    /// Turns the subscription into a [`futures::Stream`].
    pub fn into_stream(self) -> impl futures::Stream<Item = Received> + Send + 'static {
        futures::stream::unfold(self, |mut sub| async move {
            let next = sub.recv().await?;
            Some((next, sub))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use agentyard_transport::TaskId;

    use super::{EntryPoint, Event, EventBus, EventDetail, EventKind};

    #[test]
    fn a_capacity_past_the_most_is_taken_as_the_most() {
        // usize::MAX would overflow the ring's allocation and panic.
        let bus = EventBus::new(usize::MAX);
        let _watching = bus.subscribe();
        assert!(bus.is_watched());
    }

    #[test]
    fn the_bus_is_watched_while_a_subscription_lives() {
        let bus = EventBus::new(4);
        assert!(!bus.is_watched());
        let first = bus.subscribe();
        let second = bus.clone().subscribe();
        assert!(bus.is_watched());
        drop(first);
        assert!(bus.is_watched(), "one subscription is left");
        let stream = second.into_stream();
        assert!(
            bus.is_watched(),
            "a subscription turned into a stream still listens"
        );
        drop(stream);
        assert!(!bus.is_watched());
    }

    fn status_of(task: &str) -> Event {
        let mut event = Event::new(
            EventKind::TaskStatus,
            EntryPoint::Api,
            None,
            "agent",
            EventDetail::None,
        );
        event.task_id = Some(TaskId::new(task));
        event
    }

    #[test]
    fn a_status_subscription_has_only_the_statuses_it_wants_built() {
        let bus = EventBus::new(8);
        let wanted = TaskId::new("wanted");
        let interest = bus.status_interest();
        interest.add();
        let mut statuses = bus.subscribe_statuses(Arc::new(move |task: &TaskId| *task == wanted));
        assert!(!bus.is_watched(), "it is no subscriber to every event");
        let built = AtomicUsize::new(0);
        let count = || {
            built.fetch_add(1, Ordering::Relaxed);
        };
        bus.emit(|| {
            count();
            Event::new(
                EventKind::SendInitiated,
                EntryPoint::Api,
                None,
                "agent",
                EventDetail::None,
            )
        });
        bus.emit_status(&TaskId::new("other"), || {
            count();
            status_of("other")
        });
        bus.emit_status(&TaskId::new("wanted"), || {
            count();
            status_of("wanted")
        });
        assert_eq!(
            built.load(Ordering::Relaxed),
            1,
            "only the wanted status is built"
        );
        let event = statuses.rx.try_recv().expect("the wanted status is sent");
        assert_eq!(event.task_id.as_ref().map(TaskId::as_str), Some("wanted"));
        assert!(statuses.rx.try_recv().is_err(), "and nothing else");

        // Gone with its subscription: a wanted task's status is built for nobody.
        drop(statuses);
        bus.emit_status(&TaskId::new("wanted"), || {
            count();
            status_of("wanted")
        });
        assert_eq!(built.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_filter_is_asked_only_while_some_task_is_counted_as_wanted() {
        let bus = EventBus::new(8);
        let asked = Arc::new(AtomicUsize::new(0));
        let _statuses = bus.subscribe_statuses(Arc::new({
            let asked = Arc::clone(&asked);
            move |_: &TaskId| {
                asked.fetch_add(1, Ordering::Relaxed);
                true
            }
        }));
        let emit = || bus.emit_status(&TaskId::new("any"), || status_of("any"));
        emit();
        assert_eq!(
            asked.load(Ordering::Relaxed),
            0,
            "nothing counted, not asked"
        );

        let first = bus.status_interest();
        let second = bus.status_interest();
        first.add();
        second.add();
        emit();
        assert_eq!(asked.load(Ordering::Relaxed), 1);

        // One subscriber's stray removals never take the other's count away.
        first.remove();
        first.remove();
        emit();
        assert_eq!(
            asked.load(Ordering::Relaxed),
            2,
            "the second still counts one"
        );

        // Dropped, an interest gives back whatever it still counted.
        second.add();
        drop(second);
        emit();
        assert_eq!(asked.load(Ordering::Relaxed), 2);
        first.add();
        emit();
        assert_eq!(asked.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn a_subscriber_to_every_event_has_every_status_built() {
        let bus = EventBus::new(8);
        let _statuses = bus.subscribe_statuses(Arc::new(|_: &TaskId| false));
        let mut all = bus.subscribe();
        bus.emit_status(&TaskId::new("any"), || status_of("any"));
        assert!(all.rx.try_recv().is_ok());
    }

    #[test]
    fn every_kind_is_listed_under_the_name_it_is_sent_as() {
        for kind in EventKind::ALL {
            let sent = serde_json::to_value(kind).expect("a kind serializes");
            assert_eq!(sent, kind.name());
            assert_eq!(EventKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(EventKind::from_name("a2a.send"), None);
    }
}
