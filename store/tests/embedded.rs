//! What only the embedded store has: a file that outlives the process, and a lock on
//! its directory.

use agentyard_store::{Retention, SqlTaskStore, StoreError, StoreLocation, TaskStore};
use agentyard_transport::a2a::{Task, TaskState, TaskStatus};
use agentyard_transport::{ContextId, TaskId};

async fn open(dir: &std::path::Path) -> Result<SqlTaskStore, StoreError> {
    SqlTaskStore::open(
        StoreLocation::Embedded(dir.to_owned()),
        Retention::default(),
    )
    .await
}

#[tokio::test]
async fn what_was_acknowledged_is_there_after_a_reopen() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let data = dir.path().join("nested").join("data");
    {
        let store = open(&data).await.expect("created on first open");
        let task = Task::new(
            TaskId::new("t1"),
            ContextId::new("c1"),
            TaskStatus::new(TaskState::Submitted),
        );
        store.insert(task).await.expect("insert");
        store
            .set_status(
                &TaskId::new("t1"),
                TaskStatus::new(TaskState::InputRequired),
            )
            .await
            .expect("status");
        store
            .remember_key("k", &TaskId::new("t1"))
            .await
            .expect("key");
        store.close().await;
    }
    let store = open(&data).await.expect("reopen");
    let task = store
        .get(&TaskId::new("t1"), None)
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(task.status.state, TaskState::InputRequired);
    let since = std::time::UNIX_EPOCH;
    assert_eq!(
        store.recall_key("k", since).await.expect("recall"),
        Some(TaskId::new("t1"))
    );
    // Numbers go on past what was stored: a task created now is the most recent.
    let task = Task::new(
        TaskId::new("t2"),
        ContextId::new("c1"),
        TaskStatus::new(TaskState::Submitted),
    );
    store.insert(task).await.expect("insert after reopen");
    let all = |_: &Task, _: Option<&agentyard_store::TaskOwner>| true;
    let page = store.list(&all, 10, None).await.expect("list");
    let ids: Vec<&str> = page.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["t2", "t1"]);
}

#[tokio::test]
async fn a_second_process_on_the_same_directory_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let _first = open(dir.path()).await.expect("first");
    let err = open(dir.path()).await.expect_err("the directory is taken");
    let message = err.to_string();
    assert!(
        message.contains("in use by another agentyard process") && message.contains("--data-dir"),
        "{message}"
    );
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::write(
        dir.path().join("agentyard.db"),
        b"this is not a database, just text!",
    )
    .expect("write");
    let err = open(dir.path()).await.expect_err("corrupt");
    let message = err.to_string();
    assert!(
        message.contains("cannot open the task store at") && message.contains("agentyard.db"),
        "{message}"
    );
}
