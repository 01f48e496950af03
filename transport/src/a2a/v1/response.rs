//! 1.0 results: the `SendMessageResponse` and `StreamResponse` wrappers
//! (oneofs, written as the member present) and the two list responses.

use serde::{Deserialize, Serialize};

use super::convert::{ConversionError, int32, is_empty};
use super::{
    Message, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig, TaskStatusUpdateEvent,
};
use crate::a2a;

/// The result of `SendMessage` (proto `SendMessageResponse`):
/// `{"task": …}` or `{"message": …}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// `task`: the task the message started or continued.
    Task(Task),
    /// `message`: a direct reply without a task.
    Message(Message),
}

/// One event of `SendStreamingMessage` or `SubscribeToTask` (proto
/// `StreamResponse`): exactly one of `task`, `message`, `statusUpdate`,
/// `artifactUpdate`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// `task`: the task as it stands, usually first.
    Task(Task),
    /// `message`: a message from the agent.
    Message(Message),
    /// `statusUpdate`.
    StatusUpdate(TaskStatusUpdateEvent),
    /// `artifactUpdate`.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

// Both wrappers read through one struct of optional members, so unknown
// members are ignored (a derived enum would refuse them) and the error for
// zero or several members names the oneof.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PayloadWire {
    #[serde(default)]
    task: Option<Task>,
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    #[serde(alias = "status_update")]
    status_update: Option<TaskStatusUpdateEvent>,
    #[serde(default)]
    #[serde(alias = "artifact_update")]
    artifact_update: Option<TaskArtifactUpdateEvent>,
}

impl<'de> Deserialize<'de> for SendMessageResponse {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let wire = PayloadWire::deserialize(deserializer)?;
        if wire.status_update.is_some() || wire.artifact_update.is_some() {
            return Err(D::Error::custom(
                "a SendMessageResponse holds `task` or `message`, not a stream event",
            ));
        }
        match (wire.task, wire.message) {
            (Some(task), None) => Ok(Self::Task(task)),
            (None, Some(message)) => Ok(Self::Message(message)),
            (Some(_), Some(_)) => Err(D::Error::custom(
                "a SendMessageResponse holds `task` or `message`, not both",
            )),
            (None, None) => Err(D::Error::custom(
                "a SendMessageResponse needs `task` or `message`: neither is present",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for StreamResponse {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let wire = PayloadWire::deserialize(deserializer)?;
        let mut found = [
            wire.task.map(Self::Task),
            wire.message.map(Self::Message),
            wire.status_update.map(Self::StatusUpdate),
            wire.artifact_update.map(Self::ArtifactUpdate),
        ]
        .into_iter()
        .flatten();
        let payload = found.next().ok_or_else(|| {
            D::Error::custom(
                "a StreamResponse needs one of `task`, `message`, `statusUpdate` or \
                 `artifactUpdate`: none is present",
            )
        })?;
        if found.next().is_some() {
            return Err(D::Error::custom(
                "a StreamResponse holds one of `task`, `message`, `statusUpdate` or \
                 `artifactUpdate`, not several",
            ));
        }
        Ok(payload)
    }
}

impl From<a2a::SendMessageResult> for SendMessageResponse {
    fn from(result: a2a::SendMessageResult) -> Self {
        match result {
            a2a::SendMessageResult::Task(task) => Self::Task(task.into()),
            a2a::SendMessageResult::Message(message) => Self::Message(message.into()),
        }
    }
}

impl TryFrom<SendMessageResponse> for a2a::SendMessageResult {
    type Error = ConversionError;

    fn try_from(response: SendMessageResponse) -> Result<Self, ConversionError> {
        Ok(match response {
            SendMessageResponse::Task(task) => Self::Task(task.try_into()?),
            SendMessageResponse::Message(message) => Self::Message(message.try_into()?),
        })
    }
}

impl From<a2a::StreamEvent> for StreamResponse {
    /// Drops `final` of a status update (see [`TaskStatusUpdateEvent`]).
    fn from(event: a2a::StreamEvent) -> Self {
        match event {
            a2a::StreamEvent::Task(task) => Self::Task(task.into()),
            a2a::StreamEvent::Message(message) => Self::Message(message.into()),
            a2a::StreamEvent::StatusUpdate(event) => Self::StatusUpdate(event.into()),
            a2a::StreamEvent::ArtifactUpdate(event) => Self::ArtifactUpdate(event.into()),
        }
    }
}

impl TryFrom<StreamResponse> for a2a::StreamEvent {
    type Error = ConversionError;

    fn try_from(response: StreamResponse) -> Result<Self, ConversionError> {
        Ok(match response {
            StreamResponse::Task(task) => Self::Task(task.try_into()?),
            StreamResponse::Message(message) => Self::Message(message.try_into()?),
            StreamResponse::StatusUpdate(event) => Self::StatusUpdate(event.try_into()?),
            StreamResponse::ArtifactUpdate(event) => Self::ArtifactUpdate(event.into()),
        })
    }
}

impl From<SendMessageResponse> for StreamResponse {
    /// The first event of a stream is the task or message a send answers with.
    fn from(response: SendMessageResponse) -> Self {
        match response {
            SendMessageResponse::Task(task) => Self::Task(task),
            SendMessageResponse::Message(message) => Self::Message(message),
        }
    }
}

/// The result of `ListTasks` (proto `ListTasksResponse`); every member is
/// required, so each is always written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a ListTasksResponse object")]
pub struct ListTasksResponse {
    /// This page of tasks.
    #[serde(default)]
    pub tasks: Vec<Task>,
    /// The cursor of the next page; empty on the last page.
    #[serde(default)]
    #[serde(alias = "next_page_token")]
    pub next_page_token: String,
    /// The page size used.
    #[serde(default, deserialize_with = "int32::required")]
    #[serde(alias = "page_size")]
    pub page_size: i32,
    /// How many tasks match the filters, over all pages.
    #[serde(default, deserialize_with = "int32::required")]
    #[serde(alias = "total_size")]
    pub total_size: i32,
}

/// The result of `ListTaskPushNotificationConfigs` (proto
/// `ListTaskPushNotificationConfigsResponse`).
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a ListTaskPushNotificationConfigsResponse object"
)]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The configs of this page.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// The cursor of the next page; empty on the last page.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "next_page_token")]
    pub next_page_token: String,
}

impl From<Vec<a2a::TaskPushNotificationConfig>> for ListTaskPushNotificationConfigsResponse {
    /// The whole internal list as one page.
    fn from(configs: Vec<a2a::TaskPushNotificationConfig>) -> Self {
        Self {
            configs: configs.into_iter().map(Into::into).collect(),
            next_page_token: String::new(),
        }
    }
}

impl TryFrom<ListTaskPushNotificationConfigsResponse> for Vec<a2a::TaskPushNotificationConfig> {
    type Error = ConversionError;

    /// Drops `nextPageToken`: the caller pages.
    fn try_from(
        response: ListTaskPushNotificationConfigsResponse,
    ) -> Result<Self, ConversionError> {
        response
            .configs
            .into_iter()
            .map(TryInto::try_into)
            .collect()
    }
}

/// The result of `DeleteTaskPushNotificationConfig` (`google.protobuf.Empty`):
/// `{}` on the wire, where 0.3 answers `null`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(expecting = "an empty object")]
pub struct Empty {}
