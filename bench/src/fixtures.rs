//! What every suite measures with: the echo agent on the runtime side, the echo actor
//! on the raw ractor side, and the counters both report to.
//!
//! The two sides do the same work per message: read the text of an A2A [`Message`],
//! build a reply message holding it, bump the shared counter. What differs is only
//! what carries the message there: the supervisor path, or a bare ractor mailbox.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentyard::policy::{EntryPoint, Pattern, RateLimit, Rule, RulePolicy};
use agentyard::{
    Agent, AgentDescriptor, AgentError, Message, Runtime, RuntimeBuilder, TaskContext,
};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use tokio::sync::Notify;

use crate::error::{Error, Result};

/// The name the echo agent is registered under.
pub(crate) const ECHO: &str = "echo";

/// Counts handled messages and wakes a waiter when a target count is reached.
#[derive(Debug)]
pub(crate) struct Counter {
    handled: AtomicUsize,
    target: usize,
    reached: Notify,
}

impl Counter {
    /// A counter that wakes [`Counter::reached`] at `target` (use `usize::MAX` for
    /// never).
    pub(crate) fn new(target: usize) -> Arc<Self> {
        Arc::new(Self {
            handled: AtomicUsize::new(0),
            target,
            reached: Notify::new(),
        })
    }

    pub(crate) fn tick(&self) {
        if self.handled.fetch_add(1, Ordering::AcqRel) + 1 == self.target {
            // Stores a permit if nobody waits yet, so the wake is never lost.
            self.reached.notify_one();
        }
    }

    pub(crate) fn handled(&self) -> usize {
        self.handled.load(Ordering::Acquire)
    }

    /// Waits until the target count is reached.
    ///
    /// # Errors
    /// [`Error::Unexpected`] if it is not reached within `limit`: a message was lost,
    /// and a time measured to here would be wrong.
    pub(crate) async fn reached(&self, limit: Duration) -> Result<()> {
        if self.handled() >= self.target {
            return Ok(());
        }
        tokio::time::timeout(limit, self.reached.notified())
            .await
            .map_err(|_| {
                Error::Unexpected(format!(
                    "only {} of {} messages were handled within {limit:?}",
                    self.handled(),
                    self.target
                ))
            })
    }
}

/// How many agent values or raw actor states are alive: tells when every session or
/// actor has really stopped (its state is dropped when it stops).
#[derive(Debug, Default)]
pub(crate) struct Alive(AtomicUsize);

impl Alive {
    pub(crate) fn count(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }

    fn guard(self: &Arc<Self>) -> AliveGuard {
        self.0.fetch_add(1, Ordering::AcqRel);
        AliveGuard(Arc::clone(self))
    }
}

/// Held by one live agent value or actor state.
#[derive(Debug)]
struct AliveGuard(Arc<Alive>);

impl Drop for AliveGuard {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The echo agent: replies with the text it got.
#[derive(Debug)]
pub(crate) struct Echo {
    handled: Arc<Counter>,
    _alive: AliveGuard,
}

impl Agent for Echo {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(text);
        self.handled.tick();
        Ok(())
    }
}

/// A runtime builder with the send path the supervisor suite describes: a
/// [`RulePolicy`] with four rules that never match this traffic and a per-sender rate
/// limit far above it (so every check runs and none refuses), and concurrency limits
/// raised so that they count but never refuse. The per-session limit stays at its
/// default of 1. Callers register their agents.
///
/// # Errors
/// If the rate limit is invalid (it is not).
pub(crate) fn bench_builder() -> Result<RuntimeBuilder> {
    let policy = RulePolicy::builder()
        .rule(
            Rule::deny()
                .named("no mallory")
                .from(Pattern::exact("mallory")),
        )
        .rule(
            Rule::deny()
                .to(Pattern::exact("billing"))
                .entry_point(EntryPoint::Http),
        )
        .rule(
            Rule::deny()
                .from(Pattern::prefix("untrusted-"))
                .payload_type(Pattern::exact("task_delegation")),
        )
        .rule(Rule::allow().to(Pattern::prefix("internal-")))
        .rate_limit(RateLimit::per_second(1_000_000, 100_000_000.0)?)
        .build();
    Ok(Runtime::builder()
        .policy(policy)
        .global_limit(1 << 20)
        .global_queue(1 << 20)
        .agent_limit(1 << 20)
        .agent_queue(1 << 20)
        // A fire-and-forget send takes its place in the conversation's queue at once and
        // is refused Busy when the queue is full; the floor's mailbox is unbounded, so
        // the runtime's line must hold every message the suite sends to one session.
        .session_queue(1 << 20)
        // The suites measure N live sessions (and senders that each keep their own
        // conversation); none may be passivated for space while they measure.
        .warm_sessions(1 << 20))
}

/// A runtime with the echo agent behind [`bench_builder`]'s send path.
///
/// # Errors
/// If the runtime cannot start.
pub(crate) async fn echo_runtime(handled: &Arc<Counter>, alive: &Arc<Alive>) -> Result<Runtime> {
    echo_runtime_with(bench_builder()?, handled, alive).await
}

/// A runtime with the echo agent, built from `builder`.
///
/// # Errors
/// If the runtime cannot start.
pub(crate) async fn echo_runtime_with(
    builder: RuntimeBuilder,
    handled: &Arc<Counter>,
    alive: &Arc<Alive>,
) -> Result<Runtime> {
    let (handled, alive) = (Arc::clone(handled), Arc::clone(alive));
    let runtime = builder
        .agent(AgentDescriptor::new(ECHO), move |_| Echo {
            handled: Arc::clone(&handled),
            _alive: alive.guard(),
        })
        .build()
        .await?;
    Ok(runtime)
}

/// An echo agent for callers that count nothing.
pub(crate) fn plain_echo() -> impl Fn(&agentyard::SessionInfo) -> Echo + Send + Sync + 'static {
    let (handled, alive) = (Counter::new(usize::MAX), Arc::new(Alive::default()));
    move |_| Echo {
        handled: Arc::clone(&handled),
        _alive: alive.guard(),
    }
}

/// The raw side's echo actor.
#[derive(Debug)]
pub(crate) struct EchoActor;

/// What the raw echo actor is told.
#[derive(Debug)]
pub(crate) enum EchoMsg {
    /// Reply with the text (ractor `call`).
    Call(Message, RpcReplyPort<Message>),
    /// Build the reply and count it (ractor `cast`).
    Cast(Message),
}

/// The raw echo actor's state.
#[derive(Debug)]
pub(crate) struct EchoState {
    handled: Arc<Counter>,
    _alive: AliveGuard,
}

/// What a raw echo actor starts with.
#[derive(Debug, Clone)]
pub(crate) struct EchoArgs {
    pub(crate) handled: Arc<Counter>,
    pub(crate) alive: Arc<Alive>,
}

impl Actor for EchoActor {
    type Msg = EchoMsg;
    type State = EchoState;
    type Arguments = EchoArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: EchoArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(EchoState {
            handled: args.handled,
            _alive: args.alive.guard(),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            EchoMsg::Call(message, reply) => {
                let answer = Message::agent_text(message.text());
                state.handled.tick();
                // The caller may have given up; that is its business.
                let _ = reply.send(answer);
            }
            EchoMsg::Cast(message) => {
                // The same work as a call, with nobody to send the answer to.
                drop(Message::agent_text(message.text()));
                state.handled.tick();
            }
        }
        Ok(())
    }
}

/// Spawns `count` raw echo actors without waiting for their start (as the runtime
/// spawns sessions).
///
/// # Errors
/// [`Error::Spawn`].
pub(crate) fn spawn_echo_actors(count: usize, args: &EchoArgs) -> Result<Vec<ActorRef<EchoMsg>>> {
    (0..count)
        .map(|_| {
            let (actor, _) = ractor::ActorRuntime::spawn_instant(None, EchoActor, args.clone())?;
            Ok(actor)
        })
        .collect()
}

/// Waits until `done()` holds, polling every millisecond.
///
/// # Errors
/// [`Error::Unexpected`] naming `what` if it does not hold within `limit`.
pub(crate) async fn eventually(
    what: &str,
    limit: Duration,
    mut done: impl FnMut() -> bool,
) -> Result<()> {
    let deadline = tokio::time::Instant::now() + limit;
    while !done() {
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::Unexpected(format!(
                "{what} did not happen within {limit:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Ok(())
}
