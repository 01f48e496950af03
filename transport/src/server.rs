//! The HTTP server: A2A 0.3.0 JSON-RPC over HTTP for the agents an [`A2aService`]
//! exposes.
//!
//! [`app`] builds an axum [`Router`] around any [`A2aService`]; [`serve`] runs it on
//! a listener until a shutdown signal. Tests drive the router without a socket
//! (`tower::ServiceExt::oneshot`).
//!
//! # Routes
//!
//! | route | answers |
//! |---|---|
//! | `POST /agents/{name}` | JSON-RPC for the exposed agent `name` |
//! | `GET /agents/{name}/.well-known/agent-card.json` (and `agent.json`) | its card |
//! | `POST /` | JSON-RPC for the default agent |
//! | `GET /.well-known/agent-card.json` (and `agent.json`) | the default agent's card |
//! | `GET /agents` | a JSON array of every exposed agent's card |
//!
//! Cards are public. An agent that is not exposed (or a missing default agent) gets
//! HTTP 404, as does any other path.
//!
//! # A JSON-RPC request, step by step
//!
//! 1. **Authentication** (headers only, before the body is read). An agent whose
//!    card lists `security` requirements needs credentials that meet one of them
//!    (see [`AuthConfig`]); otherwise HTTP 401 with a `WWW-Authenticate` challenge
//!    per acceptable scheme.
//! 2. **Content type.** The body must be `application/json` (parameters such as
//!    `charset` and `+json` types are fine); otherwise HTTP **415**. Code -32005
//!    is left to its A2A meaning (the message's media types do not suit the agent),
//!    which only the service can judge.
//! 3. **Body limit** ([`ServerConfig`], 1 MiB by default): a larger body gets HTTP
//!    413. A body that takes longer than the request timeout to arrive gets 408.
//! 4. **Decoding** with [`A2aCall::decode`](crate::jsonrpc::A2aCall::decode): a bad
//!    body gets HTTP 200 and the JSON-RPC error (-32700 parse error, -32600 invalid
//!    request, including "batch requests are not supported" for an array, -32601,
//!    -32602), with the request's id when it could be read and `null` otherwise.
//! 5. **Extensions.** `X-A2A-Extensions` is read (comma-separated URIs); those the
//!    card declares in `capabilities.extensions` are activated, the rest ignored.
//!    A card extension marked `required` that the request did not activate gets
//!    -32600 naming the URI. Every response echoes the activated URIs in
//!    `X-A2A-Extensions` (SSE responses too).
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
//!    ends the stream; the stream closes right after an event with `final: true`.
//!    A unary method answered with a stream, or the reverse, gets -32603. A client
//!    that disconnects drops the stream, which the service sees as a drop.
//!
//! Errors that are not JSON-RPC errors in the protocol's sense (404, 401, 408, 413,
//! 415) still carry a JSON-RPC error response as body (code -32600 and a message
//! naming the problem), so a JSON-RPC client can show it.
//!
//! Each JSON-RPC request runs in a tracing span `a2a.jsonrpc` with the fields
//! `agent`, `method` and `rpc_id`.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use axum::serve::ListenerExt as _;
use tokio_util::sync::CancellationToken;

use crate::service::A2aService;
#[cfg(doc)]
use crate::service::CallContext;

mod auth;
mod cards;
mod config;
mod extensions;
mod reply;
mod rpc;

pub use config::{AuthConfig, ServerConfig, ServerConfigBuilder};

/// The header that carries extension URIs: requested by the client, echoed
/// (activated) by the server.
pub const EXTENSIONS_HEADER: &str = "X-A2A-Extensions";

/// What every handler holds: the service and the config, both shared.
struct AppState<S> {
    service: Arc<S>,
    config: Arc<ServerConfig>,
}

impl<S> Clone for AppState<S> {
    fn clone(&self) -> Self {
        Self {
            service: Arc::clone(&self.service),
            config: Arc::clone(&self.config),
        }
    }
}

/// Tells open SSE streams that the server is shutting down, so they end and their
/// connections can close; [`serve`] adds it to every request.
#[derive(Clone, Debug)]
struct ShutdownSignal(CancellationToken);

/// The router serving `service`'s agents under `config`; see the [module
/// docs](self) for the routes and how a request is handled.
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
/// #     fn card(&self, _: &str) -> Option<AgentCard> { None }
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
    let state = AppState {
        service,
        config: Arc::new(config),
    };
    Router::new()
        .route("/", post(rpc::default_agent::<S>))
        .route(
            "/.well-known/agent-card.json",
            get(cards::default_card::<S>),
        )
        .route("/.well-known/agent.json", get(cards::default_card::<S>))
        .route("/agents", get(cards::list::<S>))
        .route("/agents/{name}", post(rpc::named_agent::<S>))
        .route(
            "/agents/{name}/.well-known/agent-card.json",
            get(cards::agent_card::<S>),
        )
        .route(
            "/agents/{name}/.well-known/agent.json",
            get(cards::agent_card::<S>),
        )
        .fallback(cards::no_route)
        .with_state(state)
}

/// Serves `router` on `listener` until `shutdown` completes, then shuts down
/// gracefully: it stops accepting connections, ends open SSE streams (a client sees
/// the stream close and can resubscribe later), lets unary calls in flight finish
/// (each is bounded by the request timeout), and returns once every connection has
/// closed. Accepted connections get `TCP_NODELAY`, so streamed events go out at once.
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
pub async fn serve<F>(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: F,
) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let token = CancellationToken::new();
    let router = router.layer(axum::Extension(ShutdownSignal(token.clone())));
    let signal = async move {
        shutdown.await;
        tracing::info!("shutting down: no new connections, closing streams");
        token.cancel();
    };
    axum::serve(no_delay(listener), router)
        .with_graceful_shutdown(signal)
        .await
}

/// The listener with `TCP_NODELAY` set on every accepted connection. Without it each
/// SSE event after the first waits for the client's delayed ACK (Nagle): a four-event
/// stream took 44 ms on loopback.
fn no_delay(
    listener: tokio::net::TcpListener,
) -> impl axum::serve::Listener<Io = tokio::net::TcpStream, Addr = std::net::SocketAddr> {
    listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
    })
}

#[cfg(test)]
mod tests;
