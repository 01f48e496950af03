//! The work unit: one message for an agent, from the moment the send path accepts it
//! to the task's settling. It runs the handler in the session's turn and decides
//! the task's outcome in one place; it reaches the runtime only through its
//! [`Port`].

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use agentyard_transport::a2a::{Message, Metadata, Part, Role, TaskState, TaskStatus};
use agentyard_transport::trace::Cause;
use futures::FutureExt;
use tokio_util::task::task_tracker::TaskTrackerToken;
use tracing::Instrument;

use crate::agent::DynAgent;
use crate::cancel::Cancel;
use crate::channel::{TaskEvents, status};
use crate::context::{Finish, Stored, TaskContext};
use crate::handoff::Handoff;
use crate::limits::Permits;
use crate::occupancy::SessionShared;
use crate::port::{Port, finish_task};
use crate::send::SessionKey;
use crate::store::at_once;

#[cfg(test)]
mod tests;

/// One message for an agent to handle, on its way from the supervisor to a session and
/// from there to its own tokio task.
///
/// If a `Work` is dropped before it runs (its session died with it in the mailbox, or
/// the runtime is going down) its task fails visibly instead of hanging in `submitted`.
#[derive(Debug)]
pub(crate) struct Work {
    pub(crate) port: Arc<dyn Port>,
    pub(crate) agent_name: Arc<str>,
    pub(crate) message: Arc<Message>,
    pub(crate) handoff: Handoff,
    /// The request's `params.metadata` and activated extensions, for the agent.
    pub(crate) metadata: Option<Metadata>,
    pub(crate) extensions: Vec<String>,
    pub(crate) sender: Option<Arc<str>>,
    pub(crate) hops: u32,
    /// The sessions waiting on this work's sender (its own session, `key`, is added
    /// only when the work itself sends and waits: most turns never do).
    pub(crate) waiting: Arc<[SessionKey]>,
    pub(crate) cancel: Cancel,
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
    /// The send span's trace context: the agent's span runs in another task, later,
    /// and is its child in the trace only through this (empty unless OpenTelemetry
    /// records spans).
    pub(crate) cause: Cause,
}

impl Work {
    /// Runs the agent on the message and settles the task. Runs off the session's
    /// mailbox, in a task the supervisor tracks for graceful shutdown.
    ///
    /// Not an `async fn`: one would keep room for the work twice beside the inner
    /// future that holds it (its argument and the local it moves into, 720 bytes
    /// each; 4.7 KiB in all), and a caller that runs the turn itself boxes that
    /// future on every send. The future returned is the inner one alone.
    pub(crate) fn run(
        mut self,
        agent: Arc<dyn DynAgent>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let port = Arc::clone(&self.port);
        let span = self.cause.in_scope(|| {
            tracing::info_span!(
                "agent.handle",
                agent = %self.agent_name,
                task_id = %self.events.task_id,
                context_id = %self.events.context_id,
                entry_point = %self.events.envelope.entry_point,
            )
        });
        self.cause.adopt_by(&span);
        let cause = std::mem::take(&mut self.cause);
        let work = async move {
            // Set on the first poll, as it always was: a work dropped before it ran
            // fails its task in `Drop`.
            self.started = true;
            if self.cancel.is_cancelled() {
                return;
            }
            // `working` is written while the handler already runs: a durable store
            // then commits it with the turn's later writes (one fsync, not two in a
            // row), and it is published once stored, before anything the turn
            // publishes after it (`join` polls it first, and the store answers
            // writes in order). What the handler reads of the store, or sends to
            // other agents, waits for it ([`Stored`]). A cancel that ends the task
            // meanwhile makes this write fail and reaches the handler through its
            // token.
            let events = self.events.clone();
            let working = events.progress(
                port.store(),
                port.events(),
                TaskStatus::new(TaskState::Working),
            );
            let mut working = std::pin::pin!(working);
            // A store that writes at once (the in-memory one) has it stored and
            // published on the first poll: the handler then runs with no barrier
            // to make, wait on or lift.
            if futures::poll!(working.as_mut()).is_ready() {
                self.turn(agent, &port, Stored::lifted()).await;
            } else {
                let (lift, stored) = Stored::new();
                let working = async {
                    let _ = working.await;
                    lift.send_replace(true);
                };
                let turn = self.turn(agent, &port, stored);
                futures::future::join(working, turn).await;
            }
        }
        .instrument(span);
        // Permits drop with `self` at the end of `work`, letting the next message of
        // the session in.
        cause.within(work)
    }

    /// The handler's part of a turn: runs it, then records its reply and settles the
    /// task.
    async fn turn(&mut self, agent: Arc<dyn DynAgent>, port: &Arc<dyn Port>, stored: Stored) {
        let mut ctx = TaskContext {
            port: Arc::clone(port),
            agent: Arc::clone(&self.agent_name),
            task_id: self.events.task_id.clone(),
            context_id: self.events.context_id.clone(),
            message: Arc::clone(&self.message),
            payload: self.handoff.payload.take(),
            intent: self.handoff.intent,
            request_metadata: self.metadata.take(),
            extensions: std::mem::take(&mut self.extensions),
            sender: self.sender.clone(),
            entry_point: self.events.envelope.entry_point,
            hops: self.hops,
            waiting: Arc::clone(&self.waiting),
            history: tokio::sync::OnceCell::new(),
            cancel: self.cancel.clone(),
            events: self.events.clone(),
            stored,
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
                    let _ = tokio::time::timeout(port.cancel_grace(), &mut handler).await;
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
                // An error is not an outcome but the handler failing; an outcome
                // it had set on the context is dropped, and said so, not silently.
                let dropped = ctx.finish.name();
                tracing::warn!(%error, dropped, "agent returned an error");
                let text = match dropped {
                    Some(outcome) => format!(
                        "agent `{}` failed: {error} (its {outcome} outcome set before the error was dropped)",
                        self.agent_name
                    ),
                    None => format!("agent `{}` failed: {error}", self.agent_name),
                };
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
        let task_id = &self.events.task_id;
        // One message, shared by the history, the status and the event log.
        let message = message.map(Arc::new);
        let reply = message.clone();
        let history = async {
            if let Some(message) = reply {
                // Ignored if the task ended meanwhile (a cancel won the race). Nobody
                // is answered on it before the final status, whose durable write
                // commits it too.
                let _ = at_once::append_history_unanswered(port.store(), task_id, message).await;
            }
        };
        // The final status does not wait for the reply's answer: `join` polls the
        // reply first, so it is queued first, and the store applies a task's writes
        // in order; a durable store then commits both in one transaction.
        let finish = async {
            let _ = finish_task(&**port, task_id, status(state, message)).await;
        };
        futures::future::join(history, finish).await;
    }
}

/// A turn run by the caller that waits for its task ([`crate::Supervisor::send_and_wait`]
/// and the blocking HTTP send), in the caller's own tokio task, instead of being
/// handed to the session actor and waited for from there; a stream's caller runs it
/// only until it first waits ([`CallerRun::run_until_it_waits`]).
///
/// Only a send that already holds every permit runs this way, so the session's
/// order and limits are the same as through the mailbox; what it saves is the two
/// hand-offs between tasks (to the session's turn and back to the caller), which
/// are most of a short send's cost. A caller that stops waiting (its task settled
/// early, say canceled; a timeout; a dropped future) does not take the turn down
/// with it: whatever is left of the turn is spawned, on the runtime it was made in,
/// and runs to its end as it would have in the session.
pub(crate) struct CallerRun {
    turn: Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>,
    runtime: tokio::runtime::Handle,
}

impl CallerRun {
    /// The turn of `work`, with the session's agent value, not started yet; what
    /// is left of it if the caller stops waiting goes on on `runtime`.
    pub(crate) fn new(
        work: Work,
        agent: Arc<dyn DynAgent>,
        runtime: tokio::runtime::Handle,
    ) -> Self {
        Self {
            turn: Some(Box::pin(work.run(agent))),
            runtime,
        }
    }

    /// Runs the turn to its end (at once if it has ended). Cancel-safe: dropped
    /// before the end, the turn goes on in a task of its own.
    pub(crate) async fn run(&mut self) {
        std::future::poll_fn(|cx| match self.turn.as_mut() {
            Some(turn) => {
                let done = turn.as_mut().poll(cx);
                if done.is_ready() {
                    self.turn = None;
                }
                done
            }
            None => std::task::Poll::Ready(()),
        })
        .await;
    }

    /// Runs the turn until it first waits on anything, then leaves the rest of it to
    /// a task of its own: what a stream's caller does, so that a turn that needs no
    /// waiting has published every update before the stream's first is written
    /// (one write to the socket instead of one per update), while a turn that waits
    /// goes on at its own pace rather than at the pace the stream's reader reads.
    pub(crate) async fn run_until_it_waits(mut self) {
        std::future::poll_fn(|cx| {
            if let Some(turn) = self.turn.as_mut()
                && turn.as_mut().poll(cx).is_ready()
            {
                self.turn = None;
            }
            std::task::Poll::Ready(())
        })
        .await;
        // Dropped here: a turn still running is spawned (see `Drop`).
    }
}

impl std::fmt::Debug for CallerRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallerRun")
            .field("running", &self.turn.is_some())
            .finish_non_exhaustive()
    }
}

impl Drop for CallerRun {
    fn drop(&mut self) {
        if let Some(turn) = self.turn.take() {
            // The work holds its tracker token, so the shutdown drain still waits
            // for it.
            self.runtime.spawn(turn);
        }
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        // The permits go first: the session is idle only without them.
        drop(self._permits.take());
        if self.started {
            self.port.settled(&self.key, &self.session);
            return;
        }
        let port = Arc::clone(&self.port);
        let task_id = self.events.task_id.clone();
        let key = self.key.clone();
        let session = Arc::clone(&self.session);
        let text = "the agent's session stopped before it handled this message; send it again";
        let message = Message::new(Role::Agent, vec![Part::text(text)]);
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move {
                // Settles the session too, once the task has left it.
                let _ = finish_task(
                    &*port,
                    &task_id,
                    status(TaskState::Failed, Some(message.into())),
                )
                .await;
                port.settled(&key, &session);
            });
        }
    }
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
