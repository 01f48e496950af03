//! The configuration file of `agentyard serve` (TOML).
//!
//! Every key is optional; a missing file section takes its defaults, which are the
//! embedded defaults `agentyard serve` runs with when no file is given. Unknown keys
//! and bad values fail at start with a message naming the key.
//!
//! `agentyard.example.toml` at the root of the repository lists every key at its
//! default, with a comment on each; copy it and change what you need. A short file
//! that exposes two agents (uncomment the last three lines to require an API key):
//!
//! ```toml
//! [server]
//! bind = "localhost:8080"              # HOST:PORT; a name is resolved at start
//!
//! [agents]
//! exposed = ["echo", "countdown"]      # the default agent follows: echo
//!
//! # [[auth.api_keys]]                  # callers send `X-API-Key: <key>`
//! # name = "ops"
//! # key = "replace-with-a-long-random-secret"
//! ```

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

use std::sync::Arc;

use agentyard_actors::store::{
    JournalTaskStore, Retention, SqlTaskStore, StoreError, StoreLocation, TaskStore,
};
use agentyard_actors::{InMemoryTaskStore, SupervisorConfig};
use agentyard_policy::PolicyConfig;
use agentyard_transport::a2a::{AgentSkill, TransportProtocol};
use serde::{Deserialize, Deserializer};

mod console;
mod remote;
#[cfg(test)]
mod tests;
mod workflows;

pub use workflows::WorkflowsSection;

pub use console::ConsoleSection;

pub use remote::{RemoteAuth, RemoteEntry, Unreachable};

impl ConfigError {
    /// This error, said to be in the file at `path`.
    #[must_use]
    pub fn in_file(self, path: &Path) -> Self {
        match self {
            Self::InFile { .. } | Self::Read { .. } => self,
            other => Self::InFile {
                path: path.display().to_string(),
                source: Box::new(other),
            },
        }
    }
}

/// Why a configuration could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the config file {path}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML or a key has a bad value; the message names it.
    #[error("invalid config: {0}")]
    Parse(String),
    /// A problem with the config file at `path`; the source says what.
    #[error("config file {path}")]
    InFile {
        /// The file.
        path: String,
        /// What is wrong in it.
        #[source]
        source: Box<ConfigError>,
    },
    /// A value is well-formed but does not make sense; the message names the key.
    #[error("invalid config: `{key}`: {problem}")]
    Invalid {
        /// The offending key, e.g. `agents.default`.
        key: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct Config {
    /// `[server]`: where and how to listen.
    pub server: ServerSection,
    /// `[agents]`: which agents are reachable over HTTP.
    pub agents: AgentsSection,
    /// `[auth]`: the credentials callers may present.
    pub auth: AuthSection,
    /// `[limits]`: the supervisor's concurrency limits and passivation.
    pub limits: LimitsSection,
    /// `[push]`: push notifications.
    pub push: PushSection,
    /// `[policy]`: allow/deny rules, rate limits, hop limit.
    pub policy: PolicyConfig,
    /// `[workflows]`: workflow files to load, and how they run.
    pub workflows: WorkflowsSection,
    /// `[[remote]]`: remote A2A agents registered as local agent types.
    pub remote: Vec<RemoteEntry>,
    /// `[store]`: where tasks are kept.
    pub store: StoreSection,
    /// `[console]`: the live web console.
    pub console: ConsoleSection,
    /// `[metrics]`: the runtime's metrics and where `/metrics` is served.
    pub metrics: MetricsSection,
    /// `[grpc]`: A2A over gRPC beside HTTP.
    pub grpc: GrpcSection,
    /// `[tracing]`: exporting spans with OpenTelemetry (off by default).
    pub tracing: crate::telemetry::TracingConfig,
}

/// `[metrics]`: see `docs/observability.md`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct MetricsSection {
    /// Whether the runtime keeps metrics and serves them at `GET /metrics` (default
    /// yes: they cost the send path a few atomic additions, measured by
    /// `agentyard-bench -- observability`).
    pub enabled: bool,
    /// Serves `/metrics` on a listener of its own at this `HOST:PORT`, and not on the
    /// A2A address (default: unset, on the A2A address). It takes the same
    /// credentials as the A2A routes either way.
    #[serde(deserialize_with = "deserialize_optional_bind")]
    pub address: Option<SocketAddr>,
}

impl Default for MetricsSection {
    fn default() -> Self {
        Self {
            enabled: true,
            address: None,
        }
    }
}

/// `[grpc]`: A2A over gRPC (`lf.a2a.v1.A2AService` for 1.0 and `a2a.v1.A2AService`
/// for 0.3.0, on one port), beside HTTP, for the same agents with the same
/// credentials and limits. See `docs/grpc.md`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct GrpcSection {
    /// Whether gRPC is served (default yes).
    pub enabled: bool,
    /// Where it listens, `HOST:PORT` (default: the `[server] bind` host at port
    /// [`GrpcSection::DEFAULT_PORT`], or an ephemeral port when `[server] bind` asks
    /// for one). Port 0 takes an ephemeral port, which the cards and the start-up
    /// banner show.
    #[serde(deserialize_with = "deserialize_optional_bind")]
    pub address: Option<SocketAddr>,
}

impl GrpcSection {
    /// 50051: the port gRPC examples and tools use by convention.
    pub const DEFAULT_PORT: u16 = 50051;

    /// The address gRPC listens on beside HTTP at `http`, or `None` when it is off.
    #[must_use]
    pub fn address_beside(&self, http: SocketAddr) -> Option<SocketAddr> {
        if !self.enabled {
            return None;
        }
        Some(self.address.unwrap_or_else(|| {
            // An ephemeral HTTP port (tests, several servers on one host) gets an
            // ephemeral gRPC port too, so two servers never clash on 50051.
            let port = if http.port() == 0 {
                0
            } else {
                Self::DEFAULT_PORT
            };
            SocketAddr::new(http.ip(), port)
        }))
    }
}

impl Default for GrpcSection {
    fn default() -> Self {
        Self {
            enabled: true,
            address: None,
        }
    }
}

/// `[server]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct ServerSection {
    /// The address to listen on (default `127.0.0.1:8080`); written `HOST:PORT`, where
    /// a host name (`localhost:8080`) is resolved once, at start.
    #[serde(deserialize_with = "deserialize_bind")]
    pub bind: SocketAddr,
    /// The base URL agent cards advertise (default `http://<bind>`); set it when the
    /// server sits behind a proxy.
    pub public_url: Option<String>,
    /// The largest request body accepted, in bytes (default 1 MiB).
    pub body_limit: usize,
    /// How long a unary JSON-RPC call may take, in seconds (default 30).
    pub request_timeout_secs: u64,
    /// How long running tasks get to finish after the first Ctrl-C or SIGTERM, in
    /// seconds (default 10); the tasks still running then end `failed`.
    pub shutdown_grace_secs: u64,
    /// How long a request head may take from its first byte (a new connection's first
    /// head, from connecting), in seconds (default 10).
    pub header_read_timeout_secs: u64,
    /// How long a kept-alive connection may stay open with no request in flight, in
    /// seconds (default 75).
    pub idle_timeout_secs: u64,
    /// How many connections may be open at once (default 4096).
    pub max_connections: usize,
    /// The A2A bindings served, in preference order, by their card names
    /// (default `["JSONRPC", "HTTP+JSON", "GRPC"]`): the agent cards list their
    /// interfaces in this order, and a binding left out is off (its routes answer
    /// 404, no card names it). One of `JSONRPC` and `HTTP+JSON` must be on.
    pub bindings: Vec<TransportProtocol>,
}

impl Default for ServerSection {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            public_url: None,
            body_limit: 1024 * 1024,
            request_timeout_secs: 30,
            shutdown_grace_secs: 10,
            header_read_timeout_secs: 10,
            idle_timeout_secs: 75,
            max_connections: 4096,
            bindings: agentyard_transport::server::ServerConfig::DEFAULT_BINDINGS.to_vec(),
        }
    }
}

/// `[agents]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct AgentsSection {
    /// The agents reachable over HTTP (default: every built-in but the planner's worker).
    pub exposed: Vec<String>,
    /// The agent served at the root; must be exposed. Unset, it follows from
    /// `exposed`: `echo` when it is exposed, else the first exposed agent (see
    /// [`AgentsSection::default_agent`]).
    #[serde(default)]
    pub default: Option<String>,
    /// Agents that offer an authenticated extended card: the card says
    /// `supportsAuthenticatedExtendedCard`, and `agent/getAuthenticatedExtendedCard`
    /// answers authenticated callers with the public card plus these skills.
    pub extended_cards: BTreeMap<String, ExtendedCard>,
}

/// `[agents.extended_cards.<agent>]`: what an agent's authenticated extended card adds.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct ExtendedCard {
    /// The skills only authenticated callers see (may be empty).
    pub skills: Vec<SkillEntry>,
}

/// One skill of an extended card.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SkillEntry {
    /// Unique within the agent.
    pub id: String,
    /// A human-readable name.
    pub name: String,
    /// What the skill does.
    pub description: String,
    /// Keywords (default none).
    #[serde(default)]
    pub tags: Vec<String>,
    /// Example prompts (default none).
    #[serde(default)]
    pub examples: Vec<String>,
}

impl SkillEntry {
    /// The skill as the card carries it.
    #[must_use]
    pub fn to_skill(&self) -> AgentSkill {
        let mut skill = AgentSkill::new(&self.id, &self.name, &self.description);
        skill.tags.clone_from(&self.tags);
        if !self.examples.is_empty() {
            skill.examples = Some(self.examples.clone());
        }
        skill
    }
}

impl AgentsSection {
    /// The agent served at the root: `default` when set, else `echo` when it is
    /// exposed, else the first exposed agent; `None` only when nothing is exposed.
    #[must_use]
    pub fn default_agent(&self) -> Option<&str> {
        if let Some(default) = &self.default {
            return Some(default);
        }
        self.exposed
            .iter()
            .find(|name| *name == "echo")
            .or_else(|| self.exposed.first())
            .map(String::as_str)
    }
}

impl Default for AgentsSection {
    fn default() -> Self {
        Self {
            exposed: crate::builtin::EXPOSED
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            default: None,
            extended_cards: BTreeMap::new(),
        }
    }
}

/// `[auth]`. With no credentials at all, every exposed agent is open.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct AuthSection {
    /// The header API keys travel in (default `X-API-Key`).
    pub api_key_header: String,
    /// API keys.
    pub api_keys: Vec<ApiKey>,
    /// Bearer tokens (`Authorization: Bearer …`).
    pub bearer_tokens: Vec<BearerToken>,
}

impl AuthSection {
    /// Whether callers must present credentials: any API key or bearer token turns
    /// authentication on for every JSON-RPC call.
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        !self.api_keys.is_empty() || !self.bearer_tokens.is_empty()
    }
}

impl Default for AuthSection {
    fn default() -> Self {
        Self {
            api_key_header: String::from("X-API-Key"),
            api_keys: Vec::new(),
            bearer_tokens: Vec::new(),
        }
    }
}

/// One API key.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ApiKey {
    /// The caller it identifies (the sender policy rules see).
    pub name: String,
    /// The secret.
    pub key: String,
}

/// One bearer token.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct BearerToken {
    /// The caller it identifies.
    pub name: String,
    /// The secret.
    pub token: String,
}

/// `[limits]`; defaults as in [`SupervisorConfig`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct LimitsSection {
    /// Tasks running at once in the whole runtime.
    pub global: usize,
    /// Sends that may wait for the global limit.
    pub global_queue: usize,
    /// Tasks of one agent type running at once.
    pub agent: usize,
    /// Sends that may wait for an agent type.
    pub agent_queue: usize,
    /// Tasks of one session running at once.
    pub session: usize,
    /// Sends that may wait for a session.
    pub session_queue: usize,
    /// Seconds a session may sit idle before it is passivated.
    pub idle_timeout_secs: u64,
    /// Sessions kept live with no task running, queued or waiting for input; past
    /// it, the least recently used is passivated at once. Bounds the memory of many
    /// short conversations.
    pub warm_sessions: usize,
    /// Ended tasks the task store keeps for `tasks/get`; past it, the task that ended
    /// first is forgotten. Bounds the store's memory under sustained traffic.
    pub finished_tasks: usize,
    /// The most recent tasks of one conversation the store remembers for its history;
    /// bounds one long conversation.
    pub conversation_tasks: usize,
    /// Earlier messages of its conversation an agent sees.
    pub history_depth: usize,
    /// Idempotency keys remembered at most; past it, the oldest is forgotten.
    pub idempotency_keys: usize,
    /// Seconds an idempotency key is remembered.
    pub idempotency_ttl_secs: u64,
    /// Events an in-process subscriber may fall behind by before it is told it lagged
    /// (at most 1,048,576).
    pub event_capacity: usize,
    /// Updates a task stream may fall behind by before it reads what it missed back
    /// from the task's event log (at most 65,536).
    pub stream_capacity: usize,
}

impl Default for LimitsSection {
    fn default() -> Self {
        let d = SupervisorConfig::default();
        Self {
            global: d.global_limit,
            global_queue: d.global_queue,
            agent: d.agent_limit,
            agent_queue: d.agent_queue,
            session: d.session_limit,
            session_queue: d.session_queue,
            idle_timeout_secs: d.idle_timeout.as_secs(),
            warm_sessions: d.warm_sessions,
            finished_tasks: InMemoryTaskStore::DEFAULT_FINISHED_TASK_LIMIT,
            conversation_tasks: InMemoryTaskStore::DEFAULT_CONTEXT_TASK_LIMIT,
            history_depth: d.history_depth,
            idempotency_keys: d.idempotency_capacity,
            idempotency_ttl_secs: d.idempotency_ttl.as_secs(),
            event_capacity: d.event_capacity,
            stream_capacity: d.stream_capacity,
        }
    }
}

/// `[push]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct PushSection {
    /// Whether push notifications are offered (default yes).
    pub enabled: bool,
    /// Whether webhooks may point at loopback, private or link-local addresses
    /// (default no: that is how SSRF attacks reach internal services).
    pub allow_private_addresses: bool,
}

impl Default for PushSection {
    fn default() -> Self {
        Self {
            enabled: true,
            allow_private_addresses: false,
        }
    }
}

/// `[store]`: where `agentyard serve` keeps tasks, their event logs, idempotency keys
/// and push configs. The library's [`Runtime`](crate::Runtime) keeps them in memory
/// unless given a store.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct StoreSection {
    /// `"journal"` (an append-only log in `path`, read back into memory at start),
    /// `"embedded"` (a SQLite file in `path`), `"postgres"` (the database at `url`)
    /// or `"memory"` (lost at exit). Unset: see [`StoreSection::effective_kind`].
    pub kind: Option<StoreKind>,
    /// The data directory of the journal or embedded store, created on first start
    /// (default `./agentyard-data`, relative to where the program starts).
    /// `--data-dir` wins.
    pub path: std::path::PathBuf,
    /// The PostgreSQL URL, `postgres://user:password@host:port/database`.
    pub url: Option<String>,
    /// Ended tasks older than this many seconds are dropped (checked every minute);
    /// 0 keeps them until `limits.finished_tasks` drops them. Tasks an idempotency key
    /// still names are kept either way. At most a century (3,155,760,000).
    pub max_age_secs: u64,
}

/// The most `store.max_age_secs` may be: a century of 365.25 days.
const MAX_AGE_LIMIT_SECS: u64 = 3_155_760_000;

/// Which store `agentyard serve` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum StoreKind {
    /// A SQLite file in the data directory: durable, nothing to install (the default
    /// before the journal).
    Embedded,
    /// The default: an append-only log in the data directory, replayed into memory at
    /// start: durable, nothing to install; every read is answered from memory, and a
    /// send flushes its few hundred bytes of log instead of a database's pages.
    Journal,
    /// A PostgreSQL database, which several processes may share.
    Postgres,
    /// In memory: lost when the program stops.
    Memory,
}

impl StoreSection {
    /// The default data directory of the journal and embedded stores.
    pub const DEFAULT_PATH: &str = "./agentyard-data";

    /// The kind in effect: `kind`; else `"postgres"` when `url` is set; else
    /// `"embedded"` when the data directory already holds an embedded (SQLite) store
    /// and no journal, so that a server upgraded in place keeps its tasks; else
    /// `"journal"`.
    #[must_use]
    pub fn effective_kind(&self) -> StoreKind {
        if let Some(kind) = self.kind {
            return kind;
        }
        if self.url.is_some() {
            return StoreKind::Postgres;
        }
        if agentyard_actors::store::data_dir::holds_sqlite_only(&self.path) {
            StoreKind::Embedded
        } else {
            StoreKind::Journal
        }
    }
}

impl Default for StoreSection {
    fn default() -> Self {
        Self {
            kind: None,
            path: std::path::PathBuf::from(Self::DEFAULT_PATH),
            url: None,
            max_age_secs: 0,
        }
    }
}

/// The form `--bind` and `server.bind` take, for error messages.
const BIND_FORM: &str = "HOST:PORT, e.g. 127.0.0.1:8080, [::1]:8080 or localhost:8080";

/// Reads a listening address written `HOST:PORT`. An IP address is taken as it is; a
/// host name is resolved now (the first address wins), so `localhost:8080` works.
///
/// # Errors
/// A message naming the text and the form expected.
pub fn parse_bind(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let bad = |why: &str| {
        format!("`{text}` is not an address to listen on ({why}); expected {BIND_FORM}")
    };
    let Some((host, port)) = text.rsplit_once(':') else {
        return Err(bad("no port"));
    };
    if host.is_empty() {
        return Err(bad("no host"));
    }
    if port.parse::<u16>().is_err() {
        return Err(bad("the port must be a number from 0 to 65535"));
    }
    match text.to_socket_addrs() {
        Ok(mut addrs) => addrs
            .next()
            .ok_or_else(|| bad(&format!("`{host}` resolves to no address"))),
        Err(error) => Err(bad(&format!("`{host}` does not resolve: {error}"))),
    }
}

fn deserialize_bind<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SocketAddr, D::Error> {
    let text = String::deserialize(deserializer)?;
    parse_bind(&text).map_err(serde::de::Error::custom)
}

fn deserialize_optional_bind<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<SocketAddr>, D::Error> {
    deserialize_bind(deserializer).map(Some)
}

impl Config {
    /// Reads and checks a config file. Every error names the file.
    ///
    /// # Errors
    /// [`ConfigError::Read`] if the file cannot be read; otherwise
    /// [`ConfigError::InFile`] around [`ConfigError::Parse`] or [`ConfigError::Invalid`]
    /// naming the bad key.
    pub fn from_path(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let mut config = Self::from_toml(&text).map_err(|error| error.in_file(path))?;
        config.workflows.read_from(path);
        Ok(config)
    }

    /// Parses and checks a config from TOML text.
    ///
    /// # Errors
    /// [`ConfigError::Parse`] or [`ConfigError::Invalid`] naming the bad key.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let config: Self = toml::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        config.check()?;
        Ok(config)
    }

    /// Checks what the types alone cannot: limits above zero, the default agent among
    /// the exposed ones, non-empty secrets, a usable public URL.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the key.
    pub fn check(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, problem: &str| ConfigError::Invalid {
            key: key.to_owned(),
            problem: problem.to_owned(),
        };
        self.workflows.check()?;
        self.console.check(&self.auth)?;
        if let Some(grpc) = self.grpc.address_beside(self.server.bind)
            && grpc.port() != 0
            && grpc == self.server.bind
        {
            return Err(invalid(
                "grpc.address",
                "is `[server] bind`'s address: gRPC needs a port of its own",
            ));
        }
        self.tracing.check()?;
        let l = &self.limits;
        // Each count at least 1; the rings, allocated whole (the event bus's at start,
        // a stream's per streamed task), at most what memory can hold.
        let (events_most, stream_most) = (
            SupervisorConfig::MAX_EVENT_CAPACITY,
            SupervisorConfig::MAX_STREAM_CAPACITY,
        );
        for (key, value, most) in [
            ("limits.global", l.global, usize::MAX),
            ("limits.agent", l.agent, usize::MAX),
            ("limits.session", l.session, usize::MAX),
            ("limits.finished_tasks", l.finished_tasks, usize::MAX),
            (
                "limits.conversation_tasks",
                l.conversation_tasks,
                usize::MAX,
            ),
            ("limits.idempotency_keys", l.idempotency_keys, usize::MAX),
            ("limits.event_capacity", l.event_capacity, events_most),
            ("limits.stream_capacity", l.stream_capacity, stream_most),
        ] {
            if value == 0 {
                return Err(invalid(key, "must be at least 1"));
            }
            if value > most {
                return Err(invalid(key, &format!("must be at most {most}")));
            }
        }
        if l.idle_timeout_secs == 0 {
            return Err(invalid("limits.idle_timeout_secs", "must be at least 1"));
        }
        if l.idempotency_ttl_secs == 0 {
            return Err(invalid("limits.idempotency_ttl_secs", "must be at least 1"));
        }
        if self.server.body_limit == 0 {
            return Err(invalid("server.body_limit", "must be at least 1 byte"));
        }
        match (self.store.effective_kind(), &self.store.url) {
            (StoreKind::Postgres, None) => {
                return Err(invalid(
                    "store.url",
                    "kind = \"postgres\" needs the database's URL, postgres://user:password@host:port/database",
                ));
            }
            (StoreKind::Postgres, Some(url))
                if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) =>
            {
                return Err(invalid(
                    "store.url",
                    "must start with postgres:// or postgresql://",
                ));
            }
            (StoreKind::Embedded | StoreKind::Journal, _)
                if self.store.path.as_os_str().is_empty() =>
            {
                return Err(invalid("store.path", "must name a directory"));
            }
            _ => {}
        }
        for (key, value) in [
            (
                "server.request_timeout_secs",
                self.server.request_timeout_secs,
            ),
            (
                "server.header_read_timeout_secs",
                self.server.header_read_timeout_secs,
            ),
            ("server.idle_timeout_secs", self.server.idle_timeout_secs),
        ] {
            if value == 0 {
                return Err(invalid(key, "must be at least 1"));
            }
        }
        if self.server.max_connections == 0 {
            return Err(invalid("server.max_connections", "must be at least 1"));
        }
        if let Err(problem) = check_bindings(&self.server.bindings) {
            return Err(invalid("server.bindings", &problem));
        }
        if let Some(url) = &self.server.public_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(invalid(
                "server.public_url",
                "must start with http:// or https://",
            ));
        }
        if let Some(default) = &self.agents.default
            && !self.agents.exposed.contains(default)
        {
            return Err(invalid(
                "agents.default",
                &format!("`{default}` is not in `agents.exposed`"),
            ));
        }
        // A cutoff that far back is before the clock's start: subtracting it from now
        // would overflow, and no task is that old anyway.
        if self.store.max_age_secs > MAX_AGE_LIMIT_SECS {
            return Err(invalid(
                "store.max_age_secs",
                "must be at most 3155760000 (a century); 0 keeps ended tasks until \
                 limits.finished_tasks drops them",
            ));
        }
        if self.server.shutdown_grace_secs > 24 * 60 * 60 {
            return Err(invalid(
                "server.shutdown_grace_secs",
                "must be at most 86400 (a day)",
            ));
        }
        for agent in self.agents.extended_cards.keys() {
            let key = format!("agents.extended_cards.{agent}");
            if !self.agents.exposed.contains(agent) {
                return Err(invalid(
                    &key,
                    &format!("`{agent}` is not in `agents.exposed`"),
                ));
            }
            if !self.auth.is_enabled() {
                return Err(invalid(
                    &key,
                    "only authenticated callers get the extended card, and no credentials are configured: add `[[auth.api_keys]]` or `[[auth.bearer_tokens]]`",
                ));
            }
        }
        if self.auth.api_key_header.is_empty() {
            return Err(invalid("auth.api_key_header", "must not be empty"));
        }
        for (i, key) in self.auth.api_keys.iter().enumerate() {
            if key.key.is_empty() || key.name.is_empty() {
                return Err(invalid(
                    &format!("auth.api_keys[{i}]"),
                    "name and key must not be empty",
                ));
            }
        }
        for (i, token) in self.auth.bearer_tokens.iter().enumerate() {
            if token.token.is_empty() || token.name.is_empty() {
                return Err(invalid(
                    &format!("auth.bearer_tokens[{i}]"),
                    "name and token must not be empty",
                ));
            }
        }
        for (i, remote) in self.remote.iter().enumerate() {
            remote.check(i)?;
            let taken = self.agents.exposed.contains(&remote.name)
                || self.remote[..i]
                    .iter()
                    .any(|other| other.name == remote.name);
            if taken {
                return Err(invalid(
                    &format!("remote[{i}].name"),
                    "names an agent that is already registered",
                ));
            }
        }
        Ok(())
    }

    /// The agents the edge serves: `agents.exposed` and the `[[remote]]` entries
    /// with `expose = true` (the gateway).
    #[must_use]
    pub fn exposed_agents(&self) -> Vec<String> {
        let mut exposed = self.agents.exposed.clone();
        exposed.extend(
            self.remote
                .iter()
                .filter(|remote| remote.expose)
                .map(|remote| remote.name.clone()),
        );
        exposed
    }

    /// Checks that every agent the file names is registered.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the key and the unknown agent.
    pub fn check_agents(
        &self,
        mut registered: impl FnMut(&str) -> bool,
    ) -> Result<(), ConfigError> {
        for (i, name) in self.agents.exposed.iter().enumerate() {
            if !registered(name) {
                return Err(ConfigError::Invalid {
                    key: format!("agents.exposed[{i}]"),
                    problem: format!("no agent named `{name}` is registered"),
                });
            }
        }
        Ok(())
    }

    /// How long running tasks get to finish after the first stop signal.
    #[must_use]
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.server.shutdown_grace_secs)
    }

    /// The supervisor settings the `[limits]` section describes.
    #[must_use]
    pub fn supervisor_config(&self) -> SupervisorConfig {
        let l = &self.limits;
        let mut config = SupervisorConfig::default();
        config.global_limit = l.global;
        config.global_queue = l.global_queue;
        config.agent_limit = l.agent;
        config.agent_queue = l.agent_queue;
        config.session_limit = l.session;
        config.session_queue = l.session_queue;
        config.idle_timeout = Duration::from_secs(l.idle_timeout_secs);
        config.warm_sessions = l.warm_sessions;
        config.history_depth = l.history_depth;
        config.idempotency_capacity = l.idempotency_keys;
        config.idempotency_ttl = Duration::from_secs(l.idempotency_ttl_secs);
        config.event_capacity = l.event_capacity;
        config.stream_capacity = l.stream_capacity;
        config.metrics = self.metrics.enabled;
        config
    }

    /// The in-memory task store the `[limits]` section describes.
    #[must_use]
    pub fn task_store(&self) -> InMemoryTaskStore {
        InMemoryTaskStore::with_context_task_limit(self.limits.conversation_tasks)
            .finished_task_limit(self.limits.finished_tasks)
    }

    /// How long ended tasks are kept: `limits.finished_tasks` and `store.max_age_secs`.
    #[must_use]
    pub fn retention(&self) -> Retention {
        Retention::new(self.limits.finished_tasks).max_age(
            (self.store.max_age_secs > 0).then(|| Duration::from_secs(self.store.max_age_secs)),
        )
    }

    /// Opens the task store the `[store]` section describes: the embedded file
    /// database or the journal (created on first start), PostgreSQL (migrated at
    /// start), or memory.
    ///
    /// # Errors
    /// The store's error, naming where it is, when it cannot be opened.
    pub async fn open_store(&self) -> Result<Arc<dyn TaskStore>, StoreError> {
        let location = match self.store.effective_kind() {
            StoreKind::Memory => return Ok(Arc::new(self.task_store())),
            StoreKind::Journal => {
                return Ok(Arc::new(
                    JournalTaskStore::open(self.store.path.clone(), self.retention()).await?,
                ));
            }
            StoreKind::Embedded => StoreLocation::Embedded(self.store.path.clone()),
            StoreKind::Postgres => {
                StoreLocation::Postgres(self.store.url.clone().unwrap_or_default())
            }
        };
        Ok(Arc::new(
            SqlTaskStore::open(location, self.retention()).await?,
        ))
    }

    /// The base URL agent cards advertise.
    #[must_use]
    pub fn public_url(&self, bound: SocketAddr) -> String {
        self.server
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{bound}"))
            .trim_end_matches('/')
            .to_owned()
    }
}

/// What is wrong with `server.bindings`, if anything: it must name A2A's bindings,
/// each once, one of them served over HTTP.
fn check_bindings(bindings: &[TransportProtocol]) -> Result<(), String> {
    for (at, binding) in bindings.iter().enumerate() {
        if let TransportProtocol::Other(name) = binding {
            return Err(format!(
                "names `{name}`; the bindings are \"JSONRPC\", \"HTTP+JSON\" and \"GRPC\""
            ));
        }
        if bindings[..at].contains(binding) {
            return Err(format!("names `{binding}` twice"));
        }
    }
    if bindings
        .iter()
        .any(|b| matches!(b, TransportProtocol::JsonRpc | TransportProtocol::HttpJson))
    {
        Ok(())
    } else {
        Err(
            "must include \"JSONRPC\" or \"HTTP+JSON\": the agents' cards and HTTP endpoints \
             need one"
                .to_owned(),
        )
    }
}
