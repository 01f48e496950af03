use serde_json::json;

use super::*;
use crate::a2a::{Part, TaskState};
use crate::ids::{ContextId, TaskId};

fn message() -> a2a::Message {
    let mut message = a2a::Message::new(
        a2a::Role::User,
        vec![
            Part::text("hi"),
            Part::data(
                json!({"k": [1, 2]})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
            Part::File(a2a::FilePart {
                file: a2a::FileContent::Bytes(a2a::FileWithBytes {
                    bytes: "aGk=".to_owned(),
                    name: None,
                    mime_type: Some("text/plain".to_owned()),
                }),
                metadata: None,
            }),
            Part::file_uri("https://example.com/f"),
        ],
    )
    .with_context_id("ctx-1")
    .with_task_id("task-1");
    message.metadata = json!({"m": 1}).as_object().cloned();
    message.extensions = Some(vec!["urn:x".to_owned()]);
    message
}

fn task() -> a2a::Task {
    let mut status = a2a::TaskStatus::new(TaskState::Canceled)
        .with_message(a2a::Message::agent_text("stopped").with_context_id("ctx-1"));
    status.timestamp = Some("2025-01-02T03:04:05Z".into());
    let mut task = a2a::Task::new(TaskId::new("task-1"), ContextId::new("ctx-1"), status);
    task.history = Some(vec![message().into()]);
    task.artifacts = Some(vec![
        a2a::Artifact::new("a-1", vec![Part::text("out")]).into(),
    ]);
    task
}

#[test]
fn every_request_round_trips_through_the_0_3_messages() {
    let requests = [
        A2aRequest::SendMessage(a2a::MessageSendParams {
            message: message(),
            configuration: Some(a2a::MessageSendConfiguration {
                accepted_output_modes: Some(vec!["text/plain".to_owned()]),
                history_length: Some(2),
                push_notification_config: Some(a2a::PushNotificationConfig::new("https://h")),
                blocking: Some(false),
            }),
            metadata: json!({"x": "y"}).as_object().cloned(),
        }),
        A2aRequest::SendStreamingMessage(a2a::MessageSendParams {
            message: message(),
            configuration: None,
            metadata: None,
        }),
        A2aRequest::GetTask(a2a::TaskQueryParams {
            id: TaskId::new("t"),
            history_length: Some(4),
            metadata: None,
        }),
        A2aRequest::CancelTask(a2a::TaskIdParams {
            id: TaskId::new("t"),
            metadata: None,
        }),
        A2aRequest::TaskResubscription(a2a::TaskIdParams {
            id: TaskId::new("t"),
            metadata: None,
        }),
        A2aRequest::SetTaskPushNotificationConfig(a2a::TaskPushNotificationConfig {
            task_id: TaskId::new("t"),
            push_notification_config: a2a::PushNotificationConfig {
                id: Some("c".to_owned()),
                url: "https://hook".to_owned(),
                token: Some("tok".to_owned()),
                authentication: Some(a2a::PushNotificationAuthenticationInfo {
                    schemes: vec!["Bearer".to_owned()],
                    credentials: Some("secret".to_owned()),
                }),
            },
        }),
        A2aRequest::GetTaskPushNotificationConfig(a2a::GetTaskPushNotificationConfigParams {
            id: TaskId::new("t"),
            push_notification_config_id: Some("c".to_owned()),
            metadata: None,
        }),
        A2aRequest::GetTaskPushNotificationConfig(a2a::GetTaskPushNotificationConfigParams {
            id: TaskId::new("t"),
            push_notification_config_id: None,
            metadata: None,
        }),
        A2aRequest::ListTaskPushNotificationConfig(a2a::ListTaskPushNotificationConfigParams {
            id: TaskId::new("t"),
            metadata: None,
        }),
        A2aRequest::DeleteTaskPushNotificationConfig(a2a::DeleteTaskPushNotificationConfigParams {
            id: TaskId::new("t"),
            push_notification_config_id: "c".to_owned(),
            metadata: None,
        }),
    ];
    for original in requests {
        let wire = to_request(original.clone()).expect("writes");
        assert_eq!(request(wire).expect("reads"), original);
    }
}

#[test]
fn methods_the_0_3_service_lacks_are_refused_by_name() {
    let error = to_request(A2aRequest::GetAuthenticatedExtendedCard).expect_err("no such rpc");
    assert_eq!(error.field(), "GetAgentCardRequest");
    let error = to_request(A2aRequest::ListTasks(
        crate::a2a::v1::ListTasksRequest::default(),
    ))
    .expect_err("no such rpc");
    assert_eq!(error.field(), "ListTasksRequest");
}

#[test]
fn results_and_stream_events_round_trip() {
    let results = [
        A2aResult::Task(task()),
        A2aResult::Send(a2a::SendMessageResult::Task(task())),
        A2aResult::Send(a2a::SendMessageResult::Message(
            a2a::Message::agent_text("hello").with_context_id("c"),
        )),
        A2aResult::Deleted,
        A2aResult::PushConfig(a2a::TaskPushNotificationConfig {
            task_id: TaskId::new("t"),
            push_notification_config: a2a::PushNotificationConfig {
                id: Some("c".to_owned()),
                ..a2a::PushNotificationConfig::new("https://hook")
            },
        }),
    ];
    for original in results {
        let wire = result(original.clone()).expect("writes");
        assert_eq!(from_response(wire).expect("reads"), original);
    }
    let events = [
        StreamEvent::Message(a2a::Message::agent_text("m")),
        StreamEvent::StatusUpdate(a2a::TaskStatusUpdateEvent::new(
            TaskId::new("t"),
            ContextId::new("c"),
            a2a::TaskStatus::new(TaskState::Completed),
            true,
        )),
        StreamEvent::ArtifactUpdate({
            let mut event = a2a::TaskArtifactUpdateEvent::new(
                TaskId::new("t"),
                ContextId::new("c"),
                a2a::Artifact::new("a", vec![Part::text("x")]),
            );
            event.append = Some(true);
            event.last_chunk = Some(true);
            event
        }),
    ];
    for original in events {
        let wire = stream_response(original.clone()).expect("writes");
        assert_eq!(from_stream_response(wire).expect("reads"), original);
    }
}

#[test]
fn the_protojson_of_a_send_response_is_what_the_0_3_sdk_writes() {
    let wire = send_response(a2a::SendMessageResult::Task(task())).expect("writes");
    let json = serde_json::to_value(&wire).expect("serializes");
    assert_eq!(json["task"]["id"], "task-1");
    assert_eq!(json["task"]["contextId"], "ctx-1");
    assert_eq!(json["task"]["status"]["state"], "TASK_STATE_CANCELLED");
    assert_eq!(
        json["task"]["status"]["message"]["content"][0]["text"], "stopped",
        "TaskStatus.update is `message` in JSON, Message.parts is `content`"
    );
    assert_eq!(json["task"]["history"][0]["role"], "ROLE_USER");
    assert_eq!(
        json["task"]["history"][0]["content"][2]["file"]["fileWithBytes"],
        "aGk="
    );
    // pbjson-types writes the UTC offset as `+00:00` where protobuf's own writers
    // put `Z`; both are RFC 3339, and every ProtoJSON reader takes either.
    let stamp = json["task"]["status"]["timestamp"]
        .as_str()
        .unwrap_or_default();
    assert!(
        ["2025-01-02T03:04:05Z", "2025-01-02T03:04:05+00:00"].contains(&stamp),
        "{stamp}"
    );
    let back: pb::SendMessageResponse = serde_json::from_value(json).expect("reads back");
    assert_eq!(back, wire);

    let message = send_response(a2a::SendMessageResult::Message(a2a::Message::agent_text(
        "x",
    )))
    .expect("writes");
    let json = serde_json::to_value(&message).expect("serializes");
    assert_eq!(
        json["message"]["role"], "ROLE_AGENT",
        "Msg is `message` in JSON"
    );
}

#[test]
fn resource_names_are_parsed_and_bad_ones_named() {
    assert_eq!(
        parse_task_name("GetTaskRequest.name", "tasks/abc").expect("parses"),
        TaskId::new("abc")
    );
    assert_eq!(
        parse_push_config_name("n", "tasks/abc/pushNotificationConfigs/c1").expect("parses"),
        (TaskId::new("abc"), Some("c1".to_owned()))
    );
    assert_eq!(
        parse_push_config_name("n", "tasks/abc/pushNotificationConfigs/").expect("parses"),
        (TaskId::new("abc"), None),
        "a config without an id"
    );
    for bad in ["abc", "tasks/", "tasks/a/b", "task/abc", ""] {
        let error = parse_task_name("GetTaskRequest.name", bad).expect_err(bad);
        assert_eq!(error.field(), "GetTaskRequest.name");
    }
    for bad in [
        "tasks/a/configs/c",
        "tasks//pushNotificationConfigs/c",
        "tasks/a/pushNotificationConfigs/c/d",
    ] {
        assert!(parse_push_config_name("n", bad).is_err(), "{bad}");
    }
}

#[test]
fn bad_input_is_an_error_naming_the_field() {
    let cases: Vec<(Request, &str)> = vec![
        (
            Request::SendMessage(pb::SendMessageRequest::default()),
            "SendMessageRequest.request",
        ),
        (
            Request::SendMessage(pb::SendMessageRequest {
                request: Some(pb::Message {
                    message_id: "m".to_owned(),
                    role: 0,
                    ..pb::Message::default()
                }),
                ..pb::SendMessageRequest::default()
            }),
            "Message.role",
        ),
        (
            Request::SendMessage(pb::SendMessageRequest {
                request: Some(pb::Message {
                    role: 1,
                    ..pb::Message::default()
                }),
                ..pb::SendMessageRequest::default()
            }),
            "Message.message_id",
        ),
        (
            Request::SendMessage(pb::SendMessageRequest {
                request: Some(pb::Message {
                    message_id: "m".to_owned(),
                    role: 1,
                    content: vec![pb::Part {
                        part: Some(pb::part::Part::File(pb::FilePart::default())),
                    }],
                    ..pb::Message::default()
                }),
                ..pb::SendMessageRequest::default()
            }),
            "FilePart.file",
        ),
        (
            Request::CancelTask(pb::CancelTaskRequest {
                name: "t".to_owned(),
            }),
            "CancelTaskRequest.name",
        ),
        (
            Request::CreateTaskPushNotificationConfig(
                pb::CreateTaskPushNotificationConfigRequest {
                    parent: "tasks/t".to_owned(),
                    ..pb::CreateTaskPushNotificationConfigRequest::default()
                },
            ),
            "CreateTaskPushNotificationConfigRequest.config",
        ),
        (
            Request::DeleteTaskPushNotificationConfig(
                pb::DeleteTaskPushNotificationConfigRequest {
                    name: "tasks/t".to_owned(),
                },
            ),
            "DeleteTaskPushNotificationConfigRequest.name",
        ),
    ];
    for (wire, field) in cases {
        let error = request(wire.clone()).expect_err(field);
        assert_eq!(error.field(), field, "{wire:?}: {error}");
    }
    let bad_state = pb::StreamResponse {
        payload: Some(pb::stream_response::Payload::StatusUpdate(
            pb::TaskStatusUpdateEvent {
                status: Some(pb::TaskStatus {
                    state: 77,
                    ..pb::TaskStatus::default()
                }),
                ..pb::TaskStatusUpdateEvent::default()
            },
        )),
    };
    let error = from_stream_response(bad_state).expect_err("unknown state");
    assert_eq!(error.field(), "TaskStatus.state");
}

#[test]
fn bytes_that_are_not_base64_cannot_be_written_and_say_where() {
    let part = Part::File(a2a::FilePart {
        file: a2a::FileContent::Bytes(a2a::FileWithBytes {
            bytes: "%%%".to_owned(),
            name: None,
            mime_type: None,
        }),
        metadata: None,
    });
    let error = pb::Part::try_from(part).expect_err("refused");
    assert_eq!(error.field(), "FilePart.file_with_bytes");
}

#[test]
fn the_0_3_card_keeps_interfaces_security_and_skills() {
    let mut card = a2a::AgentCard::new("echo", "echoes", "http://127.0.0.1:1/a", "1.0.0");
    card.additional_interfaces = Some(vec![a2a::AgentInterface {
        url: "127.0.0.1:50051".to_owned(),
        transport: a2a::TransportProtocol::Grpc,
    }]);
    card.supports_authenticated_extended_card = Some(true);
    card.capabilities.streaming = Some(true);
    card.security_schemes = Some(std::collections::BTreeMap::from([(
        "key".to_owned(),
        a2a::SecurityScheme::ApiKey(a2a::ApiKeySecurityScheme {
            name: "X-API-Key".to_owned(),
            location: a2a::ApiKeyLocation::Header,
            description: None,
        }),
    )]));
    card.security = Some(vec![std::collections::BTreeMap::from([(
        "key".to_owned(),
        Vec::new(),
    )])]);
    let mut skill = a2a::AgentSkill::new("s1", "Echo", "echoes");
    skill.tags = vec!["echo".to_owned()];
    card.skills = vec![skill];
    let wire = self::card(card).expect("writes");
    assert_eq!(wire.url, "http://127.0.0.1:1/a");
    assert_eq!(wire.preferred_transport, "JSONRPC");
    assert_eq!(wire.protocol_version, "0.3.0");
    assert_eq!(wire.additional_interfaces[0].transport, "GRPC");
    assert!(wire.supports_authenticated_extended_card);
    assert!(wire.capabilities.as_ref().is_some_and(|c| c.streaming));
    let scheme = wire.security_schemes.get("key").expect("scheme kept");
    let Some(pb::security_scheme::Scheme::ApiKeySecurityScheme(api_key)) = &scheme.scheme else {
        panic!("not an api key scheme: {scheme:?}")
    };
    assert_eq!(api_key.location, "header");
    assert_eq!(api_key.name, "X-API-Key");
    assert!(wire.security[0].schemes.contains_key("key"));
    assert_eq!(wire.skills[0].id, "s1");
    assert_eq!(wire.skills[0].tags, ["echo"]);
}
