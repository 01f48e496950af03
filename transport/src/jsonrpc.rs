//! JSON-RPC 2.0 framing for A2A: ids, request and response envelopes, error
//! objects, and the typed decoding of every A2A method.
//!
//! The request path, from bytes to a typed call:
//!
//! ```
//! use agentyard_transport::a2a::Message;
//! use agentyard_transport::jsonrpc::{A2aCall, A2aRequest, JsonRpcResponse, RequestId};
//!
//! let body = br#"{"jsonrpc":"2.0","id":7,"method":"message/send",
//!     "params":{"message":{"kind":"message","messageId":"m-1","role":"user",
//!     "parts":[{"kind":"text","text":"hi"}]}}}"#;
//! let call = A2aCall::decode(body).unwrap();
//! assert_eq!(call.id, RequestId::Number(7));
//! let A2aRequest::SendMessage(params) = call.request else { panic!("not message/send") };
//! assert_eq!(params.message.text(), "hi");
//!
//! // A body that is not JSON gets a -32700 response with a null id.
//! let rejected = A2aCall::decode(b"{oops").unwrap_err();
//! let response = rejected.into_response();
//! assert_eq!(response.error.code, -32700);
//! assert_eq!(response.id, RequestId::Null);
//! ```
//!
//! Nothing here knows about HTTP, so the module could become its own crate.

use std::fmt;

use serde::{Deserialize, Serialize};

mod envelope;
mod error;
mod request;

pub use envelope::{
    CancelTaskResponse, CancelTaskSuccessResponse, DeleteTaskPushNotificationConfigResponse,
    DeleteTaskPushNotificationConfigSuccessResponse, GetAuthenticatedExtendedCardResponse,
    GetAuthenticatedExtendedCardSuccessResponse, GetTaskPushNotificationConfigResponse,
    GetTaskPushNotificationConfigSuccessResponse, GetTaskResponse, GetTaskSuccessResponse,
    JsonRpcErrorResponse, JsonRpcRequest, JsonRpcResponse, JsonRpcSuccessResponse, JsonRpcVersion,
    ListTaskPushNotificationConfigResponse, ListTaskPushNotificationConfigSuccessResponse,
    SendMessageResponse, SendMessageSuccessResponse, SendStreamingMessageResponse,
    SendStreamingMessageSuccessResponse, SetTaskPushNotificationConfigResponse,
    SetTaskPushNotificationConfigSuccessResponse,
};
pub use error::{ErrorCode, JsonRpcError};
pub use request::{A2aCall, A2aRequest, RequestError};
// The 1.0 codec (`a2a::v1`) types its params the same way.
pub(crate) use request::typed;

#[doc(no_inline)]
pub use crate::a2a::{SendMessageResult, StreamEvent};

/// The method names of A2A 0.3.0 over JSON-RPC.
pub mod method {
    /// Send a message; answers with a task or a message.
    pub const SEND_MESSAGE: &str = "message/send";
    /// Send a message and stream the updates over SSE.
    pub const SEND_STREAMING_MESSAGE: &str = "message/stream";
    /// Fetch a task.
    pub const GET_TASK: &str = "tasks/get";
    /// Cancel a task.
    pub const CANCEL_TASK: &str = "tasks/cancel";
    /// Set a task's push notification config.
    pub const SET_TASK_PUSH_NOTIFICATION_CONFIG: &str = "tasks/pushNotificationConfig/set";
    /// Get a task's push notification config.
    pub const GET_TASK_PUSH_NOTIFICATION_CONFIG: &str = "tasks/pushNotificationConfig/get";
    /// List a task's push notification configs.
    pub const LIST_TASK_PUSH_NOTIFICATION_CONFIG: &str = "tasks/pushNotificationConfig/list";
    /// Delete one of a task's push notification configs.
    pub const DELETE_TASK_PUSH_NOTIFICATION_CONFIG: &str = "tasks/pushNotificationConfig/delete";
    /// Reconnect to a task's update stream.
    pub const TASK_RESUBSCRIPTION: &str = "tasks/resubscribe";
    /// Fetch the extended agent card for an authenticated client.
    pub const GET_AUTHENTICATED_EXTENDED_CARD: &str = "agent/getAuthenticatedExtendedCard";

    /// Every method above, in the order of the schema's `A2ARequest` union.
    pub const ALL: [&str; 10] = [
        SEND_MESSAGE,
        SEND_STREAMING_MESSAGE,
        GET_TASK,
        CANCEL_TASK,
        SET_TASK_PUSH_NOTIFICATION_CONFIG,
        GET_TASK_PUSH_NOTIFICATION_CONFIG,
        TASK_RESUBSCRIPTION,
        LIST_TASK_PUSH_NOTIFICATION_CONFIG,
        DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
        GET_AUTHENTICATED_EXTENDED_CARD,
    ];
}

/// A JSON-RPC request id: a string, an integer, or `null`.
///
/// The client chooses it and the server echoes it unchanged, so both forms
/// round-trip as they came:
///
/// ```
/// use agentyard_transport::jsonrpc::RequestId;
///
/// let text: RequestId = serde_json::from_str(r#""req-1""#).unwrap();
/// let number: RequestId = serde_json::from_str("42").unwrap();
/// assert_eq!(text, RequestId::from("req-1"));
/// assert_eq!(number, RequestId::Number(42));
/// assert_eq!(serde_json::to_string(&number).unwrap(), "42");
/// assert!(serde_json::from_str::<RequestId>("1.5").is_err());
/// ```
///
/// A2A requests must carry a string or integer id; `null` appears in error
/// responses to requests whose id could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// A string id.
    String(String),
    /// An integer id. JSON-RPC discourages fractional ids and the A2A schema
    /// forbids them, so they are rejected.
    Number(i64),
    /// `null`.
    Null,
}

impl RequestId {
    /// True for `null`.
    #[must_use]
    pub const fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(id) => f.write_str(id),
            Self::Number(id) => write!(f, "{id}"),
            Self::Null => f.write_str("null"),
        }
    }
}

impl From<String> for RequestId {
    fn from(id: String) -> Self {
        Self::String(id)
    }
}

impl From<&str> for RequestId {
    fn from(id: &str) -> Self {
        Self::String(id.to_owned())
    }
}

impl From<i64> for RequestId {
    fn from(id: i64) -> Self {
        Self::Number(id)
    }
}

impl Serialize for RequestId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(id) => serializer.serialize_str(id),
            Self::Number(id) => serializer.serialize_i64(*id),
            Self::Null => serializer.serialize_unit(),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RequestIdVisitor)
    }
}

/// Accepts exactly the JSON types a request id may have.
struct RequestIdVisitor;

impl<'de> serde::de::Visitor<'de> for RequestIdVisitor {
    type Value = RequestId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an `id` that is a string, an integer or null")
    }

    fn visit_str<E: serde::de::Error>(self, id: &str) -> Result<RequestId, E> {
        Ok(RequestId::String(id.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, id: String) -> Result<RequestId, E> {
        Ok(RequestId::String(id))
    }

    fn visit_i64<E: serde::de::Error>(self, id: i64) -> Result<RequestId, E> {
        Ok(RequestId::Number(id))
    }

    fn visit_u64<E: serde::de::Error>(self, id: u64) -> Result<RequestId, E> {
        i64::try_from(id)
            .map(RequestId::Number)
            .map_err(|_| E::custom(format_args!("`id` {id} does not fit in a 64-bit integer")))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<RequestId, E> {
        Ok(RequestId::Null)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<RequestId, E> {
        Ok(RequestId::Null)
    }
}

/// Deserializes a present field as `Some`, even when it is `null`, so that
/// `"id": null` or `"data": null` stay apart from an absent member.
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests;
