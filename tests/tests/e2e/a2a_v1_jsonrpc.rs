//! The JSON-RPC scenarios of the 0.3 suite again in A2A 1.0, over a real socket:
//! send, stream, get with history length, cancel, subscribe, push-config CRUD,
//! input-required, auth, extensions and each error, in the 1.0 wire form
//! (`SendMessageResponse`/`StreamResponse` wrappers, `TASK_STATE_*`, no `kind`,
//! errors with `ErrorInfo`).

use agentyard::a2a::{AgentExtension, AgentSkill};
use agentyard::edge::{AgentSettings, EdgeAuth};
use agentyard::handoff::HANDOFF_EXTENSION_URI;
use agentyard_tests::PATIENCE;
use agentyard_tests::http::{TestEdge, WebhookReceiver, sse_data};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

const V1: (&str, &str) = ("A2A-Version", "1.0");

fn message(text: &str) -> Value {
    json!({"messageId": format!("m-{text}-{}", rand_suffix()), "role": "ROLE_USER",
           "parts": [{"text": text}]})
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A 1.0 call to `agent` with the 1.0 header and `headers`.
async fn call_with(
    edge: &TestEdge,
    agent: &str,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> (StatusCode, HeaderMap, Value) {
    let body = json!({"jsonrpc": "2.0", "id": "v1", "method": method, "params": params});
    let mut all = vec![V1];
    all.extend_from_slice(headers);
    edge.post_raw(&format!("/agents/{agent}"), body.to_string(), &all)
        .await
}

/// The result of a 1.0 call that must succeed.
async fn result(edge: &TestEdge, agent: &str, method: &str, params: Value) -> Value {
    let (status, _, body) = call_with(edge, agent, method, params, &[]).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("error").is_none(), "{method}: {body}");
    body["result"].clone()
}

/// The error of a 1.0 call that must fail: its code and `ErrorInfo` reason.
async fn error(edge: &TestEdge, agent: &str, method: &str, params: Value) -> (i64, String) {
    let (_, _, body) = call_with(edge, agent, method, params, &[]).await;
    let error = &body["error"];
    assert_eq!(
        error["data"][0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
        "{body}"
    );
    (
        error["code"].as_i64().unwrap_or_default(),
        error["data"][0]["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// A 1.0 streaming call: every SSE `data:` payload, read until the server closes.
async fn stream(edge: &TestEdge, agent: &str, method: &str, params: Value) -> Vec<Value> {
    let body = json!({"jsonrpc": "2.0", "id": "s1", "method": method, "params": params});
    let mut response = edge
        .http()
        .post(edge.agent_url(agent))
        .header("content-type", "application/json")
        .header(V1.0, V1.1)
        .body(body.to_string())
        .send()
        .await
        .expect("the server answers");
    let mut text = String::new();
    while let Some(chunk) = tokio::time::timeout(PATIENCE, response.chunk())
        .await
        .expect("the stream ends in time")
        .expect("a chunk")
    {
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    sse_data(&text)
}

/// Asserts no object anywhere in `value` has a 0.3 `kind` or `final` member.
#[track_caller]
fn assert_no_v03_members(value: &Value) {
    match value {
        Value::Object(members) => {
            assert!(!members.contains_key("kind"), "0.3 `kind` in {value}");
            assert!(!members.contains_key("final"), "0.3 `final` in {value}");
            members.values().for_each(assert_no_v03_members);
        }
        Value::Array(items) => items.iter().for_each(assert_no_v03_members),
        _ => {}
    }
}

/// Starts a `gated` task without waiting (`returnImmediately`); returns its id.
async fn start_gated(edge: &TestEdge) -> String {
    let task = result(
        edge,
        "gated",
        "SendMessage",
        json!({"message": message("job"), "configuration": {"returnImmediately": true}}),
    )
    .await;
    let state = task["task"]["status"]["state"].as_str().unwrap_or_default();
    assert!(
        ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"].contains(&state),
        "{task}"
    );
    task["task"]["id"].as_str().expect("a task id").to_owned()
}

#[tokio::test]
async fn send_answers_with_the_task_wrapper() {
    let edge = TestEdge::start().await;
    let answer = result(
        &edge,
        "echo",
        "SendMessage",
        json!({"message": message("hi"), "tenant": "t"}),
    )
    .await;
    assert_no_v03_members(&answer);
    let task = &answer["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    assert!(answer.to_string().contains("echo: hi"), "{answer}");
    assert_eq!(task["history"][0]["role"], "ROLE_USER", "{answer}");
    edge.stop().await;
}

#[tokio::test]
async fn stream_sends_stream_responses_and_closes_after_the_last_state() {
    let edge = TestEdge::start().await;
    let events = stream(
        &edge,
        "chunks",
        "SendStreamingMessage",
        json!({"message": message("go")}),
    )
    .await;
    assert!(events.len() >= 3, "{events:#?}");
    for event in &events {
        assert_eq!(event["id"], "s1", "{event}");
        let result = event["result"].as_object().expect("a result");
        assert_eq!(result.len(), 1, "one member of the oneof: {event}");
        let member = result.keys().next().map(String::as_str).unwrap_or_default();
        assert!(
            ["task", "message", "statusUpdate", "artifactUpdate"].contains(&member),
            "{event}"
        );
        assert_no_v03_members(event);
    }
    assert!(events[0]["result"].get("task").is_some(), "{events:#?}");
    assert!(
        events
            .iter()
            .any(|e| e["result"].get("artifactUpdate").is_some()),
        "{events:#?}"
    );
    let last = events.last().expect("events");
    assert_eq!(
        last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{events:#?}"
    );
    edge.stop().await;
}

#[tokio::test]
async fn get_task_honours_history_length_and_zero_means_none() {
    let edge = TestEdge::start().await;
    let sent = result(
        &edge,
        "echo",
        "SendMessage",
        json!({"message": message("hi")}),
    )
    .await;
    let id = sent["task"]["id"].clone();
    let whole = result(&edge, "echo", "GetTask", json!({"id": id})).await;
    assert_no_v03_members(&whole);
    assert_eq!(whole["status"]["state"], "TASK_STATE_COMPLETED", "{whole}");
    let history = whole["history"].as_array().expect("history").len();
    assert!(history >= 1, "{whole}");
    let one = result(
        &edge,
        "echo",
        "GetTask",
        json!({"id": id, "historyLength": 1}),
    )
    .await;
    assert_eq!(one["history"].as_array().map(Vec::len), Some(1), "{one}");
    let none = result(
        &edge,
        "echo",
        "GetTask",
        json!({"id": id, "historyLength": 0}),
    )
    .await;
    assert!(none.get("history").is_none(), "{none}");
    edge.stop().await;
}

#[tokio::test]
async fn cancel_task_cancels_and_a_settled_task_is_not_cancelable() {
    let edge = TestEdge::start().await;
    let id = start_gated(&edge).await;
    let canceled = result(&edge, "gated", "CancelTask", json!({"id": id})).await;
    assert_eq!(
        canceled["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    let (code, reason) = error(&edge, "gated", "CancelTask", json!({"id": id})).await;
    assert_eq!((code, reason.as_str()), (-32002, "TASK_NOT_CANCELABLE"));
    edge.stop().await;
}

#[tokio::test]
async fn subscribe_to_task_streams_until_the_task_ends() {
    let edge = TestEdge::start().await;
    let id = start_gated(&edge).await;
    let subscriber = {
        let events = stream(&edge, "gated", "SubscribeToTask", json!({"id": id}));
        let open = async {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            edge.open_gate(1);
        };
        let (events, ()) = tokio::join!(events, open);
        events
    };
    assert_eq!(
        subscriber[0]["result"]["task"]["id"],
        json!(id),
        "{subscriber:#?}"
    );
    let last = subscriber.last().expect("events");
    assert_eq!(
        last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{subscriber:#?}"
    );
    subscriber.iter().for_each(assert_no_v03_members);

    // The task has ended: 1.0 refuses to subscribe (0.3 streams the task alone).
    let events = stream(&edge, "gated", "SubscribeToTask", json!({"id": id})).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["error"]["code"], -32004, "{events:#?}");
    assert_eq!(
        events[0]["error"]["data"][0]["reason"], "UNSUPPORTED_OPERATION",
        "{events:#?}"
    );
    let legacy = edge
        .sse("gated", "tasks/resubscribe", json!({"id": id}))
        .await;
    assert_eq!(legacy.len(), 1, "{legacy:#?}");
    assert_eq!(legacy[0]["result"]["kind"], "task", "{legacy:#?}");
    edge.stop().await;
}

#[tokio::test]
async fn push_configs_are_created_read_listed_and_deleted_flat() {
    let receiver = WebhookReceiver::start(&[]).await;
    let edge = TestEdge::start().await;
    let id = start_gated(&edge).await;
    let created = result(
        &edge,
        "gated",
        "CreateTaskPushNotificationConfig",
        json!({"taskId": id, "id": "hook-1", "url": receiver.url(), "token": "tok"}),
    )
    .await;
    assert_eq!(created["taskId"], json!(id), "{created}");
    assert_eq!(created["id"], "hook-1", "{created}");
    assert_eq!(created["url"], receiver.url(), "{created}");
    assert!(
        created.get("pushNotificationConfig").is_none(),
        "flat: {created}"
    );
    let got = result(
        &edge,
        "gated",
        "GetTaskPushNotificationConfig",
        json!({"taskId": id, "id": "hook-1"}),
    )
    .await;
    assert_eq!(got, created);
    let listed = result(
        &edge,
        "gated",
        "ListTaskPushNotificationConfigs",
        json!({"taskId": id}),
    )
    .await;
    assert_eq!(listed["configs"], json!([created]), "{listed}");
    let deleted = result(
        &edge,
        "gated",
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": id, "id": "hook-1"}),
    )
    .await;
    assert_eq!(deleted, json!({}));
    let listed = result(
        &edge,
        "gated",
        "ListTaskPushNotificationConfigs",
        json!({"taskId": id}),
    )
    .await;
    assert!(listed.get("configs").is_none(), "{listed}");
    edge.open_gate(1);
    edge.stop().await;
}

#[tokio::test]
async fn input_required_round_trip_and_the_stream_closes_at_the_question() {
    let edge = TestEdge::start().await;
    let asked = result(
        &edge,
        "ask",
        "SendMessage",
        json!({"message": message("paint it")}),
    )
    .await;
    let task = &asked["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{asked}"
    );
    let mut reply = message("red");
    reply["taskId"] = task["id"].clone();
    reply["contextId"] = task["contextId"].clone();
    let answered = result(&edge, "ask", "SendMessage", json!({"message": reply})).await;
    assert_eq!(
        answered["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    assert!(answered.to_string().contains("answer: red"), "{answered}");

    let events = stream(
        &edge,
        "ask",
        "SendStreamingMessage",
        json!({"message": message("again")}),
    )
    .await;
    let last = events.last().expect("events");
    assert_eq!(
        last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "the stream closes at the interrupted state: {events:#?}"
    );
    edge.stop().await;
}

#[tokio::test]
async fn auth_is_enforced_and_the_extended_card_is_1_0() {
    const TOKEN: &str = "token-for-alice";
    let edge = TestEdge::start_with(
        TestEdge::config()
            .auth(EdgeAuth::default().bearer_token(TOKEN, "alice"))
            .agent_settings(
                "echo",
                AgentSettings::default().extended_skills(vec![AgentSkill::new(
                    "admin",
                    "Admin",
                    "Operator-only tools",
                )]),
            ),
    )
    .await;
    let (status, headers, _) = call_with(
        &edge,
        "echo",
        "SendMessage",
        json!({"message": message("hi")}),
        &[],
    )
    .await;
    assert_eq!(status, 401);
    assert!(headers.contains_key("www-authenticate"));
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("authorization", bearer.as_str())];
    let (status, _, body) = call_with(
        &edge,
        "echo",
        "SendMessage",
        json!({"message": message("hi")}),
        &auth,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{body}"
    );
    let (status, _, _) = call_with(&edge, "echo", "GetExtendedAgentCard", json!({}), &[]).await;
    assert_eq!(status, 401);
    let (_, _, body) = call_with(&edge, "echo", "GetExtendedAgentCard", json!({}), &auth).await;
    let card = &body["result"];
    assert_eq!(
        card["supportedInterfaces"][0]["protocolVersion"], "1.0",
        "{body}"
    );
    assert_eq!(
        card["supportedInterfaces"][1]["protocolVersion"], "0.3",
        "{body}"
    );
    assert!(card.get("url").is_none(), "a pure 1.0 card: {body}");
    assert!(body.to_string().contains("Operator-only tools"), "{body}");
    edge.stop().await;
}

#[tokio::test]
async fn extensions_use_a2a_extensions_and_a_missing_required_one_is_32008() {
    let edge = TestEdge::start().await;
    // 1.0 reads and echoes `A2A-Extensions`; it does not read the 0.3 spelling.
    let (_, headers, body) = call_with(
        &edge,
        "echo",
        "SendMessage",
        json!({"message": message("hi")}),
        &[("A2A-Extensions", HANDOFF_EXTENSION_URI)],
    )
    .await;
    assert!(body.get("result").is_some(), "{body}");
    assert_eq!(headers["a2a-extensions"], HANDOFF_EXTENSION_URI);
    let (_, headers, _) = call_with(
        &edge,
        "echo",
        "SendMessage",
        json!({"message": message("hi")}),
        &[("X-A2A-Extensions", HANDOFF_EXTENSION_URI)],
    )
    .await;
    assert!(!headers.contains_key("a2a-extensions") && !headers.contains_key("x-a2a-extensions"));
    // 0.3 accepts `A2A-Extensions` too and echoes the spelling it was sent in.
    let (_, headers, body) = edge
        .rpc_with(
            "echo",
            "message/send",
            json!({"message": agentyard_tests::http::text_message("hi")}),
            &[("A2A-Extensions", HANDOFF_EXTENSION_URI)],
        )
        .await;
    assert_eq!(body["result"]["kind"], "task", "{body}");
    assert_eq!(headers["a2a-extensions"], HANDOFF_EXTENSION_URI);
    assert!(!headers.contains_key("x-a2a-extensions"));
    edge.stop().await;

    const SIGNED: &str = "https://example.com/ext/signed/v1";
    let settings = AgentSettings::default().extension(AgentExtension {
        uri: SIGNED.to_owned(),
        description: None,
        required: Some(true),
        params: None,
    });
    let edge = TestEdge::start_with(TestEdge::config().agent_settings("echo", settings)).await;
    let (_, _, body) = call_with(
        &edge,
        "echo",
        "SendMessage",
        json!({"message": message("hi")}),
        &[],
    )
    .await;
    assert_eq!(body["error"]["code"], -32008, "{body}");
    assert_eq!(
        body["error"]["data"][0]["reason"], "EXTENSION_SUPPORT_REQUIRED",
        "{body}"
    );
    assert_eq!(
        body["error"]["data"][0]["metadata"]["requiredExtensions"], SIGNED,
        "{body}"
    );
    let (_, _, body) = call_with(
        &edge,
        "echo",
        "SendMessage",
        json!({"message": message("hi")}),
        &[("A2A-Extensions", SIGNED)],
    )
    .await;
    assert!(body.get("result").is_some(), "{body}");
    // 0.3 keeps its -32600.
    let (_, _, body) = edge
        .rpc_with(
            "echo",
            "message/send",
            json!({"message": agentyard_tests::http::text_message("hi")}),
            &[],
        )
        .await;
    assert_eq!(body["error"]["code"], -32600, "{body}");
    edge.stop().await;
}

#[tokio::test]
async fn each_error_comes_in_the_1_0_form() {
    let edge = TestEdge::start().await;
    let (code, reason) = error(&edge, "echo", "GetTask", json!({"id": "no-such-task"})).await;
    assert_eq!((code, reason.as_str()), (-32001, "TASK_NOT_FOUND"));
    let (code, reason) = error(&edge, "echo", "CancelTask", json!({"id": "no-such-task"})).await;
    assert_eq!((code, reason.as_str()), (-32001, "TASK_NOT_FOUND"));
    let (code, reason) = error(&edge, "echo", "SendMessage", json!({})).await;
    assert_eq!((code, reason.as_str()), (-32602, "INVALID_PARAMS"));
    let (_, _, body) = call_with(
        &edge,
        "echo",
        "SendMessage",
        json!({"message": {"role": "ROLE_USER"}}),
        &[],
    )
    .await;
    let details = body["error"]["data"].as_array().expect("details");
    assert!(
        details
            .iter()
            .any(|d| d["@type"] == "type.googleapis.com/google.rpc.BadRequest"),
        "{body}"
    );
    let (code, reason) = error(&edge, "echo", "ListTasks", json!({"pageSize": 0})).await;
    assert_eq!((code, reason.as_str()), (-32602, "INVALID_PARAMS"));
    // The extended card is for authenticated callers: HTTP 401, as in 0.3.
    let (status, _, _) = call_with(&edge, "echo", "GetExtendedAgentCard", json!({}), &[]).await;
    assert_eq!(status, 401);
    let (code, _) = error(
        &edge,
        "texty",
        "SendMessage",
        json!({"message": {
        "messageId": "m-x", "role": "ROLE_USER", "parts": [{"data": {"a": 1}}]}}),
    )
    .await;
    assert_eq!(code, -32005);
    // A stream's error is one SSE event in the 1.0 form.
    let events = stream(
        &edge,
        "echo",
        "SubscribeToTask",
        json!({"id": "no-such-task"}),
    )
    .await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["error"]["code"], -32001, "{events:#?}");
    assert_eq!(
        events[0]["error"]["data"][0]["reason"], "TASK_NOT_FOUND",
        "{events:#?}"
    );
    edge.stop().await;
}

#[tokio::test]
async fn each_webhook_gets_the_body_of_the_version_it_was_registered_in() {
    let v1_hook = WebhookReceiver::start(&[]).await;
    let v03_hook = WebhookReceiver::start(&[]).await;
    let edge = TestEdge::start().await;
    // Registered with the 1.0 send itself, with `authentication`.
    let answer = result(
        &edge,
        "gated",
        "SendMessage",
        json!({
            "message": message("job"),
            "configuration": {
                "returnImmediately": true,
                "taskPushNotificationConfig": {
                    "id": "v1", "url": v1_hook.url(),
                    "authentication": {"scheme": "Bearer", "credentials": "secret"}
                }
            }
        }),
    )
    .await;
    let id = answer["task"]["id"].as_str().expect("a task id").to_owned();
    // And one registered over 0.3 on the same task.
    let body = edge
        .rpc(
            "gated",
            "tasks/pushNotificationConfig/set",
            json!({"taskId": id, "pushNotificationConfig": {"id": "v03", "url": v03_hook.url()}}),
        )
        .await;
    assert!(body.get("result").is_some(), "{body}");
    edge.open_gate(1);
    let completed = |d: &agentyard_tests::http::Delivery| {
        d.body["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            || d.body["status"]["state"] == "completed"
    };
    let v1 = v1_hook
        .wait_for("the 1.0 completed notification", completed)
        .await;
    let last = v1.last().expect("a delivery");
    assert_eq!(last.body["task"]["id"], json!(id), "{:?}", last.body);
    assert_no_v03_members(&last.body);
    assert_eq!(last.headers["content-type"], "application/a2a+json");
    assert_eq!(last.headers["authorization"], "Bearer secret");
    let v03 = v03_hook
        .wait_for("the 0.3 completed notification", completed)
        .await;
    let last = v03.last().expect("a delivery");
    assert_eq!(last.body["kind"], "task", "{:?}", last.body);
    assert_eq!(last.headers["content-type"], "application/json");
    edge.stop().await;
}
