//! A small [`A2aService`] for the server and client tests.
//!
//! Agents:
//! - `open` (the default agent): no security requirement, but declares a bearer
//!   scheme (so a caller *can* authenticate); streaming and push notifications; the
//!   optional extension [`OPTIONAL_EXT`].
//! - `secure`: requires an API key in `X-API-Key` (scheme `apiKey`) or a bearer token
//!   (scheme `bearer`); has an authenticated extended card.
//! - `strict`: requires the extension [`REQUIRED_EXT`], offers [`OPTIONAL_EXT`].
//! - `plain`: declares neither streaming nor push notifications.
//! - `hidden` exists inside but is not exposed: `card` says `None`.
//!
//! What the agents answer is decided by the message text, see [`MockService::call`].
//! Every task carries in its metadata the [`CallContext`] the service saw (`agent`,
//! `principal`, `scheme`, `extensions`), so tests can check what the server
//! established.

use std::collections::BTreeMap;
use std::sync::Arc;

use agentyard_transport::a2a::{
    AgentCapabilities, AgentCard, AgentExtension, Artifact, Message, Metadata, Part,
    SecurityScheme, StreamEvent, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use agentyard_transport::jsonrpc::{A2aRequest, JsonRpcError};
use agentyard_transport::service::{
    A2aResult, A2aService, CallContext, EventStream, Principal, Reply,
};
use agentyard_transport::{ContextId, TaskId};
use futures::StreamExt as _;
use serde_json::json;
use tokio::sync::Notify;

/// An extension every agent but `plain` offers.
pub(crate) const OPTIONAL_EXT: &str = "https://example.com/ext/optional/v1";
/// An extension `strict` requires.
pub(crate) const REQUIRED_EXT: &str = "https://example.com/ext/required/v1";
/// The API key `secure` accepts, for principal `key-holder`.
pub(crate) const API_KEY: &str = "key-123";
/// The bearer token every agent's bearer scheme accepts, for principal `alice`.
pub(crate) const BEARER: &str = "token-456";

/// The server config the tests use: the mock's credentials, default limits.
pub(crate) fn auth() -> agentyard_transport::server::AuthConfig {
    agentyard_transport::server::AuthConfig::new()
        .api_key("apiKey", API_KEY, "key-holder")
        .bearer_token("bearer", BEARER, "alice")
}

/// The mock service. Cards point at `base_url`.
pub(crate) struct MockService {
    base_url: String,
    /// Notified once per stream the server dropped (client disconnect, final event,
    /// shutdown).
    pub(crate) stream_dropped: Arc<Notify>,
}

impl MockService {
    pub(crate) fn new(base_url: impl Into<String>) -> Arc<Self> {
        Arc::new(Self {
            base_url: base_url.into(),
            stream_dropped: Arc::new(Notify::new()),
        })
    }

    fn base_card(&self, name: &str) -> AgentCard {
        let url = format!("{}/agents/{name}", self.base_url);
        let mut card = AgentCard::new(name, format!("the {name} test agent"), url, "1.0.0");
        card.capabilities = AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(true),
            state_transition_history: None,
            extensions: Some(vec![extension(OPTIONAL_EXT, false)]),
        };
        card
    }
}

fn extension(uri: &str, required: bool) -> AgentExtension {
    AgentExtension {
        uri: uri.to_owned(),
        description: None,
        required: Some(required),
        params: None,
    }
}

fn bearer_scheme() -> SecurityScheme {
    serde_json::from_value(json!({"type": "http", "scheme": "bearer"})).expect("valid scheme")
}

fn api_key_scheme() -> SecurityScheme {
    serde_json::from_value(json!({"type": "apiKey", "in": "header", "name": "X-API-Key"}))
        .expect("valid scheme")
}

impl A2aService for MockService {
    fn card(&self, agent: &str) -> Option<std::sync::Arc<AgentCard>> {
        let mut card = self.base_card(agent);
        match agent {
            "open" => {
                card.url = format!("{}/", self.base_url);
                card.security_schemes =
                    Some(BTreeMap::from([("bearer".to_owned(), bearer_scheme())]));
            }
            "secure" => {
                card.security_schemes = Some(BTreeMap::from([
                    ("apiKey".to_owned(), api_key_scheme()),
                    ("bearer".to_owned(), bearer_scheme()),
                ]));
                card.security = Some(vec![
                    BTreeMap::from([("apiKey".to_owned(), Vec::new())]),
                    BTreeMap::from([("bearer".to_owned(), Vec::new())]),
                ]);
                card.supports_authenticated_extended_card = Some(true);
            }
            "strict" => {
                card.capabilities.extensions = Some(vec![
                    extension(OPTIONAL_EXT, false),
                    extension(REQUIRED_EXT, true),
                ]);
            }
            "plain" => card.capabilities = AgentCapabilities::default(),
            _ => return None,
        }
        Some(std::sync::Arc::new(card))
    }

    /// Cards under the origin the client used, as a server bound to `0.0.0.0`
    /// does.
    fn card_at(&self, agent: &str, origin: &str) -> Option<AgentCard> {
        let mut card = std::sync::Arc::unwrap_or_clone(self.card(agent)?);
        card.url = card.url.replacen(&self.base_url, origin, 1);
        Some(card)
    }

    fn default_agent(&self) -> Option<String> {
        Some("open".to_owned())
    }

    fn agents(&self) -> Vec<String> {
        ["open", "secure", "strict", "plain"]
            .map(str::to_owned)
            .to_vec()
    }

    fn extended_card(&self, agent: &str, principal: &Principal) -> Option<AgentCard> {
        (agent == "secure").then(|| {
            let mut card = self.base_card(agent);
            card.description = format!("extended card for {}", principal.name);
            card
        })
    }

    /// - `message/send`: text `slow` never answers; `wrong-kind` answers with a
    ///   stream; `fail` answers -32004; anything else a completed task holding the
    ///   message and the call context.
    /// - `message/stream`: `forever` sends the task and then nothing, never ending;
    ///   `flood` sends the task and then 64 KiB artifact chunks without end; `slow`
    ///   never starts its stream;
    ///   `final-then-hang` sends the task and a final status and then never ends;
    ///   `error` sends the task and then an error; `wrong-kind` answers with a single
    ///   result; anything else: task, working, an artifact, completed (final), and
    ///   then one more event the server must not send.
    /// - `tasks/get`: task `missing` is -32001. `tasks/cancel`: task `done` is -32002.
    /// - `tasks/resubscribe`: working, then completed (final).
    /// - push configs: set echoes, get answers one, list two, delete `null`.
    /// - `ListTasks`: one working task `t-1`.
    async fn call(&self, context: CallContext, request: A2aRequest) -> Result<Reply, JsonRpcError> {
        let metadata = context_metadata(&context);
        match request {
            A2aRequest::SendMessage(params) => match params.message.text().as_str() {
                "slow" => std::future::pending().await,
                "wrong-kind" => Ok(Reply::Stream(futures::stream::empty().boxed())),
                "fail" => Err(JsonRpcError::unsupported_operation().with_message("fail asked for")),
                _ => {
                    let mut task = task("t-1", TaskState::Completed, metadata);
                    task.history = Some(vec![params.message.into()]);
                    // As a service answers `message/send`; a bare `Task` result
                    // would be written unwrapped in 1.0.
                    Ok(Reply::Result(A2aResult::Send(task.into())))
                }
            },
            A2aRequest::SendStreamingMessage(params) => {
                let task = task("t-1", TaskState::Submitted, metadata);
                let first: StreamEvent = task.clone().into();
                let events: EventStream = match params.message.text().as_str() {
                    "wrong-kind" => return Ok(result(&task)),
                    "slow" => std::future::pending().await,
                    "forever" => futures::stream::iter([Ok(first)])
                        .chain(futures::stream::pending())
                        .boxed(),
                    "flood" => {
                        let chunk = "x".repeat(64 * 1024);
                        futures::stream::iter([Ok(first)])
                            .chain(futures::stream::repeat_with(move || {
                                Ok(artifact("t-1", &chunk))
                            }))
                            .boxed()
                    }
                    "final-then-hang" => futures::stream::iter([
                        Ok(first),
                        Ok(status("t-1", TaskState::Completed, true)),
                    ])
                    .chain(futures::stream::pending())
                    .boxed(),
                    "error" => futures::stream::iter([
                        Ok(first),
                        Err(JsonRpcError::internal_error().with_message("the agent crashed")),
                        Ok(status("t-1", TaskState::Working, false)),
                    ])
                    .boxed(),
                    _ => futures::stream::iter([
                        Ok(first),
                        Ok(status("t-1", TaskState::Working, false)),
                        Ok(artifact("t-1", "chunk")),
                        Ok(status("t-1", TaskState::Completed, true)),
                        Ok(status("t-1", TaskState::Failed, false)),
                    ])
                    .boxed(),
                };
                Ok(Reply::Stream(guarded(
                    events,
                    Arc::clone(&self.stream_dropped),
                )))
            }
            A2aRequest::GetTask(params) if params.id.as_str() == "missing" => {
                Err(JsonRpcError::task_not_found().with_message("no task `missing`"))
            }
            A2aRequest::GetTask(params) => Ok(result(&task(
                params.id.as_str(),
                TaskState::Working,
                metadata,
            ))),
            A2aRequest::CancelTask(params) if params.id.as_str() == "done" => {
                Err(JsonRpcError::task_not_cancelable())
            }
            A2aRequest::CancelTask(params) => Ok(result(&task(
                params.id.as_str(),
                TaskState::Canceled,
                metadata,
            ))),
            A2aRequest::TaskResubscription(params) => {
                let id = params.id.as_str().to_owned();
                let events = futures::stream::iter([
                    Ok(status(&id, TaskState::Working, false)),
                    Ok(status(&id, TaskState::Completed, true)),
                ])
                .boxed();
                Ok(Reply::Stream(guarded(
                    events,
                    Arc::clone(&self.stream_dropped),
                )))
            }
            A2aRequest::SetTaskPushNotificationConfig(config) => Ok(result(&config)),
            A2aRequest::GetTaskPushNotificationConfig(params) => {
                let mut config = push_config(params.id.as_str(), "https://hooks.example/1");
                config.push_notification_config.id = params.push_notification_config_id;
                Ok(result(&config))
            }
            A2aRequest::ListTaskPushNotificationConfig(params) => Ok(result(&vec![
                push_config(params.id.as_str(), "https://hooks.example/1"),
                push_config(params.id.as_str(), "https://hooks.example/2"),
            ])),
            A2aRequest::DeleteTaskPushNotificationConfig(_) => {
                Ok(Reply::Result(A2aResult::Deleted))
            }
            A2aRequest::ListTasks(params) => {
                let task = task("t-1", TaskState::Working, metadata);
                let list = agentyard_transport::a2a::v1::ListTasksResponse {
                    tasks: vec![task.into()],
                    next_page_token: String::new(),
                    page_size: params.page_size.unwrap_or(50),
                    total_size: 1,
                };
                Ok(Reply::Result(A2aResult::TaskList(list)))
            }
            other => Err(JsonRpcError::unsupported_operation()
                .with_message(format!("the mock does not answer `{}`", other.method()))),
        }
    }
}

fn result(value: &(impl Clone + Into<A2aResult>)) -> Reply {
    Reply::Result(value.clone().into())
}

fn context_metadata(context: &CallContext) -> Metadata {
    let mut metadata = Metadata::new();
    metadata.insert("agent".to_owned(), json!(context.agent));
    metadata.insert("requestId".to_owned(), json!(context.request_id));
    metadata.insert(
        "principal".to_owned(),
        json!(context.principal.as_ref().map(|p| &p.name)),
    );
    metadata.insert(
        "scheme".to_owned(),
        json!(context.principal.as_ref().map(|p| &p.scheme)),
    );
    metadata.insert("extensions".to_owned(), json!(context.extensions));
    metadata
}

pub(crate) fn task(id: &str, state: TaskState, metadata: Metadata) -> Task {
    let mut task = Task::new(
        TaskId::new(id),
        ContextId::new("c-1"),
        TaskStatus::new(state),
    );
    task.metadata = Some(metadata);
    task
}

fn status(id: &str, state: TaskState, last: bool) -> StreamEvent {
    TaskStatusUpdateEvent::new(
        TaskId::new(id),
        ContextId::new("c-1"),
        TaskStatus::new(state),
        last,
    )
    .into()
}

fn artifact(id: &str, text: &str) -> StreamEvent {
    TaskArtifactUpdateEvent::new(
        TaskId::new(id),
        ContextId::new("c-1"),
        Artifact::new("a-1", vec![Part::text(text)]),
    )
    .into()
}

pub(crate) fn push_config(task: &str, url: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        task_id: TaskId::new(task),
        push_notification_config: agentyard_transport::a2a::PushNotificationConfig::new(url),
    }
}

/// A message the mock agents read: one text part.
pub(crate) fn user_message(text: &str) -> Message {
    Message::user_text(text)
}

/// Notifies `dropped` when the stream is dropped.
fn guarded(events: EventStream, dropped: Arc<Notify>) -> EventStream {
    struct Guard(Arc<Notify>);
    impl Drop for Guard {
        fn drop(&mut self) {
            self.0.notify_one();
        }
    }
    let guard = Guard(dropped);
    events
        .map(move |event| {
            let _alive = &guard;
            event
        })
        .boxed()
}

/// A server on an ephemeral port of 127.0.0.1, serving the mock until shut down.
pub(crate) struct TestServer {
    /// `http://127.0.0.1:<port>`.
    pub(crate) base: String,
    pub(crate) service: Arc<MockService>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    handle: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl TestServer {
    /// Starts serving with `config` (the mock's credentials are added).
    pub(crate) async fn start(config: agentyard_transport::server::ServerConfigBuilder) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("an ephemeral port");
        let base = format!("http://{}", listener.local_addr().expect("a local address"));
        let service = MockService::new(&base);
        let config = config.auth(auth()).build();
        let router = agentyard_transport::server::app(Arc::clone(&service), config.clone());
        let (shutdown, signal) = tokio::sync::oneshot::channel::<()>();
        let handle = tokio::spawn(async move {
            agentyard_transport::server::serve_with(listener, router, &config, async move {
                let _ = signal.await;
            })
            .await
        });
        Self {
            base,
            service,
            shutdown: Some(shutdown),
            handle,
        }
    }

    /// Signals shutdown and waits for `serve` to return.
    pub(crate) async fn shut_down(mut self) -> std::io::Result<()> {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        within(&mut self.handle).await.expect("serve did not panic")
    }
}

/// Bounds a wait that should end quickly, so a bug fails the test instead of
/// hanging it. Not a synchronization device: the awaited thing is the condition.
pub(crate) async fn within<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(std::time::Duration::from_secs(10), future)
        .await
        .expect("timed out after 10 s")
}
