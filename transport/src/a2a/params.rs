//! Parameters of the A2A methods, whatever the transport.

use serde::{Deserialize, Serialize};

use super::{Message, Metadata, PushNotificationConfig};
use crate::ids::TaskId;

/// Params of `message/send` and `message/stream`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSendParams {
    /// The message to deliver.
    pub message: Message,
    /// How the server should answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<MessageSendConfiguration>,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl MessageSendParams {
    /// Params carrying only `message`.
    #[must_use]
    pub fn new(message: Message) -> Self {
        Self {
            message,
            configuration: None,
            metadata: None,
        }
    }

    /// Whether `message/send` should wait for a terminal or interrupted
    /// state: true unless `configuration.blocking` is `false`.
    #[must_use]
    pub fn is_blocking(&self) -> bool {
        self.configuration
            .as_ref()
            .and_then(|configuration| configuration.blocking)
            .unwrap_or(true)
    }

    /// `configuration.historyLength`, if the client set it.
    #[must_use]
    pub fn history_length(&self) -> Option<u32> {
        self.configuration
            .as_ref()
            .and_then(|configuration| configuration.history_length)
    }
}

/// Options of a `message/send` or `message/stream` request.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSendConfiguration {
    /// MIME types the client accepts in the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_output_modes: Option<Vec<String>>,
    /// How many of the most recent history messages to return. The schema
    /// allows any integer; a negative count means nothing, so it is rejected
    /// as invalid params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<u32>,
    /// A webhook for updates after the first answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config: Option<PushNotificationConfig>,
    /// Wait for a terminal or interrupted state (the default) or answer at
    /// once with the task as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking: Option<bool>,
}

/// Params of `tasks/get`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskQueryParams {
    /// The task.
    pub id: TaskId,
    /// How many of the most recent history messages to return (negative
    /// counts are rejected, as for [`MessageSendConfiguration`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<u32>,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl TaskQueryParams {
    /// Params naming only the task.
    pub fn new(id: impl Into<TaskId>) -> Self {
        Self {
            id: id.into(),
            history_length: None,
            metadata: None,
        }
    }
}

/// Params naming a task: `tasks/cancel`, `tasks/resubscribe`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub id: TaskId,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl TaskIdParams {
    /// Params naming only the task.
    pub fn new(id: impl Into<TaskId>) -> Self {
        Self {
            id: id.into(),
            metadata: None,
        }
    }
}

/// Params of `tasks/pushNotificationConfig/get`. The schema also accepts
/// plain [`TaskIdParams`] there; those are this type without
/// `push_notification_config_id`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskPushNotificationConfigParams {
    /// The task.
    pub id: TaskId,
    /// Which of the task's webhooks; absent means the task's only one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config_id: Option<String>,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Params of `tasks/pushNotificationConfig/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigParams {
    /// The task.
    pub id: TaskId,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Params of `tasks/pushNotificationConfig/delete`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteTaskPushNotificationConfigParams {
    /// The task.
    pub id: TaskId,
    /// The webhook to remove.
    pub push_notification_config_id: String,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}
