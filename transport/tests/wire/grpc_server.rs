//! The gRPC server over a real socket: both services on one port, against the mock
//! service, with the generated tonic clients.

use crate::mock;

use std::sync::Arc;
use std::time::Duration;

use agentyard_transport::proto::{v0_3, v1};
use agentyard_transport::server::ServerConfig;
use futures::StreamExt as _;
use mock::{API_KEY, BEARER, MockService, OPTIONAL_EXT, within};
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use tonic_types::StatusExt as _;

type V1Client = v1::pb::a2a_service_client::A2aServiceClient<Channel>;
type V03Client = v0_3::pb::a2a_service_client::A2aServiceClient<Channel>;

/// The gRPC server on an ephemeral port of 127.0.0.1, serving the mock.
struct GrpcServer {
    target: String,
    service: Arc<MockService>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    handle: tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
}

impl GrpcServer {
    async fn start(config: agentyard_transport::server::ServerConfigBuilder) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("an ephemeral port");
        let target = format!("http://{}", listener.local_addr().expect("an address"));
        let service = MockService::new("http://127.0.0.1:1");
        let config = config.auth(mock::auth()).build();
        let (shutdown, signal) = tokio::sync::oneshot::channel::<()>();
        let served = Arc::clone(&service);
        let handle = tokio::spawn(async move {
            agentyard_transport::grpc::serve(listener, served, &config, async move {
                let _ = signal.await;
            })
            .await
        });
        Self {
            target,
            service,
            shutdown: Some(shutdown),
            handle,
        }
    }

    async fn v1(&self) -> V1Client {
        V1Client::connect(self.target.clone())
            .await
            .expect("connects")
    }

    async fn v0_3(&self) -> V03Client {
        V03Client::connect(self.target.clone())
            .await
            .expect("connects")
    }

    async fn shut_down(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        within(&mut self.handle)
            .await
            .expect("serve did not panic")
            .expect("serve ended cleanly");
    }
}

fn v1_send(text: &str, tenant: &str) -> v1::pb::SendMessageRequest {
    v1::pb::SendMessageRequest {
        tenant: tenant.to_owned(),
        message: Some(v1::pb::Message {
            message_id: "m-1".to_owned(),
            role: v1::pb::Role::User as i32,
            parts: vec![v1::pb::Part {
                content: Some(v1::pb::part::Content::Text(text.to_owned())),
                ..v1::pb::Part::default()
            }],
            ..v1::pb::Message::default()
        }),
        ..v1::pb::SendMessageRequest::default()
    }
}

fn v0_3_send(text: &str) -> v0_3::pb::SendMessageRequest {
    v0_3::pb::SendMessageRequest {
        request: Some(v0_3::pb::Message {
            message_id: "m-1".to_owned(),
            role: v0_3::pb::Role::User as i32,
            content: vec![v0_3::pb::Part {
                part: Some(v0_3::pb::part::Part::Text(text.to_owned())),
            }],
            ..v0_3::pb::Message::default()
        }),
        ..v0_3::pb::SendMessageRequest::default()
    }
}

fn with_metadata<T>(message: T, pairs: &[(&'static str, &str)]) -> Request<T> {
    let mut request = Request::new(message);
    for (key, value) in pairs {
        request
            .metadata_mut()
            .insert(*key, value.parse().expect("ASCII metadata"));
    }
    request
}

fn task_of(response: v1::pb::SendMessageResponse) -> v1::pb::Task {
    match response.payload {
        Some(v1::pb::send_message_response::Payload::Task(task)) => task,
        other => panic!("not a task: {other:?}"),
    }
}

/// What the mock recorded in the task's metadata under `key`.
fn seen(task: &v1::pb::Task, key: &str) -> serde_json::Value {
    let metadata = task.metadata.clone().expect("the mock's metadata");
    serde_json::to_value(metadata).expect("JSON")[key].clone()
}

fn reason(status: &Status) -> String {
    status
        .get_details_error_info()
        .map(|info| info.reason)
        .unwrap_or_default()
}

#[tokio::test]
async fn a_1_0_send_reaches_the_default_agent_and_echoes_extensions() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    let mut client = server.v1().await;
    let response = client
        .send_message(with_metadata(
            v1_send("hello", ""),
            &[("a2a-version", "1.0"), ("a2a-extensions", OPTIONAL_EXT)],
        ))
        .await
        .expect("answered");
    assert_eq!(
        response
            .metadata()
            .get("a2a-extensions")
            .and_then(|v| v.to_str().ok()),
        Some(OPTIONAL_EXT)
    );
    let task = task_of(response.into_inner());
    assert_eq!(task.status.as_ref().map(|s| s.state), Some(3), "completed");
    assert_eq!(seen(&task, "agent"), "open");
    assert_eq!(seen(&task, "extensions"), serde_json::json!([OPTIONAL_EXT]));
    assert_eq!(
        task.history[0].parts[0].content,
        Some(v1::pb::part::Content::Text("hello".to_owned()))
    );
    server.shut_down().await;
}

#[tokio::test]
async fn the_tenant_names_the_agent_and_an_unknown_one_is_not_found() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    let mut client = server.v1().await;
    let task = task_of(
        client
            .send_message(v1_send("hi", "plain"))
            .await
            .expect("answered")
            .into_inner(),
    );
    assert_eq!(seen(&task, "agent"), "plain");
    let status = client
        .send_message(v1_send("hi", "hidden"))
        .await
        .expect_err("not exposed");
    assert_eq!(status.code(), Code::NotFound);
    assert!(status.message().contains("hidden"), "{}", status.message());
    server.shut_down().await;
}

#[tokio::test]
async fn the_a2a_agent_metadata_names_the_agent_when_the_tenant_is_empty() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    let task = task_of(
        server
            .v1()
            .await
            .send_message(with_metadata(v1_send("hi", ""), &[("a2a-agent", "plain")]))
            .await
            .expect("answered")
            .into_inner(),
    );
    assert_eq!(seen(&task, "agent"), "plain");
    // The tenant wins over the metadata.
    let task = task_of(
        server
            .v1()
            .await
            .send_message(with_metadata(
                v1_send("hi", "open"),
                &[("a2a-agent", "plain")],
            ))
            .await
            .expect("answered")
            .into_inner(),
    );
    assert_eq!(seen(&task, "agent"), "open");
    server.shut_down().await;
}

#[tokio::test]
async fn a_missing_task_is_not_found_with_its_error_info() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    let status = server
        .v1()
        .await
        .get_task(v1::pb::GetTaskRequest {
            id: "missing".to_owned(),
            ..v1::pb::GetTaskRequest::default()
        })
        .await
        .expect_err("no such task");
    assert_eq!(status.code(), Code::NotFound);
    assert_eq!(reason(&status), "TASK_NOT_FOUND");
    let info = status.get_details_error_info().expect("ErrorInfo");
    assert_eq!(info.domain, "a2a-protocol.org");
    let status = server
        .v0_3()
        .await
        .cancel_task(v0_3::pb::CancelTaskRequest {
            name: "tasks/done".to_owned(),
        })
        .await
        .expect_err("terminal");
    assert_eq!(status.code(), Code::FailedPrecondition);
    assert_eq!(reason(&status), "TASK_NOT_CANCELABLE");
    server.shut_down().await;
}

#[tokio::test]
async fn a_protected_agent_wants_credentials_in_the_metadata() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    let mut client = server.v1().await;
    let status = client
        .send_message(v1_send("hi", "secure"))
        .await
        .expect_err("no credentials");
    assert_eq!(status.code(), Code::Unauthenticated);
    let challenges: Vec<_> = status
        .metadata()
        .get_all("www-authenticate")
        .iter()
        .filter_map(|v| v.to_str().ok().map(str::to_owned))
        .collect();
    assert!(
        challenges.iter().any(|c| c.starts_with("ApiKey")),
        "{challenges:?}"
    );
    assert!(
        challenges.iter().any(|c| c.starts_with("Bearer")),
        "{challenges:?}"
    );
    let task = task_of(
        client
            .send_message(with_metadata(
                v1_send("hi", "secure"),
                &[("x-api-key", API_KEY)],
            ))
            .await
            .expect("let in")
            .into_inner(),
    );
    assert_eq!(seen(&task, "principal"), "key-holder");
    let bad = client
        .send_message(with_metadata(
            v1_send("hi", "secure"),
            &[("authorization", "Bearer wrong")],
        ))
        .await
        .expect_err("bad token");
    assert_eq!(bad.code(), Code::Unauthenticated);
    server.shut_down().await;
}

#[tokio::test]
async fn a_version_not_served_or_not_this_services_is_refused() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    for (version, expected) in [("99.0", "99.0"), ("0.3", "0.3")] {
        let status = server
            .v1()
            .await
            .send_message(with_metadata(
                v1_send("hi", ""),
                &[("a2a-version", version)],
            ))
            .await
            .expect_err("refused");
        assert_eq!(status.code(), Code::FailedPrecondition, "{version}");
        assert_eq!(reason(&status), "VERSION_NOT_SUPPORTED");
        assert!(status.message().contains(expected), "{}", status.message());
    }
    let status = server
        .v0_3()
        .await
        .send_message(with_metadata(v0_3_send("hi"), &[("a2a-version", "1.0")]))
        .await
        .expect_err("refused");
    assert_eq!(status.code(), Code::FailedPrecondition);
    assert!(
        status.message().contains("lf.a2a.v1.A2AService"),
        "{}",
        status.message()
    );
    // `1.0.1` is 1.0, and 0.3.0 is 0.3.
    server
        .v1()
        .await
        .send_message(with_metadata(
            v1_send("hi", ""),
            &[("a2a-version", "1.0.1")],
        ))
        .await
        .expect("1.0.1 is 1.0");
    server
        .v0_3()
        .await
        .send_message(with_metadata(v0_3_send("hi"), &[("a2a-version", "0.3.0")]))
        .await
        .expect("0.3.0 is 0.3");
    server.shut_down().await;
}

#[tokio::test]
async fn a_1_0_stream_ends_after_the_final_event_and_an_error_ends_it_with_its_status() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    let mut client = server.v1().await;
    let stream = client
        .send_streaming_message(v1_send("go", ""))
        .await
        .expect("a stream")
        .into_inner();
    let events: Vec<_> = within(stream.collect::<Vec<_>>()).await;
    assert_eq!(
        events.len(),
        4,
        "task, working, artifact, completed: {events:?}"
    );
    use v1::pb::stream_response::Payload;
    let last = events.last().and_then(|e| e.as_ref().ok()).cloned();
    let Some(v1::pb::StreamResponse {
        payload: Some(Payload::StatusUpdate(update)),
    }) = last
    else {
        panic!("the last event is not a status update: {events:?}")
    };
    assert_eq!(update.status.map(|s| s.state), Some(3));
    within(server.service.stream_dropped.notified()).await;

    let mut stream = client
        .send_streaming_message(v1_send("error", ""))
        .await
        .expect("a stream")
        .into_inner();
    assert!(within(stream.next()).await.expect("first").is_ok());
    let status = within(stream.next())
        .await
        .expect("the error")
        .expect_err("an error status");
    assert_eq!(status.code(), Code::Internal);
    assert!(status.message().contains("crashed"), "{}", status.message());
    assert!(within(stream.next()).await.is_none(), "the stream ended");
    server.shut_down().await;
}

#[tokio::test]
async fn the_0_3_service_answers_send_stream_subscribe_and_push_configs() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    let mut client = server.v0_3().await;
    let response = client
        .send_message(with_metadata(
            v0_3_send("hi"),
            &[("x-a2a-extensions", OPTIONAL_EXT)],
        ))
        .await
        .expect("answered");
    assert_eq!(
        response
            .metadata()
            .get("x-a2a-extensions")
            .and_then(|v| v.to_str().ok()),
        Some(OPTIONAL_EXT),
        "echoed in the spelling the call used"
    );
    let stream = client
        .send_streaming_message(v0_3_send("go"))
        .await
        .expect("a stream")
        .into_inner();
    let events: Vec<_> = within(stream.collect::<Vec<_>>()).await;
    assert_eq!(events.len(), 4, "ends after the final status: {events:?}");
    let stream = client
        .task_subscription(v0_3::pb::TaskSubscriptionRequest {
            name: "tasks/t-7".to_owned(),
        })
        .await
        .expect("a stream")
        .into_inner();
    let events: Vec<_> = within(stream.collect::<Vec<_>>()).await;
    assert_eq!(events.len(), 2, "{events:?}");

    let created = client
        .create_task_push_notification_config(v0_3::pb::CreateTaskPushNotificationConfigRequest {
            parent: "tasks/t-1".to_owned(),
            config_id: "c-1".to_owned(),
            config: Some(v0_3::pb::TaskPushNotificationConfig {
                name: String::new(),
                push_notification_config: Some(v0_3::pb::PushNotificationConfig {
                    url: "https://hooks.example/x".to_owned(),
                    ..v0_3::pb::PushNotificationConfig::default()
                }),
            }),
        })
        .await
        .expect("created")
        .into_inner();
    assert_eq!(created.name, "tasks/t-1/pushNotificationConfigs/c-1");
    let got = client
        .get_task_push_notification_config(v0_3::pb::GetTaskPushNotificationConfigRequest {
            name: "tasks/t-1/pushNotificationConfigs/c-1".to_owned(),
        })
        .await
        .expect("got")
        .into_inner();
    assert_eq!(got.name, "tasks/t-1/pushNotificationConfigs/c-1");
    let listed = client
        .list_task_push_notification_config(v0_3::pb::ListTaskPushNotificationConfigRequest {
            parent: "tasks/t-1".to_owned(),
            ..v0_3::pb::ListTaskPushNotificationConfigRequest::default()
        })
        .await
        .expect("listed")
        .into_inner();
    assert_eq!(listed.configs.len(), 2);
    client
        .delete_task_push_notification_config(v0_3::pb::DeleteTaskPushNotificationConfigRequest {
            name: "tasks/t-1/pushNotificationConfigs/c-1".to_owned(),
        })
        .await
        .expect("deleted");
    let card = client
        .get_agent_card(v0_3::pb::GetAgentCardRequest {})
        .await
        .expect("the card")
        .into_inner();
    assert_eq!(card.name, "open");
    assert!(card.capabilities.is_some_and(|c| c.streaming));
    server.shut_down().await;
}

#[tokio::test]
async fn the_card_decides_required_extensions_and_capabilities() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    let mut client = server.v1().await;
    let status = client
        .send_message(v1_send("hi", "strict"))
        .await
        .expect_err("the required extension is missing");
    assert_eq!(status.code(), Code::FailedPrecondition);
    assert_eq!(reason(&status), "EXTENSION_SUPPORT_REQUIRED");
    let status = client
        .send_streaming_message(v1_send("go", "plain"))
        .await
        .expect_err("plain does not stream");
    assert_eq!(status.code(), Code::Unimplemented);
    let status = client
        .list_task_push_notification_configs(v1::pb::ListTaskPushNotificationConfigsRequest {
            tenant: "plain".to_owned(),
            task_id: "t-1".to_owned(),
            ..v1::pb::ListTaskPushNotificationConfigsRequest::default()
        })
        .await
        .expect_err("plain has no push notifications");
    assert_eq!(status.code(), Code::Unimplemented);
    server.shut_down().await;
}

#[tokio::test]
async fn bad_input_is_invalid_argument_naming_the_field() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    let status = server
        .v1()
        .await
        .send_message(v1::pb::SendMessageRequest::default())
        .await
        .expect_err("no message");
    assert_eq!(status.code(), Code::InvalidArgument);
    let bad = status.get_details_bad_request().expect("BadRequest");
    assert_eq!(bad.field_violations[0].field, "SendMessageRequest.message");
    let status = server
        .v0_3()
        .await
        .get_task(v0_3::pb::GetTaskRequest {
            name: "t-1".to_owned(),
            history_length: 0,
        })
        .await
        .expect_err("not a task name");
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(
        status.message().contains("GetTaskRequest.name"),
        "{}",
        status.message()
    );
    let status = server
        .v1()
        .await
        .subscribe_to_task(with_metadata(
            v1::pb::SubscribeToTaskRequest {
                id: "t-1".to_owned(),
                ..v1::pb::SubscribeToTaskRequest::default()
            },
            &[("last-event-id", "not-a-number")],
        ))
        .await
        .expect_err("a bad last-event-id");
    assert_eq!(status.code(), Code::InvalidArgument);
    let bad = status.get_details_bad_request().expect("BadRequest");
    assert_eq!(bad.field_violations[0].field, "last-event-id");
    server.shut_down().await;
}

#[tokio::test]
async fn limits_bound_message_size_and_the_time_a_unary_call_takes() {
    let server = GrpcServer::start(
        ServerConfig::builder()
            .body_limit(4 * 1024)
            .request_timeout(Duration::from_millis(200)),
    )
    .await;
    let mut client = server.v1().await;
    let status = client
        .send_message(v1_send(&"x".repeat(8 * 1024), ""))
        .await
        .expect_err("too large");
    assert!(
        matches!(status.code(), Code::OutOfRange | Code::ResourceExhausted),
        "{status:?}"
    );
    let status = within(client.send_message(v1_send("slow", "")))
        .await
        .expect_err("timed out");
    assert_eq!(status.code(), Code::Internal);
    assert!(status.message().contains("200ms"), "{}", status.message());
    server.shut_down().await;
}

#[tokio::test]
async fn the_extended_card_is_for_authenticated_callers() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    let mut client = server.v1().await;
    let card = client
        .get_extended_agent_card(with_metadata(
            v1::pb::GetExtendedAgentCardRequest {
                tenant: "secure".to_owned(),
            },
            &[("authorization", &format!("Bearer {BEARER}"))],
        ))
        .await
        .expect("the extended card")
        .into_inner();
    assert_eq!(card.description, "extended card for alice");
    let status = client
        .get_extended_agent_card(v1::pb::GetExtendedAgentCardRequest {
            tenant: String::new(),
        })
        .await
        .expect_err("anonymous");
    assert_eq!(status.code(), Code::Unauthenticated);
    server.shut_down().await;
}

#[tokio::test]
async fn shutdown_ends_open_streams_and_serving() {
    let server = GrpcServer::start(ServerConfig::builder()).await;
    let mut client = server.v1().await;
    let mut stream = client
        .send_streaming_message(v1_send("forever", ""))
        .await
        .expect("a stream")
        .into_inner();
    assert!(within(stream.next()).await.expect("the task").is_ok());
    let dropped = Arc::clone(&server.service.stream_dropped);
    server.shut_down().await;
    within(dropped.notified()).await;
    // The stream ends (cleanly or with the connection's end), never hangs.
    let _ = within(stream.next()).await;
}
