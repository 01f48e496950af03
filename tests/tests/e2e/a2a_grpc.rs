//! `agentyard serve` over gRPC: the cards list the gRPC interface with its real port,
//! and the typed client calls every method over it, in A2A 1.0 (the agent named by
//! the interface's tenant) and 0.3.0 (the default agent, or the one the `a2a-agent`
//! metadata names), with the server's credentials, extensions and errors.

use std::net::SocketAddr;

use agentyard::a2a::v1::{self, ProtocolVersion};
use agentyard::a2a::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, Message, MessageSendConfiguration, MessageSendParams,
    PushNotificationConfig, SendMessageResult, StreamEvent, Task, TaskIdParams,
    TaskPushNotificationConfig, TaskQueryParams, TaskState, TransportProtocol,
};
use agentyard::client::{A2aClient, ClientError, ClientOptions};
use agentyard::config::{Config, StoreKind};
use agentyard::handoff::HANDOFF_EXTENSION_URI;
use agentyard::serve::Server;
use futures::StreamExt as _;
use serde_json::Value;

const KEY: &str = "key-for-ops";

const CONFIG: &str = r#"
[server]
bind = "127.0.0.1:0"

[agents]
exposed = ["echo", "countdown", "ask"]

[push]
allow_private_addresses = true

[[auth.api_keys]]
name = "ops"
key = "key-for-ops"
"#;

async fn serve() -> (Server, String, SocketAddr) {
    let mut config = Config::from_toml(CONFIG).expect("valid config");
    config.store.kind = Some(StoreKind::Memory);
    let server = Server::from_config(config)
        .await
        .expect("the server starts");
    let base = format!("http://{}", server.local_addr());
    let grpc = server.grpc_addr().expect("gRPC is on by default");
    assert_ne!(grpc.port(), 0, "the real port");
    (server, base, grpc)
}

fn options() -> ClientOptions {
    ClientOptions::new()
        .api_key("X-API-Key", KEY)
        .extension(HANDOFF_EXTENSION_URI)
        .transport(TransportProtocol::Grpc)
}

/// A client for `agent` over gRPC in 1.0, from its card.
async fn v1_client(base: &str, agent: &str) -> A2aClient {
    let client = A2aClient::connect(
        &format!("{base}/agents/{agent}/.well-known/agent-card.json"),
        options(),
    )
    .await
    .expect("a client from the card");
    assert_eq!(client.transport(), TransportProtocol::Grpc);
    assert_eq!(client.protocol_version(), ProtocolVersion::V1_0);
    assert_eq!(client.tenant(), agent);
    client
}

fn task(result: SendMessageResult) -> Task {
    match result {
        SendMessageResult::Task(task) => task,
        SendMessageResult::Message(message) => panic!("a message, not a task: {message:?}"),
    }
}

fn non_blocking(text: &str) -> MessageSendParams {
    let mut params = MessageSendParams::new(Message::user_text(text));
    params.configuration = Some(MessageSendConfiguration {
        blocking: Some(false),
        ..MessageSendConfiguration::default()
    });
    params
}

async fn stream_to_the_end(stream: agentyard::client::A2aStream) -> Vec<StreamEvent> {
    let events = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        stream.collect::<Vec<_>>(),
    )
    .await
    .expect("the stream ends");
    events
        .into_iter()
        .map(|event| event.expect("an event"))
        .collect()
}

fn last_state(events: &[StreamEvent]) -> Option<TaskState> {
    events.iter().rev().find_map(|event| match event {
        StreamEvent::StatusUpdate(update) => Some(update.status.state),
        StreamEvent::Task(task) => Some(task.status.state),
        _ => None,
    })
}

#[tokio::test]
async fn cards_list_the_grpc_interface_with_its_real_port_and_the_agents_tenant() {
    let (server, base, grpc) = serve().await;
    let card: Value = reqwest::get(format!(
        "{base}/agents/countdown/.well-known/agent-card.json"
    ))
    .await
    .expect("card")
    .json()
    .await
    .expect("JSON");
    let interfaces = card["supportedInterfaces"].as_array().expect("interfaces");
    let grpc_entries: Vec<&Value> = interfaces
        .iter()
        .filter(|i| i["protocolBinding"] == "GRPC")
        .collect();
    assert_eq!(
        grpc_entries.len(),
        1,
        "1.0 only off the default agent: {card}"
    );
    assert_eq!(grpc_entries[0]["url"], grpc.to_string());
    assert_eq!(grpc_entries[0]["tenant"], "countdown");
    assert_eq!(grpc_entries[0]["protocolVersion"], "1.0");
    assert_eq!(
        interfaces[0]["protocolBinding"], "JSONRPC",
        "JSON-RPC stays first"
    );

    let root: Value = reqwest::get(format!("{base}/.well-known/agent-card.json"))
        .await
        .expect("card")
        .json()
        .await
        .expect("JSON");
    let versions: Vec<&Value> = root["supportedInterfaces"]
        .as_array()
        .expect("interfaces")
        .iter()
        .filter(|i| i["protocolBinding"] == "GRPC")
        .map(|i| &i["protocolVersion"])
        .collect();
    assert_eq!(versions, ["1.0", "0.3"], "the default agent's card: {root}");
    assert!(
        root["additionalInterfaces"]
            .to_string()
            .contains(&grpc.to_string()),
        "the 0.3 fields name it too: {root}"
    );
    server.stop().await;
}

#[tokio::test]
async fn every_method_works_over_grpc_in_1_0() {
    let (server, base, _) = serve().await;

    // The echo agent answers with a message.
    let echo = v1_client(&base, "echo").await;
    match echo
        .send_message(MessageSendParams::new(Message::user_text("hi")))
        .await
        .expect("sent")
    {
        SendMessageResult::Message(message) => assert!(message.text().contains("hi")),
        SendMessageResult::Task(task) => panic!("echo answers with a message: {task:?}"),
    }

    // A stream, its extensions echoed, ending when the task completes.
    let countdown = v1_client(&base, "countdown").await;
    let stream = countdown
        .send_message_stream(MessageSendParams::new(Message::user_text("1")))
        .await
        .expect("a stream");
    assert_eq!(stream.extensions(), [HANDOFF_EXTENSION_URI]);
    let events = stream_to_the_end(stream).await;
    assert_eq!(
        last_state(&events),
        Some(TaskState::Completed),
        "{events:?}"
    );
    let task_id = events
        .iter()
        .find_map(|event| event.task_id().cloned())
        .expect("a task id");

    // Get with a history length, and the task in the list.
    let got = countdown
        .get_task(TaskQueryParams {
            id: task_id.clone(),
            history_length: Some(1),
            metadata: None,
        })
        .await
        .expect("got");
    assert_eq!(got.status.state, TaskState::Completed);
    assert!(got.history.as_ref().is_none_or(|h| h.len() <= 1), "{got:?}");
    let listed = countdown
        .list_tasks(v1::ListTasksRequest::default())
        .await
        .expect("listed");
    assert!(listed.tasks.iter().any(|t| t.id == task_id), "{listed:?}");

    // Cancel a running task; subscribe to another.
    let running = task(
        countdown
            .send_message(non_blocking("30"))
            .await
            .expect("sent"),
    );
    let canceled = countdown
        .cancel_task(TaskIdParams::new(running.id.clone()))
        .await
        .expect("canceled");
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let error = countdown
        .cancel_task(TaskIdParams::new(running.id.clone()))
        .await
        .expect_err("already canceled");
    assert_eq!(
        error.json_rpc_error().map(|e| e.code),
        Some(-32002),
        "{error:?}"
    );
    let second = task(
        countdown
            .send_message(non_blocking("1"))
            .await
            .expect("sent"),
    );
    let resubscribed = countdown
        .resubscribe(TaskIdParams::new(second.id.clone()))
        .await
        .expect("subscribed");
    let events = stream_to_the_end(resubscribed).await;
    assert_eq!(
        last_state(&events),
        Some(TaskState::Completed),
        "{events:?}"
    );

    // Push-config CRUD.
    let config = TaskPushNotificationConfig {
        task_id: second.id.clone(),
        push_notification_config: PushNotificationConfig {
            id: Some("hook-1".to_owned()),
            ..PushNotificationConfig::new("http://127.0.0.1:9/hook")
        },
    };
    let stored = countdown.set_push_config(config).await.expect("set");
    assert_eq!(
        stored.push_notification_config.id.as_deref(),
        Some("hook-1")
    );
    let got = countdown
        .get_push_config(GetTaskPushNotificationConfigParams {
            id: second.id.clone(),
            push_notification_config_id: Some("hook-1".to_owned()),
            metadata: None,
        })
        .await
        .expect("got");
    assert_eq!(got.push_notification_config.url, "http://127.0.0.1:9/hook");
    let listed = countdown
        .list_push_configs(ListTaskPushNotificationConfigParams {
            id: second.id.clone(),
            metadata: None,
        })
        .await
        .expect("listed");
    assert_eq!(listed.len(), 1);
    countdown
        .delete_push_config(DeleteTaskPushNotificationConfigParams {
            id: second.id.clone(),
            push_notification_config_id: "hook-1".to_owned(),
            metadata: None,
        })
        .await
        .expect("deleted");

    // The input-required round trip.
    let ask = v1_client(&base, "ask").await;
    let asked = task(
        ask.send_message(MessageSendParams::new(Message::user_text("hello")))
            .await
            .expect("sent"),
    );
    assert_eq!(asked.status.state, TaskState::InputRequired);
    let answered = task(
        ask.send_message(MessageSendParams::new(
            Message::user_text("Ada")
                .with_task_id(asked.id.clone())
                .with_context_id(asked.context_id.clone()),
        ))
        .await
        .expect("answered"),
    );
    assert_eq!(answered.status.state, TaskState::Completed);
    assert_eq!(answered.id, asked.id);

    // Errors: an unknown task, a version not served.
    let error = ask
        .get_task(TaskQueryParams::new("no-such-task"))
        .await
        .expect_err("unknown");
    assert!(
        matches!(&error, ClientError::JsonRpc(rpc) if rpc.code == -32001),
        "{error:?}"
    );
    let error = ask
        .with_header("A2A-Version", "99.0")
        .get_task(TaskQueryParams::new(asked.id.clone()))
        .await
        .expect_err("not served");
    assert_eq!(
        error.json_rpc_error().map(|e| e.code),
        Some(-32009),
        "{error:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn the_0_3_service_reaches_the_default_agent_or_the_one_the_metadata_names() {
    let (server, _base, grpc) = serve().await;
    let target = grpc.to_string();
    let client = |agent: Option<&str>| {
        let mut options = options().protocol_version(ProtocolVersion::V0_3);
        if let Some(agent) = agent {
            options = options.header("a2a-agent", agent);
        }
        A2aClient::connect(&target, options)
    };
    let echo = client(None).await.expect("a client");
    assert_eq!(echo.protocol_version(), ProtocolVersion::V0_3);
    assert!(matches!(
        echo.send_message(MessageSendParams::new(Message::user_text("hi")))
            .await
            .expect("sent"),
        SendMessageResult::Message(_)
    ));

    let ask = client(Some("ask")).await.expect("a client");
    let asked = task(
        ask.send_message(MessageSendParams::new(Message::user_text("hello")))
            .await
            .expect("sent"),
    );
    assert_eq!(asked.status.state, TaskState::InputRequired);
    let answered = task(
        ask.send_message(MessageSendParams::new(
            Message::user_text("Ada")
                .with_task_id(asked.id.clone())
                .with_context_id(asked.context_id.clone()),
        ))
        .await
        .expect("answered"),
    );
    assert_eq!(answered.status.state, TaskState::Completed);

    let countdown = client(Some("countdown")).await.expect("a client");
    let events = stream_to_the_end(
        countdown
            .send_message_stream(MessageSendParams::new(Message::user_text("1")))
            .await
            .expect("a stream"),
    )
    .await;
    assert!(
        events.last().is_some_and(StreamEvent::is_final),
        "{events:?}"
    );
    assert_eq!(last_state(&events), Some(TaskState::Completed));
    server.stop().await;
}

#[tokio::test]
async fn a_caller_without_the_key_is_unauthenticated() {
    let (server, _base, grpc) = serve().await;
    let client = A2aClient::connect(
        &grpc.to_string(),
        ClientOptions::new()
            .transport(TransportProtocol::Grpc)
            .protocol_version(ProtocolVersion::V1_0),
    )
    .await
    .expect("a client");
    let error = client
        .send_message(MessageSendParams::new(Message::user_text("hi")))
        .await
        .expect_err("no key");
    assert!(
        matches!(error, ClientError::Grpc { .. }) && error.to_string().contains("Unauthenticated"),
        "{error:?}"
    );
    server.stop().await;
}
