//! [`Runtime`] and its builder.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use agentyard_actors::remote::{RemoteOptions, RemotePeer};
use agentyard_actors::{
    Agent, AgentDescriptor, AgentError, InMemoryTaskStore, IntentClassifier, Outcome, Registration,
    Result, SendRequest, SessionAgent, SessionInfo, Settled, SharedIntentClassifier, StreamEvent,
    Submitted, Subscription, Supervisor, SupervisorConfig, TaskStore,
};
use agentyard_policy::{Decision, Policy};
use agentyard_transport::a2a::{Message, Task};
use agentyard_transport::{ContextId, TaskId};
use futures::Stream;

/// A running agentyard: registered agent types, their live sessions, the supervisor
/// every send goes through, the task store and the event bus.
///
/// Cheap to clone; every clone is the same runtime.
///
/// ```
/// use agentyard::{Agent, AgentDescriptor, AgentError, Message, Runtime, TaskContext};
///
/// struct Echo;
///
/// impl Agent for Echo {
///     async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
///         let text = ctx.message().text();
///         ctx.reply_text(text);
///         Ok(())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> agentyard::Result<()> {
/// let runtime = Runtime::builder()
///     .agent(AgentDescriptor::new("echo"), |_| Echo)
///     .build()
///     .await?;
/// let done = runtime.send_and_wait("echo", Message::user_text("hi")).await?;
/// assert_eq!(done.task.status.message.expect("a reply").text(), "hi");
/// runtime.shutdown(std::time::Duration::from_secs(1)).await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Runtime {
    supervisor: Supervisor,
}

/// Builds a [`Runtime`].
///
/// | setting | default |
/// |---|---|
/// | policy | allow everything, hop limit 8 |
/// | task store | [`InMemoryTaskStore`] |
/// | global / per-agent / per-session concurrency | 10,000 / 1,000 / 1 |
/// | waiting queue global / per-agent / per-session | 10,000 / 1,000 / 64 |
/// | session idle timeout (passivation) | 5 minutes |
/// | warm sessions (idle sessions kept live) | 1,000 |
/// | cancel grace period | 2 s |
/// | idempotency key TTL / capacity | 10 minutes / 100,000 |
/// | history depth an agent sees | 20 messages |
/// | intent classifier for free text | none (free text has no intent) |
/// | metrics | on |
#[must_use]
#[derive(Default)]
pub struct RuntimeBuilder {
    config: SupervisorConfig,
    registrations: Vec<Registration>,
    remotes: Vec<(String, RemoteOptions)>,
    policy: Option<Arc<dyn Policy>>,
    store: Option<Arc<dyn TaskStore>>,
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("config", &self.config)
            .field("registrations", &self.registrations)
            .field("remotes", &self.remotes)
            .field("custom_policy", &self.policy.is_some())
            .field("custom_store", &self.store.is_some())
            .finish()
    }
}

macro_rules! setter {
    ($(#[$doc:meta])* $name:ident: $ty:ty) => {
        $(#[$doc])*
        pub fn $name(mut self, value: $ty) -> Self {
            self.config.$name = value;
            self
        }
    };
}

impl RuntimeBuilder {
    /// Registers an agent type: `factory` makes one agent value per session.
    pub fn agent<A, F>(mut self, descriptor: AgentDescriptor, factory: F) -> Self
    where
        A: Agent,
        F: Fn(&SessionInfo) -> A + Send + Sync + 'static,
    {
        self.registrations
            .push(Registration::new(descriptor, factory));
        self
    }

    /// Registers the remote A2A agent whose card is at `card_url` as the agent type
    /// `name` (see [`agentyard_actors::remote`]): local agents and callers reach it
    /// by that name, through the supervisor like any agent. Its card is fetched by
    /// [`build`](Self::build), which fails when it cannot be.
    pub fn remote(self, name: impl Into<String>, card_url: impl Into<String>) -> Self {
        self.remote_with(name, RemoteOptions::new(card_url))
    }

    /// [`remote`](Self::remote) with every option: credentials, timeouts, the card
    /// refresh schedule, what an unreachable card at start does, the peer's
    /// concurrency limit, whether the edge exposes it (the gateway).
    pub fn remote_with(mut self, name: impl Into<String>, options: RemoteOptions) -> Self {
        self.remotes.push((name.into(), options));
        self
    }

    /// Registers an agent type from its [`Registration`] (a local agent's, or a
    /// [`RemotePeer::registration`]).
    pub fn registration(mut self, registration: Registration) -> Self {
        self.registrations.push(registration);
        self
    }

    /// Registers an already connected remote agent (e.g. one a workflow made from a
    /// card URL with [`RemotePeer::connect`]).
    pub fn remote_peer(mut self, peer: &Arc<RemotePeer>) -> Self {
        self.registrations.push(peer.registration());
        self
    }

    /// Registers an agent type whose per-session state is its own `&mut self`
    /// ([`SessionAgent`]): `factory` makes one value per session.
    pub fn session_agent<A, F>(mut self, descriptor: AgentDescriptor, factory: F) -> Self
    where
        A: SessionAgent,
        F: Fn(&SessionInfo) -> A + Send + Sync + 'static,
    {
        self.registrations
            .push(Registration::session(descriptor, factory));
        self
    }

    /// Registers a closure from the message to its outcome as an agent type (see
    /// [`agent_fn`](agentyard_actors::agent_fn)).
    pub fn agent_fn<F, Fut, R>(mut self, descriptor: AgentDescriptor, handler: F) -> Self
    where
        F: Fn(Message) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<R, AgentError>> + Send + 'static,
        R: Into<Outcome> + 'static,
    {
        self.registrations
            .push(Registration::from_fn(descriptor, handler));
        self
    }

    /// Uses this policy instead of allowing everything.
    pub fn policy(mut self, policy: impl Policy + 'static) -> Self {
        self.policy = Some(Arc::new(policy));
        self
    }

    /// Uses this task store instead of the in-memory one.
    pub fn store(mut self, store: impl TaskStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// Uses this shared task store instead of the in-memory one (a store the caller
    /// keeps a handle on, e.g. to close it).
    pub fn shared_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Consults `classifier` for the intent of free-text sends (those without a
    /// valid handoff payload); its answer is the `intent` of the send's events and
    /// [`TaskContext::intent`](agentyard_actors::TaskContext::intent). Without one (the
    /// default) free text has no intent. See [`agentyard_actors::intent`].
    pub fn intent_classifier(mut self, classifier: impl IntentClassifier) -> Self {
        self.config.intent_classifier = Some(SharedIntentClassifier::new(classifier));
        self
    }

    /// Replaces every supervisor setting at once.
    pub fn config(mut self, config: SupervisorConfig) -> Self {
        self.config = config;
        self
    }

    setter!(
        /// Tasks running at once in the whole runtime.
        global_limit: usize
    );
    setter!(
        /// Sends that may wait for the global limit before being refused as busy.
        global_queue: usize
    );
    setter!(
        /// Tasks of one agent type running at once (a descriptor may say otherwise).
        agent_limit: usize
    );
    setter!(
        /// Sends that may wait for an agent type's limit.
        agent_queue: usize
    );
    setter!(
        /// Tasks of one session running at once.
        session_limit: usize
    );
    setter!(
        /// Sends that may wait for a session.
        session_queue: usize
    );
    setter!(
        /// How long a session may sit idle before it is passivated.
        idle_timeout: Duration
    );
    setter!(
        /// Idle sessions kept live; past it the least recently used is passivated at
        /// once (0 passivates every session as soon as its work settles).
        warm_sessions: usize
    );
    setter!(
        /// How long a canceled handler may keep running before it is dropped.
        cancel_grace: Duration
    );
    setter!(
        /// How long an idempotency key is remembered.
        idempotency_ttl: Duration
    );
    setter!(
        /// How many idempotency keys are remembered at most.
        idempotency_capacity: usize
    );
    setter!(
        /// How many earlier messages of its conversation an agent sees.
        history_depth: usize
    );
    setter!(
        /// How far an event subscriber may fall behind before it lags.
        event_capacity: usize
    );
    setter!(
        /// Whether the runtime keeps metrics (default yes); off, the send path counts
        /// nothing and `/metrics` is not served. See [`crate::metrics`].
        metrics: bool
    );

    /// Starts the runtime. Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// [`agentyard_actors::Error::Remote`] when a remote agent's card cannot be
    /// fetched (and its start mode says to fail);
    /// [`agentyard_actors::Error::SessionUnavailable`] if the supervisor actor cannot
    /// start.
    pub async fn build(mut self) -> Result<Runtime> {
        for (name, options) in std::mem::take(&mut self.remotes) {
            let peer = RemotePeer::connect(name, options).await?;
            self.registrations.push(peer.registration());
        }
        // Not `AllowAll`: that has no hop limit, so two agents delegating to each
        // other would loop until the concurrency limits ran out.
        let policy = self
            .policy
            .unwrap_or_else(|| Arc::new(agentyard_policy::RulePolicy::default()));
        let store = self
            .store
            .unwrap_or_else(|| Arc::new(InMemoryTaskStore::new()));
        let supervisor = Supervisor::start(self.config, self.registrations, policy, store).await?;
        Ok(Runtime { supervisor })
    }
}

impl Runtime {
    /// A builder with the defaults in [`RuntimeBuilder`]'s table.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// After a crash, with the durable `store` this runtime uses: ends every task that
    /// was running as `failed` ("the server restarted"), except those of agents that
    /// opted in ([`AgentDescriptor::rerun_after_restart`]), which run again with their
    /// last message, as the principal that created them. Tasks waiting for input stay
    /// answerable. Call it before taking sends, and only when this process is the
    /// store's only user (an embedded store; not a shared PostgreSQL one).
    ///
    /// # Errors
    /// The store's, when it cannot be read or written. A task that cannot be sent again
    /// is logged and left waiting for input.
    pub async fn recover(
        &self,
        store: &dyn TaskStore,
    ) -> std::result::Result<agentyard_store::restart::Recovered, agentyard_store::StoreError> {
        let supervisor = &self.supervisor;
        let rerun = |owner: &agentyard_store::TaskOwner| {
            supervisor
                .agent(&owner.agent)
                .is_some_and(|descriptor| descriptor.rerun_after_restart)
        };
        let recovered = agentyard_store::restart::recover_with(store, &rerun).await?;
        for task_id in &recovered.rerun {
            let Some(task) = store.get(task_id, None).await? else {
                continue;
            };
            let Some(owner) = store.owner(task_id).await? else {
                continue;
            };
            let Some(last) = task
                .history
                .iter()
                .flatten()
                .rev()
                .find(|message| message.role == agentyard_transport::a2a::Role::User)
            else {
                continue;
            };
            let mut message = Message::clone(last);
            message.message_id = agentyard_transport::MessageId::mint();
            message.task_id = Some(task_id.clone());
            message.context_id = Some(task.context_id.clone());
            let mut request = SendRequest::new(owner.agent.to_string(), message);
            if let Some(principal) = &owner.principal {
                request = request.principal(principal.to_string());
            }
            if let Err(error) = supervisor.send(request).await {
                tracing::warn!(%task_id, %error, "a task cut off by a restart could not run again");
            }
        }
        Ok(recovered)
    }

    /// The supervisor, for entry points (the HTTP edge, workflows) that build their own
    /// [`SendRequest`]s.
    #[must_use]
    pub fn supervisor(&self) -> &Supervisor {
        &self.supervisor
    }

    /// Sends `message` to the agent type `to` from the API entry point and returns once
    /// the task is submitted.
    ///
    /// # Errors
    /// See [`Supervisor::send`].
    pub async fn send(&self, to: &str, message: Message) -> Result<Submitted> {
        self.supervisor.send(SendRequest::new(to, message)).await
    }

    /// Sends and waits until the task completes, ends, or asks for input.
    ///
    /// # Errors
    /// See [`Supervisor::send`].
    pub async fn send_and_wait(&self, to: &str, message: Message) -> Result<Settled> {
        self.supervisor
            .send_and_wait(SendRequest::new(to, message))
            .await
    }

    /// Sends a fully described request (sender, idempotency key, payload…) and returns
    /// once the task is submitted.
    ///
    /// # Errors
    /// See [`Supervisor::send`].
    pub async fn send_request(&self, request: SendRequest) -> Result<Submitted> {
        self.supervisor.send(request).await
    }

    /// Sends and streams the task's updates.
    ///
    /// # Errors
    /// See [`Supervisor::send`].
    pub async fn stream(
        &self,
        to: &str,
        message: Message,
    ) -> Result<impl Stream<Item = StreamEvent> + Send + 'static> {
        self.supervisor.stream(SendRequest::new(to, message)).await
    }

    /// Returns a task with at most `history_length` of its most recent messages.
    ///
    /// # Errors
    /// [`agentyard_actors::Error::TaskNotFound`].
    pub async fn get_task(&self, task_id: &TaskId, history_length: Option<usize>) -> Result<Task> {
        self.supervisor.get_task(task_id, history_length).await
    }

    /// Cancels a task; it ends `canceled` even if its agent ignores the signal.
    ///
    /// # Errors
    /// [`agentyard_actors::Error::TaskNotFound`],
    /// [`agentyard_actors::Error::TaskNotCancelable`].
    pub async fn cancel_task(&self, task_id: &TaskId) -> Result<Task> {
        self.supervisor.cancel_task(task_id).await
    }

    /// Asks the policy about a send without sending it or spending rate-limit tokens.
    ///
    /// # Errors
    /// [`agentyard_actors::Error::UnknownAgent`].
    pub fn check_policy(&self, request: &SendRequest) -> Result<Decision> {
        self.supervisor.check_policy(request)
    }

    /// Subscribes to every event from now on.
    #[must_use]
    pub fn subscribe(&self) -> Subscription {
        self.supervisor.subscribe()
    }

    /// Starts a session ahead of its first message; see [`Supervisor::spawn_session`].
    ///
    /// # Errors
    /// See [`Supervisor::spawn_session`].
    pub fn spawn_session(&self, agent: &str, context_id: Option<ContextId>) -> Result<ContextId> {
        self.supervisor.spawn_session(agent, context_id)
    }

    /// Stops a session; see [`Supervisor::stop_session`].
    pub fn stop_session(&self, agent: &str, context_id: &ContextId) -> bool {
        self.supervisor.stop_session(agent, context_id)
    }

    /// Shuts down gracefully: no new sends, running tasks get `deadline` to finish,
    /// the rest fail visibly, then every session stops.
    pub async fn shutdown(&self, deadline: Duration) {
        self.supervisor.shutdown(deadline).await;
    }
}
