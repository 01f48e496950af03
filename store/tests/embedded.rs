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

/// The embedded store answers reads of tasks that just settled from memory: a task
/// retention drops in the same transaction it ended in (many sends ending at once,
/// few tasks kept) must not be answered from there afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_retention_drops_as_they_end_are_not_read_back() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = std::sync::Arc::new(
        SqlTaskStore::open(
            StoreLocation::Embedded(dir.path().to_owned()),
            Retention::new(2),
        )
        .await
        .expect("open"),
    );
    let ids: Vec<TaskId> = (0..64).map(|_| TaskId::mint()).collect();
    let mut sends = tokio::task::JoinSet::new();
    for id in ids.clone() {
        let store = std::sync::Arc::clone(&store);
        sends.spawn(async move {
            let task = Task::new(
                id.clone(),
                ContextId::new("c1"),
                TaskStatus::new(TaskState::Working),
            );
            store.insert(task).await.expect("insert");
            store
                .set_status(&id, TaskStatus::new(TaskState::Completed))
                .await
                .expect("complete");
        });
    }
    while let Some(done) = sends.join_next().await {
        done.expect("send");
    }
    let mut kept = 0;
    for id in &ids {
        if store.get(id, Some(0)).await.expect("get").is_some() {
            kept += 1;
        }
    }
    assert_eq!(kept, 2, "retention keeps two ended tasks");
}
