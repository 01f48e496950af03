//! The smallest agentyard program: one agent type that echoes what it is sent, one
//! message to it, and the reply printed.
//!
//! Run it with:
//!
//! ```text
//! cargo run --release -p agentyard-examples --example echo_agent
//! ```
//!
//! It prints the task's final state and the agent's reply, then shuts the runtime
//! down and exits 0.

use std::time::Duration;

use agentyard::{Agent, AgentDescriptor, AgentError, Message, Runtime, TaskContext};

/// Replies with the text it was sent.
struct Echo;

impl Agent for Echo {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(format!("echo: {text}"));
        Ok(())
    }
}

#[tokio::main]
async fn main() -> agentyard::Result<()> {
    // The factory runs once per session (agent type + conversation); Echo has no state.
    let runtime = Runtime::builder()
        .agent(
            AgentDescriptor::new("echo").description("Replies with what it is sent"),
            |_session| Echo,
        )
        .build()
        .await?;

    let done = runtime
        .send_and_wait("echo", Message::user_text("hello, agentyard"))
        .await?;
    let reply = done
        .task
        .status
        .message
        .as_deref()
        .map(Message::text)
        .unwrap_or_default();
    println!("task {} is {}", done.task.id, done.task.status.state);
    println!("reply: {reply}");

    runtime.shutdown(Duration::from_secs(1)).await;
    Ok(())
}
