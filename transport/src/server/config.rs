//! Server options: limits, timeouts, streaming keep-alive, credentials and the
//! bindings served.

use std::fmt;
use std::time::Duration;

use super::log::OnAnswer;
use crate::a2a::TransportProtocol;

/// How the server treats requests. Build one with [`ServerConfig::builder`]; every
/// option has a default:
///
/// | option | default | what it bounds |
/// |---|---|---|
/// | [`body_limit`](ServerConfigBuilder::body_limit) | 1 MiB | a JSON-RPC request body; larger ones get HTTP 413 |
/// | [`request_timeout`](ServerConfigBuilder::request_timeout) | 30 s | reading a body, and a unary call until the service answers; also how long a streaming call may take to *start* its stream (the stream itself then runs as long as it has events) |
/// | [`sse_keep_alive`](ServerConfigBuilder::sse_keep_alive) | 15 s | silence on an SSE stream before a `:` comment line is sent, so proxies keep it open |
/// | [`header_read_timeout`](ServerConfigBuilder::header_read_timeout) | 10 s | a request head, from its first byte (the first head, from the accept); a client that overstays is disconnected |
/// | [`idle_timeout`](ServerConfigBuilder::idle_timeout) | 75 s | a kept-alive connection with no request in flight, and a client that reads nothing the server writes |
/// | [`max_connections`](ServerConfigBuilder::max_connections) | 4,096 | connections open at once; more get HTTP 503 or wait (see [`serve_with`](super::serve_with)) |
/// | [`auth`](ServerConfigBuilder::auth) | no credentials | who can call agents whose card requires authentication (nobody, by default) |
/// | [`bindings`](ServerConfigBuilder::bindings) | `JSONRPC`, `HTTP+JSON`, `GRPC` | which bindings are on, in the order cards list them; one not listed is off (its routes answer 404) |
///
/// ```
/// use std::time::Duration;
/// use agentyard_transport::server::{AuthConfig, ServerConfig};
///
/// let config = ServerConfig::builder()
///     .body_limit(64 * 1024)
///     .request_timeout(Duration::from_secs(5))
///     .auth(AuthConfig::new().api_key("apiKey", "s3cret", "ci-bot"))
///     .build();
/// assert_eq!(config.body_limit(), 64 * 1024);
/// assert_eq!(config.request_timeout(), Duration::from_secs(5));
/// assert_eq!(ServerConfig::default().body_limit(), 1024 * 1024);
/// ```
#[derive(Clone, Debug)]
pub struct ServerConfig {
    body_limit: usize,
    request_timeout: Duration,
    sse_keep_alive: Duration,
    header_read_timeout: Duration,
    idle_timeout: Duration,
    max_connections: usize,
    max_calls: Option<usize>,
    auth: AuthConfig,
    strict_card_prefix: Option<String>,
    bindings: Vec<TransportProtocol>,
    on_answer: Option<OnAnswer>,
}

impl ServerConfig {
    /// 1 MiB: far above any sensible A2A message with inline text, and small enough
    /// that a flood of large bodies cannot exhaust memory. Files belong in `uri` parts.
    pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;
    /// 30 s: long enough for a blocking `message/send` to a quick agent, short enough
    /// that a stuck agent does not hold connections for minutes. Long work should use
    /// `message/stream` or `blocking: false`.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    /// 15 s: below the idle timeouts of common proxies and load balancers (often 30 to
    /// 60 s).
    pub const DEFAULT_SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);
    /// 10 s: a client on a slow link sends a request head (a few hundred bytes) in
    /// well under a second; one that takes longer holds a connection for nothing.
    pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
    /// 75 s: longer than the idle timeouts of common load balancers (often 60 s), so
    /// that the balancer, not the server, closes an idle pooled connection and never
    /// sends a request on one the server is closing.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(75);
    /// 4,096: far more than a busy client pool needs, and few enough that idle
    /// connections cannot exhaust the process's file descriptors.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
    /// `/a2a-1.0`: where the strict 1.0 cards are served by default
    /// (`/a2a-1.0/.well-known/agent-card.json`,
    /// `/a2a-1.0/agents/{name}/.well-known/agent-card.json`).
    pub const DEFAULT_STRICT_CARD_PREFIX: &str = "/a2a-1.0";
    /// Every binding A2A defines, JSON-RPC first (the one every client speaks),
    /// then HTTP+JSON, then gRPC (served on a listener of its own).
    pub const DEFAULT_BINDINGS: [TransportProtocol; 3] = [
        TransportProtocol::JsonRpc,
        TransportProtocol::HttpJson,
        TransportProtocol::Grpc,
    ];

    /// A builder starting from the defaults.
    pub fn builder() -> ServerConfigBuilder {
        ServerConfigBuilder {
            config: Self::default(),
        }
    }

    /// The largest request body accepted, in bytes.
    #[must_use]
    pub const fn body_limit(&self) -> usize {
        self.body_limit
    }

    /// How long a unary call (and the start of a stream) may take.
    #[must_use]
    pub const fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// How often an idle SSE stream gets a keep-alive comment.
    #[must_use]
    pub const fn sse_keep_alive(&self) -> Duration {
        self.sse_keep_alive
    }

    /// How long a request head may take, from its first byte (a new connection's
    /// first head, from the accept).
    #[must_use]
    pub const fn header_read_timeout(&self) -> Duration {
        self.header_read_timeout
    }

    /// How long a connection may stay open with no request in flight, and how long
    /// a client may leave the server's writes unread.
    #[must_use]
    pub const fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// How many connections may be open at once.
    #[must_use]
    pub const fn max_connections(&self) -> usize {
        self.max_connections
    }

    /// How many JSON-RPC calls are let in at once, the rest waiting their turn
    /// (`None`, the default: no limit beyond the connection cap and the runtime's
    /// own concurrency limits).
    #[must_use]
    pub const fn max_calls(&self) -> Option<usize> {
        self.max_calls
    }

    /// The credentials the server accepts.
    #[must_use]
    pub const fn auth(&self) -> &AuthConfig {
        &self.auth
    }

    /// The path prefix under which every card is served in its strict 1.0 form
    /// alone, whatever the request's headers; `None` when there is none.
    ///
    /// The 1.0 card schema allows no extra members, so the hybrid card served at the
    /// usual paths can never pass a strict check (the 1.0 TCK's CARD-STRUCT-001);
    /// a conformance tool is pointed at `http://host{prefix}` instead, and calls the
    /// interfaces that card lists, which are the usual ones.
    #[must_use]
    pub fn strict_card_prefix(&self) -> Option<&str> {
        self.strict_card_prefix.as_deref()
    }

    /// The bindings on, in preference order (the order cards list them in).
    #[must_use]
    pub fn bindings(&self) -> &[TransportProtocol] {
        &self.bindings
    }

    /// Whether `binding` is on.
    #[must_use]
    pub fn serves(&self, binding: &TransportProtocol) -> bool {
        self.bindings.contains(binding)
    }

    /// What is told of every answer besides the log (`None`, the default: nothing).
    #[must_use]
    pub const fn on_answer(&self) -> Option<&OnAnswer> {
        self.on_answer.as_ref()
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            body_limit: Self::DEFAULT_BODY_LIMIT,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            sse_keep_alive: Self::DEFAULT_SSE_KEEP_ALIVE,
            header_read_timeout: Self::DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            max_calls: None,
            auth: AuthConfig::new(),
            strict_card_prefix: Some(Self::DEFAULT_STRICT_CARD_PREFIX.to_owned()),
            bindings: Self::DEFAULT_BINDINGS.to_vec(),
            on_answer: None,
        }
    }
}

/// Builds a [`ServerConfig`]; see there for the defaults.
#[derive(Clone, Debug)]
#[must_use]
pub struct ServerConfigBuilder {
    config: ServerConfig,
}

impl ServerConfigBuilder {
    /// The largest request body accepted, in bytes (default 1 MiB).
    pub const fn body_limit(mut self, bytes: usize) -> Self {
        self.config.body_limit = bytes;
        self
    }

    /// How long a unary call may take before the caller gets a JSON-RPC internal
    /// error instead (default 30 s).
    pub const fn request_timeout(mut self, timeout: Duration) -> Self {
        self.config.request_timeout = timeout;
        self
    }

    /// How often an idle SSE stream gets a keep-alive comment (default 15 s).
    pub const fn sse_keep_alive(mut self, interval: Duration) -> Self {
        self.config.sse_keep_alive = interval;
        self
    }

    /// How long a request head may take, from its first byte (a new connection's
    /// first head, from the accept), before the connection is closed (default 10 s;
    /// anything past a century counts as a century).
    pub const fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.config.header_read_timeout = timeout;
        self
    }

    /// How long a connection may stay open with no request in flight, and how long a
    /// client may leave the server's writes unread, before it is closed (default 75 s;
    /// anything past a century counts as a century).
    pub const fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.config.idle_timeout = timeout;
        self
    }

    /// How many connections may be open at once (default 4,096; at least 1).
    pub const fn max_connections(mut self, connections: usize) -> Self {
        self.config.max_connections = connections;
        self
    }

    /// Lets at most `calls` JSON-RPC calls in at once (at least 1); the rest wait
    /// their turn in the server, a layer in front of the handler (default: no limit).
    pub const fn max_calls(mut self, calls: usize) -> Self {
        self.config.max_calls = Some(if calls == 0 { 1 } else { calls });
        self
    }

    /// The credentials the server accepts (default: none).
    pub fn auth(mut self, auth: AuthConfig) -> Self {
        self.config.auth = auth;
        self
    }

    /// Where the strict 1.0 cards are served (default `/a2a-1.0`); `None` serves
    /// them nowhere. A prefix is one or more path segments of letters, digits and
    /// `-._~`, each after a `/` (a trailing `/` is dropped); any other value serves
    /// them nowhere, as no route could be made of it.
    pub fn strict_card_prefix(mut self, prefix: Option<&str>) -> Self {
        self.config.strict_card_prefix = prefix
            .map(|prefix| prefix.trim_end_matches('/'))
            .filter(|prefix| valid_prefix(prefix))
            .map(str::to_owned);
        self
    }

    /// The bindings to serve, in preference order (default
    /// [`DEFAULT_BINDINGS`](ServerConfig::DEFAULT_BINDINGS)); one not listed is off,
    /// and a repeated one counts once, where it first appears.
    pub fn bindings(mut self, bindings: impl IntoIterator<Item = TransportProtocol>) -> Self {
        let mut chosen: Vec<TransportProtocol> = Vec::new();
        for binding in bindings {
            if !chosen.contains(&binding) {
                chosen.push(binding);
            }
        }
        self.config.bindings = chosen;
        self
    }

    /// Tells `on_answer` of every request the router answers (a metrics recorder),
    /// as the request's log line is written (default: nothing is told).
    pub fn on_answer(mut self, on_answer: OnAnswer) -> Self {
        self.config.on_answer = Some(on_answer);
        self
    }

    /// The finished config.
    #[must_use]
    pub fn build(self) -> ServerConfig {
        self.config
    }
}

/// `/seg/seg...` with unreserved characters only: nothing a router reads as a
/// parameter or wildcard, and no empty segment.
fn valid_prefix(prefix: &str) -> bool {
    let Some(rest) = prefix.strip_prefix('/') else {
        return false;
    };
    !rest.is_empty()
        && rest.split('/').all(|segment| {
            !segment.is_empty()
                && segment
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
        })
}

/// The credentials the server accepts, each naming the caller it authenticates.
///
/// Whether a call needs one is decided by the agent's card, not here: an agent whose
/// card lists `security` requirements is protected, and a request passes when it
/// satisfies one of them. A requirement names schemes of the card's
/// `securitySchemes`; the server can check two kinds:
///
/// - `{"type": "apiKey", "in": "header", "name": "X-API-Key"}`: the header the card
///   names must carry a key registered here with [`api_key`](Self::api_key) for that
///   scheme name;
/// - `{"type": "http", "scheme": "bearer"}`: `Authorization: Bearer <token>` must
///   carry a token registered with [`bearer_token`](Self::bearer_token) for that
///   scheme name.
///
/// Other schemes (OAuth 2.0, OpenID Connect, mutual TLS, keys in a query or cookie)
/// cannot be checked by this server, so a requirement naming one is never met.
///
/// ```
/// use agentyard_transport::server::AuthConfig;
///
/// let auth = AuthConfig::new()
///     .api_key("apiKey", "k-123", "reporting-job")
///     .bearer_token("bearer", "t-456", "alice");
/// assert!(!auth.is_empty());
/// // Secrets never show up in logs.
/// assert!(!format!("{auth:?}").contains("k-123"));
/// ```
#[derive(Clone, Default)]
pub struct AuthConfig {
    pub(super) api_keys: Vec<Credential>,
    pub(super) bearer_tokens: Vec<Credential>,
}

/// One secret and whom it authenticates under which scheme.
#[derive(Clone)]
pub(super) struct Credential {
    pub(super) scheme: String,
    pub(super) secret: String,
    pub(super) principal: String,
}

impl AuthConfig {
    /// No credentials: protected agents reject every call.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            api_keys: Vec::new(),
            bearer_tokens: Vec::new(),
        }
    }

    /// Accepts `key` for the `apiKey` security scheme named `scheme` (a key of the
    /// card's `securitySchemes`) as the caller `principal`.
    #[must_use]
    pub fn api_key(
        mut self,
        scheme: impl Into<String>,
        key: impl Into<String>,
        principal: impl Into<String>,
    ) -> Self {
        self.api_keys.push(Credential {
            scheme: scheme.into(),
            secret: key.into(),
            principal: principal.into(),
        });
        self
    }

    /// Accepts the bearer `token` for the `http` bearer security scheme named
    /// `scheme` as the caller `principal`.
    #[must_use]
    pub fn bearer_token(
        mut self,
        scheme: impl Into<String>,
        token: impl Into<String>,
        principal: impl Into<String>,
    ) -> Self {
        self.bearer_tokens.push(Credential {
            scheme: scheme.into(),
            secret: token.into(),
            principal: principal.into(),
        });
        self
    }

    /// True when no credential is configured.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.api_keys.is_empty() && self.bearer_tokens.is_empty()
    }
}

impl fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthConfig")
            .field("api_keys", &self.api_keys)
            .field("bearer_tokens", &self.bearer_tokens)
            .finish()
    }
}

impl fmt::Debug for Credential {
    /// Shows whom the credential is for, never the secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("scheme", &self.scheme)
            .field("principal", &self.principal)
            .field("secret", &"<redacted>")
            .finish()
    }
}
