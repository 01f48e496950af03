//! The A2A 0.3.0 data model as serde types.
//!
//! Each type mirrors a definition of the vendored schema
//! (`transport/schema/a2a-v0.3.0.schema.json`, the authority): camelCase
//! field names, optional fields left out when absent, and the `kind`
//! discriminator written on output and checked on input, so a message sent as
//! `"kind": "task"` is an error rather than a silently accepted message.
//!
//! The A2A 1.0 wire form of the same model is the codec in [`v1`].
//!
//! This module knows nothing of HTTP; it could become its own crate.

mod agent_card;
mod message;
mod params;
mod push;
mod result;
mod security;
pub(crate) mod tagged;
mod task;
mod timestamp;
pub mod v1;

pub use agent_card::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface,
    AgentProvider, AgentSkill, PROTOCOL_VERSION, TransportProtocol,
};

pub use message::{
    DataPart, FileContent, FilePart, FileWithBytes, FileWithUri, Message, Part, Role, TextPart,
};
pub use params::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, MessageSendConfiguration, MessageSendParams,
    TaskIdParams, TaskQueryParams,
};
pub use push::{
    PushNotificationAuthenticationInfo, PushNotificationConfig, TaskPushNotificationConfig,
};
pub use result::{SendMessageResult, StreamEvent};
pub use security::{
    ApiKeyLocation, ApiKeySecurityScheme, AuthorizationCodeOAuthFlow, ClientCredentialsOAuthFlow,
    HttpAuthSecurityScheme, ImplicitOAuthFlow, MutualTlsSecurityScheme, OAuth2SecurityScheme,
    OAuthFlows, OAuthScopes, OpenIdConnectSecurityScheme, PasswordOAuthFlow, SecurityRequirement,
    SecurityScheme,
};
pub use task::{
    Artifact, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
pub use timestamp::Timestamp;

/// A media type without its parameters and surrounding space (`text/plain` of
/// `text/plain; charset=utf-8`), case kept: what every comparison of modes, part
/// types and `Content-Type` headers compares. Cut by a byte loop rather than
/// `str::split`, whose char searcher costs more to set up than these dozen bytes
/// take to scan, on every part of every send.
#[must_use]
pub fn media_essence(media: &str) -> &str {
    media
        .bytes()
        .position(|b| b == b';')
        .map_or(media, |end| &media[..end])
        .trim()
}

/// Free-form metadata (`metadata` on messages, tasks, parts, ...): any JSON
/// object, keyed by extension.
pub type Metadata = serde_json::Map<String, serde_json::Value>;

#[cfg(test)]
mod tests;
