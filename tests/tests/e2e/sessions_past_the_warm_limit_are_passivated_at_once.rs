//! Memory per conversation is bounded: a session with no task running, queued or
//! waiting for input holds nothing the store lacks, so only `warm_sessions` of them
//! stay live; past it the least recently used is passivated as soon as another's work
//! settles, not after the idle timeout. Many new conversations over HTTP (as ordinary
//! A2A clients send them) leave at most that many live sessions; a session whose task
//! waits for input is kept; a passivated conversation goes on with its history.

use std::time::Duration;

use agentyard::ContextId;
use agentyard_tests::eventually;
use agentyard_tests::http::{TestEdge, text_message};
use serde_json::{Value, json};

const CAP: usize = 8;
const SOON: Duration = Duration::from_secs(5);

async fn edge() -> TestEdge {
    TestEdge::start_custom(TestEdge::config(), |builder| builder.warm_sessions(CAP)).await
}

/// A blocking `message/send`; returns the result.
async fn send(edge: &TestEdge, agent: &str, message: Value) -> Value {
    let response = edge
        .rpc(agent, "message/send", json!({ "message": message }))
        .await;
    assert!(response["error"].is_null(), "{response}");
    response["result"].clone()
}

fn in_context(text: &str, context: &str) -> Value {
    let mut message = text_message(text);
    message["contextId"] = json!(context);
    message
}

async fn live_sessions_settle_within_the_cap(edge: &TestEdge) {
    eventually(
        SOON,
        "the live sessions are within the warm limit",
        async || edge.runtime.supervisor().session_count() <= CAP,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_new_conversations_leave_at_most_the_warm_limit_of_live_sessions() {
    let edge = edge().await;

    // One after another: after each answer the sessions settle within the limit.
    for i in 0..(CAP * 20) {
        let task = send(&edge, "echo", text_message(&format!("hello {i}"))).await;
        assert_eq!(task["status"]["state"], "completed", "{task}");
        live_sessions_settle_within_the_cap(&edge).await;
    }

    // Sixteen at a time, each a new conversation.
    let senders = (0..16).map(|s| {
        let client = edge.http().clone();
        let url = edge.agent_url("echo");
        tokio::spawn(async move {
            for i in 0..10 {
                let body = json!({
                    "jsonrpc": "2.0", "id": i, "method": "message/send",
                    "params": {"message": text_message(&format!("from {s}: {i}"))},
                });
                let response: Value = client
                    .post(&url)
                    .json(&body)
                    .send()
                    .await
                    .expect("the server answers")
                    .json()
                    .await
                    .expect("JSON");
                assert_eq!(response["result"]["status"]["state"], "completed");
            }
        })
    });
    for sender in senders {
        sender.await.expect("the sender did not panic");
    }
    live_sessions_settle_within_the_cap(&edge).await;
    edge.stop().await;
}

#[tokio::test]
async fn the_least_recently_used_session_goes_first() {
    let edge = edge().await;
    let contexts: Vec<String> = (0..CAP).map(|i| format!("lru-{i}")).collect();
    for context in &contexts {
        send(&edge, "echo", in_context("hi", context)).await;
        live_sessions_settle_within_the_cap(&edge).await;
    }
    // The first conversation is used again, so the second is now the least recent.
    send(&edge, "echo", in_context("again", &contexts[0])).await;
    send(&edge, "echo", in_context("hi", "lru-new")).await;
    let supervisor = edge.runtime.supervisor();
    eventually(SOON, "one session makes room for the new one", async || {
        supervisor.session_count() == CAP
    })
    .await;
    assert!(
        !supervisor.stop_session("echo", &ContextId::new(contexts[1].clone())),
        "the least recently used session was passivated"
    );
    assert!(
        supervisor.stop_session("echo", &ContextId::new(contexts[0].clone())),
        "the session used again was kept"
    );
    assert!(supervisor.stop_session("echo", &ContextId::new("lru-new")));
    edge.stop().await;
}

#[tokio::test]
async fn a_session_waiting_for_input_is_kept_and_a_passivated_one_keeps_its_history() {
    let edge = edge().await;
    let asked = send(&edge, "ask", in_context("paint the shed", "waiting")).await;
    assert_eq!(asked["status"]["state"], "input-required", "{asked}");

    for i in 0..(CAP * 3) {
        send(&edge, "echo", text_message(&format!("flood {i}"))).await;
    }
    let supervisor = edge.runtime.supervisor();
    // The warm sessions are full, and the waiting one is kept beside them.
    eventually(
        SOON,
        "the warm limit, plus the session waiting for input",
        async || supervisor.session_count() == CAP + 1,
    )
    .await;
    assert!(
        supervisor
            .spawn_session("ask", Some(ContextId::new("waiting")))
            .is_ok()
            && supervisor.session_count() == CAP + 1,
        "the waiting conversation's session is the one kept (no new one was spawned)"
    );

    let mut answer = in_context("green", "waiting");
    answer["taskId"] = asked["id"].clone();
    let answered = send(&edge, "ask", answer).await;
    assert_eq!(answered["status"]["state"], "completed", "{answered}");
    assert_eq!(
        answered["status"]["message"]["parts"][0]["text"],
        "answer: green"
    );

    // Now idle, it is warm like the others, and the flood pushes it out; the
    // conversation still goes on with its history from the store.
    for i in 0..(CAP * 2) {
        send(&edge, "echo", text_message(&format!("flood again {i}"))).await;
    }
    live_sessions_settle_within_the_cap(&edge).await;
    let history = edge
        .rpc(
            "ask",
            "tasks/get",
            json!({ "id": asked["id"], "historyLength": 10 }),
        )
        .await;
    let texts: Vec<&str> = history["result"]["history"]
        .as_array()
        .expect("a history")
        .iter()
        .filter_map(|m| m["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(
        texts,
        ["paint the shed", "Which colour?", "green", "answer: green"]
    );
    edge.stop().await;
}
