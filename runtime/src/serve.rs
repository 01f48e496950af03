//! `agentyard serve`: the runtime with the built-in agents behind the HTTP edge.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use agentyard_actors::edge::{AgentSettings, Edge, EdgeAuth, EdgeConfig, EdgeError, PushConfig};

use crate::config::{Config, ConfigError};
use crate::{Runtime, builtin};

/// How long running tasks get to finish when the server stops.
const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(10);

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The configuration is unusable; the message names the key.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The runtime could not start.
    #[error("the runtime could not start")]
    Runtime(#[source] agentyard_actors::Error),
    /// The HTTP edge could not start (e.g. the address is in use).
    #[error("the HTTP edge could not start")]
    Edge(#[source] EdgeError),
}

/// A running server: the runtime and its HTTP edge.
#[derive(Debug)]
pub struct Server {
    runtime: Runtime,
    edge: Edge,
    exposed: Vec<String>,
    default_agent: Option<String>,
}

impl Server {
    /// Reads the config file (or takes the embedded default when `path` is `None`),
    /// applies `bind` over it, and starts the runtime and the edge.
    ///
    /// # Errors
    /// [`ServeError::Config`] naming the bad key, or a start failure.
    pub async fn start(path: Option<&Path>, bind: Option<SocketAddr>) -> Result<Self, ServeError> {
        let mut config = match path {
            Some(path) => Config::from_path(path)?,
            None => Config::default(),
        };
        if let Some(bind) = bind {
            config.server.bind = bind;
        }
        Self::from_config(config).await
    }

    /// Starts the runtime and the edge as `config` says.
    ///
    /// # Errors
    /// [`ServeError::Config`] naming the bad key, or a start failure.
    pub async fn from_config(config: Config) -> Result<Self, ServeError> {
        config.check()?;
        let policy = config
            .policy
            .clone()
            .build()
            .map_err(|e| ConfigError::Invalid {
                key: String::from("policy"),
                problem: e.to_string(),
            })?;
        let builder = Runtime::builder()
            .config(config.supervisor_config())
            .store(config.task_store())
            .policy(policy);
        let runtime = builtin::register(builder, &config.agents.exposed)
            .build()
            .await
            .map_err(ServeError::Runtime)?;
        config.check_agents(|name| runtime.supervisor().agent(name).is_some())?;

        let edge = Edge::start(runtime.supervisor().clone(), edge_config(&config))
            .await
            .map_err(ServeError::Edge)?;
        Ok(Self {
            runtime,
            edge,
            exposed: config.agents.exposed,
            default_agent: config.agents.default,
        })
    }

    /// The address the server listens on.
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.edge.local_addr()
    }

    /// The card URL of every exposed agent, the default agent's root card first.
    #[must_use]
    pub fn card_urls(&self) -> Vec<(String, String)> {
        let mut urls = Vec::new();
        if let Some(default) = &self.default_agent {
            urls.push((
                format!("{default} (default)"),
                format!("{}/.well-known/agent-card.json", self.edge.base_url()),
            ));
        }
        for name in &self.exposed {
            urls.push((name.clone(), self.edge.card_url(name)));
        }
        urls
    }

    /// The runtime behind the server.
    #[must_use]
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Stops the edge (open streams end), then shuts the runtime down gracefully.
    pub async fn stop(self) {
        self.edge.stop().await;
        self.runtime.shutdown(SHUTDOWN_DEADLINE).await;
    }
}

/// The edge settings the config file describes.
fn edge_config(config: &Config) -> EdgeConfig {
    let mut auth = EdgeAuth::default().api_key_header(config.auth.api_key_header.clone());
    for key in &config.auth.api_keys {
        auth = auth.api_key(key.key.clone(), key.name.clone());
    }
    for token in &config.auth.bearer_tokens {
        auth = auth.bearer_token(token.token.clone(), token.name.clone());
    }
    let mut push = if config.push.enabled {
        PushConfig::default()
    } else {
        PushConfig::disabled()
    };
    push.allow_loopback = config.push.allow_private_addresses;
    push.allow_private_networks = config.push.allow_private_addresses;

    let mut edge = EdgeConfig::default()
        .bind(config.server.bind)
        .agents(config.agents.exposed.iter().cloned())
        .auth(auth)
        .body_limit(config.server.body_limit)
        .request_timeout(Duration::from_secs(config.server.request_timeout_secs))
        .header_read_timeout(Duration::from_secs(config.server.header_read_timeout_secs))
        .idle_timeout(Duration::from_secs(config.server.idle_timeout_secs))
        .max_connections(config.server.max_connections)
        .push(push)
        // The echo agent answers with a plain Message, as simple A2A clients expect.
        .agent_settings("echo", AgentSettings::default().answer_with_message(true));
    if let Some(url) = &config.server.public_url {
        edge = edge.public_url(url.clone());
    }
    if let Some(default) = &config.agents.default {
        edge = edge.default_agent(default.clone());
    }
    edge
}
