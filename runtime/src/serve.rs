//! `agentyard serve`: the runtime with the built-in agents behind the HTTP edge.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentyard_actors::edge::{AgentSettings, Edge, EdgeAuth, EdgeConfig, EdgeError, PushConfig};
use agentyard_actors::store::{StoreError, TaskStore};
use std::sync::Arc;

use agentyard_workflow::Workflows;

use crate::config::{Config, ConfigError, StoreKind};
use crate::{Runtime, builtin};

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
    /// The task store could not be opened or read (the message says where).
    #[error("the task store could not be opened")]
    Store(#[source] StoreError),
}

/// A running server: the runtime and its HTTP edge.
#[derive(Debug)]
pub struct Server {
    runtime: Runtime,
    edge: Edge,
    config: Config,
    config_file: Option<PathBuf>,
    workflows: Workflows,
    /// The workflows loaded from `[workflows] files`, registered as agents.
    workflow_names: Vec<String>,
    store: Arc<dyn TaskStore>,
    recovered: agentyard_store::restart::Recovered,
    /// Drops ended tasks past `store.max_age_secs`, every minute.
    sweeper: Option<tokio::task::JoinHandle<()>>,
}

/// What a stop waits for, as the first stop signal reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Load {
    /// Accepted turns not yet finished: handlers running now and sends queued behind them.
    pub running_tasks: usize,
    /// Streams following a task that has not ended.
    pub open_streams: usize,
}

impl Server {
    /// Reads the config file (or takes the embedded default when `path` is `None`),
    /// applies `bind` over it, and starts the runtime and the edge.
    ///
    /// # Errors
    /// [`ServeError::Config`] naming the file and the bad key, or a start failure.
    pub async fn start(path: Option<&Path>, bind: Option<SocketAddr>) -> Result<Self, ServeError> {
        Self::start_in(path, bind, None).await
    }

    /// As [`Server::start`], with `data_dir` (the `--data-dir` option) over the config
    /// file's `store.path`.
    ///
    /// # Errors
    /// As [`Server::start`].
    pub async fn start_in(
        path: Option<&Path>,
        bind: Option<SocketAddr>,
        data_dir: Option<&Path>,
    ) -> Result<Self, ServeError> {
        let mut config = match path {
            Some(path) => Config::from_path(path)?,
            None => Config::default(),
        };
        if let Some(bind) = bind {
            config.server.bind = bind;
        }
        if let Some(dir) = data_dir {
            config.store.path = dir.to_path_buf();
        }
        let mut server = Self::from_config(config)
            .await
            .map_err(|error| match (error, path) {
                (ServeError::Config(error), Some(path)) => ServeError::Config(error.in_file(path)),
                (error, _) => error,
            })?;
        server.config_file = path.map(Path::to_path_buf);
        Ok(server)
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
        let store = config.open_store().await.map_err(ServeError::Store)?;
        let sweeper = config.retention().max_age.map(|age| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let mut every = tokio::time::interval(Duration::from_secs(60));
                loop {
                    every.tick().await;
                    // `Config::check` bounds the age; a cutoff before the clock's
                    // start would have nothing older than it anyway.
                    let Some(cutoff) = std::time::SystemTime::now().checked_sub(age) else {
                        continue;
                    };
                    if let Err(error) = store.drop_ended_before(cutoff).await {
                        tracing::warn!(%error, "dropping old ended tasks failed; trying again later");
                    }
                }
            })
        });
        let builder = Runtime::builder()
            .config(config.supervisor_config())
            .shared_store(Arc::clone(&store))
            .policy(policy);
        // Definitions put through the API are records of the task store: the embedded
        // store keeps them across restarts, PostgreSQL shares them between servers.
        let definitions = Arc::new(agentyard_workflow::StoredDefinitions::new(Arc::clone(
            &store,
        )));
        let workflows = Workflows::with_store(
            agentyard_workflow::Tools::builtin(),
            Arc::clone(&definitions) as Arc<dyn agentyard_workflow::DefinitionStore>,
        )
        .concurrency(config.workflows.concurrency);
        let mut specs = crate::workflows::read_specs(&config.workflows.paths(), "workflows.files")?;
        let mut builder = builtin::register(builder, &config.agents.exposed);
        for remote in &config.remote {
            let options = remote.options(|variable| std::env::var(variable).ok())?;
            builder = builder.remote_with(remote.name.clone(), options);
        }
        let remote_names: Vec<String> = config.remote.iter().map(|r| r.name.clone()).collect();
        // The workflows put through the API before this start are agents again; a file
        // of the same name wins.
        specs.extend(
            crate::workflows::stored_specs(&*definitions, &specs, |name| {
                crate::workflows::is_builtin(name) || remote_names.iter().any(|r| r == name)
            })
            .await,
        );
        let workflow_names: Vec<String> = specs.iter().map(|spec| spec.name.clone()).collect();
        let builder = crate::workflows::register(
            builder,
            &workflows,
            specs,
            config.workflows.exposed,
            |name| crate::workflows::is_builtin(name) || remote_names.iter().any(|r| r == name),
        )
        .await?;
        let runtime = builder.build().await.map_err(ServeError::Runtime)?;
        config.check_agents(|name| runtime.supervisor().agent(name).is_some())?;
        // Before the edge takes sends: what was running when the process stopped ends
        // `failed` (or runs again, for agents that opted in). Only for the embedded
        // and journal stores, which this process alone uses (their directory is
        // locked): on a
        // PostgreSQL store shared by several servers, a running task may be another
        // server's.
        let recovered = if matches!(
            config.store.effective_kind(),
            StoreKind::Embedded | StoreKind::Journal
        ) {
            runtime.recover(&*store).await.map_err(ServeError::Store)?
        } else {
            agentyard_store::restart::Recovered::default()
        };
        if recovered.failed > 0 || !recovered.rerun.is_empty() {
            tracing::warn!(
                failed = recovered.failed,
                rerun = recovered.rerun.len(),
                waiting = recovered.waiting,
                "tasks that were running when the server stopped are now failed, or run again"
            );
        }

        let edge_settings = edge_config(&config);
        let api = crate::workflows::api_options(&edge_settings);
        let mut edge_settings = edge_settings.routes(agentyard_workflow::http::router(
            workflows.clone(),
            api.clone(),
        ));
        if config.workflows.exposed
            && let Some(agents) = &mut edge_settings.agents
        {
            agents.extend(workflow_names.iter().cloned());
        }
        if config.console.enabled {
            // After the agent list is final: the console shows what the edge serves.
            let console = crate::console::router(
                runtime.supervisor().clone(),
                &edge_settings,
                config.console.options(),
            );
            edge_settings = edge_settings.routes(console);
        }
        let edge = Edge::start(runtime.supervisor().clone(), edge_settings)
            .await
            .map_err(ServeError::Edge)?;
        let _ = api.base_url.set(edge.base_url().to_owned());
        if config.workflows.pure_a2a {
            workflows.use_client(crate::workflows::over_http(&config, edge.local_addr()));
        }
        if let Err(error) = crate::workflows::bind(&workflows, &runtime).await {
            edge.stop().await;
            runtime.shutdown(Duration::ZERO).await;
            return Err(error.into());
        }
        Ok(Self {
            runtime,
            edge,
            config,
            config_file: None,
            workflows,
            workflow_names,
            store,
            recovered,
            sweeper,
        })
    }

    /// The workflows the server runs (those of `[workflows]`, and any put through
    /// `/api/workflows` since).
    #[must_use]
    pub fn workflows(&self) -> &Workflows {
        &self.workflows
    }

    /// The configuration the server runs with.
    #[must_use]
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The config file that was read; `None` for the embedded defaults.
    #[must_use]
    pub fn config_file(&self) -> Option<&Path> {
        self.config_file.as_deref()
    }

    /// Where tasks live, in words, for the start-up banner.
    #[must_use]
    pub fn storage(&self) -> String {
        let kept = self.config.limits.finished_tasks;
        let recovered = match (
            self.recovered.failed,
            self.recovered.waiting,
            self.recovered.rerun.len(),
        ) {
            (0, 0, 0) => String::new(),
            (failed, waiting, 0) => format!(
                "; found {failed} task(s) cut off by the last stop (now failed) and {waiting} waiting for input"
            ),
            (failed, waiting, rerun) => format!(
                "; found {failed} task(s) cut off by the last stop (now failed), {rerun} running again, and {waiting} waiting for input"
            ),
        };
        match self.config.store.effective_kind() {
            StoreKind::Memory => format!(
                "in memory (lost when the program stops; the last {kept} ended tasks are kept)"
            ),
            StoreKind::Embedded => format!(
                "embedded, in {} (the last {kept} ended tasks are kept){recovered}",
                self.config.store.path.display()
            ),
            StoreKind::Journal => format!(
                "journal, in {} (the last {kept} ended tasks are kept){recovered}",
                self.config.store.path.display()
            ),
            StoreKind::Postgres => format!(
                "PostgreSQL at {} (the last {kept} ended tasks are kept){recovered}",
                agentyard_store::StoreLocation::Postgres(
                    self.config.store.url.clone().unwrap_or_default()
                )
                .describe()
            ),
        }
    }

    /// The task store the server uses.
    #[must_use]
    pub fn store(&self) -> &Arc<dyn TaskStore> {
        &self.store
    }

    /// Whether callers must authenticate, in words, for the start-up banner.
    #[must_use]
    pub fn auth_summary(&self) -> String {
        let auth = &self.config.auth;
        if !auth.is_enabled() {
            return String::from("off (every exposed agent is open to whoever reaches it)");
        }
        let plural = |n: usize, one: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {one}s")
            }
        };
        format!(
            "on ({} in `{}`, {})",
            plural(auth.api_keys.len(), "API key"),
            auth.api_key_header,
            plural(auth.bearer_tokens.len(), "bearer token")
        )
    }

    /// How long running tasks get to finish after the first stop signal.
    #[must_use]
    pub fn shutdown_grace(&self) -> Duration {
        self.config.shutdown_grace()
    }

    /// What a stop would wait for now.
    #[must_use]
    pub fn load(&self) -> Load {
        let supervisor = self.runtime.supervisor();
        Load {
            running_tasks: supervisor.running_task_count(),
            open_streams: supervisor.stream_count(),
        }
    }

    /// The address the server listens on.
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.edge.local_addr()
    }

    /// Where the events and metrics are, in words, for the start-up banner.
    #[must_use]
    pub fn observability_summary(&self) -> String {
        let base = format!("http://{}", self.local_addr());
        let metrics = match (self.config.metrics.enabled, self.metrics_addr()) {
            (false, _) => String::from("metrics off"),
            (true, Some(addr)) => format!("http://{addr}/metrics"),
            (true, None) => format!("{base}/metrics"),
        };
        format!("{base}/events, {metrics}")
    }

    /// Where gRPC is served (`[grpc]`), with the real port; `None` when it is off.
    #[must_use]
    pub fn grpc_addr(&self) -> Option<SocketAddr> {
        self.edge.grpc_addr()
    }

    /// Where `/metrics` is served when `[metrics] address` gives it a listener of its
    /// own.
    #[must_use]
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.edge.metrics_addr()
    }

    /// The card URL of every exposed agent, the default agent's root card first, then
    /// the exposed workflows'.
    #[must_use]
    pub fn card_urls(&self) -> Vec<(String, String)> {
        let mut urls = Vec::new();
        if let Some(default) = self.config.agents.default_agent() {
            urls.push((
                format!("{default} (default)"),
                format!("{}/.well-known/agent-card.json", self.edge.base_url()),
            ));
        }
        for name in &self.config.exposed_agents() {
            urls.push((name.clone(), self.edge.card_url(name)));
        }
        if self.config.workflows.exposed {
            for name in &self.workflow_names {
                urls.push((format!("{name} (workflow)"), self.edge.card_url(name)));
            }
        }
        urls
    }

    /// Where the live console is served (`[console] enabled`), for the banner; `None`
    /// when it is off.
    #[must_use]
    pub fn console_url(&self) -> Option<String> {
        self.config
            .console
            .enabled
            .then(|| format!("http://{}/ui/", self.edge.local_addr()))
    }

    /// The runtime behind the server.
    #[must_use]
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Stops gracefully: new sends are refused at once, running tasks get the
    /// configured grace period (`server.shutdown_grace_secs`), and those still running
    /// then end `failed`, their open streams getting that final event; then the edge
    /// stops listening and closes what is left.
    ///
    /// The runtime goes first so that streams are still connected when their tasks
    /// end; stopping the edge first would cut them with no final event.
    pub async fn stop(self) {
        self.runtime.shutdown(self.shutdown_grace()).await;
        self.edge.stop().await;
        if let Some(sweeper) = self.sweeper {
            sweeper.abort();
        }
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
        .agents(config.exposed_agents())
        .auth(auth)
        .body_limit(config.server.body_limit)
        .request_timeout(Duration::from_secs(config.server.request_timeout_secs))
        .header_read_timeout(Duration::from_secs(config.server.header_read_timeout_secs))
        .idle_timeout(Duration::from_secs(config.server.idle_timeout_secs))
        .max_connections(config.server.max_connections)
        .bindings(config.server.bindings.iter().cloned())
        .push(push);
    for agent in &config.exposed_agents() {
        let mut settings = AgentSettings::default();
        if agent == "echo" {
            // The echo agent answers with a plain Message, as simple A2A clients expect.
            settings = settings.answer_with_message(true);
        }
        if let Some(card) = config.agents.extended_cards.get(agent) {
            settings = settings.extended_skills(card.skills.iter().map(|s| s.to_skill()).collect());
        }
        edge = edge.agent_settings(agent.clone(), settings);
    }
    if let Some(url) = &config.server.public_url {
        edge = edge.public_url(url.clone());
    }
    // `[metrics]`: off in the runtime means nothing to serve; an address of its own
    // takes `/metrics` off the A2A listener.
    edge = edge.metrics(config.metrics.enabled);
    if let Some(address) = config.metrics.address {
        edge = edge.metrics_bind(address);
    }
    if let Some(address) = config.grpc.address_beside(config.server.bind) {
        edge = edge.grpc_bind(address);
    }
    if let Some(default) = config.agents.default_agent() {
        edge = edge.default_agent(default);
    }
    edge
}
