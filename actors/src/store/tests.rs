use super::*;
use agentyard_transport::a2a::{Part, Role};

fn task(id: &str, context: &str) -> Task {
    Task::new(
        TaskId::new(id),
        ContextId::new(context),
        TaskStatus::new(TaskState::Submitted),
    )
}

fn message(text: &str) -> Message {
    Message::new(Role::User, vec![Part::text(text)])
}

#[tokio::test]
async fn insert_refuses_a_taken_id() {
    let store = InMemoryTaskStore::new();
    store.insert(task("t1", "c1")).await.expect("first insert");
    let err = store.insert(task("t1", "c1")).await.expect_err("duplicate");
    assert!(matches!(err, StoreError::AlreadyExists(id) if id.as_str() == "t1"));
}

#[tokio::test]
async fn a_terminal_task_never_changes_state_again() {
    let store = InMemoryTaskStore::new();
    store.insert(task("t1", "c1")).await.expect("insert");
    let id = TaskId::new("t1");
    let before = store
        .set_status(&id, TaskStatus::new(TaskState::Completed))
        .await
        .expect("submitted -> completed");
    assert_eq!(before, TaskState::Submitted);
    let err = store
        .set_status(&id, TaskStatus::new(TaskState::Canceled))
        .await
        .expect_err("completed is terminal");
    assert!(matches!(
        err,
        StoreError::Terminal {
            state: TaskState::Completed,
            ..
        }
    ));
    assert!(store.append_history(&id, message("late")).await.is_err());
    let stored = store.get(&id, None).await.expect("get").expect("exists");
    assert_eq!(stored.status.state, TaskState::Completed);
}

#[tokio::test]
async fn get_returns_only_the_most_recent_history() {
    let store = InMemoryTaskStore::new();
    store.insert(task("t1", "c1")).await.expect("insert");
    let id = TaskId::new("t1");
    for text in ["one", "two", "three"] {
        store
            .append_history(&id, message(text))
            .await
            .expect("append");
    }
    let last_two = store.get(&id, Some(2)).await.expect("get").expect("exists");
    let texts: Vec<String> = last_two
        .history
        .expect("history")
        .iter()
        .map(Message::text)
        .collect();
    assert_eq!(texts, ["two", "three"]);
    let none = store.get(&id, Some(0)).await.expect("get").expect("exists");
    assert_eq!(none.history.map(|h| h.len()), Some(0));
    assert!(
        store
            .get(&TaskId::new("nope"), None)
            .await
            .expect("get")
            .is_none()
    );
}

#[tokio::test]
async fn artifacts_append_by_id_or_replace() {
    let store = InMemoryTaskStore::new();
    store.insert(task("t1", "c1")).await.expect("insert");
    let id = TaskId::new("t1");
    let chunk = |text: &str| Artifact::new("a1", vec![Part::text(text)]);
    store
        .put_artifact(&id, chunk("x"), true)
        .await
        .expect("first chunk");
    let merged = store
        .put_artifact(&id, chunk("y"), true)
        .await
        .expect("second chunk");
    assert_eq!(merged.parts.len(), 2);
    let replaced = store
        .put_artifact(&id, chunk("z"), false)
        .await
        .expect("replace");
    assert_eq!(replaced.parts.len(), 1);
    let stored = store.get(&id, None).await.expect("get").expect("exists");
    assert_eq!(stored.artifacts.map(|a| a.len()), Some(1));
}

#[tokio::test]
async fn context_history_spans_tasks_in_order_and_honours_the_limit() {
    let store = InMemoryTaskStore::new();
    for (t, texts) in [("t1", ["a", "b"]), ("t2", ["c", "d"])] {
        store.insert(task(t, "c1")).await.expect("insert");
        for text in texts {
            store
                .append_history(&TaskId::new(t), message(text))
                .await
                .expect("append");
        }
    }
    store.insert(task("other", "c2")).await.expect("insert");
    let all: Vec<String> = store
        .context_history(&ContextId::new("c1"), 10)
        .await
        .expect("history")
        .iter()
        .map(Message::text)
        .collect();
    assert_eq!(all, ["a", "b", "c", "d"]);
    let last3: Vec<String> = store
        .context_history(&ContextId::new("c1"), 3)
        .await
        .expect("history")
        .iter()
        .map(Message::text)
        .collect();
    assert_eq!(last3, ["b", "c", "d"]);
}

#[tokio::test]
async fn a_conversation_remembers_a_bounded_number_of_tasks() {
    let store = InMemoryTaskStore::with_context_task_limit(2);
    for t in ["t1", "t2", "t3"] {
        store.insert(task(t, "c1")).await.expect("insert");
        store
            .append_history(&TaskId::new(t), message(t))
            .await
            .expect("append");
    }
    let texts: Vec<String> = store
        .context_history(&ContextId::new("c1"), 10)
        .await
        .expect("history")
        .iter()
        .map(Message::text)
        .collect();
    assert_eq!(texts, ["t2", "t3"]);
}
