use std::sync::Arc;

use super::*;

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
    guard.settle(&TaskId::new("t1"));
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
    guard.settle(&TaskId::new("t1"));
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
    guard.settle(&TaskId::new("t9"));
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
        guard.settle(&TaskId::new(format!("t{i}")));
    }
    assert!(cache.len() <= 11, "held {}", cache.len());
    // The newest key is still remembered.
    assert!(matches!(
        cache.claim("k999", now).await,
        Claim::Duplicate(_)
    ));
}
