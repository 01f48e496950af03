//! `message/stream` over SSE: every `data:` line a whole JSON-RPC response with the
//! request's id, the task first, updates as they happen, `final: true` on the last
//! status update and then the end of the stream; a client that disconnects does not
//! cancel the task.

use agentyard::a2a::{Message, MessageSendParams, StreamEvent, TaskQueryParams, TaskState};
use agentyard_tests::http::{TestEdge, text_message};
use agentyard_tests::{PATIENCE, eventually};
use futures::StreamExt as _;
use serde_json::json;

#[tokio::test]
async fn the_sse_framing_is_one_json_rpc_response_per_event_ending_with_final() {
    let edge = TestEdge::start().await;
    let events = edge
        .sse(
            "chunks",
            "message/stream",
            json!({"message": text_message("count")}),
        )
        .await;
    assert!(events.len() >= 8, "{events:#?}");
    for event in &events {
        assert_eq!(event["jsonrpc"], "2.0");
        assert_eq!(event["id"], "s-1");
        assert!(event["result"].is_object(), "{event}");
    }
    assert_eq!(events[0]["result"]["kind"], "task");
    let last = &events[events.len() - 1]["result"];
    assert_eq!(last["kind"], "status-update");
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], "completed");
    let finals = events
        .iter()
        .filter(|e| e["result"]["final"] == json!(true))
        .count();
    assert_eq!(finals, 1);
    edge.stop().await;
}

#[tokio::test]
async fn the_typed_stream_has_the_task_then_progress_then_the_final_status() {
    let edge = TestEdge::start().await;
    let client = edge.client("chunks").await;
    let events: Vec<StreamEvent> = client
        .send_message_stream(MessageSendParams::new(Message::user_text("count")))
        .await
        .expect("the stream opens")
        .map(|event| event.expect("a well-formed event"))
        .collect()
        .await;
    let StreamEvent::Task(task) = &events[0] else {
        panic!("the first event is not the task: {events:?}");
    };
    let working: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::StatusUpdate(u) if u.status.state == TaskState::Working => {
                u.status.message.as_deref().map(Message::text)
            }
            _ => None,
        })
        .collect();
    assert_eq!(working, ["step 1", "step 2", "step 3"]);
    let chunks: Vec<(Option<bool>, Option<bool>)> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ArtifactUpdate(u) => Some((u.append, u.last_chunk)),
            _ => None,
        })
        .collect();
    assert_eq!(
        chunks,
        [
            (None, Some(false)),
            (Some(true), Some(false)),
            (Some(true), Some(true))
        ]
    );
    let Some(StreamEvent::StatusUpdate(last)) = events.last() else {
        panic!("no final status update");
    };
    assert!(last.is_final);
    assert_eq!(last.status.state, TaskState::Completed);
    assert!(events.iter().all(|e| e.task_id() == Some(&task.id)));
    let stored = client
        .get_task(TaskQueryParams::new(task.id.clone()))
        .await
        .expect("the task");
    let parts = stored.artifacts.unwrap_or_default()[0].parts.len();
    assert_eq!(parts, 3);
    edge.stop().await;
}

#[tokio::test]
async fn a_client_that_disconnects_does_not_cancel_the_task() {
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let mut stream = client
        .send_message_stream(MessageSendParams::new(Message::user_text("keep going")))
        .await
        .expect("the stream opens");
    let Some(Ok(StreamEvent::Task(task))) = stream.next().await else {
        panic!("the first event is not the task");
    };
    drop(stream);
    edge.open_gate(1);
    let done = eventually(
        PATIENCE,
        "the task to complete after the disconnect",
        || {
            let client = client.clone();
            let id = task.id.clone();
            async move {
                let task = client.get_task(TaskQueryParams::new(id)).await.ok()?;
                task.status.state.is_terminal().then_some(task)
            }
        },
    )
    .await;
    assert_eq!(done.status.state, TaskState::Completed);
    edge.stop().await;
}

#[tokio::test]
async fn a_stream_that_answers_an_input_request_follows_the_new_turn() {
    let edge = TestEdge::start().await;
    let client = edge.client("ask").await;
    let first: Vec<StreamEvent> = client
        .send_message_stream(MessageSendParams::new(Message::user_text("paint")))
        .await
        .expect("the stream opens")
        .map(|event| event.expect("an event"))
        .collect()
        .await;
    let Some(StreamEvent::StatusUpdate(asked)) = first.last() else {
        panic!("no final update: {first:?}");
    };
    assert!(asked.is_final);
    assert_eq!(asked.status.state, TaskState::InputRequired);
    let answer = Message::user_text("green")
        .with_task_id(asked.task_id.clone())
        .with_context_id(asked.context_id.clone());
    let second: Vec<StreamEvent> = client
        .send_message_stream(MessageSendParams::new(answer))
        .await
        .expect("the stream opens")
        .map(|event| event.expect("an event"))
        .collect()
        .await;
    assert!(matches!(second.first(), Some(StreamEvent::Task(t)) if t.id == asked.task_id));
    let Some(StreamEvent::StatusUpdate(done)) = second.last() else {
        panic!("no final update: {second:?}");
    };
    assert!(done.is_final);
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(
        done.status.message.as_deref().map(Message::text).as_deref(),
        Some("answer: green")
    );
    edge.stop().await;
}

#[tokio::test]
async fn stopping_the_edge_ends_open_streams_but_not_their_tasks() {
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let mut stream = client
        .send_message_stream(MessageSendParams::new(Message::user_text("outlive")))
        .await
        .expect("the stream opens");
    let Some(Ok(StreamEvent::Task(task))) = stream.next().await else {
        panic!("the first event is not the task");
    };
    let TestEdge {
        runtime,
        edge: http_edge,
        ..
    } = edge;
    http_edge.stop().await;
    // The stream ends (the server closed it) instead of hanging.
    while let Some(event) = stream.next().await {
        assert!(!matches!(event, Ok(StreamEvent::StatusUpdate(ref u)) if u.is_final));
    }
    let still = runtime.get_task(&task.id, Some(0)).await.expect("the task");
    assert!(
        !still.status.state.is_terminal(),
        "{:?}",
        still.status.state
    );
    runtime
        .shutdown(std::time::Duration::from_millis(100))
        .await;
}
