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
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use agentyard_transport::TaskId;
use agentyard_transport::a2a::{StreamEvent, Task, TaskStatusUpdateEvent};
use futures::{Stream, StreamExt as _};
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;

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

/// A task stream's state: what is still to send before the live updates, and the
/// live updates themselves.
///
/// A stream of its own rather than `stream::unfold`: an unfold moves its whole state
/// out of its future and into the next one at every event, and its future holds the
/// catch-up reads inline, so each event cost about a kilobyte of copies
/// (`examples/http_loop.rs`, `HTTP_LOOP_METHOD=stream`). Here an event is taken in
/// place, and the rare catch-up is a future of its own, made only when it is needed.
struct Resume {
    supervisor: Supervisor,
    id: TaskId,
    first: Option<(Option<u64>, Task)>,
    /// Logged updates still to send, in order.
    pending: VecDeque<Sequenced>,
    live: Option<BroadcastStream<Published>>,
    /// Reading back what a lagging stream missed.
    catching_up: Option<Pin<Box<dyn Future<Output = Option<CatchUp>> + Send>>>,
    /// The number of the last update sent (or replayed); live updates up to it are
    /// duplicates.
    last: u64,
    done: bool,
}

/// What a stream that fell behind its live updates found when it looked back.
enum CatchUp {
    /// The logged updates after the last one it sent.
    Missed(Vec<Sequenced>),
    /// The task's status now, from a store that keeps no log.
    Status(TaskStatusUpdateEvent),
}

fn numbered_stream(
    supervisor: Supervisor,
    id: TaskId,
    first: Option<(Option<u64>, Task)>,
    pending: VecDeque<Sequenced>,
    rx: Option<broadcast::Receiver<Published>>,
    last: u64,
) -> impl Stream<Item = NumberedEvent> + Send + 'static {
    Resume {
        supervisor,
        id,
        first,
        pending,
        live: rx.map(BroadcastStream::new),
        catching_up: None,
        last,
        done: false,
    }
}

impl Stream for Resume {
    type Item = NumberedEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some((seq, task)) = this.first.take() {
            if this.live.is_none() && this.pending.is_empty() {
                this.done = true;
            }
            return Poll::Ready(Some((seq, StreamEvent::Task(task))));
        }
        loop {
            if let Some(catching_up) = &mut this.catching_up {
                let found = ready!(catching_up.as_mut().poll(cx));
                this.catching_up = None;
                match found {
                    None => return Poll::Ready(None),
                    Some(CatchUp::Status(update)) => {
                        if update.is_final {
                            this.finish();
                        }
                        return Poll::Ready(Some((None, StreamEvent::StatusUpdate(update))));
                    }
                    Some(CatchUp::Missed(missed)) => {
                        this.last = missed.last().map_or(this.last, |(seq, _)| *seq);
                        this.pending = missed.into();
                    }
                }
            }
            if let Some((seq, event)) = this.pending.pop_front() {
                if event.is_final() {
                    this.finish();
                }
                return Poll::Ready(Some((Some(seq), event)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            let Some(live) = &mut this.live else {
                return Poll::Ready(None);
            };
            match ready!(live.poll_next_unpin(cx)) {
                Some(Ok((seq, event))) => {
                    // The ring let go of its copy once every follower read it: this
                    // follower's is then the only one, taken without a copy.
                    let event = Arc::unwrap_or_clone(event);
                    if seq != 0 {
                        if seq <= this.last {
                            continue;
                        }
                        this.last = seq;
                    }
                    if event.is_final() {
                        this.finish();
                    }
                    return Poll::Ready(Some(((seq != 0).then_some(seq), event)));
                }
                Some(Err(BroadcastStreamRecvError::Lagged(_))) => {
                    this.catching_up = Some(Box::pin(catch_up(
                        this.supervisor.clone(),
                        this.id.clone(),
                        this.last,
                    )));
                }
                None => return Poll::Ready(None),
            }
        }
    }
}

/// What a stream that fell behind missed: the logged updates after `last`, or, from a
/// store that keeps no log, the task's status now rather than a replay of what was
/// dropped. `None` when the store cannot say: the stream ends.
async fn catch_up(supervisor: Supervisor, id: TaskId, last: u64) -> Option<CatchUp> {
    let missed = supervisor.core().store.events_after(&id, last).await.ok()?;
    if !missed.is_empty() {
        return Some(CatchUp::Missed(missed));
    }
    let task = supervisor.get_task(&id, Some(0)).await.ok()?;
    let is_final = task.status.state.is_settled();
    Some(CatchUp::Status(TaskStatusUpdateEvent::new(
        task.id,
        task.context_id,
        task.status,
        is_final,
    )))
}

impl Resume {
    /// The stream ends after the update being sent.
    fn finish(&mut self) {
        self.done = true;
        self.pending.clear();
        self.live = None;
    }
}
