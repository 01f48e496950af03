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
