//! The HTTP+JSON binding through the router, without a socket: paths, methods,
//! media types, tenants, the error bodies and what reaches the service.

use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use super::path::{Resource, parse};
use crate::a2a::v1::ProtocolVersion;
use crate::a2a::{
    AgentCard, SendMessageResult, StreamEvent, Task, TaskState, TaskStatus, TransportProtocol,
};
use crate::jsonrpc::{A2aRequest, JsonRpcError};
use crate::server::{AuthConfig, ServerConfig, app};
use crate::service::{A2aResult, A2aService, CallContext, Principal, Reply};

/// Answers every call from a few canned results, and keeps what it was asked.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<(CallContext, A2aRequest)>>,
    secured: bool,
}

fn task(id: &str, state: TaskState) -> Task {
    Task::new(id.into(), "ctx-1".into(), TaskStatus::new(state))
}

impl A2aService for Recorder {
    fn card(&self, agent: &str) -> Option<std::sync::Arc<AgentCard>> {
        if agent != "echo" && agent != "other" {
            return None;
        }
        let mut card = AgentCard::new(agent, "records", "http://127.0.0.1/", "1");
        card.capabilities.streaming = Some(true);
        card.capabilities.push_notifications = Some(true);
        card.capabilities.extensions = Some(vec![crate::a2a::AgentExtension {
            uri: "urn:x".to_owned(),
            description: None,
            required: Some(false),
            params: None,
        }]);
        if self.secured {
            crate::server::tests::require_bearer(&mut card);
        }
        Some(std::sync::Arc::new(card))
    }
    fn default_agent(&self) -> Option<String> {
        Some("echo".to_owned())
    }
    fn agents(&self) -> Vec<String> {
        vec!["echo".to_owned(), "other".to_owned()]
    }
    fn extended_card(&self, _: &str, _: &Principal) -> Option<AgentCard> {
        None
    }
    async fn call(&self, context: CallContext, request: A2aRequest) -> Result<Reply, JsonRpcError> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((context, request.clone()));
        match request {
            A2aRequest::GetTask(params) if params.id.as_str() == "missing" => {
                Err(JsonRpcError::task_not_found().with_data(json!({"taskId": "missing"})))
            }
            A2aRequest::SendMessage(_) => Ok(Reply::Result(A2aResult::Send(
                SendMessageResult::Task(task("t-1", TaskState::Completed)),
            ))),
            A2aRequest::GetTask(params) => Ok(Reply::Result(A2aResult::Task(task(
                params.id.as_str(),
                TaskState::Working,
            )))),
            A2aRequest::CancelTask(params) => Ok(Reply::Result(A2aResult::Task(task(
                params.id.as_str(),
                TaskState::Canceled,
            )))),
            A2aRequest::SendStreamingMessage(_) | A2aRequest::TaskResubscription(_) => {
                let events = vec![
                    Ok(StreamEvent::Task(task("t-1", TaskState::Working))),
                    Ok(StreamEvent::Task(task("t-1", TaskState::Completed))),
                ];
                Ok(Reply::Stream(Box::pin(futures::stream::iter(events))))
            }
            A2aRequest::DeleteTaskPushNotificationConfig(_) => {
                Ok(Reply::Result(A2aResult::Deleted))
            }
            A2aRequest::ListTaskPushNotificationConfig(_) => {
                Ok(Reply::Result(A2aResult::PushConfigs(Vec::new())))
            }
            _ => Err(JsonRpcError::unsupported_operation()),
        }
    }
}

fn router(config: ServerConfig) -> (Arc<Recorder>, axum::Router) {
    let recorder = Arc::new(Recorder::default());
    (Arc::clone(&recorder), app(recorder, config))
}

async fn send(
    router: &axum::Router,
    method: Method,
    uri: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (StatusCode, axum::http::HeaderMap, String) {
    let mut request = Request::builder().method(method).uri(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = match body {
        Some(body) => {
            if !headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("content-type"))
            {
                request = request.header("content-type", "application/a2a+json");
            }
            Body::from(body.to_string())
        }
        None => Body::empty(),
    };
    let response = router
        .clone()
        .oneshot(request.body(body).expect("a request"))
        .await
        .expect("answered");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body");
    (
        status,
        headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

fn last(recorder: &Recorder) -> (CallContext, A2aRequest) {
    recorder
        .seen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .last()
        .cloned()
        .expect("a call reached the service")
}

fn message() -> Value {
    json!({"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
}

#[test]
fn paths_name_agent_tenant_version_and_resource() {
    let target = parse("/agents/echo/tasks/t-1:cancel").expect("a resource");
    assert_eq!(target.agent.as_deref(), Some("echo"));
    assert_eq!(target.tenant, None);
    assert_eq!(target.version, ProtocolVersion::V1_0);
    assert_eq!(target.resource, Resource::Cancel("t-1".to_owned()));
    let target = parse("/echo/tasks/a%20b/pushNotificationConfigs/c-1").expect("a resource");
    assert_eq!(target.agent, None);
    assert_eq!(target.tenant.as_deref(), Some("echo"));
    assert_eq!(
        target.resource,
        Resource::Config("a b".to_owned(), "c-1".to_owned())
    );
    let target = parse("/v1/tasks/t:subscribe").expect("a resource");
    assert_eq!(target.version, ProtocolVersion::V0_3);
    assert_eq!(target.resource, Resource::Subscribe("t".to_owned()));
    assert_eq!(
        parse("/v1/card").map(|t| t.resource),
        Some(Resource::ExtendedCard)
    );
    assert_eq!(
        parse("/extendedAgentCard").map(|t| t.resource),
        Some(Resource::ExtendedCard)
    );
    assert_eq!(parse("/tasks").map(|t| t.resource), Some(Resource::Tasks));
    // 0.3 has no ListTasks, 1.0 no `card`; empty segments and unknown verbs name nothing.
    for nothing in [
        "/v1/tasks",
        "/card",
        "/tasks//x",
        "/message:send/x",
        "/a/b/c",
        "/",
        "/tasks/:cancel",
    ] {
        assert_eq!(parse(nothing), None, "{nothing}");
    }
    assert_eq!(
        parse("/tasks/t:frobnicate").map(|t| t.resource),
        Some(Resource::Task("t:frobnicate".to_owned()))
    );
}

#[tokio::test]
async fn a_send_reaches_the_service_at_the_root_and_under_an_agent() {
    let (recorder, router) = router(ServerConfig::default());
    for (uri, agent) in [
        ("/message:send", "echo"),
        ("/agents/other/message:send", "other"),
        ("/echo/message:send", "echo"),
        ("/agents/other/other/message:send", "other"),
    ] {
        let (status, headers, body) = send(
            &router,
            Method::POST,
            uri,
            &[("a2a-extensions", "urn:x, urn:unknown")],
            Some(message()),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{uri}: {body}");
        assert_eq!(headers["content-type"], "application/a2a+json");
        assert_eq!(headers["a2a-extensions"], "urn:x");
        let body: Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(
            body["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{uri}"
        );
        let (context, request) = last(&recorder);
        assert_eq!(&*context.agent, agent);
        assert_eq!(context.version, ProtocolVersion::V1_0);
        assert_eq!(context.extensions, ["urn:x"]);
        assert!(matches!(request, A2aRequest::SendMessage(_)));
    }
}

#[tokio::test]
async fn an_unknown_resource_under_an_agent_is_a_rest_404() {
    let (_, router) = router(ServerConfig::default());
    for (uri, form_1_0) in [
        ("/agents/echo/message:sned", true),
        ("/agents/echo/tasks/t-1/what", true),
        ("/v1/tasks:nothing", false),
        ("/agents/echo/v1/nothing/here", false),
    ] {
        let (status, _, body) = send(&router, Method::POST, uri, &[], Some(message())).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
        let body: Value = serde_json::from_str(&body).expect("JSON");
        if form_1_0 {
            assert_eq!(body["error"]["status"], "NOT_FOUND", "{uri}: {body}");
        } else {
            // The 0.3 SDKs' REST error form: the JSON-RPC error object itself.
            assert!(body["code"].is_number(), "{uri}: {body}");
            assert!(body["message"].is_string(), "{uri}: {body}");
        }
        assert!(body.to_string().contains(uri), "names the path: {body}");
    }
}

#[tokio::test]
async fn a_tenant_other_than_the_agent_served_is_not_found() {
    let (_, router) = router(ServerConfig::default());
    for uri in [
        "/other/message:send",
        "/agents/echo/other/message:send",
        "/agents/nobody/message:send",
    ] {
        let (status, _, body) = send(&router, Method::POST, uri, &[], Some(message())).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
        let body: Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(body["error"]["status"], "NOT_FOUND");
        assert_eq!(body["error"]["code"], 404);
        assert_eq!(body["error"]["details"][0]["reason"], "NOT_FOUND");
    }
}

#[tokio::test]
async fn get_list_cancel_and_push_configs_decode_path_and_query() {
    let (recorder, router) = router(ServerConfig::default());
    let (status, _, body) = send(
        &router,
        Method::GET,
        "/tasks/t-9?historyLength=2",
        &[],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    match last(&recorder).1 {
        A2aRequest::GetTask(params) => {
            assert_eq!(params.id.as_str(), "t-9");
            assert_eq!(params.history_length, Some(2));
        }
        other => panic!("{other:?}"),
    }
    send(
        &router,
        Method::GET,
        "/tasks?contextId=c&status=TASK_STATE_WORKING&pageSize=5&includeArtifacts=true&A2A-Version=1.0",
        &[],
        None,
    )
    .await;
    match last(&recorder).1 {
        A2aRequest::ListTasks(params) => {
            assert_eq!(params.context_id, "c");
            assert_eq!(params.page_size, Some(5));
            assert_eq!(params.include_artifacts, Some(true));
            assert!(params.status.is_some());
        }
        other => panic!("{other:?}"),
    }
    let (status, _, body) = send(&router, Method::POST, "/tasks/t-9:cancel", &[], None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(matches!(last(&recorder).1, A2aRequest::CancelTask(p) if p.id.as_str() == "t-9"));
    let (status, _, body) = send(
        &router,
        Method::POST,
        "/tasks/t-9/pushNotificationConfigs",
        &[],
        Some(json!({"id": "c-1", "url": "https://hook.example/a"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    match last(&recorder).1 {
        A2aRequest::SetTaskPushNotificationConfig(config) => {
            assert_eq!(config.task_id.as_str(), "t-9");
        }
        other => panic!("{other:?}"),
    }
    let (status, _, body) = send(
        &router,
        Method::DELETE,
        "/tasks/t-9/pushNotificationConfigs/c-1",
        &[],
        None,
    )
    .await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "{}"));
    match last(&recorder).1 {
        A2aRequest::DeleteTaskPushNotificationConfig(params) => {
            assert_eq!(params.id.as_str(), "t-9");
            assert_eq!(params.push_notification_config_id, "c-1");
        }
        other => panic!("{other:?}"),
    }
    let (status, _, body) = send(
        &router,
        Method::GET,
        "/tasks/t-9/pushNotificationConfigs",
        &[],
        None,
    )
    .await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "{}"));
}

#[tokio::test]
async fn streams_are_sse_of_bare_stream_responses() {
    let (recorder, router) = router(ServerConfig::default());
    for (method, uri, body) in [
        (Method::POST, "/message:stream", Some(message())),
        (Method::GET, "/tasks/t-1:subscribe", None),
        (Method::POST, "/tasks/t-1:subscribe", None),
    ] {
        let (status, headers, body) = send(&router, method, uri, &[], body).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert_eq!(headers["content-type"], "text/event-stream");
        let data: Vec<Value> = body
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .map(|data| serde_json::from_str(data).expect("JSON"))
            .collect();
        assert_eq!(data.len(), 2, "{body}");
        assert_eq!(data[1]["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert!(data[0].get("jsonrpc").is_none());
    }
    assert!(matches!(
        last(&recorder).1,
        A2aRequest::TaskResubscription(_)
    ));
}

#[tokio::test]
async fn errors_are_google_rpc_status_under_the_mapped_status() {
    let (_, router) = router(ServerConfig::builder().body_limit(256).build());
    let (status, headers, body) = send(&router, Method::GET, "/tasks/missing", &[], None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(headers["content-type"], "application/json");
    let body: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(body["error"]["code"], 404);
    assert_eq!(body["error"]["status"], "NOT_FOUND");
    let info = &body["error"]["details"][0];
    assert_eq!(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
    assert_eq!(info["reason"], "TASK_NOT_FOUND");
    assert_eq!(info["domain"], "a2a-protocol.org");
    assert_eq!(info["metadata"]["taskId"], "missing");
    // The JSON-RPC code rides along, as on gRPC, for codes A2A gives no reason.
    assert_eq!(info["metadata"]["code"], "-32001");

    // Bad JSON names what is wrong; a body of the wrong shape names the field.
    let request = Request::post("/message:send")
        .header("content-type", "application/json")
        .body(Body::from("{\"message\": "))
        .expect("a request");
    let response = router.clone().oneshot(request).await.expect("answered");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("body");
    let body: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("Invalid JSON payload")
    );
    let (status, _, body) = send(
        &router,
        Method::POST,
        "/message:send",
        &[],
        Some(json!({"message": {"role": 7}})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("message"), "{body}");

    // Media types: a2a+json and json are taken, others refused with 415.
    let (status, _, body) = send(
        &router,
        Method::POST,
        "/message:send",
        &[("content-type", "text/plain")],
        Some(message()),
    )
    .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let body: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(
        body["error"]["details"][0]["reason"],
        "CONTENT_TYPE_NOT_SUPPORTED"
    );
    let (status, _, _) = send(
        &router,
        Method::POST,
        "/message:send",
        &[("content-type", "application/json; charset=utf-8")],
        Some(message()),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // Too large, unknown path, wrong method, unserved version.
    let big = json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x".repeat(400)}]}});
    let (status, _, body) = send(&router, Method::POST, "/message:send", &[], Some(big)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert!(body.contains("\"status\":\"INVALID_ARGUMENT\""), "{body}");
    let (status, _, _) = send(&router, Method::GET, "/nothing/here/at/all", &[], None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, headers, body) = send(&router, Method::GET, "/message:send", &[], None).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(headers["allow"], "POST");
    assert!(body.contains("UNIMPLEMENTED"), "{body}");
    let (status, _, body) = send(
        &router,
        Method::GET,
        "/tasks/t",
        &[("a2a-version", "99.0")],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let body: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(body["error"]["status"], "FAILED_PRECONDITION");
    assert_eq!(
        body["error"]["details"][0]["reason"],
        "VERSION_NOT_SUPPORTED"
    );
}

#[tokio::test]
async fn an_unversioned_or_0_3_header_on_a_1_0_path_is_answered_in_1_0() {
    let (recorder, router) = router(ServerConfig::default());
    for headers in [
        &[][..],
        &[("a2a-version", "0.3")][..],
        &[("a2a-version", "1.0.1")][..],
    ] {
        let (status, _, body) = send(&router, Method::GET, "/tasks/t-2", headers, None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.contains("TASK_STATE_WORKING"), "{body}");
        assert_eq!(last(&recorder).0.version, ProtocolVersion::V1_0);
    }
}

#[tokio::test]
async fn an_agent_that_requires_credentials_gets_401_in_the_rest_form() {
    let recorder = Arc::new(Recorder {
        secured: true,
        ..Recorder::default()
    });
    let config = ServerConfig::builder()
        .auth(AuthConfig::new().bearer_token("bearer", "t-1", "alice"))
        .build();
    let router = app(Arc::clone(&recorder), config);
    let (status, headers, body) = send(&router, Method::GET, "/tasks/t", &[], None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(headers.contains_key("www-authenticate"));
    let body: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(body["error"]["status"], "UNAUTHENTICATED");
    assert_eq!(body["error"]["details"][0]["reason"], "UNAUTHENTICATED");
    let (status, _, _) = send(
        &router,
        Method::GET,
        "/tasks/t",
        &[("authorization", "Bearer t-1")],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        last(&recorder).0.principal.map(|p| p.name).as_deref(),
        Some("alice")
    );
    // The extended card needs a principal too, and this agent has none.
    let (status, _, body) = send(
        &router,
        Method::GET,
        "/extendedAgentCard",
        &[("authorization", "Bearer t-1")],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body.contains("EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
        "{body}"
    );
}

#[tokio::test]
async fn a_binding_turned_off_answers_404() {
    let (_, router) = router(
        ServerConfig::builder()
            .bindings([TransportProtocol::JsonRpc])
            .build(),
    );
    let (status, _, _) = send(&router, Method::POST, "/message:send", &[], Some(message())).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, router) = router_rest_only();
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}});
    let (status, _, _) = send(
        &router,
        Method::POST,
        "/",
        &[("content-type", "application/json")],
        Some(rpc.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = send(
        &router,
        Method::POST,
        "/agents/echo",
        &[("content-type", "application/json")],
        Some(rpc),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = send(&router, Method::GET, "/tasks/t", &[], None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = send(
        &router,
        Method::GET,
        "/.well-known/agent-card.json",
        &[],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

fn router_rest_only() -> (Arc<Recorder>, axum::Router) {
    router(
        ServerConfig::builder()
            .bindings([TransportProtocol::HttpJson])
            .build(),
    )
}

#[test]
fn a_stream_item_that_fails_ends_the_stream_with_an_error_body() {
    let event = super::stream_frame(
        ProtocolVersion::V1_0,
        Some(7),
        Err(JsonRpcError::task_not_found()),
    );
    let text = std::str::from_utf8(&event).expect("UTF-8");
    assert!(text.starts_with("data: {"), "{text}");
    assert!(text.contains("NOT_FOUND"), "{text}");
    // An error is not an event of the task's log: it has no number to resume after.
    assert!(!text.contains("id:"), "{text}");
    let event = super::stream_frame(
        ProtocolVersion::V0_3,
        None,
        Err(JsonRpcError::task_not_found()),
    );
    let text = std::str::from_utf8(&event).expect("UTF-8");
    assert!(text.starts_with("event: error\ndata: {"), "{text}");
}

#[tokio::test]
async fn the_0_3_resources_take_and_give_0_3_proto_json() {
    let (recorder, router) = router(ServerConfig::default());
    let message =
        json!({"request": {"messageId": "m-1", "role": "ROLE_USER", "content": [{"text": "hi"}]}});
    let (status, headers, body) = send(
        &router,
        Method::POST,
        "/agents/echo/v1/message:send",
        &[
            ("content-type", "application/json"),
            ("x-a2a-extensions", "urn:x"),
        ],
        Some(message.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["x-a2a-extensions"], "urn:x");
    let body: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(body["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let (context, request) = last(&recorder);
    assert_eq!(context.version, ProtocolVersion::V0_3);
    match request {
        A2aRequest::SendMessage(params) => assert_eq!(params.message.message_id.to_string(), "m-1"),
        other => panic!("{other:?}"),
    }

    send(
        &router,
        Method::GET,
        "/v1/tasks/t-3?historyLength=4",
        &[],
        None,
    )
    .await;
    match last(&recorder).1 {
        A2aRequest::GetTask(params) => {
            assert_eq!(
                (params.id.as_str(), params.history_length),
                ("t-3", Some(4))
            );
        }
        other => panic!("{other:?}"),
    }
    // The Python 0.3 client's whole CreateTaskPushNotificationConfigRequest, and the
    // annotation's bare config, both create.
    for body in [
        json!({"parent": "tasks/ignored", "configId": "c-1", "config": {"pushNotificationConfig": {"id": "c-1", "url": "https://hook.example/a"}}}),
        json!({"pushNotificationConfig": {"id": "c-1", "url": "https://hook.example/a"}}),
    ] {
        send(
            &router,
            Method::POST,
            "/v1/tasks/t-3/pushNotificationConfigs",
            &[],
            Some(body),
        )
        .await;
        match last(&recorder).1 {
            A2aRequest::SetTaskPushNotificationConfig(config) => {
                assert_eq!(config.task_id.as_str(), "t-3");
                assert_eq!(
                    config.push_notification_config.url,
                    "https://hook.example/a"
                );
            }
            other => panic!("{other:?}"),
        }
    }
    let (status, _, body) = send(
        &router,
        Method::DELETE,
        "/v1/tasks/t-3/pushNotificationConfigs/c-1",
        &[],
        None,
    )
    .await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "{}"));
    assert!(matches!(
        last(&recorder).1,
        A2aRequest::DeleteTaskPushNotificationConfig(p) if p.push_notification_config_id == "c-1"
    ));

    // 0.3 errors: the JSON-RPC error object under the mapped status.
    let (status, _, body) = send(&router, Method::GET, "/v1/tasks/missing", &[], None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let body: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(body["code"], -32001);
    assert!(body["message"].is_string());
    let (status, _, body) = send(
        &router,
        Method::POST,
        "/v1/message:send",
        &[],
        Some(json!({"request": {"role": "ROLE_NOBODY"}})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body.contains("-32602") && body.contains("request"),
        "{body}"
    );

    // A 0.3 stream: bare 0.3 StreamResponses.
    let (status, _, body) = send(
        &router,
        Method::POST,
        "/v1/message:stream",
        &[],
        Some(message),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let first = body
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .expect("an event");
    let first: Value = serde_json::from_str(first).expect("JSON");
    assert_eq!(first["task"]["status"]["state"], "TASK_STATE_WORKING");
}

#[tokio::test]
async fn unknown_fields_of_a_0_3_body_are_skipped() {
    // The 0.3 Python SDK's proto has `Part.metadata`, which the 0.3.0 proto lacks.
    let (recorder, router) = router(ServerConfig::default());
    let body = json!({"message": {"messageId": "m-2", "role": "ROLE_USER",
        "content": [{"text": "hi", "metadata": {"x": 1}}], "somethingNew": true}});
    let (status, _, body) = send(&router, Method::POST, "/v1/message:send", &[], Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(matches!(last(&recorder).1, A2aRequest::SendMessage(_)));
}

#[tokio::test]
async fn idempotency_key_traceparent_and_last_event_id_reach_the_service() {
    let (recorder, router) = router(ServerConfig::default());
    let trace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let (status, _, _) = send(
        &router,
        Method::POST,
        "/message:send",
        &[("idempotency-key", "k-1"), ("traceparent", trace)],
        Some(message()),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (context, _) = last(&recorder);
    assert_eq!(context.idempotency_key.as_deref(), Some("k-1"));
    assert_eq!(context.traceparent.as_deref(), Some(trace));
    let (status, _, _) = send(
        &router,
        Method::GET,
        "/tasks/t-1:subscribe",
        &[("last-event-id", "7")],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(last(&recorder).0.last_event_id, Some(7));
    let (status, _, body) = send(
        &router,
        Method::GET,
        "/tasks/t-1:subscribe",
        &[("last-event-id", "seven")],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("Last-Event-ID"), "{body}");
}
