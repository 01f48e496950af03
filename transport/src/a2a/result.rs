//! What `message/send` and `message/stream` answer with.

use serde::{Deserialize, Serialize};

use super::tagged::{from_object, take_tag};
use super::{Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
use crate::ids::{ContextId, TaskId};

/// The result of `message/send`: the task the message started or continued,
/// or a direct reply when the agent answers without a task. Told apart by
/// `kind`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SendMessageResult {
    /// `"kind": "task"`.
    Task(Task),
    /// `"kind": "message"`.
    Message(Message),
}

impl<'de> Deserialize<'de> for SendMessageResult {
    fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        let (kind, object) = take_tag(deserializer, "kind", &["task", "message"])?;
        if kind == "task" {
            from_object(object).map(Self::Task)
        } else {
            from_object(object).map(Self::Message)
        }
    }
}

impl From<Task> for SendMessageResult {
    fn from(task: Task) -> Self {
        Self::Task(task)
    }
}

impl From<Message> for SendMessageResult {
    fn from(message: Message) -> Self {
        Self::Message(message)
    }
}

/// One event of a `message/stream` or `tasks/resubscribe` stream (the
/// `result` of each SSE `data:` line), told apart by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum StreamEvent {
    /// `"kind": "task"`: the task as it stands, usually first.
    Task(Task),
    /// `"kind": "message"`: a message from the agent.
    Message(Message),
    /// `"kind": "status-update"`.
    StatusUpdate(TaskStatusUpdateEvent),
    /// `"kind": "artifact-update"`.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl StreamEvent {
    /// True for the status update marked `final`, after which the stream
    /// closes.
    #[must_use]
    pub fn is_final(&self) -> bool {
        matches!(self, Self::StatusUpdate(event) if event.is_final)
    }

    /// The task the event is about, when it names one (a message may not).
    #[must_use]
    pub fn task_id(&self) -> Option<&TaskId> {
        match self {
            Self::Task(task) => Some(&task.id),
            Self::Message(message) => message.task_id.as_ref(),
            Self::StatusUpdate(event) => Some(&event.task_id),
            Self::ArtifactUpdate(event) => Some(&event.task_id),
        }
    }

    /// The conversation the event belongs to, when it names one.
    #[must_use]
    pub fn context_id(&self) -> Option<&ContextId> {
        match self {
            Self::Task(task) => Some(&task.context_id),
            Self::Message(message) => message.context_id.as_ref(),
            Self::StatusUpdate(event) => Some(&event.context_id),
            Self::ArtifactUpdate(event) => Some(&event.context_id),
        }
    }
}

impl<'de> Deserialize<'de> for StreamEvent {
    fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        let (kind, object) = take_tag(
            deserializer,
            "kind",
            &["task", "message", "status-update", "artifact-update"],
        )?;
        match kind.as_str() {
            "task" => from_object(object).map(Self::Task),
            "message" => from_object(object).map(Self::Message),
            "status-update" => from_object(object).map(Self::StatusUpdate),
            _ => from_object(object).map(Self::ArtifactUpdate),
        }
    }
}

impl From<SendMessageResult> for StreamEvent {
    fn from(result: SendMessageResult) -> Self {
        match result {
            SendMessageResult::Task(task) => Self::Task(task),
            SendMessageResult::Message(message) => Self::Message(message),
        }
    }
}

impl From<Task> for StreamEvent {
    fn from(task: Task) -> Self {
        Self::Task(task)
    }
}

impl From<Message> for StreamEvent {
    fn from(message: Message) -> Self {
        Self::Message(message)
    }
}

impl From<TaskStatusUpdateEvent> for StreamEvent {
    fn from(event: TaskStatusUpdateEvent) -> Self {
        Self::StatusUpdate(event)
    }
}

impl From<TaskArtifactUpdateEvent> for StreamEvent {
    fn from(event: TaskArtifactUpdateEvent) -> Self {
        Self::ArtifactUpdate(event)
    }
}
