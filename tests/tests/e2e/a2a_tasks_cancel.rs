//! `tasks/cancel` over HTTP: a running task ends `canceled` (streams see it as their
//! final update), and an ended task is -32002.

use agentyard::a2a::{
    Message, MessageSendConfiguration, MessageSendParams, SendMessageResult, StreamEvent, Task,
    TaskIdParams, TaskQueryParams, TaskState,
};
use agentyard::client::A2aClient;
use agentyard_tests::http::TestEdge;
use futures::StreamExt as _;

async fn start_gated(client: &A2aClient) -> Task {
    let params = MessageSendParams {
        configuration: Some(MessageSendConfiguration {
            blocking: Some(false),
            ..MessageSendConfiguration::default()
        }),
        ..MessageSendParams::new(Message::user_text("long job"))
    };
    match client.send_message(params).await.expect("sent") {
        SendMessageResult::Task(task) => task,
        SendMessageResult::Message(message) => panic!("expected a task, got {message:?}"),
    }
}

#[tokio::test]
async fn a_running_task_is_canceled_and_stays_canceled() {
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let task = start_gated(&client).await;
    let canceled = client
        .cancel_task(TaskIdParams::new(task.id.clone()))
        .await
        .expect("cancelable");
    assert_eq!(canceled.status.state, TaskState::Canceled);
    // Letting the agent go on afterwards changes nothing.
    edge.open_gate(1);
    let got = client
        .get_task(TaskQueryParams::new(task.id.clone()))
        .await
        .expect("the task");
    assert_eq!(got.status.state, TaskState::Canceled);
    let again = client
        .cancel_task(TaskIdParams::new(task.id))
        .await
        .expect_err("already canceled");
    let rpc = again.json_rpc_error().expect("a JSON-RPC error");
    assert_eq!(rpc.code, -32002);
    assert!(rpc.message.contains("canceled"), "{}", rpc.message);
    edge.stop().await;
}

#[tokio::test]
async fn a_completed_task_cannot_be_canceled() {
    let edge = TestEdge::start().await;
    let client = edge.client("echo").await;
    let SendMessageResult::Task(done) = client
        .send_message(MessageSendParams::new(Message::user_text("quick")))
        .await
        .expect("sent")
    else {
        panic!("expected a task");
    };
    let error = client
        .cancel_task(TaskIdParams::new(done.id.clone()))
        .await
        .expect_err("completed");
    let rpc = error.json_rpc_error().expect("a JSON-RPC error");
    assert_eq!(rpc.code, -32002);
    assert_eq!(
        rpc.data
            .as_ref()
            .and_then(|d| d.get("state"))
            .and_then(|s| s.as_str()),
        Some("completed")
    );
    edge.stop().await;
}

#[tokio::test]
async fn a_stream_ends_with_the_cancel_as_its_final_update() {
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let mut stream = client
        .send_message_stream(MessageSendParams::new(Message::user_text("long job")))
        .await
        .expect("the stream opens");
    let Some(Ok(StreamEvent::Task(task))) = stream.next().await else {
        panic!("the first event is not the task");
    };
    client
        .cancel_task(TaskIdParams::new(task.id.clone()))
        .await
        .expect("cancelable");
    let rest: Vec<StreamEvent> = stream.map(|e| e.expect("an event")).collect().await;
    let Some(StreamEvent::StatusUpdate(last)) = rest.last() else {
        panic!("no final update: {rest:?}");
    };
    assert!(last.is_final);
    assert_eq!(last.status.state, TaskState::Canceled);
    edge.stop().await;
}

#[tokio::test]
async fn canceling_an_unknown_task_is_32001() {
    let edge = TestEdge::start().await;
    let client = edge.client("echo").await;
    let error = client
        .cancel_task(TaskIdParams::new("nope"))
        .await
        .expect_err("no such task");
    assert_eq!(error.json_rpc_error().map(|e| e.code), Some(-32001));
    edge.stop().await;
}
