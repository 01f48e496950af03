//! The supervisor actor: it supervises the session actors (a crashed one is counted
//! and restarts on its next message) and sweeps idle sessions into passivation. The
//! send path does not go through it.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};

use super::Core;

/// The supervisor actor's messages.
#[derive(Debug)]
pub(crate) enum SupervisorMsg {
    /// Passivate the sessions that have been idle long enough.
    Sweep,
}

pub(super) struct SupervisorActor;

impl Actor for SupervisorActor {
    type Msg = SupervisorMsg;
    type State = Arc<Core>;
    type Arguments = Arc<Core>;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        core: Arc<Core>,
    ) -> Result<Self::State, ActorProcessingErr> {
        // Sweep four times per idle timeout, so a session is passivated at most a
        // quarter of the timeout late.
        let every = (core.config.idle_timeout / 4).max(Duration::from_millis(10));
        myself.send_interval(every, || SupervisorMsg::Sweep);
        Ok(core)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        core: &mut Arc<Core>,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SupervisorMsg::Sweep => core.sessions.passivate_idle_for(core.config.idle_timeout),
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        core: &mut Arc<Core>,
    ) -> Result<(), ActorProcessingErr> {
        // Nothing to clean up here: a failed session's slot is replaced by the next send
        // to it (its cast is refused) or removed by the idle sweep, and a passivated or
        // stopped one left the registry before it stopped. Scanning the registry per
        // event would cost O(sessions) for each of many passivations.
        if let SupervisionEvent::ActorFailed(cell, error) = event {
            core.restarts.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                actor = %cell.get_id(),
                %error,
                "session actor failed; it restarts on its next message"
            );
        }
        Ok(())
    }
}
