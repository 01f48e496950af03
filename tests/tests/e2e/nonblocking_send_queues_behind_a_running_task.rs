//! `blocking: false` does not block, and a send never vanishes: a non-blocking
//! `message/send` to a conversation whose previous task is still running returns at
//! once with its task `submitted`, queued behind the running one, and the queued
//! tasks run in the order they were sent. When the conversation's queue is full the
//! caller gets a busy error and nothing is taken.

use std::time::Duration;

use agentyard::{EventKind, TaskId};
use agentyard_tests::EventLog;
use agentyard_tests::http::{TestEdge, text_message};
use agentyard_tests::{PATIENCE, eventually};
use serde_json::{Value, json};

/// Short, so that a send that waits for the running task (the old behaviour) fails
/// fast instead of after the default 30 s.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

async fn edge(session_queue: usize) -> TestEdge {
    TestEdge::start_custom(
        TestEdge::config().request_timeout(REQUEST_TIMEOUT),
        |builder| builder.session_queue(session_queue),
    )
    .await
}

/// A non-blocking `message/send` in conversation `context`; the JSON-RPC response.
async fn send_nonblocking(edge: &TestEdge, text: &str, context: &str) -> Value {
    let mut message = text_message(text);
    message["contextId"] = json!(context);
    edge.rpc(
        "gated",
        "message/send",
        json!({ "message": message, "configuration": { "blocking": false } }),
    )
    .await
}

async fn state_of(edge: &TestEdge, id: &Value) -> String {
    let task = edge.rpc("gated", "tasks/get", json!({ "id": id })).await;
    task["result"]["status"]["state"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn wait_for_state(edge: &TestEdge, id: &Value, state: &str) {
    eventually(PATIENCE, &format!("task {id} to be {state}"), || async {
        (state_of(edge, id).await == state).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_nonblocking_send_behind_a_running_task_returns_submitted_and_runs_after_it() {
    let edge = edge(64).await;
    let first = send_nonblocking(&edge, "first", "busy-talk").await;
    let first_id = first["result"]["id"].clone();
    wait_for_state(&edge, &first_id, "working").await;

    let second = send_nonblocking(&edge, "second", "busy-talk").await;
    assert!(second["error"].is_null(), "answered at once: {second}");
    let second_id = second["result"]["id"].clone();
    assert_eq!(second["result"]["status"]["state"], "submitted", "{second}");
    assert_eq!(second["result"]["contextId"], "busy-talk");

    // Past the request timeout the second still waits its turn; nothing is dropped.
    tokio::time::sleep(REQUEST_TIMEOUT + Duration::from_millis(200)).await;
    assert_eq!(state_of(&edge, &second_id).await, "submitted");
    assert_eq!(state_of(&edge, &first_id).await, "working");

    edge.open_gate(1);
    wait_for_state(&edge, &first_id, "completed").await;
    wait_for_state(&edge, &second_id, "working").await;
    edge.open_gate(1);
    wait_for_state(&edge, &second_id, "completed").await;
    let done = edge
        .rpc("gated", "tasks/get", json!({ "id": second_id }))
        .await;
    assert_eq!(
        done["result"]["status"]["message"]["parts"][0]["text"], "done: second",
        "the queued message reached the agent"
    );
    edge.stop().await;
}

#[tokio::test]
async fn queued_sends_run_in_the_order_they_were_sent() {
    let edge = edge(64).await;
    let log = EventLog::start(&edge.runtime);
    let mut ids = Vec::new();
    for i in 0..5 {
        let response = send_nonblocking(&edge, &format!("n{i}"), "in-order").await;
        assert!(response["error"].is_null(), "{response}");
        ids.push(response["result"]["id"].clone());
    }
    edge.open_gate(5);
    for id in &ids {
        wait_for_state(&edge, id, "completed").await;
    }
    // The order in which each task started working, from the event bus (the agent
    // reports `working` itself too, after the runtime does).
    let mut started: Vec<TaskId> = log
        .matching(|e| {
            e.kind == EventKind::TaskStatus
                && matches!(&e.detail, agentyard::EventDetail::Status { update }
                    if update.status.state == agentyard::TaskState::Working)
        })
        .iter()
        .filter_map(|e| e.task_id.clone())
        .collect();
    started.dedup();
    let sent: Vec<TaskId> = ids
        .iter()
        .map(|id| TaskId::new(id.as_str().expect("an id")))
        .collect();
    assert_eq!(started, sent);
    edge.stop().await;
}

#[tokio::test]
async fn a_full_conversation_queue_refuses_busy_and_takes_nothing() {
    let edge = edge(1).await;
    let log = EventLog::start(&edge.runtime);
    let running = send_nonblocking(&edge, "running", "full").await;
    let running_id = running["result"]["id"].clone();
    wait_for_state(&edge, &running_id, "working").await;
    let queued = send_nonblocking(&edge, "queued", "full").await;
    assert_eq!(queued["result"]["status"]["state"], "submitted", "{queued}");

    let refused = send_nonblocking(&edge, "refused", "full").await;
    let error = &refused["error"];
    assert_eq!(error["code"], -32011, "busy: {refused}");
    let text = error["message"].as_str().unwrap_or_default();
    assert!(
        text.contains("busy") && text.contains("per-session"),
        "{text}"
    );
    assert!(refused["result"].is_null());
    assert_eq!(log.count(EventKind::SendBusy), 1);
    // Only the two accepted sends made tasks.
    assert_eq!(
        log.matching(|e| e.kind == EventKind::TaskStatus
            && matches!(&e.detail, agentyard::EventDetail::Status { update }
                if update.status.state == agentyard::TaskState::Submitted))
            .len(),
        2
    );

    edge.open_gate(2);
    wait_for_state(&edge, &running_id, "completed").await;
    wait_for_state(&edge, &queued["result"]["id"], "completed").await;
    edge.stop().await;
}

#[tokio::test]
async fn a_queued_task_runs_in_the_shutdown_drain() {
    let edge = edge(64).await;
    let first = send_nonblocking(&edge, "first", "drain").await;
    let first_id = first["result"]["id"].clone();
    wait_for_state(&edge, &first_id, "working").await;
    let second = send_nonblocking(&edge, "second", "drain").await;
    let second_id = TaskId::new(second["result"]["id"].as_str().expect("an id"));

    let runtime = edge.runtime.clone();
    let shutdown = tokio::spawn(async move { runtime.shutdown(Duration::from_secs(10)).await });
    eventually(PATIENCE, "intake to stop", || async {
        edge.runtime
            .send("echo", agentyard::Message::user_text("late"))
            .await
            .is_err()
            .then_some(())
    })
    .await;
    edge.open_gate(2);
    shutdown.await.expect("shutdown did not panic");
    let task = edge
        .runtime
        .get_task(&second_id, None)
        .await
        .expect("the task is kept");
    assert_eq!(
        task.status.state,
        agentyard::TaskState::Completed,
        "the accepted, queued task ran in the drain"
    );
}
