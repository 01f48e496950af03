//! [`A2aClient`] over gRPC against the gRPC server and the mock service, in both
//! protocol versions.

use crate::mock;

use std::sync::Arc;

use agentyard_transport::TaskId;
use agentyard_transport::a2a::v1::{self, ProtocolVersion};
use agentyard_transport::a2a::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, MessageSendParams, SendMessageResult, TaskIdParams,
    TaskQueryParams, TaskState, TransportProtocol,
};
use agentyard_transport::client::{A2aClient, ClientError, ClientOptions};
use agentyard_transport::server::ServerConfig;
use futures::StreamExt as _;
use mock::{API_KEY, BEARER, MockService, OPTIONAL_EXT, user_message, within};

/// A 1.0 card to fill in with interfaces.
fn card_base() -> v1::AgentCard {
    v1::AgentCard::from(agentyard_transport::a2a::AgentCard::new(
        "any",
        "a card for the client to choose from",
        "http://127.0.0.1:1/",
        "1.0.0",
    ))
}

/// The gRPC server on an ephemeral port, serving the mock; its `host:port`.
async fn serve() -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("an ephemeral port");
    let target = listener.local_addr().expect("an address").to_string();
    let service = MockService::new("http://127.0.0.1:1");
    let config = ServerConfig::builder().auth(mock::auth()).build();
    let (shutdown, signal) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        agentyard_transport::grpc::serve(listener, Arc::clone(&service), &config, async move {
            let _ = signal.await;
        })
        .await
    });
    (target, shutdown)
}

async fn client(target: &str, version: ProtocolVersion, options: ClientOptions) -> A2aClient {
    let client = A2aClient::connect(
        target,
        options
            .transport(TransportProtocol::Grpc)
            .protocol_version(version),
    )
    .await
    .expect("a client");
    assert_eq!(client.transport(), TransportProtocol::Grpc);
    assert_eq!(client.protocol_version(), version);
    client
}

fn task_of(result: SendMessageResult) -> agentyard_transport::a2a::Task {
    match result {
        SendMessageResult::Task(task) => task,
        other => panic!("not a task: {other:?}"),
    }
}

#[tokio::test]
async fn every_call_works_over_grpc_in_both_versions() {
    let (target, _shutdown) = serve().await;
    for version in ProtocolVersion::ALL {
        let client = client(
            &target,
            version,
            ClientOptions::new().extension(OPTIONAL_EXT),
        )
        .await;
        let task = task_of(
            client
                .send_message(MessageSendParams::new(user_message("hello")))
                .await
                .expect("sent"),
        );
        assert_eq!(task.status.state, TaskState::Completed, "{version:?}");
        let metadata = task.metadata.clone().expect("the mock's metadata");
        assert_eq!(metadata["extensions"], serde_json::json!([OPTIONAL_EXT]));

        let got = client
            .get_task(TaskQueryParams {
                id: TaskId::new("t-5"),
                history_length: Some(2),
                metadata: None,
            })
            .await
            .expect("got");
        assert_eq!(got.id.as_str(), "t-5");
        let canceled = client
            .cancel_task(TaskIdParams {
                id: TaskId::new("t-5"),
                metadata: None,
            })
            .await
            .expect("canceled");
        assert_eq!(canceled.status.state, TaskState::Canceled);

        let mut stream = client
            .send_message_stream(MessageSendParams::new(user_message("go")))
            .await
            .expect("a stream");
        assert_eq!(stream.extensions(), [OPTIONAL_EXT], "{version:?}");
        let mut events = Vec::new();
        while let Some(event) = within(stream.next()).await {
            events.push(event.expect("an event"));
        }
        assert_eq!(events.len(), 4, "{version:?}: {events:?}");
        assert!(events[3].is_final(), "{version:?}");

        let events: Vec<_> = within(
            client
                .resubscribe(TaskIdParams {
                    id: TaskId::new("t-5"),
                    metadata: None,
                })
                .await
                .expect("resubscribed")
                .collect::<Vec<_>>(),
        )
        .await;
        assert_eq!(events.len(), 2, "{version:?}");

        let config = mock::push_config("t-5", "https://hooks.example/9");
        let mut config = config;
        config.push_notification_config.id = Some("c-9".to_owned());
        let stored = client.set_push_config(config.clone()).await.expect("set");
        assert_eq!(stored, config, "{version:?}");
        let got = client
            .get_push_config(GetTaskPushNotificationConfigParams {
                id: TaskId::new("t-5"),
                push_notification_config_id: Some("c-9".to_owned()),
                metadata: None,
            })
            .await
            .expect("got");
        assert_eq!(got.push_notification_config.id.as_deref(), Some("c-9"));
        let listed = client
            .list_push_configs(ListTaskPushNotificationConfigParams {
                id: TaskId::new("t-5"),
                metadata: None,
            })
            .await
            .expect("listed");
        assert_eq!(listed.len(), 2);
        client
            .delete_push_config(DeleteTaskPushNotificationConfigParams {
                id: TaskId::new("t-5"),
                push_notification_config_id: "c-9".to_owned(),
                metadata: None,
            })
            .await
            .expect("deleted");

        let error = client
            .get_task(TaskQueryParams {
                id: TaskId::new("missing"),
                history_length: None,
                metadata: None,
            })
            .await
            .expect_err("no such task");
        assert!(
            matches!(&error, ClientError::JsonRpc(rpc) if rpc.code == -32001),
            "{version:?}: {error:?}"
        );
    }
}

#[tokio::test]
async fn list_tasks_and_the_extended_card_go_over_1_0() {
    let (target, _shutdown) = serve().await;
    let client = client(
        &target,
        ProtocolVersion::V1_0,
        ClientOptions::new().bearer_token(BEARER),
    )
    .await;
    let list = client
        .list_tasks(v1::ListTasksRequest {
            page_size: Some(7),
            ..v1::ListTasksRequest::default()
        })
        .await
        .expect("listed");
    assert_eq!(list.page_size, 7);
    assert_eq!(list.tasks.len(), 1);
    // The extended card belongs to `secure`: the tenant names it.
    let secure = A2aClient::from_v1_card(
        v1::AgentCard {
            supported_interfaces: vec![v1::AgentInterface {
                url: target.clone(),
                protocol_binding: "GRPC".to_owned(),
                tenant: "secure".to_owned(),
                protocol_version: "1.0".to_owned(),
            }],
            ..card_base()
        },
        ClientOptions::new().bearer_token(BEARER),
    )
    .expect("a client");
    assert_eq!(secure.transport(), TransportProtocol::Grpc);
    assert_eq!(secure.tenant(), "secure");
    let card = secure
        .authenticated_extended_card()
        .await
        .expect("the card");
    assert_eq!(card.description, "extended card for alice");
}

#[tokio::test]
async fn credentials_travel_as_metadata_and_their_absence_is_a_grpc_error() {
    let (target, _shutdown) = serve().await;
    let interface = |tenant: &str| v1::AgentCard {
        supported_interfaces: vec![v1::AgentInterface {
            url: target.clone(),
            protocol_binding: "GRPC".to_owned(),
            tenant: tenant.to_owned(),
            protocol_version: "1.0".to_owned(),
        }],
        ..card_base()
    };
    let anonymous =
        A2aClient::from_v1_card(interface("secure"), ClientOptions::new()).expect("a client");
    let error = anonymous
        .send_message(MessageSendParams::new(user_message("hi")))
        .await
        .expect_err("no credentials");
    assert!(
        matches!(
            error,
            ClientError::Grpc {
                code: tonic::Code::Unauthenticated,
                ..
            }
        ),
        "{error:?}"
    );
    let keyed = A2aClient::from_v1_card(
        interface("secure"),
        ClientOptions::new().api_key("X-API-Key", API_KEY),
    )
    .expect("a client");
    let task = task_of(
        keyed
            .send_message(MessageSendParams::new(user_message("hi")))
            .await
            .expect("let in"),
    );
    assert_eq!(
        task.metadata.expect("metadata")["principal"],
        serde_json::json!("key-holder")
    );
}

#[test]
fn the_cards_first_interface_decides_the_binding_unless_one_is_forced() {
    let interface = |binding: &str, url: &str| v1::AgentInterface {
        url: url.to_owned(),
        protocol_binding: binding.to_owned(),
        tenant: String::new(),
        protocol_version: "1.0".to_owned(),
    };
    let card = v1::AgentCard {
        supported_interfaces: vec![
            interface("GRPC", "127.0.0.1:50051"),
            interface("JSONRPC", "http://127.0.0.1:8080/"),
        ],
        ..card_base()
    };
    let preferred = A2aClient::from_v1_card(card.clone(), ClientOptions::new()).expect("client");
    assert_eq!(preferred.transport(), TransportProtocol::Grpc);
    assert_eq!(preferred.endpoint(), "http://127.0.0.1:50051/");
    let forced = A2aClient::from_v1_card(
        card,
        ClientOptions::new().transport(TransportProtocol::JsonRpc),
    )
    .expect("client");
    assert_eq!(forced.transport(), TransportProtocol::JsonRpc);
    assert_eq!(forced.endpoint(), "http://127.0.0.1:8080/");
    let only_json = v1::AgentCard {
        supported_interfaces: vec![interface("JSONRPC", "http://127.0.0.1:8080/")],
        ..card_base()
    };
    let error = A2aClient::from_v1_card(
        only_json,
        ClientOptions::new().transport(TransportProtocol::Grpc),
    )
    .expect_err("no gRPC interface");
    assert!(error.to_string().contains("GRPC"), "{error}");
}

#[tokio::test]
async fn an_unreachable_server_is_a_grpc_error_that_retries_would_try_again() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let target = listener.local_addr().expect("an address").to_string();
    drop(listener);
    let client = client(&target, ProtocolVersion::V1_0, ClientOptions::new()).await;
    let error = client
        .get_task(TaskQueryParams {
            id: TaskId::new("t"),
            history_length: None,
            metadata: None,
        })
        .await
        .expect_err("nobody listens");
    assert!(
        matches!(
            error,
            ClientError::Grpc {
                code: tonic::Code::Unavailable,
                ..
            }
        ),
        "{error:?}"
    );
}
