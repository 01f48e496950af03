//! A 1.0 method with its typed params, decoded from a JSON-RPC request, and
//! its conversion to the internal [`A2aRequest`].

use serde::Serialize;
use serde_json::Value;

use super::method;
use super::{
    CancelTaskRequest, ConversionError, DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest, GetTaskPushNotificationConfigRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfig,
};
use crate::jsonrpc::{A2aRequest, JsonRpcError, typed};

/// A 1.0 method with its typed params: one variant per rpc of the proto's
/// `A2AService`. Serializes as its params, for a client to send under
/// [`method`](Self::method).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Request {
    /// `SendMessage`.
    SendMessage(SendMessageRequest),
    /// `SendStreamingMessage`.
    SendStreamingMessage(SendMessageRequest),
    /// `GetTask`.
    GetTask(GetTaskRequest),
    /// `ListTasks` (no 0.3 counterpart).
    ListTasks(ListTasksRequest),
    /// `CancelTask`.
    CancelTask(CancelTaskRequest),
    /// `SubscribeToTask`.
    SubscribeToTask(SubscribeToTaskRequest),
    /// `CreateTaskPushNotificationConfig`.
    CreateTaskPushNotificationConfig(TaskPushNotificationConfig),
    /// `GetTaskPushNotificationConfig`.
    GetTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest),
    /// `ListTaskPushNotificationConfigs`.
    ListTaskPushNotificationConfigs(ListTaskPushNotificationConfigsRequest),
    /// `DeleteTaskPushNotificationConfig`.
    DeleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest),
    /// `GetExtendedAgentCard`.
    GetExtendedAgentCard(GetExtendedAgentCardRequest),
}

impl Request {
    /// The JSON-RPC method name.
    #[must_use]
    pub const fn method(&self) -> &'static str {
        match self {
            Self::SendMessage(_) => method::SEND_MESSAGE,
            Self::SendStreamingMessage(_) => method::SEND_STREAMING_MESSAGE,
            Self::GetTask(_) => method::GET_TASK,
            Self::ListTasks(_) => method::LIST_TASKS,
            Self::CancelTask(_) => method::CANCEL_TASK,
            Self::SubscribeToTask(_) => method::SUBSCRIBE_TO_TASK,
            Self::CreateTaskPushNotificationConfig(_) => {
                method::CREATE_TASK_PUSH_NOTIFICATION_CONFIG
            }
            Self::GetTaskPushNotificationConfig(_) => method::GET_TASK_PUSH_NOTIFICATION_CONFIG,
            Self::ListTaskPushNotificationConfigs(_) => method::LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
            Self::DeleteTaskPushNotificationConfig(_) => {
                method::DELETE_TASK_PUSH_NOTIFICATION_CONFIG
            }
            Self::GetExtendedAgentCard(_) => method::GET_EXTENDED_AGENT_CARD,
        }
    }

    /// True for the methods answered with an SSE stream.
    #[must_use]
    pub const fn is_streaming(&self) -> bool {
        matches!(
            self,
            Self::SendStreamingMessage(_) | Self::SubscribeToTask(_)
        )
    }

    /// The request's `tenant` (empty when not sent), which the internal
    /// params do not carry.
    #[must_use]
    pub fn tenant(&self) -> &str {
        match self {
            Self::SendMessage(params) | Self::SendStreamingMessage(params) => &params.tenant,
            Self::GetTask(params) => &params.tenant,
            Self::ListTasks(params) => &params.tenant,
            Self::CancelTask(params) => &params.tenant,
            Self::SubscribeToTask(params) => &params.tenant,
            Self::CreateTaskPushNotificationConfig(params) => &params.tenant,
            Self::GetTaskPushNotificationConfig(params) => &params.tenant,
            Self::ListTaskPushNotificationConfigs(params) => &params.tenant,
            Self::DeleteTaskPushNotificationConfig(params) => &params.tenant,
            Self::GetExtendedAgentCard(params) => &params.tenant,
        }
    }

    /// Types the params of a 1.0 `method`.
    ///
    /// The errors are in the internal form, as for 0.3
    /// ([`A2aRequest::from_jsonrpc`]); send them through
    /// [`to_v1_error`](super::to_v1_error).
    ///
    /// # Errors
    ///
    /// -32601 for a name that is not a 1.0 method (0.3 names included);
    /// -32602 for params that are not an object or do not fit, naming the
    /// member by its path. `ListTasks` and `GetExtendedAgentCard` may omit
    /// params (every member is optional).
    pub fn from_jsonrpc(method: &str, params: Option<Value>) -> Result<Self, JsonRpcError> {
        match method {
            method::SEND_MESSAGE => typed(params).map(Self::SendMessage),
            method::SEND_STREAMING_MESSAGE => typed(params).map(Self::SendStreamingMessage),
            method::GET_TASK => typed(params).map(Self::GetTask),
            method::LIST_TASKS => typed(params_or_empty(params)).map(Self::ListTasks),
            method::CANCEL_TASK => typed(params).map(Self::CancelTask),
            method::SUBSCRIBE_TO_TASK => typed(params).map(Self::SubscribeToTask),
            method::CREATE_TASK_PUSH_NOTIFICATION_CONFIG => {
                typed(params).map(Self::CreateTaskPushNotificationConfig)
            }
            method::GET_TASK_PUSH_NOTIFICATION_CONFIG => {
                typed(params).map(Self::GetTaskPushNotificationConfig)
            }
            method::LIST_TASK_PUSH_NOTIFICATION_CONFIGS => {
                typed(params).map(Self::ListTaskPushNotificationConfigs)
            }
            method::DELETE_TASK_PUSH_NOTIFICATION_CONFIG => {
                typed(params).map(Self::DeleteTaskPushNotificationConfig)
            }
            method::GET_EXTENDED_AGENT_CARD => {
                typed(params_or_empty(params)).map(Self::GetExtendedAgentCard)
            }
            unknown => Err(JsonRpcError::method_not_found()
                .with_message(format!("Method not found: `{unknown}`"))),
        }
    }
}

/// Absent or `null` params of a method whose members are all optional read
/// as `{}`.
fn params_or_empty(params: Option<Value>) -> Option<Value> {
    match params {
        None | Some(Value::Null) => Some(Value::Object(serde_json::Map::new())),
        some => some,
    }
}

impl From<ConversionError> for JsonRpcError {
    /// A 1.0 value the internal model cannot hold is invalid params, named.
    fn from(error: ConversionError) -> Self {
        let invalid = Self::invalid_params();
        let message = format!("{}: {error}", invalid.message);
        invalid.with_message(message)
    }
}

impl TryFrom<Request> for A2aRequest {
    type Error = ConversionError;

    /// `tenant` is dropped (read it first with [`Request::tenant`]);
    /// `ListTasks`, which 0.3 lacks, keeps its 1.0 params.
    fn try_from(request: Request) -> Result<Self, ConversionError> {
        Ok(match request {
            Request::SendMessage(params) => Self::SendMessage(params.try_into()?),
            Request::SendStreamingMessage(params) => Self::SendStreamingMessage(params.try_into()?),
            Request::GetTask(params) => Self::GetTask(params.try_into()?),
            Request::ListTasks(params) => Self::ListTasks(params),
            Request::CancelTask(params) => Self::CancelTask(params.into()),
            Request::SubscribeToTask(params) => Self::TaskResubscription(params.into()),
            Request::CreateTaskPushNotificationConfig(params) => {
                Self::SetTaskPushNotificationConfig(params.try_into()?)
            }
            Request::GetTaskPushNotificationConfig(params) => {
                Self::GetTaskPushNotificationConfig(params.into())
            }
            Request::ListTaskPushNotificationConfigs(params) => {
                Self::ListTaskPushNotificationConfig(params.into())
            }
            Request::DeleteTaskPushNotificationConfig(params) => {
                Self::DeleteTaskPushNotificationConfig(params.into())
            }
            Request::GetExtendedAgentCard(_) => Self::GetAuthenticatedExtendedCard,
        })
    }
}

impl From<A2aRequest> for Request {
    /// The 1.0 request a client sends for an internal one (`tenant` empty;
    /// set it from the interface afterwards).
    fn from(request: A2aRequest) -> Self {
        match request {
            A2aRequest::SendMessage(params) => Self::SendMessage(params.into()),
            A2aRequest::SendStreamingMessage(params) => Self::SendStreamingMessage(params.into()),
            A2aRequest::GetTask(params) => Self::GetTask(params.into()),
            A2aRequest::CancelTask(params) => Self::CancelTask(params.into()),
            A2aRequest::SetTaskPushNotificationConfig(params) => {
                Self::CreateTaskPushNotificationConfig(params.into())
            }
            A2aRequest::GetTaskPushNotificationConfig(params) => {
                Self::GetTaskPushNotificationConfig(params.into())
            }
            A2aRequest::ListTaskPushNotificationConfig(params) => {
                Self::ListTaskPushNotificationConfigs(params.into())
            }
            A2aRequest::DeleteTaskPushNotificationConfig(params) => {
                Self::DeleteTaskPushNotificationConfig(params.into())
            }
            A2aRequest::TaskResubscription(params) => Self::SubscribeToTask(params.into()),
            A2aRequest::GetAuthenticatedExtendedCard => {
                Self::GetExtendedAgentCard(GetExtendedAgentCardRequest::default())
            }
            A2aRequest::ListTasks(params) => Self::ListTasks(params),
        }
    }
}
