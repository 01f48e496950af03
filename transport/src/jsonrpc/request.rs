//! Typed A2A requests and their decoding from JSON-RPC.

use serde::Serialize;
use serde::ser::SerializeMap as _;
use serde_json::Value;

use super::envelope::json_type;
use super::{
    JsonRpcError, JsonRpcErrorResponse, JsonRpcRequest, JsonRpcVersion, RequestId, method,
};
use crate::a2a::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, MessageSendParams, TaskIdParams,
    TaskPushNotificationConfig, TaskQueryParams,
};

/// An A2A method with its typed params: one variant per member of the
/// schema's `A2ARequest` union.
#[derive(Clone, Debug, PartialEq)]
pub enum A2aRequest {
    /// `message/send`.
    SendMessage(MessageSendParams),
    /// `message/stream`.
    SendStreamingMessage(MessageSendParams),
    /// `tasks/get`.
    GetTask(TaskQueryParams),
    /// `tasks/cancel`.
    CancelTask(TaskIdParams),
    /// `tasks/pushNotificationConfig/set`.
    SetTaskPushNotificationConfig(TaskPushNotificationConfig),
    /// `tasks/pushNotificationConfig/get`.
    GetTaskPushNotificationConfig(GetTaskPushNotificationConfigParams),
    /// `tasks/pushNotificationConfig/list`.
    ListTaskPushNotificationConfig(ListTaskPushNotificationConfigParams),
    /// `tasks/pushNotificationConfig/delete`.
    DeleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigParams),
    /// `tasks/resubscribe`.
    TaskResubscription(TaskIdParams),
    /// `agent/getAuthenticatedExtendedCard`; it takes no params.
    GetAuthenticatedExtendedCard,
    /// `ListTasks`: A2A 1.0 only (0.3 has no such method over JSON-RPC), so its
    /// params are the 1.0 ones, which are its only model.
    ListTasks(crate::a2a::v1::ListTasksRequest),
}

impl A2aRequest {
    /// The JSON-RPC method name.
    #[must_use]
    pub const fn method(&self) -> &'static str {
        match self {
            Self::SendMessage(_) => method::SEND_MESSAGE,
            Self::SendStreamingMessage(_) => method::SEND_STREAMING_MESSAGE,
            Self::GetTask(_) => method::GET_TASK,
            Self::CancelTask(_) => method::CANCEL_TASK,
            Self::SetTaskPushNotificationConfig(_) => method::SET_TASK_PUSH_NOTIFICATION_CONFIG,
            Self::GetTaskPushNotificationConfig(_) => method::GET_TASK_PUSH_NOTIFICATION_CONFIG,
            Self::ListTaskPushNotificationConfig(_) => method::LIST_TASK_PUSH_NOTIFICATION_CONFIG,
            Self::DeleteTaskPushNotificationConfig(_) => {
                method::DELETE_TASK_PUSH_NOTIFICATION_CONFIG
            }
            Self::TaskResubscription(_) => method::TASK_RESUBSCRIPTION,
            Self::GetAuthenticatedExtendedCard => method::GET_AUTHENTICATED_EXTENDED_CARD,
            Self::ListTasks(_) => crate::a2a::v1::method::LIST_TASKS,
        }
    }

    /// True for the methods answered with an SSE stream.
    #[must_use]
    pub const fn is_streaming(&self) -> bool {
        matches!(
            self,
            Self::SendStreamingMessage(_) | Self::TaskResubscription(_)
        )
    }

    /// Types the params of `method`.
    ///
    /// # Errors
    ///
    /// -32601 (method not found) for a method A2A does not define; -32602
    /// (invalid params) when params are missing, not an object, or do not fit
    /// the method. The message of -32602 names the offending member by its
    /// path, e.g. ``missing field `messageId` (at `params.message`)``.
    pub fn from_jsonrpc(method: &str, params: Option<Value>) -> Result<Self, JsonRpcError> {
        match method {
            method::SEND_MESSAGE => typed(params).map(Self::SendMessage),
            method::SEND_STREAMING_MESSAGE => typed(params).map(Self::SendStreamingMessage),
            method::GET_TASK => typed(params).map(Self::GetTask),
            method::CANCEL_TASK => typed(params).map(Self::CancelTask),
            method::SET_TASK_PUSH_NOTIFICATION_CONFIG => {
                typed(params).map(Self::SetTaskPushNotificationConfig)
            }
            method::GET_TASK_PUSH_NOTIFICATION_CONFIG => {
                typed(params).map(Self::GetTaskPushNotificationConfig)
            }
            method::LIST_TASK_PUSH_NOTIFICATION_CONFIG => {
                typed(params).map(Self::ListTaskPushNotificationConfig)
            }
            method::DELETE_TASK_PUSH_NOTIFICATION_CONFIG => {
                typed(params).map(Self::DeleteTaskPushNotificationConfig)
            }
            method::TASK_RESUBSCRIPTION => typed(params).map(Self::TaskResubscription),
            // The schema gives this method no params, so whatever is sent is
            // ignored rather than rejected.
            method::GET_AUTHENTICATED_EXTENDED_CARD => Ok(Self::GetAuthenticatedExtendedCard),
            unknown => Err(JsonRpcError::method_not_found()
                .with_message(format!("Method not found: `{unknown}`"))),
        }
    }
}

/// Deserializes a method's params, naming the offending member on failure.
pub(crate) fn typed<T: serde::de::DeserializeOwned>(
    params: Option<Value>,
) -> Result<T, JsonRpcError> {
    let invalid = |detail: String| {
        let error = JsonRpcError::invalid_params();
        let message = format!("{}: {detail}", error.message);
        error.with_message(message)
    };
    let params = match params {
        Some(params @ Value::Object(_)) => params,
        Some(other) => {
            return Err(invalid(format!(
                "`params` must be an object, not {}",
                json_type(&other)
            )));
        }
        None => return Err(invalid("missing field `params`".to_owned())),
    };
    serde_path_to_error::deserialize(params).map_err(|error| {
        let path = error.path().to_string();
        let at = if path == "." {
            "params".to_owned()
        } else {
            format!("params.{path}")
        };
        invalid(format!("{} (at `{at}`)", error.into_inner()))
    })
}

/// A decoded A2A request: the id to answer with and the typed request.
///
/// It serializes to the JSON-RPC request it came from (as a client sends it)
/// and deserializes with the checks of [`A2aCall::from_value`].
#[derive(Clone, Debug, PartialEq)]
pub struct A2aCall {
    /// The client's id, echoed in the response. Never `null`: A2A requests
    /// carry a string or integer id.
    pub id: RequestId,
    /// The method and its params.
    pub request: A2aRequest,
}

impl A2aCall {
    /// A call with a client-chosen id.
    pub fn new(id: impl Into<RequestId>, request: A2aRequest) -> Self {
        Self {
            id: id.into(),
            request,
        }
    }

    /// Decodes a request body.
    ///
    /// # Errors
    ///
    /// A [`RequestError`] carrying the id to answer with (`null` when it
    /// could not be read) and the error object: -32700 for a body that is
    /// not JSON, -32600 for a malformed envelope, -32601 for an unknown
    /// method, -32602 for params that do not fit, and -32600 for a missing or
    /// `null` id on a request that is otherwise fine.
    pub fn decode(body: &[u8]) -> Result<Self, RequestError> {
        Self::from_jsonrpc(JsonRpcRequest::from_slice(body)?)
    }

    /// Decodes an already parsed request body; as [`decode`](Self::decode)
    /// without the parse step.
    ///
    /// # Errors
    ///
    /// As [`decode`](Self::decode), except -32700.
    pub fn from_value(value: Value) -> Result<Self, RequestError> {
        Self::from_jsonrpc(JsonRpcRequest::from_value(value)?)
    }

    /// Types a request envelope.
    ///
    /// # Errors
    ///
    /// What [`A2aRequest::from_jsonrpc`] reports (-32601, -32602), answered with
    /// the request's id, or `null` when it has none; then -32600 if the id is
    /// missing or `null` (A2A defines no notifications, and its schema requires a
    /// string or integer id).
    pub fn from_jsonrpc(request: JsonRpcRequest) -> Result<Self, RequestError> {
        // The method and params are checked before the id, as the official SDK
        // servers do: a client that forgot the id learns first what else is wrong
        // (-32601, -32602 with `"id": null`). A well-formed request without an id
        // still gets -32600 rather than an answer: the Python SDK server runs it and
        // answers with `"id": null`, but JSON-RPC 2.0 (section 4.1) forbids replying
        // to a notification, and a call whose answer the client cannot correlate
        // should not start a task.
        let typed = A2aRequest::from_jsonrpc(&request.method, request.params);
        let id = match request.id {
            Some(RequestId::Null) | None => {
                let error = match typed {
                    Err(error) => error,
                    Ok(_) => {
                        let error = JsonRpcError::invalid_request();
                        let message = format!(
                            "{}: `id` must be a string or an integer (A2A has no notifications)",
                            error.message
                        );
                        error.with_message(message)
                    }
                };
                return Err(RequestError {
                    id: RequestId::Null,
                    error,
                });
            }
            Some(id) => id,
        };
        match typed {
            Ok(request) => Ok(Self { id, request }),
            Err(error) => Err(RequestError { id, error }),
        }
    }
}

impl Serialize for A2aCall {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let has_params = !matches!(self.request, A2aRequest::GetAuthenticatedExtendedCard);
        let mut map = serializer.serialize_map(Some(3 + usize::from(has_params)))?;
        map.serialize_entry("jsonrpc", &JsonRpcVersion)?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("method", self.request.method())?;
        match &self.request {
            A2aRequest::SendMessage(params) | A2aRequest::SendStreamingMessage(params) => {
                map.serialize_entry("params", params)?;
            }
            A2aRequest::GetTask(params) => map.serialize_entry("params", params)?,
            A2aRequest::CancelTask(params) | A2aRequest::TaskResubscription(params) => {
                map.serialize_entry("params", params)?;
            }
            A2aRequest::SetTaskPushNotificationConfig(params) => {
                map.serialize_entry("params", params)?;
            }
            A2aRequest::GetTaskPushNotificationConfig(params) => {
                map.serialize_entry("params", params)?;
            }
            A2aRequest::ListTaskPushNotificationConfig(params) => {
                map.serialize_entry("params", params)?;
            }
            A2aRequest::DeleteTaskPushNotificationConfig(params) => {
                map.serialize_entry("params", params)?;
            }
            A2aRequest::GetAuthenticatedExtendedCard => {}
            A2aRequest::ListTasks(params) => map.serialize_entry("params", params)?,
        }
        map.end()
    }
}

impl<'de> serde::Deserialize<'de> for A2aCall {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let value = Value::deserialize(deserializer)?;
        Self::from_value(value).map_err(|rejected| D::Error::custom(rejected.error))
    }
}

/// A request that cannot be served: the id to answer with and the error.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("request {id} rejected: {error}")]
pub struct RequestError {
    /// The request's id, or `null` if it could not be read.
    pub id: RequestId,
    /// The error to send.
    pub error: JsonRpcError,
}

impl RequestError {
    /// The error response to send back.
    #[must_use]
    pub fn into_response(self) -> JsonRpcErrorResponse {
        JsonRpcErrorResponse {
            jsonrpc: JsonRpcVersion,
            id: self.id,
            error: self.error,
        }
    }
}
