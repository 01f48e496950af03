//! What sharing one supervisor across cores costs a send: N senders, each its own
//! tokio task and conversation, make blocking sends to an echo agent (as `send_loop`
//! does, one in four with an idempotency key) on a runtime with a worker per core,
//! for a few seconds; then the sends per second and the process's CPU per send.
//!
//! ```sh
//! cargo build --release -p agentyard-actors --example send_threads
//! target/release/examples/send_threads 1 3            # one sender: one core's cost
//! target/release/examples/send_threads 2 3            # two senders, one supervisor
//! target/release/examples/send_threads 2 3 separate   # each sender its own supervisor
//! target/release/examples/send_threads 2 3 store      # a supervisor each, one store
//! ```
//!
//! A send that holds every permit runs its turn in its caller's task without waiting
//! (the in-memory store answers at once), so each sender keeps one core busy. With one
//! supervisor the cores then share its maps, counters and reference counts, and every
//! cache line one core writes the other must fetch back; with a supervisor each, they
//! share nothing of the runtime. The CPU per send of the three runs tells that cost
//! apart from the machine's (`docs/benchmarks.md`, 2026-11-30, seventeenth entry); a
//! supervisor each on one in-memory store tells the store's part of it from the
//! supervisor's own (2026-12-01, fourth entry). tokio's `TOKIO_WORKER_THREADS`
//! sets the number of workers (one worker: the senders share no core).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agentyard_transport::ContextId;

// The sends, shared with `send_loop` and the allocation budget test.
#[path = "support/echo_sends.rs"]
mod echo_sends;

// The allocator `agentyard serve` runs with: how it frees memory another thread
// allocated is part of what is measured.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let senders: u64 = match args.next() {
        Some(n) => n
            .parse()
            .map_err(|e| format!("the number of senders, `{n}`: {e}"))?,
        None => 2,
    };
    let seconds: u64 = match args.next() {
        Some(n) => n
            .parse()
            .map_err(|e| format!("the number of seconds, `{n}`: {e}"))?,
        None => 3,
    };
    let sharing = match args.next().as_deref() {
        None | Some("shared") => Sharing::Everything,
        Some("separate") => Sharing::Nothing,
        Some("store") => Sharing::Store,
        Some(other) => {
            return Err(format!("`{other}`: say `shared`, `separate` or `store`").into());
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (sends, elapsed, cpu) = runtime.block_on(run(senders, seconds, sharing))?;
    let per_second = sends as f64 / elapsed.as_secs_f64();
    let cpu_per_send = cpu.map_or_else(
        || String::from("unknown"),
        |cpu| format!("{:.2} µs", cpu.as_secs_f64() * 1e6 / sends.max(1) as f64),
    );
    let (supervisors, stores) = match sharing {
        Sharing::Everything => (1, 1),
        Sharing::Store => (senders, 1),
        Sharing::Nothing => (senders, senders),
    };
    println!(
        "{senders} sender(s), {supervisors} supervisor(s), {stores} store(s): {sends} sends, {per_second:.0}/s, CPU per send {cpu_per_send}"
    );
    Ok(())
}

/// What the senders share.
#[derive(Clone, Copy)]
enum Sharing {
    /// One supervisor and its store.
    Everything,
    /// A supervisor each, on one store.
    Store,
    /// A supervisor and a store each.
    Nothing,
}

/// Runs the senders for `seconds`; the sends made, the time they took and the CPU
/// the process used meanwhile.
async fn run(
    senders: u64,
    seconds: u64,
    sharing: Sharing,
) -> Result<(u64, Duration, Option<Duration>), Box<dyn std::error::Error>> {
    // As the benchmark and `agentyard serve` run: with a subscriber, whose level
    // leaves the send path's spans off.
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_writer(std::io::stderr)
        .init();
    let store = Arc::new(agentyard_actors::InMemoryTaskStore::new());
    // The one supervisor of `shared`; the other modes start one per sender below.
    let shared = match sharing {
        Sharing::Everything => Some(echo_sends::start_on(Arc::clone(&store)).await?),
        Sharing::Store | Sharing::Nothing => None,
    };
    let sends = Arc::new(AtomicU64::new(0));
    // Every sender starts on one signal, with one deadline: a sender's loop never
    // waits, so one spawned later would otherwise start after the others ended.
    let (go, ready) = tokio::sync::watch::channel(None::<Instant>);
    let mut tasks = tokio::task::JoinSet::new();
    for sender in 0..senders {
        let supervisor = match (&shared, sharing) {
            (Some(shared), _) => shared.clone(),
            (None, Sharing::Store) => echo_sends::start_on(Arc::clone(&store)).await?,
            (None, _) => echo_sends::start().await?,
        };
        let sends = Arc::clone(&sends);
        let mut ready = ready.clone();
        tasks.spawn(async move {
            let deadline = ready.wait_for(Option::is_some).await.ok().and_then(|d| *d);
            let Some(deadline) = deadline else {
                return Ok(());
            };
            let conversation = ContextId::new(format!("send-threads-{sender}"));
            // Keys unique across senders: a repeat would be answered from the cache.
            let mut n = sender << 40;
            while Instant::now() < deadline {
                supervisor
                    .send_and_wait(echo_sends::request(&conversation, n))
                    .await?;
                n += 1;
                sends.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<_, agentyard_actors::Error>(())
        });
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let cpu_before = process_cpu();
    let start = Instant::now();
    go.send_replace(Some(start + Duration::from_secs(seconds)));
    while let Some(joined) = tasks.join_next().await {
        joined??;
    }
    let elapsed = start.elapsed();
    let cpu = process_cpu()
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    Ok((sends.load(Ordering::Relaxed), elapsed, cpu))
}

/// The CPU time (user and system, all threads) the process has used, from
/// `/proc/self/stat` (in ticks of 10 ms); `None` where there is no such file.
fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces; the fields after it do not.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are the 14th and 15th fields, the 12th and 13th after the name.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}
