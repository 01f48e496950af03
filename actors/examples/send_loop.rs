//! The work of one blocking send, without the noise of a shared machine: N
//! `send_and_wait`s to an echo agent, one after another on one thread, through the
//! whole send path with the in-memory store (one send in four with an idempotency
//! key, as the benchmark's supervisor suite sends). Counted by an instruction
//! counter, two runs give a send's instructions, which do not vary from run to run
//! as times do:
//!
//! ```sh
//! cargo build --release -p agentyard-actors --example send_loop
//! for n in 12000 16000; do
//!   valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
//!     target/release/examples/send_loop $n 2>&1 | grep 'I *refs'
//! done
//! # (refs at 16000 - refs at 12000) / 4000 = instructions per send
//! ```
//!
//! Both counts are past the 10,000 ended tasks the store keeps, so each send also
//! forgets the oldest one, as a server's do once it has been up a while.

use std::sync::Arc;

use agentyard_actors::agent::{AgentDescriptor, Registration};
use agentyard_actors::{
    Agent, AgentError, InMemoryTaskStore, SendRequest, Supervisor, SupervisorConfig, TaskContext,
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

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sends: u64 = match std::env::args().nth(1) {
        Some(n) => n
            .parse()
            .map_err(|e| format!("the number of sends, `{n}`: {e}"))?,
        None => 16_000,
    };
    // As the benchmark and `agentyard serve` run: with a subscriber, whose level
    // (warnings, the benchmark's) leaves the send path's spans off. Without one,
    // `tracing` would hand every span to `log` and count work no server does.
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_writer(std::io::stderr)
        .init();
    let supervisor = Supervisor::start(
        SupervisorConfig::default(),
        vec![Registration::new(AgentDescriptor::new("echo"), |_| Echo)],
        Arc::new(AllowAll),
        Arc::new(InMemoryTaskStore::new()),
    )
    .await?;
    let conversation = ContextId::new("send-loop");
    for n in 0..sends {
        let message = Message::user_text("ping").with_context_id(conversation.clone());
        let mut request = SendRequest::new("echo", message).from("client");
        if n % 4 == 0 {
            request = request.idempotency_key(format!("send-{n}"));
        }
        supervisor.send_and_wait(request).await?;
    }
    Ok(())
}
