//! The conformance suite: what every [`TaskStore`] must do, as test functions that take
//! a fresh, empty store.
//!
//! [`conformance_tests!`](crate::conformance_tests) turns them into `#[tokio::test]`s
//! for one kind of store, given an async function that makes a store with a
//! [`Retention`](crate::Retention) and anything that must live as long as it (a temporary directory), or
//! `None`, after printing why, when the kind cannot run here. This
//! crate runs them against the in-memory, embedded, journal and PostgreSQL stores; a store
//! written elsewhere can run them the same way.
//!
//! Each function panics (fails its test) on the first rule the store breaks.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use agentyard_transport::a2a::{
    Artifact, Message, Part, PushNotificationConfig, Role, StreamEvent, Task,
    TaskArtifactUpdateEvent, TaskPushNotificationConfig, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use agentyard_transport::{ContextId, MessageId, TaskId};

use crate::contract::{StoreError, TaskOwner, TaskStore};
use crate::testing::texts;

/// Runs every conformance test against the store `$make` makes: an async function
/// `fn(Retention) -> Option<(Arc<dyn TaskStore>, G)>`, `G` anything the store needs
/// kept until the test ends (`None` skips the test; it should say why). Expand it
/// inside a test module.
#[macro_export]
macro_rules! conformance_tests {
    ($make:path) => {
        $crate::conformance_tests!(@each $make;
            create_continue_finish = $crate::Retention::default(),
            terminal_state_is_final = $crate::Retention::default(),
            concurrent_cancel_and_complete_end_once = $crate::Retention::default(),
            history_length_keeps_the_most_recent = $crate::Retention::default(),
            conversation_history_spans_tasks = $crate::Retention::default(),
            conversation_principal_is_its_newest_task_that_has_one = $crate::Retention::default(),
            retention_by_count_spares_keyed_and_live_tasks = $crate::Retention::new(2),
            retention_by_age_spares_keyed_and_live_tasks = $crate::Retention::new(100),
            keys_name_their_task = $crate::Retention::default(),
            push_configs_are_kept_per_task = $crate::Retention::default(),
            event_log_numbers_events_from_one = $crate::Retention::default(),
            logged_writes_change_the_task_and_log_together = $crate::Retention::default(),
            records_never_lose_a_concurrent_update = $crate::Retention::default(),
            list_pages_by_status_change = $crate::Retention::default(),
            unfinished_lists_tasks_not_ended = $crate::Retention::default(),
            concurrent_writes_all_land = $crate::Retention::default(),
            unanswered_history_keeps_the_rules_and_lands = $crate::Retention::default(),
        );
    };
    (@each $make:path; $($name:ident = $retention:expr),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                if let Some((store, guard)) = $make($retention).await {
                    $crate::conformance::$name(store).await;
                    drop(guard);
                }
            }
        )*
    };
}

fn task(id: &str, context: &str) -> Task {
    Task::new(
        TaskId::new(id),
        ContextId::new(context),
        TaskStatus::new(TaskState::Submitted),
    )
}

fn message(text: &str) -> Message {
    let mut message = Message::new(Role::User, vec![Part::text(text)]);
    message.message_id = MessageId::new(text);
    message
}

fn status(state: TaskState) -> TaskStatus {
    TaskStatus::new(state)
}

async fn exists(store: &dyn TaskStore, id: &str) -> bool {
    store
        .get(&TaskId::new(id), Some(0))
        .await
        .expect("get")
        .is_some()
}

async fn end(store: &dyn TaskStore, id: &str) {
    end_with(store, id, false).await;
}

/// Ends a task that has a log entry and a push config, so that its dropping can be
/// seen to take them along.
async fn end_with_log_and_config(store: &dyn TaskStore, id: &str) {
    end_with(store, id, true).await;
}

async fn end_with(store: &dyn TaskStore, id: &str, log_and_config: bool) {
    let task_id = TaskId::new(id);
    store
        .insert(task(id, "ended"))
        .await
        .expect("insert a task to end");
    if log_and_config {
        store
            .append_event(&task_id, &update(id, TaskState::Working, false))
            .await
            .expect("log an event");
        store
            .put_push_config(&push(id, "a", "https://a.example/hook"))
            .await
            .expect("set a push config");
    }
    store
        .set_status(&task_id, status(TaskState::Completed))
        .await
        .expect("end the task");
}

/// A dropped task's log and push configs went with it.
async fn gone_with_log_and_configs(store: &dyn TaskStore, id: &str) {
    let task_id = TaskId::new(id);
    assert!(!exists(store, id).await, "{id} is dropped");
    assert!(
        store
            .events_after(&task_id, 0)
            .await
            .expect("read the log")
            .is_empty(),
        "{id}'s log goes with it"
    );
    assert!(
        store
            .push_configs(&task_id)
            .await
            .expect("read the configs")
            .is_empty(),
        "{id}'s push configs go with it"
    );
}

/// A conversation belongs to the principal of its newest task that has one, however
/// many tasks without one came after it; a conversation only unauthenticated callers
/// used belongs to nobody.
pub async fn conversation_principal_is_its_newest_task_that_has_one(store: Arc<dyn TaskStore>) {
    let principal = |context: &'static str| {
        let store = Arc::clone(&store);
        async move {
            store
                .context_principal(&ContextId::new(context))
                .await
                .expect("principal")
        }
    };
    let anonymous = || TaskOwner::new("echo", None);
    let owned_by = |principal: &str| TaskOwner::new("echo", Some(Arc::from(principal)));
    for n in 0..3 {
        store
            .insert_owned(task(&format!("open-{n}"), "open"), anonymous())
            .await
            .expect("insert an unauthenticated task");
    }
    assert_eq!(principal("open").await, None);
    assert_eq!(principal("unknown").await, None);

    // Asked about while it belonged to nobody (an answer a store may remember), then
    // joined by a task with a principal: the answer changes at once, whether the
    // insert was answered at its commit or queued and committed by a later write.
    store
        .insert_owned(task("open-carol", "open"), owned_by("carol"))
        .await
        .expect("insert carol's task");
    assert_eq!(principal("open").await.as_deref(), Some("carol"));
    store
        .insert_owned(task("late-0", "late"), anonymous())
        .await
        .expect("insert an unauthenticated task");
    assert_eq!(principal("late").await, None);
    store
        .insert_owned_unanswered(task("late-dave", "late"), owned_by("dave"))
        .await
        .expect("queue dave's task");
    // Asked again while the insert may still be uncommitted: whatever this answers,
    // the store must not keep it past the commit.
    let _ = principal("late").await;
    store
        .set_status(&TaskId::new("late-dave"), status(TaskState::Working))
        .await
        .expect("a write answered once all before it are stored");
    assert_eq!(principal("late").await.as_deref(), Some("dave"));

    store
        .insert_owned(task("owned-0", "owned"), owned_by("alice"))
        .await
        .expect("insert alice's task");
    for n in 1..4 {
        store
            .insert_owned(task(&format!("owned-{n}"), "owned"), anonymous())
            .await
            .expect("insert an unauthenticated task after it");
    }
    assert_eq!(principal("owned").await.as_deref(), Some("alice"));
    store
        .insert_owned(task("owned-4", "owned"), owned_by("bob"))
        .await
        .expect("insert bob's task");
    assert_eq!(principal("owned").await.as_deref(), Some("bob"));
}

/// A task is created with its owner, gets history and artifacts while it runs, ends,
/// and reads back as it was written.
pub async fn create_continue_finish(store: Arc<dyn TaskStore>) {
    let id = TaskId::new("t1");
    let owner = TaskOwner::new("echo", Some(Arc::from("alice")));
    store
        .insert_owned(task("t1", "c1"), owner.clone())
        .await
        .expect("insert");
    assert_eq!(store.owner(&id).await.expect("owner"), Some(owner));
    assert_eq!(
        store
            .context_principal(&ContextId::new("c1"))
            .await
            .expect("principal")
            .as_deref(),
        Some("alice")
    );
    let previous = store
        .set_status(&id, status(TaskState::Working))
        .await
        .expect("working");
    assert_eq!(previous, TaskState::Submitted);
    store
        .append_history(&id, message("hello").into())
        .await
        .expect("history");
    let first = Artifact::new("a1", vec![Part::text("one")]);
    store
        .put_artifact(&id, first.into(), false)
        .await
        .expect("artifact");
    let appended = store
        .put_artifact(
            &id,
            Artifact::new("a1", vec![Part::text("two")]).into(),
            true,
        )
        .await
        .expect("append");
    assert_eq!(appended.parts.len(), 2, "append adds parts to the artifact");
    let replaced = store
        .put_artifact(
            &id,
            Artifact::new("a2", vec![Part::text("x")]).into(),
            false,
        )
        .await
        .expect("second artifact");
    assert_eq!(replaced.artifact_id, "a2");
    store
        .append_history(&id, message("input").into())
        .await
        .expect("continue");
    let previous = store
        .set_status(&id, status(TaskState::Completed))
        .await
        .expect("complete");
    assert_eq!(previous, TaskState::Working);

    let stored = store.get(&id, None).await.expect("get").expect("stored");
    assert_eq!(stored.status.state, TaskState::Completed);
    assert_eq!(stored.context_id.as_str(), "c1");
    assert_eq!(texts(stored.history.iter().flatten()), ["hello", "input"]);
    let artifacts = stored.artifacts.expect("artifacts");
    assert_eq!(artifacts.len(), 2);
    assert_eq!(artifacts[0].parts.len(), 2);

    // A task stored without an owner has none; an unknown task has none either.
    store.insert(task("t2", "c2")).await.expect("insert");
    assert_eq!(store.owner(&TaskId::new("t2")).await.expect("owner"), None);
    assert_eq!(
        store.owner(&TaskId::new("nope")).await.expect("owner"),
        None
    );
    assert!(
        store
            .get(&TaskId::new("nope"), None)
            .await
            .expect("get")
            .is_none()
    );
}

/// A terminal task never changes again; ids are never reused; unknown ids are
/// `NotFound`.
pub async fn terminal_state_is_final(store: Arc<dyn TaskStore>) {
    let id = TaskId::new("t1");
    store.insert(task("t1", "c1")).await.expect("insert");
    let err = store
        .insert(task("t1", "c1"))
        .await
        .expect_err("a taken id");
    assert!(matches!(err, StoreError::AlreadyExists(ref taken) if taken == &id));
    store
        .set_status(&id, status(TaskState::Canceled))
        .await
        .expect("cancel");
    for state in [TaskState::Working, TaskState::Completed] {
        let err = store
            .set_status(&id, status(state))
            .await
            .expect_err("terminal");
        assert!(
            matches!(
                err,
                StoreError::Terminal {
                    state: TaskState::Canceled,
                    ..
                }
            ),
            "{err:?}"
        );
    }
    let err = store
        .append_history(&id, message("late").into())
        .await
        .expect_err("history of a terminal task");
    assert!(matches!(err, StoreError::Terminal { .. }), "{err:?}");
    let err = store
        .put_artifact(
            &id,
            Artifact::new("a", vec![Part::text("late")]).into(),
            false,
        )
        .await
        .expect_err("artifact of a terminal task");
    assert!(matches!(err, StoreError::Terminal { .. }), "{err:?}");
    let stored = store.get(&id, None).await.expect("get").expect("stored");
    assert_eq!(stored.status.state, TaskState::Canceled);
    assert!(stored.history.unwrap_or_default().is_empty());
    // An ended task's id is not reused either. (A durable writer keeps only live
    // tasks in memory, so here the database's key is what refuses it.)
    let err = store
        .insert(task("t1", "c2"))
        .await
        .expect_err("the id of an ended task");
    assert!(
        matches!(err, StoreError::AlreadyExists(ref taken) if taken == &id),
        "{err:?}"
    );
    let stored = store.get(&id, None).await.expect("get").expect("stored");
    assert_eq!(stored.context_id.as_str(), "c1");

    let unknown = TaskId::new("nope");
    let err = store
        .set_status(&unknown, status(TaskState::Working))
        .await
        .expect_err("unknown");
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
    let err = store
        .append_history(&unknown, message("x").into())
        .await
        .expect_err("unknown");
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
}

/// A cancel racing a completion: exactly one wins, and the task stays in the state of
/// the one that won.
pub async fn concurrent_cancel_and_complete_end_once(store: Arc<dyn TaskStore>) {
    for n in 0..20 {
        let id = TaskId::new(format!("race{n}"));
        store.insert(task(id.as_str(), "c1")).await.expect("insert");
        let cancel = {
            let (store, id) = (Arc::clone(&store), id.clone());
            tokio::spawn(async move { store.set_status(&id, status(TaskState::Canceled)).await })
        };
        let complete = {
            let (store, id) = (Arc::clone(&store), id.clone());
            tokio::spawn(async move { store.set_status(&id, status(TaskState::Completed)).await })
        };
        let cancel = cancel.await.expect("cancel task");
        let complete = complete.await.expect("complete task");
        assert!(
            cancel.is_ok() != complete.is_ok(),
            "exactly one ends the task: {cancel:?} {complete:?}"
        );
        let stored = store.get(&id, None).await.expect("get").expect("stored");
        let winner = if cancel.is_ok() {
            TaskState::Canceled
        } else {
            TaskState::Completed
        };
        assert_eq!(stored.status.state, winner);
    }
}

/// `history_length` keeps the most recent messages; 0 keeps none.
pub async fn history_length_keeps_the_most_recent(store: Arc<dyn TaskStore>) {
    let id = TaskId::new("t1");
    store.insert(task("t1", "c1")).await.expect("insert");
    for text in ["m1", "m2", "m3", "m4"] {
        store
            .append_history(&id, message(text).into())
            .await
            .expect("history");
    }
    let history_of = |task: Task| texts(task.history.iter().flatten());
    let two = store.get(&id, Some(2)).await.expect("get").expect("task");
    assert_eq!(history_of(two), ["m3", "m4"]);
    let none = store.get(&id, Some(0)).await.expect("get").expect("task");
    assert!(history_of(none).is_empty());
    let all = store.get(&id, None).await.expect("get").expect("task");
    assert_eq!(history_of(all), ["m1", "m2", "m3", "m4"]);
    let more = store.get(&id, Some(10)).await.expect("get").expect("task");
    assert_eq!(history_of(more).len(), 4);
}

/// A conversation's history runs across its tasks, oldest first, and stops before a
/// given message.
pub async fn conversation_history_spans_tasks(store: Arc<dyn TaskStore>) {
    store.insert(task("t1", "c1")).await.expect("insert");
    store.insert(task("t2", "c1")).await.expect("insert");
    store.insert(task("t3", "other")).await.expect("insert");
    for (id, text) in [
        ("t1", "a"),
        ("t1", "b"),
        ("t2", "c"),
        ("t3", "x"),
        ("t2", "d"),
    ] {
        store
            .append_history(&TaskId::new(id), message(text).into())
            .await
            .expect("history");
    }
    let said = |messages: Vec<Arc<Message>>| texts(&messages);
    let context = ContextId::new("c1");
    let all = store
        .context_history(&context, None, 10)
        .await
        .expect("history");
    assert_eq!(said(all), ["a", "b", "c", "d"]);
    let last_two = store
        .context_history(&context, None, 2)
        .await
        .expect("history");
    assert_eq!(said(last_two), ["c", "d"]);
    let before = store
        .context_history(&context, Some(&MessageId::new("c")), 10)
        .await
        .expect("history");
    assert_eq!(said(before), ["a", "b"]);
    let nothing = store
        .context_history(&context, None, 0)
        .await
        .expect("history");
    assert!(nothing.is_empty());
    let unknown = store
        .context_history(&ContextId::new("nope"), None, 5)
        .await
        .expect("history");
    assert!(unknown.is_empty());
}

/// With room for two ended tasks, the oldest ended task goes when a third ends, unless
/// a remembered key names it (then it goes with the key); live tasks never go.
/// Expects a store made with `Retention::new(2)`.
pub async fn retention_by_count_spares_keyed_and_live_tasks(store: Arc<dyn TaskStore>) {
    store.insert(task("live", "c1")).await.expect("insert");
    end_with_log_and_config(&*store, "keyed").await;
    store
        .remember_key("k1", &TaskId::new("keyed"))
        .await
        .expect("remember");
    end_with_log_and_config(&*store, "e1").await;
    for id in ["e2", "e3", "e4"] {
        end(&*store, id).await;
    }
    assert!(
        exists(&*store, "live").await,
        "a live task is never dropped"
    );
    assert!(
        exists(&*store, "keyed").await,
        "a keyed task stays while its key does"
    );
    gone_with_log_and_configs(&*store, "e1").await;
    assert!(!exists(&*store, "e2").await, "past the count");
    assert!(exists(&*store, "e3").await);
    assert!(exists(&*store, "e4").await);
    store.forget_key("k1").await.expect("forget");
    // Past the count, it goes with its last key.
    gone_with_log_and_configs(&*store, "keyed").await;
    assert!(exists(&*store, "e3").await && exists(&*store, "e4").await);
}

/// Ended tasks older than the cutoff go, except keyed ones; live tasks stay. Expects a
/// store made with `Retention::new(100)`.
pub async fn retention_by_age_spares_keyed_and_live_tasks(store: Arc<dyn TaskStore>) {
    store.insert(task("live", "c1")).await.expect("insert");
    end_with_log_and_config(&*store, "old1").await;
    for id in ["old2", "keyed"] {
        end(&*store, id).await;
    }
    store
        .remember_key("k1", &TaskId::new("keyed"))
        .await
        .expect("remember");
    let past = SystemTime::now() - Duration::from_secs(3600);
    assert_eq!(
        store.drop_ended_before(past).await.expect("drop"),
        0,
        "nothing ended an hour ago"
    );
    let future = SystemTime::now() + Duration::from_secs(3600);
    assert_eq!(store.drop_ended_before(future).await.expect("drop"), 2);
    gone_with_log_and_configs(&*store, "old1").await;
    assert!(!exists(&*store, "old2").await);
    assert!(
        exists(&*store, "keyed").await,
        "a remembered key keeps its task"
    );
    assert!(
        exists(&*store, "live").await,
        "a live task is never dropped"
    );
}

/// A key names the task it answered until it is replaced or forgotten; `since` hides
/// keys remembered earlier.
pub async fn keys_name_their_task(store: Arc<dyn TaskStore>) {
    store.insert(task("t1", "c1")).await.expect("insert");
    store.insert(task("t2", "c1")).await.expect("insert");
    let long_ago = SystemTime::now() - Duration::from_secs(3600);
    assert_eq!(store.recall_key("k", long_ago).await.expect("recall"), None);
    store
        .remember_key("k", &TaskId::new("t1"))
        .await
        .expect("remember");
    assert_eq!(
        store.recall_key("k", long_ago).await.expect("recall"),
        Some(TaskId::new("t1"))
    );
    let later = SystemTime::now() + Duration::from_secs(3600);
    assert_eq!(
        store.recall_key("k", later).await.expect("recall"),
        None,
        "a key remembered before `since` is expired"
    );
    store
        .remember_key("k", &TaskId::new("t2"))
        .await
        .expect("replace");
    assert_eq!(
        store.recall_key("k", long_ago).await.expect("recall"),
        Some(TaskId::new("t2"))
    );
    store.forget_key("k").await.expect("forget");
    assert_eq!(store.recall_key("k", long_ago).await.expect("recall"), None);
    store
        .forget_key("never")
        .await
        .expect("forget an unknown key");
}

fn push(task: &str, id: &str, url: &str) -> TaskPushNotificationConfig {
    let mut config = PushNotificationConfig::new(url);
    config.id = Some(id.to_owned());
    TaskPushNotificationConfig {
        task_id: TaskId::new(task),
        push_notification_config: config,
    }
}

/// Push configs are kept per task, in the order first set; a set with a known id
/// replaces; delete says whether there was one; a config needs its task.
pub async fn push_configs_are_kept_per_task(store: Arc<dyn TaskStore>) {
    store.insert(task("t1", "c1")).await.expect("insert");
    store.insert(task("t2", "c1")).await.expect("insert");
    let id = TaskId::new("t1");
    store
        .put_push_config(&push("t1", "a", "https://a.example/hook"))
        .await
        .expect("put");
    store
        .put_push_config(&push("t1", "b", "https://b.example/hook"))
        .await
        .expect("put");
    store
        .put_push_config(&push("t2", "a", "https://other.example/hook"))
        .await
        .expect("put");
    store
        .put_push_config(&push("t1", "a", "https://a2.example/hook"))
        .await
        .expect("replace");
    let mut with = store.tasks_with_push_configs().await.expect("tasks");
    with.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    assert_eq!(with, [TaskId::new("t1"), TaskId::new("t2")]);
    let configs = store.push_configs(&id).await.expect("list");
    let urls: Vec<&str> = configs
        .iter()
        .map(|c| c.push_notification_config.url.as_str())
        .collect();
    assert_eq!(urls, ["https://a2.example/hook", "https://b.example/hook"]);
    assert!(store.delete_push_config(&id, "a").await.expect("delete"));
    assert!(!store.delete_push_config(&id, "a").await.expect("delete"));
    assert_eq!(store.push_configs(&id).await.expect("list").len(), 1);
    assert_eq!(
        store
            .push_configs(&TaskId::new("t2"))
            .await
            .expect("list")
            .len(),
        1
    );
    let err = store
        .put_push_config(&push("nope", "a", "https://a.example/hook"))
        .await
        .expect_err("no such task");
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
}

fn update(id: &str, state: TaskState, last: bool) -> StreamEvent {
    StreamEvent::StatusUpdate(status_update(id, state, last))
}

fn status_update(id: &str, state: TaskState, last: bool) -> TaskStatusUpdateEvent {
    TaskStatusUpdateEvent::new(TaskId::new(id), ContextId::new("c1"), status(state), last)
}

/// Each task's events are numbered 1, 2, 3, …; reading after a number gives the rest
/// in order, as they were written; an event needs its task.
pub async fn event_log_numbers_events_from_one(store: Arc<dyn TaskStore>) {
    store.insert(task("t1", "c1")).await.expect("insert");
    store.insert(task("t2", "c1")).await.expect("insert");
    let id = TaskId::new("t1");
    let events = [
        StreamEvent::Task(task("t1", "c1")),
        update("t1", TaskState::Working, false),
        update("t1", TaskState::Completed, true),
    ];
    for (n, event) in events.iter().enumerate() {
        let seq = store.append_event(&id, event).await.expect("append");
        assert_eq!(seq, Some(n as u64 + 1));
    }
    assert_eq!(
        store
            .append_event(&TaskId::new("t2"), &update("t2", TaskState::Working, false))
            .await
            .expect("append"),
        Some(1),
        "each task numbers its own events"
    );
    let all = store.events_after(&id, 0).await.expect("read");
    assert_eq!(all.len(), 3);
    assert_eq!(
        all.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(all[0].1, events[0]);
    let rest = store.events_after(&id, 1).await.expect("read");
    assert_eq!(rest.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(rest[1].1, events[2]);
    assert!(rest[1].1.is_final());
    assert!(store.events_after(&id, 3).await.expect("read").is_empty());
    assert!(store.events_after(&id, 99).await.expect("read").is_empty());
    assert!(
        store
            .events_after(&TaskId::new("nope"), 0)
            .await
            .expect("read")
            .is_empty()
    );
    let err = store
        .append_event(&TaskId::new("nope"), &events[1])
        .await
        .expect_err("no such task");
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
}

/// Records are versioned: a write naming a stale version is refused, so of two
/// concurrent writers from the same version exactly one wins.
pub async fn records_never_lose_a_concurrent_update(store: Arc<dyn TaskStore>) {
    let v1 = serde_json::json!({"steps": 1});
    assert_eq!(
        store
            .put_record("workflows", "w1", &v1, Some(0))
            .await
            .expect("create"),
        1
    );
    let err = store
        .put_record("workflows", "w1", &v1, Some(0))
        .await
        .expect_err("exists already");
    assert!(
        matches!(err, StoreError::Conflict { found: Some(1), .. }),
        "{err:?}"
    );
    let writers: Vec<_> = (0..2)
        .map(|n| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                store
                    .put_record("workflows", "w1", &serde_json::json!({"steps": n}), Some(1))
                    .await
            })
        })
        .collect();
    let mut won = 0;
    for writer in writers {
        match writer.await.expect("writer") {
            Ok(version) => {
                assert_eq!(version, 2);
                won += 1;
            }
            Err(StoreError::Conflict { .. }) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(won, 1, "exactly one of two concurrent updates wins");
    assert_eq!(
        store
            .put_record("workflows", "w1", &v1, None)
            .await
            .expect("unconditional"),
        3
    );
    store
        .put_record("workflows", "a0", &v1, None)
        .await
        .expect("second");
    store
        .put_record("runs", "r1", &v1, None)
        .await
        .expect("other namespace");
    let record = store
        .get_record("workflows", "w1")
        .await
        .expect("get")
        .expect("stored");
    assert_eq!((record.version, record.value), (3, v1));
    let keys: Vec<String> = store
        .list_records("workflows")
        .await
        .expect("list")
        .into_iter()
        .map(|record| record.key)
        .collect();
    assert_eq!(keys, ["a0", "w1"]);
    assert!(
        store
            .delete_record("workflows", "w1")
            .await
            .expect("delete")
    );
    assert!(
        !store
            .delete_record("workflows", "w1")
            .await
            .expect("delete")
    );
    assert!(
        store
            .get_record("workflows", "w1")
            .await
            .expect("get")
            .is_none()
    );
}

/// Tasks list newest status change first, in pages whose cursors stay valid, with the
/// filter's total.
pub async fn list_pages_by_status_change(store: Arc<dyn TaskStore>) {
    for n in 1..=5 {
        store
            .insert_owned(task(&format!("t{n}"), "c1"), TaskOwner::new("echo", None))
            .await
            .expect("insert");
    }
    store
        .set_status(&TaskId::new("t2"), status(TaskState::Working))
        .await
        .expect("touch");
    let all = |_: &Task, owner: Option<&TaskOwner>| owner.is_some_and(|o| &*o.agent == "echo");
    let ids = |tasks: &[Task]| -> Vec<String> { tasks.iter().map(|t| t.id.to_string()).collect() };
    let first = store.list(&all, 2, None).await.expect("list");
    assert_eq!(first.total, 5);
    assert_eq!(ids(&first.tasks), ["t2", "t5"]);
    let second = store.list(&all, 2, first.next).await.expect("list");
    assert_eq!(ids(&second.tasks), ["t4", "t3"]);
    let third = store.list(&all, 2, second.next).await.expect("list");
    assert_eq!(ids(&third.tasks), ["t1"]);
    assert_eq!(third.next, None);
    let none = |_: &Task, _: Option<&TaskOwner>| false;
    assert_eq!(store.list(&none, 2, None).await.expect("list").total, 0);
}

/// `unfinished` names every task that has not ended, with its state.
pub async fn unfinished_lists_tasks_not_ended(store: Arc<dyn TaskStore>) {
    store.insert(task("w", "c1")).await.expect("insert");
    store.insert(task("i", "c1")).await.expect("insert");
    end(&*store, "done").await;
    store
        .set_status(&TaskId::new("w"), status(TaskState::Working))
        .await
        .expect("working");
    store
        .set_status(&TaskId::new("i"), status(TaskState::InputRequired))
        .await
        .expect("input");
    let mut live = store.unfinished().await.expect("unfinished");
    live.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    assert_eq!(
        live,
        [
            (TaskId::new("i"), TaskState::InputRequired),
            (TaskId::new("w"), TaskState::Working)
        ]
    );
}

/// Many concurrent writers (what group commit batches) all land, each in order.
pub async fn concurrent_writes_all_land(store: Arc<dyn TaskStore>) {
    let writers: Vec<_> = (0..64)
        .map(|n| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let id = TaskId::new(format!("t{n}"));
                store
                    .insert(task(id.as_str(), &format!("c{n}")))
                    .await
                    .expect("insert");
                for m in 0..3 {
                    store
                        .append_history(&id, message(&format!("{n}-{m}")).into())
                        .await
                        .expect("history");
                }
                store
                    .set_status(&id, status(TaskState::Completed))
                    .await
                    .expect("complete");
            })
        })
        .collect();
    for writer in writers {
        writer.await.expect("writer");
    }
    for n in 0..64 {
        let stored = store
            .get(&TaskId::new(format!("t{n}")), None)
            .await
            .expect("get")
            .expect("stored");
        assert_eq!(stored.status.state, TaskState::Completed);
        assert_eq!(
            texts(stored.history.iter().flatten()),
            [format!("{n}-0"), format!("{n}-1"), format!("{n}-2")]
        );
    }
}

/// A status or artifact written with its update changes the task and logs the update
/// under the next number; a refused write logs nothing.
pub async fn logged_writes_change_the_task_and_log_together(store: Arc<dyn TaskStore>) {
    store.insert(task("t1", "c1")).await.expect("insert");
    let id = TaskId::new("t1");
    let (previous, seq) = store
        .set_status_logged(&id, status_update("t1", TaskState::Working, false))
        .await
        .expect("working");
    assert_eq!((previous, seq), (TaskState::Submitted, Some(1)));
    let artifact = Artifact::new("a1", vec![Part::text("x")]);
    let event = StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent::new(
        id.clone(),
        ContextId::new("c1"),
        artifact.clone(),
    ));
    let (stored, seq) = store
        .put_artifact_logged(&id, artifact.into(), false, &event)
        .await
        .expect("artifact");
    assert_eq!((stored.artifact_id.as_str(), seq), ("a1", Some(2)));
    let (_, seq) = store
        .set_status_logged(&id, status_update("t1", TaskState::Completed, true))
        .await
        .expect("complete");
    assert_eq!(seq, Some(3));
    let err = store
        .set_status_logged(&id, status_update("t1", TaskState::Working, false))
        .await
        .expect_err("terminal");
    assert!(matches!(err, StoreError::Terminal { .. }), "{err:?}");
    let log = store.events_after(&id, 0).await.expect("log");
    assert_eq!(log.len(), 3, "a refused write logs nothing");
    assert_eq!(log[1].1, event);
    let task = store.get(&id, None).await.expect("get").expect("task");
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.artifacts.map(|a| a.len()), Some(1));
}

/// [`TaskStore::append_history_unanswered`] keeps the rules of the write it stands
/// for (an unknown or ended task), and what it and
/// [`TaskStore::insert_owned_unanswered`] (of a freshly minted id) write is part of
/// the task once the next write of the task is answered, in order.
pub async fn unanswered_history_keeps_the_rules_and_lands(store: Arc<dyn TaskStore>) {
    let id = TaskId::mint();
    let task = Task::new(
        id.clone(),
        ContextId::new("c-unanswered"),
        status(TaskState::Working),
    );
    store
        .insert_owned_unanswered(task, TaskOwner::new("agent-u", None))
        .await
        .expect("insert");
    for n in 0..3 {
        store
            .append_history_unanswered(&id, message(&format!("m{n}")).into())
            .await
            .expect("history");
    }
    store
        .set_status(&id, status(TaskState::Completed))
        .await
        .expect("complete");
    let stored = store.get(&id, None).await.expect("get").expect("stored");
    let texts: Vec<String> = stored
        .history
        .unwrap_or_default()
        .iter()
        .map(|m| serde_json::to_string(&m.parts).expect("parts"))
        .collect();
    assert_eq!(texts.len(), 3, "{texts:?}");
    let owner = store.owner(&id).await.expect("owner").expect("owned");
    assert_eq!(&*owner.agent, "agent-u");
    assert!(
        texts[0].contains("m0") && texts[2].contains("m2"),
        "{texts:?}"
    );
    let err = store
        .append_history_unanswered(&id, message("late").into())
        .await
        .expect_err("history of an ended task");
    assert!(matches!(err, StoreError::Terminal { .. }), "{err:?}");
    let err = store
        .append_history_unanswered(&TaskId::new("nope"), message("x").into())
        .await
        .expect_err("unknown task");
    assert!(matches!(err, StoreError::NotFound(_)), "{err:?}");
}
