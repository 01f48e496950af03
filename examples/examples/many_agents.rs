//! Many agent sessions in one process: spawns N sessions (100,000 by default), sends
//! each one message, waits for every answer, and prints the time taken, the
//! throughput and the resident memory (in total and per session); then passivates the
//! sessions and prints the memory again; last, sends each passivated session a second
//! message, which re-activates it, and prints time and memory once more.
//!
//! Run it in release for real numbers:
//!
//! ```text
//! cargo run --release -p agentyard-examples --example many_agents
//! cargo run --release -p agentyard-examples --example many_agents -- --sessions 10000 --concurrency 512
//! ```
//!
//! A first plain argument is taken as the number of sessions too (`-- 10000`).
//!
//! How it works: every session is its own conversation (contextId) of one agent type,
//! so every session is its own actor. The sessions are spawned first
//! (`Runtime::spawn_session`), so spawning and messaging are timed apart; then the
//! messages go out with at most `--concurrency` sends in flight
//! (`buffer_unordered`), and the runtime's global and per-agent limits are set to that
//! number so that no send is refused as busy. The in-memory task store keeps ended
//! tasks up to its limit (the 10,000 that ended last, by default), so the memory after
//! the answers counts the session actors and at most that many stored tasks; the
//! program counts the tasks still in the store and prints that number.
//!
//! Resident memory is `VmRSS` from `/proc/self/status` (Linux only; elsewhere it
//! prints `n/a`). Memory freed by passivation goes back to the allocator, which need
//! not give it back to the system, so RSS after passivation may fall little; the
//! re-activation round shows the memory is reused rather than leaked.

use std::time::{Duration, Instant};

use agentyard::{
    Agent, AgentDescriptor, AgentError, ContextId, Message, Runtime, TaskContext, TaskId, TaskState,
};
use futures::stream::{self, StreamExt};

const DEFAULT_SESSIONS: usize = 100_000;
const DEFAULT_CONCURRENCY: usize = 1_024;
const USAGE: &str = "usage: many_agents [--sessions N | N] [--concurrency K]";

/// Answers `ping N` with `pong N`.
struct Pong;

impl Agent for Pong {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        let n = text.strip_prefix("ping ").unwrap_or(&text);
        ctx.reply_text(format!("pong {n}"));
        Ok(())
    }
}

/// What the command line asked for.
#[derive(Debug)]
struct Args {
    sessions: usize,
    concurrency: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        sessions: DEFAULT_SESSIONS,
        concurrency: DEFAULT_CONCURRENCY,
    };
    let mut it = std::env::args().skip(1);
    let number = |flag: &str, value: Option<String>| -> Result<usize, String> {
        let value = value.ok_or_else(|| format!("{flag} needs a number"))?;
        match value.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "{flag}: `{value}` is not a positive number\n{USAGE}"
            )),
        }
    };
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--sessions" | "-n" => args.sessions = number("--sessions", it.next())?,
            "--concurrency" | "-c" => args.concurrency = number("--concurrency", it.next())?,
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => args.sessions = number("sessions", Some(other.to_owned()))?,
        }
    }
    Ok(args)
}

/// Resident memory in bytes, from `VmRSS` (or `VmHWM`, the peak) in
/// `/proc/self/status`; `None` where there is no such file.
fn proc_status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    let kib: u64 = line
        .trim_start_matches(field)
        .trim_start_matches(':')
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

fn rss() -> Option<u64> {
    proc_status_bytes("VmRSS")
}

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || String::from("n/a"),
        |b| format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    )
}

/// Memory grown from `before` to `after`, per session.
fn per_session(before: Option<u64>, after: Option<u64>, sessions: usize) -> String {
    match (before, after) {
        (Some(before), Some(after)) => {
            let grown = after.saturating_sub(before) as f64;
            format!("{:.0} bytes/session", grown / sessions as f64)
        }
        _ => String::from("n/a"),
    }
}

/// Sends `ping i` to the session of `contexts[i]`, for every `i`, with at most `k` in
/// flight, and returns how many answered `pong i` and the ids of their tasks.
async fn ping_all(runtime: &Runtime, contexts: &[ContextId], k: usize) -> (usize, Vec<TaskId>) {
    stream::iter(contexts.iter().cloned().enumerate())
        .map(|(i, context_id)| async move {
            let message = Message::user_text(format!("ping {i}")).with_context_id(context_id);
            match runtime.send_and_wait("pong", message).await {
                Ok(done) => {
                    let reply = done.task.status.message.as_deref().map(Message::text);
                    let ok = done.task.status.state == TaskState::Completed
                        && reply.as_deref() == Some(format!("pong {i}").as_str());
                    (ok, Some(done.task.id))
                }
                Err(error) => {
                    eprintln!("send {i} failed: {error}");
                    (false, None)
                }
            }
        })
        .buffer_unordered(k)
        .fold(
            (0_usize, Vec::new()),
            |(ok, mut ids), (answered, id)| async move {
                ids.extend(id);
                (ok + usize::from(answered), ids)
            },
        )
        .await
}

/// How many of `tasks` the store still holds.
async fn still_stored(runtime: &Runtime, tasks: &[TaskId]) -> usize {
    stream::iter(tasks)
        .filter(|id| {
            let id = (*id).clone();
            async move { runtime.get_task(&id, Some(0)).await.is_ok() }
        })
        .count()
        .await
}

fn rate(count: usize, elapsed: Duration) -> String {
    format!("{:.0}/s", count as f64 / elapsed.as_secs_f64().max(1e-9))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args().unwrap_or_else(|problem| {
        eprintln!("{problem}");
        std::process::exit(2);
    });
    let n = args.sessions;
    let k = args.concurrency;
    println!("many_agents: {n} sessions, at most {k} sends in flight");

    let rss_start = rss();
    println!("rss at start:               {}", mib(rss_start));

    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("pong"), |_session| Pong)
        // At most `k` sends are in flight, so limits of `k` never make one wait; the
        // queues are there for safety, not for this load.
        .global_limit(k)
        .global_queue(k)
        .agent_limit(k)
        .agent_queue(k)
        // Nothing is passivated behind our back while we measure (neither for idle
        // time nor to keep only the warm ones); we passivate explicitly at the end.
        .idle_timeout(Duration::from_secs(3600))
        .warm_sessions(n)
        .build()
        .await?;

    // Spawn every session ahead of its message.
    let clock = Instant::now();
    let mut contexts = Vec::with_capacity(n);
    for _ in 0..n {
        contexts.push(runtime.spawn_session("pong", None)?);
    }
    let spawned_in = clock.elapsed();
    let rss_spawned = rss();
    println!(
        "spawned {} sessions in {spawned_in:.2?} ({})",
        runtime.supervisor().session_count(),
        rate(n, spawned_in)
    );
    println!(
        "rss with idle sessions:     {} ({})",
        mib(rss_spawned),
        per_session(rss_start, rss_spawned, n)
    );

    // One message to each, `k` at a time, each send waiting for its answer.
    let clock = Instant::now();
    let (answered, tasks) = ping_all(&runtime, &contexts, k).await;
    let answered_in = clock.elapsed();
    let rss_answered = rss();
    let stored = still_stored(&runtime, &tasks).await;
    println!(
        "{answered} of {n} answered correctly in {answered_in:.2?} ({} round trips)",
        rate(answered, answered_in)
    );
    println!(
        "rss after the answers:      {} ({}, with {stored} of the {} tasks still in the store)",
        mib(rss_answered),
        per_session(rss_start, rss_answered, n),
        tasks.len()
    );
    println!(
        "peak rss:                   {}",
        mib(proc_status_bytes("VmHWM"))
    );

    // Passivate: every session is idle now, so all of them stop.
    let clock = Instant::now();
    runtime.supervisor().passivate_all_idle();
    let deadline = Instant::now() + Duration::from_secs(30);
    while runtime.supervisor().session_count() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let passivated_in = clock.elapsed();
    // The registry forgets a session at once; give the actors a moment to finish
    // stopping and free their memory before measuring.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_passivated = rss();
    println!(
        "passivated in {passivated_in:.2?}; {} sessions left",
        runtime.supervisor().session_count()
    );
    println!(
        "rss after passivation:      {} ({} still held, the {stored} stored tasks among it)",
        mib(rss_passivated),
        per_session(rss_start, rss_passivated, n)
    );

    // Re-activate: one more message to each passivated session. A fresh actor starts
    // for each, reusing the memory the passivated ones gave back to the allocator, so
    // RSS grows by little more than the tasks the store takes in.
    let clock = Instant::now();
    let (reanswered, _) = ping_all(&runtime, &contexts, k).await;
    let reanswered_in = clock.elapsed();
    let rss_reactivated = rss();
    println!(
        "re-activated: {reanswered} of {n} answered again in {reanswered_in:.2?} ({} round trips)",
        rate(reanswered, reanswered_in)
    );
    println!(
        "rss after re-activation:    {} (+{} since passivation)",
        mib(rss_reactivated),
        per_session(rss_passivated, rss_reactivated, n)
    );

    runtime.shutdown(Duration::from_secs(5)).await;
    let failed = (n - answered) + (n - reanswered);
    if failed > 0 {
        return Err(format!("{failed} sends were not answered correctly").into());
    }
    Ok(())
}
