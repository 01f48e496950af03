//! `ListTasks` (A2A 1.0) over a real socket: only the caller's tasks at this agent's
//! endpoint, most recently changed first, paged with opaque tokens and `totalSize`,
//! the filters, and each bad parameter named.

use agentyard::edge::EdgeAuth;
use agentyard_tests::http::TestEdge;
use serde_json::{Value, json};

const ALICE: &str = "Bearer token-for-alice";
const BOB: &str = "Bearer token-for-bob";

async fn edge() -> TestEdge {
    TestEdge::start_with(
        TestEdge::config().auth(
            EdgeAuth::default()
                .bearer_token("token-for-alice", "alice")
                .bearer_token("token-for-bob", "bob"),
        ),
    )
    .await
}

async fn call(edge: &TestEdge, agent: &str, who: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, _, answer) = edge
        .post_raw(
            &format!("/agents/{agent}"),
            body.to_string(),
            &[("A2A-Version", "1.0"), ("authorization", who)],
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    answer
}

async fn send(edge: &TestEdge, agent: &str, who: &str, text: &str) -> Value {
    let message = json!({"messageId": format!("m-{who}-{text}"), "role": "ROLE_USER",
                         "parts": [{"text": text}]});
    let answer = call(edge, agent, who, "SendMessage", json!({"message": message})).await;
    answer["result"]["task"].clone()
}

async fn list(edge: &TestEdge, agent: &str, who: &str, params: Value) -> Value {
    let answer = call(edge, agent, who, "ListTasks", params).await;
    assert!(answer.get("error").is_none(), "{answer}");
    answer["result"].clone()
}

fn ids(page: &Value) -> Vec<String> {
    page["tasks"]
        .as_array()
        .map(|tasks| {
            tasks
                .iter()
                .map(|task| task["id"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_caller_pages_through_its_own_tasks_newest_first() {
    let edge = edge().await;
    let mut mine = Vec::new();
    for text in ["one", "two", "three"] {
        mine.push(send(&edge, "echo", ALICE, text).await["id"].clone());
    }
    let theirs = send(&edge, "echo", BOB, "bob's").await;
    // A task of another agent is not listed at this one's endpoint.
    send(&edge, "chunks", ALICE, "elsewhere").await;

    let first = list(&edge, "echo", ALICE, json!({"pageSize": 2})).await;
    assert_eq!(first["totalSize"], 3, "{first}");
    assert_eq!(first["pageSize"], 2, "{first}");
    assert_eq!(
        ids(&first),
        [&mine[2], &mine[1]].map(|id| id.as_str().unwrap_or_default().to_owned())
    );
    let token = first["nextPageToken"].as_str().expect("a token").to_owned();
    assert!(!token.is_empty(), "{first}");
    let second = list(
        &edge,
        "echo",
        ALICE,
        json!({"pageSize": 2, "pageToken": token}),
    )
    .await;
    assert_eq!(ids(&second), [mine[0].as_str().unwrap_or_default()]);
    assert_eq!(second["nextPageToken"], "", "the last page: {second}");
    assert_eq!(second["totalSize"], 3, "{second}");

    let all = list(&edge, "echo", ALICE, json!({})).await;
    assert_eq!(all["pageSize"], 50, "the default: {all}");
    assert_eq!(ids(&all).len(), 3);
    assert!(!ids(&all).contains(&theirs["id"].as_str().unwrap_or_default().to_owned()));
    let bobs = list(&edge, "echo", BOB, json!({})).await;
    assert_eq!(ids(&bobs), [theirs["id"].as_str().unwrap_or_default()]);
    edge.stop().await;
}

#[tokio::test]
async fn filters_history_and_artifacts() {
    let edge = edge().await;
    let first = send(&edge, "chunks", ALICE, "a").await;
    let second = send(&edge, "chunks", ALICE, "b").await;
    // The conversation filter.
    let context = first["contextId"].clone();
    let page = list(&edge, "chunks", ALICE, json!({"contextId": context})).await;
    assert_eq!(ids(&page), [first["id"].as_str().unwrap_or_default()]);
    // The state filter.
    let page = list(
        &edge,
        "chunks",
        ALICE,
        json!({"status": "TASK_STATE_COMPLETED"}),
    )
    .await;
    assert_eq!(ids(&page).len(), 2, "{page}");
    let page = list(
        &edge,
        "chunks",
        ALICE,
        json!({"status": "TASK_STATE_WORKING"}),
    )
    .await;
    assert_eq!(page["totalSize"], 0, "{page}");
    assert!(
        page.get("tasks").is_none() || ids(&page).is_empty(),
        "{page}"
    );
    // Status time: everything changed after the epoch, nothing after 2999.
    let page = list(
        &edge,
        "chunks",
        ALICE,
        json!({"statusTimestampAfter": "1970-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(page["totalSize"], 2, "{page}");
    let page = list(
        &edge,
        "chunks",
        ALICE,
        json!({"statusTimestampAfter": "2999-01-01T00:00:00Z"}),
    )
    .await;
    assert_eq!(page["totalSize"], 0, "{page}");
    // Artifacts only when asked for; history as GetTask trims it.
    let page = list(&edge, "chunks", ALICE, json!({"historyLength": 0})).await;
    for task in page["tasks"].as_array().expect("tasks") {
        assert!(task.get("artifacts").is_none(), "{task}");
        assert!(task.get("history").is_none(), "{task}");
    }
    let page = list(&edge, "chunks", ALICE, json!({"includeArtifacts": true})).await;
    for task in page["tasks"].as_array().expect("tasks") {
        assert!(
            task["artifacts"].as_array().is_some_and(|a| !a.is_empty()),
            "{task}"
        );
        assert!(
            task["history"].as_array().is_some_and(|h| !h.is_empty()),
            "{task}"
        );
    }
    assert_eq!(ids(&page)[0], second["id"].as_str().unwrap_or_default());
    edge.stop().await;
}

#[tokio::test]
async fn bad_parameters_are_invalid_params_naming_them() {
    let edge = edge().await;
    for (params, named) in [
        (json!({"pageSize": 0}), "pageSize"),
        (json!({"pageSize": 101}), "pageSize"),
        (json!({"pageToken": "not-ours"}), "pageToken"),
        (json!({"historyLength": -1}), "historyLength"),
        (
            json!({"statusTimestampAfter": "yesterday"}),
            "statusTimestampAfter",
        ),
    ] {
        let answer = call(&edge, "echo", ALICE, "ListTasks", params.clone()).await;
        assert_eq!(answer["error"]["code"], -32602, "{params}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(named), "{params}: {message}");
        assert_eq!(answer["error"]["data"][0]["reason"], "INVALID_PARAMS");
    }
    edge.stop().await;
}
