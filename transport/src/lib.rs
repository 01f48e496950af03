//! A2A 0.3.0 on the wire.
//!
//! The types and protocol code agentyard uses to talk to other agents: the A2A
//! data model, JSON-RPC 2.0 framing, handoff payloads, and (later) the HTTP
//! server and the client. It sits at the bottom of the workspace beside
//! `agentyard-policy`, knows neither it nor the actors, and is used by
//! `agentyard-actors` and `agentyard`.
//!
//! # Layout
//!
//! - [`ids`]: the string newtype ids [`TaskId`], [`ContextId`], [`MessageId`].
//! - [`a2a`]: the A2A data model: [`Message`](a2a::Message) and its
//!   [`Part`](a2a::Part)s, [`Task`](a2a::Task), [`TaskState`](a2a::TaskState),
//!   artifacts and the streaming update events.
//! - [`handoff`]: typed handoff payloads (task delegation, status report,
//!   question, answer) and how they ride in a message: validation, parsing with
//!   a free-text fallback, intent, summaries.
//! - [`jsonrpc`]: JSON-RPC 2.0 framing, typed A2A requests, error objects.
//! - [`service`]: [`A2aService`](service::A2aService), the seam the HTTP server calls
//!   and agentyard's HTTP edge implements.

pub mod a2a;
pub mod handoff;
pub mod ids;
pub mod jsonrpc;
pub mod service;

#[doc(inline)]
pub use ids::{ContextId, MessageId, TaskId};
