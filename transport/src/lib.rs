//! A2A 0.3.0 on the wire.
//!
//! The types and protocol code agentyard uses to talk to other agents: the A2A
//! data model, JSON-RPC 2.0 framing, handoff payloads, the HTTP server and
//! the client. It sits at the bottom of the workspace beside
//! `agentyard-policy`, knows neither it nor the actors, and is used by
//! `agentyard-actors` and `agentyard`.
//!
//! The vendored schema `schema/a2a-v0.3.0.schema.json` is the authority; the
//! tests in `tests/schema_conformance.rs` hold every one of its definitions to
//! these types.
//!
//! # Layout
//!
//! - [`ids`]: the string newtype ids [`TaskId`], [`ContextId`], [`MessageId`];
//!   client-chosen on the wire, [`mint`](TaskId::mint)ed as uuid v7 strings
//!   on the server.
//! - [`a2a`]: the A2A data model, transport-neutral: [`Message`](a2a::Message)
//!   and its [`Part`](a2a::Part)s, [`Task`](a2a::Task) with its
//!   [`TaskState`](a2a::TaskState), artifacts, the streaming update events and
//!   [`StreamEvent`](a2a::StreamEvent), the [`AgentCard`](a2a::AgentCard) with
//!   its security schemes, push notification configs, and the params of every
//!   method. `kind` and `type` tags are checked when reading. It is the one
//!   internal model; [`a2a::v1`] is the A2A 1.0 wire form of it, a codec with
//!   conversions both ways, held to the vendored `schema/a2a-v1.0.proto` by
//!   its tests.
//! - [`jsonrpc`]: JSON-RPC 2.0 framing, free of HTTP: [`RequestId`],
//!   request and response envelopes, [`JsonRpcError`](jsonrpc::JsonRpcError)
//!   with every standard and A2A code, and [`A2aCall`](jsonrpc::A2aCall),
//!   which decodes a request body into a typed
//!   [`A2aRequest`](jsonrpc::A2aRequest) or the error to answer with.
//! - [`proto`]: A2A over gRPC: the protobuf messages, services and clients of
//!   both versions (1.0, package `lf.a2a.v1`, and 0.3.0, package `a2a.v1`),
//!   generated at build time from `proto/` by a pure-Rust path (no `protoc`) and
//!   held field by field to the reference files by `tests/proto_conformance.rs`;
//!   with their conversions to and from the internal model.
//! - [`handoff`]: typed handoff payloads (task delegation, status report,
//!   question, answer) and how they ride in a message: validation, parsing with
//!   a free-text fallback, intent, summaries.
//! - [`service`]: [`A2aService`](service::A2aService), the seam the HTTP server calls
//!   and agentyard's HTTP edge implements.
//! - [`server`]: the axum router ([`app`](server::app)) that serves an
//!   [`A2aService`](service::A2aService)'s agents over JSON-RPC and SSE, with
//!   cards, authentication, extensions and limits, and [`serve`](server::serve)
//!   with graceful shutdown.
//! - [`grpc`]: the gRPC server: both versions' services on one listener
//!   ([`serve`](grpc::serve)), around the same [`A2aService`](service::A2aService)
//!   and [`ServerConfig`](server::ServerConfig) as the HTTP server.
//! - [`client`]: [`A2aClient`](client::A2aClient), a typed client for any A2A
//!   0.3.0 JSON-RPC agent: card resolution, every method, streams read from SSE
//!   as they arrive, extension and credential headers.
//! - [`trace`]: the W3C `traceparent` calls carry in and out, and how it becomes
//!   the OpenTelemetry parent of a `tracing` span (when an OpenTelemetry layer is
//!   installed; nothing happens otherwise).

pub mod a2a;
pub mod client;
pub mod grpc;
pub mod handoff;
pub mod ids;
pub mod jsonrpc;
pub mod proto;
pub mod server;
pub mod service;
pub mod trace;

mod bounded;

#[doc(inline)]
pub use ids::{ContextId, MessageId, TaskId};
#[doc(inline)]
pub use jsonrpc::RequestId;
