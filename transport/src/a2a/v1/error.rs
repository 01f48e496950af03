//! The 1.0 form of JSON-RPC errors: the same `{code, message, data}`, with
//! `data` a list of `google.rpc` details that holds an `ErrorInfo` (spec
//! §3.3.2, §9.5), and the two codes 1.0 adds.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::jsonrpc::{ErrorCode, JsonRpcError};

/// The `@type` of a `google.rpc.ErrorInfo` detail.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// The `domain` of every A2A `ErrorInfo`.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";

/// -32008: the request lacks an extension the agent requires (new in 1.0).
pub const EXTENSION_SUPPORT_REQUIRED: i64 = -32008;

/// -32009: the agent does not serve the requested protocol version (new in
/// 1.0).
pub const VERSION_NOT_SUPPORTED: i64 = -32009;

/// A `google.rpc.ErrorInfo` detail: why an error happened, as a stable
/// `reason` within `domain`, with string metadata.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorInfo {
    /// Always [`ERROR_INFO_TYPE`].
    #[serde(rename = "@type")]
    pub type_url: String,
    /// UPPER_SNAKE_CASE, e.g. `TASK_NOT_FOUND`.
    pub reason: String,
    /// [`ERROR_DOMAIN`].
    pub domain: String,
    /// Details as strings (`map<string, string>` in `google.rpc`).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
}

impl ErrorInfo {
    /// An A2A `ErrorInfo` with `reason` and no metadata.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            type_url: ERROR_INFO_TYPE.to_owned(),
            reason: reason.into(),
            domain: ERROR_DOMAIN.to_owned(),
            metadata: Map::new(),
        }
    }
}

/// The `ErrorInfo.reason` of a code: the names the spec gives the A2A
/// errors, and the JSON-RPC names for the standard ones. `None` for a code
/// neither defines (an agentyard-specific code, say).
#[must_use]
pub fn error_reason(code: i64) -> Option<&'static str> {
    Some(match code {
        EXTENSION_SUPPORT_REQUIRED => "EXTENSION_SUPPORT_REQUIRED",
        VERSION_NOT_SUPPORTED => "VERSION_NOT_SUPPORTED",
        _ => match ErrorCode::from_code(code)? {
            ErrorCode::ParseError => "PARSE_ERROR",
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::MethodNotFound => "METHOD_NOT_FOUND",
            ErrorCode::InvalidParams => "INVALID_PARAMS",
            ErrorCode::InternalError => "INTERNAL_ERROR",
            ErrorCode::TaskNotFound => "TASK_NOT_FOUND",
            ErrorCode::TaskNotCancelable => "TASK_NOT_CANCELABLE",
            ErrorCode::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            ErrorCode::UnsupportedOperation => "UNSUPPORTED_OPERATION",
            ErrorCode::ContentTypeNotSupported => "CONTENT_TYPE_NOT_SUPPORTED",
            ErrorCode::InvalidAgentResponse => "INVALID_AGENT_RESPONSE",
            ErrorCode::AuthenticatedExtendedCardNotConfigured => {
                "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
            }
        },
    })
}

/// Turns an internal error into its 1.0 form: same code and message, `data`
/// replaced by `[ErrorInfo]`.
///
/// The `reason` is the code's (see [`error_reason`]); for a code without
/// one, the internal data's own `reason` in upper case, else `"UNKNOWN"`.
/// The internal `data` moves into `metadata`, which `google.rpc` types as
/// strings: a string member stays as it is, any other value is written as
/// its JSON text, and data that is not an object goes under `"data"`. So
/// `{"reason": "task_not_found", "taskId": "t-9"}` on -32001 becomes
/// `reason: TASK_NOT_FOUND` with metadata `{"reason": "task_not_found",
/// "taskId": "t-9"}`: nothing of the internal detail is lost. An error whose
/// `data` is already a list of details is returned as it is, so converting
/// twice changes nothing. Invalid params (-32602) whose message names the
/// member at fault also get a `google.rpc.BadRequest` detail with that field
/// (spec §3.3.2: validation errors carry one).
///
/// ```
/// use agentyard_transport::a2a::v1;
/// use agentyard_transport::jsonrpc::JsonRpcError;
///
/// let error = JsonRpcError::task_not_found().with_data(serde_json::json!({"taskId": "t-9"}));
/// let error = v1::to_v1_error(error);
/// assert_eq!(error.code, -32001);
/// assert_eq!(error.data.unwrap()[0]["reason"], "TASK_NOT_FOUND");
/// ```
#[must_use]
pub fn to_v1_error(error: JsonRpcError) -> JsonRpcError {
    if is_v1_details(error.data.as_ref()) {
        return error;
    }
    let JsonRpcError {
        code,
        message,
        data,
    } = error;
    let mut metadata = Map::new();
    match data {
        None => {}
        Some(Value::Object(members)) => {
            for (key, value) in members {
                metadata.insert(key, stringify(value));
            }
        }
        Some(other) => {
            metadata.insert("data".to_owned(), stringify(other));
        }
    }
    let reason = error_reason(code).map_or_else(
        || match metadata.get("reason") {
            Some(Value::String(reason)) => reason.to_ascii_uppercase(),
            _ => "UNKNOWN".to_owned(),
        },
        str::to_owned,
    );
    let info = ErrorInfo {
        metadata,
        ..ErrorInfo::new(reason)
    };
    let mut details = vec![error_info_value(info)];
    if code == ErrorCode::InvalidParams.code()
        && let Some(violation) = field_violation(&message)
    {
        details.push(violation);
    }
    JsonRpcError {
        code,
        message,
        data: Some(Value::Array(details)),
    }
}

/// The `@type` of a `google.rpc.BadRequest` detail.
pub const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";

/// A `google.rpc.BadRequest` detail for an invalid-params message that names
/// the member at fault, as the params typing writes it
/// (`"Invalid parameters: <what> (at `params.<path>`)"`): the field is the
/// path inside `params`, the description what is wrong with it.
fn field_violation(message: &str) -> Option<Value> {
    let (head, tail) = message.rsplit_once(" (at `")?;
    let path = tail.strip_suffix("`)")?;
    let field = path
        .strip_prefix("params.")
        .unwrap_or(if path == "params" { "" } else { path });
    let description = head.split_once(": ").map_or(head, |(_, what)| what);
    let mut violation = Map::new();
    violation.insert("field".to_owned(), Value::String(field.to_owned()));
    violation.insert(
        "description".to_owned(),
        Value::String(description.to_owned()),
    );
    let mut detail = Map::new();
    detail.insert(
        "@type".to_owned(),
        Value::String(BAD_REQUEST_TYPE.to_owned()),
    );
    detail.insert(
        "fieldViolations".to_owned(),
        Value::Array(vec![Value::Object(violation)]),
    );
    Some(Value::Object(detail))
}

/// True when `data` is already a list of `google.rpc` details (each an
/// object with an `@type`), as [`version_not_supported`] builds it: such an
/// error is in its 1.0 form and is left alone.
fn is_v1_details(data: Option<&Value>) -> bool {
    match data {
        Some(Value::Array(details)) => {
            !details.is_empty()
                && details
                    .iter()
                    .all(|detail| matches!(detail.get("@type"), Some(Value::String(_))))
        }
        _ => false,
    }
}

/// A value as a `google.rpc` metadata string.
fn stringify(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(text),
        other => Value::String(other.to_string()),
    }
}

/// The JSON of an `ErrorInfo`, built directly: it is a map of strings.
fn error_info_value(info: ErrorInfo) -> Value {
    let mut object = Map::new();
    object.insert("@type".to_owned(), Value::String(info.type_url));
    object.insert("reason".to_owned(), Value::String(info.reason));
    object.insert("domain".to_owned(), Value::String(info.domain));
    if !info.metadata.is_empty() {
        object.insert("metadata".to_owned(), Value::Object(info.metadata));
    }
    Value::Object(object)
}

/// -32008 ExtensionSupportRequired in its 1.0 form, listing the extensions
/// the agent requires (metadata `requiredExtensions`, comma-separated).
#[must_use]
pub fn extension_support_required(required: &[&str]) -> JsonRpcError {
    let mut info = ErrorInfo::new("EXTENSION_SUPPORT_REQUIRED");
    info.metadata.insert(
        "requiredExtensions".to_owned(),
        Value::String(required.join(",")),
    );
    JsonRpcError::new(EXTENSION_SUPPORT_REQUIRED, "Extension support required")
        .with_data(Value::Array(vec![error_info_value(info)]))
}

/// -32009 VersionNotSupported in its 1.0 form, naming the version asked for
/// (metadata `requestedVersion`) and those served (`supportedVersions`).
#[must_use]
pub fn version_not_supported(requested: &str, supported: &[&str]) -> JsonRpcError {
    let mut info = ErrorInfo::new("VERSION_NOT_SUPPORTED");
    info.metadata.insert(
        "requestedVersion".to_owned(),
        Value::String(requested.to_owned()),
    );
    info.metadata.insert(
        "supportedVersions".to_owned(),
        Value::String(supported.join(",")),
    );
    JsonRpcError::new(
        VERSION_NOT_SUPPORTED,
        format!("Protocol version \"{requested}\" is not supported"),
    )
    .with_data(Value::Array(vec![error_info_value(info)]))
}

/// A `google.rpc.Code`: the status of a gRPC call, and the `status` word of an
/// HTTP+JSON error body. Named here, without a gRPC stack, because the HTTP+JSON
/// and gRPC bindings map an error the same way (spec §5.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum RpcCode {
    /// 1: the caller went away.
    Cancelled = 1,
    /// 2: an error nothing else names.
    Unknown = 2,
    /// 3: the request is malformed or names something invalid.
    InvalidArgument = 3,
    /// 4: the call ran out of time.
    DeadlineExceeded = 4,
    /// 5: no such task (or config).
    NotFound = 5,
    /// 7: the caller may not do this.
    PermissionDenied = 7,
    /// 8: a rate or quota limit refused the call; retry later.
    ResourceExhausted = 8,
    /// 9: the thing asked for is in a state that does not allow it.
    FailedPrecondition = 9,
    /// 12: the agent or server does not do this.
    Unimplemented = 12,
    /// 13: the server (or an agent) failed.
    Internal = 13,
    /// 14: the server cannot take the call now; retry later.
    Unavailable = 14,
    /// 16: no valid credentials.
    Unauthenticated = 16,
}

impl RpcCode {
    /// The code's number.
    #[must_use]
    pub const fn number(self) -> i32 {
        self as i32
    }

    /// The code's name, as `google.rpc.Status` JSON writes it (`"NOT_FOUND"`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Cancelled => "CANCELLED",
            Self::Unknown => "UNKNOWN",
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Self::NotFound => "NOT_FOUND",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Self::FailedPrecondition => "FAILED_PRECONDITION",
            Self::Unimplemented => "UNIMPLEMENTED",
            Self::Internal => "INTERNAL",
            Self::Unavailable => "UNAVAILABLE",
            Self::Unauthenticated => "UNAUTHENTICATED",
        }
    }

    /// The code with this number, if it is one of ours.
    #[must_use]
    pub const fn from_number(number: i32) -> Option<Self> {
        Some(match number {
            1 => Self::Cancelled,
            2 => Self::Unknown,
            3 => Self::InvalidArgument,
            4 => Self::DeadlineExceeded,
            5 => Self::NotFound,
            7 => Self::PermissionDenied,
            8 => Self::ResourceExhausted,
            9 => Self::FailedPrecondition,
            12 => Self::Unimplemented,
            13 => Self::Internal,
            14 => Self::Unavailable,
            16 => Self::Unauthenticated,
            _ => return None,
        })
    }
}

/// How an error travels on the HTTP+JSON and gRPC bindings: its gRPC code and its
/// HTTP status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindingStatus {
    /// The gRPC status code, also the `status` of the HTTP+JSON error body.
    pub code: RpcCode,
    /// The HTTP status of the HTTP+JSON answer.
    pub http: u16,
}

/// The one mapping of JSON-RPC error codes to gRPC codes and HTTP statuses.
///
/// The A2A errors follow the spec's table (§5.4, v1.0.1: VersionNotSupported is
/// FAILED_PRECONDITION, HTTP 400); the JSON-RPC framing errors are the caller's
/// fault (INVALID_ARGUMENT, 400) except an unknown method (UNIMPLEMENTED, 404);
/// agentyard's own codes say what a client should do: -32010 (policy) is
/// RESOURCE_EXHAUSTED/429 when a rate limit refused the send and
/// PERMISSION_DENIED/403 otherwise, -32011 (busy, shutting down) is
/// UNAVAILABLE/503. Anything else is INTERNAL/500.
///
/// ```
/// use agentyard_transport::a2a::v1::{RpcCode, binding_status};
/// use agentyard_transport::jsonrpc::JsonRpcError;
///
/// let status = binding_status(&JsonRpcError::task_not_found());
/// assert_eq!((status.code, status.http), (RpcCode::NotFound, 404));
/// ```
#[must_use]
pub fn binding_status(error: &JsonRpcError) -> BindingStatus {
    let (code, http) = match error.code {
        -32700 | -32600 | -32602 => (RpcCode::InvalidArgument, 400),
        -32601 => (RpcCode::Unimplemented, 404),
        -32603 => (RpcCode::Internal, 500),
        -32001 => (RpcCode::NotFound, 404),
        -32002 => (RpcCode::FailedPrecondition, 409),
        -32003 | -32004 => (RpcCode::Unimplemented, 400),
        -32005 => (RpcCode::InvalidArgument, 415),
        -32006 => (RpcCode::Internal, 502),
        -32007 | EXTENSION_SUPPORT_REQUIRED | VERSION_NOT_SUPPORTED => {
            (RpcCode::FailedPrecondition, 400)
        }
        -32010 if detail(error, "policy") == Some("rate_limited") => {
            (RpcCode::ResourceExhausted, 429)
        }
        -32010 => (RpcCode::PermissionDenied, 403),
        -32011 => (RpcCode::Unavailable, 503),
        _ => (RpcCode::Internal, 500),
    };
    BindingStatus { code, http }
}

/// A string member of an error's data, in its internal form (`data.key`) or its
/// 1.0 form (the `ErrorInfo` metadata).
fn detail<'a>(error: &'a JsonRpcError, key: &str) -> Option<&'a str> {
    match error.data.as_ref()? {
        Value::Object(members) => members.get(key)?.as_str(),
        Value::Array(details) => details
            .iter()
            .find(|detail| detail.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE))?
            .get("metadata")?
            .get(key)?
            .as_str(),
        _ => None,
    }
}

#[cfg(test)]
mod status_tests {
    use super::*;

    #[test]
    fn every_a2a_error_has_the_specs_status() {
        let cases = [
            (JsonRpcError::task_not_found(), RpcCode::NotFound, 404),
            (
                JsonRpcError::task_not_cancelable(),
                RpcCode::FailedPrecondition,
                409,
            ),
            (
                JsonRpcError::push_notification_not_supported(),
                RpcCode::Unimplemented,
                400,
            ),
            (
                JsonRpcError::unsupported_operation(),
                RpcCode::Unimplemented,
                400,
            ),
            (
                JsonRpcError::content_type_not_supported(),
                RpcCode::InvalidArgument,
                415,
            ),
            (
                JsonRpcError::invalid_agent_response(),
                RpcCode::Internal,
                502,
            ),
            (
                JsonRpcError::authenticated_extended_card_not_configured(),
                RpcCode::FailedPrecondition,
                400,
            ),
            (
                extension_support_required(&["urn:x"]),
                RpcCode::FailedPrecondition,
                400,
            ),
            (
                version_not_supported("9.0", &["1.0"]),
                RpcCode::FailedPrecondition,
                400,
            ),
            (
                JsonRpcError::invalid_params(),
                RpcCode::InvalidArgument,
                400,
            ),
            (
                JsonRpcError::method_not_found(),
                RpcCode::Unimplemented,
                404,
            ),
            (JsonRpcError::internal_error(), RpcCode::Internal, 500),
        ];
        for (error, code, http) in cases {
            assert_eq!(
                binding_status(&error),
                BindingStatus { code, http },
                "{error:?}"
            );
        }
    }

    #[test]
    fn a_rate_limit_is_told_apart_from_a_denial_in_either_form() {
        let limited = JsonRpcError::new(-32010, "slow down")
            .with_data(serde_json::json!({"reason": "policy_rejected", "policy": "rate_limited"}));
        let denied = JsonRpcError::new(-32010, "no")
            .with_data(serde_json::json!({"reason": "policy_rejected", "policy": "rule_denied"}));
        assert_eq!(binding_status(&limited).code, RpcCode::ResourceExhausted);
        assert_eq!(binding_status(&to_v1_error(limited)).http, 429);
        assert_eq!(binding_status(&denied).code, RpcCode::PermissionDenied);
        assert_eq!(binding_status(&to_v1_error(denied)).http, 403);
        let busy = JsonRpcError::new(-32011, "busy");
        assert_eq!(binding_status(&busy).code, RpcCode::Unavailable);
        assert_eq!(binding_status(&busy).http, 503);
    }

    #[test]
    fn code_numbers_and_names_round_trip() {
        for number in 0..20 {
            if let Some(code) = RpcCode::from_number(number) {
                assert_eq!(code.number(), number);
                assert!(
                    code.name()
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c == '_')
                );
            }
        }
        assert_eq!(RpcCode::from_number(9), Some(RpcCode::FailedPrecondition));
    }
}
