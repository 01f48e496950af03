//! The live-task table: what the supervisor keeps about each task that has not
//! ended, and the five things done with it — create, continue, finish, cancel,
//! publish.

use std::sync::Arc;

use agentyard_transport::TaskId;
use dashmap::DashMap;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::sessions::{SessionShared, TaskPin};
use crate::events::Envelope;
use crate::send::{Follow, SessionKey, Watcher};
use crate::task::{TaskChannel, TaskEvents};

#[cfg(test)]
mod tests;

/// A task that has not ended: queued, running, or waiting for input.
#[derive(Debug)]
struct LiveTask {
    /// The agent type the task belongs to.
    agent: Arc<str>,
    cancel: CancellationToken,
    /// How the task's updates are published (its channel, and the envelope of the
    /// send now being handled, for its closing event).
    events: TaskEvents,
    /// Keeps the task's session out of the warm set (and so from being passivated
    /// for space) while the task has not ended.
    pin: TaskPin,
}

/// A task that ended and left the table: how to publish its final update, and the
/// session to offer to the warm set once it is out.
#[derive(Debug)]
pub(crate) struct Ended {
    pub(crate) events: TaskEvents,
    pub(crate) key: SessionKey,
    pub(crate) session: Arc<SessionShared>,
}

/// The live tasks by id.
#[derive(Debug, Default)]
pub(crate) struct LiveTasks {
    tasks: DashMap<TaskId, LiveTask>,
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
        cancel: CancellationToken,
        session: &Arc<SessionShared>,
    ) {
        self.tasks.insert(
            events.task_id.clone(),
            LiveTask {
                agent,
                cancel,
                events,
                pin: TaskPin::new(session),
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
    ) -> Option<(TaskEvents, CancellationToken)> {
        let mut live = self.tasks.get_mut(task_id)?;
        live.events.envelope = envelope.clone();
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
    ) -> (TaskEvents, CancellationToken) {
        let mut envelope = envelope.clone();
        envelope.task_id = Some(task.id.clone());
        let events = TaskEvents {
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            channel: TaskChannel::new(task.status.state, stream_capacity),
            envelope,
        };
        let cancel = CancellationToken::new();
        self.create(Arc::clone(agent), events.clone(), cancel.clone(), session);
        (events, cancel)
    }

    /// Finish: the task ended and leaves the table, and with it its session's count
    /// of live tasks. `None` if it had left already (a cancel or shutdown won).
    pub(crate) fn end(&self, task_id: &TaskId) -> Option<Ended> {
        let (_, live) = self.tasks.remove(task_id)?;
        let LiveTask {
            agent, events, pin, ..
        } = live;
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
        })
    }

    /// Publish: how to publish an update of a task that has not ended.
    pub(crate) fn publisher(&self, task_id: &TaskId) -> Option<TaskEvents> {
        self.tasks.get(task_id).map(|live| live.events.clone())
    }

    /// Cancel: the token that tells the task's handler to stop.
    pub(crate) fn cancel_token(&self, task_id: &TaskId) -> Option<CancellationToken> {
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
    pub(crate) fn subscribe(
        &self,
        task_id: &TaskId,
    ) -> Option<broadcast::Receiver<crate::task::Sequenced>> {
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
    pub(crate) fn snapshot(&self) -> Vec<(TaskId, CancellationToken, Arc<TaskChannel>)> {
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
