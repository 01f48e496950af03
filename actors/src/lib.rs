//! The actors of agentyard: agent sessions, the supervisor that every send goes
//! through, and (later) the HTTP edge.
//!
//! Most users depend on the `agentyard` crate, which re-exports what is public here
//! and adds the runtime builder, configuration and the command-line program.
//!
//! # Layout
//!
//! The send path's modules, lowest first; each imports only those above it in this
//! list (a test, `layering`, keeps it so):
//!
//! - `send`: the plain values of a send ([`SendRequest`], [`Submitted`],
//!   [`Settled`]) that everything else builds on.
//! - `handoff`: reading a send's typed payload, once.
//! - `occupancy`: how busy one live session is (its limiter and live tasks).
//! - `channel`: how a task's updates go out (store, followers, bus).
//! - `live`: the table of tasks that have not ended: create, continue, finish,
//!   cancel, publish.
//! - `port`: the runtime as a task's work sees it, as a trait; the supervisor
//!   implements it, so nothing below imports the supervisor.
//! - `context`: [`TaskContext`], what an agent acts through; it holds a port.
//! - [`agent`]: the [`Agent`] trait, its other forms ([`SessionAgent`] with
//!   per-session state as `&mut self`, [`agent_fn`] for a closure),
//!   [`AgentDescriptor`] and [`Registration`].
//! - `task`: the work unit: one message, run in its session's turn, its outcome
//!   decided in one place.
//! - `session`: the session actor, one per agent type and conversation; private, so
//!   no send can bypass the supervisor.
//! - [`supervisor`]: [`Supervisor`], the single path of every send (events → policy →
//!   idempotency → concurrency limits → session), its session registry with the one
//!   passivation routine, and the actor that supervises the sessions.
//!
//! Beside them: [`store`] ([`TaskStore`] and its stores, from `agentyard-store`), [`events`] (typed
//! runtime [`Event`]s), [`metrics`] (the runtime's Prometheus metrics, counted on the
//! send path with handles resolved at registration), [`intent`] (the pluggable [`IntentClassifier`]), `limits` and
//! `idempotency` (the supervisor's concurrency limits and key cache), [`error`]
//! ([`Error`], what a caller can act on), and [`edge`], the HTTP edge:
//! [`SupervisorService`](edge::SupervisorService) answers the A2A methods through the
//! supervisor, [`PushNotifier`](edge::PushNotifier) calls webhooks, and
//! [`Edge`](edge::Edge) starts the actor that owns the server; [`remote`], remote A2A
//! agents as local agent types ([`RemotePeer`](remote::RemotePeer)), whose sessions
//! call out through the transport client.
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
mod cancel;
mod channel;
mod clock;
mod context;
pub mod edge;
pub mod error;
pub mod events;
mod handoff;
mod idempotency;
pub mod intent;
mod limits;
mod live;
pub mod metrics;
mod occupancy;
mod port;
pub mod remote;
mod send;
mod session;
mod signal;
pub mod store;
pub mod supervisor;
mod task;
#[cfg(test)]
mod testing;

pub use agent::{
    Agent, AgentDescriptor, AgentError, ArtifactChunk, FnAgent, Outcome, Registration,
    SessionAgent, SessionInfo, TaskContext, agent_fn,
};
pub use agentyard_transport::a2a::StreamEvent;
pub use error::{Error, Result};
pub use events::{Event, EventDetail, EventKind, Received, Subscription};
pub use intent::{IntentClassifier, SharedIntentClassifier};
pub use limits::LimitScope;
pub use store::{InMemoryTaskStore, StoreError, TaskFilter, TaskOwner, TaskPage, TaskStore};
pub use supervisor::{SendRequest, Settled, Submitted, Supervisor, SupervisorConfig};

/// The runtime's concurrent maps (live tasks, sessions, idempotency keys): keys that
/// clients choose (conversation ids, idempotency keys) get a per-map seed, and
/// foldhash instead of SipHash, which dominated lookups and rehashes of these maps
/// on the send path (`docs/benchmarks.md`).
pub(crate) type Map<K, V> = dashmap::DashMap<K, V, foldhash::quality::RandomState>;

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

/// The send path's modules point one way: each imports only modules listed before it
/// here (doc links aside). A new upward import — the agent or the work calling back
/// into the supervisor — fails this test.
#[cfg(test)]
mod layering {
    /// Lowest first.
    const LAYERS: &[(&str, &str)] = &[
        ("send", include_str!("send.rs")),
        ("handoff", include_str!("handoff.rs")),
        ("occupancy", include_str!("occupancy.rs")),
        ("channel", include_str!("channel.rs")),
        ("live", include_str!("live.rs")),
        ("port", include_str!("port.rs")),
        ("context", include_str!("context.rs")),
        ("agent", include_str!("agent.rs")),
        ("task", include_str!("task.rs")),
        ("session", include_str!("session.rs")),
        ("supervisor", include_str!("supervisor.rs")),
    ];

    /// The crate modules a source file imports from, ignoring comments.
    fn imports(source: &str) -> Vec<&str> {
        source
            .lines()
            .map(str::trim_start)
            .filter(|line| !line.starts_with("//"))
            .flat_map(|line| {
                line.match_indices("crate::")
                    .map(move |(at, _)| &line[at + 7..])
            })
            .map(|rest| {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                &rest[..end]
            })
            .collect()
    }

    #[test]
    fn no_module_of_the_send_path_imports_one_above_it() {
        for (rank, (module, source)) in LAYERS.iter().enumerate() {
            for import in imports(source) {
                if let Some(above) = LAYERS[rank..].iter().position(|(m, _)| *m == import) {
                    assert!(
                        above == 0,
                        "`{module}` imports `{import}`, which sits above it"
                    );
                }
            }
        }
    }

    #[test]
    fn the_check_sees_an_upward_import() {
        assert_eq!(
            imports("use crate::supervisor::Supervisor; // crate::nothing"),
            ["supervisor", "nothing"]
        );
    }
}
