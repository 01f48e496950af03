//! The sends `send_loop` makes and `tests/allocations.rs` counts (and `send_threads`
//! makes on several cores), in one place so that the allocation budget is held on
//! exactly what the instruction count measures:
//! blocking sends to an echo agent in one conversation, one in four with an
//! idempotency key (as the benchmark's supervisor suite sends), with the in-memory
//! store. (Not an example of its own: Cargo makes examples only of the files directly
//! in `examples/` and of directories with a `main.rs`.)

use std::sync::Arc;

use agentyard_actors::agent::{AgentDescriptor, Registration};
use agentyard_actors::{
    Agent, AgentError, Error, InMemoryTaskStore, SendRequest, Supervisor, SupervisorConfig,
    TaskContext,
};
use agentyard_policy::AllowAll;
use agentyard_transport::ContextId;
use agentyard_transport::a2a::Message;

/// Replies with the text it was sent.
struct Echo;

impl Agent for Echo {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(text);
        Ok(())
    }
}

/// A supervisor with the echo agent and an in-memory store of its own.
pub(crate) async fn start() -> Result<Supervisor, Error> {
    start_on(Arc::new(InMemoryTaskStore::new())).await
}

/// A supervisor with the echo agent on `store`, which other supervisors may share.
pub(crate) async fn start_on(store: Arc<InMemoryTaskStore>) -> Result<Supervisor, Error> {
    Supervisor::start(
        SupervisorConfig::default(),
        vec![Registration::new(AgentDescriptor::new("echo"), |_| Echo)],
        Arc::new(AllowAll),
        store,
    )
    .await
}

/// The `n`th send to the echo agent in `conversation`.
pub(crate) fn request(conversation: &ContextId, n: u64) -> SendRequest {
    let message = Message::user_text("ping").with_context_id(conversation.clone());
    let request = SendRequest::new("echo", message).from("client");
    if n.is_multiple_of(4) {
        request.idempotency_key(format!("send-{n}"))
    } else {
        request
    }
}
