//! The HTTP edge: selected agents over A2A 0.3.0 (JSON-RPC, SSE, push notifications).
//!
//! The axum server of `agentyard-transport` does the HTTP (routing, JSON-RPC framing,
//! SSE, authentication, extension headers, limits) and calls an
//! [`A2aService`](agentyard_transport::service::A2aService). This module implements
//! that trait on the supervisor ([`SupervisorService`]), sends push notifications
//! ([`PushNotifier`]), and owns the server's lifecycle ([`EdgeActor`], started with
//! [`Edge::start`] from an [`EdgeConfig`]).
//!
//! With [`EdgeConfig::grpc_bind`] the edge also serves A2A over gRPC
//! (`agentyard_transport::grpc`: `lf.a2a.v1.A2AService` and `a2a.v1.A2AService` on
//! one listener) over the same [`SupervisorService`], so every rule below holds for
//! gRPC calls too; each card then lists the gRPC interface as `host:port` (see
//! [`SupervisorService::with_grpc`]; `docs/grpc.md`).
//!
//! # Which agents
//!
//! Only agents whose descriptor is `exposed` are served (further narrowed by
//! [`EdgeConfig::agents`]); the others do not exist from outside: no card, no
//! endpoint, HTTP 404. The root serves the [default agent](EdgeConfig::default_agent).
//!
//! # Cards
//!
//! Made once at start from each descriptor (name, description, version, skills,
//! input/output modes) and the configuration (provider, extra extensions, extended
//! skills, security): `protocolVersion` "0.3.0", `preferredTransport` "JSONRPC",
//! `url` = `{public_url}/agents/{name}` (without a public URL, the bound address; bound
//! to `0.0.0.0` or `::`, which no client can reach, the `Host` the client sent),
//! `capabilities` {streaming: true,
//! pushNotifications: as configured, extensions: the handoff extension on every
//! card, plus the agent's own}, `securitySchemes`/`security` from [`EdgeAuth`] (the
//! same credentials the server checks).
//!
//! # Methods
//!
//! Every call that reaches an agent is a supervisor send with entry point `http` and
//! `from` = the authenticated principal's name (none for an anonymous caller of a
//! public server), so policy, idempotency, limits and events apply as for any send.
//! Tasks belong to where they were created: the `tasks/*` methods (and a message
//! naming a `taskId`) find a task only at the endpoint of its agent and, with
//! authentication, only for the principal that created it; anything else is -32001,
//! word for word as for an unknown id. A `contextId` of another principal's
//! conversation starts a new conversation instead. An `Idempotency-Key` header is
//! the send's idempotency key, scoped by principal and agent; a repeat answers with
//! the first task marked `"agentyard.deduplicated": true` in its metadata. The rules:
//! `docs/semantics.md`, "Isolation".
//!
//! - `message/send` waits until the task ends or stops for input, unless
//!   `configuration.blocking` is false (then it answers with the task as submitted).
//!   It answers with the **Task**, trimmed to `historyLength` (the most recent N;
//!   0 = none). An agent marked [`AgentSettings::answer_with_message`] answers a
//!   blocking send whose task *completed with a reply* with that reply **Message**
//!   instead (it carries the taskId and contextId); any other outcome still answers
//!   with the Task. A blocking send whose task has not settled just before the
//!   request timeout answers with the Task as it stands (`working`, say): the task
//!   goes on, to be followed with `tasks/get` or `tasks/resubscribe`.
//!   `acceptedOutputModes` is read as clients write it: a bare token is the range of
//!   its type (`text` is `text/*`, `json` is `application/json`), entries that are
//!   not media types are ignored, and -32005 comes only when every well-formed entry
//!   misses the agent's output modes; a part whose media type the agent does not
//!   accept is -32005 too. Every refused send is logged at info, with its reason.
//!   `configuration.pushNotificationConfig` is stored as soon as the task exists,
//!   and the task's status at that moment is notified at once so nothing is missed.
//! - `message/stream`: the task first, then every status and artifact update, the
//!   last one marked `final`. A client that disconnects only stops its own stream:
//!   the task runs on. A message that answers an input request (it names the
//!   task) follows the new turn to its own final update, for `message/send` too.
//! - `tasks/get` (`historyLength` as above), `tasks/cancel` (-32002 on an ended
//!   task), `tasks/resubscribe` (any task of this agent and caller, however it was
//!   started; an ended task yields the task and the stream ends).
//! - `tasks/pushNotificationConfig/set|get|list|delete`: several webhooks per task;
//!   an id is minted when the config has none; get without an id gives the first;
//!   delete answers `null`, also when the webhook was already gone; -32003 on every
//!   one of them when push notifications are off; -32602 naming the URL for a webhook
//!   the SSRF guard refuses. A webhook set on a task notifies its status changes from
//!   then on (one set on an ended task is kept, and notified of nothing). How
//!   notifications are sent, retried and guarded: [`push`].
//! - `agent/getAuthenticatedExtendedCard`: the public card plus
//!   [`AgentSettings::extended_skills`], for authenticated callers only; -32007 when
//!   the agent has none (or the caller is anonymous).
//!
//! # The handoff extension
//!
//! Every card declares [`HANDOFF_EXTENSION_URI`](agentyard_transport::handoff::HANDOFF_EXTENSION_URI)
//! (not required).
//!
//! - **Activated** (`X-A2A-Extensions` lists it): a handoff data part is validated
//!   (-32602 naming each bad field) and reaches the agent typed
//!   ([`TaskContext::payload`](crate::TaskContext::payload)); the runtime's events
//!   carry its payloadType; and the task, its stream events and its status updates
//!   carry `metadata["<uri>"] = {"payloadType": "..."}`.
//! - **Not activated**: extensions are off unless activated, so a handoff data part is
//!   delivered as an ordinary data part: the edge removes the extension's marker from
//!   its metadata, the agent sees no typed payload and the events no payloadType,
//!   while the free text (and the data) still arrive. Nothing is rejected, so an
//!   extension-unaware client that copied such a message keeps working on free text.
//!   (The runtime's own untyped path still applies: a message whose only part is a
//!   text holding payload JSON is read as a payload, as for any entry point.)
//!
//! # Errors
//!
//! Every error has a message naming the problem and a `data` object with a
//! machine-readable `reason`:
//!
//! | runtime error | code | `data` |
//! |---|---|---|
//! | `TaskNotFound` | -32001 | `{"reason":"task_not_found","taskId"}` |
//! | `TaskNotCancelable` | -32002 | `{"reason":"task_not_cancelable","taskId","state"}` |
//! | `TaskTerminal` | -32602 | `{"reason":"task_terminal","taskId","state"}` |
//! | `TaskMismatch` | -32602 | `{"reason":"task_mismatch","taskId"}` |
//! | `InvalidMessage` | -32602 | `{"reason":"invalid_message"}` |
//! | `UnknownAgent` | -32602 | `{"reason":"unknown_agent","agent"}` |
//! | `PolicyRejected` | **-32010** | `{"reason":"policy_rejected","policy":"rule_denied"…,"retryable","retryAfterMs"?}` |
//! | `Busy` | **-32011** | `{"reason":"busy","scope","queue","retryable":true}` |
//! | `ShuttingDown` | **-32011** | `{"reason":"shutting_down","retryable":true}` |
//! | `SessionUnavailable` | -32603 | `{"reason":"session_unavailable","agent","retryable":true}` |
//! | `Store` | -32603 (not found: -32001; ended: -32602) | `{"reason":"store_failed","retryable":true}` |
//!
//! -32010 ([`POLICY_REJECTED`]) and -32011 ([`UNAVAILABLE`]) are server errors from the
//! JSON-RPC range A2A leaves free: neither is an A2A condition, and a client must be
//! able to tell "never, by policy" (retryable only when rate limited, after
//! `retryAfterMs`) from "not now" (always retryable). Push config refusals are -32602
//! with reasons `invalid_webhook_url`, `webhook_refused`, `unsupported_authentication`,
//! `too_many_push_configs`, `push_config_not_found`.
//!
//! # Beside A2A: metrics and events
//!
//! The edge also serves `GET /metrics` (the runtime's [metrics](crate::metrics) in the
//! Prometheus text format; on a listener of its own with
//! [`EdgeConfig::metrics_bind`], or not at all with [`EdgeConfig::metrics`] off) and
//! `GET /events` (the runtime's [events](crate::events) as SSE, filtered by agent,
//! context and kind; a reader that falls behind gets `event: lagged` with how many it
//! missed), both behind the same credentials as the A2A routes
//! ([`EdgeAuth::authenticate`]). With metrics on, every request is counted by
//! JSON-RPC method (or route) and HTTP status. The contract: `docs/observability.md`.
//!
//! # Lifecycle
//!
//! [`Edge::start`] spawns the [`EdgeActor`] with the supervisor and an [`EdgeConfig`]:
//! it binds (default `127.0.0.1:0`), checks the configuration (an agent named but
//! not registered or not exposed fails the start, naming the key), starts the
//! [`PushNotifier`] and serves. [`Edge::stop`] ends open streams, gives requests in
//! flight [`EdgeConfig::shutdown_grace`], then closes connections and stops the
//! notifier; tasks started through the edge run on in the runtime. Stop the edge
//! before shutting the runtime down.

mod actor;
mod card;
mod config;
mod error;
mod observe;
pub mod push;
mod rpc_error;
mod service;

pub use actor::{Edge, EdgeActor, EdgeArgs, EdgeInfo, EdgeMsg, EdgeState};
pub use card::{
    agent_url, extended_card, handoff_extension, interfaces, public_card, security, set_interfaces,
};
pub use config::{Access, AgentSettings, EdgeAuth, EdgeConfig, PushConfig, Unauthorized};
pub use error::EdgeError;
pub use push::{NOTIFICATION_TOKEN_HEADER, PushNotifier, PushStats};
pub use rpc_error::{POLICY_REJECTED, UNAVAILABLE, from_edge, from_runtime};
pub use service::SupervisorService;
