use super::*;
use agentyard_transport::a2a::{Part, Role, TaskArtifactUpdateEvent};

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

async fn texts(store: &InMemoryTaskStore, before: Option<&str>, limit: usize) -> Vec<String> {
    let before = before.map(MessageId::new);
    store
        .context_history(&ContextId::new("c1"), before.as_ref(), limit)
        .await
        .expect("history")
        .iter()
        .map(|message| message.text())
        .collect()
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
    assert!(
        store
            .append_history(&id, message("late").into())
            .await
            .is_err()
    );
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
            .append_history(&id, message(text).into())
            .await
            .expect("append");
    }
    let last_two = store.get(&id, Some(2)).await.expect("get").expect("exists");
    let texts: Vec<String> = last_two
        .history
        .expect("history")
        .iter()
        .map(|message| message.text())
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
        .put_artifact(&id, chunk("x").into(), true)
        .await
        .expect("first chunk");
    let merged = store
        .put_artifact(&id, chunk("y").into(), true)
        .await
        .expect("second chunk");
    assert_eq!(merged.parts.len(), 2);
    let replaced = store
        .put_artifact(&id, chunk("z").into(), false)
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
                .append_history(&TaskId::new(t), message(text).into())
                .await
                .expect("append");
        }
    }
    store.insert(task("other", "c2")).await.expect("insert");
    let all: Vec<String> = store
        .context_history(&ContextId::new("c1"), None, 10)
        .await
        .expect("history")
        .iter()
        .map(|message| message.text())
        .collect();
    assert_eq!(all, ["a", "b", "c", "d"]);
    let last3: Vec<String> = store
        .context_history(&ContextId::new("c1"), None, 3)
        .await
        .expect("history")
        .iter()
        .map(|message| message.text())
        .collect();
    assert_eq!(last3, ["b", "c", "d"]);
}

#[tokio::test]
async fn a_conversation_remembers_a_bounded_number_of_tasks() {
    let store = InMemoryTaskStore::with_context_task_limit(2);
    for t in ["t1", "t2", "t3"] {
        store.insert(task(t, "c1")).await.expect("insert");
        store
            .append_history(&TaskId::new(t), message(t).into())
            .await
            .expect("append");
    }
    let texts: Vec<String> = store
        .context_history(&ContextId::new("c1"), None, 10)
        .await
        .expect("history")
        .iter()
        .map(|message| message.text())
        .collect();
    assert_eq!(texts, ["t2", "t3"]);
}

#[tokio::test]
async fn context_history_before_a_message_leaves_it_and_newer_ones_out() {
    let store = InMemoryTaskStore::new();
    for (t, texts) in [("t1", ["a", "b"]), ("t2", ["c", "d"]), ("t3", ["e", "f"])] {
        store.insert(task(t, "c1")).await.expect("insert");
        for text in texts {
            store
                .append_history(&TaskId::new(t), message(text).into())
                .await
                .expect("append");
        }
    }
    assert_eq!(texts(&store, Some("d"), 10).await, ["a", "b", "c"]);
    assert_eq!(texts(&store, Some("d"), 2).await, ["b", "c"]);
    assert_eq!(texts(&store, Some("a"), 10).await, Vec::<String>::new());
    assert_eq!(texts(&store, Some("f"), 0).await, Vec::<String>::new());
    // Not in the conversation: the most recent messages, as without `before`.
    assert_eq!(texts(&store, Some("zz"), 3).await, ["d", "e", "f"]);
    assert_eq!(texts(&store, None, 3).await, ["d", "e", "f"]);
}

async fn end(store: &InMemoryTaskStore, id: &str) {
    store
        .set_status(&TaskId::new(id), TaskStatus::new(TaskState::Completed))
        .await
        .expect("the task ends");
}

#[tokio::test]
async fn past_the_finished_limit_the_task_that_ended_first_is_forgotten() {
    let store = InMemoryTaskStore::new().finished_task_limit(2);
    for (t, c) in [("t1", "c1"), ("t2", "c1"), ("t3", "c2"), ("live", "c1")] {
        store.insert(task(t, c)).await.expect("insert");
        store
            .append_history(&TaskId::new(t), message(t).into())
            .await
            .expect("append");
    }
    // Ended in the order t2, t1, t3: t2 goes first.
    for t in ["t2", "t1"] {
        end(&store, t).await;
    }
    assert_eq!(store.len(), 4, "two ended tasks are within the limit");
    end(&store, "t3").await;
    assert_eq!(store.len(), 3);
    let gone = store.get(&TaskId::new("t2"), None).await.expect("get");
    assert!(gone.is_none(), "the first to end is forgotten");
    for kept in ["t1", "t3", "live"] {
        let found = store.get(&TaskId::new(kept), None).await.expect("get");
        assert!(found.is_some(), "{kept} is kept");
    }
    assert_eq!(texts(&store, None, 10).await, ["t1", "live"]);

    // A conversation whose every task is forgotten is forgotten too.
    store.insert(task("t4", "c3")).await.expect("insert");
    end(&store, "t4").await;
    end(&store, "live").await;
    assert!(store.contexts.get(&ContextId::new("c2")).is_none());
    assert_eq!(store.len(), 2, "t4 and live, the two that ended last");
}

#[tokio::test]
async fn a_task_stored_already_ended_counts_toward_the_limit() {
    let store = InMemoryTaskStore::new().finished_task_limit(1);
    for t in ["t1", "t2"] {
        let mut ended = task(t, "c1");
        ended.status = TaskStatus::new(TaskState::Failed);
        store.insert(ended).await.expect("insert");
    }
    assert_eq!(store.len(), 1);
    assert!(
        store
            .get(&TaskId::new("t2"), None)
            .await
            .expect("get")
            .is_some()
    );
}

fn owner(agent: &str, principal: Option<&str>) -> TaskOwner {
    TaskOwner::new(agent, principal.map(Arc::from))
}

#[tokio::test]
async fn an_owner_is_kept_beside_its_task_and_forgotten_with_it() {
    let store = InMemoryTaskStore::new().finished_task_limit(1);
    let alice = owner("echo", Some("alice"));
    store
        .insert_owned(task("t1", "c1"), alice.clone())
        .await
        .expect("insert");
    store.insert(task("t2", "c2")).await.expect("insert");
    assert_eq!(
        store.owner(&TaskId::new("t1")).await.expect("owner"),
        Some(alice.clone())
    );
    assert_eq!(store.owner(&TaskId::new("t2")).await.expect("owner"), None);
    // A taken id keeps its first owner.
    let mallory = owner("echo", Some("mallory"));
    assert!(store.insert_owned(task("t1", "c9"), mallory).await.is_err());
    assert_eq!(
        store.owner(&TaskId::new("t1")).await.expect("owner"),
        Some(alice)
    );
    // Forgotten past the finished limit, with its owner.
    end(&store, "t1").await;
    end(&store, "t2").await;
    assert_eq!(store.owner(&TaskId::new("t1")).await.expect("owner"), None);
    // The owner lives in the task's entry, so it goes with it.
    assert!(!store.tasks.contains_key(&TaskId::new("t1")));
}

#[tokio::test]
async fn a_conversation_belongs_to_the_principal_of_its_tasks() {
    let store = InMemoryTaskStore::new();
    store
        .insert_owned(task("t1", "c1"), owner("a", Some("alice")))
        .await
        .expect("insert");
    // A task an agent started later in the conversation has no principal.
    store
        .insert_owned(task("t2", "c1"), owner("b", None))
        .await
        .expect("insert");
    store
        .insert_owned(task("t3", "c2"), owner("a", None))
        .await
        .expect("insert");
    let principal = |c: &'static str| {
        let store = &store;
        async move {
            store
                .context_principal(&ContextId::new(c))
                .await
                .expect("principal")
        }
    };
    assert_eq!(principal("c1").await.as_deref(), Some("alice"));
    assert_eq!(principal("c2").await, None);
    assert_eq!(principal("unknown").await, None);
}

#[tokio::test]
async fn a_kept_task_outlives_the_finished_limit_until_released() {
    let store = InMemoryTaskStore::new().finished_task_limit(1);
    for t in ["keyed", "t2", "t3"] {
        store.insert(task(t, "c1")).await.expect("insert");
    }
    store.keep(&TaskId::new("keyed"));
    store.keep(&TaskId::new("keyed"));
    for t in ["keyed", "t2", "t3"] {
        end(&store, t).await;
    }
    let found = |id: &'static str| {
        let store = &store;
        async move {
            store
                .get(&TaskId::new(id), Some(0))
                .await
                .expect("get")
                .is_some()
        }
    };
    assert!(found("keyed").await, "kept past the limit");
    assert!(!found("t2").await, "not kept: forgotten as usual");
    assert!(found("t3").await);
    store.release(&TaskId::new("keyed"));
    assert!(found("keyed").await, "one key still names it");
    store.release(&TaskId::new("keyed"));
    assert!(!found("keyed").await, "forgotten with its last key");
    assert!(store.tasks.iter().all(|stored| stored.keys == 0));
    // A release of a task that was never kept, or of a live one, changes nothing.
    store.insert(task("live", "c1")).await.expect("insert");
    store.keep(&TaskId::new("live"));
    store.release(&TaskId::new("live"));
    store.release(&TaskId::new("live"));
    store.release(&TaskId::new("nothing"));
    assert!(found("live").await);
    // A keep of a task not stored keeps nothing: stored later, the task goes with
    // the limit as any other.
    store.keep(&TaskId::new("later"));
    store.insert(task("later", "c1")).await.expect("insert");
    end(&store, "later").await;
    end(&store, "live").await;
    assert!(
        !found("later").await,
        "not kept by a keep made before it was stored"
    );
    assert!(found("live").await);
}

#[tokio::test]
async fn a_restored_store_still_forgets_a_kept_task_past_the_limit_with_its_last_key() {
    let store = InMemoryTaskStore::new().finished_task_limit(1);
    for t in ["keyed", "other"] {
        store.insert(task(t, "c1")).await.expect("insert");
    }
    let keyed = TaskId::new("keyed");
    store.remember_key("k1", &keyed).await.expect("key");
    store
        .remember_key("k2", &TaskId::new("other"))
        .await
        .expect("key");
    // Once `other` ends, `keyed` is past the limit (kept by its key), `other` is not.
    for t in ["keyed", "other"] {
        end(&store, t).await;
    }
    let restored = InMemoryTaskStore::new().finished_task_limit(1);
    restored.restore(store.image());
    for t in ["keyed", "other"] {
        let found = restored.get(&TaskId::new(t), None).await.expect("get");
        assert!(found.is_some(), "{t} came back with its key");
    }
    restored.forget_key("k1").await.expect("unkey");
    assert!(
        restored.get(&keyed, None).await.expect("get").is_none(),
        "forgotten with its last key, as the limit had passed it by"
    );
    restored.forget_key("k2").await.expect("unkey");
    assert!(
        restored
            .get(&TaskId::new("other"), None)
            .await
            .expect("get")
            .is_some(),
        "still among the ended tasks the limit keeps"
    );
}

async fn listed(store: &InMemoryTaskStore, size: usize, before: Option<u64>) -> TaskPage {
    let everything = |_: &Task, _: Option<&TaskOwner>| true;
    store.list(&everything, size, before).await.expect("listed")
}

fn listed_ids(page: &TaskPage) -> Vec<&str> {
    page.tasks.iter().map(|task| task.id.as_str()).collect()
}

#[tokio::test]
async fn list_pages_by_the_last_status_change_and_forgets_what_the_store_forgets() {
    let store = InMemoryTaskStore::new().finished_task_limit(1);
    for id in ["a", "b", "c"] {
        store.insert(task(id, "ctx")).await.expect("inserted");
    }
    // `a` changes last, so it comes first.
    store
        .set_status(&TaskId::new("a"), TaskStatus::new(TaskState::Working))
        .await
        .expect("set");
    let first = listed(&store, 2, None).await;
    assert_eq!(listed_ids(&first), ["a", "c"]);
    assert_eq!(first.total, 3);
    let second = listed(&store, 2, first.next).await;
    assert_eq!(listed_ids(&second), ["b"]);
    assert_eq!((second.next, second.total), (None, 3));

    // Past the finished-task limit the first task to end is forgotten, and unlisted.
    for id in ["b", "c"] {
        store
            .set_status(&TaskId::new(id), TaskStatus::new(TaskState::Completed))
            .await
            .expect("set");
    }
    let page = listed(&store, 10, None).await;
    assert_eq!(listed_ids(&page), ["c", "a"]);
    let only_b = |task: &Task, _: Option<&TaskOwner>| task.id.as_str() == "b";
    let none = store.list(&only_b, 10, None).await.expect("listed");
    assert_eq!((none.tasks.len(), none.total), (0, 0));
}

/// Task `t{n}`, numbered `n` among created tasks.
fn member(n: u64, principal: Option<&str>) -> Member {
    Member {
        joined: n,
        id: TaskId::new(format!("t{n}")),
        principal: principal.map(Arc::from),
    }
}

fn member_ids(conversation: &Conversation) -> Vec<String> {
    conversation
        .ids()
        .map(|id| id.as_str().to_owned())
        .collect()
}

#[test]
fn a_conversation_counts_its_principals_through_pushes_evictions_and_removals() {
    let id = |n: u32| TaskId::new(format!("t{n}"));
    let mut conversation = Conversation::default();
    conversation.push(member(1, Some("alice")), 3);
    conversation.push(member(2, None), 3);
    assert_eq!(conversation.principal().as_deref(), Some("alice"));
    conversation.push(member(3, None), 3);
    // Past the limit the oldest task, alice's, leaves, and her claim with it.
    conversation.push(member(4, None), 3);
    assert_eq!(conversation.with_principal, 0);
    assert_eq!(conversation.principal(), None);
    conversation.push(member(5, Some("bob")), 3);
    conversation.push(member(6, None), 3);
    assert_eq!(conversation.principal().as_deref(), Some("bob"));
    conversation.remove(&id(5), 5);
    assert_eq!(conversation.principal(), None);
    conversation.remove(&id(99), 99);
    assert_eq!(conversation.ids().count(), 2);
}

#[test]
fn a_conversation_removes_the_named_task_wherever_it_sits_and_nothing_else() {
    let id = |n: u32| TaskId::new(format!("t{n}"));
    let mut conversation = Conversation::default();
    for n in 1..=6 {
        conversation.push(member(n, None), 5);
    }
    assert_eq!(member_ids(&conversation), ["t2", "t3", "t4", "t5", "t6"]);
    // t1 was let go of when t6 came: forgetting it later changes nothing.
    conversation.remove(&id(1), 1);
    assert_eq!(member_ids(&conversation), ["t2", "t3", "t4", "t5", "t6"]);
    conversation.remove(&id(4), 4);
    conversation.remove(&id(2), 2);
    conversation.remove(&id(6), 6);
    assert_eq!(member_ids(&conversation), ["t3", "t5"]);
    // Another task under a member's number, or a number never here, removes nothing.
    conversation.remove(&TaskId::new("t"), 3);
    conversation.remove(&id(3), 4);
    assert_eq!(member_ids(&conversation), ["t3", "t5"]);
}

#[test]
fn a_conversation_keeps_its_tasks_in_creation_order_when_they_join_out_of_it() {
    // Two tasks of one conversation created at once can join in the other order
    // than they were numbered; the binary search of `remove` needs the order.
    let mut conversation = Conversation::default();
    for n in [1, 2, 5, 3, 4] {
        conversation.push(member(n, None), 4);
    }
    assert_eq!(member_ids(&conversation), ["t2", "t3", "t4", "t5"]);
    conversation.push(member(0, None), 4);
    // Older than every member: it joins first, and is the one the limit drops.
    assert_eq!(member_ids(&conversation), ["t2", "t3", "t4", "t5"]);
    for n in [3, 5, 2, 4] {
        conversation.remove(&TaskId::new(format!("t{n}")), n);
    }
    assert!(conversation.is_empty());
}

#[tokio::test]
async fn the_calls_done_at_once_are_the_store_calls_reached_through_dyn() {
    let memory = Arc::new(InMemoryTaskStore::new());
    let store: Arc<dyn TaskStore> = memory.clone();
    let at_once = store
        .in_memory()
        .expect("the in-memory store is done at once");
    assert!(std::ptr::eq(at_once, &*memory));

    let owner = TaskOwner::new("echo", Some(Arc::from("alice")));
    at_once
        .insert_owned_now(task("t1", "c1"), owner)
        .expect("inserted");
    let update = TaskStatusUpdateEvent::new(
        TaskId::new("t1"),
        ContextId::new("c1"),
        TaskStatus::new(TaskState::Working),
        false,
    );
    let (previous, seq) = at_once
        .set_status_logged_now(&TaskId::new("t1"), update)
        .expect("set");
    assert_eq!((previous, seq), (TaskState::Submitted, Some(1)));
    at_once
        .append_history_now(&TaskId::new("t1"), Arc::new(message("hi")))
        .expect("appended");
    let artifact = Arc::new(Artifact::new("a1", vec![Part::text("out")]));
    let event = StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent::new(
        TaskId::new("t1"),
        ContextId::new("c1"),
        Arc::clone(&artifact),
    ));
    let (_, seq) = at_once
        .put_artifact_logged_now(&TaskId::new("t1"), artifact, false, &event)
        .expect("put");
    assert_eq!(seq, Some(2));
    let previous = at_once
        .set_status_now(&TaskId::new("t1"), TaskStatus::new(TaskState::Completed))
        .expect("set");
    assert_eq!(previous, TaskState::Working);

    // What was done at once is what the async calls read, and the other way round.
    let read = store
        .get(&TaskId::new("t1"), None)
        .await
        .expect("read")
        .expect("there");
    assert_eq!(
        Some(read.clone()),
        at_once.get_now(&TaskId::new("t1"), None)
    );
    assert_eq!(read.status.state, TaskState::Completed);
    assert_eq!(read.history.as_ref().map(Vec::len), Some(1));
    assert_eq!(read.artifacts.as_ref().map(Vec::len), Some(1));
    assert_eq!(
        at_once
            .context_principal_now(&ContextId::new("c1"))
            .as_deref(),
        Some("alice")
    );
    let logged = store
        .events_after(&TaskId::new("t1"), 0)
        .await
        .expect("log");
    assert_eq!(
        logged.iter().map(|(seq, _)| *seq).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_eq!(
        at_once
            .get_now(&TaskId::new("t1"), Some(0))
            .and_then(|t| t.history),
        Some(Vec::new())
    );
}

#[test]
fn a_task_that_ran_keeps_its_two_events_without_spare_room() {
    // Ten thousand ended tasks are kept by default: room for four events each,
    // where a turn logs two, was ~350 bytes apiece held for nothing.
    let store = InMemoryTaskStore::new();
    store
        .insert_owned_now(task("t1", "c1"), TaskOwner::new("echo", None))
        .expect("inserted");
    for (state, last) in [(TaskState::Working, false), (TaskState::Completed, true)] {
        let update = TaskStatusUpdateEvent::new(
            TaskId::new("t1"),
            ContextId::new("c1"),
            TaskStatus::new(state),
            last,
        );
        store
            .set_status_logged_now(&TaskId::new("t1"), update)
            .expect("set");
    }
    let entry = store.tasks.get(&TaskId::new("t1")).expect("kept");
    assert_eq!(entry.events.len(), 2);
    assert!(
        entry.events.capacity() < 4,
        "grown to room for {}",
        entry.events.capacity()
    );
    drop(entry);

    // A task stored already ended logs nothing, and gets no room for it.
    let mut ended = task("t2", "c1");
    ended.status = TaskStatus::new(TaskState::Completed);
    store
        .insert_owned_now(ended, TaskOwner::new("echo", None))
        .expect("inserted");
    let entry = store.tasks.get(&TaskId::new("t2")).expect("kept");
    assert_eq!(entry.events.capacity(), 0);
}

#[tokio::test]
async fn a_status_written_with_its_read_returns_the_task_as_the_write_left_it() {
    let store = InMemoryTaskStore::new();
    store.insert(task("t1", "c1")).await.expect("inserted");
    store
        .append_history_now(&TaskId::new("t1"), Arc::new(message("hi")))
        .expect("appended");
    let update = |state| {
        TaskStatusUpdateEvent::new(
            TaskId::new("t1"),
            ContextId::new("c1"),
            TaskStatus::new(state),
            state.is_terminal(),
        )
    };

    let (previous, seq, read) = store
        .set_status_logged_read_now(&TaskId::new("t1"), update(TaskState::Working))
        .expect("set");
    assert_eq!((previous, seq), (TaskState::Submitted, Some(1)));
    assert_eq!(read.status.state, TaskState::Working);

    // The task a `get` right after the write returns, whole.
    let (previous, seq, read) = store
        .set_status_logged_read_now(&TaskId::new("t1"), update(TaskState::Completed))
        .expect("set");
    assert_eq!((previous, seq), (TaskState::Working, Some(2)));
    assert_eq!(read.status.state, TaskState::Completed);
    assert_eq!(Some(read), store.get_now(&TaskId::new("t1"), None));

    // An ended task is refused as by the write alone.
    let refused = store.set_status_logged_read_now(&TaskId::new("t1"), update(TaskState::Failed));
    assert!(matches!(refused, Err(StoreError::Terminal { .. })));
}
