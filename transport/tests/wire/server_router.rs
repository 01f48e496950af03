//! The router without a socket: every route and every error path, driven with
//! `tower::ServiceExt::oneshot` against the mock service.

use crate::mock;

use std::time::Duration;

use agentyard_transport::server::{EXTENSIONS_HEADER, ServerConfig, app};
use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use mock::{API_KEY, BEARER, MockService, OPTIONAL_EXT, REQUIRED_EXT};
use serde_json::{Value, json};
use tower::ServiceExt as _;

fn router() -> Router {
    router_with(ServerConfig::builder().auth(mock::auth()))
}

fn router_with(config: agentyard_transport::server::ServerConfigBuilder) -> Router {
    app(MockService::new("http://agents.test"), config.build())
}

/// What came back: status, headers and the body as JSON.
#[derive(Debug)]
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    /// Asserts a JSON-RPC error response: HTTP status, code, id, and words the
    /// message must contain.
    #[track_caller]
    fn assert_error(&self, status: StatusCode, code: i64, id: &Value, words: &[&str]) {
        assert_eq!(self.status, status, "{self:#?}");
        assert_eq!(self.body["jsonrpc"], "2.0", "{self:#?}");
        assert_eq!(self.body["error"]["code"], code, "{self:#?}");
        assert_eq!(&self.body["id"], id, "{self:#?}");
        assert!(self.body.get("result").is_none(), "{self:#?}");
        let message = self.body["error"]["message"].as_str().unwrap_or_default();
        for word in words {
            assert!(
                message.contains(word),
                "message {message:?} does not name {word:?}"
            );
        }
    }

    /// Asserts a JSON-RPC success and returns its result.
    #[track_caller]
    fn result(&self, id: &Value) -> &Value {
        assert_eq!(self.status, StatusCode::OK, "{self:#?}");
        assert_eq!(&self.body["id"], id, "{self:#?}");
        assert!(self.body.get("error").is_none(), "{self:#?}");
        &self.body["result"]
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }
}

async fn send(router: Router, request: Request<Body>) -> Answer {
    let response = router
        .oneshot(request)
        .await
        .expect("the router is infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a readable body");
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|error| {
        panic!(
            "{status}: body is not JSON ({error}): {}",
            String::from_utf8_lossy(&bytes)
        )
    });
    Answer {
        status,
        headers,
        body,
    }
}

fn get(path: &str) -> Request<Body> {
    Request::get(path)
        .body(Body::empty())
        .expect("a valid request")
}

/// A JSON POST with extra headers.
fn post_with(path: &str, headers: &[(&str, &str)], body: impl Into<Body>) -> Request<Body> {
    let mut request = Request::post(path).header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(body.into()).expect("a valid request")
}

fn post(path: &str, body: impl Into<Body>) -> Request<Body> {
    post_with(path, &[], body)
}

fn rpc(id: Value, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn send_text(id: Value, text: &str) -> String {
    rpc(
        id,
        "message/send",
        json!({"message": {"kind": "message", "messageId": "m-1", "role": "user",
                           "parts": [{"kind": "text", "text": text}]}}),
    )
}

async fn rpc_to(path: &str, headers: &[(&str, &str)], body: String) -> Answer {
    send(router(), post_with(path, headers, body)).await
}

/// Posts `body` and reads the answer as an SSE stream: asserts the content type, and
/// returns the data of every event.
async fn sse_to(path: &str, body: String) -> Vec<Value> {
    let response = router()
        .oneshot(post(path, body))
        .await
        .expect("the router is infallible");
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a readable body");
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}: {text}"
    );
    text.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).expect("JSON data"))
        .collect()
}

/// The one event of an SSE answer, asserted to be the error `code` with `id`.
fn one_error(events: &[Value], code: i64, id: &Value) -> String {
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["error"]["code"], code, "{events:#?}");
    assert_eq!(&events[0]["id"], id, "{events:#?}");
    events[0]["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

// ---------------------------------------------------------------- cards

#[tokio::test]
async fn serves_the_default_agents_card_at_both_well_known_paths() {
    for path in ["/.well-known/agent-card.json", "/.well-known/agent.json"] {
        let answer = send(router(), get(path)).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(answer.body["name"], "open", "{path}");
        assert_eq!(answer.body["protocolVersion"], "0.3.0");
        assert_eq!(answer.header("content-type"), Some("application/json"));
    }
}

#[tokio::test]
async fn serves_each_agents_card_at_both_well_known_paths() {
    for path in [
        "/agents/strict/.well-known/agent-card.json",
        "/agents/strict/.well-known/agent.json",
    ] {
        let answer = send(router(), get(path)).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(answer.body["name"], "strict", "{path}");
        assert_eq!(answer.body["url"], "http://agents.test/agents/strict");
    }
}

#[tokio::test]
async fn cards_of_protected_agents_are_public() {
    let answer = send(router(), get("/agents/secure/.well-known/agent-card.json")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.body["securitySchemes"]["apiKey"]["name"],
        "X-API-Key"
    );
}

#[tokio::test]
async fn lists_the_cards_of_every_exposed_agent() {
    let answer = send(router(), get("/agents")).await;
    assert_eq!(answer.status, StatusCode::OK);
    let names: Vec<&str> = answer
        .body
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|card| card["name"].as_str())
        .collect();
    assert_eq!(names, ["open", "secure", "strict", "plain"]);
}

#[tokio::test]
async fn an_unexposed_agent_is_not_found_on_every_route() {
    let not_found = [
        get("/agents/hidden/.well-known/agent-card.json"),
        get("/agents/hidden/.well-known/agent.json"),
        post("/agents/hidden", send_text(json!(1), "hi")),
    ];
    for request in not_found {
        let answer = send(router(), request).await;
        answer.assert_error(StatusCode::NOT_FOUND, -32600, &Value::Null, &["hidden"]);
    }
}

#[tokio::test]
async fn an_agents_url_asked_with_get_is_405_saying_how_to_call_it() {
    for (path, agent) in [
        ("/agents/open", "open"),
        ("/agents/plain", "plain"),
        ("/", "open"),
    ] {
        let answer = send(router(), get(path)).await;
        answer.assert_error(
            StatusCode::METHOD_NOT_ALLOWED,
            -32600,
            &Value::Null,
            &["Method Not Allowed", "POST", "JSON-RPC", agent],
        );
        assert_eq!(answer.header("allow"), Some("POST"));
        assert_eq!(
            answer.body["error"]["data"]["example"]["method"],
            "message/send"
        );
    }
    let delete = Request::delete("/agents/open")
        .body(Body::empty())
        .expect("a valid request");
    assert_eq!(
        send(router(), delete).await.status,
        StatusCode::METHOD_NOT_ALLOWED
    );
    // No such agent: 404, whatever the method.
    let answer = send(router(), get("/agents/hidden")).await;
    answer.assert_error(
        StatusCode::NOT_FOUND,
        -32600,
        &Value::Null,
        &["Not Found", "hidden"],
    );
}

#[tokio::test]
async fn http_level_errors_each_name_their_own_cause() {
    let unauthorized = rpc_to("/agents/secure", &[], send_text(json!(1), "hi")).await;
    let not_found = send(router(), post("/agents/hidden", send_text(json!(1), "hi"))).await;
    let too_large = send(
        router_with(ServerConfig::builder().body_limit(8)),
        post("/agents/open", send_text(json!(1), "hi")),
    )
    .await;
    let unsupported = send(
        router(),
        Request::post("/agents/open")
            .header("content-type", "text/plain")
            .body(Body::from(send_text(json!(1), "hi")))
            .expect("a valid request"),
    )
    .await;
    for (answer, status, lead) in [
        (unauthorized, StatusCode::UNAUTHORIZED, "Unauthorized: "),
        (not_found, StatusCode::NOT_FOUND, "Not Found: "),
        (
            too_large,
            StatusCode::PAYLOAD_TOO_LARGE,
            "Payload Too Large: ",
        ),
        (
            unsupported,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: ",
        ),
    ] {
        assert_eq!(answer.status, status);
        let message = answer.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(lead), "{status}: {message}");
        assert!(!message.contains("validation error"), "{status}: {message}");
    }
}

#[tokio::test]
async fn cards_are_served_at_the_host_the_client_used() {
    let request = Request::get("/agents/plain/.well-known/agent-card.json")
        .header("host", "agents.internal:9000")
        .body(Body::empty())
        .expect("a valid request");
    let answer = send(router(), request).await;
    assert_eq!(
        answer.body["url"],
        "http://agents.internal:9000/agents/plain"
    );
    let request = Request::get("/agents")
        .header("host", "10.1.2.3:8080")
        .body(Body::empty())
        .expect("a valid request");
    let answer = send(router(), request).await;
    assert_eq!(answer.body[3]["url"], "http://10.1.2.3:8080/agents/plain");
    // A Host that is not a host and port is not used.
    for host in ["user@evil.test", "a b", "/path"] {
        let request = Request::get("/agents/plain/.well-known/agent-card.json")
            .header("host", host)
            .body(Body::empty())
            .expect("a valid request");
        let answer = send(router(), request).await;
        assert_eq!(
            answer.body["url"], "http://agents.test/agents/plain",
            "{host}"
        );
    }
}

#[tokio::test]
async fn an_unknown_path_is_not_found_with_a_json_body() {
    let answer = send(router(), get("/nothing/here")).await;
    answer.assert_error(
        StatusCode::NOT_FOUND,
        -32600,
        &Value::Null,
        &["/nothing/here"],
    );
}

// ---------------------------------------------------------------- calls

#[tokio::test]
async fn the_root_endpoint_serves_the_default_agent() {
    let answer = rpc_to("/", &[], send_text(json!("req-1"), "hello")).await;
    let task = answer.result(&json!("req-1"));
    assert_eq!(task["kind"], "task");
    assert_eq!(task["metadata"]["agent"], "open");
    assert_eq!(task["metadata"]["requestId"], "req-1");
    assert_eq!(task["history"][0]["parts"][0]["text"], "hello");
}

#[tokio::test]
async fn an_agents_name_is_read_from_the_path_percent_decoded_with_or_without_a_slash() {
    for path in ["/agents/open", "/agents/op%65n", "/agents/open/"] {
        let answer = rpc_to(path, &[], send_text(json!(1), "hello")).await;
        let task = answer.result(&json!(1));
        assert_eq!(task["metadata"]["agent"], "open", "{path}");
    }
    // Not UTF-8 once decoded: named, not a panic and not some other agent.
    let answer = rpc_to("/agents/%FF", &[], send_text(json!(1), "hello")).await;
    answer.assert_error(StatusCode::BAD_REQUEST, -32600, &Value::Null, &["UTF-8"]);
    // A path with more segments is no JSON-RPC endpoint: the HTTP+JSON binding's.
    let answer = rpc_to("/agents/open/x", &[], send_text(json!(1), "hello")).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND, "{answer:#?}");
}

#[tokio::test]
async fn every_unary_method_reaches_the_service_typed() {
    let cases = [
        ("tasks/get", json!({"id": "t-7"}), json!("t-7")),
        ("tasks/cancel", json!({"id": "t-8"}), json!("t-8")),
    ];
    for (method, params, task_id) in cases {
        let answer = rpc_to("/agents/open", &[], rpc(json!(5), method, params)).await;
        assert_eq!(answer.result(&json!(5))["id"], task_id, "{method}");
    }
    let config =
        json!({"taskId": "t-1", "pushNotificationConfig": {"url": "https://hooks.example/x"}});
    let answer = rpc_to(
        "/agents/open",
        &[],
        rpc(json!(1), "tasks/pushNotificationConfig/set", config.clone()),
    )
    .await;
    assert_eq!(answer.result(&json!(1)), &config);
    let answer = rpc_to(
        "/agents/open",
        &[],
        rpc(
            json!(2),
            "tasks/pushNotificationConfig/get",
            json!({"id": "t-1", "pushNotificationConfigId": "p-1"}),
        ),
    )
    .await;
    assert_eq!(
        answer.result(&json!(2))["pushNotificationConfig"]["id"],
        "p-1"
    );
    let answer = rpc_to(
        "/agents/open",
        &[],
        rpc(
            json!(3),
            "tasks/pushNotificationConfig/list",
            json!({"id": "t-1"}),
        ),
    )
    .await;
    assert_eq!(answer.result(&json!(3)).as_array().map(Vec::len), Some(2));
    let answer = rpc_to(
        "/agents/open",
        &[],
        rpc(
            json!(4),
            "tasks/pushNotificationConfig/delete",
            json!({"id": "t-1", "pushNotificationConfigId": "p-1"}),
        ),
    )
    .await;
    assert_eq!(answer.result(&json!(4)), &Value::Null);
}

#[tokio::test]
async fn a_service_error_is_sent_with_the_request_id() {
    let answer = rpc_to(
        "/agents/open",
        &[],
        rpc(json!("g"), "tasks/get", json!({"id": "missing"})),
    )
    .await;
    answer.assert_error(StatusCode::OK, -32001, &json!("g"), &["missing"]);
    let answer = rpc_to(
        "/agents/open",
        &[],
        rpc(json!(9), "tasks/cancel", json!({"id": "done"})),
    )
    .await;
    answer.assert_error(StatusCode::OK, -32002, &json!(9), &[]);
}

#[tokio::test]
async fn a_unary_method_answered_with_a_stream_is_an_internal_error() {
    let answer = rpc_to("/agents/open", &[], send_text(json!(1), "wrong-kind")).await;
    answer.assert_error(
        StatusCode::OK,
        -32603,
        &json!(1),
        &["wrong kind of reply", "single result"],
    );
}

#[tokio::test]
async fn a_streaming_method_answered_with_a_result_is_an_internal_error() {
    let body = rpc(
        json!(2),
        "message/stream",
        json!({"message": {"kind": "message", "messageId": "m", "role": "user",
                           "parts": [{"kind": "text", "text": "wrong-kind"}]}}),
    );
    let message = one_error(&sse_to("/agents/open", body).await, -32603, &json!(2));
    assert!(message.contains("wrong kind of reply"), "{message}");
    assert!(message.contains("a stream"), "{message}");
}

#[tokio::test]
async fn every_error_of_a_streaming_method_comes_as_one_sse_event() {
    let message = json!({"kind": "message", "messageId": "m", "role": "user",
                         "parts": [{"kind": "text", "text": "hi"}]});
    // Bad params, for both streaming methods.
    let body = rpc(
        json!(1),
        "message/stream",
        json!({"message": {"kind": "message"}}),
    );
    one_error(&sse_to("/agents/open", body).await, -32602, &json!(1));
    let body = rpc(json!(2), "tasks/resubscribe", json!({"id": 7}));
    one_error(&sse_to("/agents/open", body).await, -32602, &json!(2));
    // No id: the params are fine, so -32600, with a null id.
    let body =
        json!({"jsonrpc": "2.0", "method": "message/stream", "params": {"message": message}});
    one_error(
        &sse_to("/agents/open", body.to_string()).await,
        -32600,
        &Value::Null,
    );
    // A capability the agent lacks.
    let body = rpc(json!(3), "tasks/resubscribe", json!({"id": "t-1"}));
    one_error(&sse_to("/agents/plain", body).await, -32004, &json!(3));
    // A required extension not activated.
    let body = rpc(json!(4), "message/stream", json!({"message": message}));
    one_error(&sse_to("/agents/strict", body).await, -32600, &json!(4));
}

#[tokio::test(start_paused = true)]
async fn a_stream_that_does_not_start_in_time_is_one_sse_error_event() {
    let router = router_with(ServerConfig::builder().request_timeout(Duration::from_secs(3)));
    let body = rpc(
        json!(9),
        "message/stream",
        json!({"message": {"kind": "message", "messageId": "m", "role": "user",
                           "parts": [{"kind": "text", "text": "slow"}]}}),
    );
    let response = router
        .oneshot(post("/agents/open", body))
        .await
        .expect("the router is infallible");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a readable body");
    let text = String::from_utf8_lossy(&bytes);
    let events: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).expect("JSON data"))
        .collect();
    let message = one_error(&events, -32603, &json!(9));
    assert!(message.contains("did not answer"), "{message}");
}

#[tokio::test(start_paused = true)]
async fn a_call_that_outlives_the_request_timeout_gets_an_internal_error() {
    let router = router_with(ServerConfig::builder().request_timeout(Duration::from_secs(3)));
    let answer = send(router, post("/agents/open", send_text(json!(4), "slow"))).await;
    answer.assert_error(
        StatusCode::OK,
        -32603,
        &json!(4),
        &["did not answer", "message/send", "3s"],
    );
}

#[tokio::test]
async fn streaming_on_an_agent_without_the_capability_is_unsupported() {
    let body = rpc(json!(1), "tasks/resubscribe", json!({"id": "t-1"}));
    let message = one_error(&sse_to("/agents/plain", body).await, -32004, &json!(1));
    assert!(
        message.contains("streaming") && message.contains("plain"),
        "{message}"
    );
}

#[tokio::test]
async fn a_request_without_an_id_gets_its_method_and_params_checked_first() {
    let body = json!({"jsonrpc": "2.0", "method": "tasks/frobnicate", "params": {}});
    let answer = rpc_to("/agents/open", &[], body.to_string()).await;
    answer.assert_error(StatusCode::OK, -32601, &Value::Null, &["tasks/frobnicate"]);
    let body = json!({"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": 5}});
    let answer = rpc_to("/agents/open", &[], body.to_string()).await;
    answer.assert_error(StatusCode::OK, -32602, &Value::Null, &["id"]);
    let body = json!({"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": "t-1"}});
    let answer = rpc_to("/agents/open", &[], body.to_string()).await;
    answer.assert_error(StatusCode::OK, -32600, &Value::Null, &["`id`"]);
}

#[tokio::test]
async fn push_config_on_an_agent_without_the_capability_is_not_supported() {
    let body = rpc(
        json!(1),
        "tasks/pushNotificationConfig/list",
        json!({"id": "t-1"}),
    );
    let answer = rpc_to("/agents/plain", &[], body).await;
    answer.assert_error(StatusCode::OK, -32003, &json!(1), &["push notifications"]);
}

// ---------------------------------------------------------------- JSON-RPC errors

#[tokio::test]
async fn a_body_that_is_not_json_is_a_parse_error_with_a_null_id() {
    let answer = rpc_to("/agents/open", &[], "{not json".to_owned()).await;
    answer.assert_error(StatusCode::OK, -32700, &Value::Null, &["Invalid JSON"]);
}

#[tokio::test]
async fn a_wrong_jsonrpc_version_is_an_invalid_request_echoing_the_id() {
    let body = json!({"jsonrpc": "1.0", "id": 3, "method": "tasks/get", "params": {"id": "t"}});
    let answer = rpc_to("/agents/open", &[], body.to_string()).await;
    answer.assert_error(StatusCode::OK, -32600, &json!(3), &["jsonrpc"]);
}

#[tokio::test]
async fn a_missing_method_is_an_invalid_request() {
    let body = json!({"jsonrpc": "2.0", "id": "x", "params": {}});
    let answer = rpc_to("/agents/open", &[], body.to_string()).await;
    answer.assert_error(StatusCode::OK, -32600, &json!("x"), &["method"]);
}

#[tokio::test]
async fn an_id_of_the_wrong_type_is_an_invalid_request_with_a_null_id() {
    for id in [
        json!({"a": 1}),
        json!([1]),
        json!(1.5),
        json!(true),
        Value::Null,
    ] {
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": "tasks/get", "params": {"id": "t"}});
        let answer = rpc_to("/agents/open", &[], body.to_string()).await;
        answer.assert_error(StatusCode::OK, -32600, &Value::Null, &["id"]);
    }
}

#[tokio::test]
async fn an_unknown_method_is_method_not_found_naming_it() {
    let answer = rpc_to(
        "/agents/open",
        &[],
        rpc(json!(7), "tasks/explode", json!({})),
    )
    .await;
    answer.assert_error(StatusCode::OK, -32601, &json!(7), &["tasks/explode"]);
}

#[tokio::test]
async fn params_that_do_not_fit_are_invalid_params_naming_the_field() {
    let answer = rpc_to(
        "/agents/open",
        &[],
        rpc(json!(8), "tasks/get", json!({"historyLength": 2})),
    )
    .await;
    answer.assert_error(StatusCode::OK, -32602, &json!(8), &["id"]);
}

#[tokio::test]
async fn a_batch_is_rejected_as_unsupported() {
    let body = format!("[{}]", send_text(json!(1), "hi"));
    let answer = rpc_to("/agents/open", &[], body).await;
    answer.assert_error(
        StatusCode::OK,
        -32600,
        &Value::Null,
        &["batch requests are not supported"],
    );
}

#[tokio::test]
async fn a_body_over_the_limit_gets_413_naming_the_limit() {
    let config = || ServerConfig::builder().body_limit(64);
    let body = send_text(json!(1), &"x".repeat(100));
    // Declared up front...
    let request = post_with(
        "/agents/open",
        &[("content-length", &body.len().to_string())],
        body.clone(),
    );
    let answer = send(router_with(config()), request).await;
    answer.assert_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        -32600,
        &Value::Null,
        &["64 bytes"],
    );
    assert_eq!(answer.body["error"]["data"]["limit"], 64);
    // ...or found while reading a body of unknown length.
    let chunks = futures::stream::iter(
        body.into_bytes()
            .chunks(16)
            .map(|chunk| Ok::<_, std::io::Error>(chunk.to_vec()))
            .collect::<Vec<_>>(),
    );
    let request = post("/agents/open", Body::from_stream(chunks));
    let answer = send(router_with(config()), request).await;
    answer.assert_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        -32600,
        &Value::Null,
        &["64 bytes"],
    );
}

#[tokio::test]
async fn a_body_at_the_limit_is_accepted() {
    let body = send_text(json!(1), "hi");
    let router = router_with(ServerConfig::builder().body_limit(body.len()));
    let answer = send(router, post("/agents/open", body)).await;
    assert_eq!(answer.result(&json!(1))["kind"], "task");
}

#[tokio::test]
async fn a_body_that_is_not_json_content_gets_415() {
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/xml",
    ] {
        let request = Request::post("/agents/open")
            .header("content-type", content_type)
            .body(Body::from(send_text(json!(1), "hi")))
            .expect("a valid request");
        let answer = send(router(), request).await;
        answer.assert_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            -32600,
            &Value::Null,
            &[content_type, "application/json"],
        );
    }
    let request = Request::post("/agents/open")
        .body(Body::from(send_text(json!(1), "hi")))
        .expect("a valid request");
    let answer = send(router(), request).await;
    answer.assert_error(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        -32600,
        &Value::Null,
        &["no Content-Type"],
    );
}

#[tokio::test]
async fn json_content_types_with_parameters_are_accepted() {
    for content_type in [
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/rpc+json",
    ] {
        let request = Request::post("/agents/open")
            .header("content-type", content_type)
            .body(Body::from(send_text(json!(1), "hi")))
            .expect("a valid request");
        let answer = send(router(), request).await;
        assert_eq!(answer.result(&json!(1))["kind"], "task", "{content_type}");
    }
}

/// Bodies that must each get a JSON-RPC error, and never a panic.
#[tokio::test]
async fn malformed_input_gets_the_right_error_and_never_a_panic() {
    let nested = |open: &str, close: &str, depth: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}1{}}}"#,
            open.repeat(depth),
            close.repeat(depth)
        )
        .into_bytes()
    };
    let null = Value::Null;
    let get_with = |history: Value| {
        rpc(
            json!(2),
            "tasks/get",
            json!({"id": "t", "historyLength": history}),
        )
    };
    let send_with = |message: Value| rpc(json!(3), "message/send", json!({"message": message}));
    let video = json!({"kind": "message", "messageId": "m", "role": "user",
                       "parts": [{"kind": "video", "url": "x"}]});
    let truncated = send_text(json!(1), "hi").as_bytes()[..60].to_vec();
    let cases: Vec<(&str, Vec<u8>, i64, Value)> = vec![
        ("empty body", Vec::new(), -32700, null.clone()),
        ("whitespace only", b"  \n ".to_vec(), -32700, null.clone()),
        (
            "truncated JSON",
            br#"{"jsonrpc":"2.0","id":1,"method":"message/se"#.to_vec(),
            -32700,
            null.clone(),
        ),
        ("truncated params", truncated, -32700, null.clone()),
        (
            "invalid UTF-8",
            b"\xff\xfe\xfd".to_vec(),
            -32700,
            null.clone(),
        ),
        (
            "invalid UTF-8 inside a string",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\",\"params\":{\"id\":\"\xff\"}}"
                .to_vec(),
            -32700,
            null.clone(),
        ),
        ("a NUL byte", b"\0".to_vec(), -32700, null.clone()),
        (
            "100k open brackets",
            "[".repeat(100_000).into_bytes(),
            -32700,
            null.clone(),
        ),
        (
            "deeply nested params",
            nested("[", "]", 10_000),
            -32700,
            null.clone(),
        ),
        (
            "deeply nested objects",
            nested(r#"{"a":"#, "}", 10_000),
            -32700,
            null.clone(),
        ),
        (
            "a number out of range",
            br#"{"jsonrpc":"2.0","id":1e400,"method":"tasks/get"}"#.to_vec(),
            -32700,
            null.clone(),
        ),
        (
            "a huge integer id",
            br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tasks/get"}"#
                .to_vec(),
            -32600,
            null.clone(),
        ),
        (
            "a huge historyLength",
            get_with(json!(1e20)).into_bytes(),
            -32602,
            json!(2),
        ),
        (
            "a negative historyLength",
            get_with(json!(-1)).into_bytes(),
            -32602,
            json!(2),
        ),
        ("null", b"null".to_vec(), -32600, null.clone()),
        (
            "a string",
            br#""message/send""#.to_vec(),
            -32600,
            null.clone(),
        ),
        ("a number", b"42".to_vec(), -32600, null.clone()),
        ("an empty batch", b"[]".to_vec(), -32600, null.clone()),
        (
            "method of the wrong type",
            br#"{"jsonrpc":"2.0","id":1,"method":5}"#.to_vec(),
            -32600,
            json!(1),
        ),
        (
            "params of the wrong type",
            br#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":"t-1"}"#.to_vec(),
            -32600,
            json!(1),
        ),
        (
            "message of the wrong type",
            send_with(json!(5)).into_bytes(),
            -32602,
            json!(3),
        ),
        (
            "missing message",
            rpc(json!(3), "message/send", json!({})).into_bytes(),
            -32602,
            json!(3),
        ),
        (
            "an unknown part kind",
            send_with(video).into_bytes(),
            -32602,
            json!(3),
        ),
    ];
    for (name, body, code, id) in cases {
        let answer = send(router(), post("/agents/open", body)).await;
        assert_eq!(answer.status, StatusCode::OK, "{name}: {answer:#?}");
        assert_eq!(answer.body["error"]["code"], code, "{name}: {answer:#?}");
        assert_eq!(answer.body["id"], id, "{name}: {answer:#?}");
    }
}

// ---------------------------------------------------------------- auth

#[tokio::test]
async fn a_protected_agent_without_credentials_gets_401_with_challenges() {
    let answer = rpc_to("/agents/secure", &[], send_text(json!(1), "hi")).await;
    answer.assert_error(
        StatusCode::UNAUTHORIZED,
        -32600,
        &Value::Null,
        &["requires authentication", "X-API-Key", "bearer"],
    );
    let challenges: Vec<&str> = answer
        .headers
        .get_all("www-authenticate")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .collect();
    assert_eq!(
        challenges,
        [
            r#"ApiKey realm="secure", header="X-API-Key", scheme="apiKey""#,
            r#"Bearer realm="secure", scheme="bearer""#,
        ]
    );
    assert_eq!(
        answer.body["error"]["data"]["schemes"],
        json!(["apiKey", "bearer"])
    );
}

#[tokio::test]
async fn a_wrong_credential_gets_401_saying_it_is_not_valid() {
    for header in [("x-api-key", "wrong"), ("authorization", "Bearer wrong")] {
        let answer = rpc_to("/agents/secure", &[header], send_text(json!(1), "hi")).await;
        answer.assert_error(
            StatusCode::UNAUTHORIZED,
            -32600,
            &Value::Null,
            &["not valid"],
        );
        assert!(answer.headers.contains_key("www-authenticate"));
    }
    // A token registered for a scheme is not accepted as a key of another.
    let answer = rpc_to(
        "/agents/secure",
        &[("x-api-key", BEARER)],
        send_text(json!(1), "hi"),
    )
    .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_valid_api_key_or_bearer_token_passes_with_its_principal() {
    let cases = [
        (("x-api-key", API_KEY.to_owned()), "key-holder", "apiKey"),
        (
            ("authorization", format!("Bearer {BEARER}")),
            "alice",
            "bearer",
        ),
    ];
    for ((name, value), principal, scheme) in cases {
        let answer = rpc_to(
            "/agents/secure",
            &[(name, &value)],
            send_text(json!(1), "hi"),
        )
        .await;
        let task = answer.result(&json!(1));
        assert_eq!(task["metadata"]["principal"], principal);
        assert_eq!(task["metadata"]["scheme"], scheme);
    }
}

#[tokio::test]
async fn an_open_agent_takes_anonymous_calls_and_names_authenticated_ones() {
    let answer = rpc_to("/agents/open", &[], send_text(json!(1), "hi")).await;
    assert_eq!(
        answer.result(&json!(1))["metadata"]["principal"],
        Value::Null
    );
    let bearer = format!("Bearer {BEARER}");
    let answer = rpc_to(
        "/agents/open",
        &[("authorization", &bearer)],
        send_text(json!(1), "hi"),
    )
    .await;
    assert_eq!(answer.result(&json!(1))["metadata"]["principal"], "alice");
}

#[tokio::test]
async fn the_extended_card_needs_an_authenticated_caller() {
    let body = || rpc(json!("e"), "agent/getAuthenticatedExtendedCard", json!({}));
    let answer = rpc_to("/agents/secure", &[], body()).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    // An open agent still wants a principal for it, and says which scheme.
    let answer = rpc_to("/agents/open", &[], body()).await;
    answer.assert_error(StatusCode::UNAUTHORIZED, -32600, &json!("e"), &["bearer"]);
    assert!(answer.headers.contains_key("www-authenticate"));

    let answer = rpc_to("/agents/secure", &[("x-api-key", API_KEY)], body()).await;
    let card = answer.result(&json!("e"));
    assert_eq!(card["description"], "extended card for key-holder");
}

#[tokio::test]
async fn an_authenticated_caller_of_an_agent_without_extended_card_gets_32007() {
    let bearer = format!("Bearer {BEARER}");
    let body = rpc(json!(1), "agent/getAuthenticatedExtendedCard", json!({}));
    let answer = rpc_to("/agents/open", &[("authorization", &bearer)], body).await;
    answer.assert_error(StatusCode::OK, -32007, &json!(1), &["open"]);
}

// ---------------------------------------------------------------- extensions

#[tokio::test]
async fn activated_extensions_reach_the_service_and_are_echoed() {
    let requested = format!(" https://unknown.example/ext , {OPTIONAL_EXT},{REQUIRED_EXT} ");
    let answer = rpc_to(
        "/agents/strict",
        &[(EXTENSIONS_HEADER, &requested)],
        send_text(json!(1), "hi"),
    )
    .await;
    let task = answer.result(&json!(1));
    assert_eq!(
        task["metadata"]["extensions"],
        json!([OPTIONAL_EXT, REQUIRED_EXT])
    );
    assert_eq!(
        answer.header(EXTENSIONS_HEADER),
        Some(format!("{OPTIONAL_EXT}, {REQUIRED_EXT}").as_str())
    );
}

#[tokio::test]
async fn no_extension_header_is_echoed_when_none_is_activated() {
    let answer = rpc_to(
        "/agents/open",
        &[(EXTENSIONS_HEADER, "https://unknown.example/ext")],
        send_text(json!(1), "hi"),
    )
    .await;
    assert_eq!(
        answer.result(&json!(1))["metadata"]["extensions"],
        json!([])
    );
    assert_eq!(answer.header(EXTENSIONS_HEADER), None);
}

#[tokio::test]
async fn a_request_that_does_not_activate_a_required_extension_is_rejected() {
    let answer = rpc_to(
        "/agents/strict",
        &[(EXTENSIONS_HEADER, OPTIONAL_EXT)],
        send_text(json!("r"), "hi"),
    )
    .await;
    answer.assert_error(
        StatusCode::OK,
        -32600,
        &json!("r"),
        &[REQUIRED_EXT, EXTENSIONS_HEADER],
    );
    assert_eq!(
        answer.body["error"]["data"]["missingExtensions"],
        json!([REQUIRED_EXT])
    );
    assert_eq!(answer.header(EXTENSIONS_HEADER), Some(OPTIONAL_EXT));
}
