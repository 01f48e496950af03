//! Push notifications: where and how an agent reports task updates to a
//! client's webhook.

use serde::{Deserialize, Serialize};

use crate::ids::TaskId;

/// A webhook the agent calls with task updates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationConfig {
    /// Chosen by the client, so one task can have several webhooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The webhook URL.
    pub url: String,
    /// Sent back in `X-A2A-Notification-Token` so the client can check a
    /// notification is genuine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// How the agent authenticates to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushNotificationAuthenticationInfo>,
}

impl PushNotificationConfig {
    /// A config with only a URL.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            id: None,
            url: url.into(),
            token: None,
            authentication: None,
        }
    }
}

/// Credentials the agent presents when calling a webhook.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationAuthenticationInfo {
    /// Supported schemes, e.g. `["Bearer"]`.
    pub schemes: Vec<String>,
    /// The credentials, in a scheme-specific format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A webhook bound to a task (params of `tasks/pushNotificationConfig/set`,
/// result of its get, list and set).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// The task.
    pub task_id: TaskId,
    /// The webhook.
    pub push_notification_config: PushNotificationConfig,
}
