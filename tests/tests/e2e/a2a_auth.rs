//! Security enforced, not just declared: the cards say what the server checks (API
//! key in a header, HTTP bearer), unauthenticated calls get 401 with
//! `WWW-Authenticate`, the caller's principal is who the runtime sees as the sender,
//! the extended card is for authenticated callers only, and oversized bodies get 413.

use agentyard::a2a::{AgentSkill, Message, MessageSendParams, SendMessageResult};
use agentyard::client::{A2aClient, ClientOptions};
use agentyard::edge::{AgentSettings, EdgeAuth};
use agentyard::{EventKind, Received};
use agentyard_tests::http::{TestEdge, text_message};
use serde_json::json;

const KEY: &str = "key-for-ci";
const TOKEN: &str = "token-for-alice";

async fn secured() -> TestEdge {
    let auth = EdgeAuth::default()
        .api_key(KEY, "ci-bot")
        .bearer_token(TOKEN, "alice");
    let settings = AgentSettings::default().extended_skills(vec![AgentSkill::new(
        "admin",
        "Admin",
        "Operator-only tools",
    )]);
    TestEdge::start_with(
        TestEdge::config()
            .auth(auth)
            .agent_settings("echo", settings),
    )
    .await
}

fn send() -> serde_json::Value {
    json!({"message": text_message("hi")})
}

#[tokio::test]
async fn the_card_declares_the_schemes_the_server_checks() {
    let edge = secured().await;
    let card = A2aClient::resolve_card(&edge.agent_url("echo"))
        .await
        .expect("cards stay public");
    let card = serde_json::to_value(card).expect("JSON");
    assert_eq!(card["securitySchemes"]["apiKey"]["type"], "apiKey");
    assert_eq!(card["securitySchemes"]["apiKey"]["in"], "header");
    assert_eq!(card["securitySchemes"]["apiKey"]["name"], "X-API-Key");
    assert_eq!(card["securitySchemes"]["bearer"]["type"], "http");
    assert_eq!(card["securitySchemes"]["bearer"]["scheme"], "bearer");
    assert_eq!(card["security"], json!([{"apiKey": []}, {"bearer": []}]));
    assert_eq!(card["supportsAuthenticatedExtendedCard"], true);
    edge.stop().await;
}

#[tokio::test]
async fn a_call_without_valid_credentials_gets_401_with_a_challenge() {
    let edge = secured().await;
    for headers in [
        vec![],
        vec![("x-api-key", "wrong")],
        vec![("authorization", "Bearer wrong")],
    ] {
        let (status, response_headers, body) = edge
            .rpc_with("echo", "message/send", send(), &headers)
            .await;
        assert_eq!(status, 401, "{headers:?}");
        let challenges: Vec<&str> = response_headers
            .get_all("www-authenticate")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        assert!(
            challenges.iter().any(|c| c.starts_with("Bearer")),
            "{challenges:?}"
        );
        assert!(body["error"]["message"].is_string(), "{body}");
    }
    edge.stop().await;
}

#[tokio::test]
async fn a_valid_key_or_token_gets_through_as_its_principal() {
    let edge = secured().await;
    let mut events = edge.runtime.subscribe();
    let (status, _, body) = edge
        .rpc_with("echo", "message/send", send(), &[("X-API-Key", KEY)])
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["result"]["status"]["state"], "completed", "{body}");
    let bearer = edge
        .client_with("echo", ClientOptions::new().bearer_token(TOKEN))
        .await;
    let answer = bearer
        .send_message(MessageSendParams::new(Message::user_text("hi")))
        .await
        .expect("authenticated");
    assert!(matches!(answer, SendMessageResult::Task(_)));
    let mut senders = Vec::new();
    while senders.len() < 2 {
        match events.recv().await {
            Some(Received::Event(event)) if event.kind == EventKind::SendInitiated => {
                assert_eq!(event.entry_point.as_str(), "http");
                senders.push(event.from.as_deref().unwrap_or_default().to_owned());
            }
            Some(_) => {}
            None => panic!("the bus closed"),
        }
    }
    assert_eq!(senders, ["ci-bot", "alice"]);
    edge.stop().await;
}

#[tokio::test]
async fn the_extended_card_is_only_for_authenticated_callers() {
    let edge = secured().await;
    let anonymous = edge.client("echo").await;
    let error = anonymous
        .authenticated_extended_card()
        .await
        .expect_err("no credentials");
    assert_eq!(error.status().map(|s| s.as_u16()), Some(401));
    let alice = edge
        .client_with("echo", ClientOptions::new().bearer_token(TOKEN))
        .await;
    let card = alice
        .authenticated_extended_card()
        .await
        .expect("authenticated");
    assert!(card.skills.iter().any(|s| s.id == "admin"));
    let public = A2aClient::resolve_card(&edge.agent_url("echo"))
        .await
        .expect("public card");
    assert!(public.skills.iter().all(|s| s.id != "admin"));
    let other = edge
        .client_with("probe", ClientOptions::new().api_key("X-API-Key", KEY))
        .await;
    let error = other
        .authenticated_extended_card()
        .await
        .expect_err("probe has none");
    assert_eq!(error.json_rpc_error().map(|e| e.code), Some(-32007));
    edge.stop().await;
}

#[tokio::test]
async fn an_oversized_body_gets_413_with_a_json_rpc_error() {
    let edge = TestEdge::start_with(TestEdge::config().body_limit(1024)).await;
    let big = json!({"message": text_message(&"x".repeat(4096))});
    let (status, _, body) = edge.rpc_with("echo", "message/send", big, &[]).await;
    assert_eq!(status, 413);
    assert!(body["error"]["code"].is_i64(), "{body}");
    let (status, _, _) = edge.rpc_with("echo", "message/send", send(), &[]).await;
    assert_eq!(status, 200);
    edge.stop().await;
}
