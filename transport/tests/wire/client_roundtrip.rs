//! The typed client against the server and the mock service over a real socket.

use crate::mock;

use std::time::Duration;

use agentyard_transport::a2a::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, MessageSendParams, SendMessageResult, StreamEvent, Task,
    TaskIdParams, TaskQueryParams, TaskState,
};
use agentyard_transport::client::{A2aClient, ClientError, ClientOptions};
use agentyard_transport::jsonrpc::{A2aRequest, ErrorCode};
use agentyard_transport::server::ServerConfig;
use agentyard_transport::service::A2aService as _;
use futures::StreamExt as _;
use mock::{API_KEY, BEARER, OPTIONAL_EXT, REQUIRED_EXT, TestServer, user_message, within};
use serde_json::json;

async fn server() -> TestServer {
    TestServer::start(ServerConfig::builder()).await
}

async fn client(server: &TestServer, agent: &str, options: ClientOptions) -> A2aClient {
    let url = format!("{}/agents/{agent}", server.base);
    A2aClient::connect(&url, options).await.expect("a client")
}

fn send(text: &str) -> MessageSendParams {
    MessageSendParams::new(user_message(text))
}

#[track_caller]
fn assert_json_rpc(error: &ClientError, code: ErrorCode) {
    match error {
        ClientError::JsonRpc(error) => assert_eq!(error.error_code(), Some(code), "{error:?}"),
        other => panic!("expected JSON-RPC error {code:?}, got {other:?}"),
    }
}

#[tokio::test]
async fn resolves_cards_at_the_root_and_under_an_agent() {
    let server = server().await;
    let card = A2aClient::resolve_card(&server.base).await.expect("a card");
    assert_eq!(card.name, "open");
    let card = A2aClient::resolve_card(&format!("{}/agents/strict/", server.base))
        .await
        .expect("a card");
    assert_eq!(card.name, "strict");
    let error = A2aClient::resolve_card(&format!("{}/agents/hidden", server.base))
        .await
        .expect_err("no card");
    assert_eq!(error.status().map(|status| status.as_u16()), Some(404));
}

#[tokio::test]
async fn resolving_falls_back_to_the_old_card_path() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let base = format!("http://{}", listener.local_addr().expect("an address"));
    let card = mock::MockService::new(&base).card("plain").expect("a card");
    let router = axum::Router::new().route(
        "/.well-known/agent.json",
        axum::routing::get(move || async move { axum::Json(card) }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await });
    let card = A2aClient::resolve_card(&base).await.expect("the old path");
    assert_eq!(card.name, "plain");
}

#[tokio::test]
async fn connecting_through_a_card_url_calls_the_cards_endpoint() {
    let server = server().await;
    let url = format!("{}/agents/strict/.well-known/agent-card.json", server.base);
    let client = A2aClient::connect(&url, ClientOptions::new().extension(REQUIRED_EXT))
        .await
        .expect("a client");
    assert_eq!(client.endpoint(), format!("{}/agents/strict", server.base));
    assert_eq!(client.card().map(|card| card.name.as_str()), Some("strict"));
    let result = client.send_message(send("hi")).await.expect("an answer");
    let SendMessageResult::Task(task) = result else {
        panic!("not a task: {result:?}")
    };
    assert_eq!(task.metadata.expect("metadata")["agent"], "strict");

    let client = A2aClient::new(&format!("{}/", server.base))
        .await
        .expect("a client");
    assert!(client.card().is_none());
    let result = client.send_message(send("hi")).await.expect("an answer");
    assert!(
        matches!(result, SendMessageResult::Task(task) if task.status.state == TaskState::Completed)
    );
}

#[tokio::test]
async fn send_get_and_cancel_return_typed_tasks() {
    let server = server().await;
    let client = client(&server, "open", ClientOptions::new()).await;
    let SendMessageResult::Task(task) = client.send_message(send("hello")).await.expect("sent")
    else {
        panic!("not a task")
    };
    assert_eq!(task.history.expect("history")[0].text(), "hello");

    let task = client
        .get_task(TaskQueryParams::new("t-5"))
        .await
        .expect("a task");
    assert_eq!(
        (task.id.as_str(), task.status.state),
        ("t-5", TaskState::Working)
    );
    let task = client
        .cancel_task(TaskIdParams::new("t-6"))
        .await
        .expect("a task");
    assert_eq!(
        (task.id.as_str(), task.status.state),
        ("t-6", TaskState::Canceled)
    );

    let error = client
        .get_task(TaskQueryParams::new("missing"))
        .await
        .expect_err("missing");
    assert_json_rpc(&error, ErrorCode::TaskNotFound);
    let error = client
        .cancel_task(TaskIdParams::new("done"))
        .await
        .expect_err("done");
    assert_json_rpc(&error, ErrorCode::TaskNotCancelable);
}

#[tokio::test]
async fn a_stream_yields_typed_events_and_ends_after_the_final_one() {
    let server = server().await;
    let client = client(
        &server,
        "open",
        ClientOptions::new().extension(OPTIONAL_EXT),
    )
    .await;
    let stream = client
        .send_message_stream(send("go"))
        .await
        .expect("a stream");
    assert_eq!(stream.extensions(), [OPTIONAL_EXT]);
    let events: Vec<StreamEvent> = within(stream.collect::<Vec<_>>())
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("no error");
    assert_eq!(events.len(), 4, "{events:#?}");
    assert!(matches!(events[0], StreamEvent::Task(_)));
    assert!(matches!(events[2], StreamEvent::ArtifactUpdate(_)));
    assert!(events[3].is_final());
}

#[tokio::test]
async fn resubscribing_streams_the_tasks_events() {
    let server = server().await;
    let client = client(&server, "open", ClientOptions::new()).await;
    let stream = client
        .resubscribe(TaskIdParams::new("t-3"))
        .await
        .expect("a stream");
    let events: Vec<_> = within(stream.collect::<Vec<_>>()).await;
    assert_eq!(events.len(), 2, "{events:#?}");
    let last = events[1].as_ref().expect("an event");
    assert_eq!(last.task_id().map(|id| id.as_str()), Some("t-3"));
    assert!(last.is_final());
}

#[tokio::test]
async fn a_stream_error_arrives_as_a_json_rpc_error_and_ends_it() {
    let server = server().await;
    let client = client(&server, "open", ClientOptions::new()).await;
    let stream = client
        .send_message_stream(send("error"))
        .await
        .expect("a stream");
    let events: Vec<_> = within(stream.collect::<Vec<_>>()).await;
    assert_eq!(events.len(), 2, "{events:#?}");
    assert!(events[0].is_ok());
    let error = events[1].as_ref().expect_err("an error");
    assert_json_rpc(error, ErrorCode::InternalError);
}

#[tokio::test]
async fn a_refused_stream_is_the_openings_error() {
    let server = server().await;
    let client = client(&server, "plain", ClientOptions::new()).await;
    // The server refuses in the stream's one event; the client reports it when the
    // stream opens, as it does for HTTP+JSON and gRPC.
    let error = client
        .send_message_stream(send("go"))
        .await
        .expect_err("refused");
    assert_json_rpc(&error, ErrorCode::UnsupportedOperation);
}

#[tokio::test]
async fn push_config_calls_round_trip() {
    let server = server().await;
    let client = client(&server, "open", ClientOptions::new()).await;
    let config = mock::push_config("t-1", "https://hooks.example/a");
    let stored = client.set_push_config(config.clone()).await.expect("set");
    assert_eq!(stored, config);
    let fetched = client
        .get_push_config(GetTaskPushNotificationConfigParams {
            id: "t-1".into(),
            push_notification_config_id: Some("p-1".to_owned()),
            metadata: None,
        })
        .await
        .expect("get");
    assert_eq!(fetched.push_notification_config.id.as_deref(), Some("p-1"));
    let listed = client
        .list_push_configs(ListTaskPushNotificationConfigParams {
            id: "t-1".into(),
            metadata: None,
        })
        .await
        .expect("list");
    assert_eq!(listed.len(), 2);
    client
        .delete_push_config(DeleteTaskPushNotificationConfigParams {
            id: "t-1".into(),
            push_notification_config_id: "p-1".to_owned(),
            metadata: None,
        })
        .await
        .expect("delete");
}

#[tokio::test]
async fn credentials_are_sent_and_their_absence_is_an_http_401() {
    let server = server().await;
    let anonymous = client(&server, "secure", ClientOptions::new()).await;
    let error = anonymous.send_message(send("hi")).await.expect_err("401");
    assert_eq!(error.status().map(|status| status.as_u16()), Some(401));
    assert!(
        error
            .json_rpc_error()
            .is_some_and(|error| error.message.contains("X-API-Key"))
    );

    let cases = [
        (
            ClientOptions::new().api_key("X-API-Key", API_KEY),
            "key-holder",
        ),
        (ClientOptions::new().bearer_token(BEARER), "alice"),
    ];
    for (options, principal) in cases {
        let client = client(&server, "secure", options).await;
        let task: Task = client
            .call(A2aRequest::GetTask(TaskQueryParams::new("t-1")))
            .await
            .expect("authenticated")
            .value;
        assert_eq!(task.metadata.expect("metadata")["principal"], principal);
    }

    let wrong = client(&server, "secure", ClientOptions::new().bearer_token("nope")).await;
    let error = wrong
        .get_task(TaskQueryParams::new("t-1"))
        .await
        .expect_err("401");
    assert_eq!(error.status().map(|status| status.as_u16()), Some(401));
}

#[tokio::test]
async fn the_extended_card_needs_credentials() {
    let server = server().await;
    let anonymous = client(&server, "secure", ClientOptions::new()).await;
    let error = anonymous
        .authenticated_extended_card()
        .await
        .expect_err("401");
    assert_eq!(error.status().map(|status| status.as_u16()), Some(401));
    let client = client(
        &server,
        "secure",
        ClientOptions::new().api_key("X-API-Key", API_KEY),
    )
    .await;
    let card = client.authenticated_extended_card().await.expect("a card");
    assert_eq!(card.description, "extended card for key-holder");
}

#[tokio::test]
async fn the_extension_header_is_sent_and_the_echo_is_exposed() {
    let server = server().await;
    let options = ClientOptions::new()
        .extension(OPTIONAL_EXT)
        .extension("https://unknown.example/ext")
        .extension(REQUIRED_EXT);
    let client = client(&server, "strict", options).await;
    let answer = client
        .call::<Task>(A2aRequest::GetTask(TaskQueryParams::new("t-1")))
        .await
        .expect("an answer");
    assert_eq!(answer.extensions, [OPTIONAL_EXT, REQUIRED_EXT]);
    let metadata = answer.value.metadata.expect("metadata");
    assert_eq!(metadata["extensions"], json!([OPTIONAL_EXT, REQUIRED_EXT]));

    let without = self::client(&server, "strict", ClientOptions::new()).await;
    let error = without
        .get_task(TaskQueryParams::new("t-1"))
        .await
        .expect_err("required");
    assert_json_rpc(&error, ErrorCode::InvalidRequest);
    assert!(error.to_string().contains(REQUIRED_EXT), "{error}");
}

#[tokio::test]
async fn an_unexposed_agent_is_an_http_404() {
    let server = server().await;
    let client = client(&server, "hidden", ClientOptions::new()).await;
    let error = client.send_message(send("hi")).await.expect_err("404");
    assert_eq!(error.status().map(|status| status.as_u16()), Some(404));
}

#[tokio::test]
async fn a_client_timeout_bounds_a_unary_call() {
    let server = server().await;
    let options = ClientOptions::new().timeout(Duration::from_millis(200));
    let client = client(&server, "open", options).await;
    let error = within(client.send_message(send("slow")))
        .await
        .expect_err("timed out");
    assert!(
        matches!(&error, ClientError::Transport(error) if error.is_timeout()),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_refused_connection_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}/", listener.local_addr().expect("an address"));
    drop(listener);
    let client = A2aClient::new(&url).await.expect("no card to fetch");
    let error = within(client.send_message(send("hi")))
        .await
        .expect_err("refused");
    assert!(matches!(error, ClientError::Transport(_)), "{error:?}");
}

#[tokio::test]
async fn a_bad_url_is_reported_as_such() {
    let error = A2aClient::new("not a url").await.expect_err("invalid");
    assert!(matches!(error, ClientError::InvalidUrl { .. }), "{error:?}");
}

/// Unary calls share one kept-alive connection, clones included. (A stream read up
/// to its final event drops its connection instead: it stops reading there rather
/// than wait for a server that might not close.)
#[tokio::test]
async fn calls_reuse_one_connection() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::serve::ListenerExt as _;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let base = format!("http://{}", listener.local_addr().expect("an address"));
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    let listener = listener.tap_io(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    let router =
        agentyard_transport::server::app(mock::MockService::new(&base), ServerConfig::default());
    tokio::spawn(async move { axum::serve(listener, router).await });

    let client = A2aClient::new(&format!("{base}/agents/open"))
        .await
        .expect("a client");
    let clone = client.clone();
    for _ in 0..3 {
        client
            .get_task(TaskQueryParams::new("t"))
            .await
            .expect("a task");
        clone
            .get_task(TaskQueryParams::new("t"))
            .await
            .expect("a task");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}
