//! Holds the wire types to the vendored A2A 0.3.0 JSON schema.
//!
//! Every definition of the schema has sample documents in `tests/fixtures/`
//! (keyed by definition name). Each sample must (a) validate against its
//! definition, (b) deserialize into our type for it, and (c) serialize back to
//! the same JSON. A test walks the schema's definitions and fails if one has
//! no samples or no type, so a definition cannot be skipped silently.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use agentyard_transport::a2a::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeySecurityScheme, Artifact, AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow, DataPart, DeleteTaskPushNotificationConfigParams, FileContent,
    FilePart, FileWithBytes, FileWithUri, GetTaskPushNotificationConfigParams,
    HttpAuthSecurityScheme, ImplicitOAuthFlow, ListTaskPushNotificationConfigParams, Message,
    MessageSendConfiguration, MessageSendParams, MutualTlsSecurityScheme, OAuth2SecurityScheme,
    OAuthFlows, OpenIdConnectSecurityScheme, Part, PasswordOAuthFlow,
    PushNotificationAuthenticationInfo, PushNotificationConfig, SecurityScheme, Task,
    TaskArtifactUpdateEvent, TaskIdParams, TaskPushNotificationConfig, TaskQueryParams, TaskState,
    TaskStatus, TaskStatusUpdateEvent, TextPart, TransportProtocol,
};
use agentyard_transport::jsonrpc::{
    A2aCall, A2aRequest, CancelTaskResponse, CancelTaskSuccessResponse,
    DeleteTaskPushNotificationConfigResponse, DeleteTaskPushNotificationConfigSuccessResponse,
    ErrorCode, GetAuthenticatedExtendedCardResponse, GetAuthenticatedExtendedCardSuccessResponse,
    GetTaskPushNotificationConfigResponse, GetTaskPushNotificationConfigSuccessResponse,
    GetTaskResponse, GetTaskSuccessResponse, JsonRpcError, JsonRpcErrorResponse, JsonRpcRequest,
    JsonRpcResponse, JsonRpcSuccessResponse, ListTaskPushNotificationConfigResponse,
    ListTaskPushNotificationConfigSuccessResponse, SendMessageResponse, SendMessageSuccessResponse,
    SendStreamingMessageResponse, SendStreamingMessageSuccessResponse,
    SetTaskPushNotificationConfigResponse, SetTaskPushNotificationConfigSuccessResponse,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Reads a sample into our type and writes it back.
type Check = fn(&Value) -> Result<Value, String>;

/// How a schema definition is held to the schema.
enum Coverage {
    /// Samples round-trip through this check.
    Type(Check),
    /// An abstract base with no type of its own: the samples of these
    /// concrete definitions are also validated against the base.
    Through(&'static [&'static str]),
}

fn round_trip<T: Serialize + DeserializeOwned>(doc: &Value) -> Result<Value, String> {
    round_trip_where::<T>(doc, |_| true)
}

/// As [`round_trip`], also checking what the document was read as (the
/// variant of a union, the code of an error).
fn round_trip_where<T: Serialize + DeserializeOwned>(
    doc: &Value,
    expected: fn(&T) -> bool,
) -> Result<Value, String> {
    let typed: T = serde_json::from_value(doc.clone()).map_err(|error| error.to_string())?;
    if !expected(&typed) {
        return Err(format!(
            "read as the wrong variant: {}",
            serde_json::to_string(&typed).unwrap_or_default()
        ));
    }
    serde_json::to_value(&typed).map_err(|error| error.to_string())
}

fn error_with(error: &JsonRpcError, code: ErrorCode) -> bool {
    error.error_code() == Some(code) && error.code == code.code()
}

/// Every schema definition and how it is covered.
fn coverage() -> BTreeMap<&'static str, Coverage> {
    use Coverage::{Through, Type};
    let entries: Vec<(&'static str, Coverage)> = vec![
        // Parts and messages.
        ("TextPart", Type(round_trip::<TextPart>)),
        ("FilePart", Type(round_trip::<FilePart>)),
        ("DataPart", Type(round_trip::<DataPart>)),
        ("Part", Type(round_trip::<Part>)),
        ("PartBase", Through(&["TextPart", "FilePart", "DataPart"])),
        (
            "FileWithBytes",
            Type(|doc| {
                round_trip::<FileWithBytes>(doc)?;
                round_trip_where::<FileContent>(doc, |file| matches!(file, FileContent::Bytes(_)))
            }),
        ),
        (
            "FileWithUri",
            Type(|doc| {
                round_trip::<FileWithUri>(doc)?;
                round_trip_where::<FileContent>(doc, |file| matches!(file, FileContent::Uri(_)))
            }),
        ),
        ("FileBase", Through(&["FileWithBytes", "FileWithUri"])),
        ("Message", Type(round_trip::<Message>)),
        // Tasks.
        ("TaskState", Type(round_trip::<TaskState>)),
        ("TaskStatus", Type(round_trip::<TaskStatus>)),
        ("Task", Type(round_trip::<Task>)),
        ("Artifact", Type(round_trip::<Artifact>)),
        (
            "TaskStatusUpdateEvent",
            Type(round_trip::<TaskStatusUpdateEvent>),
        ),
        (
            "TaskArtifactUpdateEvent",
            Type(round_trip::<TaskArtifactUpdateEvent>),
        ),
        // Agent card.
        ("AgentCard", Type(round_trip::<AgentCard>)),
        ("AgentCapabilities", Type(round_trip::<AgentCapabilities>)),
        ("AgentSkill", Type(round_trip::<AgentSkill>)),
        ("AgentInterface", Type(round_trip::<AgentInterface>)),
        ("AgentExtension", Type(round_trip::<AgentExtension>)),
        ("AgentProvider", Type(round_trip::<AgentProvider>)),
        ("AgentCardSignature", Type(round_trip::<AgentCardSignature>)),
        (
            "TransportProtocol",
            Type(|doc| {
                round_trip_where::<TransportProtocol>(doc, |transport| {
                    !matches!(transport, TransportProtocol::Other(_))
                })
            }),
        ),
        // Security.
        ("SecurityScheme", Type(round_trip::<SecurityScheme>)),
        (
            "SecuritySchemeBase",
            Through(&[
                "APIKeySecurityScheme",
                "HTTPAuthSecurityScheme",
                "OAuth2SecurityScheme",
                "OpenIdConnectSecurityScheme",
                "MutualTLSSecurityScheme",
            ]),
        ),
        (
            "APIKeySecurityScheme",
            Type(|doc| {
                round_trip::<ApiKeySecurityScheme>(doc)?;
                round_trip_where::<SecurityScheme>(doc, |s| matches!(s, SecurityScheme::ApiKey(_)))
            }),
        ),
        (
            "HTTPAuthSecurityScheme",
            Type(|doc| {
                round_trip::<HttpAuthSecurityScheme>(doc)?;
                round_trip_where::<SecurityScheme>(doc, |s| matches!(s, SecurityScheme::Http(_)))
            }),
        ),
        (
            "OAuth2SecurityScheme",
            Type(|doc| {
                round_trip::<OAuth2SecurityScheme>(doc)?;
                round_trip_where::<SecurityScheme>(doc, |s| matches!(s, SecurityScheme::OAuth2(_)))
            }),
        ),
        (
            "OpenIdConnectSecurityScheme",
            Type(|doc| {
                round_trip::<OpenIdConnectSecurityScheme>(doc)?;
                round_trip_where::<SecurityScheme>(doc, |s| {
                    matches!(s, SecurityScheme::OpenIdConnect(_))
                })
            }),
        ),
        (
            "MutualTLSSecurityScheme",
            Type(|doc| {
                round_trip::<MutualTlsSecurityScheme>(doc)?;
                round_trip_where::<SecurityScheme>(doc, |s| {
                    matches!(s, SecurityScheme::MutualTls(_))
                })
            }),
        ),
        ("OAuthFlows", Type(round_trip::<OAuthFlows>)),
        (
            "AuthorizationCodeOAuthFlow",
            Type(round_trip::<AuthorizationCodeOAuthFlow>),
        ),
        (
            "ClientCredentialsOAuthFlow",
            Type(round_trip::<ClientCredentialsOAuthFlow>),
        ),
        ("ImplicitOAuthFlow", Type(round_trip::<ImplicitOAuthFlow>)),
        ("PasswordOAuthFlow", Type(round_trip::<PasswordOAuthFlow>)),
        // Params and push notifications.
        ("MessageSendParams", Type(round_trip::<MessageSendParams>)),
        (
            "MessageSendConfiguration",
            Type(round_trip::<MessageSendConfiguration>),
        ),
        ("TaskQueryParams", Type(round_trip::<TaskQueryParams>)),
        ("TaskIdParams", Type(round_trip::<TaskIdParams>)),
        (
            "GetTaskPushNotificationConfigParams",
            Type(round_trip::<GetTaskPushNotificationConfigParams>),
        ),
        (
            "ListTaskPushNotificationConfigParams",
            Type(round_trip::<ListTaskPushNotificationConfigParams>),
        ),
        (
            "DeleteTaskPushNotificationConfigParams",
            Type(round_trip::<DeleteTaskPushNotificationConfigParams>),
        ),
        (
            "PushNotificationConfig",
            Type(round_trip::<PushNotificationConfig>),
        ),
        (
            "PushNotificationAuthenticationInfo",
            Type(round_trip::<PushNotificationAuthenticationInfo>),
        ),
        (
            "TaskPushNotificationConfig",
            Type(round_trip::<TaskPushNotificationConfig>),
        ),
        // JSON-RPC envelopes.
        (
            "JSONRPCMessage",
            Through(&[
                "JSONRPCRequest",
                "JSONRPCSuccessResponse",
                "JSONRPCErrorResponse",
            ]),
        ),
        ("JSONRPCRequest", Type(round_trip::<JsonRpcRequest>)),
        (
            "JSONRPCSuccessResponse",
            Type(round_trip::<JsonRpcSuccessResponse>),
        ),
        (
            "JSONRPCErrorResponse",
            Type(round_trip::<JsonRpcErrorResponse>),
        ),
        ("JSONRPCResponse", Type(round_trip::<JsonRpcResponse>)),
        ("JSONRPCError", Type(round_trip::<JsonRpcError>)),
        // Typed requests.
        ("A2ARequest", Type(round_trip::<A2aCall>)),
        (
            "SendMessageRequest",
            Type(|doc| {
                round_trip_where::<A2aCall>(doc, |c| {
                    matches!(c.request, A2aRequest::SendMessage(_))
                })
            }),
        ),
        (
            "SendStreamingMessageRequest",
            Type(|doc| {
                round_trip_where::<A2aCall>(doc, |c| {
                    matches!(c.request, A2aRequest::SendStreamingMessage(_))
                })
            }),
        ),
        (
            "GetTaskRequest",
            Type(|doc| {
                round_trip_where::<A2aCall>(doc, |c| matches!(c.request, A2aRequest::GetTask(_)))
            }),
        ),
        (
            "CancelTaskRequest",
            Type(|doc| {
                round_trip_where::<A2aCall>(doc, |c| matches!(c.request, A2aRequest::CancelTask(_)))
            }),
        ),
        (
            "SetTaskPushNotificationConfigRequest",
            Type(|doc| {
                round_trip_where::<A2aCall>(doc, |c| {
                    matches!(c.request, A2aRequest::SetTaskPushNotificationConfig(_))
                })
            }),
        ),
        (
            "GetTaskPushNotificationConfigRequest",
            Type(|doc| {
                round_trip_where::<A2aCall>(doc, |c| {
                    matches!(c.request, A2aRequest::GetTaskPushNotificationConfig(_))
                })
            }),
        ),
        (
            "ListTaskPushNotificationConfigRequest",
            Type(|doc| {
                round_trip_where::<A2aCall>(doc, |c| {
                    matches!(c.request, A2aRequest::ListTaskPushNotificationConfig(_))
                })
            }),
        ),
        (
            "DeleteTaskPushNotificationConfigRequest",
            Type(|doc| {
                round_trip_where::<A2aCall>(doc, |c| {
                    matches!(c.request, A2aRequest::DeleteTaskPushNotificationConfig(_))
                })
            }),
        ),
        (
            "TaskResubscriptionRequest",
            Type(|doc| {
                round_trip_where::<A2aCall>(doc, |c| {
                    matches!(c.request, A2aRequest::TaskResubscription(_))
                })
            }),
        ),
        (
            "GetAuthenticatedExtendedCardRequest",
            Type(|doc| {
                round_trip_where::<A2aCall>(doc, |c| {
                    matches!(c.request, A2aRequest::GetAuthenticatedExtendedCard)
                })
            }),
        ),
        // Typed responses.
        (
            "SendMessageResponse",
            Type(round_trip::<SendMessageResponse>),
        ),
        (
            "SendMessageSuccessResponse",
            Type(round_trip::<SendMessageSuccessResponse>),
        ),
        (
            "SendStreamingMessageResponse",
            Type(round_trip::<SendStreamingMessageResponse>),
        ),
        (
            "SendStreamingMessageSuccessResponse",
            Type(round_trip::<SendStreamingMessageSuccessResponse>),
        ),
        ("GetTaskResponse", Type(round_trip::<GetTaskResponse>)),
        (
            "GetTaskSuccessResponse",
            Type(round_trip::<GetTaskSuccessResponse>),
        ),
        ("CancelTaskResponse", Type(round_trip::<CancelTaskResponse>)),
        (
            "CancelTaskSuccessResponse",
            Type(round_trip::<CancelTaskSuccessResponse>),
        ),
        (
            "SetTaskPushNotificationConfigResponse",
            Type(round_trip::<SetTaskPushNotificationConfigResponse>),
        ),
        (
            "SetTaskPushNotificationConfigSuccessResponse",
            Type(round_trip::<SetTaskPushNotificationConfigSuccessResponse>),
        ),
        (
            "GetTaskPushNotificationConfigResponse",
            Type(round_trip::<GetTaskPushNotificationConfigResponse>),
        ),
        (
            "GetTaskPushNotificationConfigSuccessResponse",
            Type(round_trip::<GetTaskPushNotificationConfigSuccessResponse>),
        ),
        (
            "ListTaskPushNotificationConfigResponse",
            Type(round_trip::<ListTaskPushNotificationConfigResponse>),
        ),
        (
            "ListTaskPushNotificationConfigSuccessResponse",
            Type(round_trip::<ListTaskPushNotificationConfigSuccessResponse>),
        ),
        (
            "DeleteTaskPushNotificationConfigResponse",
            Type(round_trip::<DeleteTaskPushNotificationConfigResponse>),
        ),
        (
            "DeleteTaskPushNotificationConfigSuccessResponse",
            Type(round_trip::<DeleteTaskPushNotificationConfigSuccessResponse>),
        ),
        (
            "GetAuthenticatedExtendedCardResponse",
            Type(round_trip::<GetAuthenticatedExtendedCardResponse>),
        ),
        (
            "GetAuthenticatedExtendedCardSuccessResponse",
            Type(round_trip::<GetAuthenticatedExtendedCardSuccessResponse>),
        ),
        // Errors: one type, checked for the definition's code.
        (
            "A2AError",
            Type(|doc| round_trip_where::<JsonRpcError>(doc, |e| e.error_code().is_some())),
        ),
        (
            "JSONParseError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| error_with(e, ErrorCode::ParseError))
            }),
        ),
        (
            "InvalidRequestError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| error_with(e, ErrorCode::InvalidRequest))
            }),
        ),
        (
            "MethodNotFoundError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| error_with(e, ErrorCode::MethodNotFound))
            }),
        ),
        (
            "InvalidParamsError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| error_with(e, ErrorCode::InvalidParams))
            }),
        ),
        (
            "InternalError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| error_with(e, ErrorCode::InternalError))
            }),
        ),
        (
            "TaskNotFoundError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| error_with(e, ErrorCode::TaskNotFound))
            }),
        ),
        (
            "TaskNotCancelableError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| {
                    error_with(e, ErrorCode::TaskNotCancelable)
                })
            }),
        ),
        (
            "PushNotificationNotSupportedError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| {
                    error_with(e, ErrorCode::PushNotificationNotSupported)
                })
            }),
        ),
        (
            "UnsupportedOperationError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| {
                    error_with(e, ErrorCode::UnsupportedOperation)
                })
            }),
        ),
        (
            "ContentTypeNotSupportedError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| {
                    error_with(e, ErrorCode::ContentTypeNotSupported)
                })
            }),
        ),
        (
            "InvalidAgentResponseError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| {
                    error_with(e, ErrorCode::InvalidAgentResponse)
                })
            }),
        ),
        (
            "AuthenticatedExtendedCardNotConfiguredError",
            Type(|doc| {
                round_trip_where::<JsonRpcError>(doc, |e| {
                    error_with(e, ErrorCode::AuthenticatedExtendedCardNotConfigured)
                })
            }),
        ),
    ];
    let count = entries.len();
    let table: BTreeMap<_, _> = entries.into_iter().collect();
    assert_eq!(
        table.len(),
        count,
        "a definition is listed twice in coverage()"
    );
    table
}

fn transport_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load_json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|error| panic!("{} is not JSON: {error}", path.display()))
}

fn schema() -> Value {
    load_json(&transport_dir().join("schema/a2a-v0.3.0.schema.json"))
}

fn definition_names(schema: &Value) -> Vec<String> {
    schema["definitions"]
        .as_object()
        .expect("the schema has definitions")
        .keys()
        .cloned()
        .collect()
}

/// Samples from the fixture files that must validate, by definition. Keys
/// starting with `_` are comments.
fn samples_in(files: &[&str]) -> BTreeMap<String, Vec<(String, Value)>> {
    let mut samples: BTreeMap<String, Vec<(String, Value)>> = BTreeMap::new();
    for file in files {
        let fixture = load_json(&transport_dir().join("tests/fixtures").join(file));
        let object = fixture.as_object().expect("a fixture file is an object");
        for (definition, docs) in object {
            if definition.starts_with('_') {
                continue;
            }
            let docs = docs
                .as_array()
                .expect("each definition maps to an array of samples");
            for (index, doc) in docs.iter().enumerate() {
                samples
                    .entry(definition.clone())
                    .or_default()
                    .push((format!("{file} {definition}[{index}]"), doc.clone()));
            }
        }
    }
    samples
}

const VALID_FIXTURES: [&str; 9] = [
    "parts_and_messages.json",
    "tasks.json",
    "agent_card.json",
    "security.json",
    "params.json",
    "requests.json",
    "responses.json",
    "errors.json",
    "spec_notes.json",
];

/// Compiles one validator per definition: `{"$ref": "#/definitions/X"}` with
/// the schema's definitions beside it.
struct Validators {
    schema: Value,
    cache: HashMap<String, jsonschema::Validator>,
}

impl Validators {
    fn new() -> Self {
        Self {
            schema: schema(),
            cache: HashMap::new(),
        }
    }

    fn errors(&mut self, definition: &str, doc: &Value) -> Vec<String> {
        let schema = &self.schema;
        let validator = self.cache.entry(definition.to_owned()).or_insert_with(|| {
            let root = json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "$ref": format!("#/definitions/{definition}"),
                "definitions": schema["definitions"],
            });
            jsonschema::draft7::new(&root)
                .unwrap_or_else(|error| panic!("schema for {definition} does not compile: {error}"))
        });
        validator
            .iter_errors(doc)
            .map(|error| error.to_string())
            .collect()
    }
}

#[test]
fn every_schema_definition_has_samples_and_a_type() {
    let schema = schema();
    let names = definition_names(&schema);
    assert_eq!(
        names.len(),
        93,
        "the vendored schema changed: review coverage()"
    );
    let table = coverage();
    let samples = samples_in(&VALID_FIXTURES);
    let mut problems = Vec::new();
    for name in &names {
        match table.get(name.as_str()) {
            None => problems.push(format!("{name}: no entry in coverage()")),
            Some(Coverage::Type(_)) => {
                if samples.get(name).is_none_or(Vec::is_empty) {
                    problems.push(format!("{name}: no sample in tests/fixtures"));
                }
            }
            Some(Coverage::Through(concrete)) => {
                for user in *concrete {
                    if !matches!(table.get(user), Some(Coverage::Type(_))) {
                        problems.push(format!("{name}: covered through {user}, which has no type"));
                    }
                    if samples.get(*user).is_none_or(Vec::is_empty) {
                        problems.push(format!(
                            "{name}: covered through {user}, which has no sample"
                        ));
                    }
                }
            }
        }
    }
    for listed in table.keys() {
        if !names.iter().any(|name| name == listed) {
            problems.push(format!("{listed}: in coverage() but not in the schema"));
        }
    }
    for sampled in samples.keys() {
        if !names.contains(sampled) {
            problems.push(format!(
                "{sampled}: has samples but is not a schema definition"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "coverage gaps:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_sample_validates_deserializes_and_round_trips_exactly() {
    let table = coverage();
    let samples = samples_in(&VALID_FIXTURES);
    let mut validators = Validators::new();
    let mut problems = Vec::new();
    let mut checked = 0;
    for (definition, docs) in &samples {
        for (label, doc) in docs {
            let errors = validators.errors(definition, doc);
            if !errors.is_empty() {
                problems.push(format!("{label}: not valid against the schema: {errors:?}"));
            }
            match table.get(definition.as_str()) {
                Some(Coverage::Type(check)) => match check(doc) {
                    Ok(back) if back == *doc => checked += 1,
                    Ok(back) => problems.push(format!("{label}: round trip changed it to {back}")),
                    Err(error) => problems.push(format!("{label}: our type rejects it: {error}")),
                },
                Some(Coverage::Through(_)) | None => {
                    problems.push(format!("{label}: no type to read it into"));
                }
            }
        }
    }
    // The samples of concrete definitions must also be instances of their base.
    for (base, coverage) in &table {
        if let Coverage::Through(concrete) = coverage {
            for user in *concrete {
                for (label, doc) in samples.get(*user).into_iter().flatten() {
                    let errors = validators.errors(base, doc);
                    if !errors.is_empty() {
                        problems.push(format!(
                            "{label}: not valid against base {base}: {errors:?}"
                        ));
                    }
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(checked > 150, "only {checked} samples were checked");
}

#[test]
fn spec_notes_stream_shorthand_is_rejected_by_the_schema_and_by_our_types() {
    let samples = samples_in(&["spec_notes_not_schema_valid.json"]);
    let mut validators = Validators::new();
    let docs = &samples["SendStreamingMessageSuccessResponse"];
    assert_eq!(docs.len(), 3);
    for (label, doc) in docs {
        assert!(
            !validators
                .errors("SendStreamingMessageSuccessResponse", doc)
                .is_empty(),
            "{label}: the schema accepts it"
        );
        assert!(
            serde_json::from_value::<SendStreamingMessageSuccessResponse>(doc.clone()).is_err(),
            "{label}: our type accepts it"
        );
    }
}

/// A document both the schema and our type reject, and the words the error
/// text must contain (the offending field, by name).
struct Rejection {
    what: &'static str,
    definition: &'static str,
    doc: Value,
    read: fn(Value) -> Result<(), String>,
    names: &'static [&'static str],
}

fn read<T: DeserializeOwned>(doc: Value) -> Result<(), String> {
    serde_json::from_value::<T>(doc)
        .map(drop)
        .map_err(|error| error.to_string())
}

#[test]
fn invalid_documents_are_rejected_with_the_offending_field_named() {
    let message = json!({"kind": "message", "messageId": "m", "role": "user", "parts": []});
    let cases = [
        Rejection {
            what: "a part with an unknown kind",
            definition: "Part",
            doc: json!({"kind": "image", "text": "x"}),
            read: read::<Part>,
            names: &["`kind`", "\"image\""],
        },
        Rejection {
            what: "a part without kind",
            definition: "Part",
            doc: json!({"text": "x"}),
            read: read::<Part>,
            names: &["`kind`"],
        },
        Rejection {
            what: "a message without messageId",
            definition: "Message",
            doc: json!({"kind": "message", "role": "user", "parts": []}),
            read: read::<Message>,
            names: &["`messageId`"],
        },
        Rejection {
            what: "a message tagged as a task",
            definition: "Message",
            doc: json!({"kind": "task", "messageId": "m", "role": "user", "parts": []}),
            read: read::<Message>,
            names: &["`kind`", "\"task\""],
        },
        Rejection {
            what: "a task tagged as a message",
            definition: "Task",
            doc: json!({"kind": "message", "id": "t", "contextId": "c", "status": {"state": "working"}}),
            read: read::<Task>,
            names: &["`kind`", "\"message\""],
        },
        Rejection {
            what: "a task with an invalid state",
            definition: "Task",
            doc: json!({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "done"}}),
            read: read::<Task>,
            names: &["`state`", "\"done\""],
        },
        Rejection {
            what: "a task state spelled the British way",
            definition: "TaskState",
            doc: json!("cancelled"),
            read: read::<TaskState>,
            names: &["`state`", "\"cancelled\""],
        },
        Rejection {
            what: "a message from a role other than user or agent",
            definition: "Message",
            doc: json!({"kind": "message", "messageId": "m", "role": "system", "parts": []}),
            read: read::<Message>,
            names: &["`role`", "\"system\""],
        },
        Rejection {
            what: "a text part without text",
            definition: "TextPart",
            doc: json!({"kind": "text"}),
            read: read::<TextPart>,
            names: &["`text`"],
        },
        Rejection {
            what: "a file with neither bytes nor uri",
            definition: "FilePart",
            doc: json!({"kind": "file", "file": {"name": "a.txt"}}),
            read: read::<FilePart>,
            names: &["`bytes`", "`uri`"],
        },
        Rejection {
            what: "a status update without final",
            definition: "TaskStatusUpdateEvent",
            doc: json!({"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}}),
            read: read::<TaskStatusUpdateEvent>,
            names: &["`final`"],
        },
        Rejection {
            what: "a security scheme of unknown type",
            definition: "SecurityScheme",
            doc: json!({"type": "kerberos"}),
            read: read::<SecurityScheme>,
            names: &["`type`", "\"kerberos\""],
        },
        Rejection {
            what: "an API key in an unknown place",
            definition: "APIKeySecurityScheme",
            doc: json!({"type": "apiKey", "in": "body", "name": "k"}),
            read: read::<ApiKeySecurityScheme>,
            names: &["`body`"],
        },
        Rejection {
            what: "a send result of kind status-update",
            definition: "SendMessageSuccessResponse",
            doc: json!({"jsonrpc": "2.0", "id": 1, "result": {"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}, "final": true}}),
            read: read::<SendMessageSuccessResponse>,
            names: &["`kind`", "\"status-update\""],
        },
        Rejection {
            what: "a request of JSON-RPC 1.0",
            definition: "JSONRPCRequest",
            doc: json!({"jsonrpc": "1.0", "id": 1, "method": "tasks/get"}),
            read: read::<JsonRpcRequest>,
            names: &["`jsonrpc`"],
        },
        Rejection {
            what: "a request with a boolean id",
            definition: "JSONRPCRequest",
            doc: json!({"jsonrpc": "2.0", "id": true, "method": "tasks/get"}),
            read: read::<JsonRpcRequest>,
            names: &["`id`"],
        },
        Rejection {
            what: "message/send params whose message lacks messageId",
            definition: "SendMessageRequest",
            doc: json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {"kind": "message", "role": "user", "parts": []}}}),
            read: read::<A2aCall>,
            names: &["`messageId`", "params.message"],
        },
    ];
    // The valid message above must be accepted, or the cases prove nothing.
    serde_json::from_value::<Message>(message).expect("the baseline message is valid");
    let mut validators = Validators::new();
    let mut problems = Vec::new();
    for case in cases {
        if validators.errors(case.definition, &case.doc).is_empty() {
            problems.push(format!("{}: the schema accepts it", case.what));
        }
        match (case.read)(case.doc) {
            Ok(()) => problems.push(format!("{}: our type accepts it", case.what)),
            Err(text) => {
                for name in case.names {
                    if !text.contains(name) {
                        problems.push(format!("{}: error does not name {name}: {text}", case.what));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn metadata_and_data_keep_arbitrary_nested_json() {
    let nested = json!({
        "string": "s", "int": -3, "float": 1.25, "bool": false, "null": null,
        "array": [1, "two", [3], {"four": 4}],
        "object": {"deeper": {"deepest": [null, true]}}
    });
    let doc = json!({
        "kind": "message", "messageId": "m", "role": "agent",
        "parts": [{"kind": "data", "data": nested, "metadata": nested}],
        "metadata": nested
    });
    let message: Message = serde_json::from_value(doc.clone()).expect("valid message");
    let Part::Data(part) = &message.parts[0] else {
        panic!("expected a data part, got {:?}", message.parts[0]);
    };
    assert_eq!(Value::Object(part.data.clone()), nested);
    assert_eq!(message.metadata.clone().map(Value::Object), Some(nested));
    assert_eq!(serde_json::to_value(&message).expect("serializable"), doc);
}

#[test]
fn jsonrpc_ids_round_trip_as_string_and_as_integer() {
    for id in [
        json!("req-1"),
        json!(""),
        json!(0),
        json!(-7),
        json!(9_007_199_254_740_993_i64),
    ] {
        let doc = json!({"jsonrpc": "2.0", "id": id, "method": "tasks/get", "params": {"id": "t"}});
        let call: A2aCall = serde_json::from_value(doc.clone()).expect("valid call");
        assert_eq!(serde_json::to_value(&call).expect("serializable"), doc);
        let response = GetTaskResponse::error(call.id, JsonRpcError::task_not_found());
        assert_eq!(
            serde_json::to_value(&response).expect("serializable")["id"],
            id
        );
    }
}
