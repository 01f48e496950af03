//! The idle sessions `session_heap` and `session_rss` count, in one place so that the
//! heap and the resident memory are read on exactly the same spawns: N sessions of an
//! echo agent (`Supervisor::spawn_session`) or N raw ractor actors of the benchmark's
//! echo kind, spawned from one task or from several at once, and left idle. (Not an
//! example of its own: Cargo makes examples only of the files directly in `examples/`
//! and of directories with a `main.rs`.)
//!
//! Arguments: `sessions` or `raw`, the count (10,000), the number of tasks that spawn
//! them at once (1), and how many spawns each makes between yields (0: never yields,
//! as the benchmark's `sessions` suite spawns).

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use agentyard_actors::agent::{AgentDescriptor, Registration};
use agentyard_actors::{
    Agent, AgentError, InMemoryTaskStore, Supervisor, SupervisorConfig, TaskContext,
};
use agentyard_policy::AllowAll;
use agentyard_transport::ContextId;
use agentyard_transport::a2a::Message;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

/// How long the spawned actors get to start before memory is read.
pub(crate) const SETTLE: Duration = Duration::from_secs(1);

/// The session's agent: holds two shared counters, as the benchmark's echo does.
#[expect(
    dead_code,
    reason = "held for their size, as the benchmark's echo holds its"
)]
struct Echo {
    handled: Arc<()>,
    alive: Arc<()>,
}

impl Agent for Echo {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(text);
        Ok(())
    }
}

/// The raw actor: the benchmark's echo actor, its state the same two counters.
struct RawEcho;

#[expect(
    dead_code,
    reason = "never sent: the messages' type shapes the actor's loop, which is counted"
)]
enum RawMsg {
    Call(Message, RpcReplyPort<Message>),
    Cast(Message),
}

impl Actor for RawEcho {
    type Msg = RawMsg;
    type State = (Arc<()>, Arc<()>);
    type Arguments = (Arc<()>, Arc<()>);

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        counters: Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(counters)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        msg: Self::Msg,
        _state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match msg {
            RawMsg::Call(message, reply) => {
                let _ = reply.send(Message::agent_text(message.text()));
            }
            RawMsg::Cast(message) => drop(Message::agent_text(message.text())),
        }
        Ok(())
    }
}

/// What to spawn, and how.
pub(crate) struct Plan {
    /// `sessions` or `raw`.
    pub(crate) side: String,
    pub(crate) count: usize,
    spawners: usize,
    yield_every: usize,
}

impl Plan {
    /// The plan the command line gives.
    pub(crate) fn from_args() -> Result<Self, String> {
        let mut args = std::env::args().skip(1);
        let side = args.next().unwrap_or_else(|| String::from("sessions"));
        if side != "sessions" && side != "raw" {
            return Err(format!("`{side}`: say `sessions` or `raw`"));
        }
        let mut number = |what: &str, default: usize| match args.next() {
            Some(n) => n.parse().map_err(|e| format!("{what}, `{n}`: {e}")),
            None => Ok(default),
        };
        let count = number("the number of sessions", 10_000)?;
        let spawners = number("the number of spawning tasks", 1)?.max(1);
        let yield_every = number("the spawns between yields", 0)?;
        Ok(Self {
            side,
            count,
            spawners,
            yield_every,
        })
    }

    /// The runtime the benchmark's children run on: two workers.
    pub(crate) fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    }

    /// Starts what the spawns need (the supervisor, for sessions), before memory is
    /// first read.
    pub(crate) async fn prepare(&self) -> Result<Option<Supervisor>, String> {
        if self.side == "raw" {
            return Ok(None);
        }
        let mut config = SupervisorConfig::default();
        // Every session stays live: none is passivated for space while counted.
        config.warm_sessions = self.count.max(1);
        let counters = (Arc::new(()), Arc::new(()));
        let supervisor = Supervisor::start(
            config,
            vec![Registration::new(AgentDescriptor::new("echo"), move |_| {
                Echo {
                    handled: Arc::clone(&counters.0),
                    alive: Arc::clone(&counters.1),
                }
            })],
            Arc::new(AllowAll),
            Arc::new(InMemoryTaskStore::new()),
        )
        .await
        .map_err(|e| e.to_string())?;
        tokio::time::sleep(SETTLE).await;
        Ok(Some(supervisor))
    }

    /// Spawns the plan's sessions or actors; what it returns keeps them.
    pub(crate) async fn spawn(
        &self,
        supervisor: Option<Supervisor>,
    ) -> Result<Box<dyn Any>, String> {
        let per = self.count.div_ceil(self.spawners).max(1);
        let counters = (Arc::new(()), Arc::new(()));
        let mut spawners = tokio::task::JoinSet::new();
        for start in (0..self.count).step_by(per) {
            let range = start..(start + per).min(self.count);
            let (supervisor, counters) = (supervisor.clone(), counters.clone());
            let yield_every = self.yield_every;
            spawners.spawn(async move {
                let mut actors = Vec::new();
                for i in range {
                    match &supervisor {
                        Some(supervisor) => {
                            let context = ContextId::new(format!("session-{i:08}"));
                            supervisor
                                .spawn_session("echo", Some(context))
                                .map_err(|e| e.to_string())?;
                        }
                        None => {
                            let (actor, _) = ractor::ActorRuntime::spawn_instant(
                                None,
                                RawEcho,
                                (Arc::clone(&counters.0), Arc::clone(&counters.1)),
                            )
                            .map_err(|e| e.to_string())?;
                            actors.push(actor);
                        }
                    }
                    if yield_every > 0 && i % yield_every == 0 {
                        tokio::task::yield_now().await;
                    }
                }
                Ok::<_, String>(actors)
            });
        }
        let mut actors = Vec::with_capacity(if supervisor.is_some() { 0 } else { self.count });
        while let Some(joined) = spawners.join_next().await {
            actors.extend(joined.map_err(|e| e.to_string())??);
        }
        Ok(Box::new((supervisor, actors)))
    }
}
