//! Decoding JSON-RPC request bodies into typed A2A calls, and the error
//! objects a bad body gets back.

use agentyard_transport::jsonrpc::{
    A2aCall, A2aRequest, ErrorCode, JsonRpcError, RequestError, RequestId, method,
};
use serde_json::{Value, json};

fn reject(body: &[u8]) -> RequestError {
    match A2aCall::decode(body) {
        Ok(call) => panic!("{} was accepted as {call:?}", String::from_utf8_lossy(body)),
        Err(rejected) => rejected,
    }
}

fn reject_value(body: &Value) -> RequestError {
    reject(body.to_string().as_bytes())
}

/// Asserts the code, the id echoed, and words the message must contain.
fn assert_rejected(rejected: &RequestError, code: ErrorCode, id: &RequestId, words: &[&str]) {
    assert_eq!(rejected.error.code, code.code(), "{rejected:?}");
    assert_eq!(&rejected.id, id, "{rejected:?}");
    for word in words {
        assert!(
            rejected.error.message.contains(word),
            "message {:?} does not name {word}",
            rejected.error.message
        );
    }
}

fn send(message: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": "r-1", "method": "message/send", "params": {"message": message}})
}

#[test]
fn a_body_that_is_not_json_is_a_parse_error_with_a_null_id() {
    let rejected = reject(br#"{"jsonrpc": "2.0", "id": 1, "method": "#);
    assert_rejected(
        &rejected,
        ErrorCode::ParseError,
        &RequestId::Null,
        &["Invalid JSON payload"],
    );
    let response = serde_json::to_value(rejected.into_response()).expect("serializable");
    assert_eq!(response["id"], Value::Null);
    assert_eq!(response["jsonrpc"], "2.0");
    assert_eq!(response["error"]["code"], -32700);
}

#[test]
fn batches_and_scalars_are_invalid_requests() {
    let batch = reject_value(&json!([{"jsonrpc": "2.0", "id": 1, "method": "tasks/get"}]));
    assert_rejected(
        &batch,
        ErrorCode::InvalidRequest,
        &RequestId::Null,
        &["batch"],
    );
    let scalar = reject(b"42");
    assert_rejected(
        &scalar,
        ErrorCode::InvalidRequest,
        &RequestId::Null,
        &["object"],
    );
}

#[test]
fn a_wrong_or_missing_jsonrpc_version_is_an_invalid_request_that_echoes_the_id() {
    let wrong = reject_value(&json!({"jsonrpc": "1.0", "id": 5, "method": "tasks/get"}));
    assert_rejected(
        &wrong,
        ErrorCode::InvalidRequest,
        &RequestId::Number(5),
        &["`jsonrpc`"],
    );
    let missing = reject_value(&json!({"id": "x", "method": "tasks/get"}));
    assert_rejected(
        &missing,
        ErrorCode::InvalidRequest,
        &RequestId::from("x"),
        &["`jsonrpc`"],
    );
}

#[test]
fn a_missing_or_non_string_method_is_an_invalid_request() {
    let missing = reject_value(&json!({"jsonrpc": "2.0", "id": 1}));
    assert_rejected(
        &missing,
        ErrorCode::InvalidRequest,
        &RequestId::Number(1),
        &["`method`"],
    );
    let number = reject_value(&json!({"jsonrpc": "2.0", "id": 1, "method": 12}));
    assert_rejected(
        &number,
        ErrorCode::InvalidRequest,
        &RequestId::Number(1),
        &["method"],
    );
}

#[test]
fn an_id_of_the_wrong_type_is_an_invalid_request_answered_with_a_null_id() {
    for id in [json!(true), json!(1.5), json!({"n": 1}), json!([1])] {
        let rejected = reject_value(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tasks/get", "params": {"id": "t"}}),
        );
        assert_rejected(
            &rejected,
            ErrorCode::InvalidRequest,
            &RequestId::Null,
            &["`id`"],
        );
    }
}

#[test]
fn a_missing_or_null_id_is_an_invalid_request_because_a2a_has_no_notifications() {
    let missing =
        reject_value(&json!({"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": "t"}}));
    assert_rejected(
        &missing,
        ErrorCode::InvalidRequest,
        &RequestId::Null,
        &["`id`"],
    );
    let null = reject_value(
        &json!({"jsonrpc": "2.0", "id": null, "method": "tasks/get", "params": {"id": "t"}}),
    );
    assert_rejected(
        &null,
        ErrorCode::InvalidRequest,
        &RequestId::Null,
        &["`id`"],
    );
}

#[test]
fn scalar_params_are_an_invalid_request() {
    let rejected =
        reject_value(&json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": "t-1"}));
    assert_rejected(
        &rejected,
        ErrorCode::InvalidRequest,
        &RequestId::Number(2),
        &["`params`"],
    );
}

#[test]
fn an_unknown_method_is_method_not_found_naming_the_method() {
    let rejected =
        reject_value(&json!({"jsonrpc": "2.0", "id": "q", "method": "tasks/delete", "params": {}}));
    assert_rejected(
        &rejected,
        ErrorCode::MethodNotFound,
        &RequestId::from("q"),
        &["tasks/delete"],
    );
}

#[test]
fn missing_or_array_params_are_invalid_params() {
    let missing = reject_value(&json!({"jsonrpc": "2.0", "id": 3, "method": "message/send"}));
    assert_rejected(
        &missing,
        ErrorCode::InvalidParams,
        &RequestId::Number(3),
        &["`params`"],
    );
    let array =
        reject_value(&json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": ["t-1"]}));
    assert_rejected(
        &array,
        ErrorCode::InvalidParams,
        &RequestId::Number(3),
        &["`params`", "array"],
    );
}

#[test]
fn invalid_params_name_the_offending_member_by_path() {
    let id = RequestId::from("r-1");
    let no_message_id = reject_value(&send(
        &json!({"kind": "message", "role": "user", "parts": []}),
    ));
    assert_rejected(
        &no_message_id,
        ErrorCode::InvalidParams,
        &id,
        &["`messageId`", "params.message"],
    );

    let bad_part = reject_value(&send(&json!({
        "kind": "message", "messageId": "m", "role": "user",
        "parts": [{"kind": "text", "text": "ok"}, {"kind": "video", "uri": "x"}]
    })));
    assert_rejected(
        &bad_part,
        ErrorCode::InvalidParams,
        &id,
        &["`kind`", "video", "params.message.parts[1]"],
    );

    let bad_file = reject_value(&send(&json!({
        "kind": "message", "messageId": "m", "role": "user",
        "parts": [{"kind": "file", "file": {"bytes": 12}}]
    })));
    assert_rejected(
        &bad_file,
        ErrorCode::InvalidParams,
        &id,
        &["bytes", "params.message.parts[0]"],
    );

    let bad_role = reject_value(&send(
        &json!({"kind": "message", "messageId": "m", "role": "robot", "parts": []}),
    ));
    assert_rejected(
        &bad_role,
        ErrorCode::InvalidParams,
        &id,
        &["`role`", "params.message.role"],
    );

    let task_kind = reject_value(&send(
        &json!({"kind": "task", "messageId": "m", "role": "user", "parts": []}),
    ));
    assert_rejected(
        &task_kind,
        ErrorCode::InvalidParams,
        &id,
        &["`kind`", "params.message"],
    );

    let negative = reject_value(
        &json!({"jsonrpc": "2.0", "id": "r-1", "method": "tasks/get", "params": {"id": "t", "historyLength": -1}}),
    );
    assert_rejected(
        &negative,
        ErrorCode::InvalidParams,
        &id,
        &["params.historyLength"],
    );
}

#[test]
fn each_a2a_method_decodes_to_its_own_variant() {
    let message = json!({"kind": "message", "messageId": "m", "role": "user", "parts": []});
    let params = |name: &str| match name {
        method::SEND_MESSAGE | method::SEND_STREAMING_MESSAGE => Some(json!({"message": message})),
        method::SET_TASK_PUSH_NOTIFICATION_CONFIG => {
            Some(json!({"taskId": "t", "pushNotificationConfig": {"url": "https://h"}}))
        }
        method::DELETE_TASK_PUSH_NOTIFICATION_CONFIG => {
            Some(json!({"id": "t", "pushNotificationConfigId": "p"}))
        }
        method::GET_AUTHENTICATED_EXTENDED_CARD => None,
        _ => Some(json!({"id": "t"})),
    };
    for (index, name) in method::ALL.into_iter().enumerate() {
        let request = A2aRequest::from_jsonrpc(name, params(name))
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        assert_eq!(request.method(), name);
        let id = i64::try_from(index).expect("ten methods");
        let call = A2aCall::new(id, request.clone());
        let wire = serde_json::to_value(&call).expect("serializable");
        assert_eq!(wire["method"], name);
        assert_eq!(A2aCall::from_value(wire).expect("round trip"), call);
    }
    assert!(
        A2aRequest::from_jsonrpc(
            method::SEND_STREAMING_MESSAGE,
            params(method::SEND_STREAMING_MESSAGE)
        )
        .expect("valid")
        .is_streaming()
    );
    assert!(
        !A2aRequest::from_jsonrpc(method::GET_TASK, params(method::GET_TASK))
            .expect("valid")
            .is_streaming()
    );
}

#[test]
fn blocking_defaults_to_true_and_history_length_is_read_from_configuration() {
    let call = A2aCall::from_value(send(
        &json!({"kind": "message", "messageId": "m", "role": "user", "parts": []}),
    ))
    .expect("valid");
    let A2aRequest::SendMessage(params) = call.request else {
        panic!("expected message/send, got {:?}", call.request);
    };
    assert!(params.is_blocking());
    assert_eq!(params.history_length(), None);

    let mut body = send(&json!({"kind": "message", "messageId": "m", "role": "user", "parts": []}));
    body["params"]["configuration"] = json!({"blocking": false, "historyLength": 3});
    let A2aRequest::SendMessage(params) = A2aCall::from_value(body).expect("valid").request else {
        panic!("expected message/send");
    };
    assert!(!params.is_blocking());
    assert_eq!(params.history_length(), Some(3));
}

fn schema() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/a2a-v0.3.0.schema.json");
    let text = std::fs::read_to_string(path).expect("the vendored schema is readable");
    serde_json::from_str(&text).expect("the vendored schema is JSON")
}

#[test]
fn error_constructors_match_the_schemas_codes_and_default_messages() {
    type Constructor = fn() -> JsonRpcError;
    let constructors: [(&str, Constructor); 12] = [
        ("JSONParseError", JsonRpcError::parse_error),
        ("InvalidRequestError", JsonRpcError::invalid_request),
        ("MethodNotFoundError", JsonRpcError::method_not_found),
        ("InvalidParamsError", JsonRpcError::invalid_params),
        ("InternalError", JsonRpcError::internal_error),
        ("TaskNotFoundError", JsonRpcError::task_not_found),
        ("TaskNotCancelableError", JsonRpcError::task_not_cancelable),
        (
            "PushNotificationNotSupportedError",
            JsonRpcError::push_notification_not_supported,
        ),
        (
            "UnsupportedOperationError",
            JsonRpcError::unsupported_operation,
        ),
        (
            "ContentTypeNotSupportedError",
            JsonRpcError::content_type_not_supported,
        ),
        (
            "InvalidAgentResponseError",
            JsonRpcError::invalid_agent_response,
        ),
        (
            "AuthenticatedExtendedCardNotConfiguredError",
            JsonRpcError::authenticated_extended_card_not_configured,
        ),
    ];
    let schema = schema();
    let a2a_errors = schema["definitions"]["A2AError"]["anyOf"]
        .as_array()
        .expect("A2AError is a union");
    assert_eq!(
        a2a_errors.len(),
        constructors.len(),
        "the A2AError union changed"
    );
    for (definition, constructor) in constructors {
        let properties = &schema["definitions"][definition]["properties"];
        let error = constructor();
        assert_eq!(
            json!(error.code),
            properties["code"]["const"],
            "{definition}"
        );
        assert_eq!(
            json!(error.message),
            properties["message"]["default"],
            "{definition}"
        );
        assert_eq!(error.data, None, "{definition}");
        let code = error.error_code().expect("a known code");
        assert_eq!(code.default_message(), error.message);
        assert_eq!(JsonRpcError::from(code), error);
    }
}

#[test]
fn error_data_keeps_an_explicit_null_apart_from_an_absent_member() {
    let with_null: JsonRpcError =
        serde_json::from_value(json!({"code": 1, "message": "m", "data": null})).expect("valid");
    assert_eq!(with_null.data, Some(Value::Null));
    let absent: JsonRpcError =
        serde_json::from_value(json!({"code": 1, "message": "m"})).expect("valid");
    assert_eq!(absent.data, None);
    assert_eq!(
        serde_json::to_value(&with_null).expect("serializable")["data"],
        Value::Null
    );
    assert!(
        serde_json::to_value(&absent)
            .expect("serializable")
            .get("data")
            .is_none()
    );
}
