//! Only agents marked exposed are reachable over HTTP: the others have no card and no
//! endpoint (HTTP 404), and each exposed agent's card points at a URL that really
//! serves it.

use agentyard::edge::EdgeConfig;
use agentyard::handoff::HANDOFF_EXTENSION_URI;
use agentyard_tests::http::{TestEdge, text_message};
use serde_json::{Value, json};

async fn get(edge: &TestEdge, path: &str) -> (u16, Value) {
    let response = edge
        .http()
        .get(format!("{}{path}", edge.base_url()))
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("a body");
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, body)
}

#[tokio::test]
async fn an_agent_that_is_not_exposed_does_not_exist_from_outside() {
    let edge = TestEdge::start().await;
    for path in [
        "/agents/internal/.well-known/agent-card.json",
        "/agents/internal/.well-known/agent.json",
        "/agents/ghost/.well-known/agent-card.json",
    ] {
        let (status, _) = get(&edge, path).await;
        assert_eq!(status, 404, "{path}");
    }
    for agent in ["internal", "ghost"] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
                          "params": {"message": text_message("hi")}});
        let (status, _, response) = edge
            .post_raw(&format!("/agents/{agent}"), body.to_string(), &[])
            .await;
        assert_eq!(status, 404, "{agent}");
        assert!(response["error"]["message"].is_string(), "{response}");
    }
    let (status, cards) = get(&edge, "/agents").await;
    assert_eq!(status, 200);
    let mut names: Vec<&str> = cards
        .as_array()
        .expect("an array of cards")
        .iter()
        .filter_map(|card| card["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["ask", "chunks", "echo", "gated", "probe", "texty"]);
    edge.stop().await;
}

#[tokio::test]
async fn each_card_points_at_a_url_that_serves_the_agent() {
    let edge = TestEdge::start().await;
    let (status, card) = get(&edge, "/agents/echo/.well-known/agent-card.json").await;
    assert_eq!(status, 200);
    assert_eq!(card["protocolVersion"], "0.3.0");
    assert_eq!(card["preferredTransport"], "JSONRPC");
    assert_eq!(card["name"], "echo");
    assert_eq!(card["description"], "the test agent `echo`");
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    assert_eq!(
        card["capabilities"]["extensions"][0]["uri"],
        HANDOFF_EXTENSION_URI
    );
    let url = card["url"].as_str().expect("a url");
    assert_eq!(url, format!("{}/agents/echo", edge.base_url()));

    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "message/send",
                      "params": {"message": text_message("via the card")}});
    let bytes = edge
        .http()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("the card's url answers")
        .bytes()
        .await
        .expect("a body");
    let response: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(
        response["result"]["status"]["state"], "completed",
        "{response}"
    );
    edge.stop().await;
}

#[tokio::test]
async fn the_root_serves_the_default_agent() {
    let edge = TestEdge::start_with(TestEdge::config().default_agent("echo")).await;
    for path in ["/.well-known/agent-card.json", "/.well-known/agent.json"] {
        let (status, card) = get(&edge, path).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(card["name"], "echo");
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
                      "params": {"message": text_message("root")}});
    let (status, _, response) = edge.post_raw("/", body.to_string(), &[]).await;
    assert_eq!(status, 200);
    assert_eq!(
        response["result"]["status"]["message"]["parts"][0]["text"],
        "echo: root"
    );
    edge.stop().await;
}

#[tokio::test]
async fn without_a_default_agent_the_root_has_no_card() {
    let edge = TestEdge::start().await;
    let (status, _) = get(&edge, "/.well-known/agent-card.json").await;
    assert_eq!(status, 404);
    edge.stop().await;
}

#[tokio::test]
async fn the_edge_can_serve_a_subset_of_the_exposed_agents() {
    let edge = TestEdge::start_with(TestEdge::config().agents(["echo", "probe"])).await;
    let (status, _) = get(&edge, "/agents/gated/.well-known/agent-card.json").await;
    assert_eq!(status, 404);
    let (status, cards) = get(&edge, "/agents").await;
    assert_eq!(status, 200);
    assert_eq!(cards.as_array().map(Vec::len), Some(2));
    edge.stop().await;
}

#[tokio::test]
async fn a_public_url_behind_a_proxy_is_what_the_cards_say() {
    let config = TestEdge::config().public_url("https://agents.example.com/base/");
    let edge = TestEdge::start_with(config).await;
    let (_, card) = get(&edge, "/agents/echo/.well-known/agent-card.json").await;
    assert_eq!(card["url"], "https://agents.example.com/base/agents/echo");
    edge.stop().await;
}

#[tokio::test]
async fn a_configuration_naming_a_hidden_agent_fails_at_start_naming_the_key() {
    let runtime = agentyard::Runtime::builder()
        .agent(agentyard::AgentDescriptor::new("hidden"), |_| Quiet)
        .build()
        .await
        .expect("runtime");
    let error = agentyard::edge::Edge::start(
        runtime.supervisor().clone(),
        EdgeConfig::default().default_agent("hidden"),
    )
    .await
    .expect_err("a hidden default agent cannot start");
    let text = error.to_string();
    assert!(
        text.contains("default_agent") && text.contains("hidden"),
        "{text}"
    );
    runtime.shutdown(std::time::Duration::from_secs(1)).await;
}

struct Quiet;

impl agentyard::Agent for Quiet {
    async fn handle(&self, _: &mut agentyard::TaskContext) -> Result<(), agentyard::AgentError> {
        Ok(())
    }
}
