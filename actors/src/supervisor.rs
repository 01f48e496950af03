//! The supervisor: the one path every send takes, and the actor that owns the sessions.
//!
//! # The send path
//!
//! [`Supervisor::send`] runs in the caller's task, in this order:
//!
//! 1. event `a2a.send.initiated`;
//! 2. **policy** (allow/deny rules, rate limits, hop limit) — a rejection emits
//!    `a2a.send.policy_rejected` and the agent never runs;
//! 3. **idempotency** — a key seen within its TTL, from the same caller (principal,
//!    else sender) to the same agent, returns the first send's task
//!    (`a2a.send.deduplicated`); a concurrent repeat waits for the first;
//! 4. **concurrency limits** — per session, per agent type, global, each with a bounded
//!    waiting line; past the line `a2a.send.busy` and [`Error::Busy`]. A
//!    [`Supervisor::send`] takes its place in the session's line without waiting: its
//!    task is created `submitted` and waits for its turn off the caller's path;
//! 5. **routing** — the task is created (or a waiting one continued) and the message
//!    goes to the session actor, which is spawned on first use;
//! 6. when the task settles: `a2a.send.completed` (completed, input-required,
//!    auth-required) or `a2a.send.failed` (failed, canceled, rejected, or not routed).
//!
//! [`Supervisor::route`](Supervisor) reads as those steps, each a function of its
//! own: `check_policy_of` → `claim_key` → `pick_session` → `take_place` →
//! `open_or_continue` → `deliver_in_turn`. The idempotency key's fate is decided in
//! one place, after the steps that can refuse: the task's once it exists; passed on
//! to concurrent repeats when the limits refused (they would be refused alike);
//! released otherwise.
//!
//! The supervisor's parts live beside it: `config` ([`SupervisorConfig`]),
//! `sessions` (the session registry, its warm set, and the one passivation routine)
//! and `live` (the table of tasks that have not ended).
//!
//! # Why the hot path is not one mailbox
//!
//! Every decision above reads shared concurrent state (the policy's own maps, the
//! idempotency cache, semaphores, the session registry) from the sender's task, so sends
//! run in parallel and only meet at the session they address. The supervisor *actor*
//! handles what must be serialized: supervision events from the sessions (a crashed
//! session is dropped from the registry and restarted on its next message) and the
//! periodic sweep that passivates idle sessions.
//!
//! # What a session costs
//!
//! A session whose tasks have all ended holds nothing the store lacks. Such sessions
//! are kept in a bounded warm set ([`SupervisorConfig::warm_sessions`]), least
//! recently settled first out: when a session's work settles and the set is full, the
//! oldest is passivated there and then, from the task that settled, not by the sweep.
//! So memory follows the number of conversations in progress, not the number of
//! requests served.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agentyard_policy::{Decision, Policy};
use agentyard_transport::a2a::{Message, Task, TaskState, TaskStatus, TaskStatusUpdateEvent};
use agentyard_transport::{ContextId, TaskId};
use futures::Stream;
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use crate::agent::{AgentDescriptor, DynAgent, Factory, SessionInfo};
use crate::error::{Error, Result};
use crate::events::{Envelope, EventBus, EventDetail, EventKind, Subscription};
use crate::handoff::Handoff;
use crate::idempotency::{self, Claim, Failure, IdempotencyCache, KeyGuard};
use crate::limits::{LimitScope, Limiter, Permits, Place, Queued};
pub(crate) use crate::send::SessionKey;
pub use crate::send::{DEDUPLICATED_METADATA_KEY, SendRequest, Settled, Submitted};
use crate::send::{Follow, Watcher, caller, is_settled, mark_deduplicated, policy_request};
use crate::session::{SessionActor, SessionMsg};
use crate::store::{StoreError, TaskFilter, TaskOwner, TaskPage, TaskStore};
use crate::task::{TaskChannel, TaskEvents, Work};
use agentyard_transport::a2a::StreamEvent;

mod config;
mod live;
mod resume;
mod sessions;
#[cfg(test)]
mod tests;

pub use config::SupervisorConfig;
use live::{Ended, LiveTasks};
pub use resume::NumberedEvent;
pub(crate) use sessions::SessionShared;
use sessions::Sessions;

/// A registered agent type.
struct Registered {
    descriptor: AgentDescriptor,
    factory: Factory,
    limiter: Limiter,
}

impl fmt::Debug for Registered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registered")
            .field("descriptor", &self.descriptor)
            .finish_non_exhaustive()
    }
}

/// An agent type's registration, as the runtime builder collects them.
pub struct Registration {
    pub(crate) descriptor: AgentDescriptor,
    pub(crate) factory: Factory,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("descriptor", &self.descriptor)
            .finish_non_exhaustive()
    }
}

impl Registration {
    /// Registers an agent type: its descriptor and the factory that makes one agent per
    /// session.
    pub fn new<A, F>(descriptor: AgentDescriptor, factory: F) -> Self
    where
        A: crate::Agent,
        F: Fn(&SessionInfo) -> A + Send + Sync + 'static,
    {
        Self {
            descriptor,
            factory: crate::agent::erase_factory(factory),
        }
    }

    /// The agent type's descriptor.
    #[must_use]
    pub fn descriptor(&self) -> &AgentDescriptor {
        &self.descriptor
    }
}

/// The shared state of the send path.
pub(crate) struct Core {
    pub(crate) config: SupervisorConfig,
    agents: HashMap<Arc<str>, Registered>,
    policy: Arc<dyn Policy>,
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) events: EventBus,
    idempotency: IdempotencyCache,
    global: Limiter,
    sessions: Sessions,
    live: LiveTasks,
    actor: OnceLock<ActorRef<SupervisorMsg>>,
    pub(crate) tracker: TaskTracker,
    shutting_down: AtomicBool,
    restarts: AtomicU64,
}

impl fmt::Debug for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Core")
            .field("config", &self.config)
            .field("agents", &self.agents.keys().collect::<Vec<_>>())
            .field("sessions", &self.sessions.len())
            .field("live_tasks", &self.live.len())
            .finish_non_exhaustive()
    }
}

/// The handle to the supervisor. Cheap to clone; every entry point holds one.
#[derive(Clone)]
pub struct Supervisor {
    core: Arc<Core>,
}

impl fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.core.fmt(f)
    }
}

/// The supervisor actor's messages.
#[derive(Debug)]
pub(crate) enum SupervisorMsg {
    /// Passivate the sessions that have been idle long enough.
    Sweep,
}

struct SupervisorActor;

impl Actor for SupervisorActor {
    type Msg = SupervisorMsg;
    type State = Arc<Core>;
    type Arguments = Arc<Core>;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        core: Arc<Core>,
    ) -> Result<Self::State, ActorProcessingErr> {
        // Sweep four times per idle timeout, so a session is passivated at most a
        // quarter of the timeout late.
        let every = (core.config.idle_timeout / 4).max(Duration::from_millis(10));
        myself.send_interval(every, || SupervisorMsg::Sweep);
        Ok(core)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        core: &mut Arc<Core>,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            SupervisorMsg::Sweep => core.sessions.passivate_idle_for(core.config.idle_timeout),
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        _myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        core: &mut Arc<Core>,
    ) -> Result<(), ActorProcessingErr> {
        // Nothing to clean up here: a failed session's slot is replaced by the next send
        // to it (its cast is refused) or removed by the idle sweep, and a passivated or
        // stopped one left the registry before it stopped. Scanning the registry per
        // event would cost O(sessions) for each of many passivations.
        if let SupervisionEvent::ActorFailed(cell, error) = event {
            core.restarts.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                actor = %cell.get_id(),
                %error,
                "session actor failed; it restarts on its next message"
            );
        }
        Ok(())
    }
}

impl Core {
    /// Called whenever a session may have become idle (its work ended, a task of it
    /// ended, a send to it was refused): see [`Sessions::settled`]. Nothing joins the
    /// warm set once shutdown has begun.
    pub(crate) fn settled(&self, key: &SessionKey, session: &Arc<SessionShared>) {
        if self.shutting_down.load(Ordering::Acquire) {
            return;
        }
        self.sessions.settled(key, session);
    }

    fn agent(&self, name: &str) -> Result<(&Arc<str>, &Registered)> {
        self.agents
            .get_key_value(name)
            .ok_or_else(|| Error::UnknownAgent(name.to_owned()))
    }

    /// The session's registry slot, spawning its actor on first use; `true` with it
    /// if this call spawned it.
    fn session(
        &self,
        key: &SessionKey,
        registered: &Registered,
    ) -> Result<(ActorRef<SessionMsg>, Arc<SessionShared>, bool)> {
        if let Some((actor, session)) = self.sessions.touch(key) {
            return Ok((actor, session, false));
        }
        // Make the agent outside any lock: the factory is user code and may be slow or
        // panic. A racing first send may make one too; the loser's is dropped.
        let info = SessionInfo {
            agent: Arc::clone(&key.agent),
            context_id: key.context_id.clone(),
        };
        let factory = Arc::clone(&registered.factory);
        let agent = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| factory(&info)))
            .map_err(|_| Error::SessionUnavailable {
                agent: key.agent.to_string(),
                context_id: key.context_id.clone(),
                reason: String::from("the agent factory panicked"),
            })?;
        let supervisor = self.actor.get().ok_or(Error::ShuttingDown)?.get_cell();
        self.sessions.get_or_spawn(key, || {
            ractor::ActorRuntime::spawn_linked_instant(
                None,
                SessionActor,
                SessionActor::args(agent as Arc<dyn DynAgent>, key),
                supervisor,
            )
            .map(|(actor, _)| actor)
            .map_err(|e| Error::SessionUnavailable {
                agent: key.agent.to_string(),
                context_id: key.context_id.clone(),
                reason: e.to_string(),
            })
        })
    }

    /// Stops a session spawned for a send that was then refused, if nothing else has
    /// come to use it meanwhile: refused sends must leave nothing behind, or a flood of
    /// new conversations past a limit would fill memory with idle sessions.
    fn discard_unused(&self, key: &SessionKey, actor: &ActorRef<SessionMsg>) {
        let id = actor.get_id();
        self.sessions.passivate_if(key, |slot| {
            slot.actor.get_id() == id && slot.session.is_idle()
        });
    }
}

impl Supervisor {
    /// Starts a supervisor with these agent types, policy and store.
    ///
    /// # Errors
    /// [`Error::SessionUnavailable`] if the supervisor actor cannot be spawned (only
    /// outside a tokio runtime); [`Error::InvalidMessage`] never.
    pub async fn start(
        config: SupervisorConfig,
        registrations: Vec<Registration>,
        policy: Arc<dyn Policy>,
        store: Arc<dyn TaskStore>,
    ) -> Result<Self> {
        let agents = registrations
            .into_iter()
            .map(|r| {
                let limiter = Limiter::new(
                    LimitScope::Agent,
                    r.descriptor.concurrency.unwrap_or(config.agent_limit),
                    config.agent_queue,
                );
                let name: Arc<str> = Arc::from(r.descriptor.name.as_str());
                (
                    name,
                    Registered {
                        descriptor: r.descriptor,
                        factory: r.factory,
                        limiter,
                    },
                )
            })
            .collect();
        let core = Arc::new(Core {
            global: Limiter::new(LimitScope::Global, config.global_limit, config.global_queue),
            idempotency: IdempotencyCache::new(config.idempotency_ttl, config.idempotency_capacity)
                .keeping(Arc::clone(&store)),
            events: EventBus::new(config.event_capacity),
            sessions: Sessions::new(
                config.warm_sessions,
                config.session_limit,
                config.session_queue,
            ),
            config,
            agents,
            policy,
            store,
            live: LiveTasks::default(),
            actor: OnceLock::new(),
            tracker: TaskTracker::new(),
            shutting_down: AtomicBool::new(false),
            restarts: AtomicU64::new(0),
        });
        let (actor, _) = SupervisorActor::spawn(None, SupervisorActor, Arc::clone(&core))
            .await
            .map_err(|e| Error::SessionUnavailable {
                agent: String::from("<supervisor>"),
                context_id: ContextId::new("-"),
                reason: e.to_string(),
            })?;
        let _ = core.actor.set(actor);
        Ok(Self { core })
    }

    pub(crate) fn core(&self) -> &Arc<Core> {
        &self.core
    }

    /// The descriptors of the registered agent types.
    pub fn agents(&self) -> impl Iterator<Item = &AgentDescriptor> {
        self.core.agents.values().map(|r| &r.descriptor)
    }

    /// The descriptor of one agent type.
    #[must_use]
    pub fn agent(&self, name: &str) -> Option<&AgentDescriptor> {
        self.core.agents.get(name).map(|r| &r.descriptor)
    }

    /// Subscribes to every event of the runtime from now on.
    #[must_use]
    pub fn subscribe(&self) -> Subscription {
        self.core.events.subscribe()
    }

    /// The number of live sessions (spawned and not passivated).
    #[must_use]
    pub fn session_count(&self) -> usize {
        self.core.sessions.len()
    }

    /// How many accepted turns have not finished: handlers running now and sends
    /// queued behind them. This is what a shutdown waits for.
    #[must_use]
    pub fn running_task_count(&self) -> usize {
        self.core.tracker.len()
    }

    /// How many streams (`message/stream`, `tasks/resubscribe`, [`Supervisor::stream`])
    /// follow a task that has not ended.
    #[must_use]
    pub fn stream_count(&self) -> usize {
        self.core.live.stream_count()
    }

    /// How many session actors have crashed and been dropped for a restart.
    #[must_use]
    pub fn restart_count(&self) -> u64 {
        self.core.restarts.load(Ordering::Relaxed)
    }

    /// Starts the session of `agent` in conversation `context_id` (a new conversation
    /// when `None`) ahead of its first message, and returns the conversation's id.
    /// The session is idle, so it counts among the warm ones
    /// ([`SupervisorConfig::warm_sessions`]).
    ///
    /// # Errors
    /// [`Error::UnknownAgent`]; [`Error::SessionUnavailable`] if the factory panics;
    /// [`Error::ShuttingDown`].
    pub fn spawn_session(&self, agent: &str, context_id: Option<ContextId>) -> Result<ContextId> {
        if self.core.shutting_down.load(Ordering::Acquire) {
            return Err(Error::ShuttingDown);
        }
        let (name, registered) = self.core.agent(agent)?;
        let key = SessionKey {
            agent: Arc::clone(name),
            context_id: context_id.unwrap_or_else(ContextId::mint),
        };
        let (_, session, _) = self.core.session(&key, registered)?;
        // Nothing runs in it yet: it is warm, and counts against the warm limit.
        self.core.settled(&key, &session);
        Ok(key.context_id)
    }

    /// Stops a session after the messages already in its mailbox; returns whether it
    /// was live. Its history stays in the store, and its next message starts it again.
    pub fn stop_session(&self, agent: &str, context_id: &ContextId) -> bool {
        let key = SessionKey {
            agent: Arc::from(agent),
            context_id: context_id.clone(),
        };
        self.core.sessions.passivate_if(&key, |_| true)
    }

    /// Passivates every session that is idle right now, whatever its idle time (for
    /// tests, benchmarks and memory pressure).
    pub fn passivate_all_idle(&self) {
        self.core
            .sessions
            .passivate_all(|session| session.limiter.is_idle());
    }

    /// Asks the policy whether this send would be allowed, without sending it and
    /// without spending rate-limit tokens (the seed's `checkPolicy`).
    ///
    /// # Errors
    /// [`Error::UnknownAgent`] if the target is not registered.
    pub fn check_policy(&self, request: &SendRequest) -> Result<Decision> {
        self.core.agent(&request.to)?;
        let handoff = Handoff::inspect(&request.message, request.payload.as_ref());
        let payload_type = handoff.payload_type.map(|t| t.as_str());
        Ok(self.core.policy.dry_run(
            &policy_request(request, payload_type),
            Instant::now().into_std(),
        ))
    }

    /// Sends a message and returns once its task is submitted to the agent's session,
    /// without waiting for its turn: behind a running task of the same conversation
    /// it is returned `submitted`, queued in the order sends return, and runs when
    /// the ones before it are done.
    ///
    /// # Errors
    /// [`Error::Busy`] when the conversation's queue (`session_queue`), the agent's or
    /// the global one is full: the message is refused, no task is made.
    /// [`Error::UnknownAgent`], [`Error::PolicyRejected`],
    /// [`Error::TaskNotFound`] / [`Error::TaskTerminal`] / [`Error::TaskMismatch`] for a
    /// bad `taskId`, [`Error::InvalidMessage`], [`Error::ShuttingDown`].
    pub async fn send(&self, request: SendRequest) -> Result<Submitted> {
        let (submitted, _) = self.submit(request, Follow::Nothing).await?;
        Ok(submitted)
    }

    /// Sends a message and waits until its task completes, ends, or asks for input.
    ///
    /// # Errors
    /// As [`Supervisor::send`].
    pub async fn send_and_wait(&self, request: SendRequest) -> Result<Settled> {
        let (submitted, watcher) = self.submit(request, Follow::State).await?;
        let mut task = self.settle(&submitted, watcher).await?;
        if submitted.deduplicated {
            mark_deduplicated(&mut task);
        }
        Ok(Settled {
            task,
            deduplicated: submitted.deduplicated,
        })
    }

    /// Like [`Supervisor::send_and_wait`], but waits at most `wait`: past it, returns
    /// the task as it stands (e.g. `working`) while it goes on. Follows only the task's
    /// state, as `send_and_wait` does, so an HTTP blocking send that must answer before
    /// its request timeout pays for no update stream.
    ///
    /// # Errors
    /// As [`Supervisor::send`].
    pub async fn send_and_wait_for(
        &self,
        request: SendRequest,
        wait: Duration,
    ) -> Result<Submitted> {
        let (submitted, watcher) = self.submit(request, Follow::State).await?;
        let mut task = match tokio::time::timeout(wait, self.settle(&submitted, watcher)).await {
            Ok(settled) => settled?,
            Err(_) => self.get_task(&submitted.task.id, None).await?,
        };
        if submitted.deduplicated {
            mark_deduplicated(&mut task);
        }
        Ok(Submitted {
            task,
            deduplicated: submitted.deduplicated,
        })
    }

    /// Sends a message and streams its task: first the task as submitted, then every
    /// status and artifact update, ending with the status update marked `final`.
    ///
    /// # Errors
    /// As [`Supervisor::send`].
    pub async fn stream(
        &self,
        request: SendRequest,
    ) -> Result<impl Stream<Item = StreamEvent> + Send + 'static> {
        let events = self.stream_numbered(request).await?;
        Ok(futures::StreamExt::map(events, |(_, event)| event))
    }

    /// Streams a task from now on (A2A `tasks/resubscribe`): the task as it stands,
    /// then its updates until it ends or stops for input.
    ///
    /// # Errors
    /// [`Error::TaskNotFound`].
    pub async fn resubscribe(
        &self,
        task_id: &TaskId,
    ) -> Result<impl Stream<Item = StreamEvent> + Send + 'static> {
        let events = self.resubscribe_after(task_id, None).await?;
        Ok(futures::StreamExt::map(events, |(_, event)| event))
    }

    /// Who a task belongs to (its agent, and the principal that created it), for the
    /// edge's isolation checks; `None` when the task is unknown.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn task_owner(&self, task_id: &TaskId) -> Result<Option<TaskOwner>> {
        Ok(self.core.store.owner(task_id).await?)
    }

    /// One page of the tasks `filter` accepts (it sees each task and its owner), most
    /// recently changed status first; see [`TaskStore::list`].
    ///
    /// # Errors
    /// Only store failures.
    pub async fn list_tasks(
        &self,
        filter: &TaskFilter<'_>,
        page_size: usize,
        before: Option<u64>,
    ) -> Result<TaskPage> {
        Ok(self.core.store.list(filter, page_size, before).await?)
    }

    /// The principal a conversation belongs to, if an authenticated caller started it.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn context_principal(&self, context_id: &ContextId) -> Result<Option<Arc<str>>> {
        Ok(self.core.store.context_principal(context_id).await?)
    }

    /// Returns a task with at most `history_length` of its most recent messages.
    ///
    /// # Errors
    /// [`Error::TaskNotFound`].
    pub async fn get_task(&self, task_id: &TaskId, history_length: Option<usize>) -> Result<Task> {
        self.core
            .store
            .get(task_id, history_length)
            .await?
            .ok_or_else(|| Error::TaskNotFound(task_id.clone()))
    }

    /// Cancels a task. It ends `canceled` at once, whether or not its agent notices;
    /// a running handler is told and given a grace period, then dropped.
    ///
    /// # Errors
    /// [`Error::TaskNotFound`]; [`Error::TaskNotCancelable`] for an ended task.
    pub async fn cancel_task(&self, task_id: &TaskId) -> Result<Task> {
        let cancel = self.core.live.cancel_token(task_id);
        let Some(cancel) = cancel else {
            let task = self.get_task(task_id, Some(0)).await?;
            return Err(Error::TaskNotCancelable {
                task_id: task_id.clone(),
                state: task.status.state,
            });
        };
        let status = TaskStatus::new(TaskState::Canceled);
        if let Err(StoreError::Terminal { state, .. }) =
            self.finish_task_inner(task_id, status).await
        {
            return Err(Error::TaskNotCancelable {
                task_id: task_id.clone(),
                state,
            });
        }
        cancel.cancel();
        self.get_task(task_id, None).await
    }

    /// Stops taking new sends, waits up to `deadline` for running tasks to finish, then
    /// fails the rest, accepted-but-not-started ones included (visibly: status
    /// `failed`, a message saying why; their streams get that final event), and stops
    /// every session. Tasks waiting for input are left as they are.
    pub async fn shutdown(&self, deadline: Duration) {
        self.core.shutting_down.store(true, Ordering::SeqCst);
        self.core.tracker.close();
        // Whether or not the handlers finished in time, what is still live and not
        // waiting for input is failed: a handler cut short, or a send still queued.
        let _ = tokio::time::timeout(deadline, self.core.tracker.wait()).await;
        {
            let running = self.core.live.snapshot();
            let mut followed = Vec::new();
            for (task_id, cancel, channel) in running {
                let Ok(Some(task)) = self.core.store.get(&task_id, Some(0)).await else {
                    continue;
                };
                if task.status.state.is_interrupted() {
                    // Waiting for a human, not running: nothing to cut short.
                    continue;
                }
                let text = "the runtime shut down before this task finished";
                let message = Message::new(
                    agentyard_transport::a2a::Role::Agent,
                    vec![agentyard_transport::a2a::Part::text(text)],
                );
                self.finish_task(
                    &task_id,
                    crate::task::status(TaskState::Failed, Some(message)),
                )
                .await;
                cancel.cancel();
                followed.push(channel);
            }
            // Give the streams of the tasks just failed a moment to take that final
            // event before the caller closes the connections (bounded: a stalled
            // client must not hold the shutdown).
            let streams_done = async {
                while followed.iter().any(|channel| channel.stream_count() > 0) {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(1), streams_done).await;
        }
        if let Some(actor) = self.core.actor.get() {
            actor.stop_children(Some(String::from("shutdown")));
            actor.stop(Some(String::from("shutdown")));
        }
        self.core.sessions.clear();
    }

    /// Moves a task to a terminal or interrupted status, publishes it as the final
    /// update, and closes the send that was handling it. Does nothing if the task has
    /// already ended (a cancel or a shutdown won the race).
    pub(crate) async fn finish_task(&self, task_id: &TaskId, status: TaskStatus) {
        if let Err(error) = self.finish_task_inner(task_id, status).await {
            self.end_unstored(task_id, &error);
        }
    }

    async fn finish_task_inner(
        &self,
        task_id: &TaskId,
        status: TaskStatus,
    ) -> std::result::Result<(), StoreError> {
        let core = &self.core;
        // Built before the task is read back: the update is logged with the status, in
        // one write, so a stream that resumes sees every status the task had.
        let context_id = core.live.publisher(task_id).map(|events| events.context_id);
        let (_, seq) = match context_id {
            Some(context_id) => {
                let update =
                    TaskStatusUpdateEvent::new(task_id.clone(), context_id, status.clone(), true);
                core.store
                    .set_status_logged(task_id, status.clone(), &StreamEvent::StatusUpdate(update))
                    .await?
            }
            None => (core.store.set_status(task_id, status.clone()).await?, None),
        };
        let state = status.state;
        // An ended task leaves the live set, and with it its session's count of live
        // tasks; the session is offered to the warm set once the update is out.
        let (events, ended) = if state.is_terminal() {
            let Some(Ended {
                events,
                key,
                session,
            }) = core.live.end(task_id)
            else {
                return Ok(());
            };
            (events, Some((key, session)))
        } else {
            let Some(events) = core.live.publisher(task_id) else {
                return Ok(());
            };
            (events, None)
        };
        let (kind, detail) = match state {
            TaskState::Completed | TaskState::InputRequired | TaskState::AuthRequired => {
                (EventKind::SendCompleted, EventDetail::None)
            }
            _ => (
                EventKind::SendFailed,
                EventDetail::Reason {
                    reason: status.message.as_ref().map_or_else(
                        || format!("task {state}"),
                        |m| format!("task {state}: {}", m.text()),
                    ),
                },
            ),
        };
        // The agent's answer (`a2a.response`), built now while the status is at hand,
        // and only if anyone listens.
        let response = (kind == EventKind::SendCompleted && core.events.is_watched())
            .then(|| events.envelope.response(status.message.as_ref()));
        // The send's closing event goes out before its waiter wakes.
        events.publish_status_then(self, status, true, seq, || {
            if let Some(response) = response {
                core.events.emit(|| response);
            }
            core.events.emit(|| events.envelope.event(kind, detail));
        });
        if let Some((key, session)) = ended {
            core.settled(&key, &session);
        }
        Ok(())
    }

    /// The heart of every send: steps 1–5 of the module docs.
    async fn submit(
        &self,
        mut request: SendRequest,
        subscribe: Follow,
    ) -> Result<(Submitted, Watcher)> {
        let core = &self.core;
        // A send refused before it is routed (shut down, no parts, an invalid payload)
        // is still announced and closed like every other refusal, so whoever watches
        // the events sees every send.
        let mut prepared = Handoff::prepare(&mut request);
        if let Ok(handoff) = &mut prepared
            && handoff.is_free_text()
            && !core.shutting_down.load(Ordering::Acquire)
            && let Some(classifier) = &core.config.intent_classifier
        {
            handoff.intent = classifier.classify(&request).await;
        }
        let prepared_ok = prepared.as_ref().ok();
        let payload_type = prepared_ok.and_then(|h| h.payload_type);
        let mut envelope = Envelope {
            entry_point: request.entry_point,
            from: request.from.as_deref().map(Arc::from),
            to: Arc::from(request.to.as_str()),
            context_id: request.message.context_id.clone(),
            task_id: request.message.task_id.clone(),
            payload_type,
            payload_json: prepared_ok.and_then(|h| h.payload_json.clone()),
            intent: prepared_ok.and_then(|h| h.intent),
            idempotency_key: request
                .idempotency_key
                .clone()
                .or_else(|| prepared_ok.and_then(Handoff::natural_key))
                .map(Arc::from),
        };
        let span = tracing::info_span!(
            "a2a.send",
            entry_point = %envelope.entry_point,
            to = %envelope.to,
            from = envelope.from.as_deref(),
            payload_type = payload_type.map(|t| t.as_str()),
            task_id = tracing::field::Empty,
            context_id = tracing::field::Empty,
        );
        core.events
            .emit(|| envelope.event(EventKind::SendInitiated, EventDetail::None));

        let result = match prepared {
            _ if core.shutting_down.load(Ordering::Acquire) => Err(Error::ShuttingDown),
            Err(invalid) => Err(invalid),
            Ok(handoff) => {
                if let Some(fallback) = &handoff.fallback {
                    core.events
                        .emit(|| envelope.fallback(&fallback.text, fallback.problems.clone()));
                }
                self.route(&mut request, handoff, &mut envelope, subscribe)
                    .instrument(span.clone())
                    .await
            }
        };
        match &result {
            Ok((submitted, _)) => {
                span.record("task_id", tracing::field::display(&submitted.task.id));
                span.record(
                    "context_id",
                    tracing::field::display(&submitted.task.context_id),
                );
            }
            Err(Error::PolicyRejected { reason, .. }) => core.events.emit(|| {
                envelope.event(
                    EventKind::SendPolicyRejected,
                    EventDetail::Reason {
                        reason: reason.clone(),
                    },
                )
            }),
            Err(error @ Error::Busy { .. }) => core.events.emit(|| {
                envelope.event(
                    EventKind::SendBusy,
                    EventDetail::Reason {
                        reason: error.to_string(),
                    },
                )
            }),
            Err(error) => core.events.emit(|| {
                envelope.event(
                    EventKind::SendFailed,
                    EventDetail::Reason {
                        reason: error.to_string(),
                    },
                )
            }),
        }
        result
    }

    /// Routes a prepared send, as a sequence of named steps: find the agent, check
    /// the policy, claim the idempotency key, pick the session, take a place in its
    /// line, open or continue the task, deliver. The key's fate is decided once, here,
    /// from what the steps after the claim returned.
    async fn route(
        &self,
        request: &mut SendRequest,
        handoff: Handoff,
        envelope: &mut Envelope,
        follow: Follow,
    ) -> Result<(Submitted, Watcher)> {
        let core = &self.core;
        let (agent, registered) = core.agent(&request.to)?;
        let agent = Arc::clone(agent);
        self.check_policy_of(request, &handoff)?;
        let guard = match self.claim_key(request, &agent, envelope, follow).await? {
            KeyClaim::Repeat(answer) => return Ok(*answer),
            KeyClaim::Claimed(guard) => guard,
        };

        let admitted = async {
            let (continued, key) = self.pick_session(request, &agent, envelope).await?;
            let seat = self
                .take_place(key, registered, matches!(follow, Follow::Nothing))
                .await?;
            let opened = self
                .open_or_continue(
                    request,
                    continued,
                    &seat.settle.key,
                    &seat.session,
                    envelope,
                )
                .await?;
            Ok::<_, Refusal>((seat, opened))
        }
        .await;

        // The key's fate: the task's once it exists; else passed on to waiting repeats
        // when the limits refused (they would be refused alike), else released.
        let (seat, (task, events, cancel)) = match admitted {
            Ok(admitted) => {
                if let Some(guard) = guard {
                    guard.settle(&admitted.1.0.id).await;
                }
                admitted
            }
            Err(Refusal { error, shared }) => {
                match guard {
                    Some(guard) if shared => guard.fail(Failure::of(&error)),
                    Some(guard) => guard.release(),
                    None => {}
                }
                return Err(error);
            }
        };

        envelope.task_id = Some(task.id.clone());
        let rx = events.channel.follow(follow);
        let Seat {
            actor,
            session,
            ticket,
            settle,
        } = seat;
        let key = &settle.key;
        let work = Work {
            supervisor: self.clone(),
            agent_name: agent,
            message: request.message.clone(),
            handoff,
            metadata: request.metadata.take(),
            extensions: std::mem::take(&mut request.extensions),
            sender: envelope.from.clone(),
            hops: request.hops,
            chain: request.chain.iter().cloned().chain([key.clone()]).collect(),
            cancel,
            events,
            _permits: None,
            started: false,
            key: key.clone(),
            session,
            _tracked: core.tracker.token(),
        };
        self.deliver_in_turn(registered, actor, ticket, work)?;
        Ok((
            Submitted {
                task,
                deduplicated: false,
            },
            rx,
        ))
    }

    /// Step: deliver the work to its session — now if it holds every permit, else
    /// once its turn comes, off the caller's path.
    fn deliver_in_turn(
        &self,
        registered: &Registered,
        actor: ActorRef<SessionMsg>,
        ticket: Ticket,
        mut work: Work,
    ) -> Result<()> {
        match ticket {
            Ticket::Ready(permits) => {
                work._permits = Some(permits);
                let key = work.key.clone();
                self.deliver(&key, registered, actor, work)
            }
            Ticket::Wait(turn) => {
                // The work's tracker token already counts it for the shutdown drain.
                let key = work.key.clone();
                tokio::spawn(self.clone().wait_turn(key, actor, turn, work));
                Ok(())
            }
        }
    }

    /// Step: the policy (allow/deny rules, rate limits, hop limit).
    fn check_policy_of(&self, request: &SendRequest, handoff: &Handoff) -> Result<()> {
        let payload_type = handoff.payload_type.map(|t| t.as_str());
        match self.core.policy.check(
            &policy_request(request, payload_type),
            Instant::now().into_std(),
        ) {
            Decision::Deny(rejection) => Err(Error::PolicyRejected {
                reason: rejection.to_string(),
                rejection,
            }),
            Decision::Allow => Ok(()),
        }
    }

    /// Step: the idempotency key. A repeat of a send that made a task gets that task
    /// (and whatever it asked to follow of it); a concurrent repeat of one that was
    /// refused gets the same refusal. A repeat that would wait on a task of a session
    /// waiting on this very chain of sends is refused as the delegation cycle it is.
    async fn claim_key(
        &self,
        request: &SendRequest,
        agent: &Arc<str>,
        envelope: &mut Envelope,
        follow: Follow,
    ) -> Result<KeyClaim<'_>> {
        let core = &self.core;
        let Some(key) = &envelope.idempotency_key else {
            return Ok(KeyClaim::Claimed(None));
        };
        // Keys are scoped by target agent and caller: two agents' keys never collide,
        // nor do two callers'.
        let scoped = idempotency::scope(&envelope.to, caller(request), key);
        match core.idempotency.claim(&scoped, Instant::now()).await {
            Claim::First(guard) => Ok(KeyClaim::Claimed(Some(guard))),
            Claim::DuplicateFailed(failure) => Err(failure.into_error(key)),
            Claim::Duplicate(task_id) => {
                let rx = core
                    .live
                    .follow(&task_id, follow)
                    .unwrap_or(Watcher::Nothing);
                let mut task = self.get_task(&task_id, None).await?;
                let session = SessionKey {
                    agent: Arc::clone(agent),
                    context_id: task.context_id.clone(),
                };
                if !is_settled(task.status.state) && request.chain.contains(&session) {
                    // The task cannot settle before this send's own sender does.
                    return Err(Error::DelegationCycle {
                        agent: session.agent.to_string(),
                        context_id: session.context_id,
                    });
                }
                mark_deduplicated(&mut task);
                // A task that already settled (waiting for input) publishes nothing
                // more until its next message: waiting on it would hang.
                let rx = if is_settled(task.status.state) {
                    Watcher::Nothing
                } else {
                    rx
                };
                envelope.task_id = Some(task.id.clone());
                envelope.context_id = Some(task.context_id.clone());
                core.events
                    .emit(|| envelope.event(EventKind::SendDeduplicated, EventDetail::None));
                Ok(KeyClaim::Repeat(Box::new((
                    Submitted {
                        task,
                        deduplicated: true,
                    },
                    rx,
                ))))
            }
        }
    }

    /// Step: which task and conversation, hence which session. A continued task keeps
    /// its own conversation; a send back into a session waiting on this chain of
    /// sends is refused.
    async fn pick_session(
        &self,
        request: &SendRequest,
        agent: &Arc<str>,
        envelope: &mut Envelope,
    ) -> std::result::Result<(Option<Task>, SessionKey), Refusal> {
        let continued = match &request.message.task_id {
            Some(task_id) => Some(self.continuable(task_id, agent, request).await?),
            None => None,
        };
        let context_id = match (&continued, &request.message.context_id) {
            (Some(task), _) => task.context_id.clone(),
            (None, Some(context_id)) => context_id.clone(),
            (None, None) => ContextId::mint(),
        };
        envelope.context_id = Some(context_id.clone());
        let key = SessionKey {
            agent: Arc::clone(agent),
            context_id,
        };
        // A send back into a session that is itself waiting on this chain of sends
        // would wait for its own permit forever.
        if request.chain.contains(&key) {
            return Err(Error::DelegationCycle {
                agent: key.agent.to_string(),
                context_id: key.context_id.clone(),
            }
            .into());
        }
        Ok((continued, key))
    }

    /// Step: the concurrency limits, most specific first (a send waiting on a busy
    /// session holds nothing that other sessions need), spawning the session on
    /// first use. With `off_path` (a send that does not wait for its task) the send
    /// takes its place in the session's line without waiting for its turn either.
    async fn take_place(
        &self,
        key: SessionKey,
        registered: &Registered,
        off_path: bool,
    ) -> std::result::Result<Seat<'_>, Refusal> {
        let core = &self.core;
        // A new conversation that the agent or global limit would refuse anyway is
        // refused before a session is spawned for it: cheaper, and it leaves nothing.
        // A send that will wait off the caller's path is checked the same way whatever
        // its conversation, so that it is refused while it still has no task.
        if (off_path || !core.sessions.contains(&key))
            && let Some(full) = [&registered.limiter, &core.global]
                .into_iter()
                .find(|limiter| limiter.is_saturated())
        {
            return Err(Refusal::shared(full.busy()));
        }
        // Whatever happens to this send from here, its session is offered to the warm
        // set when the send lets go of it (a no-op while it is busy).
        let mut settle = Settle {
            core,
            key,
            session: None,
        };
        loop {
            let (actor, session, created) = core.session(&settle.key, registered)?;
            settle.session = Some(Arc::clone(&session));
            let ticket = if off_path {
                take_place(&session, registered, core)
            } else {
                Permits::acquire(&session.limiter, &registered.limiter, &core.global)
                    .await
                    .map(Ticket::Ready)
            }
            .and_then(|ticket| {
                // Intake stopped while this send waited in line. It has no task yet,
                // so it is refused like a new send rather than run after shutdown.
                if core.shutting_down.load(Ordering::Acquire) {
                    Err(Error::ShuttingDown)
                } else {
                    Ok(ticket)
                }
            });
            let ticket = match ticket {
                Ok(ticket) => ticket,
                Err(error) => {
                    // (`settle` runs after this, and finds a discarded session gone.)
                    if created {
                        core.discard_unused(&settle.key, &actor);
                    }
                    return Err(Refusal::shared(error));
                }
            };
            // The session may have been passivated while we waited: its limiter is then
            // orphaned, and a fresh session must be used to keep the per-session limit.
            // (A place in its line keeps it from passivation from here on.)
            if core.sessions.is_current(&settle.key, &session) {
                return Ok(Seat {
                    actor,
                    session,
                    ticket,
                    settle,
                });
            }
        }
    }

    /// Step: the task — a new one created `submitted`, or the continued one taken
    /// out of `input-required` with the message added to its history.
    async fn open_or_continue(
        &self,
        request: &mut SendRequest,
        continued: Option<Task>,
        key: &SessionKey,
        session: &Arc<SessionShared>,
        envelope: &mut Envelope,
    ) -> std::result::Result<(Task, TaskEvents, CancellationToken), Refusal> {
        let core = &self.core;
        let context_id = &key.context_id;
        request.message.context_id = Some(context_id.clone());
        if let Some(task) = &continued {
            request.message.task_id = Some(task.id.clone());
            core.store
                .append_history(&task.id, request.message.clone())
                .await
                .map_err(|e| terminal_to_error(e, &task.id))?;
            // The task now belongs to the session that handles it (its old one may
            // have been passivated while it waited for input).
            let (events, cancel, adopted) =
                match core.live.continue_with(&task.id, envelope, session) {
                    Some((events, cancel)) => (events, cancel, false),
                    // Waiting in the store but not live: a task from before a restart,
                    // taken on by this session.
                    None if task.status.state.is_interrupted() => {
                        let (events, cancel) = core.live.adopt(
                            task,
                            &key.agent,
                            envelope,
                            session,
                            core.config.stream_capacity,
                        );
                        (events, cancel, true)
                    }
                    None => {
                        return Err(Error::TaskTerminal {
                            task_id: task.id.clone(),
                            state: TaskState::Canceled,
                        }
                        .into());
                    }
                };
            // The task leaves input-required: it has a message to work on again.
            let resumed = core
                .store
                .set_status(&task.id, TaskStatus::new(TaskState::Submitted))
                .await;
            if resumed.is_err() && adopted {
                core.live.end(&task.id);
            }
            resumed.map_err(|e| terminal_to_error(e, &task.id))?;
            events.channel.set_state(TaskState::Submitted);
            let task = self.get_task(&task.id, None).await?;
            return Ok((task, events, cancel));
        }
        let task_id = TaskId::mint();
        request.message.task_id = Some(task_id.clone());
        let mut task = Task::new(
            task_id.clone(),
            context_id.clone(),
            TaskStatus::new(TaskState::Submitted),
        );
        task.history = Some(vec![request.message.clone()]);
        let owner = TaskOwner::new(
            Arc::clone(&key.agent),
            request.principal.as_deref().map(Arc::from),
        );
        core.store
            .insert_owned(task.clone(), owner)
            .await
            .map_err(Error::from)?;
        let channel = TaskChannel::new(TaskState::Submitted, core.config.stream_capacity);
        let cancel = CancellationToken::new();
        envelope.task_id = Some(task_id.clone());
        // Subscribers learn of the task when it exists, not only once its agent
        // starts: `submitted` is a state the store records, so it is an update like
        // the others (not final; the task stream starts with the task itself instead).
        core.events.emit(|| {
            let update = TaskStatusUpdateEvent::new(
                task_id.clone(),
                context_id.clone(),
                task.status.clone(),
                false,
            );
            envelope.event(EventKind::TaskStatus, EventDetail::Status { update })
        });
        let events = TaskEvents {
            task_id,
            context_id: context_id.clone(),
            channel,
            envelope: envelope.clone(),
        };
        core.live.create(
            Arc::clone(&key.agent),
            events.clone(),
            cancel.clone(),
            session,
        );
        Ok((task, events, cancel))
    }

    /// Waits for a queued task's turn off the caller's path, then delivers it; if the
    /// turn never comes (an agent or global line full) the task fails with the
    /// reason, visibly. A cancel while it waits ends the wait: the task is already
    /// `canceled`.
    async fn wait_turn(self, key: SessionKey, actor: ActorRef<SessionMsg>, turn: Turn, work: Work) {
        let core = Arc::clone(&self.core);
        let Ok((_, registered)) = core.agent(&key.agent) else {
            return;
        };
        let cancel = work.cancel.clone();
        let permits = async {
            let session = match turn {
                Turn::Session(permit) => permit,
                Turn::Queued(place) => place.permit().await?,
            };
            let agent = registered.limiter.acquire().await?;
            let global = core.global.acquire().await?;
            // Not refused at shutdown: the task was accepted, so it runs in the drain
            // like running work, and fails at its deadline like running work.
            Ok::<_, Error>(Permits::from_parts(session, agent, global))
        };
        let permits = tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            permits = permits => permits,
        };
        match permits {
            Ok(permits) => {
                let mut work = work;
                work._permits = Some(permits);
                // On failure the work is dropped undelivered, which fails its task.
                let _ = self.deliver(&key, registered, actor, work);
            }
            Err(error) => {
                let text = format!("the message was not handled: {error}; send it again");
                let message = Message::new(
                    agentyard_transport::a2a::Role::Agent,
                    vec![agentyard_transport::a2a::Part::text(text)],
                );
                let task_id = work.events.task_id.clone();
                self.finish_task(
                    &task_id,
                    crate::task::status(TaskState::Failed, Some(message)),
                )
                .await;
            }
        }
    }

    /// Hands work to its session, respawning the session if it was passivated between
    /// lookup and delivery (the drained mailbox hands the work back).
    fn deliver(
        &self,
        key: &SessionKey,
        registered: &Registered,
        mut actor: ActorRef<SessionMsg>,
        work: Work,
    ) -> Result<()> {
        let mut msg = SessionMsg::Deliver(Box::new(work));
        for _ in 0..3 {
            match actor.cast(msg) {
                Ok(()) => return Ok(()),
                Err(ractor::MessagingErr::SendErr(returned)) => {
                    msg = returned;
                    self.core.sessions.forget(key, &actor);
                    let (respawned, session, _) = self.core.session(key, registered)?;
                    actor = respawned;
                    // The work now belongs to the fresh session, which it settles.
                    let SessionMsg::Deliver(work) = &mut msg;
                    work.session = session;
                }
                Err(other) => {
                    return Err(Error::SessionUnavailable {
                        agent: key.agent.to_string(),
                        context_id: key.context_id.clone(),
                        reason: other.to_string(),
                    });
                }
            }
        }
        Err(Error::SessionUnavailable {
            agent: key.agent.to_string(),
            context_id: key.context_id.clone(),
            reason: String::from("the session kept stopping"),
        })
    }

    /// Checks that a message may continue `task_id`: it exists, has not ended, belongs
    /// to this agent and to the message's conversation.
    async fn continuable(
        &self,
        task_id: &TaskId,
        agent: &Arc<str>,
        request: &SendRequest,
    ) -> Result<Task> {
        let task = self.get_task(task_id, Some(0)).await?;
        if task.status.state.is_terminal() {
            return Err(Error::TaskTerminal {
                task_id: task_id.clone(),
                state: task.status.state,
            });
        }
        let owner = match self.core.live.agent(task_id) {
            Some(owner) => Some(owner),
            // Not live (waiting since before a restart): the store knows its agent.
            None => self
                .core
                .store
                .owner(task_id)
                .await?
                .map(|owner| owner.agent),
        };
        if owner.as_ref().is_some_and(|owner| owner != agent) {
            return Err(Error::TaskMismatch {
                task_id: task_id.clone(),
                owner: format!("agent `{}`", owner.as_deref().unwrap_or_default()),
            });
        }
        if let Some(context_id) = &request.message.context_id
            && *context_id != task.context_id
        {
            return Err(Error::TaskMismatch {
                task_id: task_id.clone(),
                owner: format!("context `{}`", task.context_id),
            });
        }
        Ok(task)
    }

    /// Waits for a task to end or stop for input, then returns it.
    async fn settle(&self, submitted: &Submitted, watcher: Watcher) -> Result<Task> {
        if let Watcher::State(mut state) = watcher {
            // Returns at once if the task has already settled (a repeat may find it
            // waiting for input); an error means the task left the live set, i.e. ended.
            let _ = state.wait_for(|s| is_settled(*s)).await;
        }
        self.get_task(&submitted.task.id, None).await
    }
}

/// Offers a send's session (once it has one) to the warm set when the send lets go
/// of it.
struct Settle<'a> {
    core: &'a Core,
    key: SessionKey,
    session: Option<Arc<SessionShared>>,
}

impl Drop for Settle<'_> {
    fn drop(&mut self) {
        if let Some(session) = &self.session {
            self.core.settled(&self.key, session);
        }
    }
}

/// What claiming a send's idempotency key came to.
enum KeyClaim<'a> {
    /// The send goes ahead, holding its key if it has one.
    Claimed(Option<KeyGuard<'a>>),
    /// A repeat: the first send's task, and what the repeat follows of it.
    /// (Boxed: repeats are rare, and the answer is large.)
    Repeat(Box<(Submitted, Watcher)>),
}

/// A send's place at its session: the session, its claim on the limits, and the
/// guard that offers the session to the warm set when the send lets go of it.
struct Seat<'a> {
    actor: ActorRef<SessionMsg>,
    session: Arc<SessionShared>,
    ticket: Ticket,
    settle: Settle<'a>,
}

/// A send refused after its key was claimed, and whether concurrent repeats share
/// the refusal (the limits refused: a repeat would be refused alike) or the key is
/// released for them to try afresh (anything else).
struct Refusal {
    error: Error,
    shared: bool,
}

impl Refusal {
    fn shared(error: Error) -> Self {
        Self {
            error,
            shared: true,
        }
    }
}

impl From<Error> for Refusal {
    fn from(error: Error) -> Self {
        Self {
            error,
            shared: false,
        }
    }
}

/// A send's claim on the concurrency limits.
#[derive(Debug)]
enum Ticket {
    /// Every permit: the task runs as soon as it is delivered.
    Ready(Permits),
    /// A turn still to wait for, off the caller's path.
    Wait(Turn),
}

/// A turn a queued task waits for.
#[derive(Debug)]
enum Turn {
    /// The session's permit is held; the agent's and global ones are still to come.
    Session(tokio::sync::OwnedSemaphorePermit),
    /// A place in the session's line.
    Queued(Queued),
}

/// Takes a send's place without waiting: every permit if all are free, else the
/// session's permit or a place in its line (refused `Busy` when the line is full).
fn take_place(session: &SessionShared, registered: &Registered, core: &Core) -> Result<Ticket> {
    Ok(match session.limiter.enqueue()? {
        Place::Ready(permit) => match (registered.limiter.try_acquire(), core.global.try_acquire())
        {
            (Some(agent), Some(global)) => {
                Ticket::Ready(Permits::from_parts(permit, agent, global))
            }
            _ => Ticket::Wait(Turn::Session(permit)),
        },
        Place::Queued(place) => Ticket::Wait(Turn::Queued(place)),
    })
}

fn terminal_to_error(error: StoreError, task_id: &TaskId) -> Error {
    match error {
        StoreError::Terminal { state, .. } => Error::TaskTerminal {
            task_id: task_id.clone(),
            state,
        },
        other => Error::Store(other),
    }
}
