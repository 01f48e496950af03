//! 1.0 tasks, their status, artifacts and the two update events.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::convert::{
    ConversionError, is_empty, is_false, proto_enum, some_string, some_true, some_vec,
};
use super::{Message, Part};
use crate::a2a::{self, Metadata};
use crate::ids::{ContextId, TaskId};

proto_enum! {
    /// Where a task is in its lifecycle (proto `TaskState`).
    pub enum TaskState ("TaskState") {
        /// `TASK_STATE_UNSPECIFIED`: the internal `unknown`.
        Unspecified = 0 => "TASK_STATE_UNSPECIFIED",
        /// `TASK_STATE_SUBMITTED`.
        Submitted = 1 => "TASK_STATE_SUBMITTED",
        /// `TASK_STATE_WORKING`.
        Working = 2 => "TASK_STATE_WORKING",
        /// `TASK_STATE_COMPLETED` (terminal).
        Completed = 3 => "TASK_STATE_COMPLETED",
        /// `TASK_STATE_FAILED` (terminal).
        Failed = 4 => "TASK_STATE_FAILED",
        /// `TASK_STATE_CANCELED` (terminal).
        Canceled = 5 => "TASK_STATE_CANCELED",
        /// `TASK_STATE_INPUT_REQUIRED` (interrupted).
        InputRequired = 6 => "TASK_STATE_INPUT_REQUIRED",
        /// `TASK_STATE_REJECTED` (terminal).
        Rejected = 7 => "TASK_STATE_REJECTED",
        /// `TASK_STATE_AUTH_REQUIRED` (interrupted).
        AuthRequired = 8 => "TASK_STATE_AUTH_REQUIRED",
    }
}

impl From<a2a::TaskState> for TaskState {
    fn from(state: a2a::TaskState) -> Self {
        match state {
            a2a::TaskState::Submitted => Self::Submitted,
            a2a::TaskState::Working => Self::Working,
            a2a::TaskState::InputRequired => Self::InputRequired,
            a2a::TaskState::Completed => Self::Completed,
            a2a::TaskState::Canceled => Self::Canceled,
            a2a::TaskState::Failed => Self::Failed,
            a2a::TaskState::Rejected => Self::Rejected,
            a2a::TaskState::AuthRequired => Self::AuthRequired,
            a2a::TaskState::Unknown => Self::Unspecified,
        }
    }
}

impl From<TaskState> for a2a::TaskState {
    fn from(state: TaskState) -> Self {
        match state {
            TaskState::Submitted => Self::Submitted,
            TaskState::Working => Self::Working,
            TaskState::InputRequired => Self::InputRequired,
            TaskState::Completed => Self::Completed,
            TaskState::Canceled => Self::Canceled,
            TaskState::Failed => Self::Failed,
            TaskState::Rejected => Self::Rejected,
            TaskState::AuthRequired => Self::AuthRequired,
            TaskState::Unspecified => Self::Unknown,
        }
    }
}

/// A task's state at one point in time (proto `TaskStatus`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a TaskStatus object")]
pub struct TaskStatus {
    /// The lifecycle state.
    pub state: TaskState,
    /// A message explaining the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When the status was recorded, RFC 3339; passed through unchecked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<a2a::Timestamp>,
}

impl From<a2a::TaskStatus> for TaskStatus {
    fn from(status: a2a::TaskStatus) -> Self {
        Self {
            state: status.state.into(),
            message: status.message.map(Message::from),
            timestamp: status.timestamp,
        }
    }
}

impl TryFrom<TaskStatus> for a2a::TaskStatus {
    type Error = ConversionError;

    fn try_from(status: TaskStatus) -> Result<Self, ConversionError> {
        Ok(Self {
            state: status.state.into(),
            message: status
                .message
                .map(|message| a2a::Message::try_from(message).map(Arc::new))
                .transpose()?,
            timestamp: status.timestamp,
        })
    }
}

/// A stateful unit of work (proto `Task`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a Task object")]
pub struct Task {
    /// The task's id.
    pub id: TaskId,
    /// The conversation; not marked required in the proto, but 0.3 needs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "context_id")]
    pub context_id: Option<ContextId>,
    /// The current status.
    pub status: TaskStatus,
    /// Outputs produced so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// Messages exchanged so far, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl From<a2a::Task> for Task {
    fn from(task: a2a::Task) -> Self {
        Self {
            id: task.id,
            context_id: Some(task.context_id),
            status: task.status.into(),
            artifacts: task
                .artifacts
                .unwrap_or_default()
                .into_iter()
                .map(Artifact::from)
                .collect(),
            history: task
                .history
                .unwrap_or_default()
                .into_iter()
                .map(Message::from)
                .collect(),
            metadata: task.metadata,
        }
    }
}

impl TryFrom<Task> for a2a::Task {
    type Error = ConversionError;

    fn try_from(task: Task) -> Result<Self, ConversionError> {
        let context_id = task
            .context_id
            .ok_or_else(|| ConversionError::new("Task.contextId", "missing; 0.3 requires it"))?;
        let history = task
            .history
            .into_iter()
            .map(|message| a2a::Message::try_from(message).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            id: task.id,
            context_id,
            status: task.status.try_into()?,
            history: some_vec(history),
            artifacts: some_vec(
                task.artifacts
                    .into_iter()
                    .map(|artifact| Arc::new(a2a::Artifact::from(artifact)))
                    .collect(),
            ),
            metadata: task.metadata,
        })
    }
}

/// An output of a task (proto `Artifact`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an Artifact object")]
pub struct Artifact {
    /// Unique within its task; chunks of one artifact share it.
    #[serde(alias = "artifact_id")]
    pub artifact_id: String,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub name: String,
    /// A human-readable description.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub description: String,
    /// The content.
    pub parts: Vec<Part>,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// URIs of the extensions relevant to this artifact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
}

/// A shared artifact: moved out when this was its last holder, else copied.
impl From<Arc<a2a::Artifact>> for Artifact {
    fn from(artifact: Arc<a2a::Artifact>) -> Self {
        Arc::unwrap_or_clone(artifact).into()
    }
}

impl From<a2a::Artifact> for Artifact {
    fn from(artifact: a2a::Artifact) -> Self {
        Self {
            artifact_id: artifact.artifact_id,
            name: artifact.name.unwrap_or_default(),
            description: artifact.description.unwrap_or_default(),
            parts: artifact.parts.into_iter().map(Part::from).collect(),
            metadata: artifact.metadata,
            extensions: artifact.extensions.unwrap_or_default(),
        }
    }
}

impl From<Artifact> for a2a::Artifact {
    fn from(artifact: Artifact) -> Self {
        Self {
            artifact_id: artifact.artifact_id,
            name: some_string(artifact.name),
            description: some_string(artifact.description),
            parts: artifact.parts.into_iter().map(a2a::Part::from).collect(),
            extensions: some_vec(artifact.extensions),
            metadata: artifact.metadata,
        }
    }
}

/// A task's status changed (proto `TaskStatusUpdateEvent`). 1.0 has no
/// `final`: the stream closes on a terminal or interrupted state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a TaskStatusUpdateEvent object")]
pub struct TaskStatusUpdateEvent {
    /// The task that changed.
    #[serde(alias = "task_id")]
    pub task_id: TaskId,
    /// The task's conversation.
    #[serde(alias = "context_id")]
    pub context_id: ContextId,
    /// The new status.
    pub status: TaskStatus,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl From<a2a::TaskStatusUpdateEvent> for TaskStatusUpdateEvent {
    /// Drops `final`, which 1.0 does not carry.
    fn from(event: a2a::TaskStatusUpdateEvent) -> Self {
        Self {
            task_id: event.task_id,
            context_id: event.context_id,
            status: event.status.into(),
            metadata: event.metadata,
        }
    }
}

impl TryFrom<TaskStatusUpdateEvent> for a2a::TaskStatusUpdateEvent {
    type Error = ConversionError;

    /// Sets `final` on terminal and interrupted states: a 1.0 stream closes
    /// at both (the SDKs' compat layers mark terminal states only, which
    /// would leave a 0.3 reader waiting on a stream that has ended).
    fn try_from(event: TaskStatusUpdateEvent) -> Result<Self, ConversionError> {
        let status = a2a::TaskStatus::try_from(event.status)?;
        let is_final = status.state.is_terminal() || status.state.is_interrupted();
        Ok(Self {
            task_id: event.task_id,
            context_id: event.context_id,
            status,
            is_final,
            metadata: event.metadata,
        })
    }
}

/// An artifact was produced or extended (proto `TaskArtifactUpdateEvent`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a TaskArtifactUpdateEvent object"
)]
pub struct TaskArtifactUpdateEvent {
    /// The task the artifact belongs to.
    #[serde(alias = "task_id")]
    pub task_id: TaskId,
    /// The task's conversation.
    #[serde(alias = "context_id")]
    pub context_id: ContextId,
    /// The artifact, or the next chunk of it.
    pub artifact: Artifact,
    /// True when these parts extend an artifact sent earlier.
    #[serde(default, skip_serializing_if = "is_false")]
    pub append: bool,
    /// True on the artifact's last chunk.
    #[serde(default, skip_serializing_if = "is_false")]
    #[serde(alias = "last_chunk")]
    pub last_chunk: bool,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl From<a2a::TaskArtifactUpdateEvent> for TaskArtifactUpdateEvent {
    fn from(event: a2a::TaskArtifactUpdateEvent) -> Self {
        Self {
            task_id: event.task_id,
            context_id: event.context_id,
            artifact: event.artifact.into(),
            append: event.append.unwrap_or(false),
            last_chunk: event.last_chunk.unwrap_or(false),
            metadata: event.metadata,
        }
    }
}

impl From<TaskArtifactUpdateEvent> for a2a::TaskArtifactUpdateEvent {
    fn from(event: TaskArtifactUpdateEvent) -> Self {
        Self {
            task_id: event.task_id,
            context_id: event.context_id,
            artifact: Arc::new(event.artifact.into()),
            append: some_true(event.append),
            last_chunk: some_true(event.last_chunk),
            metadata: event.metadata,
        }
    }
}
