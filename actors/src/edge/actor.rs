//! [`EdgeActor`]: the actor that owns the HTTP server, and [`Edge`], its handle.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agentyard_transport::a2a::TransportProtocol;
use agentyard_transport::grpc;
use agentyard_transport::server::{self, ServerConfig};
use axum::Router;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SpawnErr};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::EdgeError;
use super::card;
use super::config::{EdgeAuth, EdgeConfig};
use super::observe::{self, Observe};
use super::push::PushNotifier;
use super::service::SupervisorService;
use crate::supervisor::Supervisor;

/// The edge actor: binds the listening socket when it starts, serves the A2A router
/// in a task of its own, and shuts the server down gracefully when it stops (open
/// streams are ended, requests in flight get [`EdgeConfig::shutdown_grace`] to
/// finish, then connections are cut), stopping the push notifier with it.
///
/// Start it with [`Edge::start`], which returns the handle with the bound address.
#[derive(Debug, Clone, Copy, Default)]
pub struct EdgeActor;

/// What the edge actor starts from.
#[derive(Debug)]
pub struct EdgeArgs {
    /// The supervisor every call goes through.
    pub supervisor: Supervisor,
    /// The edge's settings.
    pub config: EdgeConfig,
}

/// What the edge actor holds while it runs.
#[derive(Debug)]
pub struct EdgeState {
    info: EdgeInfo,
    shutdown: CancellationToken,
    server: Option<JoinHandle<std::io::Result<()>>>,
    push: Option<PushNotifier>,
    grace: Duration,
    /// The listener of `/metrics` when it has an address of its own.
    metrics_server: Option<JoinHandle<std::io::Result<()>>>,
    /// The gRPC server, when [`EdgeConfig::grpc_bind`] is set.
    grpc_server: Option<JoinHandle<Result<(), grpc::ServeError>>>,
}

/// Facts about a running edge.
#[derive(Debug, Clone)]
pub struct EdgeInfo {
    /// The address the server is bound to.
    pub local_addr: SocketAddr,
    /// The base URL of every card (the public URL, or `http://{local_addr}`; bound to
    /// an unspecified address, cards use the `Host` each client sent instead).
    pub base_url: String,
    /// The service answering the calls.
    pub service: SupervisorService,
    /// Where `/metrics` is served when it has a listener of its own
    /// ([`EdgeConfig::metrics_bind`]).
    pub metrics_addr: Option<SocketAddr>,
    /// Where gRPC is served ([`EdgeConfig::grpc_bind`]), with the real port.
    pub grpc_addr: Option<SocketAddr>,
}

/// The edge actor's messages.
#[derive(Debug)]
#[non_exhaustive]
pub enum EdgeMsg {
    /// Asks for the running edge's facts.
    Info(RpcReplyPort<EdgeInfo>),
    /// The server task ended on its own (a listener error); the actor stops.
    ServerExited(String),
}

impl Actor for EdgeActor {
    type Msg = EdgeMsg;
    type State = EdgeState;
    type Arguments = EdgeArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: EdgeArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let EdgeArgs { supervisor, config } = args;
        checked_bindings(&config.bindings)?;
        let base_url = match &config.public_url {
            Some(url) => checked_public_url(url)?,
            None => String::new(),
        };
        let listener = TcpListener::bind(config.bind)
            .await
            .map_err(|source| EdgeError::Bind {
                addr: config.bind,
                source,
            })?;
        let local_addr = listener.local_addr().map_err(|source| EdgeError::Bind {
            addr: config.bind,
            source,
        })?;
        let base_url = if base_url.is_empty() {
            format!("http://{local_addr}")
        } else {
            base_url
        };
        // Bound before anything starts, so that an address in use fails the start
        // with nothing to undo, and the cards can name the real port.
        // gRPC is served when it has an address and `bindings` lists it.
        let grpc_bind = config
            .grpc_bind
            .filter(|_| config.bindings.contains(&TransportProtocol::Grpc));
        let grpc_listener = match grpc_bind {
            Some(addr) => {
                let listener = TcpListener::bind(addr)
                    .await
                    .map_err(|source| EdgeError::Bind { addr, source })?;
                let bound = listener
                    .local_addr()
                    .map_err(|source| EdgeError::Bind { addr, source })?;
                Some((listener, bound))
            }
            None => None,
        };
        let grpc_addr = grpc_listener.as_ref().map(|(_, bound)| *bound);
        let push = if config.push.enabled {
            Some(PushNotifier::start(
                supervisor.clone(),
                config.push.clone(),
            )?)
        } else {
            None
        };
        let observed = supervisor.clone();
        let service = match SupervisorService::with_grpc(
            supervisor,
            &config,
            &base_url,
            push.clone(),
            grpc_addr,
        ) {
            Ok(service) => service,
            Err(error) => {
                if let Some(push) = &push {
                    push.shutdown().await;
                }
                return Err(error.into());
            }
        };
        let shutdown = CancellationToken::new();
        let observe = Observe {
            supervisor: observed,
            auth: config.auth.clone(),
            keep_alive: config.sse_keep_alive,
            shutdown: shutdown.clone(),
        };
        let metrics = config
            .metrics
            .then(|| observe.supervisor.metrics().cloned())
            .flatten();
        // Every answer (the A2A routes' and those beside them) is counted by the
        // layer that logs it.
        let server_config = server_config(
            &config,
            metrics
                .as_ref()
                .map(|metrics| observe::count_answers(Arc::clone(metrics))),
        );
        let mut beside = Router::new();
        if let Some(extra) = config.extra_routes.clone() {
            beside = beside.merge(extra);
        }
        let metrics_listener = match (&metrics, config.metrics_bind) {
            (Some(_), Some(addr)) => match TcpListener::bind(addr).await {
                Ok(listener) => Some(listener),
                Err(source) => {
                    if let Some(push) = &push {
                        push.shutdown().await;
                    }
                    return Err(EdgeError::Bind { addr, source }.into());
                }
            },
            _ => None,
        };
        beside = beside.merge(observe::routes(
            observe.clone(),
            metrics.is_some() && metrics_listener.is_none(),
        ));
        let app = server::app_beside(Arc::new(service.clone()), server_config.clone(), beside);
        let (metrics_addr, metrics_server) = match metrics_listener {
            Some(listener) => {
                // A bound listener knows its address; `bind` is the fallback for the log.
                let addr = listener
                    .local_addr()
                    .unwrap_or_else(|_| config.metrics_bind.unwrap_or(config.bind));
                let routes = observe::metrics_only(observe);
                let config = server_config.clone();
                let signal = shutdown.clone().cancelled_owned();
                tracing::info!(%addr, "metrics listening");
                let task = tokio::spawn(async move {
                    server::serve_with(listener, routes, &config, signal).await
                });
                (Some(addr), Some(task))
            }
            None => (None, None),
        };
        let grpc_server = grpc_listener.map(|(listener, addr)| {
            let service = Arc::new(service.clone());
            let config = server_config.clone();
            let signal = shutdown.clone().cancelled_owned();
            let myself = myself.clone();
            tracing::info!(%addr, "gRPC listening (lf.a2a.v1.A2AService, a2a.v1.A2AService)");
            tokio::spawn(async move {
                let result = grpc::serve(listener, service, &config, signal).await;
                if let Err(error) = &result {
                    let _ = myself.cast(EdgeMsg::ServerExited(format!("gRPC: {error}")));
                }
                result
            })
        });
        let signal = shutdown.clone().cancelled_owned();
        let server = tokio::spawn(async move {
            let result = server::serve_with(listener, app, &server_config, signal).await;
            if let Err(error) = &result {
                let _ = myself.cast(EdgeMsg::ServerExited(error.to_string()));
            }
            result
        });
        tracing::info!(%local_addr, %base_url, agents = ?service_agents(&service), "HTTP edge listening");
        if config.public_url.is_none() && local_addr.ip().is_unspecified() {
            // No client can reach `0.0.0.0`: cards name the `Host` each client used.
            tracing::info!(
                "bound to an unspecified address without `public_url`: cards advertise the \
                 Host each client connects to; set `public_url` behind a proxy"
            );
        }
        Ok(EdgeState {
            info: EdgeInfo {
                local_addr,
                base_url,
                service,
                metrics_addr,
                grpc_addr,
            },
            shutdown,
            server: Some(server),
            push,
            grace: config.shutdown_grace,
            metrics_server,
            grpc_server,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            EdgeMsg::Info(reply) => {
                let _ = reply.send(state.info.clone());
            }
            EdgeMsg::ServerExited(error) => {
                tracing::error!(%error, "the HTTP server stopped on its own; stopping the edge");
                myself.stop(Some(format!("server exited: {error}")));
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.shutdown.cancel();
        if let Some(mut server) = state.server.take() {
            match tokio::time::timeout(state.grace, &mut server).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(error))) => tracing::warn!(%error, "the HTTP server ended with an error"),
                Ok(Err(error)) => tracing::warn!(%error, "the HTTP server task failed"),
                Err(_) => {
                    tracing::warn!(grace = ?state.grace, "connections still open after the grace period; closing them");
                    server.abort();
                }
            }
        }
        if let Some(mut grpc) = state.grpc_server.take() {
            // Its streams ended with the signal; unary calls in flight get the grace.
            match tokio::time::timeout(state.grace, &mut grpc).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(error))) => tracing::warn!(%error, "the gRPC server ended with an error"),
                Ok(Err(error)) => tracing::warn!(%error, "the gRPC server task failed"),
                Err(_) => {
                    tracing::warn!(grace = ?state.grace, "gRPC calls still running after the grace period; closing them");
                    grpc.abort();
                }
            }
        }
        if let Some(metrics) = state.metrics_server.take() {
            // Scrapes are short; one still running after the grace is cut.
            if tokio::time::timeout(state.grace, metrics).await.is_err() {
                tracing::warn!("a scrape was still running after the grace period");
            }
        }
        if let Some(push) = state.push.take() {
            push.shutdown().await;
        }
        tracing::info!(local_addr = %state.info.local_addr, "HTTP edge stopped");
        Ok(())
    }
}

fn service_agents(service: &SupervisorService) -> Vec<String> {
    use agentyard_transport::service::A2aService as _;
    service.agents()
}

/// The public URL without a trailing slash, if it is an absolute http(s) URL.
/// The bindings must name only bindings A2A defines, and one of the two the edge's
/// HTTP listener serves: a card needs an interface to name as its `url`.
fn checked_bindings(bindings: &[TransportProtocol]) -> Result<(), EdgeError> {
    if let Some(TransportProtocol::Other(name)) = bindings
        .iter()
        .find(|binding| matches!(binding, TransportProtocol::Other(_)))
    {
        return Err(EdgeError::Bindings(format!(
            "names `{name}`, which is not an A2A binding (JSONRPC, HTTP+JSON, GRPC)"
        )));
    }
    if !bindings.iter().any(|binding| {
        matches!(
            binding,
            TransportProtocol::JsonRpc | TransportProtocol::HttpJson
        )
    }) {
        return Err(EdgeError::Bindings(
            "must turn on JSONRPC or HTTP+JSON: the agents' cards and HTTP endpoints need one"
                .to_owned(),
        ));
    }
    Ok(())
}

fn checked_public_url(url: &str) -> Result<String, EdgeError> {
    let parsed = reqwest::Url::parse(url).map_err(|_| EdgeError::PublicUrl {
        url: url.to_owned(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(EdgeError::PublicUrl {
            url: url.to_owned(),
        });
    }
    Ok(url.trim_end_matches('/').to_owned())
}

/// The server's settings from the edge's: limits, timeouts, and the credentials the
/// cards declare, under the same scheme names.
fn server_config(config: &EdgeConfig, on_answer: Option<server::OnAnswer>) -> ServerConfig {
    let mut auth = server::AuthConfig::new();
    for (key, principal) in &config.auth.api_keys {
        auth = auth.api_key(EdgeAuth::API_KEY_SCHEME, key, principal);
    }
    for (token, principal) in &config.auth.bearer_tokens {
        auth = auth.bearer_token(EdgeAuth::BEARER_SCHEME, token, principal);
    }
    let builder = ServerConfig::builder()
        .body_limit(config.body_limit)
        .request_timeout(config.request_timeout)
        .sse_keep_alive(config.sse_keep_alive)
        .header_read_timeout(config.header_read_timeout)
        .idle_timeout(config.idle_timeout)
        .max_connections(config.max_connections)
        .auth(auth)
        .bindings(config.bindings.iter().cloned());
    match on_answer {
        Some(on_answer) => builder.on_answer(on_answer).build(),
        None => builder.build(),
    }
}

/// A running HTTP edge: its actor and where it listens.
///
/// ```no_run
/// # async fn run(supervisor: agentyard_actors::Supervisor) -> Result<(), agentyard_actors::edge::EdgeError> {
/// use agentyard_actors::edge::{Edge, EdgeConfig};
///
/// let edge = Edge::start(supervisor, EdgeConfig::default()).await?;
/// println!("echo's card: {}", edge.card_url("echo"));
/// edge.stop().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Edge {
    actor: ActorRef<EdgeMsg>,
    info: EdgeInfo,
}

impl Edge {
    /// Starts the edge actor: binds `config.bind`, checks the configuration, starts the
    /// push notifier (when enabled) and serves.
    ///
    /// # Errors
    /// [`EdgeError::Bind`] if the address cannot be bound; [`EdgeError::UnknownAgent`],
    /// [`EdgeError::NotExposed`] or [`EdgeError::PublicUrl`] for a configuration that
    /// cannot work (naming the key); [`EdgeError::PushClient`];
    /// [`EdgeError::Start`] if the actor cannot start for another reason.
    pub async fn start(supervisor: Supervisor, config: EdgeConfig) -> Result<Self, EdgeError> {
        let (actor, _) = Actor::spawn(None, EdgeActor, EdgeArgs { supervisor, config })
            .await
            .map_err(|error| match error {
                SpawnErr::StartupFailed(cause) => match cause.downcast::<EdgeError>() {
                    Ok(edge) => *edge,
                    Err(other) => EdgeError::Start(other.to_string()),
                },
                other => EdgeError::Start(other.to_string()),
            })?;
        let info = match actor.call(EdgeMsg::Info, None).await {
            Ok(ractor::rpc::CallResult::Success(info)) => info,
            Ok(other) => {
                actor.stop(None);
                return Err(EdgeError::Start(format!(
                    "the edge actor did not answer: {other:?}"
                )));
            }
            Err(error) => {
                actor.stop(None);
                return Err(EdgeError::Start(error.to_string()));
            }
        };
        Ok(Self { actor, info })
    }

    /// The address the server is bound to (with the real port when `bind` asked for
    /// port 0).
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.info.local_addr
    }

    /// Where gRPC is served, with the real port ([`EdgeConfig::grpc_bind`]; `None`
    /// when it is off).
    #[must_use]
    pub fn grpc_addr(&self) -> Option<SocketAddr> {
        self.info.grpc_addr
    }

    /// The base URL of every card, without a trailing slash (bound to `0.0.0.0` or
    /// `::` without a public URL, cards use the `Host` each client sent instead).
    #[must_use]
    pub fn base_url(&self) -> &str {
        &self.info.base_url
    }

    /// The JSON-RPC endpoint of an agent (its card's `url`).
    #[must_use]
    pub fn agent_url(&self, agent: &str) -> String {
        card::agent_url(&self.info.base_url, agent)
    }

    /// Where an agent's card is served.
    #[must_use]
    pub fn card_url(&self, agent: &str) -> String {
        format!("{}/.well-known/agent-card.json", self.agent_url(agent))
    }

    /// Where `/metrics` is served when it has a listener of its own
    /// ([`EdgeConfig::metrics_bind`]).
    #[must_use]
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.info.metrics_addr
    }

    /// The service answering the calls (cards, push notifier).
    #[must_use]
    pub fn service(&self) -> &SupervisorService {
        &self.info.service
    }

    /// The edge actor.
    #[must_use]
    pub fn actor(&self) -> &ActorRef<EdgeMsg> {
        &self.actor
    }

    /// Stops the edge gracefully and returns when it has stopped: the server no longer
    /// listens, and the push notifier has stopped. Tasks started through the edge run
    /// on in the runtime.
    pub async fn stop(self) {
        // An error means the actor had already stopped, which is what was asked.
        let _ = self
            .actor
            .stop_and_wait(Some("edge stopped".to_owned()), None)
            .await;
    }
}
