//! What the operator configures about the HTTP edge.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use agentyard_transport::a2a::{AgentExtension, AgentProvider, AgentSkill, TransportProtocol};
use agentyard_transport::server::ServerConfig;

/// The HTTP edge's settings. Every field has a default ([`EdgeConfig::default`]):
///
/// | setting | default |
/// |---|---|
/// | `bind` | `127.0.0.1:0` (loopback, an ephemeral port) |
/// | `public_url` | `http://{bound address}`; bound to `0.0.0.0` (or `::`), the `Host` a client used |
/// | `agents` | every agent whose descriptor is `exposed` |
/// | `default_agent` | the only exposed agent, if there is exactly one |
/// | `provider` | none |
/// | `auth` | none: every agent is public |
/// | `body_limit` | 1 MiB |
/// | `request_timeout` | 30 s (a stream is bounded only in how long it takes to start) |
/// | `sse_keep_alive` | 15 s |
/// | `header_read_timeout` | 10 s (a request head, from its first byte; a new connection's first, from the accept) |
/// | `idle_timeout` | 75 s (a kept-alive connection with no request in flight) |
/// | `max_connections` | 4,096 (more get HTTP 503, or wait) |
/// | `shutdown_grace` | 5 s |
/// | `push` | on, see [`PushConfig`] |
/// | `metrics` | on: `GET /metrics` (when the runtime keeps metrics) |
/// | `metrics_bind` | none: `/metrics` is served on the edge's own address |
/// | `bindings` | `JSONRPC`, `HTTP+JSON`, `GRPC`: every binding, in the order cards list them (gRPC only with `grpc_bind`) |
/// | `grpc_bind` | none: no gRPC listener |
///
/// ```
/// use agentyard_actors::edge::{AgentSettings, EdgeConfig};
///
/// let config = EdgeConfig::default()
///     .public_url("https://agents.example.com")
///     .default_agent("echo")
///     .agent_settings("echo", AgentSettings::default().answer_with_message(true));
/// assert_eq!(config.bind.ip().to_string(), "127.0.0.1");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EdgeConfig {
    /// Where to listen.
    pub bind: SocketAddr,
    /// The base URL clients reach the server at, without a trailing slash (behind a
    /// proxy it differs from the bound address). Card URLs are
    /// `{public_url}/agents/{name}`. Without it, cards name the bound address, or,
    /// bound to `0.0.0.0` (or `::`), which no client can reach, the `Host` the client
    /// sent.
    pub public_url: Option<String>,
    /// Which exposed agents this edge serves; `None` serves every agent whose
    /// descriptor is `exposed`. Naming an agent that is not registered or not exposed
    /// fails the start.
    pub agents: Option<Vec<String>>,
    /// The agent served at the root (`/.well-known/agent-card.json`).
    pub default_agent: Option<String>,
    /// The organization that provides the agents, on every card.
    pub provider: Option<AgentProvider>,
    /// Per-agent card and answer settings, by agent name.
    pub agent_settings: BTreeMap<String, AgentSettings>,
    /// Who may call, and how the cards say so.
    pub auth: EdgeAuth,
    /// The largest request body accepted, in bytes.
    pub body_limit: usize,
    /// How long a non-streaming request may take before the server gives up on it.
    /// A blocking `message/send` to a long task should use `blocking: false` or
    /// `message/stream` instead; the task runs on either way.
    pub request_timeout: Duration,
    /// How long an SSE stream may stay silent before a keep-alive comment is sent.
    pub sse_keep_alive: Duration,
    /// How long a request head may take, from its first byte (a new connection's
    /// first head, from the accept), before the connection is closed.
    pub header_read_timeout: Duration,
    /// How long a kept-alive connection may stay open with no request in flight (and
    /// a client may leave the server's writes unread) before it is closed.
    pub idle_timeout: Duration,
    /// How many connections may be open at once; a few more get HTTP 503, the rest
    /// wait until one closes.
    pub max_connections: usize,
    /// How long open connections (streams included) get to finish when the edge
    /// stops, before they are cut.
    pub shutdown_grace: Duration,
    /// Push notifications.
    pub push: PushConfig,
    /// More routes served beside the A2A ones (e.g. the workflow API of
    /// `agentyard-workflow`), merged into the server's router; they must not overlap
    /// the A2A routes, `/events` or `/metrics` (a clash panics at start, as axum's
    /// `merge` does).
    pub extra_routes: Option<axum::Router>,
    /// Whether `GET /metrics` serves the runtime's metrics (see
    /// [`crate::metrics`]), behind the same credentials as the A2A routes. The
    /// runtime must keep them ([`SupervisorConfig::metrics`](crate::SupervisorConfig::metrics));
    /// off, the edge also counts no HTTP requests.
    pub metrics: bool,
    /// Serves `/metrics` on a listener of its own at this address, and not on the
    /// edge's (e.g. an address only the monitoring network reaches).
    pub metrics_bind: Option<SocketAddr>,
    /// The A2A bindings served, in preference order: cards list their interfaces
    /// in it (each binding in 1.0, then 0.3), and the first HTTP one is the card's
    /// `url` and `preferredTransport`. A binding not listed is off: its routes
    /// answer 404 and no card names it. JSON-RPC and HTTP+JSON share each agent's
    /// base URL; gRPC has a listener of its own. At least one of JSON-RPC and
    /// HTTP+JSON must be on ([`EdgeError::Bindings`](super::EdgeError::Bindings)).
    pub bindings: Vec<TransportProtocol>,
    /// Serves A2A over gRPC (both `lf.a2a.v1.A2AService` and `a2a.v1.A2AService`)
    /// on a listener of its own at this address, beside the HTTP one, with the same
    /// agents, credentials and limits; `None` (the default) serves no gRPC. Each
    /// card lists the gRPC interface (`host:port`, the real port when this asks for
    /// port 0), where `GRPC` stands in [`bindings`](Self::bindings); without `GRPC`
    /// there, no gRPC is served even with an address.
    pub grpc_bind: Option<SocketAddr>,
}

impl Default for EdgeConfig {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            public_url: None,
            agents: None,
            default_agent: None,
            provider: None,
            agent_settings: BTreeMap::new(),
            auth: EdgeAuth::default(),
            body_limit: 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            sse_keep_alive: Duration::from_secs(15),
            header_read_timeout: ServerConfig::DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: ServerConfig::DEFAULT_IDLE_TIMEOUT,
            max_connections: ServerConfig::DEFAULT_MAX_CONNECTIONS,
            shutdown_grace: Duration::from_secs(5),
            push: PushConfig::default(),
            extra_routes: None,
            metrics: true,
            metrics_bind: None,
            bindings: ServerConfig::DEFAULT_BINDINGS.to_vec(),
            grpc_bind: None,
        }
    }
}

impl EdgeConfig {
    /// Adds routes served beside the A2A ones (see [`EdgeConfig::extra_routes`]).
    #[must_use]
    pub fn routes(mut self, routes: axum::Router) -> Self {
        self.extra_routes = Some(match self.extra_routes.take() {
            Some(existing) => existing.merge(routes),
            None => routes,
        });
        self
    }

    /// Sets the bindings served, in preference order (see [`EdgeConfig::bindings`]).
    #[must_use]
    pub fn bindings(mut self, bindings: impl IntoIterator<Item = TransportProtocol>) -> Self {
        self.bindings = bindings.into_iter().collect();
        self
    }

    /// Serves gRPC at `address` (see [`EdgeConfig::grpc_bind`]).
    #[must_use]
    pub fn grpc_bind(mut self, address: SocketAddr) -> Self {
        self.grpc_bind = Some(address);
        self
    }

    /// Sets the address to listen on.
    #[must_use]
    pub fn bind(mut self, bind: SocketAddr) -> Self {
        self.bind = bind;
        self
    }

    /// Sets the public base URL (a trailing slash is dropped).
    #[must_use]
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        let url: String = url.into();
        self.public_url = Some(url.trim_end_matches('/').to_owned());
        self
    }

    /// Serves only these agents (each must be registered and exposed).
    #[must_use]
    pub fn agents<I, S>(mut self, agents: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.agents = Some(agents.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the agent served at the root.
    #[must_use]
    pub fn default_agent(mut self, agent: impl Into<String>) -> Self {
        self.default_agent = Some(agent.into());
        self
    }

    /// Sets the provider shown on every card.
    #[must_use]
    pub fn provider(mut self, provider: AgentProvider) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Sets one agent's settings.
    #[must_use]
    pub fn agent_settings(mut self, agent: impl Into<String>, settings: AgentSettings) -> Self {
        self.agent_settings.insert(agent.into(), settings);
        self
    }

    /// Sets who may call.
    #[must_use]
    pub fn auth(mut self, auth: EdgeAuth) -> Self {
        self.auth = auth;
        self
    }

    /// Sets the request body limit in bytes.
    #[must_use]
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Sets the timeout of non-streaming requests.
    #[must_use]
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets how long an SSE stream may stay silent before a keep-alive comment.
    #[must_use]
    pub fn sse_keep_alive(mut self, interval: Duration) -> Self {
        self.sse_keep_alive = interval;
        self
    }

    /// Sets how long a request head may take, from its first byte.
    #[must_use]
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Sets how long a connection may stay open with no request in flight.
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sets how many connections may be open at once.
    #[must_use]
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// Sets how long connections get to finish when the edge stops.
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Sets the push notification settings.
    #[must_use]
    pub fn push(mut self, push: PushConfig) -> Self {
        self.push = push;
        self
    }

    /// Serves (or not) `GET /metrics`.
    #[must_use]
    pub fn metrics(mut self, on: bool) -> Self {
        self.metrics = on;
        self
    }

    /// Serves `/metrics` on a listener of its own at `bind` instead of the edge's.
    #[must_use]
    pub fn metrics_bind(mut self, bind: SocketAddr) -> Self {
        self.metrics_bind = Some(bind);
        self
    }
}

/// One exposed agent's settings beyond its descriptor.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct AgentSettings {
    /// Answer a blocking `message/send` with the agent's reply [`Message`] instead of
    /// the [`Task`], when the task completed with a reply (default: no, a Task).
    /// Every other outcome (failed, input-required, no reply, non-blocking sends,
    /// streams) still answers with the Task, so the client keeps the id it needs to
    /// continue or inspect it.
    ///
    /// [`Message`]: agentyard_transport::a2a::Message
    /// [`Task`]: agentyard_transport::a2a::Task
    pub answer_with_message: bool,
    /// Extensions the card declares besides the handoff extension (which every card
    /// declares). One marked `required` makes the server refuse calls that do not
    /// activate it.
    pub extensions: Vec<AgentExtension>,
    /// The skills only authenticated callers see: with `Some`, the card says
    /// `supportsAuthenticatedExtendedCard` and `agent/getAuthenticatedExtendedCard`
    /// answers with the public card plus these skills; with `None` it answers -32007.
    pub extended_skills: Option<Vec<AgentSkill>>,
    /// Overrides the edge-wide provider for this agent.
    pub provider: Option<AgentProvider>,
    /// A URL of the agent's documentation.
    pub documentation_url: Option<String>,
    /// A URL of an icon for the agent.
    pub icon_url: Option<String>,
}

impl AgentSettings {
    /// Answers completed blocking sends with the reply message instead of the task.
    #[must_use]
    pub fn answer_with_message(mut self, yes: bool) -> Self {
        self.answer_with_message = yes;
        self
    }

    /// Declares one more extension on the card.
    #[must_use]
    pub fn extension(mut self, extension: AgentExtension) -> Self {
        self.extensions.push(extension);
        self
    }

    /// Offers an authenticated extended card with these extra skills.
    #[must_use]
    pub fn extended_skills(mut self, skills: Vec<AgentSkill>) -> Self {
        self.extended_skills = Some(skills);
        self
    }
}

/// Who may call the edge. With no keys and no tokens every agent is public; with any,
/// every JSON-RPC call must present one of them (agent cards stay public, as A2A
/// discovery requires). The cards' `securitySchemes` and `security` are derived from
/// this, so what the cards declare is exactly what the server checks.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct EdgeAuth {
    /// The header API keys travel in (default `X-API-Key`).
    pub api_key_header: Option<String>,
    /// API keys, each mapped to the principal name it authenticates.
    pub api_keys: BTreeMap<String, String>,
    /// HTTP bearer tokens, each mapped to the principal name it authenticates.
    pub bearer_tokens: BTreeMap<String, String>,
}

// Hand-written so that secrets never reach a log line.
impl fmt::Debug for EdgeAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EdgeAuth")
            .field("api_key_header", &self.header())
            .field("api_keys", &self.api_keys.values().collect::<Vec<_>>())
            .field(
                "bearer_tokens",
                &self.bearer_tokens.values().collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl EdgeAuth {
    /// The name of the API key scheme in the cards' `securitySchemes`.
    pub const API_KEY_SCHEME: &'static str = "apiKey";
    /// The name of the bearer scheme in the cards' `securitySchemes`.
    pub const BEARER_SCHEME: &'static str = "bearer";
    /// The default API key header.
    pub const DEFAULT_API_KEY_HEADER: &'static str = "X-API-Key";

    /// Accepts `key` in the API key header as the principal `principal`.
    #[must_use]
    pub fn api_key(mut self, key: impl Into<String>, principal: impl Into<String>) -> Self {
        self.api_keys.insert(key.into(), principal.into());
        self
    }

    /// Accepts `Authorization: Bearer {token}` as the principal `principal`.
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>, principal: impl Into<String>) -> Self {
        self.bearer_tokens.insert(token.into(), principal.into());
        self
    }

    /// Sends API keys in this header instead of `X-API-Key`.
    #[must_use]
    pub fn api_key_header(mut self, header: impl Into<String>) -> Self {
        self.api_key_header = Some(header.into());
        self
    }

    /// The header API keys travel in.
    #[must_use]
    pub fn header(&self) -> &str {
        self.api_key_header
            .as_deref()
            .unwrap_or(Self::DEFAULT_API_KEY_HEADER)
    }

    /// Whether calls need credentials.
    #[must_use]
    pub fn is_required(&self) -> bool {
        !self.api_keys.is_empty() || !self.bearer_tokens.is_empty()
    }

    /// Checks a request's credentials for the edge's own routes beside A2A (events,
    /// metrics, the console and its API): the same keys and tokens the A2A routes
    /// accept, so an operator configures access once.
    ///
    /// # Errors
    /// [`Unauthorized`] when credentials are required and the request presents none
    /// that match.
    pub fn authenticate(&self, headers: &axum::http::HeaderMap) -> Result<Access, Unauthorized> {
        if !self.is_required() {
            return Ok(Access::Public);
        }
        let key = headers
            .get(self.header())
            .and_then(|value| value.to_str().ok());
        if let Some(principal) = key.and_then(|key| self.api_keys.get(key)) {
            return Ok(Access::Principal(principal.clone()));
        }
        let token = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                let (scheme, token) = value.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            });
        match token.and_then(|token| self.bearer_tokens.get(token)) {
            Some(principal) => Ok(Access::Principal(principal.clone())),
            None => Err(Unauthorized {
                header: self.header().to_owned(),
            }),
        }
    }
}

/// Who [`EdgeAuth::authenticate`] let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// The server needs no credentials.
    Public,
    /// The credentials named this principal.
    Principal(String),
}

/// A request to one of the edge's own routes without valid credentials. As a response
/// it is HTTP 401 with a `WWW-Authenticate` challenge and a message saying what to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unauthorized {
    /// The header an API key is expected in.
    pub header: String,
}

impl fmt::Display for Unauthorized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Unauthorized: send an API key in header `{}` or a bearer token in `Authorization`",
            self.header
        )
    }
}

impl std::error::Error for Unauthorized {}

impl axum::response::IntoResponse for Unauthorized {
    fn into_response(self) -> axum::response::Response {
        let challenge = format!(
            "Bearer realm=\"agentyard\", ApiKey header=\"{}\"",
            self.header
        );
        (
            axum::http::StatusCode::UNAUTHORIZED,
            [(axum::http::header::WWW_AUTHENTICATE, challenge)],
            self.to_string(),
        )
            .into_response()
    }
}

/// Push notification settings.
///
/// | setting | default |
/// |---|---|
/// | `enabled` | yes |
/// | `allow_loopback`, `allow_private_networks` | no |
/// | `allowed_hosts` | none |
/// | `attempts` | 5 per notification and webhook |
/// | `initial_backoff` / `max_backoff` | 500 ms / 30 s, doubling |
/// | `request_timeout` | 10 s per attempt |
/// | `workers` / `queue_capacity` | 4 webhook calls open at once / 1,024 deliveries held |
/// | `max_configs_per_task` | 16 |
/// | `retention` | 1 hour after the task ends |
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PushConfig {
    /// Whether agents send push notifications; off, every push method answers -32003
    /// and cards say `pushNotifications: false`.
    pub enabled: bool,
    /// Allow webhooks on loopback addresses (127.0.0.0/8, ::1, 0.0.0.0). For tests
    /// and single-machine setups.
    pub allow_loopback: bool,
    /// Allow webhooks on private, shared (CGNAT), link-local and unique-local
    /// addresses. Cloud metadata addresses stay refused.
    pub allow_private_networks: bool,
    /// Host names or IP literals exempt from every address check (compared without
    /// case), e.g. an internal webhook relay the operator trusts.
    pub allowed_hosts: Vec<String>,
    /// Attempts per notification and webhook, the first included (at least 1).
    pub attempts: u32,
    /// The wait before the first retry; each later one doubles it.
    pub initial_backoff: Duration,
    /// The longest wait between two attempts.
    pub max_backoff: Duration,
    /// How long one attempt may take.
    pub request_timeout: Duration,
    /// Webhook calls open at once, in all (at least 1). A delivery waiting out its
    /// retry backoff holds none; each webhook still gets a task's notifications one
    /// after another, in order.
    pub workers: usize,
    /// Deliveries (one status change to one webhook) held at once, in all: waiting
    /// behind an earlier one to the same webhook, being sent, or being retried. Past
    /// that they are dropped with a warning (never blocking a task or the supervisor).
    pub queue_capacity: usize,
    /// Webhooks one task may have.
    pub max_configs_per_task: usize,
    /// How long a task's webhooks are kept (for get and list) after it ends.
    pub retention: Duration,
}

impl Default for PushConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            allow_loopback: false,
            allow_private_networks: false,
            allowed_hosts: Vec::new(),
            attempts: 5,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            request_timeout: Duration::from_secs(10),
            workers: 4,
            queue_capacity: 1024,
            max_configs_per_task: 16,
            retention: Duration::from_secs(3600),
        }
    }
}

impl PushConfig {
    /// Push notifications off.
    #[must_use]
    pub fn disabled() -> Self {
        Self {
            enabled: false,
            ..Self::default()
        }
    }

    /// Allows (or refuses) webhooks on loopback addresses.
    #[must_use]
    pub fn allow_loopback(mut self, allow: bool) -> Self {
        self.allow_loopback = allow;
        self
    }

    /// Allows (or refuses) webhooks on private networks.
    #[must_use]
    pub fn allow_private_networks(mut self, allow: bool) -> Self {
        self.allow_private_networks = allow;
        self
    }

    /// Exempts a host from the address checks.
    #[must_use]
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into());
        self
    }

    /// Sets the retry schedule: `attempts` in all, waiting `initial_backoff` before the
    /// first retry and doubling up to `max_backoff`.
    #[must_use]
    pub fn retries(
        mut self,
        attempts: u32,
        initial_backoff: Duration,
        max_backoff: Duration,
    ) -> Self {
        self.attempts = attempts;
        self.initial_backoff = initial_backoff;
        self.max_backoff = max_backoff;
        self
    }

    /// Sets the timeout of one delivery attempt.
    #[must_use]
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderMap;

    use super::{Access, EdgeAuth};

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn a_server_without_credentials_lets_everyone_in() {
        assert_eq!(
            EdgeAuth::default().authenticate(&headers(&[])),
            Ok(Access::Public)
        );
    }

    #[test]
    fn keys_and_tokens_name_their_principal_and_anything_else_is_refused() {
        let auth = EdgeAuth::default()
            .api_key("k1", "alice")
            .bearer_token("t1", "bob");
        assert_eq!(
            auth.authenticate(&headers(&[("x-api-key", "k1")])),
            Ok(Access::Principal("alice".into()))
        );
        assert_eq!(
            auth.authenticate(&headers(&[("authorization", "bearer t1")])),
            Ok(Access::Principal("bob".into()))
        );
        let refused = auth
            .authenticate(&headers(&[("x-api-key", "t1")]))
            .unwrap_err();
        assert!(refused.to_string().contains("X-API-Key"), "{refused}");
        assert!(auth.authenticate(&headers(&[])).is_err());
        assert!(
            auth.authenticate(&headers(&[("authorization", "Basic t1")]))
                .is_err()
        );
    }
}
