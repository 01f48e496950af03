//! Extensions over HTTP: activation with `X-A2A-Extensions` and its echo, a required
//! extension the request did not activate, and the handoff extension end to end: a
//! typed task delegation reaches the agent typed, with its payloadType on the
//! events; without activation the same message still works as free text.

use agentyard::a2a::{
    AgentExtension, Message, MessageSendParams, Role, SendMessageResult, StreamEvent,
};
use agentyard::client::ClientOptions;
use agentyard::edge::AgentSettings;
use agentyard::handoff::{self, HANDOFF_EXTENSION_URI, HandoffPayload, TaskDelegation};
use agentyard::jsonrpc::A2aRequest;
use agentyard::{EventKind, Received};
use agentyard_tests::http::{TestEdge, text_message};
use futures::StreamExt as _;
use serde_json::{Value, json};

const SIGNED: &str = "https://example.com/ext/signed/v1";

fn delegation() -> Message {
    let payload = HandoffPayload::from(
        TaskDelegation::builder()
            .task_id("job-7")
            .task_title("Review")
            .task_description("Review PR #42")
            .build()
            .expect("a valid delegation"),
    );
    handoff::into_message(Role::User, "please review PR #42", &payload)
}

fn marker(metadata: Option<&agentyard::a2a::Metadata>) -> Option<Value> {
    metadata.and_then(|m| m.get(HANDOFF_EXTENSION_URI)).cloned()
}

#[tokio::test]
async fn activated_extensions_are_echoed_and_unknown_ones_ignored() {
    let edge = TestEdge::start().await;
    let requested = format!("{HANDOFF_EXTENSION_URI}, https://example.com/ext/unknown/v9");
    let (status, headers, body) = edge
        .rpc_with(
            "echo",
            "message/send",
            json!({"message": text_message("hi")}),
            &[("X-A2A-Extensions", requested.as_str())],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let echoed = headers
        .get("x-a2a-extensions")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert_eq!(echoed, HANDOFF_EXTENSION_URI);

    let client = edge
        .client_with(
            "echo",
            ClientOptions::new().extension(HANDOFF_EXTENSION_URI),
        )
        .await;
    let response = client
        .call::<Value>(A2aRequest::SendMessage(MessageSendParams::new(
            Message::user_text("hi"),
        )))
        .await
        .expect("sent");
    assert_eq!(response.extensions, [HANDOFF_EXTENSION_URI]);
    let stream = client
        .send_message_stream(MessageSendParams::new(Message::user_text("hi")))
        .await
        .expect("the stream opens");
    assert_eq!(stream.extensions(), [HANDOFF_EXTENSION_URI]);
    edge.stop().await;
}

#[tokio::test]
async fn a_required_extension_must_be_activated() {
    let settings = AgentSettings::default().extension(AgentExtension {
        uri: SIGNED.to_owned(),
        description: Some("every message is signed".to_owned()),
        required: Some(true),
        params: None,
    });
    let edge = TestEdge::start_with(TestEdge::config().agent_settings("echo", settings)).await;
    let plain = edge.client("echo").await;
    let error = plain
        .send_message(MessageSendParams::new(Message::user_text("hi")))
        .await
        .expect_err("the extension is required");
    let rpc = error.json_rpc_error().expect("a JSON-RPC error");
    assert_eq!(rpc.code, -32600);
    assert!(rpc.message.contains(SIGNED), "{}", rpc.message);
    let activated = edge
        .client_with("echo", ClientOptions::new().extension(SIGNED))
        .await;
    let response = activated
        .call::<Value>(A2aRequest::SendMessage(MessageSendParams::new(
            Message::user_text("hi"),
        )))
        .await
        .expect("activated");
    assert_eq!(response.extensions, [SIGNED]);
    edge.stop().await;
}

#[tokio::test]
async fn a_typed_delegation_reaches_the_agent_typed_with_its_payload_type_on_the_events() {
    let edge = TestEdge::start().await;
    let mut runtime_events = edge.runtime.subscribe();
    let client = edge
        .client_with(
            "probe",
            ClientOptions::new().extension(HANDOFF_EXTENSION_URI),
        )
        .await;
    let events: Vec<StreamEvent> = client
        .send_message_stream(MessageSendParams::new(delegation()))
        .await
        .expect("the stream opens")
        .map(|event| event.expect("an event"))
        .collect()
        .await;
    let expected = Some(json!({"payloadType": "task_delegation"}));
    for event in &events {
        let metadata = match event {
            StreamEvent::Task(task) => task.metadata.as_ref(),
            StreamEvent::StatusUpdate(update) => update.metadata.as_ref(),
            StreamEvent::ArtifactUpdate(update) => update.metadata.as_ref(),
            StreamEvent::Message(message) => message.metadata.as_ref(),
        };
        assert_eq!(marker(metadata), expected, "{event:?}");
    }
    let Some(StreamEvent::StatusUpdate(last)) = events.last() else {
        panic!("no final update: {events:?}");
    };
    assert_eq!(
        last.status.message.as_deref().map(Message::text).as_deref(),
        Some("task_delegation: Review")
    );

    // The runtime saw the payload type too, on every event of the send.
    let mut seen = Vec::new();
    loop {
        match runtime_events.recv().await {
            Some(Received::Event(event)) => {
                // The answer (free text here) says what it answers instead.
                let payload_type = if event.kind == EventKind::Response {
                    event.in_response_to_payload_type
                } else {
                    event.payload_type
                };
                seen.push((event.kind, payload_type.map(|t| t.as_str())));
                if event.kind == EventKind::SendCompleted {
                    break;
                }
            }
            Some(Received::Lagged(_)) => {}
            None => panic!("the bus closed"),
        }
    }
    assert!(
        seen.iter().all(|(_, t)| *t == Some("task_delegation")),
        "{seen:?}"
    );
    assert_eq!(seen[0].0, EventKind::SendInitiated);
    edge.stop().await;
}

#[tokio::test]
async fn without_activation_the_same_message_works_as_free_text() {
    let edge = TestEdge::start().await;
    let client = edge.client("probe").await;
    let answer = client
        .send_message(MessageSendParams::new(delegation()))
        .await
        .expect("sent");
    let SendMessageResult::Task(task) = answer else {
        panic!("expected a task");
    };
    assert_eq!(
        task.status.message.as_deref().map(Message::text).as_deref(),
        Some("free: please review PR #42")
    );
    assert_eq!(marker(task.metadata.as_ref()), None);
    edge.stop().await;
}

#[tokio::test]
async fn an_invalid_payload_with_the_extension_active_names_the_field() {
    let edge = TestEdge::start().await;
    let client = edge
        .client_with(
            "probe",
            ClientOptions::new().extension(HANDOFF_EXTENSION_URI),
        )
        .await;
    let mut message = delegation();
    if let agentyard::a2a::Part::Data(data) = &mut message.parts[1] {
        data.data.remove("taskTitle");
    }
    let error = client
        .send_message(MessageSendParams::new(message))
        .await
        .expect_err("taskTitle is required");
    let rpc = error.json_rpc_error().expect("a JSON-RPC error");
    assert_eq!(rpc.code, -32602);
    assert!(rpc.message.contains("taskTitle"), "{}", rpc.message);
    edge.stop().await;
}
