//! Where tasks live: the [`TaskStore`] contract and its stores, from
//! `agentyard-store`, re-exported here so that callers of this crate see one path.

pub use agentyard_store::data_dir;
pub use agentyard_store::{
    InMemoryTaskStore, JournalTaskStore, Record, Retention, SqlTaskStore, StoreError,
    StoreLocation, TaskFilter, TaskOwner, TaskPage, TaskStore,
};

/// The runtime's most frequent store calls, each made on the in-memory store at once
/// ([`TaskStore::in_memory`]) and on any other store through its async call. A call
/// through a `dyn TaskStore` boxes its future; a send makes six or more of these.
///
/// The calls that take a task or a status are not `async fn`s: such a future holds
/// its arguments until first polled, and every send future that awaits one would
/// carry those bytes in each of its moves; these hand them to the store, or to its
/// boxed call, when called. The reads stay `async fn`s, whose futures hold only
/// references where a ready answer would hold the task.
pub(crate) mod at_once {
    use std::future::{Future, ready};
    use std::sync::Arc;

    use futures::future::Either;

    use agentyard_transport::a2a::{
        Artifact, Message, StreamEvent, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
    };
    use agentyard_transport::{ContextId, TaskId};

    use super::{StoreError, TaskOwner, TaskStore};

    /// [`TaskStore::insert_owned`], or its `_unanswered` form when `answered` is not.
    pub(crate) fn insert_owned(
        store: &dyn TaskStore,
        task: Task,
        owner: TaskOwner,
        answered: bool,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + '_ {
        match store.in_memory() {
            Some(memory) => Either::Left(ready(memory.insert_owned_now(task, owner))),
            None if answered => Either::Right(store.insert_owned(task, owner)),
            None => Either::Right(store.insert_owned_unanswered(task, owner)),
        }
    }

    /// [`TaskStore::context_principal`].
    pub(crate) async fn context_principal(
        store: &dyn TaskStore,
        context_id: &ContextId,
    ) -> Result<Option<Arc<str>>, StoreError> {
        match store.in_memory() {
            Some(memory) => Ok(memory.context_principal_now(context_id)),
            None => store.context_principal(context_id).await,
        }
    }

    /// [`TaskStore::get`]. An `async fn`: its answer is a task, which a ready future
    /// would hold.
    pub(crate) async fn get(
        store: &dyn TaskStore,
        id: &TaskId,
        history_length: Option<usize>,
    ) -> Result<Option<Task>, StoreError> {
        match store.in_memory() {
            Some(memory) => Ok(memory.get_now(id, history_length)),
            None => store.get(id, history_length).await,
        }
    }

    /// [`TaskStore::set_status`].
    pub(crate) fn set_status<'a>(
        store: &'a dyn TaskStore,
        id: &'a TaskId,
        status: TaskStatus,
    ) -> impl Future<Output = Result<TaskState, StoreError>> + Send + 'a {
        match store.in_memory() {
            Some(memory) => Either::Left(ready(memory.set_status_now(id, status))),
            None => Either::Right(store.set_status(id, status)),
        }
    }

    /// [`TaskStore::set_status_logged`].
    pub(crate) fn set_status_logged<'a>(
        store: &'a dyn TaskStore,
        id: &'a TaskId,
        update: TaskStatusUpdateEvent,
    ) -> impl Future<Output = Result<(TaskState, Option<u64>), StoreError>> + Send + 'a {
        match store.in_memory() {
            Some(memory) => Either::Left(ready(memory.set_status_logged_now(id, update))),
            None => Either::Right(store.set_status_logged(id, update)),
        }
    }

    /// [`TaskStore::set_status_logged`], then the task as the write left it
    /// ([`TaskStore::get`], the whole history; `None` if that read failed): one lookup
    /// on the in-memory store.
    pub(crate) fn set_status_logged_read<'a>(
        store: &'a dyn TaskStore,
        id: &'a TaskId,
        update: TaskStatusUpdateEvent,
    ) -> impl Future<Output = Result<(TaskState, Option<u64>, Option<Task>), StoreError>> + Send + 'a
    {
        match store.in_memory() {
            Some(memory) => Either::Left(ready(
                memory
                    .set_status_logged_read_now(id, update)
                    .map(|(previous, seq, task)| (previous, seq, Some(task))),
            )),
            None => Either::Right(async move {
                let (previous, seq) = store.set_status_logged(id, update).await?;
                Ok((previous, seq, store.get(id, None).await.ok().flatten()))
            }),
        }
    }

    /// [`TaskStore::append_history_unanswered`].
    pub(crate) async fn append_history_unanswered(
        store: &dyn TaskStore,
        id: &TaskId,
        message: Arc<Message>,
    ) -> Result<(), StoreError> {
        match store.in_memory() {
            Some(memory) => memory.append_history_now(id, message),
            None => store.append_history_unanswered(id, message).await,
        }
    }

    /// [`TaskStore::put_artifact_logged`].
    pub(crate) async fn put_artifact_logged(
        store: &dyn TaskStore,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
        event: &StreamEvent,
    ) -> Result<(Arc<Artifact>, Option<u64>), StoreError> {
        match store.in_memory() {
            Some(memory) => memory.put_artifact_logged_now(id, artifact, append, event),
            None => store.put_artifact_logged(id, artifact, append, event).await,
        }
    }
}
