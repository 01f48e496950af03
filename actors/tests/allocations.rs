//! A blocking send's allocations, counted, against a budget: the send path's
//! allocations were most of what its profile left (the allocator's own work, the
//! frees of cold memory), and a change that adds some should say so here rather than
//! go unseen. A test binary of its own, as the counting allocator is global.
//!
//! The count is of the whole loop as `examples/send_loop.rs` runs it (the sends are
//! the same code, `examples/support/echo_sends.rs`): the caller's message and request
//! too, one send in four with an idempotency key, to an echo agent, with the
//! in-memory store.

use agentyard_transport::ContextId;
use agentyard_transport::a2a::TaskState;

// The sends `examples/send_loop.rs` makes, and whose instructions it counts.
#[path = "../examples/support/echo_sends.rs"]
mod echo_sends;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Allocations a send may make, the caller's included: what it makes now (25.07 on
/// 2026-11-29; the tables' growth over the counted sends is the fraction), with room
/// for less than one more. `docs/benchmarks.md` (Issue 13) says what each cut was, and
/// what the one added that day is for: the settled task handed to its waiter, boxed
/// (moved whole, it cost more instructions than the allocation).
const BUDGET: f64 = 25.5;

/// Sends before the count: the session, the store's tables and the conversation's
/// list grow to their working size in these.
const WARM_UP: u64 = 300;

/// Sends counted.
const COUNTED: u64 = 1_000;

#[test]
fn a_blocking_send_stays_within_its_allocation_budget() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let supervisor = echo_sends::start().await.expect("the supervisor starts");
        let conversation = ContextId::new("allocations");
        let send = |n: u64| supervisor.send_and_wait(echo_sends::request(&conversation, n));
        for n in 0..WARM_UP {
            send(n).await.expect("a warm-up send");
        }
        let before = dhat::HeapStats::get().total_blocks;
        for n in WARM_UP..WARM_UP + COUNTED {
            let settled = send(n).await.expect("a counted send");
            assert_eq!(settled.task.status.state, TaskState::Completed);
        }
        let made = dhat::HeapStats::get().total_blocks - before;
        #[expect(
            clippy::cast_precision_loss,
            reason = "a count of a few tens of thousands"
        )]
        let per_send = made as f64 / COUNTED as f64;
        assert!(
            per_send <= BUDGET,
            "a blocking send made {per_send:.2} allocations, over its budget of {BUDGET}: \
             find the new ones (`valgrind --tool=dhat` on examples/send_loop.rs) and \
             remove them, or raise the budget here and say why"
        );
        supervisor.shutdown(std::time::Duration::from_secs(5)).await;
    });
}
