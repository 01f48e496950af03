//! After a crash, a task that was running ends `failed`, unless its agent opted in to
//! being run again (`AgentDescriptor::rerun_after_restart`): then it runs again with
//! its last message and ends as the agent says.

use agentyard_tests::{PATIENCE, eventually};
use std::sync::Arc;

use agentyard::store::{Retention, SqlTaskStore, StoreLocation, TaskOwner, TaskStore};
use agentyard::{
    Agent, AgentDescriptor, AgentError, ContextId, Message, Runtime, Task, TaskContext, TaskId,
    TaskState, TaskStatus,
};

struct Redo;

impl Agent for Redo {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(format!("did: {text}"));
        Ok(())
    }
}

async fn open(dir: &std::path::Path) -> SqlTaskStore {
    SqlTaskStore::open(
        StoreLocation::Embedded(dir.to_owned()),
        Retention::default(),
    )
    .await
    .expect("the embedded store opens")
}

/// A task left `working` by a process that died, as its store has it.
async fn cut_off(store: &SqlTaskStore, id: &str, agent: &str) {
    let mut task = Task::new(
        TaskId::new(id),
        ContextId::new(format!("c-{id}")),
        TaskStatus::new(TaskState::Submitted),
    );
    let mut message = Message::user_text("again");
    message.task_id = Some(task.id.clone());
    task.history = Some(vec![message.into()]);
    store
        .insert_owned(task, TaskOwner::new(agent, None))
        .await
        .expect("insert");
    store
        .set_status(&TaskId::new(id), TaskStatus::new(TaskState::Working))
        .await
        .expect("working");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opted_in_agent_runs_its_cut_off_task_again_and_the_rest_fail() {
    let dir = std::env::temp_dir().join(format!("agentyard-rerun-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let before = open(&dir).await;
        cut_off(&before, "redo-1", "redo").await;
        cut_off(&before, "plain-1", "plain").await;
        before.close().await;
    }
    let store: Arc<dyn TaskStore> = Arc::new(open(&dir).await);
    let runtime = Runtime::builder()
        .shared_store(Arc::clone(&store))
        .agent(
            AgentDescriptor::new("redo").rerun_after_restart(true),
            |_| Redo,
        )
        .agent(AgentDescriptor::new("plain"), |_| Redo)
        .build()
        .await
        .expect("the runtime starts");
    let recovered = runtime.recover(&*store).await.expect("recover");
    assert_eq!(recovered.rerun, [TaskId::new("redo-1")]);
    assert_eq!(recovered.failed, 1);

    let redone = eventually(PATIENCE, "the task runs again", || {
        let runtime = &runtime;
        async move {
            let task = runtime.get_task(&TaskId::new("redo-1"), None).await.ok()?;
            (task.status.state == TaskState::Completed).then_some(task)
        }
    })
    .await;
    assert_eq!(
        redone
            .status
            .message
            .as_deref()
            .map(Message::text)
            .as_deref(),
        Some("did: again")
    );
    let plain = runtime
        .get_task(&TaskId::new("plain-1"), None)
        .await
        .expect("kept");
    assert_eq!(plain.status.state, TaskState::Failed);
    runtime.shutdown(std::time::Duration::from_secs(1)).await;
    let _ = std::fs::remove_dir_all(&dir);
}
