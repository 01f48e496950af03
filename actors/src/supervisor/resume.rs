//! Streams that resume: every update of a task stream carries its number in the task's
//! event log (the SSE `id:`), and a stream can start after any number it was given
//! (`Last-Event-ID`): the rest of the log first, then the live updates, with no gap
//! and no duplicate.
//!
//! The live updates are subscribed to before the log is read, so an update is either
//! in what was read or still to come on the subscription (or both: then the number
//! tells, and it is sent once). A stream that falls behind the live updates reads
//! what it missed back from the log instead of skipping it.

use std::collections::VecDeque;
use std::sync::Arc;

use agentyard_transport::TaskId;
use agentyard_transport::a2a::{StreamEvent, Task, TaskStatusUpdateEvent};
use futures::Stream;
use tokio::sync::broadcast;

use super::Supervisor;
use crate::error::Result;
use crate::send::{Follow, Published, SendRequest, Sequenced, Watcher};

/// An update of a task stream with its number in the task's event log; `None` for the
/// task as it stands at the start of a stream when nothing is logged before it, and
/// for updates of a store that keeps no log.
pub type NumberedEvent = (Option<u64>, StreamEvent);

impl Supervisor {
    /// [`Supervisor::stream`], each event with its number in the task's event log. The
    /// first event, the task as submitted, has number 0: resuming after 0 replays the
    /// whole log.
    ///
    /// # Errors
    /// As [`Supervisor::send`].
    #[expect(
        clippy::manual_async_fn,
        reason = "holds the request once (see `Supervisor::send`)"
    )]
    pub fn stream_numbered(
        &self,
        mut request: SendRequest,
    ) -> impl Future<Output = Result<impl Stream<Item = NumberedEvent> + Send + 'static>> + Send + '_
    {
        async move { self.stream_lent(&mut request).await }
    }

    /// [`Supervisor::stream_numbered`] of a request its caller holds.
    pub(super) async fn stream_lent(
        &self,
        request: &mut SendRequest,
    ) -> Result<impl Stream<Item = NumberedEvent> + Send + 'static + use<>> {
        let (submitted, watcher, run) = self.submit(request, Follow::Updates).await?;
        if let Some(run) = run {
            run.run_until_it_waits().await;
        }
        let rx = match watcher {
            Watcher::Updates(rx) => Some(rx),
            Watcher::Nothing | Watcher::State(_) => None,
        };
        Ok(numbered_stream(
            self.clone(),
            submitted.task.id.clone(),
            Some((Some(0), submitted.task)),
            VecDeque::new(),
            rx,
            0,
        ))
    }

    /// [`Supervisor::resubscribe`], each event with its number in the task's event
    /// log. Without `after`: the task as it stands (numbered with the last update it
    /// reflects), then its live updates. With `after` (a client's `Last-Event-ID`):
    /// every logged update after that number, then the live ones, ending at the first
    /// final update; a task that ended meanwhile replays to its final update.
    ///
    /// # Errors
    /// [`Error::TaskNotFound`](crate::Error::TaskNotFound); store failures.
    pub async fn resubscribe_after(
        &self,
        task_id: &TaskId,
        after: Option<u64>,
    ) -> Result<impl Stream<Item = NumberedEvent> + Send + 'static> {
        // Subscribe before reading, so no update falls between the two.
        let rx = self.core().live.subscribe(task_id);
        let task = self.get_task(task_id, None).await?;
        let settled = task.status.state.is_settled();
        let store = &self.core().store;
        Ok(match after {
            None => {
                let last = store
                    .events_after(task_id, 0)
                    .await?
                    .last()
                    .map_or(0, |(seq, _)| *seq);
                // A task that is already settled streams only itself.
                let rx = rx.filter(|_| !settled);
                numbered_stream(
                    self.clone(),
                    task_id.clone(),
                    Some((Some(last), task)),
                    VecDeque::new(),
                    rx,
                    last,
                )
            }
            Some(after) => {
                let replay: VecDeque<Sequenced> = store.events_after(task_id, after).await?.into();
                let last = replay.back().map_or(after, |(seq, _)| *seq);
                let rx = rx.filter(|_| !settled);
                numbered_stream(self.clone(), task_id.clone(), None, replay, rx, last)
            }
        })
    }
}

struct Resume {
    supervisor: Supervisor,
    id: TaskId,
    first: Option<(Option<u64>, Task)>,
    /// Logged updates still to send, in order.
    pending: VecDeque<Sequenced>,
    rx: Option<broadcast::Receiver<Published>>,
    /// The number of the last update sent (or replayed); live updates up to it are
    /// duplicates.
    last: u64,
    done: bool,
}

fn numbered_stream(
    supervisor: Supervisor,
    id: TaskId,
    first: Option<(Option<u64>, Task)>,
    pending: VecDeque<Sequenced>,
    rx: Option<broadcast::Receiver<Published>>,
    last: u64,
) -> impl Stream<Item = NumberedEvent> + Send + 'static {
    let state = Resume {
        supervisor,
        id,
        first,
        pending,
        rx,
        last,
        done: false,
    };
    futures::stream::unfold(state, |mut state| async move {
        if let Some((seq, task)) = state.first.take() {
            if state.rx.is_none() && state.pending.is_empty() {
                state.done = true;
            }
            return Some(((seq, StreamEvent::Task(task)), state));
        }
        loop {
            if let Some((seq, event)) = state.pending.pop_front() {
                if event.is_final() {
                    state.finish();
                }
                return Some(((Some(seq), event), state));
            }
            if state.done {
                return None;
            }
            let rx = state.rx.as_mut()?;
            match rx.recv().await {
                Ok((seq, event)) => {
                    // The ring let go of its copy once every follower read it: this
                    // follower's is then the only one, taken without a copy.
                    let event = Arc::unwrap_or_clone(event);
                    if seq != 0 {
                        if seq <= state.last {
                            continue;
                        }
                        state.last = seq;
                    }
                    if event.is_final() {
                        state.finish();
                    }
                    return Some((((seq != 0).then_some(seq), event), state));
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let store = &state.supervisor.core().store;
                    let missed = store.events_after(&state.id, state.last).await.ok()?;
                    if missed.is_empty() {
                        // A store that keeps no log: resynchronize with the task's
                        // current status rather than replay what was dropped.
                        let task = state.supervisor.get_task(&state.id, Some(0)).await.ok()?;
                        let is_final = task.status.state.is_settled();
                        let update = TaskStatusUpdateEvent::new(
                            task.id,
                            task.context_id,
                            task.status,
                            is_final,
                        );
                        if is_final {
                            state.finish();
                        }
                        return Some(((None, StreamEvent::StatusUpdate(update)), state));
                    }
                    state.last = missed.last().map_or(state.last, |(seq, _)| *seq);
                    state.pending = missed.into();
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    })
}

impl Resume {
    /// The stream ends after the update being sent.
    fn finish(&mut self) {
        self.done = true;
        self.pending.clear();
        self.rx = None;
    }
}
