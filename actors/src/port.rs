//! What the work of a task reaches of the runtime, as a trait: the store, the event
//! bus, the live-task table, two settings, the warm set, and sends. The agent's
//! [`TaskContext`](crate::TaskContext) and the work that runs it hold a `dyn Port`,
//! not the supervisor, so the modules below the supervisor point one way (the
//! supervisor implements this trait; nothing here imports it) and can be tested
//! with a port of their own.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use agentyard_transport::TaskId;
use agentyard_transport::a2a::TaskStatus;

use crate::error::Result;
use crate::events::EventBus;
use crate::live::LiveTasks;
use crate::occupancy::SessionShared;
use crate::send::{SendRequest, SessionKey, Settled, Submitted};
use crate::store::{StoreError, TaskStore};

#[cfg(test)]
pub(crate) mod tests;

/// A boxed, sendable future: what a `dyn` trait method returns.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The runtime as the work of one task sees it.
pub(crate) trait Port: std::fmt::Debug + Send + Sync + 'static {
    /// Where tasks are recorded.
    fn store(&self) -> &dyn TaskStore;
    /// Where runtime events go.
    fn events(&self) -> &EventBus;
    /// The tasks that have not ended.
    fn live(&self) -> &LiveTasks;
    /// How many earlier messages of its conversation an agent sees.
    fn history_depth(&self) -> usize;
    /// How long a canceled handler may run on before it is dropped.
    fn cancel_grace(&self) -> Duration;
    /// Offers a session that may have become idle to the warm set.
    fn settled(&self, key: &SessionKey, session: &Arc<SessionShared>);
    /// Sends through the runtime's one send path (policy, idempotency, limits).
    fn send(&self, request: SendRequest) -> BoxFuture<'_, Result<Submitted>>;
    /// Sends and waits for the task to settle, through the same path.
    fn send_and_wait(&self, request: SendRequest) -> BoxFuture<'_, Result<Settled>>;
}

/// Moves a task to a terminal or interrupted status, publishes it as the turn's
/// final update, and offers an ended task's session to the warm set. Does nothing if
/// the task has already ended (a cancel or a shutdown won the race).
///
/// # Errors
/// [`StoreError::Terminal`] if the store had already ended the task.
pub(crate) async fn finish_task(
    port: &dyn Port,
    task_id: &TaskId,
    status: TaskStatus,
) -> std::result::Result<(), StoreError> {
    let ended = match port
        .live()
        .finish(port.store(), port.events(), task_id, status)
        .await
    {
        Ok(ended) => ended,
        Err(error) => {
            if let Some((key, session)) = port.live().end_unstored(port.events(), task_id, &error) {
                port.settled(&key, &session);
            }
            return Err(error);
        }
    };
    if let Some((key, session)) = ended {
        port.settled(&key, &session);
    }
    Ok(())
}
