//! Remote A2A agents as local agent types.
//!
//! A [`RemotePeer`] is an agent somewhere else, known by its card URL. Registered
//! with [`RemotePeer::registration`], it is an agent type like any other: local
//! agents and callers `send`, `send_and_wait`, `delegate` and `stream` to it by its
//! name, and every such send runs the supervisor path (events with its entry point,
//! policy, idempotency, the concurrency limits — the peer's own per-agent limit
//! included, so a slow peer cannot take every slot). Its sessions call out through
//! the transport client: the local task mirrors the remote one.
//!
//! - The local task records the remote task and context ids (in the metadata of
//!   its first `working` status message and of its reply, under
//!   [`REMOTE_METADATA_KEY`]; also [`RemotePeer::remote_ids`]).
//! - Status updates and artifacts stream through: `message/stream` when the card
//!   says the peer streams (a dropped stream is resumed with `tasks/resubscribe`),
//!   else a blocking `message/send` followed by `tasks/get` polling with backoff.
//! - `input-required` comes back to the local caller; the answer, sent to the local
//!   task, continues the remote task with its ids.
//! - Canceling the local task cancels the remote one.
//! - A peer that fails, times out or disappears fails the local task with a reason
//!   naming the peer and what happened.
//! - A typed handoff payload travels as the handoff extension's data part (the
//!   extension activated) when the peer's card declares the extension, as its free
//!   text alone otherwise.
//! - Loops and traces across processes: the hop count and the delegation chain
//!   travel in the message's metadata ([`HOPS_METADATA_KEY`],
//!   [`CHAIN_METADATA_KEY`]) and the W3C `traceparent` of the request that led here
//!   goes out on every call (a new trace when there was none). The calls run in a
//!   client span `a2a.remote`; when OpenTelemetry records it, its id is the parent
//!   id sent, so the peer's spans hang under it.

use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use agentyard_transport::a2a::{
    AgentCard, Message, MessageSendConfiguration, MessageSendParams, Metadata, Part, Role,
    SendMessageResult, StreamEvent, Task, TaskIdParams, TaskQueryParams, TaskState,
};
use agentyard_transport::client::{A2aClient, ClientAuth, ClientError, ClientOptions, RetryPolicy};
use agentyard_transport::handoff::{self, HANDOFF_EXTENSION_URI};
use agentyard_transport::{ContextId, MessageId, TaskId};
use dashmap::DashMap;
use futures::StreamExt as _;
use serde_json::{Value, json};
use tracing::Instrument as _;

use crate::agent::{Agent, AgentDescriptor, AgentError, ArtifactChunk, TaskContext};
use crate::supervisor::Registration;

#[cfg(test)]
mod tests;

pub use agentyard_transport::trace::{TRACEPARENT, Traceparent};

/// The message metadata key the hop count travels under between runtimes.
pub const HOPS_METADATA_KEY: &str = "agentyard.dev/hops";
/// The message metadata key the delegation chain travels under: the agents
/// waiting on this message, outermost first, as `instance/agent`.
pub const CHAIN_METADATA_KEY: &str = "agentyard.dev/chain";
/// The metadata key under which a mirrored task's messages name the peer and its
/// task and context ids.
pub const REMOTE_METADATA_KEY: &str = "agentyard.dev/remote";

/// How many local conversations a peer remembers the remote conversation of.
const MAX_CONTEXTS: usize = 100_000;

/// This process's id in delegation chains: one per process, so that a chain that
/// comes back names it.
#[must_use]
pub fn instance_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| uuid::Uuid::new_v4().simple().to_string())
}

/// What a peer's unreachable card at start does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StartMode {
    /// Starting fails with a clear error (the default).
    #[default]
    Fail,
    /// The agent type is registered anyway and the card is fetched again in the
    /// background with backoff; sends meanwhile fail naming the peer.
    Retry,
}

/// How a remote agent is reached.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// The peer's agent card URL (or the base URL its well-known card is under).
    pub card_url: String,
    /// The credential sent to the peer.
    pub auth: Option<ClientAuth>,
    /// Bound on each unary call (default 30 s).
    pub request_timeout: Duration,
    /// Bound on opening a connection (default 5 s).
    pub connect_timeout: Duration,
    /// Tries per call where repeating cannot run the work twice (default 3).
    pub attempts: u32,
    /// How long a whole remote task may take before the local one fails (default:
    /// no limit).
    pub task_timeout: Option<Duration>,
    /// How often the card is fetched again (default 5 minutes; zero: never).
    pub refresh: Duration,
    /// What an unreachable card at start does.
    pub start: StartMode,
    /// Tasks of this peer running at once (default 64), past which sends queue.
    pub concurrency: usize,
    /// Whether agentyard's own edge serves the peer (the gateway).
    pub exposed: bool,
    /// The first wait between two `tasks/get` polls (doubled up to 2 s).
    pub poll_interval: Duration,
    /// Times a dropped stream is resubscribed before the task fails (default 3).
    pub resubscribe_attempts: u32,
    /// How long a streamed remote task may be under way, with nothing else of it
    /// mirrored, before the local task gets a `working` status naming it (default
    /// 50 ms; a wait past the clock's end, such as `Duration::MAX`, never announces).
    /// A call that completes sooner is named by its reply alone, and costs no extra
    /// status write.
    pub announce_after: Duration,
}

impl RemoteOptions {
    /// Options for the peer whose card is at `card_url`, the rest at the defaults.
    #[must_use]
    pub fn new(card_url: impl Into<String>) -> Self {
        Self {
            card_url: card_url.into(),
            auth: None,
            request_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            attempts: 3,
            task_timeout: None,
            refresh: Duration::from_secs(300),
            start: StartMode::Fail,
            concurrency: 64,
            exposed: false,
            poll_interval: Duration::from_millis(100),
            resubscribe_attempts: 3,
            announce_after: ANNOUNCE_AFTER,
        }
    }

    /// How long a streamed remote task may be under way before the local task gets
    /// a status naming it (see [`RemoteOptions::announce_after`]).
    #[must_use]
    pub const fn announce_after(mut self, after: Duration) -> Self {
        self.announce_after = after;
        self
    }

    /// Sends `auth` with every call to the peer.
    #[must_use]
    pub fn auth(mut self, auth: ClientAuth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Exposes the peer through agentyard's edge (the gateway).
    #[must_use]
    pub const fn exposed(mut self, exposed: bool) -> Self {
        self.exposed = exposed;
        self
    }

    /// What an unreachable card at start does.
    #[must_use]
    pub const fn start(mut self, start: StartMode) -> Self {
        self.start = start;
        self
    }

    /// Tasks of this peer running at once.
    #[must_use]
    pub const fn concurrency(mut self, limit: usize) -> Self {
        self.concurrency = limit;
        self
    }

    /// Bounds opening a connection to the peer.
    #[must_use]
    pub const fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Bounds each unary call to the peer.
    #[must_use]
    pub const fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Tries per call where repeating cannot run the work twice (1: no retry).
    #[must_use]
    pub const fn attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts;
        self
    }

    /// Bounds a whole remote task.
    #[must_use]
    pub const fn task_timeout(mut self, timeout: Duration) -> Self {
        self.task_timeout = Some(timeout);
        self
    }

    /// How often the card is fetched again (zero: never).
    #[must_use]
    pub const fn refresh(mut self, every: Duration) -> Self {
        self.refresh = every;
        self
    }

    fn client_options(&self) -> ClientOptions {
        let mut options = ClientOptions::new()
            .timeout(self.request_timeout)
            .connect_timeout(self.connect_timeout)
            .retry(RetryPolicy::new(self.attempts));
        match &self.auth {
            Some(ClientAuth::Bearer(token)) => options = options.bearer_token(token.clone()),
            Some(ClientAuth::ApiKey { header, key }) => {
                options = options.api_key(header.clone(), key.clone());
            }
            // `ClientAuth` is non-exhaustive; a scheme added later is sent as the
            // client sends it, which needs no copy here.
            Some(_) | None => {}
        }
        options
    }
}

/// Why a remote agent could not be registered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// The card could not be fetched or read.
    #[error("remote agent `{name}`: could not fetch its agent card at {url}: {source}")]
    Card {
        /// The remote agent's local name.
        name: String,
        /// The card URL.
        url: String,
        /// What went wrong.
        #[source]
        source: ClientError,
    },
}

/// A connected peer: its client(s) and what its card says.
#[derive(Debug)]
struct Connected {
    client: A2aClient,
    /// The same client with the handoff extension activated, when the card declares it.
    handoff: Option<A2aClient>,
    streaming: bool,
}

/// The remote task a local one mirrors.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemoteIds {
    /// The peer's task id.
    pub task_id: TaskId,
    /// The peer's context id.
    pub context_id: ContextId,
}

/// A remote A2A agent, known by its card URL (see the [module](self)). Shared by
/// all the sessions of its agent type.
#[derive(Debug)]
pub struct RemotePeer {
    name: String,
    options: RemoteOptions,
    connected: RwLock<Option<Arc<Connected>>>,
    card: RwLock<Option<AgentCard>>,
    /// Local task → remote task.
    tasks: DashMap<TaskId, RemoteIds>,
    /// Local conversation → remote conversation.
    contexts: DashMap<ContextId, ContextId>,
}

impl RemotePeer {
    /// Fetches the peer's card and makes a peer named `name`. With
    /// [`StartMode::Retry`] an unreachable card is not an error: the card is fetched
    /// again in the background. Either way the card is refreshed every
    /// `options.refresh`. Must be called inside a tokio runtime.
    ///
    /// # Errors
    ///
    /// [`RemoteError::Card`] when the card cannot be fetched or read and the start
    /// mode is [`StartMode::Fail`].
    pub async fn connect(
        name: impl Into<String>,
        options: RemoteOptions,
    ) -> Result<Arc<Self>, RemoteError> {
        let peer = Arc::new(Self {
            name: name.into(),
            options,
            connected: RwLock::new(None),
            card: RwLock::new(None),
            tasks: DashMap::new(),
            contexts: DashMap::new(),
        });
        match peer.refresh().await {
            Ok(()) => {}
            Err(error) if peer.options.start == StartMode::Retry => {
                tracing::warn!(agent = %peer.name, %error, "remote agent's card unreachable at start; retrying in the background");
            }
            Err(error) => return Err(error),
        }
        peer.spawn_refresh();
        Ok(peer)
    }

    /// The peer's local name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How the peer is reached.
    #[must_use]
    pub const fn options(&self) -> &RemoteOptions {
        &self.options
    }

    /// The card as last fetched, if any was.
    #[must_use]
    pub fn card(&self) -> Option<AgentCard> {
        self.card.read().ok().and_then(|card| card.clone())
    }

    /// The remote task the local task `task_id` mirrors, once the peer named it.
    #[must_use]
    pub fn remote_ids(&self, task_id: &TaskId) -> Option<RemoteIds> {
        self.tasks.get(task_id).map(|ids| ids.clone())
    }

    /// Fetches the card again and connects with what it says now.
    ///
    /// # Errors
    ///
    /// [`RemoteError::Card`] when it cannot be fetched or read; the last good card
    /// stays in use.
    pub async fn refresh(&self) -> Result<(), RemoteError> {
        let card_error = |source| RemoteError::Card {
            name: self.name.clone(),
            url: self.options.card_url.clone(),
            source,
        };
        let client = A2aClient::connect(&self.options.card_url, self.options.client_options())
            .await
            .map_err(card_error)?;
        let card = client.card().cloned();
        let declares = |uri: &str| {
            card.as_ref().is_some_and(|card| {
                card.capabilities
                    .extensions
                    .iter()
                    .flatten()
                    .any(|extension| extension.uri == uri)
            })
        };
        let handoff = if declares(HANDOFF_EXTENSION_URI) {
            let options = client.options().clone().extension(HANDOFF_EXTENSION_URI);
            Some(
                A2aClient::connect(&self.options.card_url, options)
                    .await
                    .map_err(card_error)?,
            )
        } else {
            None
        };
        let streaming = card
            .as_ref()
            .is_some_and(|card| card.capabilities.streaming == Some(true));
        if let Ok(mut slot) = self.connected.write() {
            *slot = Some(Arc::new(Connected {
                client,
                handoff,
                streaming,
            }));
        }
        if let Ok(mut slot) = self.card.write() {
            *slot = card;
        }
        Ok(())
    }

    /// The agent type: a descriptor from the card (name, description, skills,
    /// modes), the peer's concurrency limit and exposure, and a factory whose agents
    /// call the peer.
    #[must_use]
    pub fn registration(self: &Arc<Self>) -> Registration {
        let mut descriptor = AgentDescriptor::new(self.name.clone())
            .exposed(self.options.exposed)
            .concurrency(self.options.concurrency);
        if let Some(card) = self.card() {
            descriptor = descriptor
                .description(card.description.clone())
                .version(card.version.clone())
                .modes(
                    card.default_input_modes.clone(),
                    card.default_output_modes.clone(),
                );
            for skill in card.skills {
                descriptor = descriptor.skill(skill);
            }
        } else {
            descriptor = descriptor.description(format!(
                "remote A2A agent at {} (card not fetched yet)",
                self.options.card_url
            ));
        }
        let peer = Arc::clone(self);
        Registration::new(descriptor, move |_| RemoteAgent {
            peer: Arc::clone(&peer),
        })
    }

    /// Refreshes the card on the options' schedule (and, while it was never
    /// fetched, retries with backoff); stops when the peer is dropped.
    fn spawn_refresh(self: &Arc<Self>) {
        let every = self.options.refresh;
        let weak: Weak<Self> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut retry = Duration::from_millis(500);
            loop {
                let connected = match weak.upgrade() {
                    Some(peer) => peer.current().is_some(),
                    None => return,
                };
                let wait = if connected {
                    if every.is_zero() {
                        return;
                    }
                    every
                } else {
                    retry = retry.saturating_mul(2).min(Duration::from_secs(30));
                    retry
                };
                tokio::time::sleep(wait).await;
                let Some(peer) = weak.upgrade() else { return };
                if let Err(error) = peer.refresh().await {
                    tracing::warn!(agent = %peer.name, %error, "could not refresh the remote agent's card");
                }
            }
        });
    }

    fn current(&self) -> Option<Arc<Connected>> {
        self.connected.read().ok().and_then(|slot| slot.clone())
    }

    /// The connection, fetching the card now if it never was.
    async fn connection(&self) -> Result<Arc<Connected>, String> {
        if let Some(connected) = self.current() {
            return Ok(connected);
        }
        self.refresh().await.map_err(|error| error.to_string())?;
        self.current()
            .ok_or_else(|| format!("remote agent `{}` is not connected", self.name))
    }

    /// A sentence naming the peer, for a failed task's reason.
    fn failure(&self, what: &str) -> String {
        format!(
            "remote agent `{}` ({}) {what}",
            self.name, self.options.card_url
        )
    }
}

/// The agent of a remote agent type's sessions: it forwards each message to the peer
/// and mirrors the remote task.
struct RemoteAgent {
    peer: Arc<RemotePeer>,
}

impl Agent for RemoteAgent {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let peer = &self.peer;
        let connected = match peer.connection().await {
            Ok(connected) => connected,
            Err(reason) => {
                ctx.fail(peer.failure(&format!("is unreachable: {reason}")));
                return Ok(());
            }
        };
        let (message, typed) = outgoing_message(ctx, &peer.tasks, &peer.contexts);
        let base = match (&connected.handoff, typed) {
            (Some(handoff), true) => handoff,
            _ => &connected.client,
        };
        // The client span of the calls to the peer: with OpenTelemetry on, its ids are
        // the parent the peer's spans hang under; without, the request's trace
        // continues with a fresh parent id.
        let span = tracing::info_span!(
            "a2a.remote",
            agent = %peer.name,
            url = %peer.options.card_url,
            task_id = %ctx.task_id(),
            "otel.kind" = "client",
            "otel.status_code" = tracing::field::Empty,
        );
        let traceparent = Traceparent::outgoing(
            &span,
            ctx.request_metadata()
                .and_then(|metadata| metadata.get(TRACEPARENT))
                .and_then(Value::as_str),
        );
        let client = base.with_header(TRACEPARENT, traceparent.to_string());
        let mut mirror = Mirror {
            peer,
            client: &client,
            streaming: connected.streaming,
            remote: peer.tasks.get(ctx.task_id()).map(|ids| ids.clone()),
            announced: false,
            announce_at: None,
        };
        let work = mirror.run(ctx, message);
        let outcome = match peer.options.task_timeout {
            Some(limit) => tokio::time::timeout(limit, work)
                .instrument(span.clone())
                .await
                .unwrap_or_else(|_| {
                    Err(peer.failure(&format!(
                        "did not finish the task within {}s",
                        limit.as_secs_f64()
                    )))
                }),
            None => work.instrument(span.clone()).await,
        };
        if outcome.is_err() {
            span.record("otel.status_code", "ERROR");
        }
        match outcome {
            Ok(()) => {}
            Err(reason) => {
                peer.tasks.remove(ctx.task_id());
                if let Some(ids) = &mirror.remote {
                    // The peer may still be working on it: nobody waits any more.
                    let _ = client
                        .cancel_task(TaskIdParams::new(ids.task_id.clone()))
                        .await;
                }
                ctx.fail(reason);
            }
        }
        Ok(())
    }
}

/// The message sent to the peer: the local message's parts (the handoff part only
/// when the peer declares the extension), continuing the remote task and
/// conversation this local one is tied to, with the hop count and the delegation
/// chain in its metadata. Also whether it carries a typed payload.
fn outgoing_message(
    ctx: &TaskContext,
    tasks: &DashMap<TaskId, RemoteIds>,
    contexts: &DashMap<ContextId, ContextId>,
) -> (Message, bool) {
    let local = ctx.message();
    let mut message = Message::new(Role::User, local.parts.clone());
    // The same id on every retry of this send, distinct per local message.
    message.message_id = MessageId::new(format!("{}-{}", ctx.task_id(), local.message_id));
    let mut typed = false;
    if let Some(payload) = ctx.payload() {
        handoff::attach_to_message(&mut message, payload);
        typed = true;
    }
    if let Some(ids) = tasks.get(ctx.task_id()) {
        message.task_id = Some(ids.task_id.clone());
        message.context_id = Some(ids.context_id.clone());
    } else if let Some(remote) = contexts.get(ctx.context_id()) {
        message.context_id = Some(remote.clone());
    }
    let mut metadata = local.metadata.clone().unwrap_or_default();
    metadata.insert(
        HOPS_METADATA_KEY.to_owned(),
        json!(ctx.hops().saturating_add(1)),
    );
    let mut chain: Vec<Value> = ctx
        .request_metadata()
        .and_then(|metadata| metadata.get(CHAIN_METADATA_KEY))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if ctx.entry_point() == agentyard_policy::EntryPoint::Agent
        && let Some(sender) = ctx.sender()
    {
        chain.push(json!(format!("{}/{sender}", instance_id())));
    }
    metadata.insert(CHAIN_METADATA_KEY.to_owned(), Value::Array(chain));
    message.metadata = Some(metadata);
    (message, typed)
}

/// Strips handoff parts from a message for a peer that does not declare the
/// extension (the free text stays).
fn strip_handoff(message: &mut Message) {
    message.parts.retain(|part| match part {
        Part::Data(data) => !data
            .metadata
            .as_ref()
            .is_some_and(|metadata| metadata.contains_key(HANDOFF_EXTENSION_URI)),
        Part::Text(_) | Part::File(_) => true,
    });
    if let Some(extensions) = &mut message.extensions {
        extensions.retain(|uri| uri != HANDOFF_EXTENSION_URI);
        if extensions.is_empty() {
            message.extensions = None;
        }
    }
}

/// One local task's turn mirrored from the peer.
struct Mirror<'a> {
    peer: &'a RemotePeer,
    client: &'a A2aClient,
    streaming: bool,
    remote: Option<RemoteIds>,
    announced: bool,
    /// When the remote task, under way and not announced yet, is announced if
    /// nothing else of it has been mirrored by then (see [`Announce::Soon`]).
    announce_at: Option<tokio::time::Instant>,
}

/// When `Mirror::record` announces the remote task on the local one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Announce {
    /// Not at all: the remote task has settled, and the local one settles with its
    /// ids in the reply.
    No,
    /// Now: something of the remote task is about to be mirrored (an artifact, a
    /// progress note) or polled for, and the ids go first.
    Now,
    /// If it is still under way after [`RemoteOptions::announce_after`]: most calls
    /// settle sooner, and their reply carries the ids, so a quick call costs no
    /// extra status.
    Soon,
}

/// The default of [`RemoteOptions::announce_after`]: short enough that anyone
/// following the local task sees the remote ids while they matter, long enough that
/// a quick call (most calls) settles first and needs no status write for them.
const ANNOUNCE_AFTER: Duration = Duration::from_millis(50);

/// How a mirrored turn ended, decided by the remote state.
enum Outcome {
    /// The remote task reached this state with this status message.
    Settled(Task),
    /// The peer answered with a message instead of a task.
    Reply(Message),
}

impl Mirror<'_> {
    async fn run(&mut self, ctx: &mut TaskContext, mut message: Message) -> Result<(), String> {
        if self.client.options().extensions().is_empty() {
            strip_handoff(&mut message);
        }
        let mut params = MessageSendParams::new(message);
        let cancelled = ctx.cancel.clone();
        let streaming = self.streaming;
        let raced = tokio::select! {
            outcome = async {
                if streaming {
                    self.streamed(ctx, params).await
                } else {
                    let configuration = params.configuration.get_or_insert_with(MessageSendConfiguration::default);
                    configuration.blocking = Some(true);
                    self.polled(ctx, params).await
                }
            } => Some(outcome),
            () = cancelled.cancelled() => None,
        };
        match raced {
            Some(outcome) => self.finish(ctx, outcome?).await,
            None => {
                self.cancel_remote().await;
                self.peer.tasks.remove(ctx.task_id());
                Ok(())
            }
        }
    }

    /// Asks the peer to cancel the remote task (a failure is logged: the local
    /// task ends canceled either way).
    async fn cancel_remote(&self) {
        let Some(ids) = &self.remote else { return };
        if let Err(error) = self
            .client
            .cancel_task(TaskIdParams::new(ids.task_id.clone()))
            .await
        {
            tracing::warn!(agent = %self.peer.name, task_id = %ids.task_id, %error, "could not cancel the remote task");
        }
    }

    /// Records the remote ids in the peer's maps and, as `announce` says, on the
    /// local task as a `working` status naming them.
    async fn record(
        &mut self,
        ctx: &mut TaskContext,
        task_id: &TaskId,
        context_id: &ContextId,
        announce: Announce,
    ) {
        let known = self
            .remote
            .as_ref()
            .is_some_and(|ids| &ids.task_id == task_id && &ids.context_id == context_id);
        if !known {
            let ids = RemoteIds {
                task_id: task_id.clone(),
                context_id: context_id.clone(),
            };
            self.peer.tasks.insert(ctx.task_id().clone(), ids.clone());
            if self.peer.contexts.len() >= MAX_CONTEXTS {
                // A crude bound, not an LRU: past it every local conversation starts
                // a new remote one on its next message, instead of memory growing
                // with every conversation ever held.
                self.peer.contexts.clear();
            }
            self.peer
                .contexts
                .insert(ctx.context_id().clone(), context_id.clone());
            self.remote = Some(ids);
            self.announced = false;
            self.announce_at = None;
        }
        match announce {
            Announce::No => {}
            Announce::Soon => {
                if !self.announced && self.announce_at.is_none() {
                    // A wait past the clock's end (`Duration::MAX`) means never.
                    self.announce_at =
                        tokio::time::Instant::now().checked_add(self.peer.options.announce_after);
                }
            }
            Announce::Now => self.announce(ctx).await,
        }
    }

    /// Puts the `working` status that names the remote task on the local one, once.
    async fn announce(&mut self, ctx: &mut TaskContext) {
        self.announce_at = None;
        let Some(ids) = self.remote.as_ref().filter(|_| !self.announced) else {
            return;
        };
        self.announced = true;
        let mut note = ctx.agent_message(vec![Part::text(format!(
            "forwarded to remote agent `{}` as task {}",
            self.peer.name, ids.task_id
        ))]);
        note.metadata = Some(self.remote_metadata());
        let _ = ctx
            .events
            .progress(
                ctx.port.store(),
                ctx.port.events(),
                crate::channel::status(TaskState::Working, Some(note.into())),
            )
            .await;
    }

    fn remote_metadata(&self) -> Metadata {
        let mut metadata = Metadata::new();
        if let Some(ids) = &self.remote {
            metadata.insert(
                REMOTE_METADATA_KEY.to_owned(),
                json!({
                    "agent": self.peer.name,
                    "cardUrl": self.peer.options.card_url,
                    "taskId": ids.task_id,
                    "contextId": ids.context_id,
                }),
            );
        }
        metadata
    }

    /// `message/stream`, resubscribing when the stream drops before the task settles.
    async fn streamed(
        &mut self,
        ctx: &mut TaskContext,
        params: MessageSendParams,
    ) -> Result<Outcome, String> {
        let mut stream = self
            .client
            .send_message_stream(params)
            .await
            .map_err(|error| self.peer.failure(&format!("refused the message: {error}")))?;
        let mut resubscribed = 0;
        loop {
            let mut broke = None;
            loop {
                let next = match self.announce_at {
                    Some(at) => match tokio::time::timeout_at(at, stream.next()).await {
                        Ok(next) => next,
                        Err(_) => {
                            self.announce(ctx).await;
                            continue;
                        }
                    },
                    None => stream.next().await,
                };
                let Some(event) = next else { break };
                match event {
                    Ok(StreamEvent::Message(reply)) => return Ok(Outcome::Reply(reply)),
                    Ok(StreamEvent::Task(task)) => {
                        let announce = if task.status.state != TaskState::Working {
                            Announce::No
                        } else if task.artifacts.as_ref().is_some_and(|a| !a.is_empty()) {
                            Announce::Now
                        } else {
                            Announce::Soon
                        };
                        self.record(ctx, &task.id, &task.context_id, announce).await;
                        for artifact in task.artifacts.iter().flatten() {
                            let _ = ctx.artifact(artifact.clone()).await;
                        }
                        if settled(task.status.state) {
                            return Ok(Outcome::Settled(task));
                        }
                    }
                    Ok(StreamEvent::StatusUpdate(update)) => {
                        let state = update.status.state;
                        // The local task is `working` already: only a progress note
                        // is news, and the ids go before it.
                        let note = update.status.message.as_deref().map(Message::text);
                        let note = note.filter(|note| !note.is_empty());
                        let announce = match (state, &note) {
                            (TaskState::Working, Some(_)) => Announce::Now,
                            (TaskState::Working, None) => Announce::Soon,
                            _ => Announce::No,
                        };
                        self.record(ctx, &update.task_id, &update.context_id, announce)
                            .await;
                        if settled(state) {
                            let mut task =
                                Task::new(update.task_id, update.context_id, update.status);
                            task.artifacts = None;
                            return Ok(Outcome::Settled(task));
                        }
                        if state == TaskState::Working
                            && let Some(note) = note
                        {
                            let _ = ctx.working(Some(&note)).await;
                        }
                    }
                    Ok(StreamEvent::ArtifactUpdate(update)) => {
                        self.record(ctx, &update.task_id, &update.context_id, Announce::Now)
                            .await;
                        let chunk = match (update.append == Some(true), update.last_chunk) {
                            (false, Some(false)) => ArtifactChunk::First,
                            (true, Some(false)) => ArtifactChunk::More,
                            (true, _) => ArtifactChunk::Last,
                            (false, _) => ArtifactChunk::Whole,
                        };
                        let _ = ctx.artifact_chunk(update.artifact, chunk).await;
                    }
                    Err(error) => {
                        broke = Some(error.to_string());
                        break;
                    }
                }
            }
            let Some(ids) = self.remote.clone() else {
                return Err(self.peer.failure(&match broke {
                    Some(why) => format!("refused the message: {why}"),
                    None => "closed the stream before naming its task".to_owned(),
                }));
            };
            if resubscribed >= self.peer.options.resubscribe_attempts {
                let why = broke.unwrap_or_else(|| "the stream closed".to_owned());
                return Err(self.peer.failure(&format!(
                    "disappeared mid-task {}: {why}; resubscribing failed {resubscribed} time(s)",
                    ids.task_id
                )));
            }
            resubscribed += 1;
            // Saturating: the interval is the operator's, and may be large.
            tokio::time::sleep(self.peer.options.poll_interval.saturating_mul(resubscribed)).await;
            // The task may have settled while the stream was down.
            if let Ok(task) = self
                .client
                .get_task(TaskQueryParams::new(ids.task_id.clone()))
                .await
                && settled(task.status.state)
            {
                return Ok(Outcome::Settled(task));
            }
            match self
                .client
                .resubscribe(TaskIdParams::new(ids.task_id.clone()))
                .await
            {
                Ok(next) => stream = next,
                Err(error) => {
                    return Err(self.peer.failure(&format!(
                        "disappeared mid-task {}: resubscribing failed: {error}",
                        ids.task_id
                    )));
                }
            }
        }
    }

    /// A blocking `message/send`, then `tasks/get` with backoff until the task
    /// settles.
    async fn polled(
        &mut self,
        ctx: &mut TaskContext,
        params: MessageSendParams,
    ) -> Result<Outcome, String> {
        let answer = self
            .client
            .send_message(params)
            .await
            .map_err(|error| self.peer.failure(&format!("refused the message: {error}")))?;
        let mut task = match answer {
            SendMessageResult::Message(reply) => return Ok(Outcome::Reply(reply)),
            SendMessageResult::Task(task) => task,
        };
        let mut wait = self.peer.options.poll_interval;
        loop {
            let done = settled(task.status.state);
            let announce = if done { Announce::No } else { Announce::Now };
            self.record(ctx, &task.id, &task.context_id, announce).await;
            if done {
                return Ok(Outcome::Settled(task));
            }
            tokio::time::sleep(wait).await;
            wait = wait.saturating_mul(2).min(Duration::from_secs(2));
            task = self
                .client
                .get_task(TaskQueryParams::new(task.id.clone()))
                .await
                .map_err(|error| {
                    self.peer.failure(&format!(
                        "stopped answering about task {}: {error}",
                        task.id
                    ))
                })?;
        }
    }

    /// Ends the local turn as the remote one ended.
    async fn finish(&mut self, ctx: &mut TaskContext, outcome: Outcome) -> Result<(), String> {
        let task = match outcome {
            Outcome::Reply(reply) => {
                let mut message = ctx.agent_message(reply.parts);
                message.metadata = reply.metadata;
                ctx.reply = Some(message);
                return Ok(());
            }
            Outcome::Settled(task) => task,
        };
        if task.status.state != TaskState::Completed {
            // Only a completed task's reply carries the remote ids: any other end
            // names them first, if nothing has yet.
            self.announce(ctx).await;
        }
        // Artifacts of a polled task arrive only with it.
        if !self.streaming {
            for artifact in task.artifacts.iter().flatten() {
                let _ = ctx.artifact(artifact.clone()).await;
            }
        }
        let said = task
            .status
            .message
            .as_deref()
            .map(Message::text)
            .unwrap_or_default();
        match task.status.state {
            TaskState::Completed => {
                let parts = task
                    .status
                    .message
                    .map(|message| Arc::unwrap_or_clone(message).parts)
                    .or_else(|| {
                        task.history.and_then(|history| {
                            history
                                .into_iter()
                                .rev()
                                .find(|message| message.role == Role::Agent)
                                .map(|message| Arc::unwrap_or_clone(message).parts)
                        })
                    });
                if let Some(parts) = parts {
                    let mut message = ctx.agent_message(parts);
                    message.metadata = Some(self.remote_metadata());
                    ctx.reply = Some(message);
                }
                // The remote task ended: a later message starts a new one.
                self.peer.tasks.remove(ctx.task_id());
                Ok(())
            }
            TaskState::InputRequired => {
                ctx.require_input(said);
                Ok(())
            }
            TaskState::AuthRequired => {
                ctx.require_auth(said);
                Ok(())
            }
            TaskState::Rejected => {
                self.peer.tasks.remove(ctx.task_id());
                ctx.reject(self.peer.failure(&format!("rejected the task: {said}")));
                Ok(())
            }
            TaskState::Canceled => {
                self.peer.tasks.remove(ctx.task_id());
                Err(self.peer.failure(&format!("canceled its task: {said}")))
            }
            state => {
                self.peer.tasks.remove(ctx.task_id());
                Err(self
                    .peer
                    .failure(&format!("failed the task ({state}): {said}")))
            }
        }
    }
}

/// Whether a remote state ends this turn: terminal, or waiting for the caller.
const fn settled(state: TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
}

/// What a message arriving over HTTP says of the sends before it in other
/// processes: its hop count, the delegation chain waiting on it, and its trace.
#[derive(Debug, Default)]
pub(crate) struct Across {
    /// Hops so far (0 from a plain client).
    pub(crate) hops: u32,
    chain: Vec<Value>,
    traceparent: Option<String>,
}

impl Across {
    /// Reads the message's metadata and the request's `traceparent` header.
    pub(crate) fn read(message: &Message, traceparent: Option<&str>) -> Self {
        let metadata = message.metadata.as_ref();
        let hops = metadata
            .and_then(|metadata| metadata.get(HOPS_METADATA_KEY))
            .and_then(Value::as_u64)
            .map_or(0, |hops| u32::try_from(hops).unwrap_or(u32::MAX));
        let chain = metadata
            .and_then(|metadata| metadata.get(CHAIN_METADATA_KEY))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Self {
            hops,
            chain,
            traceparent: traceparent
                .filter(|value| Traceparent::parse(value).is_some())
                .map(str::to_owned),
        }
    }

    /// Whether the chain says `agent` of this process is itself waiting on this
    /// message: another process's send came back around, and would wait on its own
    /// caller. (Across processes each side has its own conversations, so the cut
    /// is by agent type.)
    pub(crate) fn loops_back_to(&self, agent: &str) -> bool {
        // Compared in place: every HTTP send asks, and most chains are empty.
        let instance = instance_id();
        self.chain.iter().any(|entry| {
            entry
                .as_str()
                .and_then(|entry| entry.strip_prefix(instance))
                .and_then(|rest| rest.strip_prefix('/'))
                == Some(agent)
        })
    }

    /// The request metadata for the agent: the client's, with the chain and the
    /// trace added so that sends made while handling it carry them on.
    pub(crate) fn into_metadata(self, metadata: Option<Metadata>) -> Option<Metadata> {
        if self.chain.is_empty() && self.traceparent.is_none() {
            return metadata;
        }
        let mut metadata = metadata.unwrap_or_default();
        if !self.chain.is_empty() {
            metadata.insert(CHAIN_METADATA_KEY.to_owned(), Value::Array(self.chain));
        }
        if let Some(traceparent) = self.traceparent {
            metadata.insert(TRACEPARENT.to_owned(), Value::String(traceparent));
        }
        Some(metadata)
    }
}

/// Carries the chain and the trace of the request being handled (`from`) into
/// the metadata of a send made while handling it, unless the send sets its own.
pub(crate) fn carry(from: Option<&Metadata>, to: &mut Option<Metadata>) {
    let Some(from) = from else { return };
    for key in [CHAIN_METADATA_KEY, TRACEPARENT] {
        if let Some(value) = from.get(key)
            && !to.as_ref().is_some_and(|to| to.contains_key(key))
        {
            to.get_or_insert_with(Metadata::new)
                .insert(key.to_owned(), value.clone());
        }
    }
}
