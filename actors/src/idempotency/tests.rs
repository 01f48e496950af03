use std::sync::Arc;

use agentyard_transport::ContextId;
use agentyard_transport::a2a::{Task, TaskState, TaskStatus};

use super::*;
use crate::store::InMemoryTaskStore;

fn cache() -> IdempotencyCache {
    IdempotencyCache::new(Duration::from_secs(60), 100)
}

#[tokio::test]
async fn a_settled_key_returns_the_first_task() {
    let cache = cache();
    let now = Instant::now();
    let Claim::First(guard) = cache.claim("k", now).await else {
        panic!("a new key is first");
    };
    guard.settle(&TaskId::new("t1")).await;
    match cache.claim("k", now).await {
        Claim::Duplicate(id) => assert_eq!(id, TaskId::new("t1")),
        other => panic!("expected duplicate, got {other:?}"),
    }
}

#[tokio::test]
async fn a_key_expires_after_its_ttl() {
    let cache = IdempotencyCache::new(Duration::from_secs(1), 100);
    let now = Instant::now();
    let Claim::First(guard) = cache.claim("k", now).await else {
        panic!("first");
    };
    guard.settle(&TaskId::new("t1")).await;
    let later = Instant::now() + Duration::from_secs(2);
    assert!(matches!(cache.claim("k", later).await, Claim::First(_)));
}

#[tokio::test]
async fn a_concurrent_repeat_joins_the_send_in_flight() {
    let cache = Arc::new(cache());
    let now = Instant::now();
    let Claim::First(guard) = cache.claim("k", now).await else {
        panic!("first");
    };
    let waiter = tokio::spawn({
        let cache = Arc::clone(&cache);
        async move {
            match cache.claim("k", now).await {
                Claim::Duplicate(id) => id,
                other => panic!("expected duplicate, got {other:?}"),
            }
        }
    });
    tokio::task::yield_now().await;
    guard.settle(&TaskId::new("t9")).await;
    assert_eq!(waiter.await.expect("join"), TaskId::new("t9"));
}

#[tokio::test]
async fn a_failed_first_send_releases_the_key_and_tells_the_waiters() {
    let cache = Arc::new(cache());
    let now = Instant::now();
    let Claim::First(guard) = cache.claim("k", now).await else {
        panic!("first");
    };
    let waiter = tokio::spawn({
        let cache = Arc::clone(&cache);
        async move {
            match cache.claim("k", now).await {
                Claim::DuplicateFailed(e) => e,
                other => panic!("expected the first send's failure, got {other:?}"),
            }
        }
    });
    tokio::task::yield_now().await;
    let busy = Failure::Busy {
        scope: LimitScope::Agent,
        queue: 3,
    };
    guard.fail(busy.clone());
    assert_eq!(waiter.await.expect("join"), busy);
    assert!(matches!(
        busy.into_error("k"),
        Error::Busy {
            scope: LimitScope::Agent,
            queue: 3
        }
    ));
    assert!(matches!(cache.claim("k", now).await, Claim::First(_)));
}

#[tokio::test]
async fn a_dropped_guard_releases_the_key() {
    let cache = cache();
    let now = Instant::now();
    match cache.claim("k", now).await {
        Claim::First(guard) => drop(guard),
        other => panic!("expected first, got {other:?}"),
    }
    assert!(matches!(cache.claim("k", now).await, Claim::First(_)));
}

#[tokio::test]
async fn the_cache_never_holds_more_than_its_capacity_of_settled_keys() {
    let cache = IdempotencyCache::new(Duration::from_secs(3600), 10);
    let now = Instant::now();
    for i in 0..1000 {
        let Claim::First(guard) = cache.claim(&format!("k{i}"), now).await else {
            panic!("first");
        };
        guard.settle(&TaskId::new(format!("t{i}"))).await;
    }
    assert!(cache.len() <= 11, "held {}", cache.len());
    // The newest key is still remembered.
    assert!(matches!(
        cache.claim("k999", now).await,
        Claim::Duplicate(_)
    ));
}

#[test]
fn callers_never_share_a_scope() {
    let k = |caller| scope("echo", caller, "k");
    assert_ne!(k(Caller::Principal("alice")), k(Caller::Principal("bob")));
    assert_ne!(k(Caller::Principal("alice")), k(Caller::Sender("alice")));
    assert_ne!(k(Caller::Principal("alice")), k(Caller::Anonymous));
    assert_ne!(k(Caller::Sender("")), k(Caller::Anonymous));
    assert_ne!(
        scope("a", Caller::Anonymous, "k"),
        scope("b", Caller::Anonymous, "k")
    );
    assert_eq!(k(Caller::Principal("alice")), k(Caller::Principal("alice")));
}

#[test]
fn a_scoped_key_is_spelled_as_the_stores_remember_it() {
    // Durable stores keep scoped keys across restarts and upgrades: the spelling
    // may not change, however it is written.
    assert_eq!(
        scope("echo", Caller::Principal("alice"), "k-1"),
        "echo\u{1f}palice\u{1f}k-1"
    );
    assert_eq!(
        scope("echo", Caller::Sender("a"), "k"),
        "echo\u{1f}sa\u{1f}k"
    );
    assert_eq!(scope("echo", Caller::Anonymous, "k"), "echo\u{1f}-\u{1f}k");
}

async fn ended(store: &InMemoryTaskStore, id: &str) {
    let task = Task::new(
        TaskId::new(id),
        ContextId::new("c"),
        TaskStatus::new(TaskState::Completed),
    );
    store.insert(task).await.expect("insert");
}

async fn stored(store: &InMemoryTaskStore, id: &str) -> bool {
    store
        .get(&TaskId::new(id), Some(0))
        .await
        .expect("get")
        .is_some()
}

#[tokio::test]
async fn the_task_of_a_remembered_key_is_kept_until_the_key_goes() {
    let store = Arc::new(InMemoryTaskStore::new().finished_task_limit(1));
    let cache = IdempotencyCache::new(Duration::from_secs(3600), 2)
        .keeping(Arc::clone(&store) as Arc<dyn TaskStore>);
    let now = Instant::now();
    let Claim::First(guard) = cache.claim("k1", now).await else {
        panic!("first");
    };
    ended(&store, "t1").await;
    guard.settle(&TaskId::new("t1")).await;
    // More ended tasks than the store keeps: t1 stays, its key still names it.
    for t in ["t2", "t3"] {
        ended(&store, t).await;
    }
    assert!(
        stored(&store, "t1").await,
        "kept while its key is remembered"
    );
    assert!(!stored(&store, "t2").await, "an unkeyed task goes as usual");
    assert!(matches!(cache.claim("k1", now).await, Claim::Duplicate(_)));
    // Two newer keys push k1 out of the cache: its task may go now.
    for key in ["k2", "k3"] {
        let Claim::First(guard) = cache.claim(key, now).await else {
            panic!("first");
        };
        guard.settle(&TaskId::new("t3")).await;
    }
    assert!(!stored(&store, "t1").await, "forgotten with its key");
    assert!(stored(&store, "t3").await, "t3 is named by k3 still");
}

#[tokio::test(start_paused = true)]
async fn an_expired_entry_never_evicts_the_key_claimed_again_since() {
    let cache = IdempotencyCache::new(Duration::from_secs(10), 100);
    let Claim::First(guard) = cache.claim("k", Instant::now()).await else {
        panic!("first");
    };
    guard.settle(&TaskId::new("t1")).await;
    tokio::time::advance(Duration::from_secs(11)).await;
    let Claim::First(guard) = cache.claim("k", Instant::now()).await else {
        panic!("an expired key is new again");
    };
    guard.settle(&TaskId::new("t2")).await;
    tokio::time::advance(Duration::from_secs(1)).await;
    // Another key's claim sweeps the first entry of `k`, which has expired; the
    // second claim of `k` is 1 s old and must stay.
    let Claim::First(_other) = cache.claim("other", Instant::now()).await else {
        panic!("first");
    };
    match cache.claim("k", Instant::now()).await {
        Claim::Duplicate(id) => assert_eq!(id, TaskId::new("t2")),
        other => panic!("expected the second task, got {other:?}"),
    }
}
