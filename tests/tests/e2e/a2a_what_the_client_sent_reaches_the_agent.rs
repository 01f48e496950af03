//! What an A2A client sends reaches the agent, over HTTP: `params.metadata`, the
//! message's own `metadata` and the activated extension URIs are in its
//! `TaskContext`, so a custom extension an operator declares on the card is
//! something an agent can act on.

use agentyard::a2a::AgentExtension;
use agentyard::edge::AgentSettings;
use agentyard::handoff::HANDOFF_EXTENSION_URI;
use agentyard::{Agent, AgentDescriptor, AgentError, TaskContext};
use agentyard_tests::http::TestEdge;
use serde_json::{Value, json};

/// The operator's own extension: "answer in capitals".
const SHOUT: &str = "https://example.com/ext/shout/v1";

/// Replies `hi {name}` (the name from `params.metadata`), in capitals when the
/// shout extension is active, and lists what else it saw.
struct Greeter;

impl Agent for Greeter {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let name = ctx
            .request_metadata()
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("stranger")
            .to_owned();
        let mood = ctx
            .message()
            .metadata
            .as_ref()
            .and_then(|m| m.get("mood"))
            .and_then(Value::as_str)
            .unwrap_or("plain")
            .to_owned();
        let mut reply = format!("hi {name} ({mood}) [{}]", ctx.extensions().join(","));
        if ctx.has_extension(SHOUT) {
            reply = reply.to_uppercase();
        }
        ctx.reply_text(reply);
        Ok(())
    }
}

async fn edge() -> TestEdge {
    let shout = AgentSettings::default().extension(AgentExtension {
        uri: SHOUT.to_owned(),
        description: Some("answers in capitals".to_owned()),
        required: Some(false),
        params: None,
    });
    TestEdge::start_custom(
        TestEdge::config().agent_settings("greeter", shout),
        |builder| builder.agent(AgentDescriptor::new("greeter").exposed(true), |_| Greeter),
    )
    .await
}

fn params() -> Value {
    json!({
        "message": {
            "kind": "message",
            "messageId": "m-greet",
            "role": "user",
            "parts": [{"kind": "text", "text": "hello"}],
            "metadata": {"mood": "cheerful"},
        },
        "metadata": {"name": "Ada"},
    })
}

fn reply_text(response: &Value) -> &str {
    response["result"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no reply text in {response}"))
}

#[tokio::test]
async fn metadata_of_the_request_and_the_message_reach_the_agent() {
    let edge = edge().await;
    let response = edge.rpc("greeter", "message/send", params()).await;
    assert_eq!(reply_text(&response), "hi Ada (cheerful) []");
    edge.stop().await;
}

#[tokio::test]
async fn an_activated_custom_extension_changes_the_answer() {
    let edge = edge().await;
    let requested = format!("{SHOUT}, {HANDOFF_EXTENSION_URI}, https://example.com/ext/unknown/v1");
    let (status, headers, response) = edge
        .rpc_with(
            "greeter",
            "message/send",
            params(),
            &[("X-A2A-Extensions", requested.as_str())],
        )
        .await;
    assert_eq!(status, 200, "{response}");
    // Only declared extensions are activated, in the client's order.
    assert_eq!(
        reply_text(&response),
        format!("hi Ada (cheerful) [{SHOUT},{HANDOFF_EXTENSION_URI}]").to_uppercase()
    );
    let echoed = headers
        .get("x-a2a-extensions")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(echoed.contains(SHOUT), "{echoed}");

    // Over a stream too.
    let events = edge.sse("greeter", "message/stream", params()).await;
    let last = events.last().expect("a final event");
    assert_eq!(
        last["result"]["status"]["message"]["parts"][0]["text"],
        "hi Ada (cheerful) []"
    );
    edge.stop().await;
}
