//! The actors of agentyard: agent sessions, the supervisor that every send goes
//! through, and (later) the HTTP edge.
//!
//! Most users depend on the `agentyard` crate, which re-exports what is public here
//! and adds the runtime builder, configuration and the command-line program.
//!
//! # Layout
//!
//! - [`agent`]: the [`Agent`] trait users implement, [`AgentDescriptor`], and the
//!   [`TaskContext`] an agent acts through (reply, artifacts, status, sends to other
//!   agents, cancellation).
//! - [`supervisor`]: [`Supervisor`], the single path of every send (events → policy →
//!   idempotency → concurrency limits → session), and the actor that supervises and
//!   passivates sessions.
//! - `send`: the plain values of a send ([`SendRequest`], [`Submitted`],
//!   [`Settled`]) that everything else builds on; re-exported here and from
//!   [`supervisor`].
//! - `session`: the session actor, one per agent type and conversation; private, so no
//!   send can bypass the supervisor.
//! - `task`: the work of one message, run off the session's mailbox.
//! - [`store`]: the [`TaskStore`] contract and its stores, re-exported from
//!   `agentyard-store`.
//! - [`events`]: typed runtime [`Event`]s and subscriptions.
//! - [`intent`]: the pluggable [`IntentClassifier`] for free-text sends.
//! - `limits`, `idempotency`: the supervisor's concurrency limits and key cache.
//! - [`error`]: [`Error`], what a caller can act on.
//! - [`edge`]: the HTTP edge: [`SupervisorService`](edge::SupervisorService) answers the
//!   A2A methods through the supervisor, [`PushNotifier`](edge::PushNotifier) calls
//!   webhooks, and [`Edge`](edge::Edge) starts the actor that owns the server.
//!
//! This crate uses `agentyard-policy` for decisions and `agentyard-transport` for the
//! A2A data model; neither knows about actors.
//!
//! # No way around the supervisor
//!
//! A session's mailbox type is private, so code outside this crate cannot message an
//! agent directly; the only way in is [`Supervisor`], whose every send applies events,
//! policy, idempotency and limits:
//!
//! ```compile_fail
//! // Does not compile: the session actor and its messages are private.
//! use agentyard_actors::session::SessionMsg;
//! ```
//!
//! ```
//! // What callers use instead.
//! use agentyard_actors::{SendRequest, Supervisor};
//! ```

pub mod agent;
mod clock;
pub mod edge;
pub mod error;
pub mod events;
mod handoff;
mod idempotency;
pub mod intent;
mod limits;
mod send;

mod session;
pub mod store;
pub mod supervisor;
mod task;

pub use agent::{Agent, AgentDescriptor, AgentError, ArtifactChunk, SessionInfo, TaskContext};
pub use agentyard_transport::a2a::StreamEvent;
pub use error::{Error, Result};
pub use events::{Event, EventDetail, EventKind, Received, Subscription};
pub use intent::{IntentClassifier, SharedIntentClassifier};
pub use limits::LimitScope;
pub use store::{InMemoryTaskStore, StoreError, TaskFilter, TaskOwner, TaskPage, TaskStore};
pub use supervisor::{Registration, SendRequest, Settled, Submitted, Supervisor, SupervisorConfig};

/// Compile-time checks that the handles and futures callers move between tasks are
/// `Send`/`Sync` (an HTTP server spawns them onto a multi-threaded runtime).
#[cfg(test)]
mod send_sync {
    use super::*;

    fn is_send<T: Send>(_: &T) {}
    fn is_send_sync<T: Send + Sync + Clone + 'static>() {}

    #[test]
    fn handles_are_send_and_sync() {
        is_send_sync::<Supervisor>();
        is_send_sync::<std::sync::Arc<dyn TaskStore>>();
    }

    #[allow(
        dead_code,
        reason = "only compiled, never run: the futures need a runtime"
    )]
    fn send_futures_are_send(supervisor: &Supervisor, request: SendRequest) {
        is_send(&supervisor.send(request.clone()));
        is_send(&supervisor.send_and_wait(request.clone()));
        is_send(&supervisor.stream(request));
        is_send(&supervisor.cancel_task(&agentyard_transport::TaskId::new("t")));
        is_send(&supervisor.shutdown(std::time::Duration::ZERO));
    }
}
