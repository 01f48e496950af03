//! A typed A2A 0.3.0 client over JSON-RPC and SSE.
//!
//! [`A2aClient`] talks to one agent: it finds the endpoint from the agent card (or
//! takes it directly), sends each call as a JSON-RPC request with the options'
//! `X-A2A-Extensions` and credential headers, and decodes the typed answer. It keeps
//! connections open between calls (one pooled HTTP client, shared by clones).
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
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::a2a::{
    AgentCard, DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, MessageSendParams, SendMessageResult, StreamEvent, Task,
    TaskIdParams, TaskPushNotificationConfig, TaskQueryParams,
};
use crate::jsonrpc::{A2aCall, A2aRequest, JsonRpcResponse, RequestId};
use crate::server::EXTENSIONS_HEADER;

mod error;
mod sse;

pub use error::ClientError;

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
#[derive(Clone, Debug, Default)]
pub struct ClientOptions {
    extensions: Vec<String>,
    auth: Option<ClientAuth>,
    timeout: Option<Duration>,
}

impl ClientOptions {
    /// No extensions, no credentials, no time limit.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            extensions: Vec::new(),
            auth: None,
            timeout: None,
        }
    }

    /// Asks the agent to activate the extension `uri` (sent in `X-A2A-Extensions`).
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
/// `X-A2A-Extensions` response header).
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
    card: Option<AgentCard>,
    options: ClientOptions,
    next_id: Arc<AtomicI64>,
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
        fetch_card(&reqwest::Client::new(), base_url).await
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
    /// card is fetched and whose `url` becomes the endpoint, or the JSON-RPC
    /// endpoint itself.
    ///
    /// # Errors
    ///
    /// [`ClientError::InvalidUrl`] for a bad URL (or a card whose `url` is bad), and
    /// what fetching the card can fail with.
    pub async fn connect(url: &str, options: ClientOptions) -> Result<Self, ClientError> {
        let http = reqwest::Client::new();
        if is_card_url(url) {
            let card = fetch_card(&http, url).await?;
            Self::with_card(http, card, options)
        } else {
            Ok(Self {
                http,
                endpoint: parse_url(url)?,
                card: None,
                options,
                next_id: Arc::new(AtomicI64::new(1)),
            })
        }
    }

    /// A client for the agent `card` describes, at its `url`.
    ///
    /// # Errors
    ///
    /// [`ClientError::InvalidUrl`] when the card's `url` cannot be parsed.
    pub fn from_card(card: AgentCard, options: ClientOptions) -> Result<Self, ClientError> {
        Self::with_card(reqwest::Client::new(), card, options)
    }

    fn with_card(
        http: reqwest::Client,
        card: AgentCard,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        Ok(Self {
            http,
            endpoint: parse_url(&card.url)?,
            card: Some(card),
            options,
            next_id: Arc::new(AtomicI64::new(1)),
        })
    }

    /// The JSON-RPC endpoint calls go to.
    #[must_use]
    pub fn endpoint(&self) -> &str {
        self.endpoint.as_str()
    }

    /// The agent's card, when the client was made from one.
    #[must_use]
    pub const fn card(&self) -> Option<&AgentCard> {
        self.card.as_ref()
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
        self.value(A2aRequest::SendMessage(params)).await
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
        self.value(A2aRequest::GetTask(params)).await
    }

    /// `tasks/cancel`.
    ///
    /// # Errors
    ///
    /// As [`send_message`](Self::send_message); -32002 for a task that already
    /// ended.
    pub async fn cancel_task(&self, params: TaskIdParams) -> Result<Task, ClientError> {
        self.value(A2aRequest::CancelTask(params)).await
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
        self.value(A2aRequest::SetTaskPushNotificationConfig(config))
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
        self.value(A2aRequest::GetTaskPushNotificationConfig(params))
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
        self.value(A2aRequest::ListTaskPushNotificationConfig(params))
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
        let _: Value = self
            .value(A2aRequest::DeleteTaskPushNotificationConfig(params))
            .await?;
        Ok(())
    }

    /// `agent/getAuthenticatedExtendedCard`: the card for an authenticated caller.
    ///
    /// # Errors
    ///
    /// As [`send_message`](Self::send_message); HTTP 401 without valid
    /// credentials, -32007 when the agent has no extended card.
    pub async fn authenticated_extended_card(&self) -> Result<AgentCard, ClientError> {
        self.value(A2aRequest::GetAuthenticatedExtendedCard).await
    }

    /// Any unary call, with its result decoded as `T` and the extensions the agent
    /// activated.
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
        let call = A2aCall::new(self.next_id(), request);
        let mut builder = self.request(&call).header(ACCEPT, "application/json");
        if let Some(timeout) = self.options.timeout {
            builder = builder.timeout(timeout);
        }
        let response = checked(builder.send().await?).await?;
        let extensions = echoed(response.headers());
        let bytes = response.bytes().await?;
        let answer: JsonRpcResponse<Value> =
            serde_json::from_slice(&bytes).map_err(|source| ClientError::Decode {
                what: format!("JSON-RPC response to `{method}`"),
                source,
            })?;
        check_id(&answer, &call.id)?;
        let result = answer.into_result().map_err(ClientError::JsonRpc)?;
        let value = serde_json::from_value(result).map_err(|source| ClientError::Decode {
            what: format!("`{method}` result"),
            source,
        })?;
        Ok(A2aResponse { value, extensions })
    }

    /// Any streaming call (`message/stream`, `tasks/resubscribe`).
    ///
    /// A server that answers with a single JSON-RPC response instead of SSE gets its
    /// error returned here, or its result as a one-event stream.
    ///
    /// # Errors
    ///
    /// As [`call`](Self::call), for the opening of the stream.
    pub async fn stream(&self, request: A2aRequest) -> Result<A2aStream, ClientError> {
        let method = request.method();
        let call = A2aCall::new(self.next_id(), request);
        let builder = self.request(&call).header(ACCEPT, "text/event-stream");
        let response = checked(builder.send().await?).await?;
        let extensions = echoed(response.headers());
        let content_type = media_type(response.headers());
        let events = match content_type.as_str() {
            "text/event-stream" => {
                sse::events(response.bytes_stream(), call.id, ClientError::Transport)
            }
            "application/json" => {
                let bytes = response.bytes().await?;
                let data = String::from_utf8_lossy(&bytes);
                let event = sse::decode(&data, &call.id)?;
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

    /// A unary call's value alone.
    async fn value<T: DeserializeOwned>(&self, request: A2aRequest) -> Result<T, ClientError> {
        Ok(self.call(request).await?.value)
    }

    fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// A POST of `call` with the options' headers.
    fn request(&self, call: &A2aCall) -> reqwest::RequestBuilder {
        let mut builder = self.http.post(self.endpoint.clone()).json(call);
        if !self.options.extensions.is_empty() {
            builder = builder.header(EXTENSIONS_HEADER, self.options.extensions.join(", "));
        }
        match &self.options.auth {
            Some(ClientAuth::ApiKey { header, key }) => builder.header(header.as_str(), key),
            Some(ClientAuth::Bearer(token)) => builder.bearer_auth(token),
            None => builder,
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

/// Fetches a card from a card URL, or from the well-known paths under a base URL.
async fn fetch_card(http: &reqwest::Client, url: &str) -> Result<AgentCard, ClientError> {
    if is_card_url(url) {
        return get_card(http, parse_url(url)?).await;
    }
    let base = url.trim_end_matches('/');
    let mut last = None;
    for path in CARD_PATHS {
        match get_card(http, parse_url(&format!("{base}{path}"))?).await {
            Ok(card) => return Ok(card),
            // Only a missing card means "try the older path"; anything else would
            // fail the same way there.
            Err(error @ ClientError::Http { .. }) => last = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last.unwrap_or_else(|| ClientError::Protocol("no card path to try".to_owned())))
}

async fn get_card(http: &reqwest::Client, url: reqwest::Url) -> Result<AgentCard, ClientError> {
    let response = checked(
        http.get(url.clone())
            .header(ACCEPT, "application/json")
            .send()
            .await?,
    )
    .await?;
    let bytes = response.bytes().await?;
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
    let body = response.bytes().await.unwrap_or_default();
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
        .and_then(|value| value.split(';').next())
        .map(|essence| essence.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// The extension URIs echoed in `X-A2A-Extensions`.
fn echoed(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(EXTENSIONS_HEADER)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|uri| !uri.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests;
