//! The client's HTTP+JSON requests and its reading of error bodies.

use serde_json::json;

use super::*;
use crate::a2a::{Message, MessageSendParams, TaskIdParams, TaskQueryParams};

#[test]
fn each_call_goes_to_its_resource_with_ids_escaped_and_the_tenant_first() {
    let mut get = TaskQueryParams::new("a b/c");
    get.history_length = Some(3);
    let call = v1_call(A2aRequest::GetTask(get), "");
    assert_eq!(
        (call.method.clone(), call.path.as_str()),
        (Method::GET, "tasks/a%20b%2Fc")
    );
    assert_eq!(call.query, [("historyLength".to_owned(), "3".to_owned())]);
    assert!(call.body.is_none());
    let call = v1_call(A2aRequest::CancelTask(TaskIdParams::new("t")), "echo");
    assert_eq!(
        (call.method.clone(), call.path.as_str()),
        (Method::POST, "echo/tasks/t:cancel")
    );
    let call = v1_call(
        A2aRequest::SendMessage(MessageSendParams::new(Message::user_text("hi"))),
        "",
    );
    assert_eq!(call.path, "message:send");
    let body = call.body.expect("a body");
    assert_eq!(body["message"]["parts"][0]["text"], "hi");
    assert!(body.get("tenant").is_none());
    let call = v0_3_call(A2aRequest::TaskResubscription(TaskIdParams::new("t"))).expect("0.3");
    assert_eq!(
        (call.method, call.path.as_str()),
        (Method::GET, "v1/tasks/t:subscribe")
    );
    let call = v0_3_call(A2aRequest::ListTasks(v1::ListTasksRequest::default()));
    assert!(matches!(call, Err(ClientError::Protocol(_))));
}

#[test]
fn an_error_info_reason_gives_back_the_a2a_code() {
    assert_eq!(code_of_reason("TASK_NOT_FOUND"), Some(-32001));
    assert_eq!(code_of_reason("VERSION_NOT_SUPPORTED"), Some(-32009));
    assert_eq!(code_of_reason("INVALID_PARAMS"), Some(-32602));
    assert_eq!(code_of_reason("NOT_FOUND"), None);
}

#[test]
fn a2a_errors_are_json_rpc_errors_and_refusals_http_errors() {
    let status = |code: u16| reqwest::StatusCode::from_u16(code).expect("a status");
    let body = json!({"error": {"code": 404, "status": "NOT_FOUND", "message": "no task",
        "details": [{"@type": ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}]}});
    let error = error_of(
        ProtocolVersion::V1_0,
        status(404),
        "u".into(),
        None,
        body.to_string().as_bytes(),
    );
    assert!(
        matches!(&error, ClientError::JsonRpc(e) if e.code == -32001 && e.message == "no task")
    );
    let body = json!({"error": {"code": 404, "status": "NOT_FOUND", "message": "no agent",
        "details": [{"@type": ERROR_INFO_TYPE, "reason": "NOT_FOUND", "domain": "a2a-protocol.org"}]}});
    let error = error_of(
        ProtocolVersion::V1_0,
        status(404),
        "u".into(),
        None,
        body.to_string().as_bytes(),
    );
    assert_eq!(error.status(), Some(status(404)));
    let body = json!({"code": -32001, "message": "no task"});
    let error = error_of(
        ProtocolVersion::V0_3,
        status(404),
        "u".into(),
        None,
        body.to_string().as_bytes(),
    );
    assert!(matches!(&error, ClientError::JsonRpc(e) if e.code == -32001));
    let body = json!({"code": -32600, "message": "Unauthorized: present a token"});
    let error = error_of(
        ProtocolVersion::V0_3,
        status(401),
        "u".into(),
        None,
        body.to_string().as_bytes(),
    );
    assert_eq!(error.status(), Some(status(401)));
    assert_eq!(error.json_rpc_error().map(|e| e.code), Some(-32600));
    let error = error_of(
        ProtocolVersion::V1_0,
        status(502),
        "u".into(),
        Some(3),
        b"<html>",
    );
    assert!(matches!(
        error,
        ClientError::Http {
            retry_after_secs: Some(3),
            error: None,
            ..
        }
    ));
}

#[test]
fn stream_error_events_end_the_stream_with_the_a2a_error() {
    let data = json!({"error": {"code": 404, "status": "NOT_FOUND", "message": "gone",
        "details": [{"@type": ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND", "domain": "d"}]}});
    let error =
        stream_event(ProtocolVersion::V1_0, "message", &data.to_string()).expect_err("an error");
    assert!(matches!(error, ClientError::JsonRpc(e) if e.code == -32001));
    let data = json!({"code": -32603, "message": "boom"});
    let error =
        stream_event(ProtocolVersion::V0_3, "error", &data.to_string()).expect_err("an error");
    assert!(matches!(error, ClientError::JsonRpc(e) if e.code == -32603));
}
