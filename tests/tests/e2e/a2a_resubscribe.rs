//! `tasks/resubscribe` over SSE: a client reconnects to a running task (however it
//! was started) and sees the rest of its updates; an ended task yields only itself.

use agentyard::a2a::{
    Message, MessageSendConfiguration, MessageSendParams, SendMessageResult, StreamEvent,
    TaskIdParams, TaskState,
};
use agentyard_tests::http::TestEdge;
use futures::StreamExt as _;
use serde_json::json;

#[tokio::test]
async fn a_task_started_by_a_plain_send_can_be_followed_mid_task() {
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let params = MessageSendParams {
        configuration: Some(MessageSendConfiguration {
            blocking: Some(false),
            ..MessageSendConfiguration::default()
        }),
        ..MessageSendParams::new(Message::user_text("job"))
    };
    let SendMessageResult::Task(task) = client.send_message(params).await.expect("sent") else {
        panic!("expected a task");
    };
    let mut stream = client
        .resubscribe(TaskIdParams::new(task.id.clone()))
        .await
        .expect("the stream opens");
    let Some(Ok(StreamEvent::Task(now))) = stream.next().await else {
        panic!("the first event is not the task");
    };
    assert_eq!(now.id, task.id);
    assert!(!now.status.state.is_terminal());
    edge.open_gate(1);
    let rest: Vec<StreamEvent> = stream.map(|e| e.expect("an event")).collect().await;
    let Some(StreamEvent::StatusUpdate(last)) = rest.last() else {
        panic!("no final update: {rest:?}");
    };
    assert!(last.is_final);
    assert_eq!(last.status.state, TaskState::Completed);
    assert_eq!(
        last.status.message.as_deref().map(Message::text).as_deref(),
        Some("done: job")
    );
    edge.stop().await;
}

#[tokio::test]
async fn a_client_can_come_back_after_dropping_its_stream() {
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let mut first = client
        .send_message_stream(MessageSendParams::new(Message::user_text("job")))
        .await
        .expect("the stream opens");
    let Some(Ok(StreamEvent::Task(task))) = first.next().await else {
        panic!("the first event is not the task");
    };
    drop(first);
    let mut again = client
        .resubscribe(TaskIdParams::new(task.id.clone()))
        .await
        .expect("the stream opens");
    assert!(matches!(again.next().await, Some(Ok(StreamEvent::Task(t))) if t.id == task.id));
    edge.open_gate(1);
    let rest: Vec<StreamEvent> = again.map(|e| e.expect("an event")).collect().await;
    assert!(matches!(
        rest.last(),
        Some(StreamEvent::StatusUpdate(u)) if u.is_final && u.status.state == TaskState::Completed
    ));
    edge.stop().await;
}

#[tokio::test]
async fn an_ended_task_yields_the_task_and_the_stream_ends() {
    let edge = TestEdge::start().await;
    let done = edge
        .rpc(
            "echo",
            "message/send",
            json!({"message": agentyard_tests::http::text_message("hi")}),
        )
        .await;
    let id = done["result"]["id"].clone();
    let events = edge
        .sse("echo", "tasks/resubscribe", json!({"id": id}))
        .await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["result"]["kind"], "task");
    assert_eq!(events[0]["result"]["status"]["state"], "completed");
    edge.stop().await;
}

#[tokio::test]
async fn resubscribing_to_an_unknown_task_is_32001() {
    let edge = TestEdge::start().await;
    // On the wire the error comes as the stream's one event, as SSE clients expect it.
    let events = edge
        .sse("echo", "tasks/resubscribe", json!({"id": "ghost-task"}))
        .await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["error"]["code"], -32001, "{events:#?}");
    // The typed client reports a stream refused in its first event as the opening's
    // error, as it does for the other bindings.
    let client = edge.client("echo").await;
    let error = client
        .resubscribe(TaskIdParams::new("ghost-task"))
        .await
        .expect_err("no such task");
    assert_eq!(error.json_rpc_error().map(|e| e.code), Some(-32001));
    edge.stop().await;
}
