//! The session actor: one per live agent session (agent type + conversation).
//!
//! It owns the session's agent value and takes the session's work in mailbox order.
//! Work reaches the mailbox only once it holds its permits, so with the default
//! per-session limit of one the mailbox never holds more than the one message that
//! may run now: the actor runs it itself ([`Runs::InTurn`]), with no task of its
//! own to spawn. A session allowed several tasks at once starts each in a task of its
//! own ([`Runs::Beside`]) so they overlap. Either way cancel reaches the work through
//! its token, status is read from the store, and the mailbox and its drain are the
//! passivation handshake (see `docs/semantics.md`).
//!
//! The mailbox type is private to this crate: the only way to reach a session is
//! through [`crate::Supervisor`], so no send can skip policy, idempotency or limits.

use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef};

use crate::agent::DynAgent;
use crate::send::SessionKey;
use crate::task::Work;

#[cfg(test)]
mod tests;

/// What a session actor is told.
#[derive(Debug)]
pub(crate) enum SessionMsg {
    /// Handle this work (boxed: it is much larger than the other variants would be).
    Deliver(Box<Work>),
}

/// The session actor (stateless itself; see [`SessionState`]).
pub(crate) struct SessionActor;

/// How a session runs the work it is handed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    /// In the actor's own turn: the session runs one task at a time, so the next
    /// message could not start before this one ends anyway.
    InTurn,
    /// In a task of its own beside the mailbox: the session may run several at once.
    Beside,
}

impl Runs {
    /// How a session with this per-session limit runs its work.
    pub(crate) fn for_limit(session_limit: usize) -> Self {
        if session_limit <= 1 {
            Self::InTurn
        } else {
            Self::Beside
        }
    }
}

/// What a session is started with.
pub(crate) struct SessionArgs {
    agent: Arc<dyn DynAgent>,
    key: SessionKey,
    runs: Runs,
}

/// A live session's state.
pub(crate) struct SessionState {
    agent: Arc<dyn DynAgent>,
    key: SessionKey,
    runs: Runs,
}

impl SessionActor {
    pub(crate) fn args(agent: Arc<dyn DynAgent>, key: &SessionKey, runs: Runs) -> SessionArgs {
        SessionArgs {
            agent,
            key: key.clone(),
            runs,
        }
    }
}

impl Actor for SessionActor {
    type Msg = SessionMsg;
    type State = SessionState;
    type Arguments = SessionArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: SessionArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        tracing::trace!(agent = %args.key.agent, context_id = %args.key.context_id, "session started");
        Ok(SessionState {
            agent: args.agent,
            key: args.key,
            runs: args.runs,
        })
    }

    // Not an `async fn`: ractor's loop future, boxed once per actor and kept for the
    // actor's life, is as large as the largest handler future it may hold, twice over
    // (it keeps the handler's future both as an argument and while it runs). An
    // `async fn` would keep its four arguments and their copies (72 bytes); this future
    // keeps only the boxed turn, which took every idle session's loop from 928 bytes
    // to 832, into the allocator's 896-byte class (see docs/benchmarks.md).
    fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> impl Future<Output = Result<(), ActorProcessingErr>> + Send {
        let SessionMsg::Deliver(work) = msg;
        let agent = Arc::clone(&state.agent);
        let turn = match state.runs {
            // The work catches its handler's panics, so running it here never fails
            // the actor. Boxed: inline, every idle session's loop future would carry
            // the work's size (kilobytes).
            Runs::InTurn => Some(Box::pin(work.run(agent))),
            // Not spawned on the supervisor's tracker: the work holds a tracker token
            // from the moment it was accepted until its run ends.
            Runs::Beside => {
                tokio::spawn(work.run(agent));
                None
            }
        };
        async move {
            if let Some(turn) = turn {
                turn.await;
            }
            Ok(())
        }
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        tracing::trace!(agent = %state.key.agent, context_id = %state.key.context_id, "session stopped");
        Ok(())
    }
}
