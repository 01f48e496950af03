//! Tests of the 1.0 codec: against the proto (names, round trips), and the
//! conversions with the internal model, lossless and lossy.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::*;
use crate::a2a;
use crate::ids::{ContextId, MessageId, TaskId};

mod proto;

fn metadata() -> Option<a2a::Metadata> {
    Some(
        json!({"ext": {"k": 1}})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    )
}

fn v1_message() -> Message {
    Message {
        message_id: MessageId::new("m-1"),
        context_id: Some(ContextId::new("c-1")),
        task_id: Some(TaskId::new("t-1")),
        role: Role::User,
        parts: vec![Part {
            metadata: metadata(),
            filename: "a.txt".to_owned(),
            media_type: "text/plain".to_owned(),
            ..Part::new(PartContent::Text("hi".to_owned()))
        }],
        metadata: metadata(),
        extensions: vec!["urn:ext".to_owned()],
        reference_task_ids: vec![TaskId::new("t-0")],
    }
}

fn v1_status() -> TaskStatus {
    TaskStatus {
        state: TaskState::InputRequired,
        message: Some(Message {
            role: Role::Agent,
            ..v1_message()
        }),
        timestamp: Some("2026-01-02T03:04:05.678Z".into()),
    }
}

fn v1_artifact() -> Artifact {
    Artifact {
        artifact_id: "a-1".to_owned(),
        name: "report".to_owned(),
        description: "the report".to_owned(),
        parts: vec![Part::new(PartContent::Data(json!({"x": 1})))],
        metadata: metadata(),
        extensions: vec!["urn:ext".to_owned()],
    }
}

fn v1_task() -> Task {
    Task {
        id: TaskId::new("t-1"),
        context_id: Some(ContextId::new("c-1")),
        status: v1_status(),
        artifacts: vec![v1_artifact()],
        history: vec![v1_message()],
        metadata: metadata(),
    }
}

fn v1_push() -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: "acme".to_owned(),
        id: "p-1".to_owned(),
        task_id: "t-1".to_owned(),
        url: "https://hooks.example/a2a".to_owned(),
        token: "tok".to_owned(),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".to_owned(),
            credentials: "secret".to_owned(),
        }),
    }
}

fn v1_status_update() -> TaskStatusUpdateEvent {
    TaskStatusUpdateEvent {
        task_id: TaskId::new("t-1"),
        context_id: ContextId::new("c-1"),
        status: v1_status(),
        metadata: metadata(),
    }
}

fn v1_artifact_update() -> TaskArtifactUpdateEvent {
    TaskArtifactUpdateEvent {
        task_id: TaskId::new("t-1"),
        context_id: ContextId::new("c-1"),
        artifact: v1_artifact(),
        append: true,
        last_chunk: true,
        metadata: metadata(),
    }
}

fn scopes() -> a2a::OAuthScopes {
    BTreeMap::from([("read".to_owned(), "read things".to_owned())])
}

fn requirement() -> SecurityRequirement {
    SecurityRequirement {
        schemes: BTreeMap::from([(
            "oauth".to_owned(),
            StringList {
                list: vec!["read".to_owned()],
            },
        )]),
    }
}

fn oauth_flows() -> Vec<OAuthFlows> {
    vec![
        OAuthFlows::AuthorizationCode(AuthorizationCodeOAuthFlow {
            authorization_url: "https://auth.example/authorize".to_owned(),
            token_url: "https://auth.example/token".to_owned(),
            refresh_url: "https://auth.example/refresh".to_owned(),
            scopes: scopes(),
            pkce_required: true,
        }),
        OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
            token_url: "https://auth.example/token".to_owned(),
            refresh_url: "https://auth.example/refresh".to_owned(),
            scopes: scopes(),
        }),
        OAuthFlows::Implicit(ImplicitOAuthFlow {
            authorization_url: "https://auth.example/authorize".to_owned(),
            refresh_url: "https://auth.example/refresh".to_owned(),
            scopes: scopes(),
        }),
        OAuthFlows::Password(PasswordOAuthFlow {
            token_url: "https://auth.example/token".to_owned(),
            refresh_url: "https://auth.example/refresh".to_owned(),
            scopes: scopes(),
        }),
        OAuthFlows::DeviceCode(DeviceCodeOAuthFlow {
            device_authorization_url: "https://auth.example/device".to_owned(),
            token_url: "https://auth.example/token".to_owned(),
            refresh_url: "https://auth.example/refresh".to_owned(),
            scopes: scopes(),
        }),
    ]
}

fn security_schemes() -> Vec<SecurityScheme> {
    vec![
        SecurityScheme::ApiKey(ApiKeySecurityScheme {
            description: "key".to_owned(),
            location: "header".to_owned(),
            name: "X-API-Key".to_owned(),
        }),
        SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
            description: "bearer".to_owned(),
            scheme: "Bearer".to_owned(),
            bearer_format: "JWT".to_owned(),
        }),
        SecurityScheme::OAuth2(Box::new(OAuth2SecurityScheme {
            description: "oauth".to_owned(),
            flows: oauth_flows().remove(0),
            oauth2_metadata_url: "https://auth.example/.well-known/oauth".to_owned(),
        })),
        SecurityScheme::OpenIdConnect(OpenIdConnectSecurityScheme {
            description: "oidc".to_owned(),
            open_id_connect_url: "https://auth.example/.well-known/openid".to_owned(),
        }),
        SecurityScheme::MutualTls(MutualTlsSecurityScheme {
            description: "mtls".to_owned(),
        }),
    ]
}

fn v1_card() -> AgentCard {
    AgentCard {
        name: "echo".to_owned(),
        description: "echoes".to_owned(),
        supported_interfaces: vec![AgentInterface {
            url: "http://127.0.0.1:1/agents/echo".to_owned(),
            protocol_binding: "JSONRPC".to_owned(),
            tenant: "echo".to_owned(),
            protocol_version: "1.0".to_owned(),
        }],
        provider: Some(AgentProvider {
            url: "https://example.org".to_owned(),
            organization: "Example".to_owned(),
        }),
        version: "1.2.3".to_owned(),
        documentation_url: Some("https://example.org/docs".to_owned()),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(true),
            extensions: vec![AgentExtension {
                uri: "urn:ext".to_owned(),
                description: "an extension".to_owned(),
                required: true,
                params: metadata(),
            }],
            extended_agent_card: Some(true),
        },
        security_schemes: BTreeMap::from([("key".to_owned(), security_schemes().remove(0))]),
        security_requirements: vec![requirement()],
        default_input_modes: vec!["text/plain".to_owned()],
        default_output_modes: vec!["text/plain".to_owned()],
        skills: vec![AgentSkill {
            id: "echo".to_owned(),
            name: "Echo".to_owned(),
            description: "echoes text".to_owned(),
            tags: vec!["echo".to_owned()],
            examples: vec!["hi".to_owned()],
            input_modes: vec!["text/plain".to_owned()],
            output_modes: vec!["text/plain".to_owned()],
            security_requirements: vec![requirement()],
        }],
        signatures: vec![AgentCardSignature {
            protected: "e30".to_owned(),
            signature: "c2ln".to_owned(),
            header: metadata(),
        }],
        icon_url: Some("https://example.org/icon.png".to_owned()),
    }
}

/// Serializes `value`, reads it back and checks it is unchanged, and that
/// writing it again gives the same JSON.
fn round_trip<T>(value: &T) -> Value
where
    T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let json = serde_json::to_value(value).expect("serializes");
    let back: T = serde_json::from_value(json.clone())
        .unwrap_or_else(|error| panic!("reads back {json}: {error}"));
    assert_eq!(&back, value, "round trip of {json}");
    assert_eq!(serde_json::to_value(&back).expect("serializes"), json);
    json
}

/// One fully populated sample (or one per oneof member) of every 1.0
/// message, by proto name, each checked to round-trip.
fn samples() -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    for content in [
        PartContent::Text("hi".to_owned()),
        PartContent::Raw("aGk=".to_owned()),
        PartContent::Url("https://example.org/a.pdf".to_owned()),
        PartContent::Data(json!([1, 2])),
    ] {
        let part = Part {
            metadata: metadata(),
            filename: "a".to_owned(),
            media_type: "text/plain".to_owned(),
            ..Part::new(content)
        };
        out.push(("Part", round_trip(&part)));
    }
    out.push(("Message", round_trip(&v1_message())));
    out.push(("TaskStatus", round_trip(&v1_status())));
    out.push(("Task", round_trip(&v1_task())));
    out.push(("Artifact", round_trip(&v1_artifact())));
    out.push(("TaskStatusUpdateEvent", round_trip(&v1_status_update())));
    out.push(("TaskArtifactUpdateEvent", round_trip(&v1_artifact_update())));
    let configuration = SendMessageConfiguration {
        accepted_output_modes: vec!["text/plain".to_owned()],
        task_push_notification_config: Some(v1_push()),
        history_length: Some(3),
        return_immediately: true,
    };
    out.push(("SendMessageConfiguration", round_trip(&configuration)));
    out.push((
        "SendMessageRequest",
        round_trip(&SendMessageRequest {
            tenant: "acme".to_owned(),
            message: v1_message(),
            configuration: Some(configuration),
            metadata: metadata(),
        }),
    ));
    out.push((
        "SendMessageResponse",
        round_trip(&SendMessageResponse::Task(v1_task())),
    ));
    out.push((
        "SendMessageResponse",
        round_trip(&SendMessageResponse::Message(v1_message())),
    ));
    for event in [
        StreamResponse::Task(v1_task()),
        StreamResponse::Message(v1_message()),
        StreamResponse::StatusUpdate(v1_status_update()),
        StreamResponse::ArtifactUpdate(v1_artifact_update()),
    ] {
        out.push(("StreamResponse", round_trip(&event)));
    }
    out.push((
        "GetTaskRequest",
        round_trip(&GetTaskRequest {
            tenant: "acme".to_owned(),
            id: TaskId::new("t-1"),
            history_length: Some(0),
        }),
    ));
    out.push((
        "ListTasksRequest",
        round_trip(&ListTasksRequest {
            tenant: "acme".to_owned(),
            context_id: "c-1".to_owned(),
            status: Some(TaskState::Working),
            page_size: Some(10),
            page_token: "cursor".to_owned(),
            history_length: Some(2),
            status_timestamp_after: Some("2026-01-01T00:00:00Z".to_owned()),
            include_artifacts: Some(true),
        }),
    ));
    out.push((
        "ListTasksResponse",
        round_trip(&ListTasksResponse {
            tasks: vec![v1_task()],
            next_page_token: "next".to_owned(),
            page_size: 10,
            total_size: 11,
        }),
    ));
    out.push((
        "CancelTaskRequest",
        round_trip(&CancelTaskRequest {
            tenant: "acme".to_owned(),
            id: TaskId::new("t-1"),
            metadata: metadata(),
        }),
    ));
    out.push((
        "SubscribeToTaskRequest",
        round_trip(&SubscribeToTaskRequest {
            tenant: "acme".to_owned(),
            id: TaskId::new("t-1"),
        }),
    ));
    out.push(("TaskPushNotificationConfig", round_trip(&v1_push())));
    out.push((
        "AuthenticationInfo",
        round_trip(&v1_push().authentication.expect("set above")),
    ));
    out.push((
        "GetTaskPushNotificationConfigRequest",
        round_trip(&GetTaskPushNotificationConfigRequest {
            tenant: "acme".to_owned(),
            task_id: TaskId::new("t-1"),
            id: "p-1".to_owned(),
        }),
    ));
    out.push((
        "DeleteTaskPushNotificationConfigRequest",
        round_trip(&DeleteTaskPushNotificationConfigRequest {
            tenant: "acme".to_owned(),
            task_id: TaskId::new("t-1"),
            id: "p-1".to_owned(),
        }),
    ));
    out.push((
        "ListTaskPushNotificationConfigsRequest",
        round_trip(&ListTaskPushNotificationConfigsRequest {
            tenant: "acme".to_owned(),
            task_id: TaskId::new("t-1"),
            page_size: 5,
            page_token: "cursor".to_owned(),
        }),
    ));
    out.push((
        "ListTaskPushNotificationConfigsResponse",
        round_trip(&ListTaskPushNotificationConfigsResponse {
            configs: vec![v1_push()],
            next_page_token: "next".to_owned(),
        }),
    ));
    out.push((
        "GetExtendedAgentCardRequest",
        round_trip(&GetExtendedAgentCardRequest {
            tenant: "acme".to_owned(),
        }),
    ));
    let card = v1_card();
    out.push(("AgentCard", round_trip(&card)));
    out.push(("AgentInterface", round_trip(&card.supported_interfaces[0])));
    out.push((
        "AgentProvider",
        round_trip(card.provider.as_ref().expect("set")),
    ));
    out.push(("AgentCapabilities", round_trip(&card.capabilities)));
    out.push((
        "AgentExtension",
        round_trip(&card.capabilities.extensions[0]),
    ));
    out.push(("AgentSkill", round_trip(&card.skills[0])));
    out.push(("AgentCardSignature", round_trip(&card.signatures[0])));
    out.push(("SecurityRequirement", round_trip(&requirement())));
    out.push(("StringList", round_trip(&requirement().schemes["oauth"])));
    for scheme in security_schemes() {
        let inner = match &scheme {
            SecurityScheme::ApiKey(inner) => ("APIKeySecurityScheme", round_trip(inner)),
            SecurityScheme::HttpAuth(inner) => ("HTTPAuthSecurityScheme", round_trip(inner)),
            SecurityScheme::OAuth2(inner) => ("OAuth2SecurityScheme", round_trip(&**inner)),
            SecurityScheme::OpenIdConnect(inner) => {
                ("OpenIdConnectSecurityScheme", round_trip(inner))
            }
            SecurityScheme::MutualTls(inner) => ("MutualTlsSecurityScheme", round_trip(inner)),
        };
        out.push(inner);
        out.push(("SecurityScheme", round_trip(&scheme)));
    }
    for flows in oauth_flows() {
        let inner = match &flows {
            OAuthFlows::AuthorizationCode(flow) => ("AuthorizationCodeOAuthFlow", round_trip(flow)),
            OAuthFlows::ClientCredentials(flow) => ("ClientCredentialsOAuthFlow", round_trip(flow)),
            OAuthFlows::Implicit(flow) => ("ImplicitOAuthFlow", round_trip(flow)),
            OAuthFlows::Password(flow) => ("PasswordOAuthFlow", round_trip(flow)),
            OAuthFlows::DeviceCode(flow) => ("DeviceCodeOAuthFlow", round_trip(flow)),
        };
        out.push(inner);
        out.push(("OAuthFlows", round_trip(&flows)));
    }
    out
}

#[test]
fn every_message_of_the_proto_uses_exactly_its_protojson_names() {
    let messages = proto::messages(include_str!("../../../schema/a2a-v1.0.proto"));
    let mut seen: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (name, json) in samples() {
        let keys = json
            .as_object()
            .unwrap_or_else(|| panic!("{name} is an object"));
        seen.entry(name).or_default().extend(keys.keys().cloned());
    }
    let covered: BTreeSet<&str> = seen.keys().copied().collect();
    let declared: BTreeSet<&str> = messages.keys().map(String::as_str).collect();
    assert_eq!(
        covered, declared,
        "every proto message has a sample, and no other"
    );
    for (name, fields) in &messages {
        let expected: BTreeSet<String> =
            fields.iter().map(|field| proto::json_name(field)).collect();
        assert_eq!(seen[name.as_str()], expected, "the JSON names of {name}");
    }
}

#[test]
fn the_proto_parser_reads_fields_oneofs_and_maps() {
    let messages = proto::messages(
        "// c\nmessage A {\n  // x\n  oneof o {\n    string first_one = 1;\n  }\n  \
         map<string, B> some_map = 2;\n  optional int32 n = 3 [(x) = REQUIRED];\n}\n\
         enum E {\n  E_X = 0;\n}\nmessage B {\n  repeated string list = 1;\n}\n",
    );
    assert_eq!(messages["A"], ["first_one", "some_map", "n"]);
    assert_eq!(messages["B"], ["list"]);
    assert_eq!(proto::json_name("oauth2_metadata_url"), "oauth2MetadataUrl");
}

#[test]
fn unknown_fields_are_ignored_everywhere() {
    let message: Message = serde_json::from_value(json!({
        "messageId": "m-1", "role": "ROLE_USER", "future": {"x": 1},
        "parts": [{"text": "hi", "kind": "text", "novel": true}]
    }))
    .expect("unknown members are ignored");
    assert_eq!(message.parts[0].content, PartContent::Text("hi".to_owned()));
    let event: StreamResponse = serde_json::from_value(json!({
        "statusUpdate": {"taskId": "t", "contextId": "c", "final": true,
                         "status": {"state": "TASK_STATE_WORKING"}},
        "kind": "status-update"
    }))
    .expect("a 0.3 `final` and `kind` are ignored");
    assert!(matches!(event, StreamResponse::StatusUpdate(_)));
    // A hybrid card's scheme carries the 0.3 `type` beside the member.
    let scheme: SecurityScheme = serde_json::from_value(json!({
        "httpAuthSecurityScheme": {"scheme": "Bearer"}, "type": "http", "scheme": "bearer"
    }))
    .expect("hybrid scheme");
    assert!(matches!(scheme, SecurityScheme::HttpAuth(_)));
}

#[test]
fn enums_use_their_full_names_and_accept_numbers() {
    let names: Vec<Value> = TaskState::ALL
        .iter()
        .map(|state| serde_json::to_value(state).expect("serializes"))
        .collect();
    assert_eq!(
        names,
        [
            "TASK_STATE_UNSPECIFIED",
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED",
            "TASK_STATE_FAILED",
            "TASK_STATE_CANCELED",
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_REJECTED",
            "TASK_STATE_AUTH_REQUIRED",
        ]
    );
    assert_eq!(
        serde_json::to_value(Role::Agent).expect("serializes"),
        "ROLE_AGENT"
    );
    assert_eq!(
        serde_json::from_value::<Role>(json!(1)).expect("a number"),
        Role::User
    );
    assert_eq!(
        serde_json::from_value::<TaskState>(json!(3)).expect("a number"),
        TaskState::Completed
    );
    let error = serde_json::from_value::<TaskState>(json!("completed")).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("invalid TaskState \"completed\""),
        "{error}"
    );
    assert!(serde_json::from_value::<Role>(json!(7)).is_err());
}

#[test]
fn a_part_needs_exactly_one_content_member() {
    let none = serde_json::from_value::<Part>(json!({"mediaType": "text/plain"})).unwrap_err();
    assert!(none.to_string().contains("none is present"), "{none}");
    let two = serde_json::from_value::<Part>(json!({"text": "a", "url": "b"})).unwrap_err();
    assert!(two.to_string().contains("not several"), "{two}");
    let null = serde_json::from_value::<Part>(json!({"data": null})).expect("a null value");
    assert_eq!(null.content, PartContent::Data(Value::Null));
}

#[test]
fn wrappers_need_exactly_one_member() {
    assert!(serde_json::from_value::<SendMessageResponse>(json!({})).is_err());
    assert!(
        serde_json::from_value::<SendMessageResponse>(json!({
            "task": serde_json::to_value(v1_task()).expect("serializes"),
            "message": serde_json::to_value(v1_message()).expect("serializes"),
        }))
        .is_err()
    );
    assert!(
        serde_json::from_value::<SendMessageResponse>(json!({
            "statusUpdate": serde_json::to_value(v1_status_update()).expect("serializes"),
        }))
        .is_err()
    );
    assert!(serde_json::from_value::<StreamResponse>(json!({"other": 1})).is_err());
}

// ---- conversions: lossless round trips -------------------------------------

fn internal_message() -> a2a::Message {
    a2a::Message {
        role: a2a::Role::User,
        parts: vec![
            a2a::Part::Text(a2a::TextPart {
                text: "hi".to_owned(),
                metadata: metadata(),
            }),
            a2a::Part::File(a2a::FilePart {
                file: a2a::FileContent::Bytes(a2a::FileWithBytes {
                    bytes: "aGk=".to_owned(),
                    name: Some("a.txt".to_owned()),
                    mime_type: Some("text/plain".to_owned()),
                }),
                metadata: None,
            }),
            a2a::Part::file_uri("https://example.org/a.pdf"),
            a2a::Part::data(json!({"x": [1]}).as_object().cloned().unwrap_or_default()),
        ],
        message_id: MessageId::new("m-1"),
        task_id: Some(TaskId::new("t-1")),
        context_id: Some(ContextId::new("c-1")),
        reference_task_ids: Some(vec![TaskId::new("t-0")]),
        extensions: Some(vec!["urn:ext".to_owned()]),
        metadata: metadata(),
    }
}

fn internal_task() -> a2a::Task {
    a2a::Task {
        id: TaskId::new("t-1"),
        context_id: ContextId::new("c-1"),
        status: a2a::TaskStatus {
            state: a2a::TaskState::Unknown,
            message: Some(internal_message().into()),
            timestamp: Some("2026-01-02T03:04:05Z".into()),
        },
        history: Some(vec![internal_message().into()]),
        artifacts: Some(vec![
            a2a::Artifact {
                name: Some("n".to_owned()),
                description: Some("d".to_owned()),
                extensions: Some(vec!["urn:ext".to_owned()]),
                metadata: metadata(),
                ..a2a::Artifact::new("a-1", internal_message().parts)
            }
            .into(),
        ]),
        metadata: metadata(),
    }
}

#[test]
fn internal_values_survive_a_trip_through_the_1_0_form() {
    let task = internal_task();
    let wire = Task::from(task.clone());
    let json = serde_json::to_value(&wire).expect("serializes");
    assert_eq!(json["status"]["state"], "TASK_STATE_UNSPECIFIED");
    assert_eq!(json["history"][0]["parts"][1]["raw"], "aGk=");
    assert_eq!(json["history"][0]["parts"][1]["filename"], "a.txt");
    assert_eq!(
        json["history"][0]["parts"][2]["url"],
        "https://example.org/a.pdf"
    );
    let read: Task = serde_json::from_value(json).expect("reads");
    assert_eq!(a2a::Task::try_from(read).expect("converts"), task);

    let params = a2a::MessageSendParams {
        message: internal_message(),
        configuration: Some(a2a::MessageSendConfiguration {
            accepted_output_modes: Some(vec!["text/plain".to_owned()]),
            history_length: Some(0),
            push_notification_config: Some(a2a::PushNotificationConfig {
                id: Some("p-1".to_owned()),
                token: Some("tok".to_owned()),
                authentication: Some(a2a::PushNotificationAuthenticationInfo {
                    schemes: vec!["Bearer".to_owned()],
                    credentials: Some("secret".to_owned()),
                }),
                ..a2a::PushNotificationConfig::new("https://hooks.example")
            }),
            blocking: Some(false),
        }),
        metadata: metadata(),
    };
    let back = a2a::MessageSendParams::try_from(SendMessageRequest::from(params.clone()));
    assert_eq!(back.expect("converts"), params);

    let push = a2a::TaskPushNotificationConfig {
        task_id: TaskId::new("t-1"),
        push_notification_config: a2a::PushNotificationConfig::new("https://hooks.example"),
    };
    let back =
        a2a::TaskPushNotificationConfig::try_from(TaskPushNotificationConfig::from(push.clone()));
    assert_eq!(back.expect("converts"), push);

    let event = a2a::StreamEvent::ArtifactUpdate(a2a::TaskArtifactUpdateEvent {
        append: Some(true),
        last_chunk: Some(true),
        metadata: metadata(),
        ..a2a::TaskArtifactUpdateEvent::new(
            TaskId::new("t-1"),
            ContextId::new("c-1"),
            a2a::Artifact::new("a", vec![a2a::Part::text("x")]),
        )
    });
    let back = a2a::StreamEvent::try_from(StreamResponse::from(event.clone()));
    assert_eq!(back.expect("converts"), event);

    let get = a2a::GetTaskPushNotificationConfigParams {
        id: TaskId::new("t-1"),
        push_notification_config_id: Some("p-1".to_owned()),
        metadata: None,
    };
    let wire = GetTaskPushNotificationConfigRequest::from(get.clone());
    assert_eq!(
        serde_json::to_value(&wire).expect("serializes"),
        json!({"taskId": "t-1", "id": "p-1"}),
        "`id` names the config in 1.0"
    );
    assert_eq!(a2a::GetTaskPushNotificationConfigParams::from(wire), get);
}

#[test]
fn a_1_0_value_survives_a_trip_through_the_internal_model() {
    let mut message = v1_message();
    message.parts[0].filename.clear();
    message.parts[0].media_type.clear();
    message.parts.push(Part {
        filename: "a.bin".to_owned(),
        media_type: "application/octet-stream".to_owned(),
        ..Part::new(PartContent::Raw("AAE=".to_owned()))
    });
    message.parts.push(Part {
        metadata: metadata(),
        ..Part::new(PartContent::Data(json!(["not", "an", "object"])))
    });
    let back = Message::from(a2a::Message::try_from(message.clone()).expect("converts"));
    assert_eq!(back, message);
}

// ---- conversions: each lossy case of the module table ----------------------

#[test]
fn non_object_data_is_wrapped_for_0_3_and_unwrapped_back() {
    for value in [json!([1, 2]), json!("text"), json!(42), Value::Null] {
        let part = a2a::Part::from(Part::new(PartContent::Data(value.clone())));
        let json = serde_json::to_value(&part).expect("serializes");
        assert_eq!(json["data"], json!({"value": value}));
        assert_eq!(json["metadata"][DATA_VALUE_WRAPPED], true);
        let back = Part::from(part);
        assert_eq!(back.content, PartContent::Data(value));
        assert_eq!(back.metadata, None, "the flag is removed again");
    }
    // An object that merely looks like a wrapper, without the flag, stays.
    let object = json!({"value": 1}).as_object().cloned().unwrap_or_default();
    let part = Part::from(a2a::Part::data(object));
    assert_eq!(part.content, PartContent::Data(json!({"value": 1})));
}

#[test]
fn media_type_and_filename_of_text_and_data_parts_are_dropped_for_0_3() {
    for content in [
        PartContent::Text("t".to_owned()),
        PartContent::Data(json!({"a": 1})),
    ] {
        let part = Part {
            filename: "f".to_owned(),
            media_type: "text/markdown".to_owned(),
            ..Part::new(content)
        };
        let json = serde_json::to_value(a2a::Part::from(part)).expect("serializes");
        assert!(
            json.get("mediaType").is_none() && json.get("filename").is_none(),
            "{json}"
        );
        assert!(!json.to_string().contains("text/markdown"), "{json}");
    }
}

#[test]
fn raw_and_url_parts_map_to_0_3_files_without_loss() {
    let raw = Part {
        filename: "a.pdf".to_owned(),
        media_type: "application/pdf".to_owned(),
        ..Part::new(PartContent::Raw("JVBERg==".to_owned()))
    };
    let json = serde_json::to_value(a2a::Part::from(raw.clone())).expect("serializes");
    assert_eq!(
        json,
        json!({"kind": "file", "file": {"bytes": "JVBERg==", "name": "a.pdf",
                                         "mimeType": "application/pdf"}})
    );
    let url = Part {
        content: url_only(),
        ..raw
    };
    let json = serde_json::to_value(a2a::Part::from(url)).expect("serializes");
    assert_eq!(json["file"]["uri"], "https://example.org/a.pdf");
    assert!(json["file"].get("bytes").is_none());
}

fn url_only() -> PartContent {
    PartContent::Url("https://example.org/a.pdf".to_owned())
}

#[test]
fn unspecified_state_is_unknown_and_unspecified_role_is_refused() {
    assert_eq!(
        a2a::TaskState::from(TaskState::Unspecified),
        a2a::TaskState::Unknown
    );
    assert_eq!(
        TaskState::from(a2a::TaskState::Unknown),
        TaskState::Unspecified
    );
    for state in a2a::TaskState::ALL {
        assert_eq!(a2a::TaskState::from(TaskState::from(state)), state);
    }
    let message = Message {
        role: Role::Unspecified,
        ..v1_message()
    };
    let error = a2a::Message::try_from(message).unwrap_err();
    assert_eq!(error.field(), "Message.role");
    assert!(error.to_string().contains("ROLE_UNSPECIFIED"), "{error}");
}

#[test]
fn final_is_set_on_terminal_and_interrupted_states_and_dropped_in_1_0() {
    for (state, expected) in [
        (TaskState::Working, false),
        (TaskState::Submitted, false),
        (TaskState::Completed, true),
        (TaskState::Failed, true),
        (TaskState::Canceled, true),
        (TaskState::Rejected, true),
        (TaskState::InputRequired, true),
        (TaskState::AuthRequired, true),
    ] {
        let event = TaskStatusUpdateEvent {
            status: TaskStatus {
                state,
                message: None,
                timestamp: None,
            },
            ..v1_status_update()
        };
        let internal = a2a::TaskStatusUpdateEvent::try_from(event).expect("converts");
        assert_eq!(internal.is_final, expected, "{state:?}");
        let json = serde_json::to_value(TaskStatusUpdateEvent::from(internal)).expect("serializes");
        assert!(json.get("final").is_none(), "{json}");
    }
}

#[test]
fn return_immediately_is_the_opposite_of_blocking() {
    let convert = |return_immediately| {
        a2a::MessageSendConfiguration::try_from(SendMessageConfiguration {
            return_immediately,
            ..SendMessageConfiguration::default()
        })
        .expect("converts")
        .blocking
    };
    assert_eq!(convert(true), Some(false));
    assert_eq!(convert(false), None, "absent: blocking by default");
    let back = |blocking| {
        SendMessageConfiguration::from(a2a::MessageSendConfiguration {
            blocking,
            ..a2a::MessageSendConfiguration::default()
        })
        .return_immediately
    };
    assert!(back(Some(false)));
    assert!(!back(Some(true)));
    assert!(!back(None));
    let json = serde_json::to_value(SendMessageConfiguration::default()).expect("serializes");
    assert_eq!(json, json!({}), "false is a proto3 default, left out");
}

#[test]
fn history_length_zero_is_kept_and_negative_is_refused() {
    let request = GetTaskRequest {
        tenant: String::new(),
        id: TaskId::new("t"),
        history_length: Some(0),
    };
    let params = a2a::TaskQueryParams::try_from(request.clone()).expect("converts");
    assert_eq!(params.history_length, Some(0));
    let error = a2a::TaskQueryParams::try_from(GetTaskRequest {
        history_length: Some(-1),
        ..request
    })
    .unwrap_err();
    assert_eq!(error.field(), "GetTaskRequest.historyLength");
    let error = a2a::MessageSendConfiguration::try_from(SendMessageConfiguration {
        history_length: Some(-5),
        ..SendMessageConfiguration::default()
    })
    .unwrap_err();
    assert_eq!(error.field(), "SendMessageConfiguration.historyLength");
}

#[test]
fn tenant_and_metadata_without_a_counterpart_are_dropped() {
    let params = a2a::TaskQueryParams::try_from(GetTaskRequest {
        tenant: "acme".to_owned(),
        id: TaskId::new("t"),
        history_length: None,
    })
    .expect("converts");
    assert_eq!(params, a2a::TaskQueryParams::new("t"));
    let wire = SubscribeToTaskRequest::from(a2a::TaskIdParams {
        id: TaskId::new("t"),
        metadata: metadata(),
    });
    assert_eq!(
        serde_json::to_value(wire).expect("serializes"),
        json!({"id": "t"})
    );
}

#[test]
fn push_authentication_keeps_one_scheme_and_configs_need_a_task() {
    let info = AuthenticationInfo::from(a2a::PushNotificationAuthenticationInfo {
        schemes: vec!["Bearer".to_owned(), "Basic".to_owned()],
        credentials: None,
    });
    assert_eq!(info.scheme, "Bearer");
    let back = a2a::PushNotificationAuthenticationInfo::from(info);
    assert_eq!(back.schemes, ["Bearer"]);

    let webhook = v1_push().into_webhook();
    assert_eq!(webhook.id.as_deref(), Some("p-1"));
    let error = a2a::TaskPushNotificationConfig::try_from(TaskPushNotificationConfig {
        task_id: String::new(),
        ..v1_push()
    })
    .unwrap_err();
    assert_eq!(error.field(), "TaskPushNotificationConfig.taskId");

    let list = ListTaskPushNotificationConfigsResponse::from(vec![
        a2a::TaskPushNotificationConfig::try_from(v1_push()).expect("converts"),
    ]);
    assert_eq!(list.next_page_token, "");
    assert_eq!(list.configs[0].tenant, "", "tenant is not kept internally");
}

#[test]
fn empty_and_absent_lists_and_false_flags_are_the_same_in_1_0() {
    let message = a2a::Message {
        extensions: Some(Vec::new()),
        ..a2a::Message::user_text("hi")
    };
    let back = a2a::Message::try_from(Message::from(message)).expect("converts");
    assert_eq!(back.extensions, None);
    let event = a2a::TaskArtifactUpdateEvent {
        append: Some(false),
        ..a2a::TaskArtifactUpdateEvent::new(
            TaskId::new("t"),
            ContextId::new("c"),
            a2a::Artifact::new("a", Vec::new()),
        )
    };
    let back = a2a::TaskArtifactUpdateEvent::from(TaskArtifactUpdateEvent::from(event));
    assert_eq!(back.append, None);
}

#[test]
fn a_task_without_context_is_refused_naming_the_field() {
    let task = Task {
        context_id: None,
        ..v1_task()
    };
    let error = a2a::Task::try_from(task).unwrap_err();
    assert_eq!(error.field(), "Task.contextId");
}

#[test]
fn cards_convert_with_their_interfaces_and_capabilities() {
    let mut card = a2a::AgentCard::new("echo", "echoes", "http://127.0.0.1:1/a", "1.0.0");
    card.additional_interfaces = Some(vec![
        a2a::AgentInterface {
            url: "http://127.0.0.1:1/a".to_owned(),
            transport: a2a::TransportProtocol::JsonRpc,
        },
        a2a::AgentInterface {
            url: "http://127.0.0.1:1/rest".to_owned(),
            transport: a2a::TransportProtocol::HttpJson,
        },
    ]);
    card.supports_authenticated_extended_card = Some(true);
    card.capabilities.state_transition_history = Some(true);
    card.security = Some(vec![BTreeMap::from([(
        "key".to_owned(),
        vec!["s".to_owned()],
    )])]);
    let wire = AgentCard::from(card.clone());
    let json = serde_json::to_value(&wire).expect("serializes");
    assert_eq!(
        json["supportedInterfaces"],
        json!([
            {"url": "http://127.0.0.1:1/a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://127.0.0.1:1/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"},
        ])
    );
    assert_eq!(json["capabilities"], json!({"extendedAgentCard": true}));
    assert_eq!(
        json["securityRequirements"],
        json!([{"schemes": {"key": {"list": ["s"]}}}])
    );
    for absent in ["url", "protocolVersion", "preferredTransport", "security"] {
        assert!(
            json.get(absent).is_none(),
            "no 0.3 `{absent}` in a 1.0 card"
        );
    }
    let back = a2a::AgentCard::try_from(wire).expect("converts");
    assert_eq!(back.url, card.url);
    assert_eq!(back.protocol_version, "0.3");
    assert_eq!(back.supports_authenticated_extended_card, Some(true));
    assert_eq!(
        back.capabilities.state_transition_history, None,
        "dropped in 1.0"
    );
    assert_eq!(back.security, card.security);

    let error = a2a::AgentCard::try_from(AgentCard {
        supported_interfaces: Vec::new(),
        ..v1_card()
    })
    .unwrap_err();
    assert_eq!(error.field(), "AgentCard.supportedInterfaces");
    let full = a2a::AgentCard::try_from(v1_card()).expect("converts");
    assert_eq!(full.skills[0].security.as_ref().map(Vec::len), Some(1));
}

#[test]
fn security_schemes_convert_and_say_what_0_3_cannot_hold() {
    for scheme in security_schemes() {
        let internal = a2a::SecurityScheme::try_from(scheme.clone()).expect("converts");
        let mut expected = scheme;
        if let SecurityScheme::OAuth2(oauth) = &mut expected
            && let OAuthFlows::AuthorizationCode(flow) = &mut oauth.flows
        {
            flow.pkce_required = false; // 0.3 has no pkceRequired
        }
        assert_eq!(SecurityScheme::from(internal), expected);
    }
    let device = SecurityScheme::OAuth2(Box::new(OAuth2SecurityScheme {
        description: String::new(),
        flows: oauth_flows().remove(4),
        oauth2_metadata_url: String::new(),
    }));
    let error = a2a::SecurityScheme::try_from(device).unwrap_err();
    assert_eq!(error.field(), "OAuthFlows.deviceCode");
    let cookie = SecurityScheme::ApiKey(ApiKeySecurityScheme {
        description: String::new(),
        location: "body".to_owned(),
        name: "k".to_owned(),
    });
    let error = a2a::SecurityScheme::try_from(cookie).unwrap_err();
    assert_eq!(error.field(), "APIKeySecurityScheme.location");

    // 0.3 allows several flows; 1.0 keeps the first.
    let two = a2a::SecurityScheme::OAuth2(Box::new(a2a::OAuth2SecurityScheme {
        flows: a2a::OAuthFlows {
            client_credentials: Some(a2a::ClientCredentialsOAuthFlow {
                token_url: "https://t".to_owned(),
                refresh_url: None,
                scopes: scopes(),
            }),
            password: Some(a2a::PasswordOAuthFlow {
                token_url: "https://p".to_owned(),
                refresh_url: None,
                scopes: scopes(),
            }),
            ..a2a::OAuthFlows::default()
        },
        oauth2_metadata_url: None,
        description: None,
    }));
    let SecurityScheme::OAuth2(oauth) = SecurityScheme::from(two) else {
        panic!("an OAuth scheme");
    };
    assert!(matches!(oauth.flows, OAuthFlows::ClientCredentials(_)));
}

// ---- errors, versions, methods ---------------------------------------------

#[test]
fn errors_get_a_list_with_an_error_info() {
    let error = to_v1_error(
        crate::jsonrpc::JsonRpcError::task_not_found()
            .with_data(json!({"reason": "task_not_found", "taskId": "t-9", "n": 3})),
    );
    assert_eq!(error.code, -32001);
    assert_eq!(error.message, "Task not found");
    assert_eq!(
        error.data,
        Some(json!([{
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org",
            "metadata": {"reason": "task_not_found", "taskId": "t-9", "n": "3"}
        }]))
    );
    let detail: Vec<ErrorInfo> =
        serde_json::from_value(error.data.expect("data")).expect("ErrorInfo reads back");
    assert_eq!(detail[0].reason, "TASK_NOT_FOUND");

    let bare =
        to_v1_error(crate::jsonrpc::JsonRpcError::authenticated_extended_card_not_configured());
    assert_eq!(
        bare.data.expect("data")[0]["reason"],
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
    );
    let custom = to_v1_error(
        crate::jsonrpc::JsonRpcError::new(-32050, "policy")
            .with_data(json!({"reason": "rate_limited"})),
    );
    assert_eq!(custom.data.expect("data")[0]["reason"], "RATE_LIMITED");
    let text = to_v1_error(crate::jsonrpc::JsonRpcError::invalid_params().with_data(json!("bad")));
    assert_eq!(
        text.data.expect("data")[0]["metadata"],
        json!({"data": "bad"})
    );
    for code in [
        -32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32004, -32005, -32006,
        -32007, -32008, -32009,
    ] {
        assert!(error_reason(code).is_some(), "{code}");
    }
}

#[test]
fn the_two_new_errors_carry_their_codes_and_reasons() {
    let error = version_not_supported("99.0", &["1.0", "0.3"]);
    assert_eq!(error.code, -32009);
    let data = error.data.expect("data");
    assert_eq!(data[0]["reason"], "VERSION_NOT_SUPPORTED");
    assert_eq!(data[0]["domain"], "a2a-protocol.org");
    assert_eq!(data[0]["metadata"]["requestedVersion"], "99.0");
    let error = extension_support_required(&["urn:a", "urn:b"]);
    assert_eq!(error.code, -32008);
    let data = error.data.expect("data");
    assert_eq!(data[0]["reason"], "EXTENSION_SUPPORT_REQUIRED");
    assert_eq!(data[0]["metadata"]["requiredExtensions"], "urn:a,urn:b");
}

#[test]
fn the_version_header_counts_major_minor_only() {
    use ProtocolVersion::{V0_3, V1_0};
    for (header, expected) in [
        (None, V0_3),
        (Some(""), V0_3),
        (Some("  "), V0_3),
        (Some("0.3"), V0_3),
        (Some("0.3.0"), V0_3),
        (Some("1.0"), V1_0),
        (Some("1.0.1"), V1_0),
        (Some(" 1.0 "), V1_0),
    ] {
        assert_eq!(
            ProtocolVersion::from_header(header),
            Ok(expected),
            "{header:?}"
        );
    }
    for bad in [
        "99.0", "2.0", "1", "1.1", "0.5", "1.0.x", "v1.0", "1.0.1.2", "+1.0", "1..0",
    ] {
        let error = ProtocolVersion::from_header(Some(bad)).unwrap_err();
        assert_eq!(error.requested(), bad);
        assert!(error.to_string().contains("not supported"), "{error}");
    }
    assert_eq!(V1_0.as_str(), "1.0");
    assert_eq!(ProtocolVersion::ALL, [V1_0, V0_3]);
}

#[test]
fn method_names_match_the_proto_service() {
    let proto = include_str!("../../../schema/a2a-v1.0.proto");
    let rpcs: Vec<&str> = proto
        .lines()
        .filter_map(|line| line.trim().strip_prefix("rpc "))
        .filter_map(|rest| rest.split('(').next())
        .collect();
    assert_eq!(rpcs, method::ALL);
    for name in method::ALL {
        assert!(!crate::jsonrpc::method::ALL.contains(&name));
    }
}

#[test]
fn the_proto_field_names_are_read_as_well_as_the_json_names() {
    // ProtoJSON parsers accept the original snake_case names too.
    let request: SendMessageRequest = serde_json::from_value(json!({
        "message": {"message_id": "m-1", "context_id": "c-1", "role": "ROLE_USER",
                    "parts": [{"url": "https://x", "media_type": "text/html"}]},
        "configuration": {"return_immediately": true, "history_length": 2,
                          "accepted_output_modes": ["text/plain"],
                          "task_push_notification_config": {"url": "https://h", "task_id": "t"}}
    }))
    .expect("snake_case names");
    assert_eq!(request.message.context_id, Some(ContextId::new("c-1")));
    assert_eq!(request.message.parts[0].media_type, "text/html");
    let configuration = request.configuration.expect("configuration");
    assert!(configuration.return_immediately);
    assert_eq!(configuration.history_length, Some(2));
    assert_eq!(
        configuration
            .task_push_notification_config
            .expect("push")
            .task_id,
        "t"
    );
    let event: StreamResponse = serde_json::from_value(json!({
        "artifact_update": {"task_id": "t", "context_id": "c", "last_chunk": true,
                            "artifact": {"artifact_id": "a", "parts": []}}
    }))
    .expect("snake_case oneof member");
    let StreamResponse::ArtifactUpdate(event) = event else {
        panic!("an artifact update");
    };
    assert!(event.last_chunk);
}

#[test]
fn requests_are_typed_by_their_1_0_method() {
    let request = Request::from_jsonrpc(
        method::SEND_MESSAGE,
        Some(
            json!({"tenant": "echo", "message": {"messageId": "m", "role": "ROLE_USER",
                                                   "parts": [{"text": "hi"}]}}),
        ),
    )
    .expect("typed");
    assert_eq!(request.tenant(), "echo");
    assert!(!request.is_streaming());
    let internal = crate::jsonrpc::A2aRequest::try_from(request).expect("converts");
    let crate::jsonrpc::A2aRequest::SendMessage(params) = internal else {
        panic!("message/send");
    };
    assert_eq!(params.message.text(), "hi");

    let list = Request::from_jsonrpc(method::LIST_TASKS, None).expect("params optional");
    assert_eq!(list, Request::ListTasks(ListTasksRequest::default()));
    assert_eq!(
        crate::jsonrpc::A2aRequest::try_from(list).expect("converts"),
        crate::jsonrpc::A2aRequest::ListTasks(ListTasksRequest::default()),
        "ListTasks keeps its 1.0 params"
    );
    assert!(Request::from_jsonrpc(method::GET_EXTENDED_AGENT_CARD, None).is_ok());

    let error = Request::from_jsonrpc("message/send", Some(json!({}))).unwrap_err();
    assert_eq!(error.code, -32601, "a 0.3 name is not a 1.0 method");
    let error =
        Request::from_jsonrpc(method::GET_TASK, Some(json!({"historyLength": 1}))).unwrap_err();
    assert_eq!(error.code, -32602);
    assert!(
        error.message.contains("missing field `id`"),
        "{}",
        error.message
    );

    // A value 0.3 cannot hold is invalid params, named.
    let request = Request::from_jsonrpc(
        method::GET_TASK,
        Some(json!({"id": "t", "historyLength": -1})),
    )
    .expect("typed");
    let error = crate::jsonrpc::JsonRpcError::from(
        crate::jsonrpc::A2aRequest::try_from(request).unwrap_err(),
    );
    assert_eq!(error.code, -32602);
    assert!(
        error.message.contains("GetTaskRequest.historyLength"),
        "{}",
        error.message
    );

    // Every internal request has a 1.0 method, and comes back unchanged.
    let resubscribe = crate::jsonrpc::A2aRequest::TaskResubscription(a2a::TaskIdParams::new("t"));
    let wire = Request::from(resubscribe.clone());
    assert_eq!(wire.method(), method::SUBSCRIBE_TO_TASK);
    assert!(wire.is_streaming());
    assert_eq!(
        serde_json::to_value(&wire).expect("serializes"),
        json!({"id": "t"})
    );
    assert_eq!(
        crate::jsonrpc::A2aRequest::try_from(wire).expect("converts"),
        resubscribe
    );
}

#[test]
fn send_results_and_stream_events_wrap_by_member() {
    let result = a2a::SendMessageResult::Message(a2a::Message::agent_text("hi"));
    let wire = SendMessageResponse::from(result.clone());
    let json = serde_json::to_value(&wire).expect("serializes");
    assert_eq!(json["message"]["role"], "ROLE_AGENT");
    assert!(
        json["message"].get("kind").is_none(),
        "no 0.3 `kind` in 1.0"
    );
    assert_eq!(
        a2a::SendMessageResult::try_from(wire.clone()).expect("converts"),
        result
    );
    let event = StreamResponse::from(wire);
    assert!(matches!(event, StreamResponse::Message(_)));
    let status = a2a::StreamEvent::StatusUpdate(a2a::TaskStatusUpdateEvent::new(
        TaskId::new("t"),
        ContextId::new("c"),
        a2a::TaskStatus {
            state: a2a::TaskState::Completed,
            message: None,
            timestamp: None,
        },
        true,
    ));
    let json = serde_json::to_value(StreamResponse::from(status)).expect("serializes");
    assert_eq!(
        json,
        json!({"statusUpdate": {"taskId": "t", "contextId": "c",
                                "status": {"state": "TASK_STATE_COMPLETED"}}})
    );
}

#[test]
fn converting_an_error_twice_changes_nothing() {
    let once = version_not_supported("2.0", &["1.0", "0.3"]);
    assert_eq!(to_v1_error(once.clone()), once);
    let converted = to_v1_error(crate::jsonrpc::JsonRpcError::task_not_found());
    assert_eq!(to_v1_error(converted.clone()), converted);
    // A plain list that is not details is internal data, wrapped as usual.
    let list = to_v1_error(crate::jsonrpc::JsonRpcError::invalid_params().with_data(json!([1])));
    assert_eq!(list.data.expect("data")[0]["metadata"]["data"], "[1]");
}

#[test]
fn a_card_for_two_versions_offers_1_0_first_per_binding() {
    let mut card = a2a::AgentCard::new("echo", "echoes", "http://127.0.0.1:1/a", "1.0.0");
    card.additional_interfaces = Some(vec![a2a::AgentInterface {
        url: "http://127.0.0.1:1/rest".to_owned(),
        transport: a2a::TransportProtocol::HttpJson,
    }]);
    let wire = AgentCard::for_versions(card, &ProtocolVersion::ALL);
    let listed: Vec<(&str, &str)> = wire
        .supported_interfaces
        .iter()
        .map(|interface| {
            (
                interface.protocol_binding.as_str(),
                interface.protocol_version.as_str(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("JSONRPC", "1.0"),
            ("JSONRPC", "0.3"),
            ("HTTP+JSON", "1.0"),
            ("HTTP+JSON", "0.3")
        ]
    );
}

#[test]
fn int32_fields_are_read_from_numbers_or_decimal_strings() {
    let request: ListTasksRequest =
        serde_json::from_value(json!({"pageSize": "20", "historyLength": 2.0}))
            .expect("ProtoJSON int32 forms");
    assert_eq!(request.page_size, Some(20));
    assert_eq!(request.history_length, Some(2));
    let request: GetTaskRequest =
        serde_json::from_value(json!({"id": "t", "historyLength": null})).expect("null");
    assert_eq!(request.history_length, None);
    for bad in [
        json!("2x"),
        json!(2.5),
        json!(4_294_967_296_u64),
        json!(true),
    ] {
        let error =
            serde_json::from_value::<GetTaskRequest>(json!({"id": "t", "historyLength": bad}))
                .unwrap_err();
        assert!(
            error.to_string().contains("32-bit integer") || error.to_string().contains("32 bits"),
            "{error}"
        );
    }
    let response: ListTasksResponse = serde_json::from_value(
        json!({"tasks": [], "nextPageToken": "", "pageSize": "50", "totalSize": 0}),
    )
    .expect("reads");
    assert_eq!(response.page_size, 50);
}

#[test]
fn push_config_params_drop_metadata_and_paging() {
    let get =
        GetTaskPushNotificationConfigRequest::from(a2a::GetTaskPushNotificationConfigParams {
            id: TaskId::new("t"),
            push_notification_config_id: None,
            metadata: metadata(),
        });
    assert_eq!(
        serde_json::to_value(&get).expect("serializes"),
        json!({"taskId": "t", "id": ""})
    );
    let back = a2a::GetTaskPushNotificationConfigParams::from(get);
    assert_eq!(back.push_notification_config_id, None);
    assert_eq!(back.metadata, None);
    let list =
        a2a::ListTaskPushNotificationConfigParams::from(ListTaskPushNotificationConfigsRequest {
            tenant: "acme".to_owned(),
            task_id: TaskId::new("t"),
            page_size: 5,
            page_token: "cursor".to_owned(),
        });
    assert_eq!(list.id, TaskId::new("t"));
    let delete = DeleteTaskPushNotificationConfigRequest::from(
        a2a::DeleteTaskPushNotificationConfigParams {
            id: TaskId::new("t"),
            push_notification_config_id: "p".to_owned(),
            metadata: metadata(),
        },
    );
    assert_eq!(
        serde_json::to_value(&delete).expect("serializes"),
        json!({"taskId": "t", "id": "p"})
    );
    let none = AuthenticationInfo::from(a2a::PushNotificationAuthenticationInfo {
        schemes: Vec::new(),
        credentials: Some("c".to_owned()),
    });
    assert_eq!(none.scheme, "");
    assert!(
        a2a::PushNotificationAuthenticationInfo::from(none)
            .schemes
            .is_empty()
    );
}

#[test]
fn the_webhook_of_a_send_drops_tenant_and_task() {
    let configuration = a2a::MessageSendConfiguration::try_from(SendMessageConfiguration {
        task_push_notification_config: Some(v1_push()),
        ..SendMessageConfiguration::default()
    })
    .expect("converts");
    let webhook = configuration
        .push_notification_config
        .clone()
        .expect("webhook");
    let json = serde_json::to_value(&webhook).expect("serializes");
    assert_eq!(
        json,
        json!({"id": "p-1", "url": "https://hooks.example/a2a", "token": "tok",
               "authentication": {"schemes": ["Bearer"], "credentials": "secret"}})
    );
    let back = SendMessageConfiguration::from(configuration);
    let push = back.task_push_notification_config.expect("webhook");
    assert_eq!((push.tenant.as_str(), push.task_id.as_str()), ("", ""));
}

#[test]
fn an_oauth_scheme_without_flows_gets_an_empty_implicit_flow() {
    let scheme = a2a::SecurityScheme::OAuth2(Box::new(a2a::OAuth2SecurityScheme {
        flows: a2a::OAuthFlows::default(),
        oauth2_metadata_url: None,
        description: None,
    }));
    let json = serde_json::to_value(SecurityScheme::from(scheme)).expect("serializes");
    assert_eq!(
        json,
        json!({"oauth2SecurityScheme": {"flows": {"implicit": {}}}})
    );
}

#[test]
fn results_sit_in_the_json_rpc_envelope_and_delete_answers_an_empty_object() {
    let response = crate::jsonrpc::JsonRpcSuccessResponse {
        jsonrpc: crate::jsonrpc::JsonRpcVersion,
        id: crate::RequestId::Number(1),
        result: Empty {},
    };
    assert_eq!(
        serde_json::to_value(&response).expect("serializes"),
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    assert_eq!(
        serde_json::from_value::<Empty>(json!({"x": 1})).expect("ignored"),
        Empty {}
    );
    assert!(serde_json::from_value::<Empty>(Value::Null).is_err());
}

#[test]
fn invalid_params_name_the_field_in_a_bad_request_detail() {
    let error = Request::from_jsonrpc(
        method::SEND_MESSAGE,
        Some(json!({"message": {"messageId": "m", "role": "user", "parts": []}})),
    )
    .unwrap_err();
    let data = to_v1_error(error).data.expect("data");
    assert_eq!(data[0]["reason"], "INVALID_PARAMS");
    assert_eq!(data[1]["@type"], BAD_REQUEST_TYPE);
    let violation = &data[1]["fieldViolations"][0];
    assert_eq!(violation["field"], "message.role");
    let description = violation["description"].as_str().expect("a string");
    assert!(
        description.contains("invalid Role \"user\""),
        "{description}"
    );
    // Without a named member there is no BadRequest.
    let data = to_v1_error(crate::jsonrpc::JsonRpcError::invalid_params())
        .data
        .expect("data");
    assert_eq!(data.as_array().map(Vec::len), Some(1));
}

#[test]
fn a_wrong_enum_name_lists_the_right_ones() {
    let error = serde_json::from_value::<Role>(json!("user")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid Role \"user\": expected one of ROLE_UNSPECIFIED, ROLE_USER, ROLE_AGENT"
    );
}

#[test]
fn a_hybrid_card_reads_as_its_1_0_part() {
    // What SDK 1.x servers publish: the 1.0 card plus the 0.3 fields.
    let mut json = serde_json::to_value(v1_card()).expect("serializes");
    let object = json.as_object_mut().expect("an object");
    for (key, value) in [
        ("url", json!("http://127.0.0.1:1/agents/echo")),
        ("preferredTransport", json!("JSONRPC")),
        ("protocolVersion", json!("0.3.0")),
        (
            "additionalInterfaces",
            json!([{"url": "http://127.0.0.1:1/agents/echo", "transport": "JSONRPC"}]),
        ),
        ("supportsAuthenticatedExtendedCard", json!(true)),
        ("security", json!([{"key": []}])),
    ] {
        object.insert(key.to_owned(), value);
    }
    let card: AgentCard = serde_json::from_value(json).expect("extra 0.3 fields are ignored");
    assert_eq!(card, v1_card());

    // A pure 0.3 card reads with no interfaces, which says what it is.
    let legacy = a2a::AgentCard::new("echo", "echoes", "http://127.0.0.1:1/a", "1.0.0");
    let card: AgentCard =
        serde_json::from_value(serde_json::to_value(legacy).expect("serializes")).expect("reads");
    assert!(card.supported_interfaces.is_empty());
}
