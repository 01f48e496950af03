//! Request and response envelopes, generic over params and result.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{JsonRpcError, RequestError, RequestId};
use crate::a2a::tagged::from_object;
use crate::a2a::{AgentCard, SendMessageResult, StreamEvent, Task, TaskPushNotificationConfig};

/// The `"jsonrpc": "2.0"` member. It carries no data; reading anything but
/// `"2.0"` is an error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct JsonRpcVersion;

impl JsonRpcVersion {
    /// The only version there is.
    pub const VALUE: &'static str = "2.0";
}

impl Serialize for JsonRpcVersion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(Self::VALUE)
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let version = Value::deserialize(deserializer)?;
        if version == Self::VALUE {
            Ok(Self)
        } else {
            Err(D::Error::custom(format_args!(
                "invalid `jsonrpc` {version}: expected \"2.0\""
            )))
        }
    }
}

/// A JSON-RPC request with any method and params (schema: `JSONRPCRequest`).
/// See [`A2aCall`](super::A2aCall) for the typed A2A form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcRequest<P = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// `None` when the member is absent (a notification); `Some(Null)` for
    /// an explicit `null`.
    #[serde(
        default,
        deserialize_with = "super::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<RequestId>,
    /// The method name.
    pub method: String,
    /// The params, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcRequest<P> {
    /// A request with an id.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: Option<P>) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id: Some(id.into()),
            method: method.into(),
            params,
        }
    }
}

impl JsonRpcRequest {
    /// Reads a request envelope from a request body.
    ///
    /// # Errors
    ///
    /// -32700 (parse error) if the body is not JSON; otherwise what
    /// [`from_value`](Self::from_value) reports.
    pub fn from_slice(body: &[u8]) -> Result<Self, RequestError> {
        let value: Value = serde_json::from_slice(body).map_err(|error| RequestError {
            id: RequestId::Null,
            error: JsonRpcError::parse_error()
                .with_message(format!("Invalid JSON payload: {error}")),
        })?;
        Self::from_value(value)
    }

    /// Checks a parsed body is one well-formed request.
    ///
    /// # Errors
    ///
    /// -32600 (invalid request) if it is not an object (batches are not
    /// supported), `jsonrpc` is not `"2.0"`, `method` is missing or not a
    /// string, `id` is not a string, integer or null, or `params` is neither
    /// an object nor an array. The error echoes the id when it was readable.
    pub fn from_value(value: Value) -> Result<Self, RequestError> {
        let object = match value {
            Value::Object(object) => object,
            Value::Array(_) => {
                return Err(invalid_request(
                    RequestId::Null,
                    "batch requests are not supported",
                ));
            }
            other => {
                return Err(invalid_request(
                    RequestId::Null,
                    format!("a request is a JSON object, not {}", json_type(&other)),
                ));
            }
        };
        let id = readable_id(&object);
        let request: Self =
            serde_path_to_error::deserialize(Value::Object(object)).map_err(|error| {
                let path = error.path().to_string();
                let inner = error.into_inner();
                let detail = if path == "." {
                    inner.to_string()
                } else {
                    format!("{inner} (at `{path}`)")
                };
                invalid_request(id.clone(), detail)
            })?;
        if let Some(params) = &request.params
            && !(params.is_object() || params.is_array())
        {
            return Err(invalid_request(
                id,
                format!(
                    "`params` must be an object or an array, not {}",
                    json_type(params)
                ),
            ));
        }
        Ok(request)
    }
}

/// The id to answer a bad request with: its own, if it has a valid one.
fn readable_id(object: &Map<String, Value>) -> RequestId {
    object
        .get("id")
        .and_then(|id| RequestId::deserialize(id).ok())
        .unwrap_or(RequestId::Null)
}

fn invalid_request(id: RequestId, detail: impl std::fmt::Display) -> RequestError {
    let error = JsonRpcError::invalid_request();
    let message = format!("{}: {detail}", error.message);
    RequestError {
        id,
        error: error.with_message(message),
    }
}

/// Names a JSON value's type for error messages.
pub(super) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A successful response (schema: `JSONRPCSuccessResponse`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcSuccessResponse<T = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The request's id.
    pub id: RequestId,
    /// The method's result.
    pub result: T,
}

/// An error response (schema: `JSONRPCErrorResponse`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The request's id, or `null` if it could not be read.
    pub id: RequestId,
    /// What went wrong.
    pub error: JsonRpcError,
}

/// A response: success or error (schema: `JSONRPCResponse`, and with a typed
/// result each method's `...Response`). Told apart by which of `result` and
/// `error` is present.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum JsonRpcResponse<T = Value> {
    /// Has `result`.
    Success(JsonRpcSuccessResponse<T>),
    /// Has `error`.
    Error(JsonRpcErrorResponse),
}

impl<T> JsonRpcResponse<T> {
    /// A success response.
    pub fn success(id: RequestId, result: T) -> Self {
        Self::Success(JsonRpcSuccessResponse {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        })
    }

    /// An error response.
    #[must_use]
    pub fn error(id: RequestId, error: JsonRpcError) -> Self {
        Self::Error(JsonRpcErrorResponse {
            jsonrpc: JsonRpcVersion,
            id,
            error,
        })
    }

    /// The id the response answers.
    #[must_use]
    pub fn id(&self) -> &RequestId {
        match self {
            Self::Success(response) => &response.id,
            Self::Error(response) => &response.id,
        }
    }

    /// The result, or the error the server sent.
    ///
    /// # Errors
    ///
    /// The response's error object, for an error response.
    pub fn into_result(self) -> Result<T, JsonRpcError> {
        match self {
            Self::Success(response) => Ok(response.result),
            Self::Error(response) => Err(response.error),
        }
    }
}

impl<'de, T> Deserialize<'de> for JsonRpcResponse<T>
where
    T: serde::de::DeserializeOwned,
{
    fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        use serde::de::Error as _;
        let object = Map::<String, Value>::deserialize(deserializer)?;
        match (object.contains_key("result"), object.contains_key("error")) {
            (false, true) => from_object(object).map(Self::Error),
            (true, false) => from_object(object).map(Self::Success),
            (true, true) => Err(D::Error::custom(
                "a response has either `result` or `error`, not both",
            )),
            (false, false) => Err(D::Error::custom(
                "a response needs `result` or `error`: neither is present",
            )),
        }
    }
}

/// Response to `message/send`.
pub type SendMessageResponse = JsonRpcResponse<SendMessageResult>;
/// Successful response to `message/send`.
pub type SendMessageSuccessResponse = JsonRpcSuccessResponse<SendMessageResult>;
/// One SSE event of `message/stream` or `tasks/resubscribe`.
pub type SendStreamingMessageResponse = JsonRpcResponse<StreamEvent>;
/// One successful SSE event of `message/stream` or `tasks/resubscribe`.
pub type SendStreamingMessageSuccessResponse = JsonRpcSuccessResponse<StreamEvent>;
/// Response to `tasks/get`.
pub type GetTaskResponse = JsonRpcResponse<Task>;
/// Successful response to `tasks/get`.
pub type GetTaskSuccessResponse = JsonRpcSuccessResponse<Task>;
/// Response to `tasks/cancel`.
pub type CancelTaskResponse = JsonRpcResponse<Task>;
/// Successful response to `tasks/cancel`.
pub type CancelTaskSuccessResponse = JsonRpcSuccessResponse<Task>;
/// Response to `tasks/pushNotificationConfig/set`.
pub type SetTaskPushNotificationConfigResponse = JsonRpcResponse<TaskPushNotificationConfig>;
/// Successful response to `tasks/pushNotificationConfig/set`.
pub type SetTaskPushNotificationConfigSuccessResponse =
    JsonRpcSuccessResponse<TaskPushNotificationConfig>;
/// Response to `tasks/pushNotificationConfig/get`.
pub type GetTaskPushNotificationConfigResponse = JsonRpcResponse<TaskPushNotificationConfig>;
/// Successful response to `tasks/pushNotificationConfig/get`.
pub type GetTaskPushNotificationConfigSuccessResponse =
    JsonRpcSuccessResponse<TaskPushNotificationConfig>;
/// Response to `tasks/pushNotificationConfig/list`.
pub type ListTaskPushNotificationConfigResponse = JsonRpcResponse<Vec<TaskPushNotificationConfig>>;
/// Successful response to `tasks/pushNotificationConfig/list`.
pub type ListTaskPushNotificationConfigSuccessResponse =
    JsonRpcSuccessResponse<Vec<TaskPushNotificationConfig>>;
/// Response to `tasks/pushNotificationConfig/delete`; the result is `null`.
pub type DeleteTaskPushNotificationConfigResponse = JsonRpcResponse<()>;
/// Successful response to `tasks/pushNotificationConfig/delete`.
pub type DeleteTaskPushNotificationConfigSuccessResponse = JsonRpcSuccessResponse<()>;
/// Response to `agent/getAuthenticatedExtendedCard`.
pub type GetAuthenticatedExtendedCardResponse = JsonRpcResponse<AgentCard>;
/// Successful response to `agent/getAuthenticatedExtendedCard`.
pub type GetAuthenticatedExtendedCardSuccessResponse = JsonRpcSuccessResponse<AgentCard>;
