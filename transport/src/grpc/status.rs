//! Errors on the gRPC binding: a [`JsonRpcError`] as a `tonic::Status` and back.
//!
//! The code is the one [`binding_status`] gives (the spec's table, one for every
//! binding); the message is the error's; the `google.rpc.Status` details carry the
//! error's `ErrorInfo` (the reason and metadata of [`to_v1_error`], domain
//! `a2a-protocol.org`, plus the JSON-RPC code under `code` so that an agentyard
//! client gets back exactly the error the service raised) and, for invalid input
//! whose field is known, a `BadRequest` field violation naming it.

use std::collections::HashMap;

use serde_json::Value;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt as _};

use crate::a2a::v1::{ERROR_DOMAIN, binding_status, error_reason, to_v1_error};
use crate::jsonrpc::{ErrorCode, JsonRpcError};
use crate::proto::ConversionError;

/// The `ErrorInfo.metadata` key holding the JSON-RPC code of the error.
pub(crate) const CODE_KEY: &str = "code";

/// `error` as the status of a gRPC call; `field` names the request field at
/// fault, when known, as a `BadRequest` violation.
pub(crate) fn to_status(error: JsonRpcError, field: Option<&str>) -> Status {
    let code = Code::from(binding_status(&error).code.number());
    let message = error.message.clone();
    let number = error.code;
    let v1 = to_v1_error(error);
    let info = v1
        .data
        .as_ref()
        .and_then(Value::as_array)
        .and_then(|details| details.first());
    let reason = info
        .and_then(|info| info.get("reason"))
        .and_then(Value::as_str)
        .unwrap_or("UNKNOWN")
        .to_owned();
    let mut metadata: HashMap<String, String> = info
        .and_then(|info| info.get("metadata"))
        .and_then(Value::as_object)
        .map(|members| {
            members
                .iter()
                .map(|(key, value)| {
                    let text = value
                        .as_str()
                        .map_or_else(|| value.to_string(), str::to_owned);
                    (key.clone(), text)
                })
                .collect()
        })
        .unwrap_or_default();
    metadata.insert(CODE_KEY.to_owned(), number.to_string());
    let mut details = ErrorDetails::with_error_info(reason, ERROR_DOMAIN, metadata);
    if let Some(field) = field {
        details.add_bad_request_violation(field, message.clone());
    }
    Status::with_error_details(code, message, details)
}

/// A request that did not convert, as INVALID_ARGUMENT naming the field.
pub(crate) fn conversion_status(error: &ConversionError) -> Status {
    let field = error.field();
    to_status(JsonRpcError::from(error.clone()), Some(field))
}

/// A status received from a gRPC server as the JSON-RPC error it stands for: the
/// code from its `ErrorInfo` (agentyard's `code` metadata, else the reason), else
/// from the gRPC code; the message as sent, and the `ErrorInfo` metadata as data.
pub(crate) fn from_status(status: &Status) -> JsonRpcError {
    let details = status.get_error_details();
    let info = details.error_info();
    let from_info = info.and_then(|info| {
        info.metadata
            .get(CODE_KEY)
            .and_then(|code| code.parse::<i64>().ok())
            .or_else(|| code_of_reason(&info.reason))
    });
    let code = from_info.unwrap_or_else(|| code_of_status(status.code()));
    let mut error = JsonRpcError::new(code, status.message());
    if let Some(info) = info {
        let mut data = serde_json::Map::new();
        for (key, value) in &info.metadata {
            if key != CODE_KEY {
                data.insert(key.clone(), Value::String(value.clone()));
            }
        }
        if !data.is_empty() {
            error = error.with_data(Value::Object(data));
        }
    }
    error
}

/// The JSON-RPC code whose `ErrorInfo.reason` is `reason`.
fn code_of_reason(reason: &str) -> Option<i64> {
    let a2a = ErrorCode::ALL.into_iter().map(ErrorCode::code);
    let v1_only = [
        crate::a2a::v1::EXTENSION_SUPPORT_REQUIRED,
        crate::a2a::v1::VERSION_NOT_SUPPORTED,
    ];
    a2a.chain(v1_only)
        .find(|code| error_reason(*code) == Some(reason))
}

/// The JSON-RPC code a bare gRPC status stands for (no `ErrorInfo`: a status from
/// the transport itself, or from a server that sends none).
fn code_of_status(code: Code) -> i64 {
    match code {
        Code::InvalidArgument | Code::OutOfRange => ErrorCode::InvalidParams.code(),
        Code::NotFound => ErrorCode::TaskNotFound.code(),
        Code::Unimplemented => ErrorCode::UnsupportedOperation.code(),
        Code::FailedPrecondition => ErrorCode::TaskNotCancelable.code(),
        _ => ErrorCode::InternalError.code(),
    }
}

#[cfg(test)]
mod tests {
    use tonic_types::StatusExt as _;

    use super::*;

    #[test]
    fn task_not_found_is_not_found_with_its_error_info() {
        let error = JsonRpcError::task_not_found().with_data(serde_json::json!({"taskId": "t-9"}));
        let status = to_status(error.clone(), None);
        assert_eq!(status.code(), Code::NotFound);
        assert_eq!(status.message(), error.message);
        let info = status.get_details_error_info().expect("ErrorInfo");
        assert_eq!(info.reason, "TASK_NOT_FOUND");
        assert_eq!(info.domain, "a2a-protocol.org");
        assert_eq!(info.metadata.get("taskId").map(String::as_str), Some("t-9"));
        let back = from_status(&status);
        assert_eq!(back.code, -32001);
        assert_eq!(back.data, Some(serde_json::json!({"taskId": "t-9"})));
    }

    #[test]
    fn every_code_follows_the_shared_table() {
        let cases = [
            (JsonRpcError::invalid_params(), Code::InvalidArgument),
            (
                JsonRpcError::task_not_cancelable(),
                Code::FailedPrecondition,
            ),
            (JsonRpcError::unsupported_operation(), Code::Unimplemented),
            (JsonRpcError::internal_error(), Code::Internal),
            (
                crate::a2a::v1::version_not_supported("9.9", &["1.0", "0.3"]),
                Code::FailedPrecondition,
            ),
            (JsonRpcError::new(-32011, "busy"), Code::Unavailable),
        ];
        for (error, code) in cases {
            let number = error.code;
            let status = to_status(error, None);
            assert_eq!(status.code(), code, "{number}");
            assert_eq!(from_status(&status).code, number);
        }
    }

    #[test]
    fn a_conversion_error_names_its_field_as_a_bad_request_violation() {
        let status = conversion_status(&ConversionError::new("Message.role", "unspecified"));
        assert_eq!(status.code(), Code::InvalidArgument);
        let bad = status.get_details_bad_request().expect("BadRequest");
        assert_eq!(bad.field_violations[0].field, "Message.role");
        assert!(
            status.message().contains("Message.role"),
            "{}",
            status.message()
        );
    }

    #[test]
    fn a_status_without_details_maps_by_its_code() {
        assert_eq!(from_status(&Status::not_found("gone")).code, -32001);
        assert_eq!(from_status(&Status::unavailable("down")).code, -32603);
        assert_eq!(
            from_status(&Status::new(Code::FailedPrecondition, "x")).code,
            -32002
        );
    }

    #[test]
    fn a_reason_alone_gives_back_the_code() {
        let status = Status::with_error_details(
            Code::FailedPrecondition,
            "nope",
            ErrorDetails::with_error_info("VERSION_NOT_SUPPORTED", ERROR_DOMAIN, HashMap::new()),
        );
        assert_eq!(from_status(&status).code, -32009);
    }
}
