//! Typed runtime events and the bus that fans them out.
//!
//! Every send emits `a2a.send.initiated` first and exactly one of
//! `a2a.send.policy_rejected`, `a2a.send.deduplicated`, `a2a.send.busy`,
//! `a2a.send.completed` or `a2a.send.failed` last; task status and artifact updates
//! come in between. Each event carries the send's entry point, sender, target,
//! contextId, taskId, payload type and intent, idempotency key and a timestamp.
//!
//! The bus is a bounded broadcast channel: a subscriber that falls behind loses the
//! oldest events and is told how many ([`Received::Lagged`]); it never slows the
//! runtime down. Events are built only when someone is subscribed.

use std::sync::Arc;
use std::time::SystemTime;

use agentyard_policy::EntryPoint;
use agentyard_transport::a2a::{TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use agentyard_transport::handoff::{Intent, PayloadType};
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
            Self::PayloadFallback => "a2a.payload.fallback",
            Self::TaskStatus => "a2a.task.status",
            Self::TaskArtifact => "a2a.task.artifact",
            Self::PushFailed => "a2a.push.failed",
        }
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
    /// The intent the payload type maps to; absent for free text.
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
    pub(crate) intent: Option<Intent>,
    pub(crate) idempotency_key: Option<Arc<str>>,
}

impl Envelope {
    pub(crate) fn event(&self, kind: EventKind, detail: EventDetail) -> Event {
        Event {
            kind,
            entry_point: self.entry_point,
            from: self.from.clone(),
            to: Arc::clone(&self.to),
            context_id: self.context_id.clone(),
            task_id: self.task_id.clone(),
            payload_type: self.payload_type,
            intent: self.intent,
            idempotency_key: self.idempotency_key.clone(),
            timestamp: SystemTime::now(),
            detail,
        }
    }
}

/// The runtime's event bus.
#[derive(Debug, Clone)]
pub(crate) struct EventBus {
    tx: broadcast::Sender<Arc<Event>>,
}

impl EventBus {
    pub(crate) fn new(capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(capacity.max(1));
        Self { tx }
    }

    /// Emits the event `make` builds, building it only if anyone listens.
    pub(crate) fn emit(&self, make: impl FnOnce() -> Event) {
        if self.tx.receiver_count() > 0 {
            let event = make();
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
    }

    pub(crate) fn subscribe(&self) -> Subscription {
        Subscription {
            rx: self.tx.subscribe(),
        }
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
