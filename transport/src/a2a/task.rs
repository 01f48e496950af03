//! Tasks, their lifecycle, artifacts, and the events that report progress.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::tagged::tagged;
use super::{Message, Metadata, Part, Timestamp};
use crate::ids::{ContextId, TaskId};

/// Where a task is in its lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskState {
    /// Received, not yet started.
    Submitted,
    /// Being worked on.
    Working,
    /// Paused until the client sends more input.
    InputRequired,
    /// Finished successfully (terminal).
    Completed,
    /// Canceled by the client (terminal).
    Canceled,
    /// Finished with an error (terminal).
    Failed,
    /// The agent declined the task (terminal).
    Rejected,
    /// Paused until the client authenticates.
    AuthRequired,
    /// The state cannot be determined.
    Unknown,
}

impl TaskState {
    /// Every state, in the schema's order.
    pub const ALL: [Self; 9] = [
        Self::Submitted,
        Self::Working,
        Self::InputRequired,
        Self::Completed,
        Self::Canceled,
        Self::Failed,
        Self::Rejected,
        Self::AuthRequired,
        Self::Unknown,
    ];

    /// True for the states a task never leaves: completed, canceled, failed,
    /// rejected.
    #[must_use]
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Canceled | Self::Failed | Self::Rejected
        )
    }

    /// True when the task waits on the client: input-required or
    /// auth-required. A blocking `message/send` returns at these states.
    #[must_use]
    pub const fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }

    /// True when the task is done with its current message: it ended, or waits on
    /// the client. A waiting send returns at these states.
    #[must_use]
    pub const fn is_settled(self) -> bool {
        self.is_terminal() || self.is_interrupted()
    }

    /// The state's wire name, e.g. `"input-required"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Submitted => "submitted",
            Self::Working => "working",
            Self::InputRequired => "input-required",
            Self::Completed => "completed",
            Self::Canceled => "canceled",
            Self::Failed => "failed",
            Self::Rejected => "rejected",
            Self::AuthRequired => "auth-required",
            Self::Unknown => "unknown",
        }
    }
}

// Hand-written so the error names the field: serde's derived message
// ("unknown variant `done`") does not say it was the task's `state`.
impl<'de> Deserialize<'de> for TaskState {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Self::ALL
            .into_iter()
            .find(|state| state.as_str() == name)
            .ok_or_else(|| {
                D::Error::custom(format_args!(
                    "invalid task `state` \"{name}\": expected one of submitted, working, \
                     input-required, completed, canceled, failed, rejected, auth-required, unknown"
                ))
            })
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task's state at one point in time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The lifecycle state.
    pub state: TaskState,
    /// A message explaining the state, e.g. the question behind
    /// `input-required`. Shared (`Arc`), as are a task's history and artifacts:
    /// the runtime holds one copy of a message in the task, its status, its event
    /// log and the events it publishes, and copying a task copies no message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Arc<Message>>,
    /// When the status was recorded, as an ISO 8601 string. Kept as text so
    /// whatever a peer sent round-trips unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl TaskStatus {
    /// A status in `state`, stamped with the current UTC time (RFC 3339).
    #[must_use]
    pub fn new(state: TaskState) -> Self {
        Self::at(state, std::time::SystemTime::now())
    }

    /// A status without a message, stamped with `at` (a time the caller read for
    /// something else too, as a new task's id and its first status share one).
    #[must_use]
    pub fn at(state: TaskState, at: std::time::SystemTime) -> Self {
        Self {
            state,
            message: None,
            timestamp: Some(Timestamp::at(at)),
        }
    }

    /// Attaches a message explaining the state.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<Arc<Message>>) -> Self {
        self.message = Some(message.into());
        self
    }
}

tagged! {
    "kind" = "task", wire = TaskWire, expecting = "a Task object";
    /// A stateful unit of work between a client and an agent
    /// (`"kind": "task"`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct Task {
        /// The task's id, minted by the server.
        pub id: TaskId,
        /// The conversation the task belongs to.
        pub context_id: ContextId,
        /// The current status.
        pub status: TaskStatus,
        /// Messages exchanged so far, oldest first (shared, as
        /// [`TaskStatus::message`] is).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub history: Option<Vec<Arc<Message>>>,
        /// Outputs produced so far (shared, as [`TaskStatus::message`] is).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub artifacts: Option<Vec<Arc<Artifact>>>,
        /// Optional metadata for extensions, keyed by extension.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<Metadata>,
    }
}

impl Task {
    /// A task with no history, artifacts or metadata.
    #[must_use]
    pub fn new(id: TaskId, context_id: ContextId, status: TaskStatus) -> Self {
        Self {
            id,
            context_id,
            status,
            history: None,
            artifacts: None,
            metadata: None,
        }
    }
}

/// An output of a task (a document, an image, structured data), made of parts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Unique within its task; chunks of one artifact share it.
    pub artifact_id: String,
    /// A human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The content.
    pub parts: Vec<Part>,
    /// URIs of the extensions relevant to this artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Optional metadata for extensions, keyed by extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl Artifact {
    /// An artifact with only an id and parts.
    pub fn new(artifact_id: impl Into<String>, parts: Vec<Part>) -> Self {
        Self {
            artifact_id: artifact_id.into(),
            name: None,
            description: None,
            parts,
            extensions: None,
            metadata: None,
        }
    }
}

tagged! {
    "kind" = "status-update", wire = TaskStatusUpdateEventWire,
    expecting = "a TaskStatusUpdateEvent object";
    /// A task's status changed (`"kind": "status-update"`), sent on a stream.
    #[derive(Clone, Debug, PartialEq)]
    pub struct TaskStatusUpdateEvent {
        /// The task that changed.
        pub task_id: TaskId,
        /// The task's conversation.
        pub context_id: ContextId,
        /// The new status.
        pub status: TaskStatus,
        /// True on the last event of the stream (wire name `final`).
        #[serde(rename = "final")]
        pub is_final: bool,
        /// Optional metadata for extensions.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<Metadata>,
    }
}

impl TaskStatusUpdateEvent {
    /// An event without metadata.
    #[must_use]
    pub fn new(task_id: TaskId, context_id: ContextId, status: TaskStatus, is_final: bool) -> Self {
        Self {
            task_id,
            context_id,
            status,
            is_final,
            metadata: None,
        }
    }
}

tagged! {
    "kind" = "artifact-update", wire = TaskArtifactUpdateEventWire,
    expecting = "a TaskArtifactUpdateEvent object";
    /// An artifact was produced or extended (`"kind": "artifact-update"`),
    /// sent on a stream.
    #[derive(Clone, Debug, PartialEq)]
    pub struct TaskArtifactUpdateEvent {
        /// The task the artifact belongs to.
        pub task_id: TaskId,
        /// The task's conversation.
        pub context_id: ContextId,
        /// The artifact, or the next chunk of it.
        pub artifact: Arc<Artifact>,
        /// True when these parts extend an artifact sent earlier with the
        /// same id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub append: Option<bool>,
        /// True on the artifact's last chunk.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub last_chunk: Option<bool>,
        /// Optional metadata for extensions.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<Metadata>,
    }
}

impl TaskArtifactUpdateEvent {
    /// A whole (non-chunked) artifact: `append` and `lastChunk` absent.
    #[must_use]
    pub fn new(task_id: TaskId, context_id: ContextId, artifact: impl Into<Arc<Artifact>>) -> Self {
        Self {
            task_id,
            context_id,
            artifact: artifact.into(),
            append: None,
            last_chunk: None,
            metadata: None,
        }
    }
}
