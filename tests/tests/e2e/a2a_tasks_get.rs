//! `tasks/get` over HTTP: the task as it stands, `historyLength` as the most recent N,
//! and the errors of an unknown task or a negative length.

use agentyard::a2a::{
    Message, MessageSendConfiguration, MessageSendParams, SendMessageResult, Task, TaskQueryParams,
    TaskState,
};
use agentyard::client::A2aClient;
use agentyard_tests::http::TestEdge;
use serde_json::json;

async fn conversation(client: &A2aClient) -> Task {
    let SendMessageResult::Task(asked) = client
        .send_message(MessageSendParams::new(Message::user_text("paint")))
        .await
        .expect("sent")
    else {
        panic!("expected a task");
    };
    let answer = Message::user_text("red")
        .with_task_id(asked.id.clone())
        .with_context_id(asked.context_id.clone());
    let SendMessageResult::Task(done) = client
        .send_message(MessageSendParams::new(answer))
        .await
        .expect("sent")
    else {
        panic!("expected a task");
    };
    done
}

fn texts(task: &Task) -> Vec<String> {
    task.history
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|message| message.text())
        .collect()
}

#[tokio::test]
async fn get_returns_the_task_with_its_whole_history() {
    let edge = TestEdge::start().await;
    let client = edge.client("ask").await;
    let done = conversation(&client).await;
    let got = client
        .get_task(TaskQueryParams::new(done.id.clone()))
        .await
        .expect("the task");
    assert_eq!(got.id, done.id);
    assert_eq!(got.status.state, TaskState::Completed);
    assert_eq!(
        texts(&got),
        ["paint", "Which colour?", "red", "answer: red"]
    );
    edge.stop().await;
}

#[tokio::test]
async fn history_length_means_the_most_recent_messages() {
    let edge = TestEdge::start().await;
    let client = edge.client("ask").await;
    let done = conversation(&client).await;
    for (length, expected) in [
        (2_u32, vec!["red", "answer: red"]),
        (0, Vec::new()),
        (100, vec!["paint", "Which colour?", "red", "answer: red"]),
    ] {
        let mut query = TaskQueryParams::new(done.id.clone());
        query.history_length = Some(length);
        let got = client.get_task(query).await.expect("the task");
        assert_eq!(texts(&got), expected, "historyLength {length}");
    }
    edge.stop().await;
}

#[tokio::test]
async fn get_sees_a_task_that_is_still_running() {
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let params = MessageSendParams {
        configuration: Some(MessageSendConfiguration {
            blocking: Some(false),
            ..MessageSendConfiguration::default()
        }),
        ..MessageSendParams::new(Message::user_text("wait"))
    };
    let SendMessageResult::Task(submitted) = client.send_message(params).await.expect("sent")
    else {
        panic!("expected a task");
    };
    let got = client
        .get_task(TaskQueryParams::new(submitted.id.clone()))
        .await
        .expect("the task");
    assert!(!got.status.state.is_terminal(), "{:?}", got.status.state);
    edge.open_gate(1);
    edge.stop().await;
}

#[tokio::test]
async fn an_unknown_task_is_32001_and_a_negative_length_is_32602() {
    let edge = TestEdge::start().await;
    let client = edge.client("echo").await;
    let error = client
        .get_task(TaskQueryParams::new("missing-task"))
        .await
        .expect_err("no such task");
    let rpc = error.json_rpc_error().expect("a JSON-RPC error");
    assert_eq!(rpc.code, -32001);
    assert!(rpc.message.contains("missing-task"), "{}", rpc.message);
    let response = edge
        .rpc(
            "echo",
            "tasks/get",
            json!({"id": "missing-task", "historyLength": -1}),
        )
        .await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    edge.stop().await;
}
