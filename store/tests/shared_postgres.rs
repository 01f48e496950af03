//! Two stores on one PostgreSQL database, as two agentyard processes would share it:
//! each remembers the live tasks it wrote, so these check that a write computed from
//! what one remembers never overwrites what the other wrote in between.
//! Skipped, saying why, when `AGENTYARD_TEST_POSTGRES_URL` is not set.

use std::sync::Arc;

use agentyard_store::testing::texts;
use agentyard_store::{Retention, SqlTaskStore, StoreError, StoreLocation, TaskStore};
use agentyard_transport::TaskId;
use agentyard_transport::a2a::{
    Message, Part, Role, StreamEvent, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

/// Two stores on one fresh schema, or `None` (skipped).
async fn two_stores() -> Option<(Arc<SqlTaskStore>, Arc<SqlTaskStore>)> {
    let url = agentyard_store::testing::postgres_schema("shared").await?;
    let open = |url: String| async move {
        Arc::new(
            SqlTaskStore::open(StoreLocation::Postgres(url), Retention::default())
                .await
                .expect("open the PostgreSQL store"),
        )
    };
    let first = open(url.clone()).await;
    let second = open(url).await;
    Some((first, second))
}

fn message(text: &str) -> Message {
    Message::new(Role::Agent, vec![Part::text(text)])
}

fn task(id: &str) -> Task {
    Task::new(
        TaskId::new(id),
        agentyard_transport::ContextId::new("c1"),
        TaskStatus::new(TaskState::Submitted),
    )
}

#[tokio::test]
async fn history_written_by_two_processes_all_lands() {
    let Some((a, b)) = two_stores().await else {
        return;
    };
    let id = TaskId::new("t1");
    a.insert(task("t1")).await.expect("insert");
    // Each side first learns the task (and so remembers it), then both write at once.
    a.append_history(&id, message("a-first").into())
        .await
        .expect("a");
    b.append_history(&id, message("b-first").into())
        .await
        .expect("b");
    let write = |store: Arc<SqlTaskStore>, side: &'static str| {
        let id = id.clone();
        tokio::spawn(async move {
            for n in 0..20 {
                store
                    .append_history(&id, message(&format!("{side}-{n}")).into())
                    .await
                    .expect("history");
            }
        })
    };
    let (left, right) = (write(Arc::clone(&a), "a"), write(Arc::clone(&b), "b"));
    left.await.expect("a writes");
    right.await.expect("b writes");
    let stored = a.get(&id, None).await.expect("get").expect("stored");
    let texts = texts(stored.history.iter().flatten());
    assert_eq!(texts.len(), 42, "every message of both sides: {texts:?}");
    for side in ["a", "b"] {
        let mine: Vec<&String> = texts
            .iter()
            .filter(|t| t.starts_with(side) && !t.ends_with("first"))
            .collect();
        let expected: Vec<String> = (0..20).map(|n| format!("{side}-{n}")).collect();
        assert_eq!(mine, expected.iter().collect::<Vec<_>>(), "{side}'s order");
    }
}

#[tokio::test]
async fn a_task_ended_by_one_process_is_final_for_the_other() {
    let Some((a, b)) = two_stores().await else {
        return;
    };
    let id = TaskId::new("t1");
    a.insert(task("t1")).await.expect("insert");
    // Both remember it live.
    a.set_status(&id, TaskStatus::new(TaskState::Working))
        .await
        .expect("a working");
    b.append_history(&id, message("seen").into())
        .await
        .expect("b");
    b.set_status(&id, TaskStatus::new(TaskState::Canceled))
        .await
        .expect("b cancels");
    // What `a` remembers says working; the database says canceled.
    match a
        .set_status(&id, TaskStatus::new(TaskState::Completed))
        .await
    {
        Err(StoreError::Terminal { state, .. }) => assert_eq!(state, TaskState::Canceled),
        other => panic!("completing a canceled task: {other:?}"),
    }
    match a.append_history(&id, message("late").into()).await {
        Err(StoreError::Terminal { .. }) => {}
        other => panic!("history on a canceled task: {other:?}"),
    }
    let stored = a.get(&id, None).await.expect("get").expect("stored");
    assert_eq!(stored.status.state, TaskState::Canceled);
}

#[tokio::test]
async fn events_logged_by_two_processes_are_numbered_once_each() {
    let Some((a, b)) = two_stores().await else {
        return;
    };
    let id = TaskId::new("t1");
    a.insert(task("t1")).await.expect("insert");
    let event = |n: usize| {
        StreamEvent::StatusUpdate(TaskStatusUpdateEvent::new(
            id.clone(),
            agentyard_transport::ContextId::new("c1"),
            TaskStatus::new(TaskState::Working).with_message(message(&n.to_string())),
            false,
        ))
    };
    let log = |store: Arc<SqlTaskStore>, from: usize| {
        let id = id.clone();
        let events: Vec<StreamEvent> = (from..from + 10).map(event).collect();
        tokio::spawn(async move {
            let mut numbers = Vec::new();
            for event in events {
                let StreamEvent::StatusUpdate(update) = &event else {
                    unreachable!("status updates only");
                };
                let (_, seq) = store
                    .set_status_logged(&id, update.clone())
                    .await
                    .expect("logged");
                numbers.push(seq.expect("a durable store numbers its events"));
            }
            numbers
        })
    };
    let (left, right) = (log(Arc::clone(&a), 0), log(Arc::clone(&b), 100));
    let mut numbers = left.await.expect("a logs");
    numbers.extend(right.await.expect("b logs"));
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=20).collect::<Vec<u64>>());
    let logged = b.events_after(&id, 0).await.expect("log");
    assert_eq!(
        logged.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(),
        (1..=20).collect::<Vec<u64>>()
    );
}

/// Text that JSON must escape, and text it must not mangle: the writer hands a batch's
/// rows to PostgreSQL as one JSON document.
const AWKWARD: &str = "quote \" backslash \\ newline \n tab \t nul \u{0} crab 🦀 é \u{2028}";

#[tokio::test]
async fn a_batch_of_many_rows_lands_whole_and_an_id_taken_by_the_other_process_is_refused_alone() {
    let Some((a, b)) = two_stores().await else {
        return;
    };
    // Taken by the other process: `b` does not remember it, so only the database
    // refuses it, in the middle of the batch it lands in.
    a.insert(task("taken")).await.expect("insert");
    let ids: Vec<String> = (0..48)
        .map(|n| {
            if n == 20 {
                String::from("taken")
            } else {
                format!("t{n}")
            }
        })
        .collect();
    let inserts = ids.iter().map(|id| {
        let b = Arc::clone(&b);
        let mut task = task(id);
        task.history = Some(vec![Arc::new(message(&format!("{id}: {AWKWARD}")))]);
        async move { b.insert(task).await }
    });
    let outcomes = futures::future::join_all(inserts).await;
    for (id, outcome) in ids.iter().zip(&outcomes) {
        match outcome {
            Err(StoreError::AlreadyExists(taken)) if id == "taken" => {
                assert_eq!(taken.as_str(), "taken");
            }
            Ok(()) if id != "taken" => {}
            other => panic!("insert of {id}: {other:?}"),
        }
    }
    // Every new task reads back as written, from either process.
    for id in ids.iter().filter(|id| *id != "taken") {
        let read = a
            .get(&TaskId::new(id.as_str()), None)
            .await
            .expect("read")
            .unwrap_or_else(|| panic!("{id} is stored"));
        assert_eq!(
            texts(read.history.as_deref().unwrap_or_default()),
            [format!("{id}: {AWKWARD}")]
        );
    }
    // The taken task is the first process's, untouched.
    let taken = b.get(&TaskId::new("taken"), None).await.expect("read");
    assert!(taken.is_some_and(|task| task.history.is_none_or(|h| h.is_empty())));

    // Many tasks' events at once: logged with their text intact, numbered per task.
    let updates = ids.iter().filter(|id| *id != "taken").map(|id| {
        let b = Arc::clone(&b);
        let update = TaskStatusUpdateEvent::new(
            TaskId::new(id.as_str()),
            agentyard_transport::ContextId::new("c1"),
            TaskStatus::new(TaskState::Working).with_message(message(AWKWARD)),
            false,
        );
        async move { b.set_status_logged(&update.task_id.clone(), update).await }
    });
    for outcome in futures::future::join_all(updates).await {
        let (previous, seq) = outcome.expect("logged");
        assert_eq!((previous, seq), (TaskState::Submitted, Some(1)));
    }
    let logged = a.events_after(&TaskId::new("t47"), 0).await.expect("log");
    let [(1, StreamEvent::StatusUpdate(update))] = logged.as_slice() else {
        panic!("one status update logged: {logged:?}");
    };
    assert_eq!(
        update.status.message.as_ref().map(|m| m.text()),
        Some(String::from(AWKWARD))
    );
}
