//! The session actor: one per live agent session (agent type + conversation).
//!
//! It owns the session's agent value and takes the session's work in mailbox order.
//! Handling a message only starts the work in a task of its own, so the mailbox is
//! never blocked by an agent: long work runs beside it, cancel reaches the work through
//! its token, and status is read from the store. The per-session concurrency limit
//! (held by the work) is what keeps a session's messages one after another.
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

/// What a session is started with.
pub(crate) struct SessionArgs {
    agent: Arc<dyn DynAgent>,
    key: SessionKey,
}

/// A live session's state.
pub(crate) struct SessionState {
    agent: Arc<dyn DynAgent>,
    key: SessionKey,
}

impl SessionActor {
    pub(crate) fn args(agent: Arc<dyn DynAgent>, key: &SessionKey) -> SessionArgs {
        SessionArgs {
            agent,
            key: key.clone(),
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
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SessionMsg::Deliver(work) => {
                let agent = Arc::clone(&state.agent);
                // Not spawned on the supervisor's tracker: the work holds a tracker
                // token from the moment it was accepted until its run ends.
                tokio::spawn(work.run(agent));
            }
        }
        Ok(())
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
