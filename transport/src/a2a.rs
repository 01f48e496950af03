//! The A2A 0.3.0 data model as serde types.
//!
//! Each type mirrors a definition of the vendored schema
//! (`transport/schema/a2a-v0.3.0.schema.json`, the authority): camelCase
//! field names, optional fields left out when absent, and the `kind`
//! discriminator written on output and checked on input, so a message sent as
//! `"kind": "task"` is an error rather than a silently accepted message.
//!
//! This module knows nothing of HTTP; it could become its own crate.

mod kind;
mod message;
mod task;

pub use message::{
    DataPart, FileContent, FilePart, FileWithBytes, FileWithUri, Message, Part, Role, TextPart,
};
pub use task::{
    Artifact, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

/// Free-form metadata (`metadata` on messages, tasks, parts, ...): any JSON
/// object, keyed by extension.
pub type Metadata = serde_json::Map<String, serde_json::Value>;

#[cfg(test)]
mod tests;
