//! Your own agent over HTTP: one agent type of yours, served by the runtime's HTTP
//! edge as an A2A agent with a card and a skill, reached by the typed A2A client, and
//! seen working in `/metrics`.
//!
//! Run it with:
//!
//! ```text
//! cargo run --release -p agentyard-examples --example serve_my_agent
//! ```
//!
//! It serves `shouter` on an ephemeral port of 127.0.0.1, prints its card URL, sends
//! it a message through `agentyard::client::A2aClient`, prints the reply and the
//! agent's send counter from `/metrics`, then stops the server and the runtime. Pass
//! `-- --stay` to keep serving until Ctrl-C, and try it with any A2A client, e.g.:
//!
//! ```text
//! curl -s http://127.0.0.1:PORT/agents/shouter -H 'content-type: application/json' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hello"}]}}}'
//! ```

use std::time::Duration;

use agentyard::a2a::{MessageSendParams, SendMessageResult};
use agentyard::client::A2aClient;
use agentyard::{
    Agent, AgentDescriptor, AgentError, AgentSkill, HttpConfig, Message, Runtime, TaskContext,
};

/// Answers with what it was sent, in capitals.
struct Shouter;

impl Agent for Shouter {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(text.to_uppercase());
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let stay = std::env::args().any(|arg| arg == "--stay");
    let runtime = Runtime::builder()
        .agent(
            AgentDescriptor::new("shouter")
                .description("Says what you said, louder")
                .skill(AgentSkill::new(
                    "shout",
                    "Shout",
                    "Repeats the text in capitals",
                ))
                .expose(),
            |_session| Shouter,
        )
        .build()
        .await?;
    let server = runtime.serve(HttpConfig::default()).await?;
    println!("card: {}", server.card_url("shouter"));

    let client = A2aClient::new(&server.card_url("shouter")).await?;
    let answer = client
        .send_message(MessageSendParams::new(Message::user_text(
            "hello, agentyard",
        )))
        .await?;
    let reply = match answer {
        SendMessageResult::Task(task) => task.status.message.map(|m| m.text()),
        SendMessageResult::Message(message) => Some(message.text()),
    };
    println!("reply: {}", reply.unwrap_or_default());

    let metrics = reqwest::get(server.metrics_url()).await?.text().await?;
    for line in metrics.lines().filter(|line| {
        line.starts_with("agentyard_sends_total{agent=\"shouter\",entry_point=\"http\"")
            && !line.ends_with(" 0")
    }) {
        println!("{line}");
    }

    if stay {
        println!("serving at {}; Ctrl-C stops", server.base_url());
        tokio::signal::ctrl_c().await?;
    }
    server.stop().await;
    runtime.shutdown(Duration::from_secs(1)).await;
    Ok(())
}
