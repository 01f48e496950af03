//! Idempotency keys are per caller: an HTTP caller sets a key with
//! the `Idempotency-Key` header; a repeat by the same principal within the TTL returns
//! the first task marked `"agentyard.deduplicated": true`, even after the store's
//! finished-task limit would have forgotten it; another principal with the same key,
//! or the same handoff `taskId`, gets a task of its own; a repeated `messageId` alone
//! is not a key.

use agentyard::InMemoryTaskStore;
use agentyard::edge::EdgeAuth;
use agentyard::handoff::HANDOFF_EXTENSION_URI;
use agentyard::handoff::{self, HandoffPayload, TaskDelegation};
use agentyard::{Role, TaskState};
use agentyard_tests::http::{TestEdge, sse_data, text_message};
use serde_json::{Value, json};

const ALICE: &str = "token-for-alice";
const BOB: &str = "token-for-bob";
const MARK: &str = "agentyard.deduplicated";

async fn secured_with(store: Option<InMemoryTaskStore>) -> TestEdge {
    let auth = EdgeAuth::default()
        .bearer_token(ALICE, "alice")
        .bearer_token(BOB, "bob");
    TestEdge::start_custom(TestEdge::config().auth(auth), move |builder| match store {
        Some(store) => builder.store(store),
        None => builder,
    })
    .await
}

/// `message/send` to `agent` as the holder of `token`, with extra headers.
async fn send(
    edge: &TestEdge,
    agent: &str,
    token: &str,
    message: Value,
    headers: &[(&str, &str)],
) -> Value {
    let authorization = format!("Bearer {token}");
    let mut all = vec![("authorization", authorization.as_str())];
    all.extend_from_slice(headers);
    let (status, _, body) = edge
        .rpc_with(agent, "message/send", json!({"message": message}), &all)
        .await;
    assert_eq!(status, 200, "{body}");
    body
}

fn id_of(response: &Value) -> &str {
    response["result"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {response}"))
}

fn reply_of(response: &Value) -> &str {
    response["result"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test]
async fn a_repeat_by_the_same_principal_returns_the_first_task_marked_deduplicated() {
    let edge = secured_with(None).await;
    let key = [("idempotency-key", "order-7")];
    let first = send(&edge, "echo", ALICE, text_message("place order 7"), &key).await;
    let again = send(&edge, "echo", ALICE, text_message("place it again"), &key).await;
    assert_eq!(id_of(&again), id_of(&first), "{again}");
    assert_eq!(
        reply_of(&again),
        "echo: place order 7",
        "the agent ran once"
    );
    assert_eq!(again["result"]["metadata"][MARK], true, "{again}");
    assert!(first["result"]["metadata"].get(MARK).is_none(), "{first}");
    // The mark is on the repeat's answer, never on the stored task.
    let (_, _, stored) = edge
        .rpc_with(
            "echo",
            "tasks/get",
            json!({"id": id_of(&first)}),
            &[("authorization", &format!("Bearer {ALICE}"))],
        )
        .await;
    assert!(stored["result"]["metadata"].get(MARK).is_none(), "{stored}");
    edge.stop().await;
}

#[tokio::test]
async fn a_streamed_repeat_starts_with_the_first_task_marked_deduplicated() {
    let edge = secured_with(None).await;
    let key = [("idempotency-key", "stream-1")];
    let first = send(&edge, "echo", ALICE, text_message("once"), &key).await;
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "message/stream",
                      "params": {"message": text_message("twice")}});
    let text = edge
        .http()
        .post(edge.agent_url("echo"))
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .header("authorization", format!("Bearer {ALICE}"))
        .header("idempotency-key", "stream-1")
        .body(body.to_string())
        .send()
        .await
        .expect("the server answers")
        .text()
        .await
        .expect("a body");
    let events = sse_data(&text);
    let task = &events.first().expect("one event at least")["result"];
    assert_eq!(task["kind"], "task", "{text}");
    assert_eq!(task["id"], id_of(&first), "{text}");
    assert_eq!(task["metadata"][MARK], true, "{text}");
    edge.stop().await;
}

#[tokio::test]
async fn two_principals_with_the_same_key_get_two_tasks() {
    let edge = secured_with(None).await;
    let key = [("idempotency-key", "shared-key")];
    let alices = send(&edge, "echo", ALICE, text_message("alice's order"), &key).await;
    let bobs = send(&edge, "echo", BOB, text_message("bob's order"), &key).await;
    let alices_again = send(&edge, "echo", ALICE, text_message("again"), &key).await;
    let bobs_again = send(&edge, "echo", BOB, text_message("again"), &key).await;
    assert_eq!(id_of(&alices_again), id_of(&alices), "{alices_again}");
    assert_eq!(id_of(&bobs_again), id_of(&bobs), "{bobs_again}");
    assert_ne!(id_of(&alices), id_of(&bobs));
    assert_eq!(reply_of(&bobs), "echo: bob's order", "bob's own agent run");
    assert!(bobs["result"]["metadata"].get(MARK).is_none(), "{bobs}");
    edge.stop().await;
}

#[tokio::test]
async fn two_principals_with_the_same_handoff_task_id_get_two_tasks() {
    let edge = secured_with(None).await;
    let payload = HandoffPayload::from(
        TaskDelegation::builder()
            .task_id("job-1")
            .task_title("Review")
            .task_description("Review PR #1")
            .build()
            .expect("a valid delegation"),
    );
    let message =
        serde_json::to_value(handoff::into_message(Role::User, "review", &payload)).expect("JSON");
    let extension = [("x-a2a-extensions", HANDOFF_EXTENSION_URI)];
    let alices = send(&edge, "probe", ALICE, message.clone(), &extension).await;
    let alices_again = send(&edge, "probe", ALICE, message.clone(), &extension).await;
    let bobs = send(&edge, "probe", BOB, message, &extension).await;
    assert_eq!(
        id_of(&alices_again),
        id_of(&alices),
        "the payload's taskId is alice's key"
    );
    assert_ne!(id_of(&bobs), id_of(&alices), "and not bob's: {bobs}");
    edge.stop().await;
}

#[tokio::test]
async fn a_remembered_key_still_returns_its_task_after_the_finished_limit_passes_it() {
    let edge = secured_with(Some(InMemoryTaskStore::new().finished_task_limit(2))).await;
    let key = [("idempotency-key", "kept")];
    let keyed = send(&edge, "echo", ALICE, text_message("keep me"), &key).await;
    let unkeyed = send(&edge, "echo", ALICE, text_message("forget me"), &[]).await;
    for n in 0..5 {
        send(
            &edge,
            "echo",
            ALICE,
            text_message(&format!("filler {n}")),
            &[],
        )
        .await;
    }
    let auth = format!("Bearer {ALICE}");
    let get = |id: String| {
        let edge = &edge;
        let auth = auth.clone();
        async move {
            edge.rpc_with(
                "echo",
                "tasks/get",
                json!({"id": id}),
                &[("authorization", &auth)],
            )
            .await
            .2
        }
    };
    // The store forgets ended tasks past its limit...
    let forgotten = get(id_of(&unkeyed).to_owned()).await;
    assert_eq!(forgotten["error"]["code"], -32001, "{forgotten}");
    // ...but not one its remembered key names.
    let kept = get(id_of(&keyed).to_owned()).await;
    assert_eq!(kept["result"]["id"], id_of(&keyed), "{kept}");
    let again = send(&edge, "echo", ALICE, text_message("keep me (retry)"), &key).await;
    assert_eq!(id_of(&again), id_of(&keyed), "{again}");
    assert_eq!(again["result"]["metadata"][MARK], true, "{again}");
    assert_eq!(
        again["result"]["status"]["state"],
        json!(TaskState::Completed),
        "{again}"
    );
    edge.stop().await;
}

#[tokio::test]
async fn the_same_message_id_without_a_key_makes_two_tasks() {
    let edge = secured_with(None).await;
    let message = text_message("same message twice");
    let first = send(&edge, "echo", ALICE, message.clone(), &[]).await;
    let second = send(&edge, "echo", ALICE, message, &[]).await;
    assert_ne!(id_of(&first), id_of(&second));
    assert!(second["result"]["metadata"].get(MARK).is_none(), "{second}");
    edge.stop().await;
}

#[tokio::test]
async fn a_malformed_idempotency_key_is_invalid_params() {
    let edge = secured_with(None).await;
    let long = "k".repeat(300);
    let response = send(
        &edge,
        "echo",
        ALICE,
        text_message("hi"),
        &[("idempotency-key", &long)],
    )
    .await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(
        response["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Idempotency-Key")),
        "{response}"
    );
    edge.stop().await;
}

#[tokio::test]
async fn two_sending_agents_with_the_same_key_get_two_tasks() {
    let edge = secured_with(None).await;
    let supervisor = edge.runtime.supervisor();
    let from = |sender: &str| {
        agentyard::SendRequest::new("echo", agentyard::Message::user_text(sender))
            .from(sender)
            .idempotency_key("job-9")
    };
    let a = supervisor
        .send_and_wait(from("planner-a"))
        .await
        .expect("a");
    let a_again = supervisor
        .send_and_wait(from("planner-a"))
        .await
        .expect("a");
    let b = supervisor
        .send_and_wait(from("planner-b"))
        .await
        .expect("b");
    assert_eq!(a_again.task.id, a.task.id);
    assert!(a_again.deduplicated);
    assert_ne!(b.task.id, a.task.id, "another sender's key is another key");
    assert!(!b.deduplicated);
    edge.stop().await;
}
