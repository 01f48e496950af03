//! The JSON-RPC error object and the codes A2A uses.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON-RPC error object: `{code, message, data}`.
///
/// There is a constructor for each standard and A2A code, with the schema's
/// default message; refine it with [`with_message`](Self::with_message) and
/// [`with_data`](Self::with_data).
///
/// ```
/// use agentyard_transport::jsonrpc::{ErrorCode, JsonRpcError};
///
/// let error = JsonRpcError::task_not_found().with_data(serde_json::json!({"taskId": "t-9"}));
/// assert_eq!(error.code, -32001);
/// assert_eq!(error.message, "Task not found");
/// assert_eq!(error.error_code(), Some(ErrorCode::TaskNotFound));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message} ({code})")]
pub struct JsonRpcError {
    /// The error code; see [`ErrorCode`] for the known ones.
    pub code: i64,
    /// A short description for the client.
    pub message: String,
    /// Extra detail. A present `null` is kept apart from an absent member.
    #[serde(
        default,
        deserialize_with = "super::present",
        skip_serializing_if = "Option::is_none"
    )]
    pub data: Option<Value>,
}

/// The error codes of JSON-RPC 2.0 and A2A 0.3.0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// -32700: the body is not valid JSON.
    ParseError,
    /// -32600: the body is JSON but not a valid request.
    InvalidRequest,
    /// -32601: no such method.
    MethodNotFound,
    /// -32602: the params do not fit the method.
    InvalidParams,
    /// -32603: the server failed.
    InternalError,
    /// -32001: no task with that id.
    TaskNotFound,
    /// -32002: the task is in a state that cannot be canceled.
    TaskNotCancelable,
    /// -32003: the agent does not send push notifications.
    PushNotificationNotSupported,
    /// -32004: the agent does not support the operation.
    UnsupportedOperation,
    /// -32005: the content types of the request and the agent do not match.
    ContentTypeNotSupported,
    /// -32006: the agent produced a response that breaks the protocol.
    InvalidAgentResponse,
    /// -32007: no authenticated extended card is configured.
    AuthenticatedExtendedCardNotConfigured,
}

impl ErrorCode {
    /// Every known code, standard ones first.
    pub const ALL: [Self; 12] = [
        Self::ParseError,
        Self::InvalidRequest,
        Self::MethodNotFound,
        Self::InvalidParams,
        Self::InternalError,
        Self::TaskNotFound,
        Self::TaskNotCancelable,
        Self::PushNotificationNotSupported,
        Self::UnsupportedOperation,
        Self::ContentTypeNotSupported,
        Self::InvalidAgentResponse,
        Self::AuthenticatedExtendedCardNotConfigured,
    ];

    /// The numeric code on the wire.
    #[must_use]
    pub const fn code(self) -> i64 {
        match self {
            Self::ParseError => -32700,
            Self::InvalidRequest => -32600,
            Self::MethodNotFound => -32601,
            Self::InvalidParams => -32602,
            Self::InternalError => -32603,
            Self::TaskNotFound => -32001,
            Self::TaskNotCancelable => -32002,
            Self::PushNotificationNotSupported => -32003,
            Self::UnsupportedOperation => -32004,
            Self::ContentTypeNotSupported => -32005,
            Self::InvalidAgentResponse => -32006,
            Self::AuthenticatedExtendedCardNotConfigured => -32007,
        }
    }

    /// The schema's default message for the code.
    #[must_use]
    pub const fn default_message(self) -> &'static str {
        match self {
            Self::ParseError => "Invalid JSON payload",
            Self::InvalidRequest => "Request payload validation error",
            Self::MethodNotFound => "Method not found",
            Self::InvalidParams => "Invalid parameters",
            Self::InternalError => "Internal error",
            Self::TaskNotFound => "Task not found",
            Self::TaskNotCancelable => "Task cannot be canceled",
            Self::PushNotificationNotSupported => "Push Notification is not supported",
            Self::UnsupportedOperation => "This operation is not supported",
            Self::ContentTypeNotSupported => "Incompatible content types",
            Self::InvalidAgentResponse => "Invalid agent response",
            Self::AuthenticatedExtendedCardNotConfigured => {
                "Authenticated Extended Card is not configured"
            }
        }
    }

    /// The known code with this number, if any.
    #[must_use]
    pub fn from_code(code: i64) -> Option<Self> {
        Self::ALL.into_iter().find(|known| known.code() == code)
    }
}

impl From<ErrorCode> for JsonRpcError {
    fn from(code: ErrorCode) -> Self {
        Self::new(code.code(), code.default_message())
    }
}

impl JsonRpcError {
    /// An error with any code and message, without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Replaces the message.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// Attaches data.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The known code of this error, if it has one.
    #[must_use]
    pub fn error_code(&self) -> Option<ErrorCode> {
        ErrorCode::from_code(self.code)
    }

    /// -32700, "Invalid JSON payload".
    #[must_use]
    pub fn parse_error() -> Self {
        ErrorCode::ParseError.into()
    }

    /// -32600, "Request payload validation error".
    #[must_use]
    pub fn invalid_request() -> Self {
        ErrorCode::InvalidRequest.into()
    }

    /// -32601, "Method not found".
    #[must_use]
    pub fn method_not_found() -> Self {
        ErrorCode::MethodNotFound.into()
    }

    /// -32602, "Invalid parameters".
    #[must_use]
    pub fn invalid_params() -> Self {
        ErrorCode::InvalidParams.into()
    }

    /// -32603, "Internal error".
    #[must_use]
    pub fn internal_error() -> Self {
        ErrorCode::InternalError.into()
    }

    /// -32001, "Task not found".
    #[must_use]
    pub fn task_not_found() -> Self {
        ErrorCode::TaskNotFound.into()
    }

    /// -32002, "Task cannot be canceled".
    #[must_use]
    pub fn task_not_cancelable() -> Self {
        ErrorCode::TaskNotCancelable.into()
    }

    /// -32003, "Push Notification is not supported".
    #[must_use]
    pub fn push_notification_not_supported() -> Self {
        ErrorCode::PushNotificationNotSupported.into()
    }

    /// -32004, "This operation is not supported".
    #[must_use]
    pub fn unsupported_operation() -> Self {
        ErrorCode::UnsupportedOperation.into()
    }

    /// -32005, "Incompatible content types".
    #[must_use]
    pub fn content_type_not_supported() -> Self {
        ErrorCode::ContentTypeNotSupported.into()
    }

    /// -32006, "Invalid agent response".
    #[must_use]
    pub fn invalid_agent_response() -> Self {
        ErrorCode::InvalidAgentResponse.into()
    }

    /// -32007, "Authenticated Extended Card is not configured".
    #[must_use]
    pub fn authenticated_extended_card_not_configured() -> Self {
        ErrorCode::AuthenticatedExtendedCardNotConfigured.into()
    }
}
