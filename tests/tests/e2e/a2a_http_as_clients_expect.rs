//! The HTTP edge as the official clients and a new user meet it, through the whole
//! stack: errors on a request without an id, errors of streaming methods as a stream,
//! `acceptedOutputModes` as the samples send it, a blocking send that outlives the
//! request timeout, errors that name their cause, and connections that cannot starve
//! the server.

use std::time::Duration;

use agentyard::edge::EdgeAuth;
use agentyard::policy::{Pattern, Rule, RulePolicy};
use agentyard_tests::http::{TestEdge, text_message};
use agentyard_tests::{PATIENCE, eventually};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

fn code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error response: {response}"))
}

fn message(response: &Value) -> &str {
    response["error"]["message"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_request_without_an_id_gets_its_method_and_params_checked_first() {
    let edge = TestEdge::start().await;
    let cases = [
        (
            json!({"jsonrpc": "2.0", "method": "tasks/frobnicate", "params": {}}),
            -32601,
        ),
        (
            json!({"jsonrpc": "2.0", "method": "message/send", "params": {}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "id": null, "method": "tasks/get", "params": {"id": 1}}),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": "t"}}),
            -32600,
        ),
        (
            json!({"jsonrpc": "1.0", "method": "tasks/frobnicate"}),
            -32600,
        ),
        (json!({"jsonrpc": "2.0", "method": 3}), -32600),
        (
            json!({"jsonrpc": "2.0", "id": [1], "method": "tasks/frobnicate"}),
            -32600,
        ),
    ];
    for (body, expected) in cases {
        let (status, _, response) = edge.post_raw("/agents/echo", body.to_string(), &[]).await;
        assert_eq!(status, 200);
        assert_eq!(code(&response), expected, "{body} -> {response}");
        assert_eq!(response["id"], Value::Null, "{body} -> {response}");
    }
    edge.stop().await;
}

#[tokio::test]
async fn every_error_of_a_streaming_method_comes_as_one_sse_event() {
    let edge = TestEdge::start().await;
    let request = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": "s-1", "method": method, "params": params});
    let cases = [
        (
            "echo",
            request("tasks/resubscribe", json!({"id": "no-such-task"})),
            -32001,
        ),
        (
            "echo",
            request("tasks/resubscribe", json!({"id": 12})),
            -32602,
        ),
        (
            "echo",
            request("message/stream", json!({"message": {"kind": "message"}})),
            -32602,
        ),
        (
            "texty",
            request(
                "message/stream",
                json!({"message": text_message("hi"),
                       "configuration": {"acceptedOutputModes": ["image/png"]}}),
            ),
            -32005,
        ),
    ];
    for (agent, body, expected) in cases {
        let (status, headers, events) = edge.sse_raw(agent, body.clone()).await;
        assert_eq!(status, 200, "{body}");
        let content_type = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(
            content_type.starts_with("text/event-stream"),
            "{body}: {content_type}"
        );
        assert_eq!(events.len(), 1, "{body}: {events:?}");
        assert_eq!(code(&events[0]), expected, "{body}: {events:?}");
        assert_eq!(events[0]["id"], "s-1");
    }
    edge.stop().await;
}

#[tokio::test]
async fn accepted_output_modes_are_read_as_the_official_samples_send_them() {
    let edge = TestEdge::start().await;
    let send = |modes: Value| {
        json!({"message": text_message("hi"),
               "configuration": {"acceptedOutputModes": modes}})
    };
    for modes in [
        json!(["text"]),
        json!(["text", "image/png"]),
        json!(["not a type", "text/plain"]),
    ] {
        let response = edge.rpc("texty", "message/send", send(modes.clone())).await;
        assert!(response["result"].is_object(), "{modes}: {response}");
    }
    let response = edge
        .rpc("texty", "message/send", send(json!(["image", "??"])))
        .await;
    assert_eq!(code(&response), -32005, "{response}");
    edge.stop().await;
}

#[tokio::test]
async fn a_blocking_send_past_the_request_timeout_answers_with_the_working_task() {
    let edge =
        TestEdge::start_with(TestEdge::config().request_timeout(Duration::from_millis(500))).await;
    let response = edge
        .rpc(
            "gated",
            "message/send",
            json!({"message": text_message("slow")}),
        )
        .await;
    let task = &response["result"];
    assert_eq!(task["kind"], "task", "{response}");
    // Still running: `working` once the agent has said so (`submitted` on a machine
    // too busy to have started it within the timeout).
    let state = task["status"]["state"].as_str().unwrap_or_default();
    assert!(["working", "submitted"].contains(&state), "{response}");
    let id = task["id"].as_str().expect("the task's id").to_owned();
    // The task went on; once it may finish, tasks/get sees it completed.
    edge.open_gate(1);
    eventually(PATIENCE, "the task to complete", || async {
        let got = edge.rpc("gated", "tasks/get", json!({"id": id})).await;
        (got["result"]["status"]["state"] == "completed").then_some(())
    })
    .await;
    edge.stop().await;
}

#[tokio::test]
async fn an_agents_url_answers_get_with_405_saying_how_to_call_it() {
    let edge = TestEdge::start().await;
    let response = edge
        .http()
        .get(edge.agent_url("echo"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(response.status(), 405);
    assert_eq!(
        response
            .headers()
            .get("allow")
            .and_then(|v| v.to_str().ok()),
        Some("POST")
    );
    let body: Value = response.json().await.expect("a JSON body");
    assert!(message(&body).contains("POST"), "{body}");
    assert!(message(&body).contains("JSON-RPC"), "{body}");
    for agent in ["nobody", "internal"] {
        let response = edge
            .http()
            .get(edge.agent_url(agent))
            .send()
            .await
            .expect("an answer");
        assert_eq!(response.status(), 404, "{agent}");
    }
    edge.stop().await;
}

#[tokio::test]
async fn http_errors_each_name_their_own_cause() {
    let edge = TestEdge::start_with(
        TestEdge::config()
            .auth(EdgeAuth::default().api_key("k", "ops"))
            .body_limit(256),
    )
    .await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t"}});
    let key = [("x-api-key", "k")];
    let (unauthorized, _, body_401) = edge.post_raw("/agents/echo", call.to_string(), &[]).await;
    let (not_found, _, body_404) = edge
        .post_raw("/agents/nobody", call.to_string(), &key)
        .await;
    let (too_large, _, body_413) = edge.post_raw("/agents/echo", "x".repeat(1000), &key).await;
    let response = edge
        .http()
        .post(edge.agent_url("echo"))
        .header("x-api-key", "k")
        .header("content-type", "text/plain")
        .body(call.to_string())
        .send()
        .await
        .expect("an answer");
    let unsupported = response.status();
    let body_415: Value = response.json().await.expect("a JSON body");
    for (status, body, expected, lead) in [
        (unauthorized, body_401, 401, "Unauthorized: "),
        (not_found, body_404, 404, "Not Found: "),
        (too_large, body_413, 413, "Payload Too Large: "),
        (unsupported, body_415, 415, "Unsupported Media Type: "),
    ] {
        assert_eq!(status, expected);
        assert!(message(&body).starts_with(lead), "{expected}: {body}");
    }
    edge.stop().await;
}

#[tokio::test]
async fn half_sent_and_idle_connections_are_closed() {
    let edge = TestEdge::start_with(
        TestEdge::config()
            .header_read_timeout(Duration::from_millis(200))
            .idle_timeout(Duration::from_millis(200)),
    )
    .await;
    let closed = |mut tcp: tokio::net::TcpStream| async move {
        let mut buffer = [0_u8; 1024];
        loop {
            match tokio::time::timeout(PATIENCE, tcp.read(&mut buffer))
                .await
                .expect("the server closes the connection in time")
            {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    let mut half = tokio::net::TcpStream::connect(edge.edge.local_addr())
        .await
        .expect("connect");
    half.write_all(b"POST /agents/echo HTTP/1.1\r\nHost: x")
        .await
        .expect("write");
    let silent = tokio::net::TcpStream::connect(edge.edge.local_addr())
        .await
        .expect("connect");
    closed(half).await;
    closed(silent).await;
    edge.stop().await;
}

#[tokio::test]
async fn a_stream_the_policy_refuses_is_one_sse_error_event() {
    let policy = RulePolicy::builder()
        .rule(
            Rule::deny()
                .to(Pattern::exact("chunks"))
                .named("no chunks from outside"),
        )
        .build();
    let edge = TestEdge::start_custom(TestEdge::config(), |runtime| runtime.policy(policy)).await;
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "message/stream",
                      "params": {"message": text_message("hi")}});
    let (status, headers, events) = edge.sse_raw("chunks", body).await;
    assert_eq!(status, 200);
    assert!(
        headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream")),
        "{headers:?}"
    );
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(code(&events[0]), -32010, "{events:?}");
    assert_eq!(events[0]["error"]["data"]["reason"], "policy_rejected");
    edge.stop().await;
}
