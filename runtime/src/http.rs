//! Serving a runtime's agents over HTTP: [`Runtime::serve`] with an [`HttpConfig`],
//! and the [`HttpServer`] handle it returns.
//!
//! The server is the HTTP edge of `agentyard-actors` ([`crate::edge`]): A2A (JSON-RPC
//! and SSE, versions 1.0 and 0.3.0) for the agents whose descriptor is
//! [`exposed`](crate::AgentDescriptor::exposed), plus the operator routes
//! `GET /metrics` (Prometheus text) and `GET /events` (the runtime's events as SSE),
//! behind the same credentials ([`EdgeAuth`](crate::edge::EdgeAuth)). Any A2A client
//! reaches the agents; [`crate::client::A2aClient`] is the typed one.
//!
//! ```no_run
//! use agentyard::{AgentDescriptor, HttpConfig, Message, Runtime};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let runtime = Runtime::builder()
//!     .agent_fn(AgentDescriptor::new("mine").expose(), |message: Message| async move {
//!         Ok(format!("you said: {}", message.text()))
//!     })
//!     .build()
//!     .await?;
//! let server = runtime.serve(HttpConfig::default().agents(["mine"])).await?;
//! println!("card: {}", server.card_url("mine"));
//! server.stop().await;
//! # Ok(())
//! # }
//! ```

use std::net::SocketAddr;

use agentyard_actors::edge::{Edge, EdgeError};

use crate::Runtime;

/// How [`Runtime::serve`] serves: where to listen, which agents, credentials, limits,
/// push notifications, metrics. It is the edge's own configuration
/// ([`crate::edge::EdgeConfig`]) under the name a library user looks for; its table of
/// defaults is there. The default listens on `127.0.0.1` at an ephemeral port and
/// serves every exposed agent without credentials.
pub type HttpConfig = agentyard_actors::edge::EdgeConfig;

/// A runtime's agents being served over HTTP. Stop it with [`HttpServer::stop`]
/// before shutting the runtime down; dropping it leaves the server running until the
/// runtime's process ends.
#[derive(Debug, Clone)]
pub struct HttpServer {
    edge: Edge,
}

impl HttpServer {
    /// The address the server listens on (with the real port when the config asked for
    /// port 0).
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.edge.local_addr()
    }

    /// Where A2A over gRPC is served ([`HttpConfig::grpc_bind`]), with the real port
    /// when the config asked for port 0; `None` when gRPC is off (the default for a
    /// library user; `agentyard serve` turns it on).
    #[must_use]
    pub fn grpc_addr(&self) -> Option<SocketAddr> {
        self.edge.grpc_addr()
    }

    /// The base URL of the server, without a trailing slash (the configured public URL,
    /// or `http://{local_addr}`).
    #[must_use]
    pub fn base_url(&self) -> &str {
        self.edge.base_url()
    }

    /// The A2A endpoint of an agent (its card's `url`).
    #[must_use]
    pub fn agent_url(&self, agent: &str) -> String {
        self.edge.agent_url(agent)
    }

    /// Where an agent's card is served; what [`crate::client::A2aClient::connect`]
    /// takes.
    #[must_use]
    pub fn card_url(&self, agent: &str) -> String {
        self.edge.card_url(agent)
    }

    /// Where `/metrics` is served: on a listener of its own when
    /// [`HttpConfig::metrics_bind`] is set, else on the server's address.
    #[must_use]
    pub fn metrics_url(&self) -> String {
        match self.edge.metrics_addr() {
            Some(addr) => format!("http://{addr}/metrics"),
            None => format!("{}/metrics", self.edge.base_url()),
        }
    }

    /// The edge underneath, for what this handle does not wrap (its service, its
    /// actor).
    #[must_use]
    pub fn edge(&self) -> &Edge {
        &self.edge
    }

    /// Stops serving and returns once the server has stopped: open streams end,
    /// requests in flight get the configured grace period. Tasks started over HTTP run
    /// on in the runtime.
    pub async fn stop(self) {
        self.edge.stop().await;
    }
}

impl Runtime {
    /// Serves this runtime's exposed agents over HTTP as `config` says, and returns
    /// once the server listens.
    ///
    /// # Errors
    /// [`EdgeError::Bind`] when an address cannot be bound; [`EdgeError::UnknownAgent`]
    /// or [`EdgeError::NotExposed`] when `config` names an agent that is not
    /// registered or whose descriptor is not exposed; the rest of [`Edge::start`]'s.
    pub async fn serve(&self, config: HttpConfig) -> Result<HttpServer, EdgeError> {
        let edge = Edge::start(self.supervisor().clone(), config).await?;
        Ok(HttpServer { edge })
    }
}
