//! The card for both versions over a real socket: the hybrid card without a version
//! header (1.0 interfaces first, the 0.3 fields kept), the pure 1.0 card for
//! `A2A-Version: 1.0`, caching headers and 304s, and interface URLs with a
//! trailing slash.

use agentyard::a2a::AgentSkill;
use agentyard::client::A2aClient;
use agentyard::edge::{AgentSettings, EdgeAuth};
use agentyard_tests::http::{TestEdge, text_message};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn get_card(edge: &TestEdge, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = edge.http().get(edge.card_url("echo"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("the server answers")
}

fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

async fn secured() -> TestEdge {
    let settings = AgentSettings::default().extended_skills(vec![AgentSkill::new(
        "admin",
        "Admin",
        "Operator-only tools",
    )]);
    TestEdge::start_with(
        TestEdge::config()
            .auth(EdgeAuth::default().bearer_token("t", "alice"))
            .agent_settings("echo", settings),
    )
    .await
}

#[tokio::test]
async fn without_a_header_the_card_is_the_hybrid_both_clients_read() {
    let edge = secured().await;
    let response = get_card(&edge, &[]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(header(&response, "vary"), "A2A-Version");
    let card: Value = response.json().await.expect("JSON");
    let interfaces = card["supportedInterfaces"].as_array().expect("interfaces");
    // Each binding served (JSON-RPC, then HTTP+JSON: the default order) in 1.0,
    // then 0.3, all at the agent's base URL.
    let listed: Vec<(&str, &str)> = interfaces
        .iter()
        .map(|i| {
            (
                i["protocolBinding"].as_str().unwrap_or_default(),
                i["protocolVersion"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("JSONRPC", "1.0"),
            ("JSONRPC", "0.3"),
            ("HTTP+JSON", "1.0"),
            ("HTTP+JSON", "0.3")
        ],
        "{card}"
    );
    assert!(interfaces.iter().all(|i| i["url"] == interfaces[0]["url"]));
    // The 0.3 fields are kept beside the 1.0 ones.
    assert_eq!(card["url"], interfaces[0]["url"], "{card}");
    assert_eq!(card["preferredTransport"], "JSONRPC", "{card}");
    assert!(
        card["protocolVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("0.3")),
        "{card}"
    );
    assert_eq!(card["capabilities"]["extendedAgentCard"], true, "{card}");
    assert_eq!(card["supportsAuthenticatedExtendedCard"], true, "{card}");
    let bearer = &card["securitySchemes"]["bearer"];
    assert_eq!(bearer["type"], "http", "{card}");
    assert_eq!(
        bearer["httpAuthSecurityScheme"]["scheme"], "bearer",
        "{card}"
    );
    assert!(card.get("security").is_some() && card.get("securityRequirements").is_some());
    // agentyard's own (0.3) client reads it, and calls the agent.
    let resolved = A2aClient::resolve_card(&edge.agent_url("echo"))
        .await
        .expect("the hybrid reads as a 0.3 card");
    assert_eq!(resolved.name, "echo");
    edge.stop().await;
}

#[tokio::test]
async fn with_a_1_0_header_the_card_is_pure_1_0() {
    let edge = secured().await;
    let response = get_card(&edge, &[("A2A-Version", "1.0")]).await;
    assert_eq!(response.status(), 200);
    assert_eq!(header(&response, "vary"), "A2A-Version");
    let card: Value = response.json().await.expect("JSON");
    for legacy in [
        "url",
        "preferredTransport",
        "protocolVersion",
        "additionalInterfaces",
        "supportsAuthenticatedExtendedCard",
        "security",
    ] {
        assert!(card.get(legacy).is_none(), "`{legacy}` in {card}");
    }
    assert!(
        card["securitySchemes"]["bearer"].get("type").is_none(),
        "{card}"
    );
    assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(card["capabilities"]["extendedAgentCard"], true);
    edge.stop().await;
}

#[tokio::test]
async fn cards_are_cacheable_and_a_conditional_get_gets_304() {
    let edge = TestEdge::start().await;
    let first = get_card(&edge, &[]).await;
    let etag = header(&first, "etag");
    let modified = header(&first, "last-modified");
    assert!(etag.starts_with('"') && etag.len() > 2, "{etag:?}");
    assert!(modified.ends_with("GMT"), "{modified:?}");
    assert!(header(&first, "cache-control").contains("max-age"));

    let again = get_card(&edge, &[("if-none-match", etag.as_str())]).await;
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(header(&again, "etag"), etag);
    assert!(again.bytes().await.expect("a body").is_empty());
    let since = get_card(&edge, &[("if-modified-since", modified.as_str())]).await;
    assert_eq!(since.status(), StatusCode::NOT_MODIFIED);
    let stale = get_card(&edge, &[("if-none-match", "\"0000\"")]).await;
    assert_eq!(stale.status(), 200);
    assert_eq!(header(&stale, "etag"), etag, "the same card, the same tag");

    // Each variant has its own tag, and a different card a different one.
    let v1 = get_card(&edge, &[("A2A-Version", "1.0")]).await;
    assert_ne!(header(&v1, "etag"), etag);
    let v1_again = get_card(
        &edge,
        &[("A2A-Version", "1.0"), ("if-none-match", etag.as_str())],
    )
    .await;
    assert_eq!(
        v1_again.status(),
        200,
        "the hybrid's tag is not the 1.0 card's"
    );
    edge.stop().await;
    let other = secured().await;
    let changed = get_card(&other, &[]).await;
    assert_ne!(header(&changed, "etag"), etag, "the card changed");
    other.stop().await;
}

#[tokio::test]
async fn an_interface_url_works_with_a_trailing_slash() {
    let edge = TestEdge::start().await;
    for path in ["/agents/echo", "/agents/echo/"] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
                          "params": {"message": text_message("hi")}});
        let (status, _, answer) = edge.post_raw(path, body.to_string(), &[]).await;
        assert_eq!(status, 200, "{path}: {answer}");
        assert_eq!(answer["result"]["kind"], "task", "{path}: {answer}");
    }
    edge.stop().await;
}

#[tokio::test]
async fn the_strict_prefix_serves_the_pure_1_0_card_without_a_header() {
    let edge = secured().await;
    // (This edge has no default agent, so `/a2a-1.0/.well-known/...` is not served.)
    for path in ["/a2a-1.0/agents/echo/.well-known/agent-card.json"] {
        let response = edge
            .http()
            .get(format!("{}{path}", edge.base_url()))
            .send()
            .await
            .expect("the server answers");
        assert_eq!(response.status(), 200, "{path}");
        let card: Value = response.json().await.expect("JSON");
        assert_eq!(card["name"], "echo", "{path}: {card}");
        for legacy in ["url", "preferredTransport", "protocolVersion", "security"] {
            assert!(card.get(legacy).is_none(), "{path}: `{legacy}` in {card}");
        }
        // Its interfaces are the usual endpoints, 1.0 first.
        assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
        assert_eq!(
            card["supportedInterfaces"][0]["url"]
                .as_str()
                .map(|url| url.ends_with("/agents/echo")),
            Some(true),
            "{card}"
        );
    }
    edge.stop().await;
}
