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
                    name: Some("a.txt".to_owned()),
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
    message.reference_task_ids = Some(vec![TaskId::new("t-0")]);
    message
}

fn task() -> a2a::Task {
    let status = a2a::TaskStatus::new(TaskState::InputRequired)
        .with_message(a2a::Message::agent_text("which one?"));
    let mut status = status;
    status.timestamp = Some("2025-01-02T03:04:05Z".into());
    let mut task = a2a::Task::new(TaskId::new("task-1"), ContextId::new("ctx-1"), status);
    task.history = Some(vec![message().into()]);
    task.artifacts = Some(vec![
        a2a::Artifact::new("a-1", vec![Part::text("out")]).into(),
    ]);
    task
}

#[test]
fn a_send_request_round_trips_through_the_1_0_message() {
    let params = a2a::MessageSendParams {
        message: message(),
        configuration: Some(a2a::MessageSendConfiguration {
            accepted_output_modes: Some(vec!["text/plain".to_owned()]),
            history_length: Some(3),
            push_notification_config: None,
            blocking: Some(false),
        }),
        metadata: None,
    };
    let wire = to_request(A2aRequest::SendMessage(params.clone()), "agent-a").expect("writes");
    assert_eq!(wire.tenant(), "agent-a");
    let Request::SendMessage(pb_request) = &wire else {
        panic!("not SendMessage: {wire:?}")
    };
    let config = pb_request.configuration.as_ref().expect("configuration");
    assert!(config.return_immediately);
    assert_eq!(config.history_length, Some(3));
    let parts = &pb_request.message.as_ref().expect("message").parts;
    assert_eq!(
        parts[2].content,
        Some(pb::part::Content::Raw(b"hi".to_vec())),
        "bytes are raw on the wire"
    );
    assert_eq!(
        request(wire).expect("reads"),
        A2aRequest::SendMessage(params)
    );
}

#[test]
fn every_other_request_round_trips() {
    let requests = [
        A2aRequest::GetTask(a2a::TaskQueryParams {
            id: TaskId::new("t"),
            history_length: Some(0),
            metadata: None,
        }),
        A2aRequest::CancelTask(a2a::TaskIdParams {
            id: TaskId::new("t"),
            metadata: json!({"why": "done"}).as_object().cloned(),
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
                authentication: None,
            },
        }),
        A2aRequest::GetTaskPushNotificationConfig(a2a::GetTaskPushNotificationConfigParams {
            id: TaskId::new("t"),
            push_notification_config_id: Some("c".to_owned()),
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
        A2aRequest::GetAuthenticatedExtendedCard,
        A2aRequest::ListTasks(m::ListTasksRequest {
            context_id: "ctx".to_owned(),
            status: Some(m::TaskState::Working),
            page_size: Some(5),
            status_timestamp_after: Some("2025-01-02T03:04:05Z".to_owned()),
            include_artifacts: Some(true),
            ..m::ListTasksRequest::default()
        }),
    ];
    for original in requests {
        let wire = to_request(original.clone(), "").expect("writes");
        assert_eq!(request(wire).expect("reads"), original);
    }
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
        A2aResult::PushConfigs(vec![a2a::TaskPushNotificationConfig {
            task_id: TaskId::new("t"),
            push_notification_config: a2a::PushNotificationConfig::new("https://hook"),
        }]),
        A2aResult::TaskList(m::ListTasksResponse {
            tasks: vec![m::Task::from(task())],
            next_page_token: "next".to_owned(),
            page_size: 1,
            total_size: 2,
        }),
    ];
    for original in results {
        let wire = result(original.clone()).expect("writes");
        assert_eq!(from_response(wire).expect("reads"), original);
    }
    let events = [
        StreamEvent::Task(task()),
        StreamEvent::StatusUpdate(a2a::TaskStatusUpdateEvent::new(
            TaskId::new("t"),
            ContextId::new("c"),
            a2a::TaskStatus::new(TaskState::Completed),
            true,
        )),
        StreamEvent::ArtifactUpdate(a2a::TaskArtifactUpdateEvent::new(
            TaskId::new("t"),
            ContextId::new("c"),
            a2a::Artifact::new("a", vec![Part::text("x")]),
        )),
    ];
    for original in events {
        let wire = stream_response(original.clone()).expect("writes");
        assert_eq!(from_stream_response(wire).expect("reads"), original);
    }
}

#[test]
fn a_working_status_update_reads_as_not_final() {
    let event = StreamEvent::StatusUpdate(a2a::TaskStatusUpdateEvent::new(
        TaskId::new("t"),
        ContextId::new("c"),
        a2a::TaskStatus::new(TaskState::Working),
        false,
    ));
    let wire = stream_response(event.clone()).expect("writes");
    assert_eq!(from_stream_response(wire).expect("reads"), event);
}

#[test]
fn bad_input_is_an_error_naming_the_field() {
    let unspecified_role = pb::SendMessageRequest {
        message: Some(pb::Message {
            message_id: "m".to_owned(),
            role: 0,
            ..pb::Message::default()
        }),
        ..pb::SendMessageRequest::default()
    };
    let cases: Vec<(Request, &str)> = vec![
        (
            Request::SendMessage(pb::SendMessageRequest::default()),
            "SendMessageRequest.message",
        ),
        (Request::SendMessage(unspecified_role), "Message.role"),
        (
            Request::SendMessage(pb::SendMessageRequest {
                message: Some(pb::Message {
                    message_id: "m".to_owned(),
                    role: 1,
                    parts: vec![pb::Part::default()],
                    ..pb::Message::default()
                }),
                ..pb::SendMessageRequest::default()
            }),
            "Part.content",
        ),
        (
            Request::SendMessage(pb::SendMessageRequest {
                message: Some(pb::Message {
                    message_id: "m".to_owned(),
                    role: 9,
                    ..pb::Message::default()
                }),
                ..pb::SendMessageRequest::default()
            }),
            "Message.role",
        ),
        (
            Request::GetTask(pb::GetTaskRequest {
                id: "t".to_owned(),
                history_length: Some(-1),
                ..pb::GetTaskRequest::default()
            }),
            "GetTaskRequest.historyLength",
        ),
        (
            Request::GetTask(pb::GetTaskRequest::default()),
            "GetTaskRequest.id",
        ),
        (
            Request::ListTasks(pb::ListTasksRequest {
                status: 42,
                ..pb::ListTasksRequest::default()
            }),
            "ListTasksRequest.status",
        ),
        (
            Request::DeleteTaskPushNotificationConfig(
                pb::DeleteTaskPushNotificationConfigRequest {
                    task_id: "t".to_owned(),
                    ..pb::DeleteTaskPushNotificationConfigRequest::default()
                },
            ),
            "DeleteTaskPushNotificationConfigRequest.id",
        ),
    ];
    for (wire, field) in cases {
        let error = request(wire.clone()).expect_err(field);
        assert_eq!(error.field(), field, "{wire:?}: {error}");
    }
}

#[test]
fn a_card_converts_through_its_protojson_form_and_back() {
    let mut card = a2a::AgentCard::new("echo", "echoes", "http://127.0.0.1:1/a", "1.0.0");
    card.additional_interfaces = Some(vec![a2a::AgentInterface {
        url: "127.0.0.1:50051".to_owned(),
        transport: a2a::TransportProtocol::Grpc,
    }]);
    card.capabilities.streaming = Some(true);
    let wire = result(A2aResult::Card(Box::new(card.clone()))).expect("writes");
    let Response::Card(pb_card) = &wire else {
        panic!("not a card: {wire:?}")
    };
    assert_eq!(pb_card.supported_interfaces.len(), 2);
    assert_eq!(pb_card.supported_interfaces[1].protocol_binding, "GRPC");
    assert_eq!(
        pb_card.capabilities.as_ref().and_then(|c| c.streaming),
        Some(true)
    );
    let A2aResult::Card(back) = from_response(wire).expect("reads") else {
        panic!("not a card")
    };
    assert_eq!(back.additional_interfaces, card.additional_interfaces);
    assert_eq!(back.name, "echo");
}
