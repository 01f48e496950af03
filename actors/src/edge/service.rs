//! [`SupervisorService`]: the A2A methods answered by the supervisor.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agentyard_policy::EntryPoint;
use agentyard_transport::a2a::TransportProtocol;
use agentyard_transport::a2a::v1::{self, ProtocolVersion};
use agentyard_transport::a2a::{
    AgentCard, Message, MessageSendConfiguration, MessageSendParams, Metadata, Part,
    PushNotificationConfig, Role, SendMessageResult, Task, TaskState, media_essence,
};
use agentyard_transport::handoff::{self, HANDOFF_EXTENSION_URI, PayloadType};
use agentyard_transport::jsonrpc::{A2aRequest, JsonRpcError};
use agentyard_transport::service::{
    A2aResult, A2aService, CallContext, NoExtendedCard, NumberedEventStream, Principal, Reply,
    no_extended_card,
};
use agentyard_transport::trace::Traceparent;
use agentyard_transport::{TaskId, a2a};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};

use super::EdgeError;
use super::card;
use super::config::EdgeConfig;
use super::push::PushNotifier;
use super::rpc_error;
use crate::agent::AgentDescriptor;
use crate::error::Error;
use crate::store::TaskOwner;
use crate::supervisor::{NumberedEvent, SendRequest, Supervisor};

/// The longest `Idempotency-Key` header accepted, in bytes.
const MAX_IDEMPOTENCY_KEY: usize = 255;

/// What the edge knows about one exposed agent.
#[derive(Debug)]
struct Exposed {
    name: String,
    card: Arc<AgentCard>,
    extended: Option<AgentCard>,
    answer_with_message: bool,
    input_modes: Vec<String>,
    output_modes: Vec<String>,
}

#[derive(Debug)]
struct Inner {
    supervisor: Supervisor,
    agents: BTreeMap<String, Exposed>,
    default_agent: Option<String>,
    push: Option<PushNotifier>,
    /// How long a blocking `message/send` waits for its task to settle before it
    /// answers with the task as it stands.
    blocking_wait: Duration,
    /// Whether cards take their URLs from the request's `Host`: the server is bound
    /// to an unspecified address (`0.0.0.0`, `::`) and no public URL is configured,
    /// so the bound address is not one a client can reach.
    cards_follow_host: bool,
    /// The gRPC port, when cards name the gRPC interface under the request's host
    /// (gRPC bound to an unspecified address, no public URL, and the HTTP listener
    /// not bound to a reachable address either).
    grpc_follows_host: Option<u16>,
}

/// The A2A methods of the exposed agents, answered by the supervisor: every call that
/// reaches an agent is a supervisor send with entry point `http`, sent from the
/// authenticated principal, so every rule of the supervisor (policy, idempotency,
/// limits, events) applies to it.
///
/// Cheap to clone. The semantics of each method are in the [module docs](super).
#[derive(Debug, Clone)]
pub struct SupervisorService {
    inner: Arc<Inner>,
}

/// A send on its way: the task as submitted and the updates that follow.
struct Started {
    task: Task,
    /// The task's number in its event log (the SSE `id:` of the first event).
    seq: Option<u64>,
    updates: std::pin::Pin<Box<dyn Stream<Item = NumberedEvent> + Send>>,
}

impl SupervisorService {
    /// The service for the agents `config` exposes, with card URLs under `base_url`
    /// (the public URL, or the bound address) and the given push notifier (`None` when
    /// push notifications are off).
    ///
    /// # Errors
    /// [`EdgeError::UnknownAgent`] or [`EdgeError::NotExposed`] when the configuration
    /// names an agent that is not registered or not exposed; the error names the key.
    pub fn new(
        supervisor: Supervisor,
        config: &EdgeConfig,
        base_url: &str,
        push: Option<PushNotifier>,
    ) -> Result<Self, EdgeError> {
        Self::with_grpc(supervisor, config, base_url, push, None)
    }

    /// As [`new`](Self::new), for an edge that also serves gRPC at `grpc` (the bound
    /// address): every card lists the gRPC interface after the JSON-RPC one, as
    /// `host:port` (the form gRPC clients dial). The host is the public URL's when
    /// there is one, else the bound address's; bound to an unspecified address, the
    /// HTTP listener's, and when that is unspecified too, the `Host` each client
    /// used (as card URLs do).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_grpc(
        supervisor: Supervisor,
        config: &EdgeConfig,
        base_url: &str,
        push: Option<PushNotifier>,
        grpc: Option<SocketAddr>,
    ) -> Result<Self, EdgeError> {
        let descriptors = exposed_descriptors(&supervisor, config)?;
        for name in config.agent_settings.keys() {
            if supervisor.agent(name).is_none() {
                return Err(EdgeError::UnknownAgent {
                    key: "agent_settings",
                    agent: name.clone(),
                });
            }
        }
        let default_agent = match &config.default_agent {
            Some(name) => {
                check_served(&supervisor, &descriptors, "default_agent", name)?;
                Some(name.clone())
            }
            None if descriptors.len() == 1 => Some(descriptors[0].name.clone()),
            None => None,
        };
        let grpc_url = grpc.map(|addr| card::grpc_url(config, base_url, addr));
        let grpc_follows_host = grpc
            .filter(|addr| {
                config.public_url.is_none()
                    && addr.ip().is_unspecified()
                    && config.bind.ip().is_unspecified()
            })
            .map(|addr| addr.port());
        let agents = descriptors
            .into_iter()
            .map(|descriptor| {
                let settings = config
                    .agent_settings
                    .get(&descriptor.name)
                    .cloned()
                    .unwrap_or_default();
                let mut public = card::public_card(&descriptor, &settings, config, base_url);
                // gRPC takes its place in the configured order of the bindings.
                if grpc_url.is_some() {
                    let url = card::agent_url(base_url, &descriptor.name);
                    let listed = card::interfaces(&config.bindings, &url, grpc_url.as_deref());
                    card::set_interfaces(&mut public, listed);
                }
                let extended = card::extended_card(&public, &settings);
                let exposed = Exposed {
                    name: descriptor.name.clone(),
                    card: Arc::new(public),
                    extended,
                    answer_with_message: settings.answer_with_message,
                    input_modes: descriptor.input_modes.clone(),
                    output_modes: descriptor.output_modes.clone(),
                };
                (descriptor.name, exposed)
            })
            .collect();
        Ok(Self {
            inner: Arc::new(Inner {
                supervisor,
                agents,
                default_agent,
                push,
                blocking_wait: blocking_wait(config.request_timeout),
                cards_follow_host: config.public_url.is_none() && config.bind.ip().is_unspecified(),
                grpc_follows_host,
            }),
        })
    }

    /// The supervisor the calls go to.
    #[must_use]
    pub fn supervisor(&self) -> &Supervisor {
        &self.inner.supervisor
    }

    /// The push notifier, when push notifications are on.
    #[must_use]
    pub fn push(&self) -> Option<&PushNotifier> {
        self.inner.push.as_ref()
    }

    fn exposed(&self, agent: &str) -> Result<&Exposed, JsonRpcError> {
        self.inner
            .agents
            .get(agent)
            .ok_or_else(|| rpc_error::not_served(agent))
    }

    fn push_or_unsupported(&self) -> Result<&PushNotifier, JsonRpcError> {
        self.inner
            .push
            .as_ref()
            .ok_or_else(rpc_error::push_disabled)
    }

    /// What every push-config call checks first: push is on, and the caller may see
    /// the task (its owner, and the task is there). Returns the notifier and the
    /// task's head.
    async fn push_for(
        &self,
        context: &CallContext,
        task_id: &TaskId,
    ) -> Result<(&PushNotifier, Task), JsonRpcError> {
        let push = self.push_or_unsupported()?;
        self.check_owner(context, task_id).await?;
        let task = self.task_summary(task_id).await?;
        Ok((push, task))
    }

    // Not an `async fn`: it would hold its arguments twice (as it was called, and
    // once its body starts), and this future is boxed and moved whole per call.
    #[expect(clippy::manual_async_fn, reason = "holds the call once")]
    fn dispatch(
        &self,
        context: CallContext,
        request: A2aRequest,
    ) -> impl Future<Output = Result<Reply, JsonRpcError>> + Send + '_ {
        async move {
            let agent = self.exposed(&context.agent)?;
            let activated = Handoffs::of(&context);
            tracing::debug!(
                agent = %agent.name,
                method = request.method(),
                rpc_id = %context.request_id,
                principal = context.principal.as_ref().map(|p| p.name.as_str()),
                "a2a call"
            );
            match request {
                A2aRequest::SendMessage(params) => self
                    .send_message(agent, &context, params)
                    .await
                    .inspect_err(|error| log_refused(agent, &context, "message/send", error))
                    .map(|result| Reply::Result(result.into())),
                A2aRequest::SendStreamingMessage(params) => self
                    .stream_message(agent, &context, params)
                    .await
                    .inspect_err(|error| log_refused(agent, &context, "message/stream", error))
                    .map(Reply::NumberedStream),
                A2aRequest::GetTask(params) => {
                    self.check_owner(&context, &params.id).await?;
                    let mut task = self.task(&params.id).await?;
                    decorate_task(&mut task, activated);
                    trim_history(&mut task, params.history_length);
                    Ok(Reply::Result(task.into()))
                }
                A2aRequest::CancelTask(params) => {
                    self.check_owner(&context, &params.id).await?;
                    let mut task = self
                        .inner
                        .supervisor
                        .cancel_task(&params.id)
                        .await
                        .map_err(JsonRpcError::from)?;
                    decorate_task(&mut task, activated);
                    Ok(Reply::Result(task.into()))
                }
                A2aRequest::TaskResubscription(params) => {
                    self.check_owner(&context, &params.id).await?;
                    if let Some(after) = context.last_event_id {
                        // A client that reconnects: the rest of the log, then live updates,
                        // even for a task that ended meanwhile (it replays to its end).
                        let updates = self
                            .inner
                            .supervisor
                            .resubscribe_after(&params.id, Some(after))
                            .await
                            .map_err(JsonRpcError::from)?;
                        return Ok(Reply::NumberedStream(wire_updates(Box::pin(updates), None)));
                    }
                    let updates = self
                        .inner
                        .supervisor
                        .resubscribe_after(&params.id, None)
                        .await
                        .map_err(JsonRpcError::from)?;
                    let mut updates = Box::pin(updates);
                    let Some((seq, a2a::StreamEvent::Task(task))) = updates.next().await else {
                        // The runtime always starts a task stream with the task.
                        return Err(rpc_error::stream_without_task(Some(&params.id)));
                    };
                    // 0.3 streams an ended task as itself; 1.0 refuses to subscribe to one
                    // (the proto's `SubscribeToTask`: UnsupportedOperationError).
                    if context.version == ProtocolVersion::V1_0 && task.status.state.is_terminal() {
                        return Err(rpc_error::ended_task_not_subscribable(
                            &params.id,
                            task.status.state,
                        ));
                    }
                    let started = Started { task, seq, updates };
                    Ok(Reply::NumberedStream(wire_stream(started, None, activated)))
                }
                A2aRequest::SetTaskPushNotificationConfig(config) => {
                    let (push, task) = self.push_for(&context, &config.task_id).await?;
                    let stored = push
                        .set_traced(
                            config,
                            task.status.state.is_terminal(),
                            context.version,
                            request_trace(&context),
                        )
                        .await
                        .map_err(JsonRpcError::from)?;
                    Ok(Reply::Result(stored.into()))
                }
                A2aRequest::GetTaskPushNotificationConfig(params) => {
                    let (push, _) = self.push_for(&context, &params.id).await?;
                    let config = push
                        .get(&params.id, params.push_notification_config_id.as_deref())
                        .map_err(JsonRpcError::from)?;
                    Ok(Reply::Result(config.into()))
                }
                A2aRequest::ListTaskPushNotificationConfig(params) => {
                    let (push, _) = self.push_for(&context, &params.id).await?;
                    Ok(Reply::Result(push.list(&params.id).into()))
                }
                A2aRequest::DeleteTaskPushNotificationConfig(params) => {
                    let (push, _) = self.push_for(&context, &params.id).await?;
                    // Deleting a webhook that is not there is not an error: the result the
                    // client wants (no such webhook) holds either way.
                    push.delete(&params.id, &params.push_notification_config_id);
                    Ok(Reply::Result(A2aResult::Deleted))
                }
                A2aRequest::ListTasks(params) => self
                    .list_tasks(&context, params, activated)
                    .await
                    .map(|list| Reply::Result(A2aResult::TaskList(list))),
                A2aRequest::GetAuthenticatedExtendedCard => {
                    let card = match &context.principal {
                        Some(principal) => self.extended_card(&agent.name, principal),
                        None => {
                            return Err(no_extended_card(&agent.name, NoExtendedCard::Anonymous));
                        }
                    };
                    let card = card.ok_or_else(|| {
                        no_extended_card(&agent.name, NoExtendedCard::NotConfigured)
                    })?;
                    Ok(Reply::Result(card.into()))
                }
            }
        }
    }

    /// `TaskNotFound` unless the task was created through this agent's endpoint by
    /// this caller (the same principal, or both unauthenticated). A task of another
    /// agent, of an agent that is not exposed, or of another principal does not exist
    /// from here: the error is the one an unknown id gets, word for word.
    async fn check_owner(
        &self,
        context: &CallContext,
        task_id: &TaskId,
    ) -> Result<(), JsonRpcError> {
        let owner = self
            .inner
            .supervisor
            .task_owner(task_id)
            .await
            .map_err(JsonRpcError::from)?;
        let principal = context.principal.as_ref().map(|p| p.name.as_str());
        match owner {
            Some(owner) if *owner.agent == *context.agent && owner.created_by(principal) => Ok(()),
            _ => Err(rpc_error::from_runtime(&Error::TaskNotFound(
                task_id.clone(),
            ))),
        }
    }

    /// `ListTasks`: the caller's tasks at this agent's endpoint (the rule
    /// [`check_owner`](Self::check_owner) applies to one task), filtered, most
    /// recently changed first, in pages of `pageSize` (1 to 100, default 50) with an
    /// opaque cursor, and `totalSize` over all pages.
    async fn list_tasks(
        &self,
        context: &CallContext,
        params: v1::ListTasksRequest,
        activated: Handoffs,
    ) -> Result<v1::ListTasksResponse, JsonRpcError> {
        let page_size = match params.page_size {
            None => DEFAULT_PAGE_SIZE,
            Some(size @ 1..=100) => size,
            Some(other) => {
                return Err(invalid_params(format!(
                    "`pageSize` must be between 1 and 100, not {other}"
                )));
            }
        };
        let before = match params.page_token.as_str() {
            "" => None,
            token => Some(parse_page_token(token).ok_or_else(|| {
                invalid_params(format!(
                    "`pageToken` `{token}` is not a token this server gave; start without one"
                ))
            })?),
        };
        let history_length = match params.history_length {
            None => None,
            Some(n) => Some(u32::try_from(n).map_err(|_| {
                invalid_params(format!("`historyLength` must not be negative, not {n}"))
            })?),
        };
        let after = match &params.status_timestamp_after {
            None => None,
            Some(text) => Some(parse_time(text).ok_or_else(|| {
                invalid_params(format!(
                    "`statusTimestampAfter` `{text}` is not an RFC 3339 timestamp"
                ))
            })?),
        };
        let state = params
            .status
            .filter(|state| *state != v1::TaskState::Unspecified)
            .map(TaskState::from);
        let agent = &*context.agent;
        let principal = context.principal.as_ref().map(|p| p.name.as_str());
        let context_id = params.context_id.as_str();
        let filter = |task: &Task, owner: Option<&TaskOwner>| {
            owner.is_some_and(|owner| *owner.agent == *agent && owner.created_by(principal))
                && (context_id.is_empty() || task.context_id.as_str() == context_id)
                && state.is_none_or(|state| task.status.state == state)
                && after.is_none_or(|after| {
                    task.status
                        .timestamp
                        .as_deref()
                        .and_then(parse_time)
                        .is_some_and(|at| at > after)
                })
        };
        let page = self
            .inner
            .supervisor
            .list_tasks(&filter, usize::try_from(page_size).unwrap_or(1), before)
            .await
            .map_err(JsonRpcError::from)?;
        let include_artifacts = params.include_artifacts == Some(true);
        let tasks = page
            .tasks
            .into_iter()
            .map(|mut task| {
                decorate_task(&mut task, activated);
                trim_history(&mut task, history_length);
                if !include_artifacts {
                    task.artifacts = None;
                }
                v1::Task::from(task)
            })
            .collect();
        Ok(v1::ListTasksResponse {
            tasks,
            next_page_token: page.next.map(page_token).unwrap_or_default(),
            page_size,
            total_size: i32::try_from(page.total).unwrap_or(i32::MAX),
        })
    }

    /// Keeps a message out of a conversation another principal started: its
    /// `contextId` is dropped, so the message starts a conversation of its own (with a
    /// new id in the reply). Refusing would tell the caller that the id exists.
    async fn own_conversation(
        &self,
        context: &CallContext,
        message: &mut Message,
    ) -> Result<(), JsonRpcError> {
        let Some(context_id) = &message.context_id else {
            return Ok(());
        };
        let owner = self
            .inner
            .supervisor
            .context_principal(context_id)
            .await
            .map_err(JsonRpcError::from)?;
        let principal = context.principal.as_ref().map(|p| p.name.as_str());
        if owner.is_some_and(|owner| Some(&*owner) != principal) {
            tracing::debug!(
                %context_id,
                "contextId of another principal's conversation: starting a new one"
            );
            message.context_id = None;
        }
        Ok(())
    }

    /// The task with its whole history.
    async fn task(&self, task_id: &TaskId) -> Result<Task, JsonRpcError> {
        self.inner
            .supervisor
            .get_task(task_id, None)
            .await
            .map_err(JsonRpcError::from)
    }

    /// The task without history, to check it exists.
    async fn task_summary(&self, task_id: &TaskId) -> Result<Task, JsonRpcError> {
        self.inner
            .supervisor
            .get_task(task_id, Some(0))
            .await
            .map_err(JsonRpcError::from)
    }

    /// Checks a send's params and turns them into a supervisor send.
    async fn prepare(
        &self,
        agent: &Exposed,
        context: &CallContext,
        params: MessageSendParams,
    ) -> Result<(SendRequest, Option<Webhook>), JsonRpcError> {
        let MessageSendParams {
            mut message,
            configuration,
            metadata,
        } = params;
        let configuration = configuration.unwrap_or_default();
        check_output_modes(agent, &configuration)?;
        check_input_modes(agent, &message)?;
        // Read once here; the send path takes the payload as read.
        let mut read_payload = None;
        if context.has_extension(HANDOFF_EXTENSION_URI) {
            match handoff::payload_from_message(&message) {
                Some(Err(invalid)) => {
                    return Err(rpc_error::invalid_payload(&invalid));
                }
                Some(Ok(payload)) => read_payload = Some(Box::new(payload)),
                None => {}
            }
        } else {
            strip_handoff_markers(&mut message);
        }
        let idempotency_key = checked_idempotency_key(context)?;
        match &message.task_id {
            Some(task_id) => self.check_owner(context, task_id).await?,
            None => self.own_conversation(context, &mut message).await?,
        }
        let webhook = match configuration.push_notification_config {
            Some(webhook) => {
                let push = self.push_or_unsupported()?;
                push.validate(&webhook).await.map_err(JsonRpcError::from)?;
                Some((webhook, context.version))
            }
            None => None,
        };
        let webhook = webhook.map(|(webhook, version)| (webhook, version, request_trace(context)));
        // What the client sent reaches the agent: `params.metadata` and the activated
        // extensions (the message keeps its own metadata).
        let across = crate::remote::Across::read(&message, context.traceparent.as_deref());
        if across.loops_back_to(&agent.name) {
            return Err(rpc_error::delegation_cycle_across(&agent.name));
        }
        let hops = across.hops;
        // Set field by field, not through the builder: each builder call moves the
        // request (over 500 bytes) in and out, and they are not all inlined.
        let mut request = SendRequest::new(agent.name.clone(), message);
        request.entry_point = EntryPoint::Http;
        request.metadata = across.into_metadata(metadata);
        request.extensions = context.extensions.clone();
        request.hops = hops;
        if let Some(Principal { name, .. }) = &context.principal {
            request.from = Some(Arc::from(name.as_str()));
            request.principal = Some(name.clone());
        }
        request.idempotency_key = idempotency_key;
        request.read_payload = read_payload;
        Ok((request, webhook))
    }

    /// Sends and subscribes: the task as submitted, then its updates. A webhook given
    /// with the send is stored as soon as the task exists.
    async fn start(
        &self,
        request: SendRequest,
        webhook: Option<Webhook>,
    ) -> Result<Started, JsonRpcError> {
        let updates = self
            .inner
            .supervisor
            .stream_numbered(request)
            .await
            .map_err(JsonRpcError::from)?;
        let mut updates: std::pin::Pin<Box<dyn Stream<Item = NumberedEvent> + Send>> =
            Box::pin(updates);
        let Some((seq, a2a::StreamEvent::Task(task))) = updates.next().await else {
            return Err(rpc_error::stream_without_task(None));
        };
        if let Some(webhook) = webhook {
            self.register(&task, webhook).await?;
        }
        Ok(Started { task, seq, updates })
    }

    /// Stores a webhook given with a send and notifies the task's current status, so
    /// that changes made before the webhook was stored are not lost.
    async fn register(
        &self,
        task: &Task,
        (webhook, version, trace): Webhook,
    ) -> Result<(), JsonRpcError> {
        let push = self.push_or_unsupported()?;
        let config = a2a::TaskPushNotificationConfig {
            task_id: task.id.clone(),
            push_notification_config: webhook,
        };
        push.set_traced(config, false, version, trace)
            .await
            .map_err(JsonRpcError::from)?;
        if let Ok(current) = self.inner.supervisor.get_task(&task.id, Some(0)).await {
            push.notify_current(&current);
        }
        Ok(())
    }

    #[expect(clippy::manual_async_fn, reason = "holds the params once")]
    fn send_message<'a>(
        &'a self,
        agent: &'a Exposed,
        context: &'a CallContext,
        params: MessageSendParams,
    ) -> impl Future<Output = Result<SendMessageResult, JsonRpcError>> + Send + 'a {
        async move {
            let blocking = params.is_blocking();
            let history_length = params.history_length();
            let activated = Handoffs::of(context);
            let (request, webhook) = self.prepare(agent, context, params).await?;
            let wait = self.inner.blocking_wait;
            let mut task = if blocking && webhook.is_none() {
                // The common case, and the cheap one: wait on the task's state alone, at most
                // until just before the request timeout, then answer the task as it stands.
                self.inner
                    .supervisor
                    .send_and_wait_for(request, wait)
                    .await
                    .map_err(JsonRpcError::from)?
                    .task
            } else if blocking && let Some(webhook) = webhook {
                // A blocking send with a webhook: the webhook is stored once the task
                // exists and before the caller's turn runs (a task that settles first is
                // notified as it stands), and the answer is the task as it settled,
                // handed over by the send path rather than read back from the store,
                // which may have forgotten it by then. Boxed: this rare path would
                // otherwise size every call's future.
                Box::pin(async {
                    let pending = self
                        .inner
                        .supervisor
                        .send_pending(request)
                        .await
                        .map_err(JsonRpcError::from)?;
                    self.register(pending.task(), webhook).await?;
                    self.inner
                        .supervisor
                        .wait_pending(pending, wait)
                        .await
                        .map_err(JsonRpcError::from)
                })
                .await?
                .task
            } else {
                let submitted = self
                    .inner
                    .supervisor
                    .send(request)
                    .await
                    .map_err(JsonRpcError::from)?;
                if let Some(webhook) = webhook {
                    self.register(&submitted.task, webhook).await?;
                }
                submitted.task
            };
            if blocking && !task.status.state.is_terminal() && !task.status.state.is_interrupted() {
                tracing::info!(
                    agent = %agent.name,
                    task_id = %task.id,
                    ?wait,
                    "blocking message/send answered before its task settled; the task goes on"
                );
            }
            if blocking
                && agent.answer_with_message
                && task.status.state == TaskState::Completed
                && let Some(reply) = task.status.message.take()
            {
                return Ok(SendMessageResult::Message(Arc::unwrap_or_clone(reply)));
            }
            decorate_task(&mut task, activated);
            trim_history(&mut task, history_length);
            Ok(SendMessageResult::Task(task))
        }
    }

    #[expect(clippy::manual_async_fn, reason = "holds the params once")]
    fn stream_message<'a>(
        &'a self,
        agent: &'a Exposed,
        context: &'a CallContext,
        params: MessageSendParams,
    ) -> impl Future<Output = Result<NumberedEventStream, JsonRpcError>> + Send + 'a {
        async move {
            let history_length = params.history_length();
            let activated = Handoffs::of(context);
            let (request, webhook) = self.prepare(agent, context, params).await?;
            let started = self.start(request, webhook).await?;
            Ok(wire_stream(started, history_length, activated))
        }
    }
}

impl A2aService for SupervisorService {
    fn card(&self, agent: &str) -> Option<Arc<AgentCard>> {
        self.inner
            .agents
            .get(agent)
            .map(|exposed| Arc::clone(&exposed.card))
    }

    fn card_at(&self, agent: &str, origin: &str) -> Option<AgentCard> {
        let mut card = Arc::unwrap_or_clone(self.card(agent)?);
        if self.inner.cards_follow_host {
            // Every HTTP interface is at the agent's base URL; a gRPC one is not.
            let base = std::mem::replace(&mut card.url, card::agent_url(origin, agent));
            for interface in card.additional_interfaces.iter_mut().flatten() {
                if interface.url == base {
                    interface.url.clone_from(&card.url);
                }
            }
        }
        if let Some(port) = self.inner.grpc_follows_host
            && let Some(host) = reqwest::Url::parse(origin)
                .ok()
                .and_then(|url| url.host_str().map(str::to_owned))
        {
            for interface in card.additional_interfaces.iter_mut().flatten() {
                if interface.transport == TransportProtocol::Grpc {
                    interface.url = format!("{host}:{port}");
                }
            }
        }
        Some(card)
    }

    fn default_agent(&self) -> Option<String> {
        self.inner.default_agent.clone()
    }

    fn agents(&self) -> Vec<String> {
        self.inner.agents.keys().cloned().collect()
    }

    fn extended_card(&self, agent: &str, _principal: &Principal) -> Option<AgentCard> {
        self.inner.agents.get(agent)?.extended.clone()
    }

    fn call(
        &self,
        context: CallContext,
        request: A2aRequest,
    ) -> impl Future<Output = Result<Reply, JsonRpcError>> + Send {
        self.dispatch(context, request)
    }
}

/// The descriptors of the agents this edge serves.
fn exposed_descriptors(
    supervisor: &Supervisor,
    config: &EdgeConfig,
) -> Result<Vec<AgentDescriptor>, EdgeError> {
    match &config.agents {
        None => {
            let mut exposed: Vec<AgentDescriptor> =
                supervisor.agents().filter(|d| d.exposed).cloned().collect();
            exposed.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(exposed)
        }
        Some(names) => names
            .iter()
            .map(|name| {
                let descriptor = supervisor
                    .agent(name)
                    .ok_or_else(|| EdgeError::UnknownAgent {
                        key: "agents",
                        agent: name.clone(),
                    })?;
                if !descriptor.exposed {
                    return Err(EdgeError::NotExposed {
                        key: "agents",
                        agent: name.clone(),
                    });
                }
                Ok(descriptor.clone())
            })
            .collect(),
    }
}

/// Checks that `name` is one of the served agents, naming the problem otherwise.
fn check_served(
    supervisor: &Supervisor,
    served: &[AgentDescriptor],
    key: &'static str,
    name: &str,
) -> Result<(), EdgeError> {
    if served.iter().any(|d| d.name == name) {
        return Ok(());
    }
    if supervisor.agent(name).is_none() {
        Err(EdgeError::UnknownAgent {
            key,
            agent: name.to_owned(),
        })
    } else {
        Err(EdgeError::NotExposed {
            key,
            agent: name.to_owned(),
        })
    }
}

/// The caller's `Idempotency-Key` header, checked: 1 to 255 printable ASCII
/// characters (what the header's draft standard and common practice allow).
fn checked_idempotency_key(context: &CallContext) -> Result<Option<String>, JsonRpcError> {
    let Some(key) = &context.idempotency_key else {
        return Ok(None);
    };
    let problem = if key.trim().is_empty() {
        Some("is empty")
    } else if key.len() > MAX_IDEMPOTENCY_KEY {
        Some("is longer than 255 bytes")
    } else if !key.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        Some("holds characters other than printable ASCII")
    } else {
        None
    };
    match problem {
        None => Ok(Some(key.clone())),
        Some(problem) => Err(rpc_error::invalid_idempotency_key(problem)),
    }
}

/// How long a blocking send waits, inside the server's `request_timeout`: a little
/// less, so the task as it stands is answered before the server gives up on the call
/// (which would answer -32603 and lose the task's id).
fn blocking_wait(request_timeout: Duration) -> Duration {
    let margin = (request_timeout / 10).min(Duration::from_millis(250));
    request_timeout.saturating_sub(margin)
}

/// One line per refused send, with what refused it: the policy, a limit, bad params.
/// The refusal is decided in the runtime or here; this is where it becomes the
/// client's error, so this is where it is logged, once.
fn log_refused(agent: &Exposed, context: &CallContext, method: &str, error: &JsonRpcError) {
    let reason = error
        .data
        .as_ref()
        .and_then(|data| data.get("reason"))
        .and_then(Value::as_str)
        .unwrap_or("unspecified");
    tracing::info!(
        agent = %agent.name,
        method,
        rpc_id = %context.request_id,
        principal = context.principal.as_ref().map(|p| p.name.as_str()),
        code = error.code,
        reason,
        message = %error.message,
        "send refused"
    );
}

/// Whether a media type range (`text/plain`, `text/*`, `*/*`) covers a media type.
/// Parameters (`; charset=utf-8`) and case are ignored.
pub(crate) fn media_matches(range: &str, media: &str) -> bool {
    // Compared in place, ignoring ASCII case: every part of every send is checked
    // against the agent's modes. Halved by a byte loop, as `media_essence` cuts.
    fn halves(m: &str) -> Option<(&str, &str)> {
        m.bytes()
            .position(|b| b == b'/')
            .map(|slash| (&m[..slash], &m[slash + 1..]))
    }
    let (range, media) = (media_essence(range), media_essence(media));
    if range == "*/*" || range == "*" || media == "*/*" {
        return true;
    }
    match (halves(range), halves(media)) {
        (Some((rt, rs)), Some((mt, ms))) => {
            rt.eq_ignore_ascii_case(mt) && (rs == "*" || ms == "*" || rs.eq_ignore_ascii_case(ms))
        }
        _ => range.eq_ignore_ascii_case(media),
    }
}

/// An `acceptedOutputModes` entry as a media range, the way clients write them: a
/// media type or range as it stands (`text/plain`, `text/*`, `*/*`), and a bare token
/// as the range of its top-level type (`text` is `text/*`, `*` is `*/*`), except `json`,
/// which is `application/json`. Anything else (empty, spaces, several slashes, odd
/// characters) is not a media type: `None`, and the entry is ignored.
pub(crate) fn accepted_range(entry: &str) -> Option<String> {
    let essence = media_essence(entry);
    let token = |t: &str| {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-*".contains(&b))
    };
    match essence.split_once('/') {
        Some((kind, sub)) if token(kind) && token(sub) => Some(essence.to_ascii_lowercase()),
        Some(_) => None,
        None if essence == "*" => Some("*/*".to_owned()),
        None if essence.eq_ignore_ascii_case("json") => Some("application/json".to_owned()),
        None if token(essence) => Some(format!("{}/*", essence.to_ascii_lowercase())),
        None => None,
    }
}

/// -32005 when every well-formed entry of `acceptedOutputModes` misses all of the
/// agent's output modes. Entries are read with [`accepted_range`]: the official
/// samples' CLI client sends `["text"]`, which must reach a `text/plain` agent.
/// With no well-formed entry at all the client has said nothing that can be checked,
/// so the send goes ahead.
fn check_output_modes(
    agent: &Exposed,
    configuration: &MessageSendConfiguration,
) -> Result<(), JsonRpcError> {
    let Some(accepted) = configuration.accepted_output_modes.as_deref() else {
        return Ok(());
    };
    let ranges: Vec<String> = accepted.iter().filter_map(|a| accepted_range(a)).collect();
    if ranges.is_empty()
        || agent.output_modes.is_empty()
        || ranges
            .iter()
            .any(|a| agent.output_modes.iter().any(|o| media_matches(a, o)))
    {
        return Ok(());
    }
    Err(rpc_error::output_mode_not_accepted(
        &agent.name,
        accepted,
        &agent.output_modes,
    ))
}

/// -32005 when a part's media type is not one the agent accepts. Text parts are
/// `text/plain`, data parts `application/json` (except the handoff part, which the
/// extension every card declares covers), file parts their `mimeType` when given.
fn check_input_modes(agent: &Exposed, message: &Message) -> Result<(), JsonRpcError> {
    if agent.input_modes.is_empty() {
        return Ok(());
    }
    for (index, part) in message.parts.iter().enumerate() {
        let media = match part {
            Part::Text(_) => Some("text/plain"),
            Part::Data(data) if is_handoff_part(data.metadata.as_ref()) => None,
            Part::Data(_) => Some("application/json"),
            Part::File(file) => match &file.file {
                a2a::FileContent::Bytes(f) => f.mime_type.as_deref(),
                a2a::FileContent::Uri(f) => f.mime_type.as_deref(),
            },
        };
        let Some(media) = media else { continue };
        if !agent.input_modes.iter().any(|m| media_matches(m, media)) {
            return Err(rpc_error::input_mode_not_accepted(
                &agent.name,
                index,
                media,
                &agent.input_modes,
            ));
        }
    }
    Ok(())
}

fn is_handoff_part(metadata: Option<&Metadata>) -> bool {
    metadata.is_some_and(|m| m.contains_key(HANDOFF_EXTENSION_URI))
}

/// Without the extension activated, a handoff data part is an ordinary data part: the
/// marker that makes it a payload is removed, so the agent gets no typed payload and
/// the events no payload type, while the free text and the data itself still arrive.
fn strip_handoff_markers(message: &mut Message) {
    for part in &mut message.parts {
        if let Part::Data(data) = part
            && let Some(metadata) = data.metadata.as_mut()
            && metadata.remove(HANDOFF_EXTENSION_URI).is_some()
        {
            tracing::debug!(
                "handoff part sent without activating the extension: delivered as plain data"
            );
            if metadata.is_empty() {
                data.metadata = None;
            }
        }
    }
}

/// A webhook given with a send, the protocol version of that send (what its
/// notifications are written in) and its trace (what they continue).
type Webhook = (PushNotificationConfig, ProtocolVersion, Option<Traceparent>);

/// The trace a request belongs to, for what it causes later (push deliveries): the
/// current span's ids when OpenTelemetry records it (the edge's span, itself in the
/// caller's trace), else the request's own `traceparent`.
fn request_trace(context: &CallContext) -> Option<Traceparent> {
    Traceparent::of_span(&tracing::Span::current())
        .or_else(|| context.traceparent.as_deref().and_then(Traceparent::parse))
}

/// The page size of `ListTasks` when the request names none (the proto's default).
const DEFAULT_PAGE_SIZE: i32 = 50;

/// A store cursor as a `ListTasks` page token. The token is opaque to clients; the
/// prefix tells a token of this server from anything else.
fn page_token(cursor: u64) -> String {
    format!("c{cursor:x}")
}

/// The store cursor of a page token [`page_token`] made.
fn parse_page_token(token: &str) -> Option<u64> {
    u64::from_str_radix(token.strip_prefix('c')?, 16).ok()
}

/// An RFC 3339 timestamp.
fn parse_time(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

use rpc_error::invalid_params;

/// Keeps the `n` most recent history messages (all when `None`; none for 0).
fn trim_history(task: &mut Task, n: Option<u32>) {
    let (Some(n), Some(history)) = (n, task.history.as_mut()) else {
        return;
    };
    let keep = usize::try_from(n).unwrap_or(usize::MAX);
    let excess = history.len().saturating_sub(keep);
    history.drain(..excess);
}

/// The payload type of the send a task answers: the most recent user message with a
/// handoff payload.
fn payload_type_of(task: &Task) -> Option<PayloadType> {
    task.history.as_ref()?.iter().rev().find_map(|message| {
        if message.role != Role::User {
            return None;
        }
        match handoff::payload_from_message(message) {
            Some(Ok(payload)) => Some(payload.payload_type()),
            _ => None,
        }
    })
}

/// Marks metadata with the payload type, under the extension's URI, as the handoff
/// part's own marker is written: `{"<uri>": {"payloadType": "task_delegation"}}`.
fn mark(metadata: &mut Option<Metadata>, payload_type: PayloadType) {
    metadata.get_or_insert_with(Metadata::new).insert(
        HANDOFF_EXTENSION_URI.to_owned(),
        json!({"payloadType": payload_type.as_str()}),
    );
}

/// Whether a call activated the handoff extension, named: with it, tasks and
/// stream events carry the payload type they answer in their metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handoffs {
    /// The caller activated the extension: payload types are marked.
    Marked,
    /// It did not: a handoff data part is an ordinary data part.
    Plain,
}

impl Handoffs {
    fn of(context: &CallContext) -> Self {
        if context.has_extension(HANDOFF_EXTENSION_URI) {
            Self::Marked
        } else {
            Self::Plain
        }
    }
}

/// With the extension activated, puts the task's payload type in its metadata.
fn decorate_task(task: &mut Task, activated: Handoffs) {
    if activated == Handoffs::Plain {
        return;
    }
    if let Some(payload_type) = payload_type_of(task) {
        mark(&mut task.metadata, payload_type);
    }
}

/// The runtime's task stream as A2A stream events: the task first (history trimmed to
/// `history_length`), then status and artifact updates, marked with the payload type
/// when the extension is activated.
fn wire_stream(
    started: Started,
    history_length: Option<u32>,
    activated: Handoffs,
) -> NumberedEventStream {
    let Started {
        mut task,
        seq,
        updates,
    } = started;
    let payload_type = match activated {
        Handoffs::Marked => payload_type_of(&task),
        Handoffs::Plain => None,
    };
    if let Some(payload_type) = payload_type {
        mark(&mut task.metadata, payload_type);
    }
    trim_history(&mut task, history_length);
    let first = futures::stream::once(async move { Ok((seq, a2a::StreamEvent::Task(task))) });
    Box::pin(first.chain(wire_updates(updates, payload_type)))
}

/// Task updates as A2A stream events, marked with the payload type when the extension
/// is activated.
fn wire_updates(
    updates: std::pin::Pin<Box<dyn Stream<Item = NumberedEvent> + Send>>,
    payload_type: Option<PayloadType>,
) -> NumberedEventStream {
    Box::pin(updates.map(move |(seq, mut event)| {
        if let Some(payload_type) = payload_type {
            let metadata = match &mut event {
                a2a::StreamEvent::Task(task) => &mut task.metadata,
                a2a::StreamEvent::Message(message) => &mut message.metadata,
                a2a::StreamEvent::StatusUpdate(update) => &mut update.metadata,
                a2a::StreamEvent::ArtifactUpdate(update) => &mut update.metadata,
            };
            mark(metadata, payload_type);
        }
        Ok((seq, event))
    }))
}

#[cfg(test)]
mod tests;
