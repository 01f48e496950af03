//! agentyard: an actor-based multi-agent runtime speaking A2A 0.3.0.
//!
//! agentyard hosts many concurrent agents in one process. Each live session of an agent
//! (an agent type in one conversation) is a supervised ractor actor; every message
//! between agents, or from outside, goes through one supervisor that applies policy,
//! idempotency and concurrency limits before the agent runs.
//!
//! # Layout
//!
//! - [`Runtime`] and [`RuntimeBuilder`]: start a runtime, register agent types, send,
//!   stream, get and cancel tasks, subscribe to events, shut down.
//! - Re-exports from `agentyard-actors` (the [`Agent`] trait, [`TaskContext`], the
//!   supervisor and store types), `agentyard-policy` (decisions) and
//!   `agentyard-transport` (the A2A data model and handoff payloads).
//! - [`Runtime::serve`] with an [`HttpConfig`]: the runtime's exposed agents over
//!   HTTP (A2A, `/metrics`, `/events`), returning an [`HttpServer`]; reach them with
//!   the typed [`client`] (module `http`).
//! - [`builtin`]: the agents `agentyard serve` starts with (echo, countdown, ask,
//!   planner and its worker).
//! - [`config`]: the `agentyard serve` configuration file.
//! - [`console`]: the live web console at `/ui` and its JSON API, mounted on the
//!   edge by `serve` (`[console] enabled`) or by a program through
//!   `EdgeConfig::routes`.
//! - [`store`]: `agentyard-store`, the task stores (memory, embedded file, PostgreSQL)
//!   and their contract.
//! - [`serve`]: the server `agentyard serve` runs: the runtime with the built-in
//!   agents behind the HTTP edge.
//! - [`telemetry`]: the `[tracing]` section and the `tracing` subscriber: log lines
//!   (text or JSON) and, when configured, spans exported with OpenTelemetry (OTLP);
//!   [`telemetry::init`] turns the export on in a program of one's own.
//! - [`workflows`]: workflow files loaded and registered as agent types; the
//!   workflow crate itself is re-exported as [`workflow`].
//! - The `agentyard` binary (`src/main.rs`): the command-line program.

pub mod builtin;
pub mod config;
pub mod console;
mod http;
mod runtime;
pub mod serve;
pub mod telemetry;
pub mod workflows;

pub use agentyard_actors::{
    Agent, AgentDescriptor, AgentError, ArtifactChunk, Error, Event, EventDetail, EventKind,
    InMemoryTaskStore, IntentClassifier, LimitScope, Received, Registration, Result, SendRequest,
    SessionInfo, Settled, StoreError, StreamEvent, Submitted, Subscription, Supervisor,
    SupervisorConfig, TaskContext, TaskOwner, TaskStore,
};
// The other two forms of an agent: per-session state as `&mut self`, and a closure.
pub use agentyard_actors::{FnAgent, Outcome, SessionAgent, agent_fn};
pub use agentyard_policy as policy;
// The HTTP edge, the A2A client, the wire model and JSON-RPC framing, so that a
// program (and the e2e tests) needs no crate but this one.
pub use agentyard_actors::{edge, remote};
pub use agentyard_store as store;
pub use agentyard_transport::a2a::{
    AgentCard, AgentProvider, AgentSkill, Artifact, Message, Part, Role, Task, TaskState,
    TaskStatus,
};
// Serving over HTTP: the config, the handle, the credentials, the start errors.
pub use agentyard_actors::edge::{AgentSettings, EdgeAuth, EdgeError, PushConfig};
pub use agentyard_actors::metrics;
pub use agentyard_transport::handoff;
pub use agentyard_transport::{ContextId, MessageId, TaskId};
pub use agentyard_transport::{a2a, client, jsonrpc};
pub use agentyard_workflow as workflow;
pub use http::{HttpConfig, HttpServer};
pub use runtime::{Runtime, RuntimeBuilder};

// The README's code blocks are compiled and run as doctests, so its library section
// stays true to the API.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;
