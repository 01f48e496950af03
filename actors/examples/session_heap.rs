//! What an idle session holds on the heap, against a raw ractor actor: N sessions
//! spawned and left idle (`Supervisor::spawn_session`), or N raw actors of the
//! benchmark's echo kind, then the live heap they added, in bytes and allocations
//! per session. Exact where the benchmark's `sessions` suite reads resident memory
//! (which also counts the allocator's size classes and the holes it leaves; see
//! `session_rss` for that, on the same spawns); the allocation sites are in the
//! `dhat-heap.json` it leaves, at the end of the run (`eb`/`ebk` per site):
//!
//! ```sh
//! cargo build --release -p agentyard-actors --example session_heap
//! target/release/examples/session_heap sessions 10000
//! target/release/examples/session_heap raw 10000
//! ```
//!
//! Two more arguments spawn from several tasks at once, each yielding every so many
//! spawns (see `support/idle_sessions.rs`).

#[path = "support/idle_sessions.rs"]
mod idle_sessions;

use idle_sessions::{Plan, SETTLE};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let plan = Plan::from_args()?;
    let (bytes, blocks) = Plan::runtime()?.block_on(async {
        let supervisor = plan.prepare().await?;
        let profiler = dhat::Profiler::new_heap();
        let before = dhat::HeapStats::get();
        let kept = plan.spawn(supervisor).await?;
        tokio::time::sleep(SETTLE).await;
        let after = dhat::HeapStats::get();
        drop(profiler);
        // Left to the process's end: dropping them would be counted by nothing, and
        // stopping a hundred thousand actors is not what is measured.
        std::mem::forget(kept);
        Ok::<_, String>((
            after.curr_bytes - before.curr_bytes,
            after.curr_blocks - before.curr_blocks,
        ))
    })?;
    #[expect(clippy::cast_precision_loss, reason = "counts of a few million")]
    let per = |n: usize| n as f64 / plan.count as f64;
    println!(
        "{}: {:.1} bytes in {:.2} allocations a session, live",
        plan.side,
        per(bytes),
        per(blocks)
    );
    Ok(())
}
