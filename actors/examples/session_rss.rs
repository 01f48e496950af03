//! What an idle session holds in resident memory, against a raw ractor actor, with
//! the allocator `agentyard serve` and the benchmark run with (jemalloc): the same
//! spawns as `session_heap` (see `support/idle_sessions.rs`), then the growth of the
//! process's `VmRSS` per session. Where `session_heap` counts the bytes asked for,
//! this counts what they cost: the allocator's size classes, and the holes a storm of
//! spawns leaves in its pages.
//!
//! ```sh
//! cargo build --release -p agentyard-actors --example session_rss
//! target/release/examples/session_rss sessions 100000         # spawned one after another
//! target/release/examples/session_rss raw 100000
//! target/release/examples/session_rss sessions 100000 64      # from 64 tasks at once, as the suite does
//! target/release/examples/session_rss sessions 100000 64 16   # each yielding every 16 spawns
//! ```

#[path = "support/idle_sessions.rs"]
mod idle_sessions;

use idle_sessions::{Plan, SETTLE};

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The process's resident set size now, in bytes.
fn resident() -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("reading /proc/self/status (this counts Linux's VmRSS): {e}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .ok_or_else(|| String::from("no VmRSS line in /proc/self/status"))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let plan = Plan::from_args()?;
    let bytes = Plan::runtime()?.block_on(async {
        let supervisor = plan.prepare().await?;
        let before = resident()?;
        let kept = plan.spawn(supervisor).await?;
        tokio::time::sleep(SETTLE).await;
        let after = resident()?;
        std::mem::forget(kept);
        Ok::<_, String>(after.saturating_sub(before))
    })?;
    #[expect(clippy::cast_precision_loss, reason = "counts of a few million")]
    let per = bytes as f64 / plan.count as f64;
    println!("{}: {per:.1} bytes resident a session", plan.side);
    Ok(())
}
