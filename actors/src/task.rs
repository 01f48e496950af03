//! Running one message of a task: the work that leaves the session's mailbox, and the
//! publishing of its status and artifact updates.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use agentyard_transport::a2a::{
    Artifact, Message, Metadata, Part, Role, StreamEvent, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use agentyard_transport::{ContextId, TaskId};
use futures::FutureExt;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::task_tracker::TaskTrackerToken;
use tracing::Instrument;

use crate::agent::{DynAgent, Finish, TaskContext};
use crate::error::Result;
use crate::events::{Envelope, EventDetail, EventKind};
use crate::handoff::Handoff;
use crate::limits::Permits;
use crate::send::{Follow, SessionKey, Watcher};
use crate::supervisor::{SessionShared, Supervisor};

#[cfg(test)]
mod tests;

/// An update with its number in the task's event log (0 when the store keeps no log).
pub(crate) type Sequenced = (u64, StreamEvent);

/// How a live task's updates reach whoever waits on it.
///
/// Waiting for a task to settle (the request/reply hot path) only needs its latest
/// state: a `watch`, one small allocation. The full update stream is a `broadcast`
/// whose slots tokio allocates up front, so it is made only when someone streams the
/// task.
///
/// The broadcast is let go as soon as it carries a turn's final update that stops for
/// input: a task that waits for input keeps only its `watch`, not a ring of `capacity`
/// slots, and a later subscriber starts a fresh one. Followers still read what was
/// sent, then the end. An ended task's broadcast goes with the channel itself.
#[derive(Debug)]
pub(crate) struct TaskChannel {
    state: watch::Sender<TaskState>,
    updates: Mutex<Option<broadcast::Sender<Sequenced>>>,
    capacity: usize,
}

impl TaskChannel {
    pub(crate) fn new(state: TaskState, capacity: usize) -> Arc<Self> {
        Arc::new(Self {
            state: watch::Sender::new(state),
            updates: Mutex::new(None),
            capacity: capacity.max(1),
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
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Sequenced> {
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

    /// The task's state from now on.
    pub(crate) fn watch(&self) -> watch::Receiver<TaskState> {
        self.state.subscribe()
    }

    /// Records a state change that is not published as an update (a task resumed by a
    /// new message goes back to `submitted`).
    pub(crate) fn set_state(&self, state: TaskState) {
        self.state.send_replace(state);
    }

    fn publish(&self, seq: u64, event: StreamEvent) {
        // Only a turn that stops for input lets the broadcast go: the task lives on
        // (waiting, perhaps for hours) and should not hold a ring of slots. An ended
        // task's channel goes with its live entry, and until then `stream_count` must
        // still see the streams that have not yet taken the final event (the shutdown
        // waits for them).
        let interrupted = match &event {
            StreamEvent::StatusUpdate(update) => {
                self.state.send_replace(update.status.state);
                update.is_final && !update.status.state.is_terminal()
            }
            _ => false,
        };
        let mut updates = self.updates.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = updates.as_ref() {
            // Err only means nobody streams this task right now.
            let _ = tx.send((seq, event));
        }
        if interrupted {
            *updates = None;
        }
    }
}

/// Publishes a task's updates: store first, then the task's stream, then the bus.
#[derive(Debug, Clone)]
pub(crate) struct TaskEvents {
    pub(crate) task_id: TaskId,
    pub(crate) context_id: ContextId,
    pub(crate) channel: Arc<TaskChannel>,
    pub(crate) envelope: Envelope,
}

impl TaskEvents {
    /// Publishes a non-final status (e.g. `working`).
    pub(crate) async fn status(&self, supervisor: &Supervisor, status: TaskStatus) -> Result<()> {
        let core = supervisor.core();
        let (_, seq) = core
            .store
            .set_status_logged(
                &self.task_id,
                status.clone(),
                &StreamEvent::StatusUpdate(self.update(status.clone(), false)),
            )
            .await?;
        self.publish_status_then(supervisor, status, false, seq, || {});
        Ok(())
    }

    /// The update that announces `status`, as the event log and streams carry it.
    pub(crate) fn update(&self, status: TaskStatus, is_final: bool) -> TaskStatusUpdateEvent {
        TaskStatusUpdateEvent::new(
            self.task_id.clone(),
            self.context_id.clone(),
            status,
            is_final,
        )
    }

    /// Publishes a status on the bus, runs `then`, and only then to the task's own
    /// followers: whoever waits on the task wakes after every bus event of this step
    /// (e.g. the send's closing event) has gone out.
    ///
    /// `seq` is the update's number in the task's event log (`None`: not logged).
    pub(crate) fn publish_status_then(
        &self,
        supervisor: &Supervisor,
        status: TaskStatus,
        is_final: bool,
        seq: Option<u64>,
        then: impl FnOnce(),
    ) {
        let update = self.update(status, is_final);
        supervisor.core().events.emit(|| {
            self.envelope.event(
                EventKind::TaskStatus,
                EventDetail::Status {
                    update: update.clone(),
                },
            )
        });
        then();
        self.channel
            .publish(seq.unwrap_or(0), StreamEvent::StatusUpdate(update));
    }

    pub(crate) async fn artifact(
        &self,
        supervisor: &Supervisor,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<()> {
        let core = supervisor.core();
        let mut update = TaskArtifactUpdateEvent::new(
            self.task_id.clone(),
            self.context_id.clone(),
            artifact.clone(),
        );
        update.append = append.then_some(true);
        update.last_chunk = Some(last_chunk);
        let (_, seq) = core
            .store
            .put_artifact_logged(
                &self.task_id,
                artifact,
                append,
                &StreamEvent::ArtifactUpdate(update.clone()),
            )
            .await?;
        self.channel.publish(
            seq.unwrap_or(0),
            StreamEvent::ArtifactUpdate(update.clone()),
        );
        core.events.emit(|| {
            self.envelope
                .event(EventKind::TaskArtifact, EventDetail::Artifact { update })
        });
        Ok(())
    }
}

/// One message for an agent to handle, on its way from the supervisor to a session and
/// from there to its own tokio task.
///
/// If a `Work` is dropped before it runs (its session died with it in the mailbox, or
/// the runtime is going down) its task fails visibly instead of hanging in `submitted`.
#[derive(Debug)]
pub(crate) struct Work {
    pub(crate) supervisor: Supervisor,
    pub(crate) agent_name: Arc<str>,
    pub(crate) message: Message,
    pub(crate) handoff: Handoff,
    /// The request's `params.metadata` and activated extensions, for the agent.
    pub(crate) metadata: Option<Metadata>,
    pub(crate) extensions: Vec<String>,
    pub(crate) sender: Option<Arc<str>>,
    pub(crate) hops: u32,
    /// The sessions waiting on this work, this one last.
    pub(crate) chain: Arc<[SessionKey]>,
    pub(crate) cancel: CancellationToken,
    pub(crate) events: TaskEvents,
    /// Held while the work exists: dropping them admits the next send.
    pub(crate) _permits: Option<Permits>,
    pub(crate) started: bool,
    /// The session the work belongs to, offered to the warm set once the work is
    /// done with it.
    pub(crate) key: SessionKey,
    pub(crate) session: Arc<SessionShared>,
    /// Counts the work as running for the shutdown drain from the moment it is
    /// accepted: between a queued send's turn and the session spawning its run, the
    /// work sits in a mailbox, and without this the drain could see no running work
    /// and fail a task that was about to run.
    pub(crate) _tracked: TaskTrackerToken,
}

impl Work {
    /// Runs the agent on the message and settles the task. Runs off the session's
    /// mailbox, in a task the supervisor tracks for graceful shutdown.
    pub(crate) async fn run(mut self, agent: Arc<dyn DynAgent>) {
        self.started = true;
        let supervisor = self.supervisor.clone();
        let core = Arc::clone(supervisor.core());
        let span = tracing::info_span!(
            "agent.handle",
            agent = %self.agent_name,
            task_id = %self.events.task_id,
            context_id = %self.events.context_id,
            entry_point = %self.events.envelope.entry_point,
        );
        async move {
            if self.cancel.is_cancelled() {
                return;
            }
            if self
                .events
                .status(&supervisor, TaskStatus::new(TaskState::Working))
                .await
                .is_err()
            {
                // Ended (canceled) while it waited for its turn.
                return;
            }
            let mut ctx = TaskContext {
                supervisor: supervisor.clone(),
                agent: Arc::clone(&self.agent_name),
                task_id: self.events.task_id.clone(),
                context_id: self.events.context_id.clone(),
                message: std::mem::replace(&mut self.message, Message::new(Role::User, Vec::new())),
                payload: self.handoff.payload.take(),
                intent: self.handoff.intent,
                request_metadata: self.metadata.take(),
                extensions: std::mem::take(&mut self.extensions),
                sender: self.sender.clone(),
                entry_point: self.events.envelope.entry_point,
                hops: self.hops,
                chain: Arc::clone(&self.chain),
                history: tokio::sync::OnceCell::new(),
                cancel: self.cancel.clone(),
                events: self.events.clone(),
                reply: None,
                finish: Finish::Completed,
            };

            let outcome = {
                let handler = AssertUnwindSafe(agent.handle_dyn(&mut ctx)).catch_unwind();
                tokio::pin!(handler);
                tokio::select! {
                    biased;
                    outcome = &mut handler => Some(outcome),
                    () = self.cancel.cancelled() => {
                        // Canceled: the task is already `canceled`. Give the handler a
                        // moment to wind down, then drop it.
                        let _ = tokio::time::timeout(core.config.cancel_grace, &mut handler).await;
                        None
                    }
                }
            };
            let Some(outcome) = outcome else { return };
            let (state, message) = match outcome {
                Ok(Ok(())) => match ctx.finish {
                    Finish::Completed => (TaskState::Completed, ctx.reply.take()),
                    Finish::InputRequired(m) => (TaskState::InputRequired, Some(m)),
                    Finish::AuthRequired(m) => (TaskState::AuthRequired, Some(m)),
                    Finish::Failed(m) => (TaskState::Failed, Some(m)),
                    Finish::Rejected(m) => (TaskState::Rejected, Some(m)),
                },
                Ok(Err(error)) => {
                    tracing::warn!(%error, "agent returned an error");
                    let text = format!("agent `{}` failed: {error}", self.agent_name);
                    (
                        TaskState::Failed,
                        Some(ctx.agent_message(vec![Part::text(text)])),
                    )
                }
                Err(panic) => {
                    let what = panic_text(panic.as_ref());
                    tracing::error!(panic = %what, "agent panicked");
                    let text = format!("agent `{}` panicked: {what}", self.agent_name);
                    (
                        TaskState::Failed,
                        Some(ctx.agent_message(vec![Part::text(text)])),
                    )
                }
            };
            if let Some(message) = &message {
                // Ignored if the task ended meanwhile (a cancel won the race).
                let _ = core
                    .store
                    .append_history(&self.events.task_id, message.clone())
                    .await;
            }
            supervisor
                .finish_task(&self.events.task_id, crate::task::status(state, message))
                .await;
        }
        .instrument(span)
        .await;
        // Permits drop with `self` here, letting the next message of the session in.
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        // The permits go first: the session is idle only without them.
        drop(self._permits.take());
        let supervisor = self.supervisor.clone();
        if self.started {
            supervisor.core().settled(&self.key, &self.session);
            return;
        }
        let task_id = self.events.task_id.clone();
        let key = self.key.clone();
        let session = Arc::clone(&self.session);
        let text = "the agent's session stopped before it handled this message; send it again";
        let message = Message::new(Role::Agent, vec![Part::text(text)]);
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                // Settles the session too, once the task has left it.
                supervisor
                    .finish_task(
                        &task_id,
                        crate::task::status(TaskState::Failed, Some(message)),
                    )
                    .await;
                supervisor.core().settled(&key, &session);
            });
        }
    }
}

/// A status in `state` stamped now, with an optional message.
pub(crate) fn status(state: TaskState, message: Option<Message>) -> TaskStatus {
    let mut status = TaskStatus::new(state);
    status.message = message;
    status
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        String::from("a non-text panic payload")
    }
}
