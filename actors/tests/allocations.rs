//! A blocking send's allocations, counted, against a budget: the send path's
//! allocations were most of what its profile left (the allocator's own work, the
//! frees of cold memory), and a change that adds some should say so here rather than
//! go unseen. A test binary of its own, as the counting allocator is global.
//!
//! The count is of the whole loop as `examples/send_loop.rs` runs it: the caller's
//! message and request too, one send in four with an idempotency key, to an echo
//! agent, with the in-memory store.

use std::sync::Arc;

use agentyard_actors::agent::{AgentDescriptor, Registration};
use agentyard_actors::{
    Agent, AgentError, InMemoryTaskStore, SendRequest, Supervisor, SupervisorConfig, TaskContext,
};
use agentyard_policy::AllowAll;
use agentyard_transport::ContextId;
use agentyard_transport::a2a::{Message, TaskState};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// Allocations a send may make, the caller's included: what it makes now (33.08 on
/// 2026-11-28, the tables' growth over the counted sends in the fraction), with room
/// for less than one more.
const BUDGET: f64 = 33.5;

/// Sends before the count: the session, the store's tables and the conversation's
/// list grow to their working size in these.
const WARM_UP: u64 = 300;

/// Sends counted.
const COUNTED: u64 = 1_000;

/// Replies with the text it was sent.
struct Echo;

impl Agent for Echo {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(text);
        Ok(())
    }
}

#[test]
fn a_blocking_send_stays_within_its_allocation_budget() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let supervisor = Supervisor::start(
            SupervisorConfig::default(),
            vec![Registration::new(AgentDescriptor::new("echo"), |_| Echo)],
            Arc::new(AllowAll),
            Arc::new(InMemoryTaskStore::new()),
        )
        .await
        .expect("the supervisor starts");
        let conversation = ContextId::new("allocations");
        let send = |n: u64| {
            let message = Message::user_text("ping").with_context_id(conversation.clone());
            let mut request = SendRequest::new("echo", message).from("client");
            if n.is_multiple_of(4) {
                request = request.idempotency_key(format!("send-{n}"));
            }
            supervisor.send_and_wait(request)
        };
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
