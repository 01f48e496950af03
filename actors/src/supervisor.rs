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

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use agentyard_policy::{Decision, EntryPoint, Policy};
use agentyard_transport::a2a::{
    Message, Metadata, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use agentyard_transport::handoff::HandoffPayload;
use agentyard_transport::{ContextId, TaskId};
use dashmap::DashMap;
use futures::Stream;
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use crate::agent::{AgentDescriptor, DynAgent, Factory, SessionInfo};
use crate::error::{Error, Result};
use crate::events::{Envelope, EventBus, EventDetail, EventKind, Subscription};
use crate::handoff::Handoff;
use crate::idempotency::{self, Caller, Claim, Failure, IdempotencyCache};
use crate::intent::SharedIntentClassifier;
use crate::limits::{LimitScope, Limiter, Permits, Place, Queued};
use crate::session::{SessionActor, SessionMsg};
use crate::store::{StoreError, TaskFilter, TaskOwner, TaskPage, TaskStore};
use crate::task::{LiveTask, TaskChannel, TaskEvents, Work};
use agentyard_transport::a2a::StreamEvent;

#[cfg(test)]
mod tests;

/// The supervisor's settings. Every field has a documented default
/// ([`SupervisorConfig::default`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SupervisorConfig {
    /// Tasks running at once in the whole runtime (default 10,000).
    pub global_limit: usize,
    /// Sends that may wait for the global limit before `busy` (default 10,000).
    pub global_queue: usize,
    /// Tasks of one agent type running at once, unless its descriptor says otherwise
    /// (default 1,000).
    pub agent_limit: usize,
    /// Sends that may wait for an agent type's limit (default 1,000).
    pub agent_queue: usize,
    /// Tasks of one session running at once (default 1: a session handles its messages
    /// one after another, in order).
    pub session_limit: usize,
    /// Sends that may wait for a session (default 64).
    pub session_queue: usize,
    /// A session with no work for this long is passivated: its actor stops, its
    /// history stays in the store (default 5 minutes).
    pub idle_timeout: Duration,
    /// Sessions kept live while they have no task running, queued or waiting for
    /// input (default 1,000). Such a session holds nothing the store lacks, so past
    /// this many the one used least recently is passivated as soon as another
    /// settles; a new conversation per request then costs a bounded amount of memory,
    /// not one actor per request until the idle timeout.
    pub warm_sessions: usize,
    /// How long a canceled handler may keep running before it is dropped (default 2 s).
    pub cancel_grace: Duration,
    /// How long an idempotency key is remembered (default 10 minutes).
    pub idempotency_ttl: Duration,
    /// How many idempotency keys are remembered at most (default 100,000).
    pub idempotency_capacity: usize,
    /// How many earlier messages of the conversation an agent sees (default 20).
    pub history_depth: usize,
    /// Events a subscriber may fall behind by before it lags (default 1,024).
    pub event_capacity: usize,
    /// Updates a task stream may fall behind by before it lags (default 256).
    pub stream_capacity: usize,
    /// Says what free-text sends mean (default none: they have no intent); see
    /// [`crate::intent`].
    pub intent_classifier: Option<SharedIntentClassifier>,
}

impl Default for SupervisorConfig {
    fn default() -> Self {
        Self {
            global_limit: 10_000,
            global_queue: 10_000,
            agent_limit: 1_000,
            agent_queue: 1_000,
            session_limit: 1,
            session_queue: 64,
            idle_timeout: Duration::from_secs(300),
            warm_sessions: 1_000,
            cancel_grace: Duration::from_secs(2),
            idempotency_ttl: Duration::from_secs(600),
            idempotency_capacity: 100_000,
            history_depth: 20,
            event_capacity: 1_024,
            stream_capacity: 256,
            intent_classifier: None,
        }
    }
}

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

/// A session: one agent type in one conversation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SessionKey {
    pub(crate) agent: Arc<str>,
    pub(crate) context_id: ContextId,
}

/// A live session in the registry.
#[derive(Debug)]
struct Slot {
    actor: ActorRef<SessionMsg>,
    session: Arc<SessionShared>,
}

/// What the send path, the session's tasks and the warm line share about one live
/// session. Held by `Arc` so each can reach it without a registry lookup.
#[derive(Debug)]
pub(crate) struct SessionShared {
    limiter: Arc<Limiter>,
    /// Milliseconds since the supervisor started, at the last send to this session.
    last_used: AtomicU64,
    /// The stamp of this session's entry in the warm line; 0 while it has none.
    warm: AtomicU64,
    /// The session's tasks that have not ended: queued, running or waiting for input.
    live_tasks: AtomicUsize,
}

impl SessionShared {
    /// Whether the session holds nothing the store lacks: no task of its own that
    /// has not ended, and nobody holding or waiting for its permit.
    fn is_idle(&self) -> bool {
        self.live_tasks.load(Ordering::Acquire) == 0 && self.limiter.is_idle()
    }
}

/// Counts a task among its session's live tasks for as long as it is held (by the
/// task's entry in the live set).
#[derive(Debug)]
pub(crate) struct TaskPin(Arc<SessionShared>);

impl TaskPin {
    fn new(session: &Arc<SessionShared>) -> Self {
        session.live_tasks.fetch_add(1, Ordering::AcqRel);
        Self(Arc::clone(session))
    }

    fn session(&self) -> Arc<SessionShared> {
        Arc::clone(&self.0)
    }
}

impl Drop for TaskPin {
    fn drop(&mut self) {
        self.0.live_tasks.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One entry of the warm line: current only while its session's `warm` stamp still
/// equals `stamp` (a session used or settled again since has a newer entry, or none).
#[derive(Debug)]
struct WarmEntry {
    key: SessionKey,
    session: Arc<SessionShared>,
    stamp: u64,
}

/// The idle sessions kept live, least recently settled first.
///
/// A queue of stamped entries rather than a linked map: marking a session warm again
/// pushes a new entry and leaves the old one stale, to be skipped when it reaches the
/// front or dropped when stale entries outnumber current ones. `len` counts sessions
/// whose stamp is set, i.e. current entries; every change of a stamp between zero and
/// non-zero goes through a swap or compare-exchange that tells which way it went.
#[derive(Debug, Default)]
struct WarmLine {
    entries: Mutex<VecDeque<WarmEntry>>,
    len: AtomicUsize,
    next_stamp: AtomicU64,
}

impl WarmLine {
    /// Takes a session out of the warm set (it is in use, or leaves the registry).
    fn take(&self, session: &SessionShared) {
        if session.warm.swap(0, Ordering::AcqRel) != 0 {
            self.len.fetch_sub(1, Ordering::AcqRel);
        }
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
    sessions: DashMap<SessionKey, Slot>,
    warm: WarmLine,
    live: DashMap<TaskId, LiveTask>,
    actor: OnceLock<ActorRef<SupervisorMsg>>,
    pub(crate) tracker: TaskTracker,
    shutting_down: AtomicBool,
    started: Instant,
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

/// A send: a message for an agent type, with who sent it and how.
#[derive(Debug, Clone)]
pub struct SendRequest {
    /// The target agent type.
    pub to: String,
    /// The message. Its `contextId` picks the conversation (a new one is minted when
    /// absent); its `taskId` continues a task that has not ended.
    pub message: Message,
    /// Where the send comes from (default `api`).
    pub entry_point: EntryPoint,
    /// The sender: an agent name, or the caller's principal.
    pub from: Option<String>,
    /// The authenticated caller the send comes from (set by the HTTP edge). The task
    /// it creates belongs to this principal ([`TaskOwner`]), and its idempotency key
    /// is scoped by it rather than by `from`.
    pub principal: Option<String>,
    /// A key that makes repeats of this send return the first one's task. A handoff
    /// payload's taskId / questionId serves when none is given. Keys are scoped by the
    /// target agent and the caller (`principal`, else `from`): two callers never share
    /// a key.
    pub idempotency_key: Option<String>,
    /// How many agent-to-agent hops deep this send is.
    pub hops: u32,
    /// A typed handoff payload to attach to the message as a data part.
    pub payload: Option<HandoffPayload>,
    /// The request's own metadata (A2A `params.metadata`), for the agent.
    pub metadata: Option<Metadata>,
    /// The extension URIs activated for this send (A2A `X-A2A-Extensions` that the
    /// agent's card declares), for the agent.
    pub extensions: Vec<String>,
    /// The sessions waiting on this send, outermost first (set by agent-to-agent sends).
    pub(crate) chain: Arc<[SessionKey]>,
}

impl SendRequest {
    /// A send of `message` to the agent type `to`, from the API entry point.
    #[must_use]
    pub fn new(to: impl Into<String>, message: Message) -> Self {
        Self {
            to: to.into(),
            message,
            entry_point: EntryPoint::Api,
            from: None,
            principal: None,
            idempotency_key: None,
            hops: 0,
            payload: None,
            metadata: None,
            extensions: Vec::new(),
            chain: Arc::new([]),
        }
    }

    /// Sets the sender.
    #[must_use]
    pub fn from(mut self, from: impl Into<String>) -> Self {
        self.from = Some(from.into());
        self
    }

    /// Sets the authenticated principal the send comes from.
    #[must_use]
    pub fn principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// Sets the entry point.
    #[must_use]
    pub fn entry_point(mut self, entry_point: EntryPoint) -> Self {
        self.entry_point = entry_point;
        self
    }

    /// Sets the idempotency key.
    #[must_use]
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// Sets the hop count.
    #[must_use]
    pub fn hops(mut self, hops: u32) -> Self {
        self.hops = hops;
        self
    }

    /// Attaches a typed handoff payload.
    #[must_use]
    pub fn payload(mut self, payload: HandoffPayload) -> Self {
        self.payload = Some(payload);
        self
    }

    /// Sets the request's metadata (A2A `params.metadata`).
    #[must_use]
    pub fn metadata(mut self, metadata: Option<Metadata>) -> Self {
        self.metadata = metadata;
        self
    }

    /// Sets the activated extension URIs.
    #[must_use]
    pub fn extensions(mut self, extensions: Vec<String>) -> Self {
        self.extensions = extensions;
        self
    }
}

/// A send that reached its session.
#[derive(Debug, Clone)]
pub struct Submitted {
    /// The task as it stood when submitted.
    pub task: Task,
    /// Whether this was a repeat of an earlier send (by idempotency key).
    pub deduplicated: bool,
}

/// A send whose task completed, ended, or stopped to ask for input.
#[derive(Debug, Clone)]
pub struct Completed {
    /// The task as it stands now.
    pub task: Task,
    /// Whether this was a repeat of an earlier send (by idempotency key).
    pub deduplicated: bool,
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
            SupervisorMsg::Sweep => core.passivate_idle(),
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
    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Stops the sessions with no work, no waiting sends and no use for the idle
    /// timeout. Removal from the registry comes first, then a drain: a send that
    /// already holds the old actor either lands before the drain marker (and runs) or
    /// is refused with its message handed back (and goes to a fresh session).
    fn passivate_idle(&self) {
        let now = self.elapsed_ms();
        let idle_ms = u64::try_from(self.config.idle_timeout.as_millis()).unwrap_or(u64::MAX);
        let mut stopped = Vec::new();
        self.sessions.retain(|_, slot| {
            let session = &slot.session;
            let idle = now.saturating_sub(session.last_used.load(Ordering::Relaxed)) >= idle_ms
                && session.limiter.is_idle();
            if idle {
                self.warm.take(session);
                stopped.push(slot.actor.clone());
            }
            !idle
        });
        for actor in stopped {
            let _ = actor.drain();
        }
    }

    /// Called whenever a session may have become idle (its work ended, a task of it
    /// ended, a send to it was refused): an idle session joins the warm set as the
    /// most recently used, and the least recently used ones past
    /// [`SupervisorConfig::warm_sessions`] are passivated at once, by the same
    /// remove-then-drain as the idle sweep.
    pub(crate) fn settled(&self, key: &SessionKey, session: &Arc<SessionShared>) {
        if !session.is_idle() || self.shutting_down.load(Ordering::Acquire) {
            return;
        }
        let registered = self
            .sessions
            .get(key)
            .is_some_and(|slot| Arc::ptr_eq(&slot.session, session));
        if !registered {
            // Passivated or stopped already; nothing to keep warm.
            return;
        }
        let stamp = self.warm.next_stamp.fetch_add(1, Ordering::Relaxed) + 1;
        if session.warm.swap(stamp, Ordering::AcqRel) == 0 {
            self.warm.len.fetch_add(1, Ordering::AcqRel);
        }
        let victims = {
            let mut entries = self
                .warm
                .entries
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            entries.push_back(WarmEntry {
                key: key.clone(),
                session: Arc::clone(session),
                stamp,
            });
            let mut victims = Vec::new();
            while self.warm.len.load(Ordering::Acquire) > self.config.warm_sessions {
                let Some(entry) = entries.pop_front() else {
                    break;
                };
                if entry
                    .session
                    .warm
                    .compare_exchange(entry.stamp, 0, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    self.warm.len.fetch_sub(1, Ordering::AcqRel);
                    victims.push(entry);
                }
            }
            // Stale entries are skipped at the front; drop them in one pass once they
            // outnumber the current ones, so the line stays O(warm sessions).
            if entries.len() > 2 * self.warm.len.load(Ordering::Acquire) + 64 {
                entries.retain(|e| e.session.warm.load(Ordering::Acquire) == e.stamp);
            }
            victims
        };
        // Outside the line's lock: removal takes a registry shard lock.
        for victim in victims {
            let removed = self.sessions.remove_if(&victim.key, |_, slot| {
                Arc::ptr_eq(&slot.session, &victim.session) && slot.session.is_idle()
            });
            if let Some((_, slot)) = removed {
                let _ = slot.actor.drain();
            }
        }
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
        if let Some(slot) = self.sessions.get(key) {
            slot.session
                .last_used
                .store(self.elapsed_ms(), Ordering::Relaxed);
            // In use again: out of the warm set until it settles.
            self.warm.take(&slot.session);
            return Ok((slot.actor.clone(), Arc::clone(&slot.session), false));
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
        let mut created = false;
        let slot = match self.sessions.entry(key.clone()) {
            dashmap::mapref::entry::Entry::Occupied(slot) => slot.into_ref(),
            dashmap::mapref::entry::Entry::Vacant(vacant) => {
                created = true;
                let (actor, _) = ractor::ActorRuntime::spawn_linked_instant(
                    None,
                    SessionActor,
                    SessionActor::args(agent as Arc<dyn DynAgent>, key),
                    supervisor,
                )
                .map_err(|e| Error::SessionUnavailable {
                    agent: key.agent.to_string(),
                    context_id: key.context_id.clone(),
                    reason: e.to_string(),
                })?;
                vacant.insert(Slot {
                    actor,
                    session: Arc::new(SessionShared {
                        limiter: Arc::new(Limiter::new(
                            LimitScope::Session,
                            self.config.session_limit,
                            self.config.session_queue,
                        )),
                        last_used: AtomicU64::new(self.elapsed_ms()),
                        warm: AtomicU64::new(0),
                        live_tasks: AtomicUsize::new(0),
                    }),
                })
            }
        };
        if !created {
            self.warm.take(&slot.session);
        }
        Ok((slot.actor.clone(), Arc::clone(&slot.session), created))
    }

    /// Stops a session spawned for a send that was then refused, if nothing else has
    /// come to use it meanwhile: refused sends must leave nothing behind, or a flood of
    /// new conversations past a limit would fill memory with idle sessions.
    fn discard_unused(&self, key: &SessionKey, actor: &ActorRef<SessionMsg>) {
        let id = actor.get_id();
        let removed = self.sessions.remove_if(key, |_, slot| {
            slot.actor.get_id() == id && slot.session.is_idle()
        });
        if let Some((_, slot)) = removed {
            self.warm.take(&slot.session);
            let _ = actor.drain();
        }
    }

    /// Whether `session` is still the one registered under `key`.
    fn is_current(&self, key: &SessionKey, session: &Arc<SessionShared>) -> bool {
        self.sessions
            .get(key)
            .is_some_and(|slot| Arc::ptr_eq(&slot.session, session))
    }

    fn forget_session(&self, key: &SessionKey, actor: &ActorRef<SessionMsg>) {
        let id = actor.get_id();
        if let Some((_, slot)) = self
            .sessions
            .remove_if(key, |_, slot| slot.actor.get_id() == id)
        {
            self.warm.take(&slot.session);
        }
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
            config,
            agents,
            policy,
            store,
            sessions: DashMap::new(),
            warm: WarmLine::default(),
            live: DashMap::new(),
            actor: OnceLock::new(),
            tracker: TaskTracker::new(),
            shutting_down: AtomicBool::new(false),
            started: Instant::now(),
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
        self.core
            .live
            .iter()
            .map(|live| live.channel.stream_count())
            .sum()
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
        match self.core.sessions.remove(&key) {
            Some((_, slot)) => {
                self.core.warm.take(&slot.session);
                let _ = slot.actor.drain();
                true
            }
            None => false,
        }
    }

    /// Passivates every session that is idle right now, whatever its idle time (for
    /// tests, benchmarks and memory pressure).
    pub fn passivate_all_idle(&self) {
        let mut stopped = Vec::new();
        self.core.sessions.retain(|_, slot| {
            let idle = slot.session.limiter.is_idle();
            if idle {
                self.core.warm.take(&slot.session);
                stopped.push(slot.actor.clone());
            }
            !idle
        });
        for actor in stopped {
            let _ = actor.drain();
        }
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
    pub async fn send_and_wait(&self, request: SendRequest) -> Result<Completed> {
        let (submitted, watcher) = self.submit(request, Follow::State).await?;
        let mut task = self.settle(&submitted, watcher).await?;
        if submitted.deduplicated {
            mark_deduplicated(&mut task);
        }
        Ok(Completed {
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
        let (submitted, watcher) = self.submit(request, Follow::Updates).await?;
        let rx = match watcher {
            Watcher::Updates(rx) => Some(rx),
            Watcher::Nothing | Watcher::State(_) => None,
        };
        Ok(self.task_stream(submitted.task, rx))
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
        // Subscribe before reading the task, so no update falls between the two.
        let rx = self
            .core
            .live
            .get(task_id)
            .map(|live| live.channel.subscribe());
        let task = self.get_task(task_id, None).await?;
        // A task that is already settled streams only itself.
        let rx = rx.filter(|_| !settled(task.status.state));
        Ok(self.task_stream(task, rx))
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
        let cancel = self.core.live.get(task_id).map(|live| live.cancel.clone());
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
            let running: Vec<(TaskId, CancellationToken, Arc<TaskChannel>)> = self
                .core
                .live
                .iter()
                .map(|live| {
                    let channel = Arc::clone(&live.channel);
                    (live.key().clone(), live.cancel.clone(), channel)
                })
                .collect();
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
        self.core
            .warm
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Moves a task to a terminal or interrupted status, publishes it as the final
    /// update, and closes the send that was handling it. Does nothing if the task has
    /// already ended (a cancel or a shutdown won the race).
    pub(crate) async fn finish_task(&self, task_id: &TaskId, status: TaskStatus) {
        let _ = self.finish_task_inner(task_id, status).await;
    }

    async fn finish_task_inner(
        &self,
        task_id: &TaskId,
        status: TaskStatus,
    ) -> std::result::Result<(), StoreError> {
        let core = &self.core;
        core.store.set_status(task_id, status.clone()).await?;
        let state = status.state;
        // An ended task leaves the live set, and with it its session's count of live
        // tasks; the session is offered to the warm set once the update is out.
        let (events, ended) = if state.is_terminal() {
            let Some((_, live)) = core.live.remove(task_id) else {
                return Ok(());
            };
            let LiveTask {
                agent,
                context_id,
                channel,
                envelope,
                pin,
                ..
            } = live;
            let key = SessionKey {
                agent,
                context_id: context_id.clone(),
            };
            let session = pin.session();
            drop(pin);
            let events = TaskEvents {
                task_id: task_id.clone(),
                context_id,
                channel,
                envelope,
            };
            (events, Some((key, session)))
        } else {
            let Some(live) = core.live.get(task_id) else {
                return Ok(());
            };
            let events = TaskEvents {
                task_id: task_id.clone(),
                context_id: live.context_id.clone(),
                channel: Arc::clone(&live.channel),
                envelope: live.envelope.clone(),
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
        events.publish_status_then(self, status, true, || {
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

    async fn route(
        &self,
        request: &mut SendRequest,
        mut handoff: Handoff,
        envelope: &mut Envelope,
        subscribe: Follow,
    ) -> Result<(Submitted, Watcher)> {
        let core = &self.core;
        let (agent_name, registered) = core.agent(&request.to)?;
        let agent_name = Arc::clone(agent_name);

        // Policy.
        let payload_type = handoff.payload_type.map(|t| t.as_str());
        if let Decision::Deny(rejection) = core.policy.check(
            &policy_request(request, payload_type),
            Instant::now().into_std(),
        ) {
            return Err(Error::PolicyRejected {
                reason: rejection.to_string(),
                rejection,
            });
        }

        // Idempotency.
        let guard = match &envelope.idempotency_key {
            None => None,
            // Keys are scoped by target agent and caller: two agents' keys never
            // collide, nor do two callers'.
            Some(key) => match core
                .idempotency
                .claim(
                    &idempotency::scope(&envelope.to, caller(request), key),
                    Instant::now(),
                )
                .await
            {
                Claim::First(guard) => Some(guard),
                Claim::Duplicate(task_id) => {
                    let rx = core.live.get(&task_id).map_or(Watcher::Nothing, |live| {
                        Watcher::new(&live.channel, subscribe)
                    });
                    let mut task = self.get_task(&task_id, None).await?;
                    mark_deduplicated(&mut task);
                    // A task that already settled (waiting for input) publishes
                    // nothing more until its next message: waiting on it would hang.
                    let rx = if settled(task.status.state) {
                        Watcher::Nothing
                    } else {
                        rx
                    };
                    envelope.task_id = Some(task.id.clone());
                    envelope.context_id = Some(task.context_id.clone());
                    core.events
                        .emit(|| envelope.event(EventKind::SendDeduplicated, EventDetail::None));
                    return Ok((
                        Submitted {
                            task,
                            deduplicated: true,
                        },
                        rx,
                    ));
                }
                Claim::DuplicateFailed(failure) => return Err(failure.into_error(key)),
            },
        };

        // Which task and conversation: a continued task keeps its own.
        let continued = match request.message.task_id.clone() {
            Some(task_id) => Some(self.continuable(&task_id, &agent_name, request).await?),
            None => None,
        };
        let context_id = match (&continued, &request.message.context_id) {
            (Some(task), _) => task.context_id.clone(),
            (None, Some(context_id)) => context_id.clone(),
            (None, None) => ContextId::mint(),
        };
        envelope.context_id = Some(context_id.clone());
        let key = SessionKey {
            agent: Arc::clone(&agent_name),
            context_id: context_id.clone(),
        };

        // A send back into a session that is itself waiting on this chain of sends
        // would wait for its own permit forever.
        if request.chain.contains(&key) {
            return Err(Error::DelegationCycle {
                agent: key.agent.to_string(),
                context_id: key.context_id.clone(),
            });
        }

        // A send that does not wait for its task (`send`) must not wait for its turn
        // either: it takes its place in the session's line now, and the task waits
        // there, `submitted`, off the caller's path.
        let waits_off_path = matches!(subscribe, Follow::Nothing);

        // A new conversation that the agent or global limit would refuse anyway is
        // refused before a session is spawned for it: cheaper, and it leaves nothing.
        // A send that will wait off the caller's path is checked the same way whatever
        // its conversation, so that it is refused while it still has no task.
        if (waits_off_path || !core.sessions.contains_key(&key))
            && let Some(full) = [&registered.limiter, &core.global]
                .into_iter()
                .find(|limiter| limiter.is_saturated())
        {
            let error = full.busy();
            if let Some(guard) = guard {
                guard.fail(Failure::of(&error));
            }
            return Err(error);
        }

        // Concurrency limits, most specific first: a send waiting on a busy session
        // holds nothing that other sessions need.
        let (actor, session, ticket, _settle) = loop {
            let (actor, session, created) = core.session(&key, registered)?;
            // Whatever happens to this send from here, its session is offered to the
            // warm set when the send lets go of it (a no-op while it is busy).
            let settle = Settle {
                core,
                key: &key,
                session: Arc::clone(&session),
            };
            let ticket = if waits_off_path {
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
                        core.discard_unused(&key, &actor);
                    }
                    if let Some(guard) = guard {
                        guard.fail(Failure::of(&error));
                    }
                    return Err(error);
                }
            };
            // The session may have been passivated while we waited: its limiter is then
            // orphaned, and a fresh session must be used to keep the per-session limit.
            // (A place in its line keeps it from passivation from here on.)
            if core.is_current(&key, &session) {
                break (actor, session, ticket, settle);
            }
        };

        // Create or continue the task.
        request.message.context_id = Some(context_id.clone());
        let (task, channel, cancel) = match continued {
            Some(task) => {
                request.message.task_id = Some(task.id.clone());
                core.store
                    .append_history(&task.id, request.message.clone())
                    .await
                    .map_err(|e| terminal_to_error(e, &task.id))?;
                let (channel, cancel) = {
                    let Some(mut live) = core.live.get_mut(&task.id) else {
                        return Err(Error::TaskTerminal {
                            task_id: task.id.clone(),
                            state: TaskState::Canceled,
                        });
                    };
                    live.envelope = envelope.clone();
                    // The task now belongs to the session that handles it (its old one
                    // may have been passivated while it waited for input).
                    if !Arc::ptr_eq(&live.pin.session(), &session) {
                        live.pin = TaskPin::new(&session);
                    }
                    (Arc::clone(&live.channel), live.cancel.clone())
                };
                // The task leaves input-required: it has a message to work on again.
                core.store
                    .set_status(&task.id, TaskStatus::new(TaskState::Submitted))
                    .await
                    .map_err(|e| terminal_to_error(e, &task.id))?;
                channel.set_state(TaskState::Submitted);
                let task = self.get_task(&task.id, None).await?;
                (task, channel, cancel)
            }
            None => {
                let task_id = TaskId::mint();
                request.message.task_id = Some(task_id.clone());
                let mut task = Task::new(
                    task_id.clone(),
                    context_id.clone(),
                    TaskStatus::new(TaskState::Submitted),
                );
                task.history = Some(vec![request.message.clone()]);
                let owner = TaskOwner::new(
                    Arc::clone(&agent_name),
                    request.principal.as_deref().map(Arc::from),
                );
                core.store.insert_owned(task.clone(), owner).await?;
                let channel = TaskChannel::new(TaskState::Submitted, core.config.stream_capacity);
                let cancel = CancellationToken::new();
                envelope.task_id = Some(task_id.clone());
                // Subscribers learn of the task when it exists, not only once its
                // agent starts: `submitted` is a state the store records, so it is an
                // update like the others (not final; the task stream starts with the
                // task itself instead).
                core.events.emit(|| {
                    let update = TaskStatusUpdateEvent::new(
                        task_id.clone(),
                        context_id.clone(),
                        task.status.clone(),
                        false,
                    );
                    envelope.event(EventKind::TaskStatus, EventDetail::Status { update })
                });
                core.live.insert(
                    task_id,
                    LiveTask {
                        agent: Arc::clone(&agent_name),
                        context_id: context_id.clone(),
                        cancel: cancel.clone(),
                        channel: Arc::clone(&channel),
                        envelope: envelope.clone(),
                        pin: TaskPin::new(&session),
                    },
                );
                (task, channel, cancel)
            }
        };
        envelope.task_id = Some(task.id.clone());
        if let Some(guard) = guard {
            guard.settle(&task.id);
        }
        let rx = Watcher::new(&channel, subscribe);

        let mut work = Work {
            supervisor: self.clone(),
            agent_name: Arc::clone(&agent_name),
            message: request.message.clone(),
            handoff: std::mem::take(&mut handoff),
            metadata: request.metadata.take(),
            extensions: std::mem::take(&mut request.extensions),
            sender: envelope.from.clone(),
            hops: request.hops,
            chain: request.chain.iter().cloned().chain([key.clone()]).collect(),
            cancel,
            events: TaskEvents {
                task_id: task.id.clone(),
                context_id,
                channel,
                envelope: envelope.clone(),
            },
            _permits: None,
            started: false,
            key: key.clone(),
            session,
            _tracked: core.tracker.token(),
        };
        match ticket {
            Ticket::Ready(permits) => {
                work._permits = Some(permits);
                self.deliver(&key, registered, actor, work)?;
            }
            Ticket::Wait(turn) => {
                // The work's tracker token already counts it for the shutdown drain.
                tokio::spawn(self.clone().wait_turn(key.clone(), actor, turn, work));
            }
        }
        Ok((
            Submitted {
                task,
                deduplicated: false,
            },
            rx,
        ))
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
                    self.core.forget_session(key, &actor);
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
        let owner = self.core.live.get(task_id).map(|l| Arc::clone(&l.agent));
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
            let _ = state.wait_for(|s| settled(*s)).await;
        }
        self.get_task(&submitted.task.id, None).await
    }

    fn task_stream(
        &self,
        first: Task,
        rx: Option<broadcast::Receiver<StreamEvent>>,
    ) -> impl Stream<Item = StreamEvent> + Send + 'static {
        enum State {
            First(Box<Task>, Option<broadcast::Receiver<StreamEvent>>),
            Updates(TaskId, broadcast::Receiver<StreamEvent>),
            Done,
        }
        let supervisor = self.clone();
        futures::stream::unfold(State::First(Box::new(first), rx), move |state| {
            let supervisor = supervisor.clone();
            async move {
                match state {
                    State::Done => None,
                    State::First(task, None) => Some((StreamEvent::Task(*task), State::Done)),
                    State::First(task, Some(rx)) => {
                        let id = task.id.clone();
                        Some((StreamEvent::Task(*task), State::Updates(id, rx)))
                    }
                    State::Updates(id, mut rx) => match rx.recv().await {
                        Ok(StreamEvent::StatusUpdate(update)) if update.is_final => {
                            Some((StreamEvent::StatusUpdate(update), State::Done))
                        }
                        Ok(event) => Some((event, State::Updates(id, rx))),
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            // Fell behind: resynchronize with the task's current status
                            // rather than replay what was dropped.
                            let task = supervisor.get_task(&id, Some(0)).await.ok()?;
                            let is_final = settled(task.status.state);
                            let update = TaskStatusUpdateEvent::new(
                                task.id,
                                task.context_id,
                                task.status,
                                is_final,
                            );
                            let next = if is_final {
                                State::Done
                            } else {
                                State::Updates(id, rx)
                            };
                            Some((StreamEvent::StatusUpdate(update), next))
                        }
                        Err(broadcast::error::RecvError::Closed) => None,
                    },
                }
            }
        })
    }
}

/// Offers a session to the warm set when a send lets go of it.
struct Settle<'a> {
    core: &'a Core,
    key: &'a SessionKey,
    session: Arc<SessionShared>,
}

impl Drop for Settle<'_> {
    fn drop(&mut self) {
        self.core.settled(self.key, &self.session);
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

/// What a send's caller will follow of its task.
#[derive(Debug, Clone, Copy)]
enum Follow {
    Nothing,
    State,
    Updates,
}

/// The receiving end of what a caller follows.
#[derive(Debug)]
enum Watcher {
    Nothing,
    State(watch::Receiver<TaskState>),
    Updates(broadcast::Receiver<StreamEvent>),
}

impl Watcher {
    fn new(channel: &TaskChannel, follow: Follow) -> Self {
        match follow {
            Follow::Nothing => Self::Nothing,
            Follow::State => Self::State(channel.watch()),
            Follow::Updates => Self::Updates(channel.subscribe()),
        }
    }
}

/// The metadata key that marks a task returned for a repeated idempotency key:
/// `"agentyard.deduplicated": true` on the copy handed to the repeat, never stored.
pub const DEDUPLICATED_METADATA_KEY: &str = "agentyard.deduplicated";

fn mark_deduplicated(task: &mut Task) {
    task.metadata.get_or_insert_with(Default::default).insert(
        DEDUPLICATED_METADATA_KEY.to_owned(),
        serde_json::Value::Bool(true),
    );
}

/// Who presents a send's idempotency key: its principal, else its named sender.
fn caller(request: &SendRequest) -> Caller<'_> {
    match (&request.principal, &request.from) {
        (Some(principal), _) => Caller::Principal(principal),
        (None, Some(from)) => Caller::Sender(from),
        (None, None) => Caller::Anonymous,
    }
}

/// Whether a task in this state is done with the current message.
fn settled(state: TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
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

fn policy_request<'a>(
    request: &'a SendRequest,
    payload_type: Option<&'a str>,
) -> agentyard_policy::SendRequest<'a> {
    let mut described =
        agentyard_policy::SendRequest::new(&request.to, request.entry_point).hops(request.hops);
    if let Some(from) = request.from.as_deref() {
        described = described.from(from);
    }
    if let Some(payload_type) = payload_type {
        described = described.payload_type(payload_type);
    }
    described
}
