//! The seam between the HTTP server and whatever answers A2A calls.
//!
//! The server (routing, JSON-RPC framing, SSE, authentication, extensions, limits)
//! knows nothing of actors; it decodes each request into an [`A2aRequest`] and hands it
//! to an [`A2aService`] with the facts the server established about the call
//! ([`CallContext`]). agentyard's HTTP edge implements the trait on top of the
//! supervisor; tests implement it with a few lines.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;

use crate::a2a::v1::ProtocolVersion;
use crate::a2a::{AgentCard, SendMessageResult, StreamEvent, Task, TaskPushNotificationConfig};
use crate::jsonrpc::{A2aRequest, JsonRpcError, RequestId};

/// A stream of A2A events answering `message/stream` or `tasks/resubscribe`. An `Err`
/// item is sent as a JSON-RPC error response and ends the stream.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, JsonRpcError>> + Send>>;

/// An [`EventStream`] whose events carry their number in the task's event log: the
/// server sends it as the SSE `id:` of the event, which a client that reconnects
/// presents as `Last-Event-ID` ([`CallContext::last_event_id`]).
pub type NumberedEventStream =
    Pin<Box<dyn Stream<Item = Result<(Option<u64>, StreamEvent), JsonRpcError>> + Send>>;

/// What a call answers with.
#[non_exhaustive]
pub enum Reply {
    /// A JSON-RPC result, typed: the server writes it in the protocol version the
    /// request was made in.
    Result(A2aResult),
    /// An SSE stream of results (for the streaming methods).
    Stream(EventStream),
    /// A stream whose events carry their SSE ids.
    NumberedStream(NumberedEventStream),
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Result(value) => f.debug_tuple("Result").field(value).finish(),
            Self::Stream(_) => f.write_str("Stream(..)"),
            Self::NumberedStream(_) => f.write_str("NumberedStream(..)"),
        }
    }
}

/// The result of a unary A2A call, in the internal model. It is typed rather than
/// serialized so that the server can write it in the version the client speaks
/// (0.3 `kind` tags, or the 1.0 wrappers) without reading JSON back.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum A2aResult {
    /// `message/send` (`SendMessage`): a task or a direct message.
    Send(SendMessageResult),
    /// `tasks/get` and `tasks/cancel` (`GetTask`, `CancelTask`).
    Task(Task),
    /// `tasks/pushNotificationConfig/set` and `get` (`Create…`, `Get…`).
    PushConfig(TaskPushNotificationConfig),
    /// `tasks/pushNotificationConfig/list` (`ListTaskPushNotificationConfigs`).
    PushConfigs(Vec<TaskPushNotificationConfig>),
    /// `tasks/pushNotificationConfig/delete`: `null` in 0.3, `{}` in 1.0.
    Deleted,
    /// `ListTasks` (1.0 only, so in its 1.0 form).
    TaskList(crate::a2a::v1::ListTasksResponse),
    /// `agent/getAuthenticatedExtendedCard` (`GetExtendedAgentCard`); boxed, as cards
    /// are large and rare.
    Card(Box<AgentCard>),
}

impl serde::Serialize for A2aResult {
    /// The 0.3 form (the 1.0 form is the server's to choose).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Send(result) => result.serialize(serializer),
            Self::Task(task) => task.serialize(serializer),
            Self::PushConfig(config) => config.serialize(serializer),
            Self::PushConfigs(configs) => configs.serialize(serializer),
            Self::Deleted => serializer.serialize_unit(),
            Self::TaskList(list) => list.serialize(serializer),
            Self::Card(card) => card.serialize(serializer),
        }
    }
}

macro_rules! result_from {
    ($($variant:ident($ty:ty)),* $(,)?) => {$(
        impl From<$ty> for A2aResult {
            fn from(value: $ty) -> Self {
                Self::$variant(value)
            }
        }
    )*};
}

result_from!(
    Send(SendMessageResult),
    Task(Task),
    PushConfig(TaskPushNotificationConfig),
    PushConfigs(Vec<TaskPushNotificationConfig>),
    Card(Box<AgentCard>),
);

impl From<AgentCard> for A2aResult {
    fn from(card: AgentCard) -> Self {
        Self::Card(Box::new(card))
    }
}

/// Who is calling, as the server's authentication established it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Principal {
    /// A stable name for the caller (the name the operator gave its key or token).
    pub name: String,
    /// The security scheme that authenticated it (a key of the card's
    /// `securitySchemes`).
    pub scheme: String,
}

impl Principal {
    /// A principal authenticated by `scheme`.
    #[must_use]
    pub fn new(name: impl Into<String>, scheme: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            scheme: scheme.into(),
        }
    }
}

/// The facts about one call that the server established before the service sees it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CallContext {
    /// The exposed agent the call is addressed to.
    pub agent: Arc<str>,
    /// The JSON-RPC request id (already validated).
    pub request_id: RequestId,
    /// The authenticated caller; `None` when the agent requires no authentication and
    /// the caller presented none.
    pub principal: Option<Principal>,
    /// The extension URIs the caller activated that the agent supports (unknown ones
    /// are dropped); echoed back in the response header. 0.3 requests name them in
    /// `X-A2A-Extensions` or `A2A-Extensions`, 1.0 requests in `A2A-Extensions`.
    pub extensions: Vec<String>,
    /// The raw value of the request's `Idempotency-Key` header, if any (unchecked: the
    /// service validates it and scopes it by caller).
    pub idempotency_key: Option<String>,
    /// The protocol version the request was made in (and its answer is written in).
    /// The service answers in the internal model either way; it may record the
    /// version, e.g. for what a webhook registered by this call receives.
    pub version: ProtocolVersion,
    /// The request's W3C `traceparent` header, if any (unchecked), so that calls
    /// made on behalf of this one continue its trace.
    pub traceparent: Option<String>,
    /// The request's `Last-Event-ID` header: the number of the last event a client that
    /// reconnects to a task stream received. The stream resumes after it.
    pub last_event_id: Option<u64>,
}

impl CallContext {
    /// A context for `agent` and `request_id`, with no principal and no extensions.
    #[must_use]
    pub fn new(agent: impl Into<Arc<str>>, request_id: RequestId) -> Self {
        Self {
            agent: agent.into(),
            request_id,
            principal: None,
            extensions: Vec::new(),
            idempotency_key: None,
            last_event_id: None,
            version: ProtocolVersion::V0_3,
            traceparent: None,
        }
    }

    /// Whether the caller activated the extension `uri`.
    #[must_use]
    pub fn has_extension(&self, uri: &str) -> bool {
        self.extensions.iter().any(|e| e == uri)
    }
}

/// Why an agent has no authenticated extended card for a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoExtendedCard {
    /// The caller presented no credentials: the card is for authenticated callers.
    Anonymous,
    /// The agent has no extended card configured.
    NotConfigured,
}

/// The -32007 error (`AuthenticatedExtendedCardNotConfigured`) for `agent`: built
/// here once, for the server's own answer to the method and for a service that
/// answers it through [`A2aService::call`].
#[must_use]
pub fn no_extended_card(agent: &str, why: NoExtendedCard) -> JsonRpcError {
    let (message, reason) = match why {
        NoExtendedCard::Anonymous => (
            format!(
                "Authenticated Extended Card is not configured for unauthenticated callers of agent `{agent}`: present credentials"
            ),
            "unauthenticated",
        ),
        NoExtendedCard::NotConfigured => (
            format!("Authenticated Extended Card is not configured for agent `{agent}`"),
            "extended_card_not_configured",
        ),
    };
    JsonRpcError::authenticated_extended_card_not_configured()
        .with_message(message)
        .with_data(serde_json::json!({"reason": reason}))
}

/// Answers A2A calls for the agents a server exposes.
///
/// Implementations hold only handles (no per-request state) and must be cheap to call
/// concurrently.
pub trait A2aService: Send + Sync + 'static {
    /// The public card of an exposed agent; `None` for an agent that is not exposed
    /// (the server then answers HTTP 404, as if it did not exist). Shared: every
    /// call reads it to resolve the agent, so it is built once, not per request.
    fn card(&self, agent: &str) -> Option<Arc<AgentCard>>;

    /// The public card of an exposed agent as served to a client that reached the
    /// server at `origin` (`http://{Host}`, from the request's `Host` header, checked
    /// to be a host and port). A service whose own base URL is not one clients can
    /// reach (bound to `0.0.0.0` with no public URL) puts its card's URLs under
    /// `origin`; by default the card is [`card`](Self::card)'s, unchanged.
    fn card_at(&self, agent: &str, origin: &str) -> Option<AgentCard> {
        let _ = origin;
        self.card(agent).map(Arc::unwrap_or_clone)
    }

    /// The name of the agent served at the root (`/` and `/.well-known/agent-card.json`).
    fn default_agent(&self) -> Option<String>;

    /// The names of every exposed agent, for the aggregate listing.
    fn agents(&self) -> Vec<String>;

    /// The authenticated extended card of an agent, for `agent/getAuthenticatedExtendedCard`
    /// (the server calls it only for authenticated callers); `None` when the agent has
    /// none configured (-32007).
    fn extended_card(&self, agent: &str, principal: &Principal) -> Option<AgentCard>;

    /// Answers one decoded call.
    ///
    /// # Errors
    /// The JSON-RPC error to send back; it should name what was wrong.
    fn call(
        &self,
        context: CallContext,
        request: A2aRequest,
    ) -> impl Future<Output = Result<Reply, JsonRpcError>> + Send;
}
