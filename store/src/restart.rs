//! What a server does with its store when it starts again after a stop or a crash.

use agentyard_transport::a2a::{Message, Part, Role, TaskState, TaskStatus, TaskStatusUpdateEvent};

use agentyard_transport::TaskId;

use crate::contract::{StoreError, TaskOwner, TaskStore};

/// The message a task gets when it was running as the server stopped.
pub const RESTARTED: &str = "the server restarted while this task was running; send it again";

/// The message a task gets when it was running as the server stopped and its agent
/// runs it again.
pub const RERUN: &str = "the server restarted while this task was running; running it again";

/// What [`recover`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recovered {
    /// Tasks that were running (or queued) and are now `failed`.
    pub failed: usize,
    /// Tasks waiting for input (or auth), left as they were: still answerable.
    pub waiting: usize,
    /// Tasks that were running and whose agent runs them again
    /// ([`recover_with`]): each now waits for input, to be continued with its last
    /// message by the caller.
    pub rerun: Vec<TaskId>,
}

/// Ends every task that was running or queued when the process stopped: `failed`,
/// with the message [`RESTARTED`], as a final update in its event log (so a stream
/// that resumes sees the end). Tasks waiting for input or auth stay as they are.
///
/// # Errors
/// The store's, when it cannot be read; a task that ended meanwhile (another process
/// on the same database) is skipped.
pub async fn recover(store: &dyn TaskStore) -> Result<Recovered, StoreError> {
    recover_with(store, &|_| false).await
}

/// [`recover`], except that a running task whose owner `rerun` accepts (its agent opted
/// in) is not failed: it is moved to `input-required` with the message [`RERUN`] (a
/// final update in its log) and listed in [`Recovered::rerun`], for the runtime to
/// continue with its last message.
///
/// # Errors
/// As [`recover`].
pub async fn recover_with(
    store: &dyn TaskStore,
    rerun: &(dyn Fn(&TaskOwner) -> bool + Sync),
) -> Result<Recovered, StoreError> {
    let mut recovered = Recovered::default();
    for (id, state) in store.unfinished().await? {
        if state.is_interrupted() {
            recovered.waiting += 1;
            continue;
        }
        let again = store.owner(&id).await?.is_some_and(|owner| rerun(&owner));
        let (state, text) = if again {
            (TaskState::InputRequired, RERUN)
        } else {
            (TaskState::Failed, RESTARTED)
        };
        let mut status = TaskStatus::new(state);
        let mut message = Message::new(Role::Agent, vec![Part::text(text)]);
        message.task_id = Some(id.clone());
        status.message = Some(message.into());
        let Some(task) = store.get(&id, Some(0)).await? else {
            continue;
        };
        let update = TaskStatusUpdateEvent::new(id.clone(), task.context_id, status, true);
        match store.set_status_logged(&id, update).await {
            Ok(_) if again => recovered.rerun.push(id),
            Ok(_) => recovered.failed += 1,
            Err(StoreError::Terminal { .. } | StoreError::NotFound(_)) => {}
            Err(other) => return Err(other),
        }
    }
    Ok(recovered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InMemoryTaskStore;
    use agentyard_transport::ContextId;
    use agentyard_transport::a2a::Task;

    async fn running(store: &InMemoryTaskStore, id: &str, agent: &str, state: TaskState) {
        let task = Task::new(TaskId::new(id), ContextId::new("c"), TaskStatus::new(state));
        store
            .insert_owned(task, TaskOwner::new(agent, None))
            .await
            .expect("insert");
    }

    #[tokio::test]
    async fn running_tasks_fail_unless_their_agent_runs_them_again() {
        let store = InMemoryTaskStore::new();
        running(&store, "w", "plain", TaskState::Working).await;
        running(&store, "q", "plain", TaskState::Submitted).await;
        running(&store, "r", "again", TaskState::Working).await;
        running(&store, "i", "plain", TaskState::InputRequired).await;
        let recovered = recover_with(&store, &|owner: &TaskOwner| &*owner.agent == "again")
            .await
            .expect("recover");
        assert_eq!(recovered.failed, 2);
        assert_eq!(recovered.waiting, 1);
        assert_eq!(recovered.rerun, [TaskId::new("r")]);
        let state = |id: &'static str| {
            let store = &store;
            async move {
                store
                    .get(&TaskId::new(id), Some(0))
                    .await
                    .expect("get")
                    .expect("task")
                    .status
            }
        };
        assert_eq!(state("w").await.state, TaskState::Failed);
        assert_eq!(state("q").await.state, TaskState::Failed);
        assert_eq!(state("i").await.state, TaskState::InputRequired);
        let rerun = state("r").await;
        assert_eq!(rerun.state, TaskState::InputRequired);
        assert_eq!(rerun.message.map(|m| m.text()).as_deref(), Some(RERUN));
        // Each change is the final update of its task's log, for resuming streams.
        let log = store.events_after(&TaskId::new("w"), 0).await.expect("log");
        assert!(log.last().is_some_and(|(_, event)| event.is_final()));
    }
}
