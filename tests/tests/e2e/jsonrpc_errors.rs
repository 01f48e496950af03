//! Every JSON-RPC error code that applies, through the real stack (socket, server,
//! edge, supervisor), each with a message naming the problem; and a table of
//! malformed inputs, each getting the right error and never a panic.

use agentyard::edge::{AgentSettings, EdgeAuth, PushConfig};
use agentyard::policy::{Pattern, Rule, RulePolicy};
use agentyard_tests::http::{TestEdge, text_message};
use serde_json::{Value, json};

fn code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error response: {response}"))
}

fn message(response: &Value) -> String {
    response["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn send(text: &str) -> Value {
    json!({"message": text_message(text)})
}

#[tokio::test]
async fn a_body_that_is_not_json_is_a_parse_error_with_a_null_id() {
    let edge = TestEdge::start().await;
    for body in [
        br#"{"jsonrpc":"2.0","id":1,"method":"message/send""#.to_vec(),
        b"\xff\xfe not utf-8".to_vec(),
        "[".repeat(100_000).into_bytes(),
        Vec::new(),
    ] {
        let (status, _, response) = edge.post_raw("/agents/echo", body, &[]).await;
        assert_eq!(status, 200);
        assert_eq!(code(&response), -32700, "{response}");
        assert_eq!(response["id"], Value::Null);
    }
    edge.stop().await;
}

#[tokio::test]
async fn a_malformed_envelope_is_an_invalid_request() {
    let edge = TestEdge::start().await;
    let cases = [
        json!({"jsonrpc": "1.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}}),
        json!({"jsonrpc": "2.0", "id": 1, "params": {"id": "x"}}),
        json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "tasks/get", "params": {"id": "x"}}),
        json!({"jsonrpc": "2.0", "id": true, "method": "tasks/get", "params": {"id": "x"}}),
        json!({"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": "x"}}),
        json!([{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}}]),
        json!("message/send"),
    ];
    for body in cases {
        let (status, _, response) = edge.post_raw("/agents/echo", body.to_string(), &[]).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(code(&response), -32600, "{body} -> {response}");
        assert!(!message(&response).is_empty());
    }
    edge.stop().await;
}

#[tokio::test]
async fn an_unknown_method_is_method_not_found_naming_it() {
    let edge = TestEdge::start().await;
    let response = edge.rpc("echo", "tasks/frobnicate", json!({})).await;
    assert_eq!(code(&response), -32601);
    assert!(
        message(&response).contains("tasks/frobnicate"),
        "{response}"
    );
    assert_eq!(response["id"], "t-1");
    edge.stop().await;
}

#[tokio::test]
async fn params_that_do_not_fit_are_invalid_params_naming_the_member() {
    let edge = TestEdge::start().await;
    let mut unknown_kind = text_message("hi");
    unknown_kind["parts"] = json!([{"kind": "video", "url": "x"}]);
    let mut empty_parts = text_message("hi");
    empty_parts["parts"] = json!([]);
    let mut wrong_type = text_message("hi");
    wrong_type["parts"] = json!("hello");
    let cases = [
        ("message/send", json!({}), "message"),
        ("message/send", json!({"message": empty_parts}), "parts"),
        ("message/send", json!({"message": unknown_kind}), "video"),
        ("message/send", json!({"message": wrong_type}), "parts"),
        (
            "message/send",
            json!({"message": text_message("hi"), "configuration": {"historyLength": -1}}),
            "historyLength",
        ),
        (
            "message/send",
            json!({"message": text_message("hi"), "configuration": {"historyLength": 1e40}}),
            "historyLength",
        ),
        (
            "tasks/get",
            json!({"id": "x", "historyLength": -5}),
            "historyLength",
        ),
        ("tasks/get", json!({"id": 12}), "id"),
        ("tasks/get", json!([1, 2]), "params"),
    ];
    for (method, params, names) in cases {
        let response = edge.rpc("echo", method, params.clone()).await;
        assert_eq!(code(&response), -32602, "{method} {params} -> {response}");
        assert!(
            message(&response).contains(names),
            "{method} {params}: the message should name `{names}`: {response}"
        );
    }
    edge.stop().await;
}

#[tokio::test]
async fn a_huge_id_is_refused_not_truncated() {
    let edge = TestEdge::start().await;
    let body = r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tasks/get","params":{"id":"x"}}"#;
    let (_, _, response) = edge.post_raw("/agents/echo", body, &[]).await;
    assert_eq!(code(&response), -32600, "{response}");
    edge.stop().await;
}

#[tokio::test]
async fn task_errors_name_the_task() {
    let edge = TestEdge::start().await;
    let missing = edge
        .rpc("echo", "tasks/get", json!({"id": "no-such-task"}))
        .await;
    assert_eq!(code(&missing), -32001);
    assert!(message(&missing).contains("no-such-task"), "{missing}");
    assert_eq!(missing["error"]["data"]["taskId"], "no-such-task");

    let done = edge.rpc("echo", "message/send", send("hi")).await;
    let task_id = done["result"]["id"].as_str().expect("a task id").to_owned();
    let again = edge
        .rpc("echo", "tasks/cancel", json!({"id": task_id}))
        .await;
    assert_eq!(code(&again), -32002);
    assert!(message(&again).contains("completed"), "{again}");

    let mut follow_up = text_message("more");
    follow_up["taskId"] = json!(task_id);
    let terminal = edge
        .rpc("echo", "message/send", json!({"message": follow_up}))
        .await;
    assert_eq!(code(&terminal), -32602);
    assert!(message(&terminal).contains(&task_id), "{terminal}");
    edge.stop().await;
}

#[tokio::test]
async fn push_methods_are_not_supported_when_push_is_off() {
    let edge = TestEdge::start_with(TestEdge::config().push(PushConfig::disabled())).await;
    let done = edge.rpc("echo", "message/send", send("hi")).await;
    let params = json!({
        "taskId": done["result"]["id"],
        "pushNotificationConfig": {"url": "https://example.com/hook"},
    });
    let response = edge
        .rpc("echo", "tasks/pushNotificationConfig/set", params)
        .await;
    assert_eq!(code(&response), -32003, "{response}");
    edge.stop().await;
}

#[tokio::test]
async fn output_modes_the_agent_cannot_produce_are_content_type_errors() {
    let edge = TestEdge::start().await;
    let params = json!({
        "message": text_message("hi"),
        "configuration": {"acceptedOutputModes": ["application/pdf"]},
    });
    let response = edge.rpc("texty", "message/send", params).await;
    assert_eq!(code(&response), -32005, "{response}");
    assert!(message(&response).contains("application/pdf"), "{response}");
    edge.stop().await;
}

#[tokio::test]
async fn a_missing_extended_card_is_32007() {
    let config = TestEdge::config().auth(EdgeAuth::default().bearer_token("tok", "alice"));
    let edge = TestEdge::start_with(config).await;
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "agent/getAuthenticatedExtendedCard"});
    let (_, _, response) = edge
        .post_raw(
            "/agents/echo",
            body.to_string(),
            &[("authorization", "Bearer tok")],
        )
        .await;
    assert_eq!(code(&response), -32007, "{response}");
    edge.stop().await;
}

#[tokio::test]
async fn a_send_the_policy_denies_is_32010_and_says_why() {
    let policy = RulePolicy::builder()
        .rule(
            Rule::deny()
                .to(Pattern::exact("echo"))
                .named("no echo from outside"),
        )
        .build();
    let edge = TestEdge::start_custom(TestEdge::config(), |runtime| runtime.policy(policy)).await;
    let response = edge.rpc("echo", "message/send", send("hi")).await;
    assert_eq!(code(&response), -32010, "{response}");
    assert!(
        message(&response).contains("no echo from outside"),
        "{response}"
    );
    assert_eq!(response["error"]["data"]["reason"], "policy_rejected");
    assert_eq!(response["error"]["data"]["policy"], "rule_denied");
    assert_eq!(response["error"]["data"]["retryable"], false);
    edge.stop().await;
}

#[tokio::test]
async fn a_send_past_the_limits_is_32011_and_retryable() {
    let edge = TestEdge::start_custom(TestEdge::config(), |runtime| {
        runtime.agent_limit(1).agent_queue(0)
    })
    .await;
    let params = json!({"message": text_message("first"), "configuration": {"blocking": false}});
    let first = edge.rpc("gated", "message/send", params).await;
    assert_eq!(first["result"]["kind"], "task", "{first}");
    let second = edge.rpc("gated", "message/send", send("second")).await;
    assert_eq!(code(&second), -32011, "{second}");
    assert_eq!(second["error"]["data"]["reason"], "busy");
    assert_eq!(second["error"]["data"]["retryable"], true);
    edge.open_gate(1);
    edge.stop().await;
}

#[tokio::test]
async fn a_required_extension_not_activated_is_an_invalid_request_naming_it() {
    let required = "https://example.com/ext/signed/v1";
    let settings = AgentSettings::default().extension(agentyard::a2a::AgentExtension {
        uri: required.to_owned(),
        description: None,
        required: Some(true),
        params: None,
    });
    let edge = TestEdge::start_with(TestEdge::config().agent_settings("echo", settings)).await;
    let response = edge.rpc("echo", "message/send", send("hi")).await;
    assert_eq!(code(&response), -32600, "{response}");
    assert!(message(&response).contains(required), "{response}");
    edge.stop().await;
}
