//! 1.0 request messages (the JSON-RPC `params`), and their conversions to
//! the internal params. `tenant` has no internal form: read it from the 1.0
//! request before converting.

use serde::{Deserialize, Serialize};

use super::convert::{
    ConversionError, count, int32, is_empty, is_false, is_zero, some_string, some_vec, to_int32,
};
use super::{Message, TaskPushNotificationConfig, TaskState};
use crate::a2a::{self, Metadata};
use crate::ids::TaskId;

/// Options of `SendMessage` / `SendStreamingMessage` (proto
/// `SendMessageConfiguration`).
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a SendMessageConfiguration object"
)]
pub struct SendMessageConfiguration {
    /// MIME types the client accepts in the answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(alias = "accepted_output_modes")]
    pub accepted_output_modes: Vec<String>,
    /// A webhook for updates after the first answer (`taskId` left empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "task_push_notification_config")]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// At most this many recent history messages; 0 means none, absent means
    /// the server's default.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "int32::optional"
    )]
    #[serde(alias = "history_length")]
    pub history_length: Option<i32>,
    /// Answer at once instead of waiting for a terminal or interrupted state:
    /// the opposite of 0.3's `blocking`.
    #[serde(default, skip_serializing_if = "is_false")]
    #[serde(alias = "return_immediately")]
    pub return_immediately: bool,
}

impl From<a2a::MessageSendConfiguration> for SendMessageConfiguration {
    fn from(configuration: a2a::MessageSendConfiguration) -> Self {
        Self {
            accepted_output_modes: configuration.accepted_output_modes.unwrap_or_default(),
            task_push_notification_config: configuration
                .push_notification_config
                .map(|webhook| TaskPushNotificationConfig::from_webhook(String::new(), webhook)),
            history_length: to_int32(configuration.history_length),
            return_immediately: configuration.blocking == Some(false),
        }
    }
}

impl TryFrom<SendMessageConfiguration> for a2a::MessageSendConfiguration {
    type Error = ConversionError;

    /// `returnImmediately: true` becomes `blocking: false`; `false` leaves
    /// `blocking` absent, which the internal model reads as blocking.
    fn try_from(configuration: SendMessageConfiguration) -> Result<Self, ConversionError> {
        Ok(Self {
            accepted_output_modes: some_vec(configuration.accepted_output_modes),
            history_length: count(
                "SendMessageConfiguration.historyLength",
                configuration.history_length,
            )?,
            push_notification_config: configuration
                .task_push_notification_config
                .map(TaskPushNotificationConfig::into_webhook),
            blocking: configuration.return_immediately.then_some(false),
        })
    }
}

/// Params of `SendMessage` and `SendStreamingMessage` (proto
/// `SendMessageRequest`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a SendMessageRequest object")]
pub struct SendMessageRequest {
    /// The tenant, if the interface sets one.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tenant: String,
    /// The message to deliver.
    pub message: Message,
    /// How the server should answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl From<a2a::MessageSendParams> for SendMessageRequest {
    fn from(params: a2a::MessageSendParams) -> Self {
        Self {
            tenant: String::new(),
            message: params.message.into(),
            configuration: params.configuration.map(Into::into),
            metadata: params.metadata,
        }
    }
}

impl TryFrom<SendMessageRequest> for a2a::MessageSendParams {
    type Error = ConversionError;

    fn try_from(request: SendMessageRequest) -> Result<Self, ConversionError> {
        Ok(Self {
            message: request.message.try_into()?,
            configuration: request.configuration.map(TryInto::try_into).transpose()?,
            metadata: request.metadata,
        })
    }
}

/// Params of `GetTask` (proto `GetTaskRequest`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a GetTaskRequest object")]
pub struct GetTaskRequest {
    /// The tenant, if the interface sets one.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tenant: String,
    /// The task.
    pub id: TaskId,
    /// At most this many recent history messages; 0 means none.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "int32::optional"
    )]
    #[serde(alias = "history_length")]
    pub history_length: Option<i32>,
}

impl From<a2a::TaskQueryParams> for GetTaskRequest {
    /// Drops `metadata`, which 1.0 `GetTaskRequest` has not.
    fn from(params: a2a::TaskQueryParams) -> Self {
        Self {
            tenant: String::new(),
            id: params.id,
            history_length: to_int32(params.history_length),
        }
    }
}

impl TryFrom<GetTaskRequest> for a2a::TaskQueryParams {
    type Error = ConversionError;

    fn try_from(request: GetTaskRequest) -> Result<Self, ConversionError> {
        Ok(Self {
            id: request.id,
            history_length: count("GetTaskRequest.historyLength", request.history_length)?,
            metadata: None,
        })
    }
}

/// Params of `ListTasks` (proto `ListTasksRequest`), new in 1.0: this type
/// is its model, there is no internal counterpart.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a ListTasksRequest object")]
pub struct ListTasksRequest {
    /// The tenant, if the interface sets one.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tenant: String,
    /// Only tasks of this conversation.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "context_id")]
    pub context_id: String,
    /// Only tasks in this state; absent (or `TASK_STATE_UNSPECIFIED`) for all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    /// Tasks per page, 1 to 100; the server's default (50) when absent.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "int32::optional"
    )]
    #[serde(alias = "page_size")]
    pub page_size: Option<i32>,
    /// The cursor from the previous page's `nextPageToken`.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "page_token")]
    pub page_token: String,
    /// At most this many recent history messages per task; 0 means none.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "int32::optional"
    )]
    #[serde(alias = "history_length")]
    pub history_length: Option<i32>,
    /// Only tasks whose status changed after this time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "status_timestamp_after")]
    pub status_timestamp_after: Option<String>,
    /// Whether to include artifacts (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "include_artifacts")]
    pub include_artifacts: Option<bool>,
}

/// Params of `CancelTask` (proto `CancelTaskRequest`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a CancelTaskRequest object")]
pub struct CancelTaskRequest {
    /// The tenant, if the interface sets one.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tenant: String,
    /// The task.
    pub id: TaskId,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl From<a2a::TaskIdParams> for CancelTaskRequest {
    fn from(params: a2a::TaskIdParams) -> Self {
        Self {
            tenant: String::new(),
            id: params.id,
            metadata: params.metadata,
        }
    }
}

impl From<CancelTaskRequest> for a2a::TaskIdParams {
    fn from(request: CancelTaskRequest) -> Self {
        Self {
            id: request.id,
            metadata: request.metadata,
        }
    }
}

/// Params of `SubscribeToTask` (proto `SubscribeToTaskRequest`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a SubscribeToTaskRequest object"
)]
pub struct SubscribeToTaskRequest {
    /// The tenant, if the interface sets one.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tenant: String,
    /// The task.
    pub id: TaskId,
}

impl From<a2a::TaskIdParams> for SubscribeToTaskRequest {
    /// Drops `metadata`, which 1.0 `SubscribeToTaskRequest` has not.
    fn from(params: a2a::TaskIdParams) -> Self {
        Self {
            tenant: String::new(),
            id: params.id,
        }
    }
}

impl From<SubscribeToTaskRequest> for a2a::TaskIdParams {
    fn from(request: SubscribeToTaskRequest) -> Self {
        Self {
            id: request.id,
            metadata: None,
        }
    }
}

/// Params of `GetTaskPushNotificationConfig` (proto
/// `GetTaskPushNotificationConfigRequest`): `id` names the config, where 0.3
/// used it for the task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a GetTaskPushNotificationConfigRequest object"
)]
pub struct GetTaskPushNotificationConfigRequest {
    /// The tenant, if the interface sets one.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tenant: String,
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: TaskId,
    /// The config.
    pub id: String,
}

impl From<a2a::GetTaskPushNotificationConfigParams> for GetTaskPushNotificationConfigRequest {
    /// Drops `metadata`; an absent config id (0.3's "the task's only one")
    /// becomes an empty `id`.
    fn from(params: a2a::GetTaskPushNotificationConfigParams) -> Self {
        Self {
            tenant: String::new(),
            task_id: params.id,
            id: params.push_notification_config_id.unwrap_or_default(),
        }
    }
}

impl From<GetTaskPushNotificationConfigRequest> for a2a::GetTaskPushNotificationConfigParams {
    fn from(request: GetTaskPushNotificationConfigRequest) -> Self {
        Self {
            id: request.task_id,
            push_notification_config_id: some_string(request.id),
            metadata: None,
        }
    }
}

/// Params of `DeleteTaskPushNotificationConfig` (proto
/// `DeleteTaskPushNotificationConfigRequest`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a DeleteTaskPushNotificationConfigRequest object"
)]
pub struct DeleteTaskPushNotificationConfigRequest {
    /// The tenant, if the interface sets one.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tenant: String,
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: TaskId,
    /// The config to remove.
    pub id: String,
}

impl From<a2a::DeleteTaskPushNotificationConfigParams> for DeleteTaskPushNotificationConfigRequest {
    /// Drops `metadata`.
    fn from(params: a2a::DeleteTaskPushNotificationConfigParams) -> Self {
        Self {
            tenant: String::new(),
            task_id: params.id,
            id: params.push_notification_config_id,
        }
    }
}

impl From<DeleteTaskPushNotificationConfigRequest> for a2a::DeleteTaskPushNotificationConfigParams {
    fn from(request: DeleteTaskPushNotificationConfigRequest) -> Self {
        Self {
            id: request.task_id,
            push_notification_config_id: request.id,
            metadata: None,
        }
    }
}

/// Params of `ListTaskPushNotificationConfigs` (proto
/// `ListTaskPushNotificationConfigsRequest`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a ListTaskPushNotificationConfigsRequest object"
)]
pub struct ListTaskPushNotificationConfigsRequest {
    /// The tenant, if the interface sets one.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tenant: String,
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: TaskId,
    /// Configs per page; 0 for the server's choice.
    #[serde(
        default,
        skip_serializing_if = "is_zero",
        deserialize_with = "int32::required"
    )]
    #[serde(alias = "page_size")]
    pub page_size: i32,
    /// The cursor from the previous page.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "page_token")]
    pub page_token: String,
}

impl From<a2a::ListTaskPushNotificationConfigParams> for ListTaskPushNotificationConfigsRequest {
    /// Drops `metadata`.
    fn from(params: a2a::ListTaskPushNotificationConfigParams) -> Self {
        Self {
            tenant: String::new(),
            task_id: params.id,
            page_size: 0,
            page_token: String::new(),
        }
    }
}

impl From<ListTaskPushNotificationConfigsRequest> for a2a::ListTaskPushNotificationConfigParams {
    /// Drops the paging: the internal list is whole.
    fn from(request: ListTaskPushNotificationConfigsRequest) -> Self {
        Self {
            id: request.task_id,
            metadata: None,
        }
    }
}

/// Params of `GetExtendedAgentCard` (proto `GetExtendedAgentCardRequest`).
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a GetExtendedAgentCardRequest object"
)]
pub struct GetExtendedAgentCardRequest {
    /// The tenant, if the interface sets one.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tenant: String,
}
