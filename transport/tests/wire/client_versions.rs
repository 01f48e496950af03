//! The client picks A2A 1.0 or 0.3 from the card, says which in `A2A-Version`, sends
//! the interface's tenant, and never falls back to 0.3 after a 1.0 error: against
//! agentyard's server, and against a recorder that keeps what arrived.

use crate::mock;

use std::sync::{Arc, Mutex, PoisonError};

use agentyard_transport::a2a::v1::{self, ProtocolVersion};
use agentyard_transport::a2a::{
    MessageSendParams, SendMessageResult, StreamEvent, TaskIdParams, TaskQueryParams, TaskState,
};
use agentyard_transport::client::{A2aClient, ClientError, ClientOptions};
use agentyard_transport::jsonrpc::ErrorCode;
use agentyard_transport::server::ServerConfig;
use axum::http::HeaderMap;
use futures::StreamExt as _;
use mock::{TestServer, user_message, within};
use serde_json::{Value, json};

fn send(text: &str) -> MessageSendParams {
    MessageSendParams::new(user_message(text))
}

async fn server() -> TestServer {
    TestServer::start(ServerConfig::builder()).await
}

/// A 1.0 card naming one JSON-RPC interface per `(url, version, tenant)`.
fn v1_card(interfaces: &[(&str, &str, &str)]) -> Value {
    let interfaces: Vec<Value> = interfaces
        .iter()
        .map(|(url, version, tenant)| {
            json!({"url": url, "protocolBinding": "JSONRPC", "protocolVersion": version,
                   "tenant": tenant})
        })
        .collect();
    json!({"name": "recorded", "description": "a card served by the test", "version": "1",
           "supportedInterfaces": interfaces, "capabilities": {"streaming": true},
           "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
           "skills": []})
}

/// A 0.3 card at `url`.
fn v03_card(url: &str) -> Value {
    json!({"protocolVersion": "0.3.0", "name": "recorded", "description": "a 0.3 card",
           "url": url, "preferredTransport": "JSONRPC", "version": "1",
           "capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"],
           "defaultOutputModes": ["text/plain"], "skills": []})
}

/// One request as the recorder saw it.
#[derive(Clone, Debug)]
struct Seen {
    version: Option<String>,
    extensions_v1: Option<String>,
    extensions_v03: Option<String>,
    body: Value,
}

/// A server on 127.0.0.1 that serves `card` at `/card.json` (with `{base}` in it
/// replaced by its own address) and answers each `POST /rpc` with `answer` (its `id`
/// set to the request's), keeping what arrived.
async fn recorder(card: Value, answer: Value) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let base = format!("http://{}", listener.local_addr().expect("an address"));
    let card: Value = serde_json::from_str(&card.to_string().replace("{base}", &base))
        .expect("the card stays JSON");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let router = axum::Router::new()
        .route(
            "/card.json",
            axum::routing::get(move || {
                let card = card.clone();
                async move { axum::Json(card) }
            }),
        )
        .route(
            "/rpc",
            axum::routing::post(
                move |headers: HeaderMap, axum::Json(body): axum::Json<Value>| {
                    let log = Arc::clone(&log);
                    let mut answer = answer.clone();
                    async move {
                        let header = |name: &str| {
                            headers
                                .get(name)
                                .and_then(|value| value.to_str().ok())
                                .map(str::to_owned)
                        };
                        answer["id"] = body["id"].clone();
                        log.lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(Seen {
                                version: header("A2A-Version"),
                                extensions_v1: header("A2A-Extensions"),
                                extensions_v03: header("X-A2A-Extensions"),
                                body,
                            });
                        axum::Json(answer)
                    }
                },
            ),
        );
    tokio::spawn(async move { axum::serve(listener, router).await });
    (base, seen)
}

fn seen(log: &Mutex<Vec<Seen>>) -> Vec<Seen> {
    log.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

#[track_caller]
fn assert_json_rpc(error: &ClientError, code: ErrorCode) {
    match error {
        ClientError::JsonRpc(error) => assert_eq!(error.error_code(), Some(code), "{error:?}"),
        other => panic!("expected JSON-RPC error {code:?}, got {other:?}"),
    }
}

#[tokio::test]
async fn a_hybrid_card_is_spoken_to_in_1_0_for_every_call() {
    let server = server().await;
    let url = format!("{}/.well-known/agent-card.json", server.base);
    let client = within(A2aClient::connect(&url, ClientOptions::new()))
        .await
        .expect("a client");
    assert_eq!(client.protocol_version(), ProtocolVersion::V1_0);
    assert_eq!(client.endpoint(), format!("{}/", server.base));
    assert_eq!(client.card().map(|card| card.name.as_str()), Some("open"));

    let SendMessageResult::Task(task) =
        within(client.send_message(send("hi"))).await.expect("sent")
    else {
        panic!("a task");
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(
        task.metadata.as_ref().map(|m| m["agent"].clone()),
        Some(json!("open"))
    );
    assert_eq!(task.history.as_ref().map(Vec::len), Some(1));

    let events: Vec<StreamEvent> = within(async {
        let stream = client
            .send_message_stream(send("go"))
            .await
            .expect("a stream");
        stream.map(|event| event.expect("an event")).collect().await
    })
    .await;
    let kinds: Vec<String> = events
        .iter()
        .map(|event| match event {
            StreamEvent::Task(task) => format!("task {}", task.status.state),
            StreamEvent::StatusUpdate(update) => format!("status {}", update.status.state),
            StreamEvent::ArtifactUpdate(_) => "artifact".to_owned(),
            StreamEvent::Message(_) => "message".to_owned(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "task submitted",
            "status working",
            "artifact",
            "status completed"
        ]
    );

    let task = within(client.get_task(TaskQueryParams::new("t-7")))
        .await
        .expect("a task");
    assert_eq!(
        (task.id.as_str(), task.status.state),
        ("t-7", TaskState::Working)
    );
    let error = within(client.get_task(TaskQueryParams::new("missing")))
        .await
        .expect_err("an unknown task");
    assert_json_rpc(&error, ErrorCode::TaskNotFound);

    let task = within(client.cancel_task(TaskIdParams::new("t-8")))
        .await
        .expect("canceled");
    assert_eq!(task.status.state, TaskState::Canceled);

    let events: Vec<StreamEvent> = within(async {
        let stream = client
            .resubscribe(TaskIdParams::new("t-9"))
            .await
            .expect("a stream");
        stream.map(|event| event.expect("an event")).collect().await
    })
    .await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events[1].is_final(), "{events:?}");

    let list = within(client.list_tasks(v1::ListTasksRequest::default()))
        .await
        .expect("a list");
    assert_eq!(list.total_size, 1);
    assert_eq!(list.tasks[0].id.as_str(), "t-1");
}

#[tokio::test]
async fn a_pure_1_0_card_is_read_and_spoken_to_in_1_0() {
    let server = server().await;
    let url = format!(
        "{}/a2a-1.0/agents/plain/.well-known/agent-card.json",
        server.base
    );
    let client = within(A2aClient::connect(&url, ClientOptions::new()))
        .await
        .expect("a client");
    assert_eq!(client.protocol_version(), ProtocolVersion::V1_0);
    assert_eq!(client.card().map(|card| card.name.as_str()), Some("plain"));
    let result = within(client.send_message(send("hi"))).await;
    assert!(
        matches!(result, Ok(SendMessageResult::Task(_))),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_forced_0_3_and_a_0_3_card_are_spoken_to_in_0_3() {
    let server = server().await;
    let url = format!("{}/agents/plain/.well-known/agent-card.json", server.base);
    let options = ClientOptions::new().protocol_version(ProtocolVersion::V0_3);
    let client = within(A2aClient::connect(&url, options))
        .await
        .expect("a client");
    assert_eq!(client.protocol_version(), ProtocolVersion::V0_3);
    let result = within(client.send_message(send("hi"))).await;
    assert!(
        matches!(result, Ok(SendMessageResult::Task(_))),
        "{result:?}"
    );
    let error = within(client.list_tasks(v1::ListTasksRequest::default()))
        .await
        .expect_err("0.3 has no ListTasks");
    assert!(matches!(error, ClientError::Protocol(_)), "{error:?}");

    // A 0.3 card from elsewhere pointing at agentyard's endpoint.
    let endpoint = format!("{}/agents/plain", server.base);
    let (base, _) = recorder(v03_card(&endpoint), Value::Null).await;
    let client = within(A2aClient::connect(
        &format!("{base}/card.json"),
        ClientOptions::new(),
    ))
    .await
    .expect("a client");
    assert_eq!(client.protocol_version(), ProtocolVersion::V0_3);
    assert_eq!(client.endpoint(), endpoint);
    let task = within(client.get_task(TaskQueryParams::new("t-3")))
        .await
        .expect("a task");
    assert_eq!(task.id.as_str(), "t-3");

    let forced = ClientOptions::new().protocol_version(ProtocolVersion::V1_0);
    let error = within(A2aClient::connect(&format!("{base}/card.json"), forced))
        .await
        .expect_err("the card has no 1.0");
    assert!(matches!(error, ClientError::Protocol(_)), "{error:?}");
}

#[tokio::test]
async fn a_1_0_error_is_returned_not_retried_in_0_3() {
    let server = server().await;
    // 1.0 at an agent that does not exist, 0.3 at one that does: a fallback would
    // succeed.
    let card = v1_card(&[
        (&format!("{}/agents/nobody", server.base), "1.0", ""),
        (&format!("{}/agents/plain", server.base), "0.3", ""),
    ]);
    let (base, _) = recorder(card, Value::Null).await;
    let client = within(A2aClient::connect(
        &format!("{base}/card.json"),
        ClientOptions::new(),
    ))
    .await
    .expect("a client");
    assert_eq!(client.protocol_version(), ProtocolVersion::V1_0);
    let error = within(client.send_message(send("hi")))
        .await
        .expect_err("the 1.0 agent is missing");
    assert_eq!(
        error.status().map(|status| status.as_u16()),
        Some(404),
        "{error:?}"
    );
    assert_eq!(client.protocol_version(), ProtocolVersion::V1_0);
}

#[tokio::test]
async fn a_1_0_call_carries_the_version_header_the_1_0_body_and_the_tenant() {
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"message": {
        "messageId": "m-1", "role": "ROLE_AGENT", "parts": [{"text": "hello"}]}}});
    // 0.3 listed first: the 1.0 interface still wins.
    let card = v1_card(&[("{base}/other", "0.3", ""), ("{base}/rpc", "1.0", "acme")]);
    let (base, log) = recorder(card, answer).await;
    let options = ClientOptions::new().extension("urn:ext");
    let client = within(A2aClient::connect(&format!("{base}/card.json"), options))
        .await
        .expect("a client");
    assert_eq!(client.tenant(), "acme");
    let reply = within(client.send_message(send("hi"))).await.expect("sent");
    let SendMessageResult::Message(message) = reply else {
        panic!("a message: {reply:?}");
    };
    assert_eq!(message.text(), "hello");
    let list = v1::ListTasksRequest {
        tenant: "ignored".to_owned(),
        ..v1::ListTasksRequest::default()
    };
    // The recorder's answer is no list: only the request matters here.
    let _ = within(client.list_tasks(list)).await;

    let seen = seen(&log);
    assert_eq!(seen.len(), 2, "{seen:?}");
    for request in &seen {
        assert_eq!(request.version.as_deref(), Some("1.0"));
        assert_eq!(request.extensions_v1.as_deref(), Some("urn:ext"));
        assert_eq!(request.extensions_v03, None);
        assert_eq!(request.body["params"]["tenant"], "acme", "{request:?}");
    }
    assert_eq!(seen[0].body["method"], "SendMessage");
    assert_eq!(seen[0].body["params"]["message"]["role"], "ROLE_USER");
    assert_eq!(seen[0].body["params"]["message"]["parts"][0]["text"], "hi");
    assert_eq!(seen[1].body["method"], "ListTasks");
}

#[tokio::test]
async fn a_0_3_call_carries_the_0_3_header_and_body() {
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"kind": "message",
        "messageId": "m-1", "role": "agent", "parts": [{"kind": "text", "text": "hello"}]}});
    let (base, log) = recorder(v03_card("{base}/rpc"), answer).await;
    let options = ClientOptions::new().extension("urn:ext");
    let client = within(A2aClient::connect(&format!("{base}/card.json"), options))
        .await
        .expect("a client");
    let reply = within(client.send_message(send("hi"))).await.expect("sent");
    assert!(matches!(reply, SendMessageResult::Message(_)), "{reply:?}");
    let seen = seen(&log);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].version.as_deref(), Some("0.3"));
    assert_eq!(seen[0].extensions_v03.as_deref(), Some("urn:ext"));
    assert_eq!(seen[0].extensions_v1, None);
    assert_eq!(seen[0].body["method"], "message/send");
    assert_eq!(seen[0].body["params"]["message"]["kind"], "message");
    assert_eq!(seen[0].body["params"].get("tenant"), None);
}
