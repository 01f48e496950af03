//! The gRPC server: A2A 1.0 (`lf.a2a.v1.A2AService`) and 0.3.0
//! (`a2a.v1.A2AService`) on one listener, for the agents an [`A2aService`] exposes.
//!
//! [`routes`] builds both tonic services around any [`A2aService`] and a
//! [`ServerConfig`] (the HTTP server's); [`serve`] runs them on a listener until a
//! shutdown signal. The two services have different packages, so they coexist on
//! one port; each call is decoded into the same [`A2aRequest`] the JSON-RPC server
//! builds and goes through [`A2aService::call`], so policy, limits, events,
//! idempotency and isolation are the same whichever door a request used.
//!
//! # A call, step by step
//!
//! 1. **Which agent.** A 1.0 request's `tenant` names the exposed agent; when it is
//!    empty (and always on 0.3, whose requests have no tenant) the
//!    [`AGENT_METADATA`] metadata (`a2a-agent`) may name one, and otherwise the
//!    call goes to the server's default agent. An agent that is not exposed, or no
//!    default agent: NOT_FOUND.
//! 2. **Version.** The service called says which version the client speaks. The
//!    `a2a-version` metadata may confirm it (only major.minor counts); missing or
//!    empty is fine. Naming the other version, or one not served (`99.0`), gets
//!    FAILED_PRECONDITION with an `ErrorInfo` of reason `VERSION_NOT_SUPPORTED`.
//! 3. **Authentication**, from the metadata exactly as from HTTP headers
//!    (`authorization: Bearer …`, or the API key header the card names): a caller
//!    that meets none of the card's requirements gets UNAUTHENTICATED, with a
//!    `www-authenticate` entry per acceptable scheme. `GetAgentCard` (0.3) is
//!    public, as the card's URL is.
//! 4. **The request** is converted to the internal model ([`crate::proto`]); a
//!    field that has no internal form gets INVALID_ARGUMENT naming it, with a
//!    `BadRequest` field violation.
//! 5. **Extensions.** `a2a-extensions` (1.0; 0.3 also reads `x-a2a-extensions`)
//!    lists the URIs the client activates; those the card declares are activated
//!    and echoed in the response metadata (and an error's), under the spelling the
//!    request used. A required one not activated: FAILED_PRECONDITION,
//!    `EXTENSION_SUPPORT_REQUIRED`. `idempotency-key`, `traceparent` and
//!    `last-event-id` are read as their HTTP headers are.
//! 6. **Capabilities.** The streaming RPCs need `streaming` in the card, the
//!    push-config RPCs `pushNotifications` (UNIMPLEMENTED otherwise, as the shared
//!    table maps -32004 and -32003).
//! 7. **The call**, within [`ServerConfig::max_calls`] (the rest wait) and, for a
//!    unary call or the start of a stream, [`ServerConfig::request_timeout`]
//!    (INTERNAL naming the limit; a client's own `grpc-timeout` is honoured too).
//!    `GetExtendedAgentCard` (1.0) is answered by the server, as on JSON-RPC:
//!    UNAUTHENTICATED without a principal, FAILED_PRECONDITION when the agent has
//!    no extended card.
//! 8. **The answer.** Errors are a `tonic::Status` whose code is the shared
//!    mapping's ([`binding_status`](crate::a2a::v1::binding_status)), its message
//!    the error's, and its `google.rpc.Status` details an `ErrorInfo` (see
//!    `grpc/status.rs`). Streams (`SendStreamingMessage`, `SubscribeToTask`, 0.3
//!    `TaskSubscription`) send `StreamResponse`s and end as the SSE streams do:
//!    after a status update marked final, on 1.0 also after a task in a terminal
//!    or interrupted state; an error from the service ends the stream with its
//!    status.
//!
//! Requests and responses are at most [`ServerConfig::body_limit`] bytes
//! (RESOURCE_EXHAUSTED past it). On shutdown the listener stops accepting, open
//! streams end (a client can subscribe again later), and unary calls in flight
//! finish.
//!
//! Each call logs one line at info (`grpc request`, with `agent`, `rpc_method`,
//! `version`, `grpc_status` and `duration_ms`).

mod door;
mod gate;
pub(crate) mod status;
mod v0_3;
mod v1;

use std::future::Future;
use std::sync::Arc;

use futures::{Stream, StreamExt as _};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tonic::transport::server::TcpIncoming;

pub use gate::AGENT_METADATA;

use crate::server::ServerConfig;
use crate::service::A2aService;
#[cfg(doc)]
use crate::{jsonrpc::A2aRequest, service::A2aService as _};

/// Why serving gRPC ended (the listener failed).
pub type ServeError = tonic::transport::Error;

/// Both A2A services over `service`, limited by `config`; streams end when
/// `shutdown` is cancelled. Add them to a tonic server (what [`serve`] does), or
/// serve them beside other services.
pub fn routes<S: A2aService>(
    service: Arc<S>,
    config: &ServerConfig,
    shutdown: CancellationToken,
) -> tonic::service::Routes {
    let shared = gate::Shared {
        service,
        permits: config.max_calls().map(|n| Arc::new(Semaphore::new(n))),
        config: Arc::new(config.clone()),
        shutdown,
    };
    let limit = config.body_limit();
    let v1 = crate::proto::v1::pb::a2a_service_server::A2aServiceServer::new(v1::V1::new(
        shared.clone(),
    ))
    .max_decoding_message_size(limit)
    .max_encoding_message_size(limit);
    let v0_3 =
        crate::proto::v0_3::pb::a2a_service_server::A2aServiceServer::new(v0_3::V0_3::new(shared))
            .max_decoding_message_size(limit)
            .max_encoding_message_size(limit);
    tonic::service::Routes::new(v1).add_service(v0_3)
}

/// Serves both A2A services over `service` on `listener` until `shutdown`
/// completes, then shuts down gracefully: no new connections, open streams end,
/// unary calls in flight finish. Connections get `TCP_NODELAY` (streamed events
/// go out at once) and HTTP/2 keep-alive pings at the SSE keep-alive interval, so
/// a dead peer's stream is noticed.
///
/// # Errors
///
/// A transport error that ends serving (the listener failing).
pub async fn serve<S, F>(
    listener: tokio::net::TcpListener,
    service: Arc<S>,
    config: &ServerConfig,
    shutdown: F,
) -> Result<(), ServeError>
where
    S: A2aService,
    F: Future<Output = ()> + Send + 'static,
{
    let token = CancellationToken::new();
    let stop = token.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = shutdown => {
                tracing::info!("gRPC: shutting down: no new connections, closing streams");
                stop.cancel();
            }
            () = stop.cancelled() => {}
        }
    });
    let routes = routes(service, config, token.clone());
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    let result = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(config.sse_keep_alive()))
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, token.clone().cancelled_owned())
        .await;
    token.cancel();
    result
}

/// `items`, ending right after the first `Err` (a gRPC stream's final status).
fn end_after_error<T, E>(
    items: impl Stream<Item = Result<T, E>> + Send + 'static,
) -> impl Stream<Item = Result<T, E>> + Send + 'static
where
    T: Send + 'static,
    E: Send + 'static,
{
    futures::stream::unfold(Some(Box::pin(items)), |items| async move {
        let mut items = items?;
        let item = items.next().await?;
        let more = item.is_ok();
        Some((item, more.then_some(items)))
    })
}

#[cfg(test)]
mod tests;
