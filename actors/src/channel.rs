//! How a live task's updates go out: the store first, then the task's own followers
//! ([`TaskChannel`]: its state for waiters, its update stream for streamers), then the
//! event bus. Nothing here knows about sessions or the supervisor.

use std::sync::{Arc, Mutex, PoisonError};

use agentyard_transport::a2a::{
    Artifact, Message, StreamEvent, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use agentyard_transport::{ContextId, TaskId};
use tokio::sync::broadcast;

use crate::error::Result;
use crate::events::{Envelope, EventBus, EventDetail, EventKind};
use crate::send::{Follow, Handover, Published, StateWatch, Watcher};
use crate::signal;
use crate::store::{TaskStore, at_once};

#[cfg(test)]
mod tests;

/// How a live task's updates reach whoever waits on it.
///
/// Waiting for a task to settle (the request/reply hot path) only needs its latest
/// state: a [`signal`], one small allocation. The full update stream is a `broadcast`
/// whose slots tokio allocates up front, so it is made only when someone streams the
/// task.
///
/// The broadcast is let go as soon as it carries a turn's final update that stops for
/// input: a task that waits for input keeps only its `watch`, not a ring of `capacity`
/// slots, and a later subscriber starts a fresh one. Followers still read what was
/// sent, then the end. An ended task's broadcast goes with the channel itself.
#[derive(Debug)]
pub(crate) struct TaskChannel {
    /// The state, and with a settled one what its waiter is handed.
    state: signal::Sender<TaskState, Handover>,
    updates: Mutex<Option<broadcast::Sender<Published>>>,
    capacity: usize,
}

impl TaskChannel {
    pub(crate) fn new(state: TaskState, capacity: usize) -> Arc<Self> {
        Arc::new(Self {
            state: signal::Sender::new(state),
            updates: Mutex::new(None),
            // Each streamed task allocates its ring whole when its first stream starts.
            capacity: capacity.clamp(1, crate::SupervisorConfig::MAX_STREAM_CAPACITY),
        })
    }

    /// What a caller that wants to `follow` the task receives.
    pub(crate) fn follow(&self, follow: Follow) -> Watcher {
        match follow {
            Follow::Nothing => Watcher::Nothing,
            Follow::State => Watcher::State(self.watch()),
            Follow::Updates => Watcher::Updates(self.subscribe()),
        }
    }

    /// Every update from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Published> {
        self.updates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert_with(|| broadcast::channel(self.capacity).0)
            .subscribe()
    }

    /// How many streams follow this task's updates now.
    pub(crate) fn stream_count(&self) -> usize {
        self.updates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map_or(0, broadcast::Sender::receiver_count)
    }

    /// The task's state now.
    pub(crate) fn state(&self) -> TaskState {
        self.state.get()
    }

    /// The task's state from now on.
    pub(crate) fn watch(&self) -> StateWatch {
        self.state.subscribe()
    }

    /// Whether anyone waits on the task's state (then its settled task is read back
    /// for them).
    pub(crate) fn is_waited_on(&self) -> bool {
        self.state.is_watched()
    }

    /// Records a state change that is not published as an update (a task resumed by a
    /// new message goes back to `submitted`).
    pub(crate) fn set_state(&self, state: TaskState) {
        self.state.send_replace(state);
    }

    fn publish(&self, seq: u64, event: StreamEvent, settled: Option<Handover>) {
        // Only a turn that stops for input lets the broadcast go: the task lives on
        // (waiting, perhaps for hours) and should not hold a ring of slots. An ended
        // task's channel goes with its live entry, and until then `stream_count` must
        // still see the streams that have not yet taken the final event (the shutdown
        // waits for them).
        let interrupted = match &event {
            StreamEvent::StatusUpdate(update) => {
                self.state.send_with(update.status.state, settled);
                update.is_final && !update.status.state.is_terminal()
            }
            _ => false,
        };
        let mut updates = self.updates.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = updates.as_ref() {
            // Err only means nobody streams this task right now.
            let _ = tx.send((seq, Arc::new(event)));
        }
        if interrupted {
            *updates = None;
        }
    }
}

/// Publishes a task's updates: store first, then the task's stream, then the bus.
///
/// Shared, not copied: the live table, the turn and its context each hold one, and a
/// copy of the ids and the send's envelope would be about ten reference counts to
/// raise and lower, and two hundred bytes to move, every time.
#[derive(Debug, Clone)]
pub(crate) struct TaskEvents(Arc<Publisher>);

/// What [`TaskEvents`] shares: the task, its channel, and the envelope of the send
/// whose turn publishes (a continued task gets a new one, on the same channel).
#[derive(Debug)]
pub(crate) struct Publisher {
    pub(crate) task_id: TaskId,
    pub(crate) context_id: ContextId,
    pub(crate) channel: Arc<TaskChannel>,
    pub(crate) envelope: Envelope,
}

impl std::ops::Deref for TaskEvents {
    type Target = Publisher;

    fn deref(&self) -> &Publisher {
        &self.0
    }
}

impl TaskEvents {
    /// The publisher of task `task_id`'s updates on `channel`, for the send of
    /// `envelope`.
    pub(crate) fn new(
        task_id: TaskId,
        context_id: ContextId,
        channel: Arc<TaskChannel>,
        envelope: Envelope,
    ) -> Self {
        Self(Arc::new(Publisher {
            task_id,
            context_id,
            channel,
            envelope,
        }))
    }

    /// The same task and channel, published for another send's turn.
    pub(crate) fn for_send(&self, envelope: Envelope) -> Self {
        Self::new(
            self.task_id.clone(),
            self.context_id.clone(),
            Arc::clone(&self.channel),
            envelope,
        )
    }

    /// The update that announces `status`, as the event log and streams carry it.
    pub(crate) fn update(&self, status: TaskStatus, finality: Finality) -> TaskStatusUpdateEvent {
        TaskStatusUpdateEvent::new(
            self.task_id.clone(),
            self.context_id.clone(),
            status,
            finality == Finality::Final,
        )
    }

    /// Records and publishes a status that does not end the turn (e.g. `working`).
    pub(crate) async fn progress(
        &self,
        store: &dyn TaskStore,
        bus: &EventBus,
        status: TaskStatus,
    ) -> Result<()> {
        let (_, seq) = at_once::set_status_logged(
            store,
            &self.task_id,
            self.update(status.clone(), Finality::Progress),
        )
        .await?;
        self.publish(bus, status, Finality::Progress, seq, None, || {});
        Ok(())
    }

    /// Publishes a recorded status on the bus, runs `then`, and only then to the
    /// task's own followers: whoever waits on the task wakes after every bus event of
    /// this step (e.g. the send's closing event) has gone out, and one of them is
    /// handed `settled`.
    pub(crate) fn publish(
        &self,
        bus: &EventBus,
        status: TaskStatus,
        finality: Finality,
        seq: Option<u64>,
        settled: Option<Handover>,
        then: impl FnOnce(),
    ) {
        let update = self.update(status, finality);
        bus.emit_status(&self.task_id, || {
            self.envelope.event(
                EventKind::TaskStatus,
                EventDetail::Status {
                    update: update.clone(),
                },
            )
        });
        then();
        self.channel
            .publish(seq.unwrap_or(0), StreamEvent::StatusUpdate(update), settled);
    }

    /// Records and publishes an artifact, or one chunk of it.
    pub(crate) async fn artifact(
        &self,
        store: &dyn TaskStore,
        bus: &EventBus,
        artifact: Arc<Artifact>,
        chunk: ArtifactChunk,
    ) -> Result<()> {
        let append = chunk.appends();
        // One artifact, shared by the store's task, its event log, the stream and
        // the event bus.
        let mut update = TaskArtifactUpdateEvent::new(
            self.task_id.clone(),
            self.context_id.clone(),
            Arc::clone(&artifact),
        );
        update.append = append.then_some(true);
        update.last_chunk = Some(chunk.is_last());
        // The update is logged with the artifact, in one write.
        let (_, seq) = at_once::put_artifact_logged(
            store,
            &self.task_id,
            artifact,
            append,
            &StreamEvent::ArtifactUpdate(update.clone()),
        )
        .await?;
        self.channel.publish(
            seq.unwrap_or(0),
            StreamEvent::ArtifactUpdate(update.clone()),
            None,
        );
        bus.emit(|| {
            self.envelope
                .event(EventKind::TaskArtifact, EventDetail::Artifact { update })
        });
        Ok(())
    }
}

/// Whether a status update ends the turn (A2A's `final`), named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finality {
    /// More updates follow (`final` false).
    Progress,
    /// The turn's last update: the task ended or stops for input (`final` true).
    Final,
}

/// Which piece of a streamed artifact a chunk is: A2A's `append` and `lastChunk`,
/// named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArtifactChunk {
    /// The whole artifact at once, replacing one with the same id (`append` false,
    /// `lastChunk` true; what [`TaskContext::artifact`](crate::TaskContext::artifact)
    /// publishes).
    Whole,
    /// The first piece, replacing one with the same id; more follow (`append`
    /// false, `lastChunk` false).
    First,
    /// A piece added to the artifact; more follow (`append` true, `lastChunk` false).
    More,
    /// The final piece added to the artifact (`append` true, `lastChunk` true).
    Last,
}

impl ArtifactChunk {
    /// Whether the chunk's parts are added to the artifact rather than replace it.
    #[must_use]
    pub fn appends(self) -> bool {
        matches!(self, Self::More | Self::Last)
    }

    /// Whether no chunk of the artifact follows this one.
    #[must_use]
    pub fn is_last(self) -> bool {
        matches!(self, Self::Whole | Self::Last)
    }
}

/// A status in `state` stamped now, with an optional message.
pub(crate) fn status(state: TaskState, message: Option<Arc<Message>>) -> TaskStatus {
    let mut status = TaskStatus::new(state);
    status.message = message;
    status
}
