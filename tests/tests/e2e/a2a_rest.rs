//! The HTTP+JSON (REST) binding end to end: our client, forced onto HTTP+JSON,
//! against the edge over a real socket, in A2A 1.0 and 0.3: send, stream, get
//! with history length, list (1.0), cancel, subscribe, push-config CRUD, the
//! input-required round trip, each error with its HTTP status and body, auth and
//! the extensions echo; and the card offering the binding.

use agentyard::a2a::v1::ProtocolVersion;
use agentyard::a2a::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, Message, MessageSendConfiguration, MessageSendParams,
    PushNotificationConfig, SendMessageResult, StreamEvent, Task, TaskIdParams,
    TaskPushNotificationConfig, TaskQueryParams, TaskState, TransportProtocol,
};
use agentyard::client::{A2aClient, ClientError, ClientOptions};
use agentyard::edge::EdgeAuth;
use agentyard::handoff::HANDOFF_EXTENSION_URI;
use agentyard_tests::http::TestEdge;
use futures::StreamExt as _;
use serde_json::Value;

const VERSIONS: [ProtocolVersion; 2] = [ProtocolVersion::V1_0, ProtocolVersion::V0_3];

async fn rest_client(edge: &TestEdge, agent: &str, version: ProtocolVersion) -> A2aClient {
    rest_client_with(edge, agent, version, ClientOptions::new()).await
}

async fn rest_client_with(
    edge: &TestEdge,
    agent: &str,
    version: ProtocolVersion,
    options: ClientOptions,
) -> A2aClient {
    let client = edge
        .client_with(
            agent,
            options
                .protocol_version(version)
                .transport(TransportProtocol::HttpJson),
        )
        .await;
    assert_eq!(client.transport(), TransportProtocol::HttpJson);
    assert_eq!(client.protocol_version(), version);
    client
}

fn task_of(result: SendMessageResult) -> Task {
    match result {
        SendMessageResult::Task(task) => task,
        SendMessageResult::Message(message) => panic!("expected a task, got {message:?}"),
    }
}

fn in_background(text: &str) -> MessageSendParams {
    MessageSendParams {
        configuration: Some(MessageSendConfiguration {
            blocking: Some(false),
            ..MessageSendConfiguration::default()
        }),
        ..MessageSendParams::new(Message::user_text(text))
    }
}

fn code(error: &ClientError) -> i64 {
    match error {
        ClientError::JsonRpc(error) => error.code,
        other => panic!("expected the agent's A2A error, got {other:?}"),
    }
}

#[tokio::test]
async fn the_card_offers_http_json_beside_json_rpc_1_0_first() {
    let edge = TestEdge::start().await;
    let card: Value = edge
        .http()
        .get(edge.card_url("echo"))
        .send()
        .await
        .expect("the card")
        .json()
        .await
        .expect("JSON");
    let listed: Vec<(String, String)> = card["supportedInterfaces"]
        .as_array()
        .expect("interfaces")
        .iter()
        .map(|i| {
            (
                i["protocolBinding"].as_str().unwrap_or_default().to_owned(),
                i["protocolVersion"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let pair = |b: &str, v: &str| (b.to_owned(), v.to_owned());
    assert_eq!(
        listed,
        [
            pair("JSONRPC", "1.0"),
            pair("JSONRPC", "0.3"),
            pair("HTTP+JSON", "1.0"),
            pair("HTTP+JSON", "0.3")
        ]
    );
    // A client left to choose takes the card's order: JSON-RPC, in 1.0.
    let client = A2aClient::connect(&edge.card_url("echo"), ClientOptions::new())
        .await
        .expect("connects");
    assert_eq!(client.transport(), TransportProtocol::JsonRpc);
    assert_eq!(client.protocol_version(), ProtocolVersion::V1_0);
    edge.stop().await;
}

#[tokio::test]
async fn send_get_list_and_stream_over_rest_in_both_versions() {
    let edge = TestEdge::start().await;
    for version in VERSIONS {
        let client = rest_client(&edge, "echo", version).await;
        let task = task_of(
            client
                .send_message(MessageSendParams::new(Message::user_text("hi")))
                .await
                .expect("sent"),
        );
        assert_eq!(task.status.state, TaskState::Completed, "{version:?}");
        let mut query = TaskQueryParams::new(task.id.clone());
        query.history_length = Some(1);
        let got = client.get_task(query).await.expect("the task");
        assert_eq!(got.id, task.id);
        assert_eq!(got.history.as_ref().map(Vec::len), Some(1), "{version:?}");
        if version == ProtocolVersion::V1_0 {
            let list = client
                .list_tasks(agentyard::a2a::v1::ListTasksRequest {
                    context_id: task.context_id.to_string(),
                    ..Default::default()
                })
                .await
                .expect("a list");
            assert_eq!(list.tasks.len(), 1);
            assert_eq!(list.tasks[0].id, task.id);
        }
        let chunks = rest_client(&edge, "chunks", version).await;
        let events: Vec<StreamEvent> = chunks
            .send_message_stream(MessageSendParams::new(Message::user_text("go")))
            .await
            .expect("a stream")
            .map(|event| event.expect("an event"))
            .collect()
            .await;
        assert!(events.len() > 3, "{version:?}: {events:?}");
        assert!(
            events
                .iter()
                .any(|e| matches!(e, StreamEvent::ArtifactUpdate(_))),
            "{version:?}"
        );
        let last = events.last().expect("events");
        assert!(last.is_final(), "{version:?}: {last:?}");
    }
    edge.stop().await;
}

#[tokio::test]
async fn cancel_subscribe_and_the_input_required_round_trip_over_rest() {
    let edge = TestEdge::start().await;
    for version in VERSIONS {
        let client = rest_client(&edge, "gated", version).await;
        // Subscribe to a running task, then let it finish.
        let running = task_of(
            client
                .send_message(in_background("one"))
                .await
                .expect("sent"),
        );
        let mut events = client
            .resubscribe(TaskIdParams::new(running.id.clone()))
            .await
            .expect("subscribed");
        edge.open_gate(1);
        let mut last = None;
        while let Some(event) = events.next().await {
            last = Some(event.expect("an event"));
        }
        // The stream ends with the task completed: a final status update, or the
        // task itself when it finished before the subscription caught up.
        let state = match &last {
            Some(StreamEvent::StatusUpdate(update)) if update.is_final => update.status.state,
            Some(StreamEvent::Task(task)) => task.status.state,
            other => panic!("{version:?}: the stream ended with {other:?}"),
        };
        assert_eq!(state, TaskState::Completed, "{version:?}");
        // Cancel a running task; a second cancel is -32002 (409).
        let running = task_of(
            client
                .send_message(in_background("two"))
                .await
                .expect("sent"),
        );
        let canceled = client
            .cancel_task(TaskIdParams::new(running.id.clone()))
            .await
            .expect("canceled");
        assert_eq!(canceled.status.state, TaskState::Canceled);
        let again = client
            .cancel_task(TaskIdParams::new(running.id.clone()))
            .await
            .expect_err("already canceled");
        assert_eq!(code(&again), -32002, "{version:?}");

        // input-required, then the answer to the same task.
        let ask = rest_client(&edge, "ask", version).await;
        let asked = task_of(
            ask.send_message(MessageSendParams::new(Message::user_text("start")))
                .await
                .expect("sent"),
        );
        assert_eq!(asked.status.state, TaskState::InputRequired, "{version:?}");
        let mut answer = Message::user_text("blue");
        answer.task_id = Some(asked.id.clone());
        answer.context_id = Some(asked.context_id.clone());
        let done = task_of(
            ask.send_message(MessageSendParams::new(answer))
                .await
                .expect("answered"),
        );
        assert_eq!(done.id, asked.id);
        assert_eq!(done.status.state, TaskState::Completed, "{version:?}");
    }
    edge.stop().await;
}

#[tokio::test]
async fn push_configs_are_created_read_listed_and_deleted_over_rest() {
    let edge = TestEdge::start().await;
    for version in VERSIONS {
        let client = rest_client(&edge, "gated", version).await;
        let task = task_of(
            client
                .send_message(in_background("job"))
                .await
                .expect("sent"),
        );
        let mut webhook = PushNotificationConfig::new("http://127.0.0.1:9/hook");
        webhook.id = Some("w-1".to_owned());
        let set = client
            .set_push_config(TaskPushNotificationConfig {
                task_id: task.id.clone(),
                push_notification_config: webhook,
            })
            .await
            .expect("created");
        assert_eq!(set.push_notification_config.id.as_deref(), Some("w-1"));
        let got = client
            .get_push_config(GetTaskPushNotificationConfigParams {
                id: task.id.clone(),
                push_notification_config_id: Some("w-1".to_owned()),
                metadata: None,
            })
            .await
            .expect("read");
        assert_eq!(got.push_notification_config.url, "http://127.0.0.1:9/hook");
        let listed = client
            .list_push_configs(ListTaskPushNotificationConfigParams {
                id: task.id.clone(),
                metadata: None,
            })
            .await
            .expect("listed");
        assert_eq!(listed.len(), 1, "{version:?}");
        client
            .delete_push_config(DeleteTaskPushNotificationConfigParams {
                id: task.id.clone(),
                push_notification_config_id: "w-1".to_owned(),
                metadata: None,
            })
            .await
            .expect("deleted");
        let listed = client
            .list_push_configs(ListTaskPushNotificationConfigParams {
                id: task.id.clone(),
                metadata: None,
            })
            .await
            .expect("listed");
        assert!(listed.is_empty(), "{version:?}");
        edge.open_gate(1);
    }
    edge.stop().await;
}

#[tokio::test]
async fn errors_keep_their_a2a_code_through_the_client_and_their_status_on_the_wire() {
    let edge = TestEdge::start().await;
    for version in VERSIONS {
        let client = rest_client(&edge, "echo", version).await;
        let missing = client
            .get_task(TaskQueryParams::new("no-such-task"))
            .await
            .expect_err("unknown");
        assert_eq!(code(&missing), -32001, "{version:?}");
        let error = client
            .resubscribe(TaskIdParams::new("no-such-task"))
            .await
            .expect_err("unknown");
        assert_eq!(code(&error), -32001, "{version:?}");
    }
    // The wire: 1.0 a google.rpc.Status, 0.3 the JSON-RPC error object, both 404.
    let url = edge.agent_url("echo");
    let response = edge
        .http()
        .get(format!("{url}/tasks/no-such-task"))
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(body["error"]["status"], "NOT_FOUND");
    assert_eq!(body["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
    let response = edge
        .http()
        .get(format!("{url}/v1/tasks/no-such-task"))
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.expect("JSON");
    assert_eq!(body["code"], -32001);
    // A bad body, a media type refused, a method refused, a path unknown.
    let post = |path: &str, content_type: &str, body: &str| {
        edge.http()
            .post(format!("{url}{path}"))
            .header("content-type", content_type)
            .body(body.to_owned())
            .send()
    };
    let bad = post("/message:send", "application/a2a+json", "{\"message\": 1}")
        .await
        .expect("answered");
    assert_eq!(bad.status(), 400);
    let body: Value = bad.json().await.expect("JSON");
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("message")
    );
    let refused = post("/message:send", "text/plain", "hi")
        .await
        .expect("answered");
    assert_eq!(refused.status(), 415);
    let wrong = edge
        .http()
        .delete(format!("{url}/message:send"))
        .send()
        .await
        .expect("answered");
    assert_eq!(wrong.status(), 405);
    assert_eq!(wrong.headers()["allow"], "POST");
    let unknown = edge
        .http()
        .get(format!("{url}/nothing:here/at/all"))
        .send()
        .await
        .expect("answered");
    assert_eq!(unknown.status(), 404);
    edge.stop().await;
}

#[tokio::test]
async fn auth_and_extensions_are_those_of_json_rpc() {
    let config = TestEdge::config().auth(EdgeAuth::default().bearer_token("t-rest", "alice"));
    let edge = TestEdge::start_with(config).await;
    for version in VERSIONS {
        let anonymous = rest_client(&edge, "echo", version).await;
        let refused = anonymous
            .send_message(MessageSendParams::new(Message::user_text("hi")))
            .await
            .expect_err("needs credentials");
        assert_eq!(
            refused.status().map(|s| s.as_u16()),
            Some(401),
            "{version:?}: {refused:?}"
        );
        let options = ClientOptions::new()
            .bearer_token("t-rest")
            .extension(HANDOFF_EXTENSION_URI);
        let client = rest_client_with(&edge, "echo", version, options).await;
        let answered = client
            .call::<Value>(agentyard::jsonrpc::A2aRequest::SendMessage(
                MessageSendParams::new(Message::user_text("hi")),
            ))
            .await
            .expect("let in");
        assert_eq!(answered.extensions, [HANDOFF_EXTENSION_URI], "{version:?}");
    }
    edge.stop().await;
}

#[tokio::test]
async fn a_binding_left_out_is_off_and_off_the_card() {
    let config = TestEdge::config()
        .bindings([TransportProtocol::HttpJson])
        .grpc_bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
    let edge = TestEdge::start_with(config).await;
    // No gRPC listener, though it has an address: the bindings leave it out.
    assert_eq!(edge.edge.grpc_addr(), None);
    let card: Value = edge
        .http()
        .get(edge.card_url("echo"))
        .send()
        .await
        .expect("the card")
        .json()
        .await
        .expect("JSON");
    assert_eq!(card["preferredTransport"], "HTTP+JSON", "{card}");
    let bindings: Vec<&str> = card["supportedInterfaces"]
        .as_array()
        .expect("interfaces")
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(bindings, ["HTTP+JSON", "HTTP+JSON"]);
    let rpc = edge
        .http()
        .post(edge.agent_url("echo"))
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}"#)
        .send()
        .await
        .expect("answered");
    assert_eq!(rpc.status(), 404);
    // A client left to choose reads the card and goes over HTTP+JSON.
    let client = A2aClient::connect(&edge.card_url("echo"), ClientOptions::new())
        .await
        .expect("connects");
    assert_eq!(client.transport(), TransportProtocol::HttpJson);
    client
        .send_message(MessageSendParams::new(Message::user_text("hi")))
        .await
        .expect("answered over REST");
    edge.stop().await;
}
