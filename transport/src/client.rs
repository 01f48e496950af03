//! A typed A2A client over JSON-RPC or HTTP+JSON (REST), with SSE streams, or
//! gRPC, speaking 1.0 or 0.3.0.
//!
//! [`A2aClient`] talks to one agent: it finds the endpoint from the agent card (or
//! takes it directly), sends each call as a JSON-RPC request, as the HTTP+JSON
//! resource the protos give it, or as a gRPC call, with the options' extension and
//! credential headers, and decodes the typed answer. It keeps connections open
//! between calls (one pooled HTTP client, shared by clones).
//!
//! # Which binding
//!
//! JSON-RPC, HTTP+JSON or gRPC: the card's interfaces are read in its order, and
//! the first of a binding this client speaks wins (agentyard's cards list them in
//! the order the server's config gives); a 0.3 card's `preferredTransport` decides.
//! [`ClientOptions::transport`] forces one (an endpoint given directly is then
//! dialled over it: the agent's base URL for HTTP+JSON, `host:port` for gRPC).
//! Over HTTP+JSON every call, unary or streaming, goes to its resource under the
//! interface URL; an error body (`google.rpc.Status` in 1.0, the error object in
//! 0.3) comes back as the same [`ClientError::JsonRpc`] a JSON-RPC call gives (the
//! code recovered from the `ErrorInfo` reason), and a refusal before the call (401,
//! an agent not served) as the same [`ClientError::Http`] (see `client/rest.rs`).
//! Over gRPC every call is the same typed call, sent as the protobuf message of
//! the version chosen, with headers as metadata (see `client/grpc.rs`).
//!
//! # Which protocol version
//!
//! The card decides. A card listing `supportedInterfaces` (a 1.0 card, or the
//! hybrid the SDK servers publish) is read in its preference order: the first
//! interface of a binding it speaks declared `1.0` wins, and only when there is none does the
//! client take a `0.3` one. A card without `supportedInterfaces` is a 0.3 card, and
//! an endpoint given directly is spoken to in 0.3, as before 1.0 existed.
//! [`ClientOptions::protocol_version`] forces a version instead. Every call carries
//! `A2A-Version` with the version chosen; 1.0 calls use the 1.0 method names and
//! bodies (through [`crate::a2a::v1`]) and carry the interface's `tenant`, and
//! their answers are converted to the same types a 0.3 call returns. The version
//! never changes after an error: a failed 1.0 call is returned, not retried in 0.3.
//!
//! ```no_run
//! use agentyard_transport::a2a::{Message, MessageSendParams, SendMessageResult};
//! use agentyard_transport::client::{A2aClient, ClientOptions};
//! use futures::StreamExt as _;
//!
//! # async fn run() -> Result<(), agentyard_transport::client::ClientError> {
//! let options = ClientOptions::new().bearer_token("t-456");
//! let client =
//!     A2aClient::connect("http://127.0.0.1:8080/.well-known/agent-card.json", options).await?;
//!
//! let params = MessageSendParams::new(Message::user_text("hello"));
//! if let SendMessageResult::Task(task) = client.send_message(params.clone()).await? {
//!     println!("task {} is {}", task.id, task.status.state);
//! }
//!
//! let mut events = client.send_message_stream(params).await?;
//! while let Some(event) = events.next().await {
//!     println!("{:?}", event?);
//! }
//! # Ok(())
//! # }
//! ```

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::stream::{BoxStream, Stream, StreamExt as _};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde::Deserialize as _;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::a2a::v1::{self, ProtocolVersion, VERSION_HEADER};
use crate::a2a::{
    AgentCard, DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, MessageSendParams, SendMessageResult, StreamEvent, Task,
    TaskIdParams, TaskPushNotificationConfig, TaskQueryParams, TransportProtocol,
};
use crate::jsonrpc::{A2aCall, A2aRequest, JsonRpcResponse, RequestId};
use crate::server::{EXTENSIONS_HEADER, V1_EXTENSIONS_HEADER};
use crate::service::A2aResult;

mod error;
mod grpc;
mod limit;
mod rest;
mod retry;
mod sse;

pub use error::ClientError;
pub use limit::DEFAULT_RESPONSE_LIMIT;
pub use retry::RetryPolicy;

/// The header a send's idempotency key travels in.
pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";

/// How long a connection may take to open unless the options say otherwise.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The one connection pool every client shares unless its options bring their own
/// (or another connect timeout): connections to a peer are reused across clients,
/// and a process calling many peers keeps one pool, not one per peer.
fn shared_http() -> reqwest::Client {
    static SHARED: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    SHARED
        .get_or_init(|| http_with(DEFAULT_CONNECT_TIMEOUT))
        .clone()
}

fn http_with(connect_timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .pool_idle_timeout(Duration::from_secs(60))
        .tcp_nodelay(true)
        .build()
        // Building fails only when the TLS backend cannot start; a client without
        // the timeouts still works.
        .unwrap_or_default()
}

/// The well-known card paths, newest first.
const CARD_PATHS: [&str; 2] = ["/.well-known/agent-card.json", "/.well-known/agent.json"];

/// How a client presents itself to a protected agent.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientAuth {
    /// An API key in a header (the card's `apiKey` scheme names it, e.g.
    /// `X-API-Key`).
    ApiKey {
        /// The header.
        header: String,
        /// The key.
        key: String,
    },
    /// `Authorization: Bearer <token>`.
    Bearer(String),
}

impl std::fmt::Debug for ClientAuth {
    /// Never shows the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ApiKey { header, .. } => f
                .debug_struct("ApiKey")
                .field("header", header)
                .field("key", &"<redacted>")
                .finish(),
            Self::Bearer(_) => f.debug_tuple("Bearer").field(&"<redacted>").finish(),
        }
    }
}

/// What every request of a client carries, and its time limit.
///
/// ```
/// use std::time::Duration;
/// use agentyard_transport::client::ClientOptions;
///
/// let options = ClientOptions::new()
///     .extension("https://example.com/ext/handoff/v1")
///     .api_key("X-API-Key", "k-123")
///     .timeout(Duration::from_secs(10));
/// assert_eq!(options.extensions(), ["https://example.com/ext/handoff/v1"]);
/// ```
#[derive(Clone, Default)]
pub struct ClientOptions {
    extensions: Vec<String>,
    auth: Option<ClientAuth>,
    timeout: Option<Duration>,
    version: Option<ProtocolVersion>,
    connect_timeout: Option<Duration>,
    retry: RetryPolicy,
    headers: Vec<(String, String)>,
    http: Option<reqwest::Client>,
    transport: Option<TransportProtocol>,
    response_limit: Option<usize>,
}

impl std::fmt::Debug for ClientOptions {
    /// Names the extra headers without their values: one may hold a credential.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("ClientOptions")
            .field("extensions", &self.extensions)
            .field("auth", &self.auth)
            .field("timeout", &self.timeout)
            .field("version", &self.version)
            .field("connect_timeout", &self.connect_timeout)
            .field("retry", &self.retry)
            .field("headers", &headers)
            .field("custom_http", &self.http.is_some())
            .field("transport", &self.transport)
            .field("response_limit", &self.response_limit)
            .finish()
    }
}

impl ClientOptions {
    /// No extensions, no credentials, no time limit.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            extensions: Vec::new(),
            auth: None,
            timeout: None,
            version: None,
            connect_timeout: None,
            retry: RetryPolicy::none(),
            headers: Vec::new(),
            http: None,
            transport: None,
            response_limit: None,
        }
    }

    /// The most bytes an answer, or one event of a stream, may hold over JSON-RPC and
    /// HTTP+JSON, and the agent card the client is made from (default
    /// [`DEFAULT_RESPONSE_LIMIT`], 16 MiB); a larger one fails the call (or ends the
    /// stream, or fails [`A2aClient::connect`]) with [`ClientError::TooLarge`] before
    /// more of it is read. gRPC has its own message limit, 4 MiB.
    #[must_use]
    pub const fn response_limit(mut self, bytes: usize) -> Self {
        self.response_limit = Some(bytes);
        self
    }

    /// The limit [`response_limit`](Self::response_limit) set, or the default.
    #[must_use]
    pub const fn response_limit_or_default(&self) -> usize {
        match self.response_limit {
            Some(bytes) => bytes,
            None => DEFAULT_RESPONSE_LIMIT,
        }
    }

    /// Speaks `binding` whatever the card prefers: the card's first interface of
    /// that binding (and of the version, when one is forced) is used, and an
    /// endpoint given directly is spoken to over it. This client speaks
    /// [`TransportProtocol::JsonRpc`], [`TransportProtocol::HttpJson`] and
    /// [`TransportProtocol::Grpc`]; by default it takes the first of them the card
    /// lists.
    #[must_use]
    pub fn transport(mut self, binding: TransportProtocol) -> Self {
        self.transport = Some(binding);
        self
    }

    /// The binding forced with [`transport`](Self::transport), if any.
    #[must_use]
    pub const fn forced_transport(&self) -> Option<&TransportProtocol> {
        self.transport.as_ref()
    }

    /// How long opening a connection may take.
    fn connect_timeout_or_default(&self) -> Duration {
        self.connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT)
    }

    /// Bounds the opening of each connection (default 10 s). Another value than the
    /// default gives the client its own connection pool.
    #[must_use]
    pub const fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Retries failed calls as `policy` says, where a retry cannot run the work
    /// twice; sends then carry an `Idempotency-Key` (their `messageId` unless a
    /// [`header`](Self::header) sets one). See [`RetryPolicy`].
    #[must_use]
    pub const fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The retry policy.
    #[must_use]
    pub const fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    /// Sends the header `name: value` with every call (after the client's own, so
    /// it can set `Idempotency-Key` or `traceparent`).
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let name = name.into();
        self.headers
            .retain(|(existing, _)| !existing.eq_ignore_ascii_case(&name));
        self.headers.push((name, value.into()));
        self
    }

    /// The extra headers every call carries.
    #[must_use]
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// Uses `http` (its pool, its timeouts) instead of the shared pool.
    #[must_use]
    pub fn http_client(mut self, http: reqwest::Client) -> Self {
        self.http = Some(http);
        self
    }

    /// The HTTP client these options call through.
    fn http(&self) -> reqwest::Client {
        match (&self.http, self.connect_timeout) {
            (Some(http), _) => http.clone(),
            (None, Some(timeout)) if timeout != DEFAULT_CONNECT_TIMEOUT => http_with(timeout),
            (None, _) => shared_http(),
        }
    }

    /// Speaks `version` whatever else the card offers: the card's first JSON-RPC
    /// interface of that version is used (connecting fails when it has none), and
    /// an endpoint given directly is spoken to in it.
    #[must_use]
    pub const fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.version = Some(version);
        self
    }

    /// The version forced with [`protocol_version`](Self::protocol_version), if
    /// any.
    #[must_use]
    pub const fn forced_version(&self) -> Option<ProtocolVersion> {
        self.version
    }

    /// Asks the agent to activate the extension `uri` (sent in `A2A-Extensions`
    /// in 1.0, `X-A2A-Extensions` in 0.3).
    #[must_use]
    pub fn extension(mut self, uri: impl Into<String>) -> Self {
        let uri = uri.into();
        if !self.extensions.contains(&uri) {
            self.extensions.push(uri);
        }
        self
    }

    /// Sends `key` in `header` with every call.
    #[must_use]
    pub fn api_key(mut self, header: impl Into<String>, key: impl Into<String>) -> Self {
        self.auth = Some(ClientAuth::ApiKey {
            header: header.into(),
            key: key.into(),
        });
        self
    }

    /// Sends `Authorization: Bearer <token>` with every call.
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.auth = Some(ClientAuth::Bearer(token.into()));
        self
    }

    /// Bounds each unary call (connecting, sending, and reading the answer).
    /// Streams are not bounded: they last as long as the task.
    #[must_use]
    pub const fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The extensions asked for.
    #[must_use]
    pub fn extensions(&self) -> &[String] {
        &self.extensions
    }

    /// The credential sent, if any.
    #[must_use]
    pub const fn auth(&self) -> Option<&ClientAuth> {
        self.auth.as_ref()
    }
}

/// A result and the extensions the agent activated for the call (its
/// `A2A-Extensions`, or in 0.3 `X-A2A-Extensions`, response header).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct A2aResponse<T> {
    /// The call's result.
    pub value: T,
    /// The activated extension URIs.
    pub extensions: Vec<String>,
}

/// The events of a `message/stream` or `tasks/resubscribe` call, read from SSE as
/// they arrive. The stream ends after the event marked final, after an error, or
/// when the server closes it (a client may then
/// [`resubscribe`](A2aClient::resubscribe)). Dropping it closes the connection.
#[must_use = "a stream does nothing unless polled"]
pub struct A2aStream {
    events: BoxStream<'static, Result<StreamEvent, ClientError>>,
    extensions: Vec<String>,
}

impl A2aStream {
    /// The extensions the agent activated for this stream.
    #[must_use]
    pub fn extensions(&self) -> &[String] {
        &self.extensions
    }
}

impl std::fmt::Debug for A2aStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aStream")
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

impl Stream for A2aStream {
    type Item = Result<StreamEvent, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.as_mut().poll_next(cx)
    }
}

/// A client for one A2A agent. Cheap to clone; clones share the connection pool
/// and the request id counter.
#[derive(Clone, Debug)]
pub struct A2aClient {
    http: reqwest::Client,
    endpoint: reqwest::Url,
    version: ProtocolVersion,
    /// The chosen interface's tenant, sent in every 1.0 request (0.3 has none).
    tenant: String,
    card: Option<Arc<AgentCard>>,
    options: ClientOptions,
    next_id: Arc<AtomicI64>,
    /// `Some` when calls go over gRPC (the card's preferred interface, or the
    /// options' forced binding) instead of JSON-RPC.
    grpc: Option<grpc::GrpcPath>,
    /// Whether calls go over HTTP+JSON (to resources under `endpoint`) rather than
    /// JSON-RPC (when not over gRPC).
    rest: bool,
}

impl A2aClient {
    /// Fetches the agent card published under `base_url`: first
    /// `{base_url}/.well-known/agent-card.json`, then the older
    /// `{base_url}/.well-known/agent.json`. A `base_url` that already ends in `.json`
    /// is fetched as it is.
    ///
    /// # Errors
    ///
    /// [`ClientError::InvalidUrl`] for a bad URL; the error of the last attempt
    /// otherwise (HTTP status, transport or decode).
    pub async fn resolve_card(base_url: &str) -> Result<AgentCard, ClientError> {
        let (url, value) = fetch_card(&shared_http(), base_url, DEFAULT_RESPONSE_LIMIT).await?;
        card_from_value(value, &url)
    }

    /// A client for the agent at `url` with default options; see
    /// [`connect`](Self::connect).
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    pub async fn new(url: &str) -> Result<Self, ClientError> {
        Self::connect(url, ClientOptions::new()).await
    }

    /// A client for the agent at `url`: an agent card URL (ending in `.json`), whose
    /// card is fetched and picks the endpoint and version (see the
    /// [module](self)), or the JSON-RPC endpoint itself, spoken to in 0.3 unless
    /// the options force a version.
    ///
    /// # Errors
    ///
    /// [`ClientError::InvalidUrl`] for a bad URL (or a card whose chosen `url` is
    /// bad), [`ClientError::Protocol`] for a card offering no JSON-RPC interface
    /// (of the forced version), and what fetching the card can fail with.
    pub async fn connect(url: &str, options: ClientOptions) -> Result<Self, ClientError> {
        let http = options.http();
        if is_card_url(url) {
            let limit = options.response_limit_or_default();
            let (card_url, value) = fetch_card_retrying(&http, url, options.retry, limit).await?;
            Self::with_card_value(http, value, &card_url, options)
        } else {
            let version = options.version.unwrap_or(ProtocolVersion::V0_3);
            let binding = options
                .transport
                .clone()
                .unwrap_or(TransportProtocol::JsonRpc);
            Self::build_at(http, url, &binding, version, String::new(), None, options)
        }
    }

    /// A client for the agent `card` describes, at its `url`, in 0.3 or the
    /// version the options force (the internal card has no interface versions;
    /// see [`from_v1_card`](Self::from_v1_card)).
    ///
    /// # Errors
    ///
    /// [`ClientError::InvalidUrl`] when the card's `url` cannot be parsed.
    pub fn from_card(card: AgentCard, options: ClientOptions) -> Result<Self, ClientError> {
        let version = options.version.unwrap_or(ProtocolVersion::V0_3);
        let (url, binding) = legacy_interface(&card, options.transport.as_ref())?;
        Self::build_at(
            options.http(),
            &url,
            &binding,
            version,
            String::new(),
            Some(card),
            options,
        )
    }

    /// A client for the agent a 1.0 (or hybrid) card describes, at the interface
    /// chosen as the [module](self) says, with its tenant.
    ///
    /// # Errors
    ///
    /// [`ClientError::Protocol`] when the card offers no JSON-RPC interface (of the
    /// forced version), [`ClientError::InvalidUrl`] when its `url` is bad.
    pub fn from_v1_card(card: v1::AgentCard, options: ClientOptions) -> Result<Self, ClientError> {
        let (interface, version) = choose_interface(
            &card.supported_interfaces,
            options.version,
            options.transport.as_ref(),
        )?;
        let (url, binding) = (
            interface.url.clone(),
            TransportProtocol::from(interface.protocol_binding.as_str()),
        );
        let tenant = interface.tenant.clone();
        let card = AgentCard::try_from(card).ok();
        Self::build_at(
            options.http(),
            &url,
            &binding,
            version,
            tenant,
            card,
            options,
        )
    }

    /// A client from a fetched card of any shape.
    fn with_card_value(
        http: reqwest::Client,
        value: Value,
        card_url: &str,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        let interfaces = match value.get("supportedInterfaces") {
            Some(list) => Vec::<v1::AgentInterface>::deserialize(list).map_err(|source| {
                ClientError::Decode {
                    what: format!("`supportedInterfaces` of the agent card at {card_url}"),
                    source,
                }
            })?,
            None => Vec::new(),
        };
        if interfaces.is_empty() {
            // A 0.3 card: its `url` is the endpoint, as before 1.0.
            let card = card_from_value(value, card_url)?;
            if options.version == Some(ProtocolVersion::V1_0) {
                return Err(ClientError::Protocol(format!(
                    "the agent card at {card_url} offers only A2A 0.3, and 1.0 was asked for"
                )));
            }
            let (url, binding) = legacy_interface(&card, options.transport.as_ref())?;
            return Self::build_at(
                http,
                &url,
                &binding,
                ProtocolVersion::V0_3,
                String::new(),
                Some(card),
                options,
            );
        }
        let (interface, version) =
            choose_interface(&interfaces, options.version, options.transport.as_ref())?;
        let binding = TransportProtocol::from(interface.protocol_binding.as_str());
        let url = interface.url.clone();
        let tenant = interface.tenant.clone();
        // The card itself is informative; a detail the internal model cannot hold
        // (a device-code OAuth flow, say) must not keep the client from calling.
        let card = card_from_value(value, card_url).ok();
        Self::build_at(http, &url, &binding, version, tenant, card, options)
    }

    /// A client for the interface at `url` of `binding`: JSON-RPC at an HTTP URL, or
    /// gRPC at a `host:port` target.
    fn build_at(
        http: reqwest::Client,
        url: &str,
        binding: &TransportProtocol,
        version: ProtocolVersion,
        tenant: String,
        card: Option<AgentCard>,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        match binding {
            TransportProtocol::JsonRpc => Ok(Self::build(
                http,
                parse_url(url)?,
                version,
                tenant,
                card,
                options,
            )),
            TransportProtocol::HttpJson => {
                let mut client = Self::build(http, parse_url(url)?, version, tenant, card, options);
                client.rest = true;
                Ok(client)
            }
            TransportProtocol::Grpc => {
                let path = grpc::GrpcPath::new(
                    url,
                    version,
                    tenant.clone(),
                    options.connect_timeout_or_default(),
                )?;
                let endpoint = parse_url(path.target())?;
                let mut client = Self::build(http, endpoint, version, tenant, card, options);
                client.grpc = Some(path);
                Ok(client)
            }
            other => Err(ClientError::Protocol(format!(
                "this client does not speak the {} binding",
                other.as_str()
            ))),
        }
    }

    fn build(
        http: reqwest::Client,
        endpoint: reqwest::Url,
        version: ProtocolVersion,
        tenant: String,
        card: Option<AgentCard>,
        options: ClientOptions,
    ) -> Self {
        Self {
            http,
            endpoint,
            version,
            tenant,
            card: card.map(Arc::new),
            options,
            next_id: Arc::new(AtomicI64::new(1)),
            grpc: None,
            rest: false,
        }
    }

    /// This client with the header `name: value` on every call (a cheap copy that
    /// shares the pool and request ids), e.g. a call's `traceparent`.
    #[must_use]
    pub fn with_header(&self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let mut copy = self.clone();
        copy.options = copy.options.header(name, value);
        copy
    }

    /// The endpoint calls go to: the JSON-RPC URL, or for gRPC the target
    /// (`http://host:port`).
    #[must_use]
    pub fn endpoint(&self) -> &str {
        self.endpoint.as_str()
    }

    /// The binding calls use.
    #[must_use]
    pub const fn transport(&self) -> TransportProtocol {
        if self.grpc.is_some() {
            TransportProtocol::Grpc
        } else if self.rest {
            TransportProtocol::HttpJson
        } else {
            TransportProtocol::JsonRpc
        }
    }

    /// The protocol version every call is made in.
    #[must_use]
    pub const fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// The tenant sent with every 1.0 call (empty: none).
    #[must_use]
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    /// The agent's card, when the client was made from one.
    #[must_use]
    pub fn card(&self) -> Option<&AgentCard> {
        self.card.as_deref()
    }

    /// The options every call carries.
    #[must_use]
    pub const fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// `message/send`: a task, or a direct message reply.
    ///
    /// # Errors
    ///
    /// [`ClientError`]: the agent's JSON-RPC error, an HTTP status, transport or
    /// decode failures.
    pub async fn send_message(
        &self,
        params: MessageSendParams,
    ) -> Result<SendMessageResult, ClientError> {
        if self.grpc.is_some() {
            return match self.grpc_unary(A2aRequest::SendMessage(params)).await? {
                A2aResult::Send(result) => Ok(result),
                other => Err(grpc::unexpected("SendMessage", &other)),
            };
        }
        self.typed::<_, v1::SendMessageResponse>(A2aRequest::SendMessage(params))
            .await
    }

    /// `message/stream`: the task's events as they happen.
    ///
    /// # Errors
    ///
    /// As [`send_message`](Self::send_message), for the opening of the stream;
    /// later failures arrive as items.
    pub async fn send_message_stream(
        &self,
        params: MessageSendParams,
    ) -> Result<A2aStream, ClientError> {
        self.stream(A2aRequest::SendStreamingMessage(params)).await
    }

    /// `tasks/get`.
    ///
    /// # Errors
    ///
    /// As [`send_message`](Self::send_message); -32001 for an unknown task.
    pub async fn get_task(&self, params: TaskQueryParams) -> Result<Task, ClientError> {
        if self.grpc.is_some() {
            return match self.grpc_unary(A2aRequest::GetTask(params)).await? {
                A2aResult::Task(task) => Ok(task),
                other => Err(grpc::unexpected("GetTask", &other)),
            };
        }
        self.typed::<_, v1::Task>(A2aRequest::GetTask(params)).await
    }

    /// `tasks/cancel`.
    ///
    /// # Errors
    ///
    /// As [`send_message`](Self::send_message); -32002 for a task that already
    /// ended.
    pub async fn cancel_task(&self, params: TaskIdParams) -> Result<Task, ClientError> {
        if self.grpc.is_some() {
            return match self.grpc_unary(A2aRequest::CancelTask(params)).await? {
                A2aResult::Task(task) => Ok(task),
                other => Err(grpc::unexpected("CancelTask", &other)),
            };
        }
        self.typed::<_, v1::Task>(A2aRequest::CancelTask(params))
            .await
    }

    /// `tasks/resubscribe`: the events of a running task from now on.
    ///
    /// # Errors
    ///
    /// As [`send_message_stream`](Self::send_message_stream).
    pub async fn resubscribe(&self, params: TaskIdParams) -> Result<A2aStream, ClientError> {
        self.stream(A2aRequest::TaskResubscription(params)).await
    }

    /// `tasks/pushNotificationConfig/set`: the config as the agent stored it.
    ///
    /// # Errors
    ///
    /// As [`send_message`](Self::send_message); -32003 when the agent sends no push
    /// notifications.
    pub async fn set_push_config(
        &self,
        config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        let request = A2aRequest::SetTaskPushNotificationConfig(config);
        if self.grpc.is_some() {
            return match self.grpc_unary(request).await? {
                A2aResult::PushConfig(config) => Ok(config),
                other => Err(grpc::unexpected("CreateTaskPushNotificationConfig", &other)),
            };
        }
        self.typed::<_, v1::TaskPushNotificationConfig>(request)
            .await
    }

    /// `tasks/pushNotificationConfig/get`.
    ///
    /// # Errors
    ///
    /// As [`set_push_config`](Self::set_push_config).
    pub async fn get_push_config(
        &self,
        params: GetTaskPushNotificationConfigParams,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        let request = A2aRequest::GetTaskPushNotificationConfig(params);
        if self.grpc.is_some() {
            return match self.grpc_unary(request).await? {
                A2aResult::PushConfig(config) => Ok(config),
                other => Err(grpc::unexpected("GetTaskPushNotificationConfig", &other)),
            };
        }
        self.typed::<_, v1::TaskPushNotificationConfig>(request)
            .await
    }

    /// `tasks/pushNotificationConfig/list`.
    ///
    /// # Errors
    ///
    /// As [`set_push_config`](Self::set_push_config).
    pub async fn list_push_configs(
        &self,
        params: ListTaskPushNotificationConfigParams,
    ) -> Result<Vec<TaskPushNotificationConfig>, ClientError> {
        let request = A2aRequest::ListTaskPushNotificationConfig(params);
        if self.grpc.is_some() {
            return match self.grpc_unary(request).await? {
                A2aResult::PushConfigs(configs) => Ok(configs),
                other => Err(grpc::unexpected("ListTaskPushNotificationConfigs", &other)),
            };
        }
        self.typed::<_, v1::ListTaskPushNotificationConfigsResponse>(request)
            .await
    }

    /// `tasks/pushNotificationConfig/delete`.
    ///
    /// # Errors
    ///
    /// As [`set_push_config`](Self::set_push_config).
    pub async fn delete_push_config(
        &self,
        params: DeleteTaskPushNotificationConfigParams,
    ) -> Result<(), ClientError> {
        let request = A2aRequest::DeleteTaskPushNotificationConfig(params);
        if self.grpc.is_some() {
            return match self.grpc_unary(request).await? {
                A2aResult::Deleted => Ok(()),
                other => Err(grpc::unexpected("DeleteTaskPushNotificationConfig", &other)),
            };
        }
        self.exchange(request).await?;
        Ok(())
    }

    /// `agent/getAuthenticatedExtendedCard`: the card for an authenticated caller.
    ///
    /// # Errors
    ///
    /// As [`send_message`](Self::send_message); HTTP 401 without valid
    /// credentials, -32007 when the agent has no extended card.
    pub async fn authenticated_extended_card(&self) -> Result<AgentCard, ClientError> {
        if let Some(grpc) = &self.grpc {
            return grpc.extended_card(&self.options).await;
        }
        let (value, _) = self
            .exchange(A2aRequest::GetAuthenticatedExtendedCard)
            .await?;
        card_from_value(value, "`GetExtendedAgentCard`")
    }

    /// `ListTasks` (A2A 1.0 only): the tasks the caller may see, filtered and
    /// paged; the interface's tenant, when it names one, replaces
    /// `params.tenant`.
    ///
    /// # Errors
    ///
    /// [`ClientError::Protocol`] without sending anything when the client speaks
    /// 0.3, which has no such method; otherwise as
    /// [`send_message`](Self::send_message).
    pub async fn list_tasks(
        &self,
        params: v1::ListTasksRequest,
    ) -> Result<v1::ListTasksResponse, ClientError> {
        if self.version == ProtocolVersion::V0_3 {
            return Err(ClientError::Protocol(
                "`ListTasks` is A2A 1.0; this client speaks 0.3 to the agent".to_owned(),
            ));
        }
        if self.grpc.is_some() {
            return match self.grpc_unary(A2aRequest::ListTasks(params)).await? {
                A2aResult::TaskList(list) => Ok(list),
                other => Err(grpc::unexpected("ListTasks", &other)),
            };
        }
        let (value, _) = self.exchange(A2aRequest::ListTasks(params)).await?;
        decode_as::<v1::ListTasksResponse, v1::ListTasksResponse>(
            value,
            ProtocolVersion::V0_3,
            "`ListTasks` result",
        )
    }

    /// Any unary call, with its result decoded as `T` and the extensions the agent
    /// activated. `T` is the 0.3 form of the result (the internal model) in either
    /// version: a 1.0 result is converted first.
    ///
    /// # Errors
    ///
    /// [`ClientError::JsonRpc`] for the agent's error response,
    /// [`ClientError::Http`] for an HTTP error status, [`ClientError::Decode`] or
    /// [`ClientError::Protocol`] for an answer that is not a JSON-RPC response to
    /// this request with a `T` result, [`ClientError::Transport`] when the exchange
    /// fails.
    pub async fn call<T: DeserializeOwned>(
        &self,
        request: A2aRequest,
    ) -> Result<A2aResponse<T>, ClientError> {
        let method = request.method();
        if self.grpc.is_some() {
            let (result, extensions) = Box::pin(self.grpc_call(request)).await?;
            // The result's 0.3 form is what `T` reads, whichever binding carried it.
            let value = serde_json::to_value(&result)
                .and_then(serde_json::from_value)
                .map_err(|source| ClientError::Decode {
                    what: format!("`{method}` result"),
                    source,
                })?;
            return Ok(A2aResponse { value, extensions });
        }
        let kind = ResultKind::of(&request);
        let (result, extensions) = self.exchange(request).await?;
        let result = match self.version {
            ProtocolVersion::V0_3 => result,
            ProtocolVersion::V1_0 => kind.to_internal(result)?,
        };
        let value = serde_json::from_value(result).map_err(|source| ClientError::Decode {
            what: format!("`{method}` result"),
            source,
        })?;
        Ok(A2aResponse { value, extensions })
    }

    /// A unary call's result as sent, in the client's version's form, and the
    /// activated extensions.
    async fn exchange(&self, request: A2aRequest) -> Result<(Value, Vec<String>), ClientError> {
        let key = self.idempotency_key(&request);
        let safe = retry_safe(&request, key.is_some());
        if self.rest {
            // Boxed for the reason given in `stream`.
            return Box::pin(self.rest_exchange(request, key, safe)).await;
        }
        let outgoing = self.outgoing(request);
        let method = outgoing.method();
        let (response, bytes) = self
            .retrying(safe, || async {
                let mut builder = self.request(&outgoing).header(ACCEPT, "application/json");
                if let Some(key) = &key {
                    builder = builder.header(IDEMPOTENCY_HEADER, key);
                }
                builder = self.extra_headers(builder);
                if let Some(timeout) = self.options.timeout {
                    builder = builder.timeout(timeout);
                }
                let response = checked(builder.send().await?).await?;
                let headers = response.headers().clone();
                // Reading the body is part of the attempt: a connection that breaks
                // mid-answer is retried like one that never opened.
                let bytes = limit::read(response, self.options.response_limit_or_default()).await?;
                Ok((headers, bytes))
            })
            .await?;
        let extensions = echoed(&response, self.version);
        let answer: JsonRpcResponse<Value> =
            serde_json::from_slice(&bytes).map_err(|source| ClientError::Decode {
                what: format!("JSON-RPC response to `{method}`"),
                source,
            })?;
        check_id(&answer, outgoing.id())?;
        let result = answer.into_result().map_err(ClientError::JsonRpc)?;
        Ok((result, extensions))
    }

    /// A typed unary call: the result read as `T` in 0.3, as `V1` then converted
    /// in 1.0 (the fast path: no detour through a JSON value).
    async fn typed<T, V1>(&self, request: A2aRequest) -> Result<T, ClientError>
    where
        T: DeserializeOwned,
        V1: DeserializeOwned + TryInto<T>,
        V1::Error: std::fmt::Display,
    {
        let method = request.method();
        let (value, _) = self.exchange(request).await?;
        decode_as::<T, V1>(value, self.version, &format!("`{method}` result"))
    }

    /// Any streaming call (`message/stream`, `tasks/resubscribe`).
    ///
    /// A server that answers with a single JSON-RPC response instead of SSE gets its
    /// error returned here, or its result as a one-event stream; so does one whose
    /// stream's first event is an error (the call was refused before it started). The
    /// stream is returned once its first event has arrived.
    ///
    /// # Errors
    ///
    /// As [`call`](Self::call), for the opening of the stream.
    pub async fn stream(&self, request: A2aRequest) -> Result<A2aStream, ClientError> {
        let key = self.idempotency_key(&request);
        let safe = retry_safe(&request, key.is_some());
        // The other bindings' calls are boxed: held inline, the gRPC one made every
        // stream's future 7 KiB instead of under 3, and a future is copied whole
        // each time it is moved (into a box, a timeout, a span).
        if let Some(grpc) = &self.grpc {
            return Box::pin(self.retrying(safe, || {
                grpc.stream(request.clone(), &self.options, key.as_deref())
            }))
            .await;
        }
        if self.rest {
            return Box::pin(self.rest_stream(request, key, safe)).await;
        }
        let outgoing = self.outgoing(request);
        let method = outgoing.method();
        let response = self
            .retrying(safe, || async {
                let mut builder = self.request(&outgoing).header(ACCEPT, "text/event-stream");
                if let Some(key) = &key {
                    builder = builder.header(IDEMPOTENCY_HEADER, key);
                }
                builder = self.extra_headers(builder);
                checked(builder.send().await?).await
            })
            .await?;
        let extensions = echoed(response.headers(), self.version);
        let content_type = media_type(response.headers());
        let id = outgoing.id().clone();
        let events = match content_type.as_str() {
            "text/event-stream" => {
                let url = response.url().to_string();
                let mut events = sse::events(
                    response.bytes_stream(),
                    id,
                    self.version,
                    ClientError::Transport,
                    url,
                    self.options.response_limit_or_default(),
                );
                // A stream whose first event is an error never opened: the server
                // refused the call (an unknown task, say) in its only event. That is
                // the opening's error, as HTTP+JSON and gRPC report it, so a caller
                // sees one behaviour whatever the binding.
                match events.next().await {
                    Some(Err(error @ ClientError::JsonRpc(_))) => return Err(error),
                    Some(first) => futures::stream::once(async { first }).chain(events).boxed(),
                    None => events,
                }
            }
            "application/json" => {
                let bytes = limit::read(response, self.options.response_limit_or_default()).await?;
                let data = String::from_utf8_lossy(&bytes);
                let event = sse::decode(&data, &id, self.version)?;
                futures::stream::once(async { Ok(event) }).boxed()
            }
            other => {
                return Err(ClientError::Protocol(format!(
                    "`{method}` was answered with content type `{other}`, not text/event-stream"
                )));
            }
        };
        Ok(A2aStream { events, extensions })
    }

    /// A unary call over gRPC: its result. Boxed, so that the JSON-RPC path's
    /// futures do not carry the gRPC call's size (see `stream`).
    async fn grpc_unary(&self, request: A2aRequest) -> Result<A2aResult, ClientError> {
        Ok(Box::pin(self.grpc_call(request)).await?.0)
    }

    /// A unary call over gRPC, retried as the JSON-RPC path retries: its result and
    /// the activated extensions.
    async fn grpc_call(
        &self,
        request: A2aRequest,
    ) -> Result<(A2aResult, Vec<String>), ClientError> {
        let Some(grpc) = &self.grpc else {
            return Err(ClientError::Protocol(
                "this client does not call over gRPC".to_owned(),
            ));
        };
        let key = self.idempotency_key(&request);
        let safe = retry_safe(&request, key.is_some());
        self.retrying(safe, || {
            grpc.unary(request.clone(), &self.options, key.as_deref())
        })
        .await
    }

    /// Runs `attempt` until it succeeds, fails in a way not worth retrying, or the
    /// policy's tries are used up; only `safe` calls are tried more than once.
    async fn retrying<T, F, Fut>(&self, safe: bool, attempt: F) -> Result<T, ClientError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, ClientError>>,
    {
        let policy = self.options.retry;
        let mut tries = 1;
        loop {
            match attempt().await {
                Ok(value) => return Ok(value),
                Err(error) => {
                    let wait = if safe {
                        policy.delay(tries, &error)
                    } else {
                        None
                    };
                    let Some(wait) = wait else {
                        return Err(error);
                    };
                    tracing::debug!(
                        endpoint = %self.endpoint,
                        attempt = tries,
                        wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                        %error,
                        "A2A call failed; retrying"
                    );
                    tokio::time::sleep(wait).await;
                    tries += 1;
                }
            }
        }
    }

    /// The idempotency key a send carries: one set in the options' headers is sent
    /// with them; with retries on, the message's id.
    fn idempotency_key(&self, request: &A2aRequest) -> Option<String> {
        let explicit = self
            .options
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case(IDEMPOTENCY_HEADER));
        match request {
            A2aRequest::SendMessage(params) | A2aRequest::SendStreamingMessage(params) => {
                if explicit {
                    // Sent by `extra_headers`; only its presence matters here.
                    None
                } else if self.options.retry.retries() {
                    Some(params.message.message_id.to_string())
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// The options' extra headers on `builder`.
    fn extra_headers(&self, mut builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        for (name, value) in &self.options.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder
    }

    fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// `request` with a fresh id, in the client's version (1.0 with its tenant).
    fn outgoing(&self, request: A2aRequest) -> Outgoing {
        let id = self.next_id();
        match self.version {
            ProtocolVersion::V0_3 => Outgoing::V0_3(A2aCall::new(id, request)),
            ProtocolVersion::V1_0 => {
                let mut params = v1::Request::from(request);
                if !self.tenant.is_empty() {
                    set_tenant(&mut params, &self.tenant);
                }
                Outgoing::V1_0(V1Call {
                    jsonrpc: "2.0",
                    id,
                    method: params.method(),
                    params,
                })
            }
        }
    }

    /// A POST of `call` with the version header and the options' headers.
    fn request(&self, call: &Outgoing) -> reqwest::RequestBuilder {
        self.decorate(self.http.post(self.endpoint.clone()).json(call))
    }

    /// What every HTTP call carries whatever its binding: the version header, the
    /// extensions asked for, the credential.
    fn decorate(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let mut builder = builder.header(VERSION_HEADER, self.version.as_str());
        if !self.options.extensions.is_empty() {
            builder = builder.header(
                extensions_header(self.version),
                self.options.extensions.join(", "),
            );
        }
        match &self.options.auth {
            Some(ClientAuth::ApiKey { header, key }) => builder.header(header.as_str(), key),
            Some(ClientAuth::Bearer(token)) => builder.bearer_auth(token),
            None => builder,
        }
    }
}

/// Whether repeating `request` cannot run work twice: reads, cancels and
/// resubscriptions, and sends that carry an idempotency key (`keyed`).
const fn retry_safe(request: &A2aRequest, keyed: bool) -> bool {
    match request {
        A2aRequest::SendMessage(_) | A2aRequest::SendStreamingMessage(_) => keyed,
        A2aRequest::GetTask(_)
        | A2aRequest::CancelTask(_)
        | A2aRequest::TaskResubscription(_)
        | A2aRequest::GetTaskPushNotificationConfig(_)
        | A2aRequest::ListTaskPushNotificationConfig(_)
        | A2aRequest::GetAuthenticatedExtendedCard
        | A2aRequest::ListTasks(_) => true,
        A2aRequest::SetTaskPushNotificationConfig(_)
        | A2aRequest::DeleteTaskPushNotificationConfig(_) => false,
    }
}

/// [`fetch_card`] retried as `policy` says (a card fetch is a read).
async fn fetch_card_retrying(
    http: &reqwest::Client,
    url: &str,
    policy: RetryPolicy,
    limit: usize,
) -> Result<(String, Value), ClientError> {
    let mut tries = 1;
    loop {
        match fetch_card(http, url, limit).await {
            Ok(found) => return Ok(found),
            Err(error) => {
                let Some(wait) = policy.delay(tries, &error) else {
                    return Err(error);
                };
                tokio::time::sleep(wait).await;
                tries += 1;
            }
        }
    }
}

/// Whether `url` names a card rather than an endpoint.
fn is_card_url(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.ends_with(".json")
}

fn parse_url(url: &str) -> Result<reqwest::Url, ClientError> {
    reqwest::Url::parse(url).map_err(|error| ClientError::InvalidUrl {
        url: url.to_owned(),
        reason: error.to_string(),
    })
}

/// Fetches a card (its URL and its JSON) from a card URL, or from the well-known
/// paths under a base URL, reading at most `limit` bytes of it (the client's
/// response limit: a card is another party's answer like any other).
async fn fetch_card(
    http: &reqwest::Client,
    url: &str,
    limit: usize,
) -> Result<(String, Value), ClientError> {
    if is_card_url(url) {
        let value = get_card(http, parse_url(url)?, limit).await?;
        return Ok((url.to_owned(), value));
    }
    let base = url.trim_end_matches('/');
    let mut last = None;
    for path in CARD_PATHS {
        let card_url = format!("{base}{path}");
        match get_card(http, parse_url(&card_url)?, limit).await {
            Ok(card) => return Ok((card_url, card)),
            // Only a missing card means "try the older path"; anything else would
            // fail the same way there.
            Err(error @ ClientError::Http { .. }) => last = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last.unwrap_or_else(|| ClientError::Protocol("no card path to try".to_owned())))
}

/// A card's JSON, whatever its shape, at most `limit` bytes of it.
async fn get_card(
    http: &reqwest::Client,
    url: reqwest::Url,
    limit: usize,
) -> Result<Value, ClientError> {
    let response = checked(
        http.get(url.clone())
            .header(ACCEPT, "application/json")
            .send()
            .await?,
    )
    .await?;
    let bytes = limit::read(response, limit).await?;
    serde_json::from_slice(&bytes).map_err(|source| ClientError::Decode {
        what: format!("agent card at {url}"),
        source,
    })
}

/// The response if its status is a success; otherwise [`ClientError::Http`] with
/// what its body says.
async fn checked(response: reqwest::Response) -> Result<reqwest::Response, ClientError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let url = response.url().to_string();
    let retry_after = retry::retry_after(response.headers());
    let body = limit::error_body(response).await;
    let error = serde_json::from_slice::<JsonRpcResponse<Value>>(&body)
        .ok()
        .and_then(|answer| answer.into_result().err());
    let message = match &error {
        Some(error) => error.message.clone(),
        None => {
            let text = String::from_utf8_lossy(&body);
            // Enough to recognize an error page, not a whole one.
            text.chars().take(200).collect()
        }
    };
    Err(ClientError::Http {
        status,
        url,
        error,
        message,
        retry_after_secs: retry_after,
    })
}

/// A response must answer the request's id; an error response may carry `null`
/// (the server could not read the id).
fn check_id<T>(answer: &JsonRpcResponse<T>, sent: &RequestId) -> Result<(), ClientError> {
    let answered = answer.id();
    let null_error = answered.is_null() && matches!(answer, JsonRpcResponse::Error(_));
    if answered == sent || null_error {
        Ok(())
    } else {
        Err(ClientError::Protocol(format!(
            "the response answers request id {answered}, not {sent}"
        )))
    }
}

/// The content type without parameters, lowercase.
fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(|value| crate::a2a::media_essence(value).to_ascii_lowercase())
        .unwrap_or_default()
}

/// The extension URIs echoed in the version's extensions header.
fn echoed(headers: &HeaderMap, version: ProtocolVersion) -> Vec<String> {
    headers
        .get_all(extensions_header(version))
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|uri| !uri.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The header extensions are asked for and echoed in.
const fn extensions_header(version: ProtocolVersion) -> &'static str {
    match version {
        ProtocolVersion::V0_3 => EXTENSIONS_HEADER,
        ProtocolVersion::V1_0 => V1_EXTENSIONS_HEADER,
    }
}

/// The bindings this client speaks, when none is forced.
const SPOKEN: [TransportProtocol; 3] = [
    TransportProtocol::JsonRpc,
    TransportProtocol::HttpJson,
    TransportProtocol::Grpc,
];

/// The interface to call and its version: among the interfaces of the forced
/// binding (else of a binding this client speaks, JSON-RPC or gRPC), the first of
/// the forced version, or else the first declared 1.0, or else the first 0.3. The
/// card's order decides between bindings: its first interface is its preferred.
fn choose_interface<'a>(
    interfaces: &'a [v1::AgentInterface],
    forced: Option<ProtocolVersion>,
    binding: Option<&TransportProtocol>,
) -> Result<(&'a v1::AgentInterface, ProtocolVersion), ClientError> {
    let wanted: &[ProtocolVersion] = match &forced {
        Some(version) => std::slice::from_ref(version),
        None => &ProtocolVersion::ALL,
    };
    let bindings: &[TransportProtocol] = match binding {
        Some(binding) => std::slice::from_ref(binding),
        None => &SPOKEN,
    };
    let spoken = |interface: &&v1::AgentInterface| {
        bindings.iter().any(|binding| {
            interface
                .protocol_binding
                .eq_ignore_ascii_case(binding.as_str())
        })
    };
    for version in wanted {
        let found = interfaces.iter().filter(spoken).find(|interface| {
            ProtocolVersion::from_header(Some(&interface.protocol_version)) == Ok(*version)
        });
        if let Some(interface) = found {
            return Ok((interface, *version));
        }
    }
    let versions: Vec<&str> = wanted.iter().map(|version| version.as_str()).collect();
    let bindings: Vec<&str> = bindings.iter().map(TransportProtocol::as_str).collect();
    Err(ClientError::Protocol(format!(
        "the agent card offers no {} interface in A2A {}",
        bindings.join(" or "),
        versions.join(" or ")
    )))
}

/// The URL and binding to call on a 0.3 card (no `supportedInterfaces`): its `url`
/// in its `preferredTransport` when that is gRPC, else in JSON-RPC (as before gRPC
/// was spoken); with a forced binding, the first of `url` and
/// `additionalInterfaces` of that binding.
fn legacy_interface(
    card: &AgentCard,
    forced: Option<&TransportProtocol>,
) -> Result<(String, TransportProtocol), ClientError> {
    let preferred = card
        .preferred_transport
        .clone()
        .unwrap_or(TransportProtocol::JsonRpc);
    let Some(forced) = forced else {
        let binding = match preferred {
            TransportProtocol::Grpc | TransportProtocol::HttpJson => preferred,
            _ => TransportProtocol::JsonRpc,
        };
        return Ok((card.url.clone(), binding));
    };
    if &preferred == forced {
        return Ok((card.url.clone(), forced.clone()));
    }
    card.additional_interfaces
        .iter()
        .flatten()
        .find(|interface| &interface.transport == forced)
        .map(|interface| (interface.url.clone(), forced.clone()))
        .ok_or_else(|| {
            ClientError::Protocol(format!(
                "the agent card offers no {} interface",
                forced.as_str()
            ))
        })
}

/// The internal card from a card of any shape: 0.3 and hybrid cards are read as
/// they are, a pure 1.0 card is converted.
fn card_from_value(value: Value, source: &str) -> Result<AgentCard, ClientError> {
    let legacy = match AgentCard::deserialize(&value) {
        Ok(card) => return Ok(card),
        Err(error) => error,
    };
    if value.get("supportedInterfaces").is_none() {
        return Err(ClientError::Decode {
            what: format!("agent card at {source}"),
            source: legacy,
        });
    }
    let card = v1::AgentCard::deserialize(&value).map_err(|error| ClientError::Decode {
        what: format!("1.0 agent card at {source}"),
        source: error,
    })?;
    AgentCard::try_from(card).map_err(|error| {
        ClientError::Protocol(format!(
            "the 1.0 agent card at {source} does not fit the internal card: {error}"
        ))
    })
}

/// A result in `version`'s form as `T`: read directly in 0.3, read as `V1` and
/// converted in 1.0.
fn decode_as<T, V1>(value: Value, version: ProtocolVersion, what: &str) -> Result<T, ClientError>
where
    T: DeserializeOwned,
    V1: DeserializeOwned + TryInto<T>,
    V1::Error: std::fmt::Display,
{
    let decode_error = |source| ClientError::Decode {
        what: what.to_owned(),
        source,
    };
    match version {
        ProtocolVersion::V0_3 => T::deserialize(value).map_err(decode_error),
        ProtocolVersion::V1_0 => {
            let wire = V1::deserialize(value).map_err(decode_error)?;
            wire.try_into().map_err(|error| {
                ClientError::Protocol(format!(
                    "the 1.0 {what} does not fit the internal model: {error}"
                ))
            })
        }
    }
}

/// What a 1.0 result is, so [`A2aClient::call`] can convert it to its 0.3 form.
#[derive(Clone, Copy)]
enum ResultKind {
    Send,
    Task,
    StreamEvent,
    PushConfig,
    PushConfigs,
    Card,
    /// The same in both forms (`ListTasks`, the empty delete result).
    Same,
}

impl ResultKind {
    const fn of(request: &A2aRequest) -> Self {
        match request {
            A2aRequest::SendMessage(_) => Self::Send,
            A2aRequest::SendStreamingMessage(_) | A2aRequest::TaskResubscription(_) => {
                Self::StreamEvent
            }
            A2aRequest::GetTask(_) | A2aRequest::CancelTask(_) => Self::Task,
            A2aRequest::SetTaskPushNotificationConfig(_)
            | A2aRequest::GetTaskPushNotificationConfig(_) => Self::PushConfig,
            A2aRequest::ListTaskPushNotificationConfig(_) => Self::PushConfigs,
            A2aRequest::GetAuthenticatedExtendedCard => Self::Card,
            A2aRequest::DeleteTaskPushNotificationConfig(_) | A2aRequest::ListTasks(_) => {
                Self::Same
            }
        }
    }

    /// The 0.3 JSON of a 1.0 result.
    fn to_internal(self, value: Value) -> Result<Value, ClientError> {
        fn via<T: serde::Serialize + DeserializeOwned, V1>(
            value: Value,
        ) -> Result<Value, ClientError>
        where
            V1: DeserializeOwned + TryInto<T>,
            V1::Error: std::fmt::Display,
        {
            let internal = decode_as::<T, V1>(value, ProtocolVersion::V1_0, "result")?;
            serde_json::to_value(internal).map_err(|source| ClientError::Decode {
                what: "result".to_owned(),
                source,
            })
        }
        match self {
            Self::Send => via::<SendMessageResult, v1::SendMessageResponse>(value),
            Self::Task => via::<Task, v1::Task>(value),
            Self::StreamEvent => via::<StreamEvent, v1::StreamResponse>(value),
            Self::PushConfig => {
                via::<TaskPushNotificationConfig, v1::TaskPushNotificationConfig>(value)
            }
            Self::PushConfigs => via::<
                Vec<TaskPushNotificationConfig>,
                v1::ListTaskPushNotificationConfigsResponse,
            >(value),
            Self::Card => {
                let card = card_from_value(value, "`GetExtendedAgentCard`")?;
                serde_json::to_value(card).map_err(|source| ClientError::Decode {
                    what: "extended agent card".to_owned(),
                    source,
                })
            }
            Self::Same => Ok(value),
        }
    }
}

/// A JSON-RPC request in either version's form.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Outgoing {
    V0_3(A2aCall),
    V1_0(V1Call),
}

impl Outgoing {
    const fn id(&self) -> &RequestId {
        match self {
            Self::V0_3(call) => &call.id,
            Self::V1_0(call) => &call.id,
        }
    }

    const fn method(&self) -> &'static str {
        match self {
            Self::V0_3(call) => call.request.method(),
            Self::V1_0(call) => call.method,
        }
    }
}

/// A 1.0 JSON-RPC request envelope.
#[derive(serde::Serialize)]
struct V1Call {
    jsonrpc: &'static str,
    id: RequestId,
    method: &'static str,
    params: v1::Request,
}

/// Puts the interface's tenant into a 1.0 request (spec §8.3.2: a client must
/// send exactly the chosen interface's value).
fn set_tenant(request: &mut v1::Request, tenant: &str) {
    let slot = match request {
        v1::Request::SendMessage(params) | v1::Request::SendStreamingMessage(params) => {
            &mut params.tenant
        }
        v1::Request::GetTask(params) => &mut params.tenant,
        v1::Request::ListTasks(params) => &mut params.tenant,
        v1::Request::CancelTask(params) => &mut params.tenant,
        v1::Request::SubscribeToTask(params) => &mut params.tenant,
        v1::Request::CreateTaskPushNotificationConfig(params) => &mut params.tenant,
        v1::Request::GetTaskPushNotificationConfig(params) => &mut params.tenant,
        v1::Request::ListTaskPushNotificationConfigs(params) => &mut params.tenant,
        v1::Request::DeleteTaskPushNotificationConfig(params) => &mut params.tenant,
        v1::Request::GetExtendedAgentCard(params) => &mut params.tenant,
    };
    tenant.clone_into(slot);
}

#[cfg(test)]
mod tests;
