//! The live-task table: what the runtime keeps about each task that has not ended,
//! and the five things done with it — create, continue, finish, cancel, publish.
//! Finishing lives here, not in the supervisor, so that the work that runs a task
//! settles it without calling back up.

use std::sync::Arc;

use agentyard_transport::TaskId;
use agentyard_transport::a2a::{TaskState, TaskStatus};
use tokio::sync::broadcast;

use crate::cancel::Cancel;
use crate::channel::{Finality, TaskChannel, TaskEvents};
use crate::events::{Envelope, EventBus, EventDetail, EventKind};
use crate::occupancy::{SessionShared, TaskPin};
use crate::send::{Follow, Handover, Published, SessionKey, Watcher};
use crate::store::{StoreError, TaskStore, at_once};

#[cfg(test)]
mod tests;

/// A task that has not ended: queued, running, or waiting for input.
#[derive(Debug)]
struct LiveTask {
    /// The agent type the task belongs to.
    agent: Arc<str>,
    cancel: Cancel,
    /// How the task's updates are published (its channel, and the envelope of the
    /// send now being handled, for its closing event).
    events: TaskEvents,
    /// Keeps the task's session out of the warm set (and so from being passivated
    /// for space) while the task has not ended.
    pin: TaskPin,
    /// When the task was created (made live again, for a task adopted after a
    /// restart), for `agentyard_task_duration_seconds`: the acceptance of the send
    /// that made it, microseconds earlier, rather than a clock read of its own.
    created: std::time::Instant,
}

/// A task that ended and left the table: how to publish its final update, and the
/// session to offer to the warm set once it is out.
#[derive(Debug)]
pub(crate) struct Ended {
    pub(crate) events: TaskEvents,
    pub(crate) key: SessionKey,
    pub(crate) session: Arc<SessionShared>,
    /// When it ended, if its metrics asked the clock (the send's duration is counted
    /// to the same instant: a clock read costs as much as a map lookup).
    pub(crate) at: Option<std::time::Instant>,
}

/// The live tasks by id.
#[derive(Debug, Default)]
pub(crate) struct LiveTasks {
    tasks: crate::Map<TaskId, LiveTask>,
}

impl LiveTasks {
    /// How many tasks have not ended.
    pub(crate) fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Create: a new task of `agent` in `session`, published through `events`.
    pub(crate) fn create(
        &self,
        agent: Arc<str>,
        events: TaskEvents,
        cancel: Cancel,
        session: &Arc<SessionShared>,
    ) {
        let created = events.envelope.accepted;
        self.tasks.insert(
            events.task_id.clone(),
            LiveTask {
                agent,
                cancel,
                events,
                pin: TaskPin::new(session),
                created,
            },
        );
    }

    /// Continue: the task takes another message, sent with `envelope`, in
    /// `session` (its old session may have been passivated while it waited for
    /// input). `None` if the task has ended meanwhile.
    pub(crate) fn continue_with(
        &self,
        task_id: &TaskId,
        envelope: &Envelope,
        session: &Arc<SessionShared>,
    ) -> Option<(TaskEvents, Cancel)> {
        let mut live = self.tasks.get_mut(task_id)?;
        live.events = live.events.for_send(envelope.clone());
        if !Arc::ptr_eq(&live.pin.session(), session) {
            live.pin = TaskPin::new(session);
        }
        Some((live.events.clone(), live.cancel.clone()))
    }

    /// Adopt: a task waiting for input in the store but not in the table (it waited
    /// through a restart) becomes live again in `session`, to take another message.
    pub(crate) fn adopt(
        &self,
        task: &agentyard_transport::a2a::Task,
        agent: &Arc<str>,
        envelope: &Envelope,
        session: &Arc<SessionShared>,
        stream_capacity: usize,
    ) -> (TaskEvents, Cancel) {
        let mut envelope = envelope.clone();
        envelope.task_id = Some(task.id.clone());
        let events = TaskEvents::new(
            task.id.clone(),
            task.context_id.clone(),
            TaskChannel::new(task.status.state, stream_capacity),
            envelope,
        );
        let cancel = Cancel::new();
        self.create(Arc::clone(agent), events.clone(), cancel.clone(), session);
        (events, cancel)
    }

    /// A task whose outcome the store refused to keep (down, full, …): it leaves the
    /// table, and its waiters and streams get a final `failed` update naming the
    /// store's error, so nobody waits forever and nothing reports an outcome the store
    /// does not have (the store still holds the task as it was; a restart fails it).
    /// A waiter gets the task as the store holds it with that `failed` status, as a
    /// stream ends. Returns its session, to offer to the warm set.
    pub(crate) fn end_unstored(
        &self,
        bus: &EventBus,
        task_id: &TaskId,
        error: &StoreError,
    ) -> Option<(SessionKey, Arc<SessionShared>)> {
        if matches!(error, StoreError::Terminal { .. }) {
            // A cancel or shutdown won the race: nothing is lost. (A live task the
            // store does not know is one whose insert it lost, answered before its
            // commit: that is a failure like any other.)
            return None;
        }
        tracing::error!(%task_id, %error, "the task store did not keep a task's outcome");
        let Ended {
            events,
            key,
            session,
            at,
        } = self.end(task_id)?;
        let reason = format!("the task store did not keep this task's outcome: {error}");
        let message = agentyard_transport::a2a::Message::new(
            agentyard_transport::a2a::Role::Agent,
            vec![agentyard_transport::a2a::Part::text(reason.clone())],
        );
        let status = crate::channel::status(TaskState::Failed, Some(message.into()));
        let settled = Handover::Unstored(status.clone());
        events.envelope.count(crate::metrics::Outcome::Failed, at);
        events.publish(bus, status, Finality::Final, None, Some(settled), || {
            bus.emit(|| {
                events
                    .envelope
                    .event(EventKind::SendFailed, EventDetail::Reason { reason })
            });
        });
        Some((key, session))
    }

    /// Finish: the task ended and leaves the table, and with it its session's count
    /// of live tasks. `None` if it had left already (a cancel or shutdown won).
    pub(crate) fn end(&self, task_id: &TaskId) -> Option<Ended> {
        let (_, live) = self.tasks.remove(task_id)?;
        let LiveTask {
            agent,
            events,
            pin,
            created,
            ..
        } = live;
        let at = events.envelope.metrics.as_ref().map(|metrics| {
            let now = std::time::Instant::now();
            metrics.task_ended(now.saturating_duration_since(created));
            now
        });
        let session = pin.session();
        drop(pin);
        let key = SessionKey {
            agent,
            context_id: events.context_id.clone(),
        };
        Some(Ended {
            events,
            key,
            session,
            at,
        })
    }

    /// Finish: records a terminal or interrupted status, takes an ended task out of
    /// the table, and publishes the status as the turn's final update with the send's
    /// closing event (`a2a.send.completed` or `a2a.send.failed`) ahead of it. Returns
    /// the session of a task that ended, to offer to the warm set once the update is
    /// out; `Ok(None)` if the task had already left the table (a cancel or a shutdown
    /// won the race).
    ///
    /// # Errors
    /// The store's: [`StoreError::Terminal`] if the task had already ended there.
    pub(crate) async fn finish(
        &self,
        store: &dyn TaskStore,
        bus: &EventBus,
        task_id: &TaskId,
        status: TaskStatus,
    ) -> Result<Option<(SessionKey, Arc<SessionShared>)>, StoreError> {
        // The final update is logged with the status, in one write, so a stream that
        // resumes sees every status the task had.
        // The task is read back with the write for whoever waits on it, and handed to
        // them with its state: by the time a waiter woke and asked, enough other tasks
        // could have ended for the store's retention to have forgotten this one. A
        // waiter reads the store itself only if this read failed, another waiter took
        // it, or it began waiting after the write began (none was counted then).
        let (seq, settled) = match self.publisher(task_id) {
            Some(events) => {
                let update = events.update(status.clone(), Finality::Final);
                let waited = events.channel.is_waited_on();
                // Not held across the write: the future stays small.
                drop(events);
                if waited {
                    let (_, seq, task) =
                        at_once::set_status_logged_read(store, task_id, update).await?;
                    (seq, task.map(|task| Handover::Task(Box::new(task))))
                } else {
                    let (_, seq) = at_once::set_status_logged(store, task_id, update).await?;
                    (seq, None)
                }
            }
            None => {
                at_once::set_status(store, task_id, status.clone()).await?;
                (None, None)
            }
        };
        let state = status.state;
        let (events, ended, at) = if state.is_terminal() {
            let Some(Ended {
                events,
                key,
                session,
                at,
            }) = self.end(task_id)
            else {
                return Ok(None);
            };
            (events, Some((key, session)), at)
        } else {
            let Some(events) = self.publisher(task_id) else {
                return Ok(None);
            };
            let at = events
                .envelope
                .metrics
                .is_some()
                .then(std::time::Instant::now);
            (events, None, at)
        };
        let (kind, detail) = match state {
            TaskState::Completed | TaskState::InputRequired | TaskState::AuthRequired => {
                (EventKind::SendCompleted, EventDetail::None)
            }
            _ => (
                EventKind::SendFailed,
                EventDetail::Reason {
                    reason: status.message.as_ref().map_or_else(
                        || format!("task {state}"),
                        |m| format!("task {state}: {}", m.text()),
                    ),
                },
            ),
        };
        events.envelope.count(
            if kind == EventKind::SendCompleted {
                crate::metrics::Outcome::Completed
            } else {
                crate::metrics::Outcome::Failed
            },
            at,
        );
        // The agent's answer (`a2a.response`), built now while the status is at hand,
        // and only if anyone listens.
        let response = (kind == EventKind::SendCompleted && bus.is_watched())
            .then(|| events.envelope.response(status.message.as_deref()));
        // The send's closing event goes out before its waiter wakes.
        events.publish(bus, status, Finality::Final, seq, settled, || {
            if let Some(response) = response {
                bus.emit(|| response);
            }
            bus.emit(|| events.envelope.event(kind, detail));
        });
        Ok(ended)
    }

    /// Publish: how to publish an update of a task that has not ended.
    pub(crate) fn publisher(&self, task_id: &TaskId) -> Option<TaskEvents> {
        self.tasks.get(task_id).map(|live| live.events.clone())
    }

    /// Cancel: the token that tells the task's handler to stop.
    pub(crate) fn cancel_token(&self, task_id: &TaskId) -> Option<Cancel> {
        self.tasks.get(task_id).map(|live| live.cancel.clone())
    }

    /// The agent type a live task belongs to.
    pub(crate) fn agent(&self, task_id: &TaskId) -> Option<Arc<str>> {
        self.tasks.get(task_id).map(|live| Arc::clone(&live.agent))
    }

    /// What a caller that wants to `follow` a live task receives.
    pub(crate) fn follow(&self, task_id: &TaskId, follow: Follow) -> Option<Watcher> {
        self.tasks
            .get(task_id)
            .map(|live| live.events.channel.follow(follow))
    }

    /// Every update of a live task from now on.
    pub(crate) fn subscribe(&self, task_id: &TaskId) -> Option<broadcast::Receiver<Published>> {
        self.tasks
            .get(task_id)
            .map(|live| live.events.channel.subscribe())
    }

    /// How many streams follow the live tasks.
    pub(crate) fn stream_count(&self) -> usize {
        self.tasks
            .iter()
            .map(|live| live.events.channel.stream_count())
            .sum()
    }

    /// Every live task's id, cancel token and channel, as they stand now.
    pub(crate) fn snapshot(&self) -> Vec<(TaskId, Cancel, Arc<TaskChannel>)> {
        self.tasks
            .iter()
            .map(|live| {
                (
                    live.key().clone(),
                    live.cancel.clone(),
                    Arc::clone(&live.events.channel),
                )
            })
            .collect()
    }
}
