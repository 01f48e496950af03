//! Callers are isolated from each other: a task is found only at the
//! endpoint of the agent it was created for, a task of an agent that is not exposed
//! does not exist from outside, and with authentication on a task and its conversation
//! belong to the principal that created them. Everyone else gets `TaskNotFound`
//! (-32001), word for word what an unknown id gets.

use agentyard::edge::EdgeAuth;
use agentyard::{Message, SendRequest};
use agentyard_tests::http::{TestEdge, sse_data, text_message};
use serde_json::{Value, json};

const ALICE: &str = "token-for-alice";
const BOB: &str = "token-for-bob";

async fn secured() -> TestEdge {
    let auth = EdgeAuth::default()
        .bearer_token(ALICE, "alice")
        .bearer_token(BOB, "bob");
    TestEdge::start_with(TestEdge::config().auth(auth)).await
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// Calls `method` on `agent` with an optional bearer token and returns the JSON-RPC
/// response, whether it came as JSON or as the first event of an SSE stream.
async fn call(
    edge: &TestEdge,
    agent: &str,
    token: Option<&str>,
    method: &str,
    params: Value,
) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let mut request = edge
        .http()
        .post(edge.agent_url(agent))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.header("authorization", bearer(token));
    }
    let response = request.send().await.expect("the server answers");
    let streamed = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let text = response.text().await.expect("a body");
    if streamed {
        sse_data(&text).into_iter().next().expect("one event")
    } else {
        serde_json::from_str(&text).expect("a JSON body")
    }
}

/// The task methods that name a task by id, with their params.
fn task_methods(task_id: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("tasks/get", json!({"id": task_id})),
        ("tasks/cancel", json!({"id": task_id})),
        ("tasks/resubscribe", json!({"id": task_id})),
        (
            "tasks/pushNotificationConfig/set",
            json!({"taskId": task_id,
                   "pushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}}),
        ),
        ("tasks/pushNotificationConfig/get", json!({"id": task_id})),
        ("tasks/pushNotificationConfig/list", json!({"id": task_id})),
        (
            "tasks/pushNotificationConfig/delete",
            json!({"id": task_id, "pushNotificationConfigId": "c"}),
        ),
    ]
}

/// Asserts that `response` is the -32001 an unknown id gets.
fn assert_not_found(response: &Value, task_id: &str, what: &str) {
    assert_eq!(response["error"]["code"], -32001, "{what}: {response}");
    assert_eq!(
        response["error"]["message"],
        format!("task `{task_id}` not found"),
        "{what}: the same words as for an unknown id"
    );
    assert!(response.get("result").is_none(), "{what}: {response}");
}

fn id_of(response: &Value) -> String {
    response["result"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {response}"))
        .to_owned()
}

#[tokio::test]
async fn a_task_is_not_found_at_another_agents_endpoint() {
    let edge = TestEdge::start().await;
    let created = call(
        &edge,
        "echo",
        None,
        "message/send",
        json!({"message": text_message("hi")}),
    )
    .await;
    let task_id = id_of(&created);
    for (method, params) in task_methods(&task_id) {
        let response = call(&edge, "probe", None, method, params).await;
        assert_not_found(&response, &task_id, &format!("{method} at probe"));
    }
    // Continuing it from another agent's endpoint is refused the same way.
    let mut message = text_message("more");
    message["taskId"] = json!(task_id);
    let response = call(
        &edge,
        "probe",
        None,
        "message/send",
        json!({"message": message}),
    )
    .await;
    assert_not_found(&response, &task_id, "message/send at probe");
    // At its own agent it is there.
    let found = call(&edge, "echo", None, "tasks/get", json!({"id": task_id})).await;
    assert_eq!(found["result"]["id"], task_id.as_str(), "{found}");
    edge.stop().await;
}

#[tokio::test]
async fn a_task_of_an_agent_that_is_not_exposed_is_not_found() {
    let edge = TestEdge::start().await;
    let inside = edge
        .runtime
        .supervisor()
        .send_and_wait(SendRequest::new("internal", Message::user_text("private")))
        .await
        .expect("the internal agent answers in-process");
    let task_id = inside.task.id.to_string();
    for agent in ["echo", "probe"] {
        for (method, params) in task_methods(&task_id) {
            let response = call(&edge, agent, None, method, params).await;
            assert_not_found(&response, &task_id, &format!("{method} at {agent}"));
        }
    }
    edge.stop().await;
}

#[tokio::test]
async fn another_principal_cannot_get_cancel_resubscribe_or_continue_a_task() {
    let edge = secured().await;
    // Alice's task waits for her answer: still open to cancel and to continue.
    let asked = call(
        &edge,
        "ask",
        Some(ALICE),
        "message/send",
        json!({"message": text_message("paint it")}),
    )
    .await;
    assert_eq!(
        asked["result"]["status"]["state"], "input-required",
        "{asked}"
    );
    let task_id = id_of(&asked);
    let context_id = asked["result"]["contextId"]
        .as_str()
        .expect("a contextId")
        .to_owned();

    for (method, params) in task_methods(&task_id) {
        let response = call(&edge, "ask", Some(BOB), method, params).await;
        assert_not_found(&response, &task_id, &format!("bob's {method}"));
    }
    let mut answer = text_message("black");
    answer["taskId"] = json!(task_id);
    let response = call(
        &edge,
        "ask",
        Some(BOB),
        "message/send",
        json!({"message": answer.clone()}),
    )
    .await;
    assert_not_found(&response, &task_id, "bob continuing the task");

    // Bob naming Alice's conversation gets one of his own; hers is untouched.
    let mut intruder = text_message("what did alice say?");
    intruder["contextId"] = json!(context_id);
    let response = call(
        &edge,
        "echo",
        Some(BOB),
        "message/send",
        json!({"message": intruder}),
    )
    .await;
    assert_eq!(
        response["result"]["status"]["state"], "completed",
        "{response}"
    );
    assert_ne!(
        response["result"]["contextId"], context_id,
        "bob's message went into a conversation of his own"
    );
    assert_eq!(
        response["result"]["history"].as_array().map(Vec::len),
        Some(2),
        "bob's task holds his message and its answer only: {response}"
    );

    // Alice still has her task, as she left it, and can finish it.
    let hers = call(
        &edge,
        "ask",
        Some(ALICE),
        "tasks/get",
        json!({"id": task_id}),
    )
    .await;
    assert_eq!(
        hers["result"]["status"]["state"], "input-required",
        "{hers}"
    );
    assert_eq!(
        hers["result"]["history"].as_array().map(Vec::len),
        Some(2),
        "nothing of bob's reached it: {hers}"
    );
    let done = call(
        &edge,
        "ask",
        Some(ALICE),
        "message/send",
        json!({"message": answer}),
    )
    .await;
    assert_eq!(done["result"]["status"]["state"], "completed", "{done}");
    edge.stop().await;
}

#[tokio::test]
async fn a_principal_finds_its_own_tasks_and_resubscribes_to_them() {
    let edge = secured().await;
    let created = call(
        &edge,
        "echo",
        Some(ALICE),
        "message/send",
        json!({"message": text_message("mine")}),
    )
    .await;
    let task_id = id_of(&created);
    let got = call(
        &edge,
        "echo",
        Some(ALICE),
        "tasks/get",
        json!({"id": task_id}),
    )
    .await;
    assert_eq!(got["result"]["id"], task_id.as_str(), "{got}");
    let resubscribed = call(
        &edge,
        "echo",
        Some(ALICE),
        "tasks/resubscribe",
        json!({"id": task_id}),
    )
    .await;
    assert_eq!(
        resubscribed["result"]["id"],
        task_id.as_str(),
        "{resubscribed}"
    );
    edge.stop().await;
}
