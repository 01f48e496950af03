//! 1.0 push notification configs: flat, where 0.3 nests the webhook inside a
//! task binding.

use serde::{Deserialize, Serialize};

use super::convert::{ConversionError, is_empty, some_string};
use crate::a2a;
use crate::ids::TaskId;

/// How the agent authenticates to a webhook (proto `AuthenticationInfo`):
/// one scheme, where 0.3 lists several.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an AuthenticationInfo object")]
pub struct AuthenticationInfo {
    /// The HTTP authentication scheme, e.g. `"Bearer"`.
    pub scheme: String,
    /// The credentials, sent as `Authorization: <scheme> <credentials>`.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub credentials: String,
}

impl From<a2a::PushNotificationAuthenticationInfo> for AuthenticationInfo {
    /// Keeps the first of the 0.3 `schemes` only (1.0 has room for one); no
    /// scheme at all gives an empty `scheme`.
    fn from(info: a2a::PushNotificationAuthenticationInfo) -> Self {
        Self {
            scheme: info.schemes.into_iter().next().unwrap_or_default(),
            credentials: info.credentials.unwrap_or_default(),
        }
    }
}

impl From<AuthenticationInfo> for a2a::PushNotificationAuthenticationInfo {
    fn from(info: AuthenticationInfo) -> Self {
        Self {
            schemes: if info.scheme.is_empty() {
                Vec::new()
            } else {
                vec![info.scheme]
            },
            credentials: some_string(info.credentials),
        }
    }
}

/// A webhook bound to a task (proto `TaskPushNotificationConfig`): the params
/// and result of `CreateTaskPushNotificationConfig`, the result of its Get,
/// an item of its List, and (without `taskId`) the webhook of
/// `SendMessageConfiguration`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a TaskPushNotificationConfig object"
)]
pub struct TaskPushNotificationConfig {
    /// The tenant, if the interface sets one.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tenant: String,
    /// The config's id, chosen by the client.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub id: String,
    /// The task; empty inside `SendMessageConfiguration`, where the task
    /// does not exist yet.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The webhook URL.
    pub url: String,
    /// A token the agent sends back so the client can check a notification.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub token: String,
    /// How the agent authenticates to the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

impl TaskPushNotificationConfig {
    /// The flat config of a webhook of `task_id` (empty for none).
    #[must_use]
    pub fn from_webhook(task_id: String, webhook: a2a::PushNotificationConfig) -> Self {
        Self {
            tenant: String::new(),
            id: webhook.id.unwrap_or_default(),
            task_id,
            url: webhook.url,
            token: webhook.token.unwrap_or_default(),
            authentication: webhook.authentication.map(AuthenticationInfo::from),
        }
    }

    /// The webhook alone, as 0.3 nests it: `tenant` and `taskId` are
    /// dropped.
    #[must_use]
    pub fn into_webhook(self) -> a2a::PushNotificationConfig {
        a2a::PushNotificationConfig {
            id: some_string(self.id),
            url: self.url,
            token: some_string(self.token),
            authentication: self.authentication.map(Into::into),
        }
    }
}

impl From<a2a::TaskPushNotificationConfig> for TaskPushNotificationConfig {
    fn from(config: a2a::TaskPushNotificationConfig) -> Self {
        Self::from_webhook(
            config.task_id.into_string(),
            config.push_notification_config,
        )
    }
}

impl TryFrom<TaskPushNotificationConfig> for a2a::TaskPushNotificationConfig {
    type Error = ConversionError;

    /// Drops `tenant`; a config without `taskId` is refused, since 0.3 binds
    /// every config to a task.
    fn try_from(mut config: TaskPushNotificationConfig) -> Result<Self, ConversionError> {
        if config.task_id.is_empty() {
            return Err(ConversionError::new(
                "TaskPushNotificationConfig.taskId",
                "missing; a config is bound to a task",
            ));
        }
        let task_id = TaskId::new(std::mem::take(&mut config.task_id));
        Ok(Self {
            task_id,
            push_notification_config: config.into_webhook(),
        })
    }
}
