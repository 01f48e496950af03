//! The A2A 1.0 wire form: a codec beside the internal model.
//!
//! The runtime speaks one model, the types of [`crate::a2a`] (shaped by
//! 0.3.0). This module holds the serde types of every message the 1.0
//! JSON-RPC binding carries, as the ProtoJSON mapping of the vendored
//! `transport/schema/a2a-v1.0.proto` (the authority) makes them:
//! lowerCamelCase names, enums by their full names (`TASK_STATE_COMPLETED`,
//! `ROLE_USER`; their numbers are accepted on read, as ProtoJSON allows),
//! oneofs as whichever member is present, `Struct`/`Value` as plain JSON,
//! timestamps as RFC 3339 strings. Unknown fields are ignored on read, not
//! refused (spec §5.7), and each field is also read under its proto name
//! (`message_id`), as ProtoJSON parsers must; so is an `int32` written as a
//! string (`"historyLength": "2"`). Proto3 defaults (an empty string,
//! `false`, an empty list) are left out on write, as ProtoJSON emitters do.
//!
//! Each type converts to and from its internal counterpart by value
//! (`From` where every value fits, `TryFrom` with a [`ConversionError`]
//! naming the field where it may not), so the 0.3 path pays nothing and the
//! 1.0 path moves its strings rather than copying them. `bytes` (`Part.raw`)
//! stays base64 text both ways: the internal model keeps file bytes encoded
//! too, so nothing is decoded at the edge.
//!
//! ```
//! use agentyard_transport::a2a::{self, v1};
//!
//! // A 1.0 `SendMessage` request read, and handed to the runtime as its model.
//! let request: v1::SendMessageRequest = serde_json::from_value(serde_json::json!({
//!     "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
//!     "configuration": {"returnImmediately": true}
//! })).unwrap();
//! let params = a2a::MessageSendParams::try_from(request).unwrap();
//! assert!(!params.is_blocking());
//!
//! // The runtime's answer written in the 1.0 form.
//! let reply = a2a::SendMessageResult::Message(a2a::Message::agent_text("hello"));
//! let json = serde_json::to_value(v1::SendMessageResponse::from(reply)).unwrap();
//! assert_eq!(json["message"]["role"], "ROLE_AGENT");
//! assert_eq!(json["message"]["parts"][0]["text"], "hello");
//! ```
//!
//! Messages with no 0.3 counterpart (`ListTasksRequest`/`Response`, the
//! paging of push-config lists, `tenant`) have no conversion: the 1.0 types
//! are their model.
//!
//! # Where a conversion loses information
//!
//! "1.0 → internal" is what a server reading a 1.0 request (or a client
//! reading a 1.0 answer) does; "internal → 1.0" is what it writes. Each row
//! is tested in `v1/tests.rs`.
//!
//! | case | 1.0 → internal | internal → 1.0 |
//! |---|---|---|
//! | `data` part holding a non-object (`"data": [1, 2]`, a string, `null`) | wrapped as `{"value": …}` with part metadata [`DATA_VALUE_WRAPPED`]` = true` (what the Python SDK's compat layer does); a 0.3 peer sees the wrapper | unwrapped again when that flag is set, so the round trip is exact |
//! | `mediaType` / `filename` on a `text` or `data` part | dropped: 0.3 text and data parts have neither | – |
//! | `raw` (bytes) part | a file part with `bytes` (base64 kept as sent), `filename` → `name`, `mediaType` → `mimeType`: lossless | the same back |
//! | `url` part | a file part with `uri`, names as above: lossless | the same back |
//! | `TASK_STATE_UNSPECIFIED` | `unknown` | `unknown` → `TASK_STATE_UNSPECIFIED` (lossless both ways) |
//! | `ROLE_UNSPECIFIED` | error: the internal [`Role`](crate::a2a::Role) has no such value | – |
//! | `final` on a status update | 1.0 has none: set true on terminal **and** interrupted states, where a 1.0 stream closes | dropped |
//! | `returnImmediately` vs `blocking` | `true` → `blocking: false`; `false` → `blocking` absent (the default, blocking) | `blocking: false` → `returnImmediately: true`; absent or `true` → left out |
//! | `historyLength: 0` | kept as `0`; the service already reads 0 as "no history" (it keeps the 0 most recent), which is the 1.0 meaning | kept |
//! | negative `historyLength` | error naming the field (the internal model counts with `u32`) | – |
//! | `tenant` on any request | not in the internal params: read it from the 1.0 request before converting | absent |
//! | `metadata` of `tasks/get`, `tasks/resubscribe` and push-config get/list/delete params | – | dropped: their 1.0 requests have none |
//! | push-config get without `pushNotificationConfigId` (0.3: the task's only one) | an empty `id` reads as absent | written as an empty `id` |
//! | push config `authentication` | `scheme` → `schemes: [scheme]`; an empty `scheme` → no schemes | only the first of `schemes` is kept: 1.0 has one scheme; none gives an empty `scheme` |
//! | push config `tenant`, and `taskId` inside `SendMessageConfiguration` | dropped | absent |
//! | push config list paging (`pageSize`, `pageToken`) | dropped: the internal list is whole | `nextPageToken` left out |
//! | empty list vs absent list (`extensions`, `history`, …), `false` vs absent (`append`, `lastChunk`) | read as absent | written as absent: proto3 cannot tell them apart |
//! | `contextId` missing on a Task | error naming the field: 0.3 requires it | – |
//! | card `supportedInterfaces` | the first becomes `url`/`preferredTransport`, the rest `additionalInterfaces`; each `protocolVersion` and `tenant` is dropped; an empty list is an error | each interface stamped with the card's `protocolVersion` (major.minor) |
//! | card `capabilities.stateTransitionHistory` | – | dropped (removed in 1.0) |
//! | OAuth flows: 1.0 holds exactly one (a oneof) | `deviceCode` is an error (0.3 has none); `pkceRequired` is dropped | when a 0.3 scheme lists several flows only the first of authorizationCode, clientCredentials, implicit, password is kept; one with none gets an empty `implicit` flow |
//! | apiKey `location` (free string in 1.0) | other than cookie/header/query is an error | lossless |
//!
//! Timestamps are passed through as strings, unchecked, in both forms (the
//! internal model keeps whatever the peer sent).

mod agent_card;
mod convert;
mod error;
mod message;
mod params;
mod push;
mod request;
mod response;
mod task;
mod version;

pub use agent_card::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, ApiKeySecurityScheme, AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow, DeviceCodeOAuthFlow, HttpAuthSecurityScheme, ImplicitOAuthFlow,
    MutualTlsSecurityScheme, OAuth2SecurityScheme, OAuthFlows, OpenIdConnectSecurityScheme,
    PasswordOAuthFlow, SecurityRequirement, SecurityScheme, StringList,
};
pub use convert::ConversionError;
pub use error::{
    BAD_REQUEST_TYPE, BindingStatus, ERROR_DOMAIN, ERROR_INFO_TYPE, EXTENSION_SUPPORT_REQUIRED,
    ErrorInfo, RpcCode, VERSION_NOT_SUPPORTED, binding_status, error_reason,
    extension_support_required, to_v1_error, version_not_supported,
};
pub use message::{DATA_VALUE_WRAPPED, Message, Part, PartContent, Role};
pub use params::{
    CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTasksRequest, SendMessageConfiguration, SendMessageRequest, SubscribeToTaskRequest,
};
pub use push::{AuthenticationInfo, TaskPushNotificationConfig};
pub use request::Request;
pub use response::{
    Empty, ListTaskPushNotificationConfigsResponse, ListTasksResponse, SendMessageResponse,
    StreamResponse,
};
pub use task::{
    Artifact, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
pub use version::{ProtocolVersion, UnsupportedVersion, VERSION_HEADER};

/// The method names of A2A 1.0 over JSON-RPC (spec §9.4). PascalCase, where
/// 0.3 uses `family/verb`, so one URL can route by name.
pub mod method {
    /// Send a message; answers with a [`SendMessageResponse`](super::SendMessageResponse).
    pub const SEND_MESSAGE: &str = "SendMessage";
    /// Send a message and stream [`StreamResponse`](super::StreamResponse)s over SSE.
    pub const SEND_STREAMING_MESSAGE: &str = "SendStreamingMessage";
    /// Fetch a task.
    pub const GET_TASK: &str = "GetTask";
    /// List tasks, filtered and paged (new in 1.0).
    pub const LIST_TASKS: &str = "ListTasks";
    /// Cancel a task.
    pub const CANCEL_TASK: &str = "CancelTask";
    /// Reconnect to a task's update stream (0.3 `tasks/resubscribe`).
    pub const SUBSCRIBE_TO_TASK: &str = "SubscribeToTask";
    /// Register a webhook for a task (0.3 `tasks/pushNotificationConfig/set`).
    pub const CREATE_TASK_PUSH_NOTIFICATION_CONFIG: &str = "CreateTaskPushNotificationConfig";
    /// Get one of a task's webhooks.
    pub const GET_TASK_PUSH_NOTIFICATION_CONFIG: &str = "GetTaskPushNotificationConfig";
    /// List a task's webhooks (plural in 1.0).
    pub const LIST_TASK_PUSH_NOTIFICATION_CONFIGS: &str = "ListTaskPushNotificationConfigs";
    /// Remove one of a task's webhooks.
    pub const DELETE_TASK_PUSH_NOTIFICATION_CONFIG: &str = "DeleteTaskPushNotificationConfig";
    /// Fetch the extended agent card (0.3 `agent/getAuthenticatedExtendedCard`).
    pub const GET_EXTENDED_AGENT_CARD: &str = "GetExtendedAgentCard";

    /// Every method above, in the order of the proto's `A2AService`.
    pub const ALL: [&str; 11] = [
        SEND_MESSAGE,
        SEND_STREAMING_MESSAGE,
        GET_TASK,
        LIST_TASKS,
        CANCEL_TASK,
        SUBSCRIBE_TO_TASK,
        CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        GET_TASK_PUSH_NOTIFICATION_CONFIG,
        LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        GET_EXTENDED_AGENT_CARD,
        DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
    ];
}

#[cfg(test)]
mod tests;
