//! `agentyard serve` offers the authenticated extended card from its config file: the
//! public card says `supportsAuthenticatedExtendedCard`, and
//! `agent/getAuthenticatedExtendedCard` gives an authenticated caller the extra skills
//! (an anonymous one gets 401 before the method runs).

use agentyard::config::Config;
use agentyard::serve::Server;
use serde_json::{Value, json};

const CONFIG: &str = r#"
[server]
bind = "127.0.0.1:0"

[agents]
exposed = ["echo", "countdown"]

[agents.extended_cards.echo]
skills = [{ id = "audit", name = "Echo with audit", description = "Echoes and records who asked.", tags = ["admin"] }]

[[auth.api_keys]]
name = "ops"
key = "key-for-ops"
"#;

async fn call(url: &str, key: Option<&str>) -> (u16, Value) {
    let mut request = reqwest::Client::new().post(url).json(&json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "agent/getAuthenticatedExtendedCard",
    }));
    if let Some(key) = key {
        request = request.header("X-API-Key", key);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_extended_card_configured_in_the_file_is_served_to_authenticated_callers() {
    let mut config = Config::from_toml(CONFIG).expect("valid config");
    // Tasks in memory: a test never writes `./agentyard-data` into the repository.
    config.store.kind = Some(agentyard::config::StoreKind::Memory);
    let server = Server::from_config(config)
        .await
        .expect("the server starts");
    let base = format!("http://{}", server.local_addr());

    let card: Value = reqwest::get(format!("{base}/agents/echo/.well-known/agent-card.json"))
        .await
        .expect("card")
        .json()
        .await
        .expect("JSON");
    assert_eq!(card["supportsAuthenticatedExtendedCard"], true, "{card}");
    assert!(
        !card["skills"].to_string().contains("audit"),
        "the public card keeps the extra skill to itself: {card}"
    );
    let countdown: Value = reqwest::get(format!(
        "{base}/agents/countdown/.well-known/agent-card.json"
    ))
    .await
    .expect("card")
    .json()
    .await
    .expect("JSON");
    assert!(
        countdown
            .get("supportsAuthenticatedExtendedCard")
            .is_none_or(|v| v != true)
    );

    let (status, reply) = call(&format!("{base}/agents/echo"), Some("key-for-ops")).await;
    assert_eq!(status, 200, "{reply}");
    let skills = reply["result"]["skills"].as_array().expect("skills");
    let audit = skills
        .iter()
        .find(|skill| skill["id"] == "audit")
        .unwrap_or_else(|| panic!("no extra skill in {reply}"));
    assert_eq!(audit["tags"], json!(["admin"]));

    let (status, _) = call(&format!("{base}/agents/echo"), None).await;
    assert_eq!(status, 401);

    // An agent without an extended card in the file answers -32007.
    let (_, reply) = call(&format!("{base}/agents/countdown"), Some("key-for-ops")).await;
    assert_eq!(reply["error"]["code"], -32007, "{reply}");
    server.stop().await;
}
