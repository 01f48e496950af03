use serde_json::json;

use super::*;
use crate::a2a::{Task, TaskState, TaskStatus};
use crate::{ContextId, TaskId};

#[test]
fn request_ids_beyond_i64_are_rejected_rather_than_wrapped() {
    let error = serde_json::from_str::<RequestId>("18446744073709551615").expect_err("too big");
    assert!(error.to_string().contains("`id`"), "{error}");
    assert_eq!(
        serde_json::from_str::<RequestId>("9223372036854775807").expect("fits"),
        RequestId::Number(i64::MAX)
    );
}

#[test]
fn request_id_displays_as_its_wire_value() {
    assert_eq!(RequestId::from("r-1").to_string(), "r-1");
    assert_eq!(RequestId::from(-3).to_string(), "-3");
    assert_eq!(RequestId::Null.to_string(), "null");
    assert!(RequestId::Null.is_null());
}

#[test]
fn a_response_with_both_result_and_error_is_rejected() {
    let error = serde_json::from_value::<JsonRpcResponse>(json!({
        "jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": "m"}
    }))
    .expect_err("both members");
    assert!(error.to_string().contains("not both"), "{error}");
    let error = serde_json::from_value::<JsonRpcResponse>(json!({"jsonrpc": "2.0", "id": 1}))
        .expect_err("neither member");
    assert!(error.to_string().contains("`result` or `error`"), "{error}");
}

#[test]
fn into_result_gives_the_result_or_the_servers_error() {
    let task = Task::new(
        TaskId::new("t"),
        ContextId::new("c"),
        TaskStatus {
            state: TaskState::Working,
            message: None,
            timestamp: None,
        },
    );
    let ok = GetTaskResponse::success(RequestId::from(1), task.clone());
    assert_eq!(ok.id(), &RequestId::Number(1));
    assert_eq!(ok.into_result(), Ok(task));
    let failed = GetTaskResponse::error(RequestId::from("x"), JsonRpcError::task_not_found());
    assert_eq!(failed.into_result(), Err(JsonRpcError::task_not_found()));
}

#[test]
fn delete_success_response_requires_a_null_result() {
    let ok: DeleteTaskPushNotificationConfigResponse =
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1, "result": null}))
            .expect("null result");
    assert_eq!(ok.into_result(), Ok(()));
    assert!(
        serde_json::from_value::<DeleteTaskPushNotificationConfigSuccessResponse>(
            json!({"jsonrpc": "2.0", "id": 1})
        )
        .is_err()
    );
}

#[test]
fn a_notification_keeps_its_missing_id_apart_from_a_null_id() {
    let notification =
        JsonRpcRequest::from_value(json!({"jsonrpc": "2.0", "method": "ping"})).expect("valid");
    assert_eq!(notification.id, None);
    let null_id =
        JsonRpcRequest::from_value(json!({"jsonrpc": "2.0", "id": null, "method": "ping"}))
            .expect("valid");
    assert_eq!(null_id.id, Some(RequestId::Null));
}

#[test]
fn a_request_without_an_id_gets_its_method_and_params_checked_first() {
    let unknown = A2aCall::from_value(json!({"jsonrpc": "2.0", "method": "tasks/frobnicate"}))
        .expect_err("unknown method");
    assert_eq!(unknown.id, RequestId::Null);
    assert_eq!(unknown.error.code, -32601, "{}", unknown.error);
    let bad_params = A2aCall::from_value(
        json!({"jsonrpc": "2.0", "id": null, "method": "tasks/get", "params": {"id": 7}}),
    )
    .expect_err("bad params");
    assert_eq!(bad_params.id, RequestId::Null);
    assert_eq!(bad_params.error.code, -32602, "{}", bad_params.error);
    let well_formed = A2aCall::from_value(
        json!({"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": "t-1"}}),
    )
    .expect_err("no id");
    assert_eq!(well_formed.error.code, -32600, "{}", well_formed.error);
    assert!(
        well_formed.error.message.contains("`id`"),
        "{}",
        well_formed.error
    );
    for envelope in [
        json!({"jsonrpc": "1.0", "method": "tasks/frobnicate"}),
        json!({"jsonrpc": "2.0", "method": 7}),
        json!({"jsonrpc": "2.0", "id": 1.5, "method": "tasks/frobnicate"}),
    ] {
        let rejected = A2aCall::from_value(envelope.clone()).expect_err("bad envelope");
        assert_eq!(
            rejected.error.code, -32600,
            "{envelope}: {}",
            rejected.error
        );
    }
}

/// Found by the `jsonrpc_decode` fuzz target: serde_json's default float parsing is
/// best-effort, so a number in a client's data part came out one ULP off, and the
/// request no longer said what the client sent once it was written back (to an agent,
/// the task's history, a peer).
#[test]
fn numbers_in_a_request_are_read_exactly_and_written_back_unchanged() {
    let number = "1.55555555555555e47";
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":10,"method":"message/send","params":{{"message":
        {{"kind":"message","messageId":"m-0","role":"user",
        "parts":[{{"kind":"data","data":{{"a":[{number},0.5]}}}}]}}}}}}"#
    );
    let call = A2aCall::decode(body.as_bytes()).expect("a valid request");
    let A2aRequest::SendMessage(params) = &call.request else {
        panic!("a send: {call:?}");
    };
    let crate::a2a::Part::Data(data) = &params.message.parts[0] else {
        panic!("a data part: {params:?}");
    };
    let read = data.data["a"][0].as_f64();
    assert_eq!(read, number.parse::<f64>().ok(), "the nearest double");

    let written = serde_json::to_vec(&call).expect("serializes");
    assert_eq!(A2aCall::decode(&written).ok(), Some(call));
}
