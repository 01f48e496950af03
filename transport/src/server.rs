//! The HTTP server: A2A over JSON-RPC and HTTP+JSON (REST), versions 1.0 and 0.3.0
//! side by side, for the agents an [`A2aService`] exposes.
//!
//! [`app`] builds an axum [`Router`] around any [`A2aService`] ([`app_beside`] the
//! same routes with a program's beside them, as one service with no router around
//! it); [`serve_with`] runs either on a listener until a shutdown signal, with the
//! connection limits of a [`ServerConfig`] ([`serve`] with the default ones). Tests
//! drive the router without a socket (`tower::ServiceExt::oneshot`).
//!
//! # Routes
//!
//! | route | answers |
//! |---|---|
//! | `POST /agents/{name}` (and `/agents/{name}/`) | JSON-RPC for the exposed agent `name` |
//! | `GET /agents/{name}/.well-known/agent-card.json` (and `agent.json`) | its card |
//! | `POST /` | JSON-RPC for the default agent |
//! | `GET /.well-known/agent-card.json` (and `agent.json`) | the default agent's card |
//! | `GET /agents` | a JSON array of every exposed agent's card |
//! | `GET /a2a-1.0/.well-known/agent-card.json`, `GET /a2a-1.0/agents/{name}/.well-known/agent-card.json` | the strict 1.0 cards alone, for conformance tools ([`ServerConfig::strict_card_prefix`]) |
//! | `/agents/{name}/<resource>`, `/<resource>` | HTTP+JSON for the agent `name`, or the default agent; 0.3 under `/v1/` (see below) |
//!
//! [`ServerConfig::bindings`] turns each binding on or off: with JSON-RPC off its
//! `POST` routes answer 404, with HTTP+JSON off its resources do (cards are served
//! either way).
//!
//! # HTTP+JSON
//!
//! The resources are those of the protos' `google.api.http` annotations, under an
//! agent's base URL (`/agents/{name}`, or the root for the default agent):
//!
//! | resource | 1.0 method |
//! |---|---|
//! | `POST /message:send` | `SendMessage` |
//! | `POST /message:stream` | `SendStreamingMessage` (SSE) |
//! | `GET /tasks/{id}` (`?historyLength=`) | `GetTask` |
//! | `GET /tasks` (`?contextId=&status=&pageSize=&pageToken=&historyLength=&statusTimestampAfter=&includeArtifacts=`) | `ListTasks` |
//! | `POST /tasks/{id}:cancel` | `CancelTask` |
//! | `GET` or `POST /tasks/{id}:subscribe` | `SubscribeToTask` (SSE) |
//! | `POST` / `GET /tasks/{taskId}/pushNotificationConfigs` | `CreateTaskPushNotificationConfig` / `ListTaskPushNotificationConfigs` |
//! | `GET` / `DELETE /tasks/{taskId}/pushNotificationConfigs/{id}` | `GetTaskPushNotificationConfig` / `DeleteTaskPushNotificationConfig` |
//! | `GET /extendedAgentCard` | `GetExtendedAgentCard` |
//!
//! Each is also served as `/{tenant}/<resource>`. The **tenant** must name the agent
//! the URL serves (`/agents/echo/echo/message:send`; at the root, the default
//! agent): agentyard has one agent per base URL, so a tenant is at most a
//! restatement of it, and any other tenant gets 404 rather than a call to an agent
//! the URL does not name. A `tenant` member in a request body is ignored, as on
//! JSON-RPC. A first segment `v1` starts the 0.3 paths, so no tenant is called that.
//!
//! Bodies are the 1.0 ProtoJSON messages ([`crate::a2a::v1`]) as
//! `application/a2a+json`; requests may also be `application/json` (any other media
//! type gets 415, -32005 ContentTypeNotSupported). Path ids and query parameters
//! fill the same params a JSON-RPC call carries, the path winning. A stream is SSE
//! whose every `data:` is a bare `StreamResponse`, with the `id:` and
//! `Last-Event-ID` resumption of the JSON-RPC streams. An error is a
//! `google.rpc.Status`, `{"error": {"code": <http>, "status": "NOT_FOUND", "message":
//! ..., "details": [ErrorInfo, ...]}}` as `application/json`, under the HTTP status
//! [`binding_status`] maps its code to (a task
//! not found is 404, a bad body 400 naming what is wrong); a stream that fails once
//! started sends that body as its last event. The refusals made before a call
//! (401, 404, 405 with `Allow`, 408, 413) use the same body, their `ErrorInfo`
//! reason the gRPC code's name.
//!
//! **A2A 0.3** is served under `/v1/…` of the same base URLs, at the 0.3 proto's
//! paths (`/v1/message:send`, `/v1/message:stream`, `/v1/tasks/{id}`,
//! `/v1/tasks/{id}:cancel`, `/v1/tasks/{id}:subscribe`, the push-config resources,
//! `GET /v1/card` for the authenticated extended card), with the 0.3 proto's
//! messages as ProtoJSON ([`crate::proto::v0_3`]), as `application/json`; creating a
//! push config takes the annotation's body (the config) or the whole
//! `CreateTaskPushNotificationConfigRequest` the 0.3 Python client sends. The 0.3
//! SDK servers disagree on error bodies (Python: `{"message"}` with its own
//! statuses; JS: `{"code", "message", "data"}`): agentyard sends the JS form, which
//! carries Python's `message` too, under the same [`binding_status`] statuses as
//! 1.0, and a stream's error as an SSE `error` event with that body.
//!
//! **Version:** the path decides, as the method name does on JSON-RPC: the 1.0
//! resources answer 1.0 without an `A2A-Version` header too (the draft conformance
//! case VER-NEG-002; the Python SDK refuses it with FAILED_PRECONDITION, which
//! helps no client), and with a header naming 0.3. A header naming a version not
//! served gets 400 FAILED_PRECONDITION (-32009). Authentication, extensions
//! (`A2A-Extensions`, echoed), `Idempotency-Key`, `traceparent`, the call limit and
//! the request timeout are the JSON-RPC routes' own layers.
//!
//! Cards are public. Without an `A2A-Version` header a card is the *hybrid* one: the
//! 1.0 card (`supportedInterfaces` listing each interface as 1.0, then 0.3) with the
//! 0.3 fields beside it (`url`, `preferredTransport`, `protocolVersion`, `security`,
//! scheme `type`s), which 0.3 clients and SDK 1.x clients both read; with
//! `A2A-Version: 1.0` it is the strict 1.0 card. Card responses carry
//! `Vary: A2A-Version`, `Cache-Control`, and an `ETag` and `Last-Modified` per variant
//! that change when the card does; a conditional GET whose validator holds gets 304.
//! An agent that is not exposed (or a missing default agent) gets
//! HTTP 404, as does any other path. Any method but `POST` on an agent's endpoint
//! gets HTTP 405 with `Allow: POST` and a body that says how to call it (404 when
//! there is no such agent). Cards come from [`A2aService::card_at`] with the origin
//! the request's `Host` names, so a service bound to `0.0.0.0` can advertise an
//! address the client reached rather than one it cannot.
//!
//! # The JSON-RPC routes as layers
//!
//! A call passes tower layers before its handler, outermost first: `resolve` (which
//! agent and card: 404; on the way out it echoes the activated extensions and names
//! the call for the log line, whichever layer answered), `authenticate` (401; a
//! caller it refuses never waits for the cap below), an
//! optional cap on calls let in at once ([`ServerConfig::max_calls`]; the rest wait),
//! and `ReadWholeBody` (415, 413, 408). The handler decodes the call and hands it
//! to the service within the request timeout: that deadline stays in the handler, as
//! its error names the call, which no layer has read.
//!
//! The layers and the handler are tower services of their own, stacked into one
//! service that each route holds; the log line's layers wrap the whole router. A
//! layer per route (axum's `route_layer`, `Router::layer`, `from_fn`) would box
//! each level, and every call would clone each boxed level with all those below it:
//! 24 of a `message/send`'s 122 allocations went on that.
//!
//! # Protocol versions
//!
//! Both versions are served on every agent endpoint. The version a request asks for
//! comes from its `A2A-Version` header, else its `A2A-Version` query parameter; only
//! major.minor counts (`1.0.1` is 1.0) and a missing or empty value means 0.3. The
//! wire form follows the method name: `message/send`, `tasks/get`, ... are 0.3;
//! `SendMessage`, `GetTask`, ... are 1.0, served as 1.0 even without a header
//! (VER-NEG-002); a 0.3 method with `A2A-Version: 1.0` is still served as 0.3, since
//! a client that names it reads 0.3 answers. A header naming a version not served
//! (`99.0`) gets -32009 VersionNotSupported with its `ErrorInfo`. Both forms are
//! decoded into the same [`A2aRequest`](crate::jsonrpc::A2aRequest) and go through
//! [`A2aService::call`]; 1.0 answers are written back as `SendMessageResponse`,
//! `StreamResponse` events, `{}` for a deleted push config, and errors with
//! `google.rpc.ErrorInfo` details. `ListTasks` (1.0 only) reaches the service as
//! [`A2aRequest::ListTasks`](crate::jsonrpc::A2aRequest::ListTasks).
//!
//! # A JSON-RPC request, step by step
//!
//! 1. **Authentication** (headers only, before the body is read). An agent whose
//!    card lists `security` requirements needs credentials that meet one of them
//!    (see [`AuthConfig`]); otherwise HTTP 401 with a `WWW-Authenticate` challenge
//!    per acceptable scheme.
//! 2. **Content type.** The body must be `application/json` (parameters such as
//!    `charset` and `+json` types are fine); otherwise HTTP **415**. Its body is the
//!    JSON-RPC error -32005 ContentTypeNotSupported (with its `ErrorInfo`) when the
//!    request asks for A2A 1.0 (`A2A-Version`), and -32600 naming the problem on 0.3,
//!    as 0.3 always answered.
//! 3. **Body limit** ([`ServerConfig`], 1 MiB by default): a larger body gets HTTP
//!    413. A body that takes longer than the request timeout to arrive gets 408.
//! 4. **Decoding** with [`A2aCall::decode`](crate::jsonrpc::A2aCall::decode): a bad
//!    body gets HTTP 200 and the JSON-RPC error (-32700 parse error, -32600 invalid
//!    request, including "batch requests are not supported" for an array, -32601,
//!    -32602), with the request's id when it could be read and `null` otherwise.
//! 5. **Extensions.** `A2A-Extensions` is read on 1.0, `X-A2A-Extensions` and
//!    `A2A-Extensions` on 0.3 (comma-separated URIs); those the card declares in
//!    `capabilities.extensions` are activated, the rest ignored. A card extension
//!    marked `required` that the request did not activate gets -32600 (0.3) or
//!    -32008 ExtensionSupportRequired (1.0) naming the URI. Every response echoes
//!    the activated URIs (SSE responses too): on 1.0 in `A2A-Extensions`, on 0.3 in
//!    the spelling the request used.
//! 6. **Capabilities.** Streaming methods on an agent whose card does not say
//!    `streaming: true` get -32004; push notification config methods on an agent
//!    without `pushNotifications: true` get -32003.
//! 7. **The call.** `agent/getAuthenticatedExtendedCard` is answered here: HTTP 401
//!    without a principal, -32007 when [`A2aService::extended_card`] has none.
//!    Everything else goes to [`A2aService::call`] with a [`CallContext`]. A unary
//!    call that takes longer than the request timeout gets -32603 naming the
//!    limit.
//! 8. **The answer.** A unary result is sent as a JSON-RPC response. A stream is
//!    sent as SSE (`text/event-stream`): every `data:` line is a whole JSON-RPC
//!    response with the request's id; an `Err` item is sent as an error response and
//!    ends the stream; the stream closes right after an event with `final: true`
//!    (in 1.0, which has no `final`, that is a terminal or interrupted state).
//!    A unary method answered with a stream, or the reverse, gets -32603. A client
//!    that disconnects drops the stream, which the service sees as a drop.
//!
//! The streaming methods (`message/stream`, `tasks/resubscribe`) answer *every*
//! JSON-RPC error as a stream: `Content-Type: text/event-stream`, one `data:` event
//! holding the error response, then the stream closes. That covers errors in the
//! request itself (bad params, a missing id) as soon as its `method` can be read, as
//! SSE clients expect; a body that is not JSON at all gets a JSON answer.
//!
//! Errors that are not JSON-RPC errors in the protocol's sense (400 for an agent
//! name that is not UTF-8 once percent-decoded, 401, 404, 405, 408, 413, 415) still
//! carry a JSON-RPC error response as body (code -32600), its message led by the
//! status (`Unauthorized: ...`, `Payload Too Large: ...`) and naming the problem, so
//! a JSON-RPC client can show it.
//!
//! # Logs
//!
//! Every request gets one line at info, from the layer around the whole router: the span
//! `request` (HTTP `method`, `path`, and once answered `rpc_method` and `status`;
//! its OpenTelemetry parent is the request's `traceparent`, see [`crate::trace`])
//! and the event `request` with `agent` and
//! `rpc_method` (for JSON-RPC calls), `rpc_error` (the code, when the answer is a
//! JSON-RPC error), `status` and `duration_ms`. Inside it, each
//! JSON-RPC request runs in a span `a2a.jsonrpc` with the fields `agent`, `method`
//! and `rpc_id`.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::extract::MatchedPath;
use axum::handler::Handler as _;
use axum::response::Response;
use axum::routing::{any, get, post_service};
use tokio_util::sync::CancellationToken;

use crate::a2a::TransportProtocol;
#[cfg(doc)]
use crate::a2a::v1::binding_status;
use crate::service::A2aService;
#[cfg(doc)]
use crate::service::CallContext;

pub(crate) mod auth;
pub(crate) mod cards;
mod config;
mod conn;
pub(crate) mod extensions;
mod keep_alive;
mod log;
mod reply;
mod rest;
pub(crate) mod rpc;
mod sse;

pub use config::{AuthConfig, ServerConfig, ServerConfigBuilder};
pub use log::OnAnswer;
pub use rest::A2A_JSON;
pub use rpc::{RequestLog, RpcRoute};

/// The header that carries extension URIs in A2A 0.3: requested by the client,
/// echoed (activated) by the server.
pub const EXTENSIONS_HEADER: &str = "X-A2A-Extensions";

/// The header that carries extension URIs in A2A 1.0 (0.3 requests may use it
/// too; the answer echoes the spelling the request used).
pub const V1_EXTENSIONS_HEADER: &str = "A2A-Extensions";

/// The request headers every call reads, as header names made once: a lookup by
/// `&str` parses and lowers the name on every call (~300 instructions each, nine
/// lookups a request), a lookup by [`HeaderName`] only hashes it.
pub(crate) mod names {
    use axum::http::HeaderName;

    /// [`super::EXTENSIONS_HEADER`].
    pub(crate) const EXTENSIONS: HeaderName = HeaderName::from_static("x-a2a-extensions");
    /// [`super::V1_EXTENSIONS_HEADER`].
    pub(crate) const V1_EXTENSIONS: HeaderName = HeaderName::from_static("a2a-extensions");
    /// [`crate::a2a::v1::VERSION_HEADER`].
    pub(crate) const VERSION: HeaderName = HeaderName::from_static("a2a-version");
    /// [`crate::trace::TRACEPARENT`].
    pub(crate) const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
    /// `Idempotency-Key`.
    pub(crate) const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
    /// `Last-Event-ID`.
    pub(crate) const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

    #[cfg(test)]
    mod tests {
        use axum::http::HeaderName;

        /// Each name is the public spelling's, so a lookup by either finds the same
        /// header.
        #[test]
        fn names_are_the_public_spellings() {
            let pairs = [
                (super::EXTENSIONS, super::super::EXTENSIONS_HEADER),
                (super::V1_EXTENSIONS, super::super::V1_EXTENSIONS_HEADER),
                (super::VERSION, crate::a2a::v1::VERSION_HEADER),
                (super::TRACEPARENT, crate::trace::TRACEPARENT),
                (super::IDEMPOTENCY_KEY, "Idempotency-Key"),
                (super::LAST_EVENT_ID, "Last-Event-ID"),
            ];
            for (name, spelling) in pairs {
                assert_eq!(name, HeaderName::try_from(spelling).unwrap(), "{spelling}");
            }
        }
    }
}

/// What every handler holds: the service and the config, behind one `Arc`.
///
/// axum clones the state for every extractor and layer that names it, several times
/// a request; one shared count per clone instead of one per field keeps that from
/// bouncing three cache lines between the cores on every request (it was 0.8 µs of
/// a `message/send` at 16 connections, `docs/benchmarks.md`).
struct AppState<S>(Arc<Shared<S>>);

/// The fields of [`AppState`].
struct Shared<S> {
    service: Arc<S>,
    config: ServerConfig,
    /// When each card variant was first served as it is now (`Last-Modified`).
    card_clock: cards::CardClock,
}

impl<S> std::ops::Deref for AppState<S> {
    type Target = Shared<S>;

    fn deref(&self) -> &Shared<S> {
        &self.0
    }
}

impl<S> Clone for AppState<S> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

/// Tells open SSE streams that the server is shutting down, so they end and their
/// connections can close; [`serve`] makes it the signal of every connection it serves.
#[derive(Clone, Debug)]
struct ShutdownSignal(CancellationToken);

/// The router serving `service`'s agents under `config`; see the [module
/// docs](self) for the routes and how a request is handled. For merging into a
/// program's own router; a server serving these routes (and others beside them)
/// does less work a request with [`app_beside`].
///
/// ```
/// use std::sync::Arc;
/// # use agentyard_transport::a2a::AgentCard;
/// # use agentyard_transport::jsonrpc::{A2aRequest, JsonRpcError};
/// # use agentyard_transport::service::{A2aService, CallContext, Principal, Reply};
/// use agentyard_transport::server::{ServerConfig, app};
///
/// # struct Nobody;
/// # impl A2aService for Nobody {
/// #     fn card(&self, _: &str) -> Option<Arc<AgentCard>> { None }
/// #     fn default_agent(&self) -> Option<String> { None }
/// #     fn agents(&self) -> Vec<String> { Vec::new() }
/// #     fn extended_card(&self, _: &str, _: &Principal) -> Option<AgentCard> { None }
/// #     async fn call(&self, _: CallContext, _: A2aRequest) -> Result<Reply, JsonRpcError> {
/// #         Err(JsonRpcError::unsupported_operation())
/// #     }
/// # }
/// let router: axum::Router = app(Arc::new(Nobody), ServerConfig::default());
/// ```
pub fn app<S: A2aService>(service: Arc<S>, config: ServerConfig) -> Router {
    Router::new().fallback_service(app_beside(service, config, Router::new()))
}

/// The A2A routes of [`app`] with a program's `routes` beside them, as one service
/// for [`serve_with`]: what a server serving nothing else should serve, where
/// [`app`] is for merging into a program's own router.
///
/// No router is put around the A2A routes: it would match every request twice (its
/// own routes, then its fallback's), clone the service and box each call's
/// future: four allocations a call (`docs/benchmarks.md`). `routes` are
/// merged into the A2A router, inside the layer that logs every request and tells
/// [`ServerConfig::on_answer`] of it: their answers name their route
/// ([`MatchedPath`]) as the card routes' do. They must not overlap the A2A routes
/// (nor set a fallback): axum's `merge` panics on a clash, as it would in a program's
/// own router. A `POST` to a JSON-RPC path (`/`, `/agents/{name}`,
/// `/agents/{name}/`) is always the A2A call's.
pub fn app_beside<S: A2aService>(
    service: Arc<S>,
    config: ServerConfig,
    routes: Router,
) -> impl Served + Sync {
    let strict = config.strict_card_prefix().map(str::to_owned);
    let state = AppState(Arc::new(Shared {
        service,
        config,
        card_clock: cards::CardClock::default(),
    }));
    // The JSON-RPC routes' layers, outermost first: which agent (404), who calls
    // (401), how many calls run at once (when limited), the body (415, 413, 408).
    // The handler inside decodes and dispatches; the call's own deadline is its, as
    // its error names the call. One service of concrete layers around a concrete
    // handler: axum boxes it once, where a layer per route would box each level and
    // clone every boxed level below it on every call.
    let calls = state.config.max_calls();
    let rpc = tower::ServiceBuilder::new()
        .layer(rpc::StateLayer::<_, rpc::Resolve>::new(state.clone()))
        .layer(rpc::StateLayer::<_, rpc::Authenticate>::new(state.clone()))
        .option_layer(calls.map(tower::limit::GlobalConcurrencyLimitLayer::new))
        .layer(rpc::StateLayer::<_, rpc::ReadWholeBody>::new(state.clone()))
        .service(rpc::Handler::new(state.clone()));
    // The HTTP+JSON routes: the same layers behind their own resolve, which reads
    // the path instead of a route's parameters; outside it, the route is named on
    // answers that name no call (see `stamp_route`).
    let rest_layers = tower::ServiceBuilder::new()
        .layer(axum::middleware::from_fn(stamp_route))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            rest::resolve::<S>,
        ))
        .layer(rpc::StateLayer::<_, rpc::Authenticate>::new(state.clone()))
        .option_layer(calls.map(tower::limit::GlobalConcurrencyLimitLayer::new))
        .layer(rpc::StateLayer::<_, rpc::ReadWholeBody>::new(state.clone()));
    // The card routes and the 405s name their route on their answers (see
    // `stamp_route`).
    let stamp = axum::middleware::from_fn(stamp_route);
    let mut cards = Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(cards::default_card::<S>),
        )
        .route("/.well-known/agent.json", get(cards::default_card::<S>))
        .route("/agents", get(cards::list::<S>))
        .route(
            "/agents/{name}/.well-known/agent-card.json",
            get(cards::agent_card::<S>),
        )
        .route(
            "/agents/{name}/.well-known/agent.json",
            get(cards::agent_card::<S>),
        );
    if let Some(prefix) = strict {
        cards = cards
            .route(
                &format!("{prefix}/.well-known/agent-card.json"),
                get(cards::strict_default_card::<S>),
            )
            .route(
                &format!("{prefix}/agents/{{name}}/.well-known/agent-card.json"),
                get(cards::strict_agent_card::<S>),
            );
    }
    let mut router = Router::new().merge(cards.route_layer(stamp.clone()));
    let mut json_rpc = None;
    if state.config.serves(&TransportProtocol::JsonRpc) {
        json_rpc = Some(rpc.clone());
        router = router
            .route(
                "/",
                post_service(rpc.clone())
                    .fallback(cards::default_wrong_method::<S>.layer(stamp.clone())),
            )
            .route(
                "/agents/{name}",
                post_service(rpc.clone())
                    .fallback(cards::agent_wrong_method::<S>.layer(stamp.clone())),
            )
            // Some clients append a slash to an interface URL.
            .route(
                "/agents/{name}/",
                post_service(rpc).fallback(cards::agent_wrong_method::<S>.layer(stamp)),
            );
    }
    if state.config.serves(&TransportProtocol::HttpJson) {
        // Every other path under an agent's base URL, or the root, is read by the
        // HTTP+JSON layer (its resources put verbs inside segments, `{id}:cancel`,
        // which no route pattern matches); a path it cannot read gets the 404.
        router = router
            .route(
                "/agents/{name}/{*resource}",
                any(rest::call::<S>.layer(rest_layers.clone())),
            )
            .route("/{*resource}", any(rest::call::<S>.layer(rest_layers)));
    }
    let on_answer = state.config.on_answer().cloned();
    let routes = if routes.has_routes() {
        routes.route_layer(axum::middleware::from_fn(stamp_route))
    } else {
        // `route_layer` refuses a router with no routes; merged all the same, so
        // that a fallback set on it clashes as documented rather than going unheard.
        routes
    };
    let router = router
        .fallback(cards::no_route)
        .with_state(state)
        .merge(routes);
    let router = Dispatch {
        rpc: json_rpc,
        router,
    };
    // Around the whole router rather than each route: a `Router::layer` wraps every
    // route in a boxed level of its own, which each call clones with every boxed
    // level below it.
    tower::Layer::layer(&log::LogLayer { on_answer }, router)
}

/// What [`serve_with`] serves: a service answering every request (a [`Router`], or
/// what [`app_beside`] builds), cloned for each connection (and for a request only
/// when it is not ready at once).
pub trait Served:
    tower::Service<
        axum::extract::Request,
        Response = Response,
        Error = std::convert::Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static
{
}

impl<T> Served for T where
    T: tower::Service<
            axum::extract::Request,
            Response = Response,
            Error = std::convert::Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static
{
}

/// `service`'s answer to `request`: called in place when it is ready at once; else
/// the call's future waits for its readiness, and a clone stands in for it.
///
/// A clone for every call (what `oneshot` on a clone does) raises and lowers the
/// reference counts of every layer's shared state below, counts that every
/// connection's requests share across the cores; the services here are nearly
/// always ready at once.
pub(super) fn call_in_place<S>(
    service: &mut S,
    request: axum::extract::Request,
) -> futures::future::Either<S::Future, tower::util::Oneshot<S, axum::extract::Request>>
where
    S: tower::Service<axum::extract::Request, Error = std::convert::Infallible> + Clone,
{
    use futures::future::Either;
    use std::task::{Context, Poll, Waker};
    match service.poll_ready(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(())) => Either::Left(service.call(request)),
        Poll::Ready(Err(never)) => match never {},
        Poll::Pending => {
            // The service asked goes on waiting (for a place under a limit, say) in
            // the call's future, which polls it again with a waker that wakes; a
            // fresh clone takes its place for the next call.
            let fresh = service.clone();
            let waiting = std::mem::replace(service, fresh);
            Either::Right(tower::ServiceExt::oneshot(waiting, request))
        }
    }
}

/// Hands a JSON-RPC call (a POST to `/`, `/agents/{name}` or `/agents/{name}/`) to
/// the JSON-RPC routes' service at once, and every other request to the router.
///
/// The router's matching of those routes was 5,000–7,000 instructions and eleven
/// allocations of a call (the path's parameters, the matched route and the map it is
/// kept in, the boxed route cloned, the agent's `Path` read; `docs/benchmarks.md`).
/// The routes stay in the router, whole: they answer the other methods (405), and
/// would serve a POST the same way, as the service reads the agent from the path
/// itself ([`RpcRoute`]) behind either.
#[derive(Clone)]
struct Dispatch<R> {
    /// The JSON-RPC routes' service, when that binding is served.
    rpc: Option<R>,
    router: Router,
}

impl<R> tower::Service<axum::extract::Request> for Dispatch<R>
where
    R: tower::Service<
            axum::extract::Request,
            Response = Response,
            Error = std::convert::Infallible,
        >,
{
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = futures::future::Either<
        R::Future,
        <Router as tower::Service<axum::extract::Request>>::Future,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        // Both are always ready: the JSON-RPC layers take a place under the cap on
        // calls inside, once the caller is let in, and the router's routes are too.
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::extract::Request) -> Self::Future {
        use futures::future::Either;
        if let Some(rpc) = &mut self.rpc
            && request.method() == axum::http::Method::POST
            && RpcRoute::of(request.uri().path()).is_some()
        {
            return Either::Left(rpc.call(request));
        }
        Either::Right(tower::Service::call(&mut self.router, request))
    }
}

/// Puts the route a request matched on its answer, for layers around the whole
/// router (the edge's metrics), which see the request before it is routed. A
/// layer of the rarely called routes: a call's answer names its method instead.
async fn stamp_route(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let route = request.extensions().get::<MatchedPath>().cloned();
    let mut response = next.run(request).await;
    if let Some(route) = route {
        response.extensions_mut().insert(route);
    }
    response
}

/// Serves `app` (a router, or what [`app_beside`] builds) on `listener` with the
/// connection limits of [`ServerConfig::default`]; see [`serve_with`].
///
/// ```no_run
/// # use std::sync::Arc;
/// # async fn run(router: axum::Router) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// agentyard_transport::server::serve(listener, router, async {
///     let _ = tokio::signal::ctrl_c().await;
/// })
/// .await
/// # }
/// ```
///
/// # Errors
///
/// An I/O error from the listener that ends serving.
pub async fn serve<A, F>(
    listener: tokio::net::TcpListener,
    app: A,
    shutdown: F,
) -> std::io::Result<()>
where
    A: Served,
    F: Future<Output = ()> + Send + 'static,
{
    serve_with(listener, app, &ServerConfig::default(), shutdown).await
}

/// Serves `app` (a router, or what [`app_beside`] builds) on `listener` until
/// `shutdown` completes, then shuts down gracefully: it stops accepting
/// connections, ends open SSE streams (a client sees the stream close and can
/// resubscribe later), lets unary calls in flight finish (each is bounded by the
/// request timeout), and returns once every connection has closed. Accepted
/// connections get `TCP_NODELAY`, so streamed events go out at once.
///
/// `config` bounds the connections (the routes' own limits were set by [`app`]):
///
/// - a request head must arrive within [`header_read_timeout`](ServerConfig::header_read_timeout)
///   of its first byte (the first one within that time of the connection's accept),
///   and a kept-alive connection with no request in flight is closed after
///   [`idle_timeout`](ServerConfig::idle_timeout), so half-sent requests and silent
///   connections cannot pile up;
/// - a connection that is busy (an SSE stream, say) has no connection timeout, but
///   one whose client accepts no bytes for `idle_timeout` while the server has
///   something to write is closed, which ends its stream;
/// - at most [`max_connections`](ServerConfig::max_connections) are open at once
///   (lowered, with a warning, to what the open-file limit allows); a few more get
///   HTTP 503 with `Retry-After`, and past those new connections wait in the listen
///   backlog until one closes. An accept error (out of file descriptors) pauses the
///   loop briefly rather than spinning.
///
/// # Errors
///
/// An I/O error from the listener that ends serving.
pub async fn serve_with<A, F>(
    listener: tokio::net::TcpListener,
    app: A,
    config: &ServerConfig,
    shutdown: F,
) -> std::io::Result<()>
where
    A: Served,
    F: Future<Output = ()> + Send + 'static,
{
    let token = CancellationToken::new();
    let stop = token.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = shutdown => {
                tracing::info!("shutting down: no new connections, closing streams");
                token.cancel();
            }
            // Serving ended on its own: nothing to signal.
            () = token.cancelled() => {}
        }
    });
    let result = conn::accept_loop(listener, app, config, stop.clone()).await;
    stop.cancel();
    result
}

/// Sets `TCP_NODELAY` on an accepted connection. Without it each SSE event after the
/// first waits for the client's delayed ACK (Nagle): a four-event stream took 44 ms
/// on loopback.
fn set_nodelay(tcp: &tokio::net::TcpStream) {
    if let Err(error) = tcp.set_nodelay(true) {
        tracing::debug!(%error, "could not set TCP_NODELAY");
    }
}

#[cfg(test)]
mod tests;
