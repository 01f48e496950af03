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
//!    goes to the session actor, which is spawned on first use; a caller that waits
//!    for the task and holds every permit runs the turn itself instead (`CallerRun`
//!    in `task`: no hand-off to the session's turn and back), a stream's caller until
//!    the turn first waits;
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
//! `sessions` (the session registry, its warm set, and the one passivation routine),
//! `route` (the send path's steps), `stream` (following a task), `lifecycle` (start
//! and shutdown) and `actor` (the actor that supervises the sessions and sweeps idle
//! ones). Below it, and never
//! importing it: the value types of a send (`send`), handoff preparation
//! (`handoff`), the live-task table (`live`), the agent trait and registration
//! (`agent`), [`TaskContext`](crate::TaskContext) (`context`), the work unit
//! (`task`) and the session actor (`session`); those reach the runtime through the
//! `Port` trait, which the supervisor implements.
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
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use agentyard_policy::{Decision, Policy};
use agentyard_transport::a2a::{StreamEvent, Task, TaskState, TaskStatus};
use agentyard_transport::{ContextId, TaskId};
use futures::Stream;
use ractor::ActorRef;
use tokio::time::Instant;
use tokio_util::task::TaskTracker;

use crate::agent::{AgentDescriptor, Factory};
use crate::error::{Error, Result};
use crate::events::{EventBus, Subscription};
use crate::handoff::Handoff;
use crate::idempotency::IdempotencyCache;
use crate::limits::ScopedLimiter;
use crate::live::LiveTasks;
use crate::metrics::Metrics;
use crate::occupancy::SessionShared;
use crate::port::{BoxFuture, Port, finish_task};
pub(crate) use crate::send::SessionKey;
pub use crate::send::{DEDUPLICATED_METADATA_KEY, SendRequest, Settled, Submitted};
use crate::send::{Follow, Watcher, mark_deduplicated, policy_request};
use crate::store::{StoreError, TaskFilter, TaskOwner, TaskPage, TaskStore, at_once};
use crate::task::CallerRun;

mod actor;
mod config;
mod lifecycle;
mod resume;
mod route;
mod sessions;
mod stream;
#[cfg(test)]
mod tests;

/// Where an agent type's registration lives now; kept here so the old path works.
pub use crate::agent::Registration;
use actor::SupervisorMsg;
pub use config::SupervisorConfig;
pub use resume::NumberedEvent;
use sessions::Sessions;

/// A send accepted and followed, not waited for yet ([`Supervisor::send_pending`]).
pub(crate) struct Pending {
    submitted: Submitted,
    watcher: Watcher,
    run: Option<CallerRun>,
}

impl Pending {
    /// The task as it was submitted.
    pub(crate) fn task(&self) -> &Task {
        &self.submitted.task
    }
}

impl fmt::Debug for Pending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending")
            .field("task_id", &self.submitted.task.id)
            .finish_non_exhaustive()
    }
}

/// A registered agent type.
struct Registered {
    descriptor: AgentDescriptor,
    factory: Factory,
    limiter: Arc<ScopedLimiter>,
    /// The agent's counters, found once at start rather than by name per send.
    metrics: Option<Arc<crate::metrics::AgentMetrics>>,
}

impl fmt::Debug for Registered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registered")
            .field("descriptor", &self.descriptor)
            .finish_non_exhaustive()
    }
}

/// The shared state of the send path.
pub(crate) struct Core {
    pub(crate) config: SupervisorConfig,
    /// Read once a send by the name the caller gave: foldhash, not std's SipHash
    /// (~150 instructions a lookup fewer). Its keys are the operator's registrations,
    /// never a caller's, so a caller cannot flood it with colliding names.
    agents: HashMap<Arc<str>, Registered, foldhash::quality::RandomState>,
    policy: Arc<dyn Policy>,
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) events: EventBus,
    idempotency: IdempotencyCache,
    global: Arc<ScopedLimiter>,
    sessions: Sessions,
    live: LiveTasks,
    actor: OnceLock<ActorRef<SupervisorMsg>>,
    /// This core itself, for the [`Port`] methods that start a send (they need a
    /// [`Supervisor`], i.e. an owning handle).
    me: Weak<Core>,
    pub(crate) tracker: TaskTracker,
    shutting_down: AtomicBool,
    restarts: AtomicU64,
    /// The runtime's metrics; `None` when they are off.
    pub(crate) metrics: Option<Arc<Metrics>>,
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
}

/// The runtime as a task's work sees it: the supervisor's parts, and its sends.
impl Port for Core {
    fn store(&self) -> &dyn TaskStore {
        &*self.store
    }

    fn events(&self) -> &EventBus {
        &self.events
    }

    fn live(&self) -> &LiveTasks {
        &self.live
    }

    fn history_depth(&self) -> usize {
        self.config.history_depth
    }

    fn cancel_grace(&self) -> Duration {
        self.config.cancel_grace
    }

    fn settled(&self, key: &SessionKey, session: &Arc<SessionShared>) {
        Core::settled(self, key, session);
    }

    fn send(&self, request: SendRequest) -> BoxFuture<'_, Result<Submitted>> {
        Box::pin(async move { self.supervisor()?.send(request).await })
    }

    fn send_and_wait(&self, request: SendRequest) -> BoxFuture<'_, Result<Settled>> {
        Box::pin(async move { self.supervisor()?.send_and_wait(request).await })
    }
}

impl Core {
    /// An owning handle on this core; only fails while the core is being dropped,
    /// when nothing can be sent anyway.
    fn supervisor(&self) -> Result<Supervisor> {
        self.me
            .upgrade()
            .map(|core| Supervisor { core })
            .ok_or(Error::ShuttingDown)
    }
}

impl Supervisor {
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

    /// Subscribes to the `a2a.task.status` events of the tasks `wants` names, from
    /// now on: only those are built for it (see `EventBus::subscribe_statuses`).
    pub(crate) fn subscribe_statuses(&self, wants: crate::events::WantsStatus) -> Subscription {
        self.core.events.subscribe_statuses(wants)
    }

    /// A count of the tasks a status subscriber wants, which the bus reads before it
    /// asks any filter (see `EventBus::status_interest`).
    pub(crate) fn status_interest(&self) -> crate::events::StatusInterest {
        self.core.events.status_interest()
    }

    /// Publishes an event built outside the send path (a workflow runner's node
    /// events) on the runtime's bus; `make` runs only if anyone is subscribed.
    pub fn publish(&self, make: impl FnOnce() -> crate::events::Event) {
        self.core.events.emit(make);
    }

    /// The number of live sessions (spawned and not passivated).
    #[must_use]
    pub fn session_count(&self) -> usize {
        self.core.sessions.len()
    }

    /// The number of live sessions of each agent type that has any (the console's
    /// per-agent count). It walks the session registry, so call it for a view, not
    /// on a hot path.
    #[must_use]
    pub fn session_counts(&self) -> HashMap<Arc<str>, usize> {
        self.core.sessions.count_by_agent()
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

    /// The runtime's metrics; `None` when [`SupervisorConfig::metrics`] is off.
    #[must_use]
    pub fn metrics(&self) -> Option<&Arc<Metrics>> {
        self.core.metrics.as_ref()
    }

    /// The metrics in the Prometheus text format, with the gauges read from the
    /// runtime's state now (live sessions per agent, live tasks by state, sends
    /// waiting per limit scope); `None` when metrics are off.
    #[must_use]
    pub fn scrape_metrics(&self) -> Option<String> {
        let metrics = self.core.metrics.as_ref()?;
        let core = &self.core;
        let sessions = core.sessions.count_by_agent();
        let mut tasks = HashMap::new();
        for (_, _, channel) in core.live.snapshot() {
            *tasks.entry(channel.state()).or_insert(0) += 1;
        }
        let agent_waiting = core.agents.values().map(|r| r.limiter.waiting()).sum();
        let queues = [
            ("global", core.global.waiting()),
            ("agent", agent_waiting),
            ("session", core.sessions.waiting()),
        ];
        metrics.set_state(&sessions, &tasks, queues);
        Some(metrics.encode())
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
        let (slot, _) = self.core.session(&key, registered)?;
        // Nothing runs in it yet: it is warm, and counts against the warm limit.
        self.core.settled(&key, &slot.session);
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
    // Not an `async fn`, here and in the other sends: an `async fn` keeps its
    // argument in its future and a second copy of it once its body starts, and a
    // send's future is moved whole into each future that awaits it. The request
    // (over 500 bytes) is held once, here, and lent to the steps below.
    #[expect(clippy::manual_async_fn, reason = "holds the request once")]
    pub fn send(
        &self,
        mut request: SendRequest,
    ) -> impl Future<Output = Result<Submitted>> + Send + '_ {
        async move {
            let (submitted, ..) = self.submit(&mut request, Follow::Nothing).await?;
            Ok(submitted)
        }
    }

    /// Sends a message and waits until its task completes, ends, or asks for input.
    ///
    /// # Errors
    /// As [`Supervisor::send`].
    #[expect(
        clippy::manual_async_fn,
        reason = "holds the request once (see `send`)"
    )]
    pub fn send_and_wait(
        &self,
        mut request: SendRequest,
    ) -> impl Future<Output = Result<Settled>> + Send + '_ {
        async move {
            let (submitted, watcher, run) = self.submit(&mut request, Follow::State).await?;
            let mut task = self.run_and_settle(&submitted, watcher, run).await?;
            if submitted.deduplicated {
                mark_deduplicated(&mut task);
            }
            Ok(Settled {
                task,
                deduplicated: submitted.deduplicated,
            })
        }
    }

    /// Like [`Supervisor::send_and_wait`], but waits at most `wait`: past it, returns
    /// the task as it stands (e.g. `working`) while it goes on. Follows only the task's
    /// state, as `send_and_wait` does, so an HTTP blocking send that must answer before
    /// its request timeout pays for no update stream.
    ///
    /// # Errors
    /// As [`Supervisor::send`].
    #[expect(
        clippy::manual_async_fn,
        reason = "holds the request once (see `send`)"
    )]
    pub fn send_and_wait_for(
        &self,
        request: SendRequest,
        wait: Duration,
    ) -> impl Future<Output = Result<Submitted>> + Send + '_ {
        async move {
            let pending = self.send_pending(request).await?;
            self.wait_pending(pending, wait).await
        }
    }

    /// The first half of [`Supervisor::send_and_wait_for`]: the send accepted and its
    /// state followed, its turn (if the caller has it) not run yet. For a caller that
    /// must act on the task between its creation and its end (store a webhook given
    /// with it) and still be answered with the task as it settled, which the store
    /// may have forgotten by the time the caller could read it.
    ///
    /// # Errors
    /// As [`Supervisor::send`].
    #[expect(
        clippy::manual_async_fn,
        reason = "holds the request once (see `send`)"
    )]
    pub(crate) fn send_pending(
        &self,
        mut request: SendRequest,
    ) -> impl Future<Output = Result<Pending>> + Send + '_ {
        async move {
            let (submitted, watcher, run) = self.submit(&mut request, Follow::State).await?;
            Ok(Pending {
                submitted,
                watcher,
                run,
            })
        }
    }

    /// The second half of [`Supervisor::send_and_wait_for`]: runs the caller's turn,
    /// if it has one, and waits at most `wait` for the task to settle.
    ///
    /// # Errors
    /// [`Error::TaskNotFound`] if the task did not settle in time and the store no
    /// longer has it; a store error reading it.
    // Not an `async fn`: it would hold the whole `Pending` beside the parts its body
    // takes apart, for as long as it runs.
    pub(crate) fn wait_pending(
        &self,
        pending: Pending,
        wait: Duration,
    ) -> impl Future<Output = Result<Submitted>> + Send + '_ {
        let Pending {
            submitted,
            watcher,
            run,
        } = pending;
        async move {
            let settled = self.run_and_settle(&submitted, watcher, run);
            let mut task = match tokio::time::timeout(wait, settled).await {
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
    }

    /// Sends a message and streams its task: first the task as submitted, then every
    /// status and artifact update, ending with the status update marked `final`.
    ///
    /// # Errors
    /// As [`Supervisor::send`].
    #[expect(
        clippy::manual_async_fn,
        reason = "holds the request once (see `send`)"
    )]
    pub fn stream(
        &self,
        mut request: SendRequest,
    ) -> impl Future<Output = Result<impl Stream<Item = StreamEvent> + Send + 'static>> + Send + '_
    {
        async move {
            let events = self.stream_lent(&mut request).await?;
            Ok(futures::StreamExt::map(events, |(_, event)| event))
        }
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
        Ok(at_once::context_principal(&*self.core.store, context_id).await?)
    }

    /// Returns a task with at most `history_length` of its most recent messages.
    ///
    /// # Errors
    /// [`Error::TaskNotFound`].
    pub async fn get_task(&self, task_id: &TaskId, history_length: Option<usize>) -> Result<Task> {
        at_once::get(&*self.core.store, task_id, history_length)
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
            finish_task(&*self.core, task_id, status).await
        {
            return Err(Error::TaskNotCancelable {
                task_id: task_id.clone(),
                state,
            });
        }
        cancel.cancel();
        self.get_task(task_id, None).await
    }
}
