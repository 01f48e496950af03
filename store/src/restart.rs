//! What a server does with its store when it starts again after a stop or a crash.

use agentyard_transport::a2a::{
    Message, Part, Role, StreamEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

use crate::contract::{StoreError, TaskStore};

/// The message a task gets when it was running as the server stopped.
pub const RESTARTED: &str = "the server restarted while this task was running; send it again";

/// What [`recover`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recovered {
    /// Tasks that were running (or queued) and are now `failed`.
    pub failed: usize,
    /// Tasks waiting for input (or auth), left as they were: still answerable.
    pub waiting: usize,
}

/// Ends every task that was running or queued when the process stopped: `failed`,
/// with the message [`RESTARTED`], as a final update in its event log (so a stream
/// that resumes sees the end). Tasks waiting for input or auth stay as they are.
///
/// # Errors
/// The store's, when it cannot be read; a task that ended meanwhile (another process
/// on the same database) is skipped.
pub async fn recover(store: &dyn TaskStore) -> Result<Recovered, StoreError> {
    let mut recovered = Recovered::default();
    for (id, state) in store.unfinished().await? {
        if state.is_interrupted() {
            recovered.waiting += 1;
            continue;
        }
        let mut status = TaskStatus::new(TaskState::Failed);
        let mut message = Message::new(Role::Agent, vec![Part::text(RESTARTED)]);
        message.task_id = Some(id.clone());
        status.message = Some(message);
        let Some(task) = store.get(&id, Some(0)).await? else {
            continue;
        };
        let update = TaskStatusUpdateEvent::new(id.clone(), task.context_id, status.clone(), true);
        match store
            .set_status_logged(&id, status, &StreamEvent::StatusUpdate(update))
            .await
        {
            Ok(_) => recovered.failed += 1,
            Err(StoreError::Terminal { .. } | StoreError::NotFound(_)) => {}
            Err(other) => return Err(other),
        }
    }
    Ok(recovered)
}
