//! Version negotiation over a real socket: which protocol version a request is
//! served in, from the `A2A-Version` header (or query parameter) and the method
//! name, and -32009 for a version the server does not speak.

use agentyard_tests::http::{TestEdge, text_message};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

fn v1_message(text: &str) -> Value {
    json!({"messageId": format!("m-{text}"), "role": "ROLE_USER", "parts": [{"text": text}]})
}

async fn call(
    edge: &TestEdge,
    path: &str,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> (StatusCode, HeaderMap, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    edge.post_raw(path, body.to_string(), headers).await
}

/// Asserts a 1.0 answer to `SendMessage` on `echo`: the `task` wrapper, ProtoJSON
/// enums, no `kind`.
#[track_caller]
fn assert_v1_send(body: &Value) {
    let task = &body["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{body}");
    assert!(task.get("kind").is_none(), "{body}");
    assert!(body.to_string().contains("echo: hi"), "{body}");
}

/// Asserts a 0.3 answer to `message/send`: the task itself with `kind`.
#[track_caller]
fn assert_v03_send(body: &Value) {
    assert_eq!(body["result"]["kind"], "task", "{body}");
    assert_eq!(body["result"]["status"]["state"], "completed", "{body}");
}

#[track_caller]
fn assert_version_not_supported(body: &Value, requested: &str) {
    assert_eq!(body["error"]["code"], -32009, "{body}");
    let info = &body["error"]["data"][0];
    assert_eq!(
        info["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
        "{body}"
    );
    assert_eq!(info["reason"], "VERSION_NOT_SUPPORTED", "{body}");
    assert_eq!(info["domain"], "a2a-protocol.org", "{body}");
    assert_eq!(info["metadata"]["requestedVersion"], requested, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("1.0") && message.contains("0.3"),
        "{message}"
    );
}

#[tokio::test]
async fn a_missing_or_empty_header_is_0_3() {
    let edge = TestEdge::start().await;
    let params = json!({"message": text_message("hi")});
    let (status, _, body) = call(&edge, "/agents/echo", "message/send", params.clone(), &[]).await;
    assert_eq!(status, 200);
    assert_v03_send(&body);
    let (_, _, body) = call(
        &edge,
        "/agents/echo",
        "message/send",
        params,
        &[("A2A-Version", " ")],
    )
    .await;
    assert_v03_send(&body);
    edge.stop().await;
}

#[tokio::test]
async fn version_1_0_and_1_0_1_are_served_as_1_0() {
    let edge = TestEdge::start().await;
    for version in ["1.0", "1.0.1"] {
        let (status, _, body) = call(
            &edge,
            "/agents/echo",
            "SendMessage",
            json!({"message": v1_message("hi")}),
            &[("A2A-Version", version)],
        )
        .await;
        assert_eq!(status, 200, "{version}: {body}");
        assert_v1_send(&body);
    }
    // The query parameter counts as the header does.
    let (_, _, body) = call(
        &edge,
        "/agents/echo?A2A-Version=1.0",
        "SendMessage",
        json!({"message": v1_message("hi")}),
        &[],
    )
    .await;
    assert_v1_send(&body);
    edge.stop().await;
}

#[tokio::test]
async fn a_version_not_served_gets_32009_with_its_error_info() {
    let edge = TestEdge::start().await;
    for method in ["SendMessage", "message/send"] {
        let (status, _, body) = call(
            &edge,
            "/agents/echo",
            method,
            json!({"message": v1_message("hi")}),
            &[("A2A-Version", "99.0")],
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["id"], 7, "{body}");
        assert_version_not_supported(&body, "99.0");
    }
    let (_, _, body) = call(
        &edge,
        "/agents/echo?A2A-Version=2.1",
        "SendMessage",
        json!({"message": v1_message("hi")}),
        &[],
    )
    .await;
    assert_version_not_supported(&body, "2.1");
    // A streaming method gets it as its one SSE event.
    let request = json!({"jsonrpc": "2.0", "id": "s", "method": "SendStreamingMessage",
                         "params": {"message": v1_message("hi")}});
    let response = edge
        .http()
        .post(edge.agent_url("echo"))
        .header("content-type", "application/json")
        .header("A2A-Version", "99.0")
        .body(request.to_string())
        .send()
        .await
        .expect("answered");
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap_or_default()
            .starts_with("text/event-stream")
    );
    let events = agentyard_tests::http::sse_data(&response.text().await.expect("a body"));
    assert_eq!(events.len(), 1, "{events:?}");
    assert_version_not_supported(&events[0], "99.0");
    edge.stop().await;
}

#[tokio::test]
async fn a_1_0_method_without_a_header_is_served_as_1_0() {
    let edge = TestEdge::start().await;
    let (status, _, body) = call(
        &edge,
        "/agents/echo",
        "SendMessage",
        json!({"message": v1_message("hi")}),
        &[],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_v1_send(&body);
    edge.stop().await;
}

#[tokio::test]
async fn a_0_3_method_with_a_1_0_header_is_served_as_0_3() {
    // The method name decides the wire form (see `wire_form` in the server): a
    // client that names `message/send` reads 0.3 answers.
    let edge = TestEdge::start().await;
    let (status, _, body) = call(
        &edge,
        "/agents/echo",
        "message/send",
        json!({"message": text_message("hi")}),
        &[("A2A-Version", "1.0")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_v03_send(&body);
    edge.stop().await;
}

#[tokio::test]
async fn an_unknown_method_is_answered_in_the_form_the_header_asks_for() {
    let edge = TestEdge::start().await;
    let (_, _, body) = call(&edge, "/agents/echo", "Frobnicate", json!({}), &[]).await;
    assert_eq!(body["error"]["code"], -32601, "{body}");
    assert!(body["error"].get("data").is_none(), "{body}");
    let (_, _, body) = call(
        &edge,
        "/agents/echo",
        "Frobnicate",
        json!({}),
        &[("A2A-Version", "1.0")],
    )
    .await;
    assert_eq!(body["error"]["code"], -32601, "{body}");
    assert_eq!(
        body["error"]["data"][0]["reason"], "METHOD_NOT_FOUND",
        "{body}"
    );
    // A body that is not JSON with a 1.0 header: a parse error in the 1.0 form.
    let (_, _, body) = edge
        .post_raw("/agents/echo", "{not json", &[("A2A-Version", "1.0")])
        .await;
    assert_eq!(body["error"]["code"], -32700, "{body}");
    assert_eq!(body["error"]["data"][0]["reason"], "PARSE_ERROR", "{body}");
    edge.stop().await;
}

#[tokio::test]
async fn a_body_that_is_not_json_is_content_type_not_supported_on_1_0_only() {
    let edge = TestEdge::start().await;
    let send = |version: Option<&'static str>| {
        let mut request = reqwest::Client::new()
            .post(format!("{}/agents/echo", edge.base_url()))
            .header("content-type", "text/plain")
            .body("SendMessage hi");
        if let Some(version) = version {
            request = request.header("A2A-Version", version);
        }
        async move {
            let response = request.send().await.expect("the server answers");
            let status = response.status();
            let body: Value = response.json().await.expect("a JSON body");
            (status, body)
        }
    };
    let (status, body) = send(Some("1.0")).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
    assert_eq!(body["error"]["code"], -32005, "{body}");
    assert_eq!(
        body["error"]["data"][0]["reason"], "CONTENT_TYPE_NOT_SUPPORTED",
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("text/plain")),
        "{body}"
    );
    // 0.3 answers as it always has: -32600 naming the problem.
    let (status, body) = send(None).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    edge.stop().await;
}
