//! What an idle session holds on the heap, against a raw ractor actor: N sessions
//! spawned and left idle (`Supervisor::spawn_session`), or N raw actors of the
//! benchmark's echo kind, then the live heap they added, in bytes and allocations
//! per session. Exact where the benchmark's `sessions` suite reads resident memory
//! (which also counts the allocator's rounding and pages); the allocation sites are
//! in the `dhat-heap.json` it leaves, at the end of the run (`eb`/`ebk` per site):
//!
//! ```sh
//! cargo build --release -p agentyard-actors --example session_heap
//! target/release/examples/session_heap sessions 10000
//! target/release/examples/session_heap raw 10000
//! ```

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

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// How long the spawned actors get to start before the heap is read.
const SETTLE: Duration = Duration::from_secs(1);

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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let side = args.next().unwrap_or_else(|| String::from("sessions"));
    let count: usize = match args.next() {
        Some(n) => n
            .parse()
            .map_err(|e| format!("the number of sessions, `{n}`: {e}"))?,
        None => 10_000,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (bytes, blocks) = runtime.block_on(async {
        match side.as_str() {
            "sessions" => sessions(count).await,
            "raw" => raw(count).await,
            other => Err(format!("`{other}`: say `sessions` or `raw`").into()),
        }
    })?;
    #[expect(clippy::cast_precision_loss, reason = "counts of a few million")]
    let per = |n: u64| n as f64 / count as f64;
    println!(
        "{side}: {:.1} bytes in {:.2} allocations a session, live",
        per(bytes),
        per(blocks)
    );
    Ok(())
}

type Counted = Result<(u64, u64), Box<dyn std::error::Error>>;

/// The live heap added by `spawn` and what it left running after [`SETTLE`], read
/// while it is still alive (the profiler's end-of-run figures are taken then too).
async fn added(spawn: impl AsyncFnOnce() -> Result<Box<dyn std::any::Any>, String>) -> Counted {
    let profiler = dhat::Profiler::new_heap();
    let before = dhat::HeapStats::get();
    let kept = spawn().await?;
    tokio::time::sleep(SETTLE).await;
    let after = dhat::HeapStats::get();
    drop(profiler);
    // Left to the process's end: dropping them would be counted by nothing, and
    // stopping a hundred thousand actors is not what is measured.
    std::mem::forget(kept);
    Ok((
        (after.curr_bytes - before.curr_bytes) as u64,
        (after.curr_blocks - before.curr_blocks) as u64,
    ))
}

async fn sessions(count: usize) -> Counted {
    let mut config = SupervisorConfig::default();
    // Every session stays live: none is passivated for space while counted.
    config.warm_sessions = count.max(1);
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
    .await?;
    tokio::time::sleep(SETTLE).await;
    added(async || {
        for i in 0..count {
            supervisor
                .spawn_session("echo", Some(ContextId::new(format!("session-{i:08}"))))
                .map_err(|e| e.to_string())?;
        }
        Ok(Box::new(supervisor) as Box<dyn std::any::Any>)
    })
    .await
}

async fn raw(count: usize) -> Counted {
    let counters = (Arc::new(()), Arc::new(()));
    added(async || {
        let mut actors = Vec::with_capacity(count);
        for _ in 0..count {
            let (actor, _) = ractor::ActorRuntime::spawn_instant(
                None,
                RawEcho,
                (Arc::clone(&counters.0), Arc::clone(&counters.1)),
            )
            .map_err(|e| e.to_string())?;
            actors.push(actor);
        }
        Ok(Box::new(actors) as Box<dyn std::any::Any>)
    })
    .await
}
