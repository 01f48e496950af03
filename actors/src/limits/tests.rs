use super::*;

#[tokio::test]
async fn permits_up_to_the_limit_then_queues_then_rejects() {
    let limiter = Arc::new(Limiter::new(LimitScope::Agent, 2, 1));
    let a = limiter.acquire().await.expect("first permit");
    let _b = limiter.acquire().await.expect("second permit");

    // The third waits in the queue of one...
    let waiter = tokio::spawn({
        let limiter = Arc::clone(&limiter);
        async move { limiter.acquire().await.map(drop) }
    });
    while limiter.waiting.load(Ordering::Acquire) == 0 {
        tokio::task::yield_now().await;
    }
    // ...and the fourth finds the queue full.
    let err = limiter.acquire().await.expect_err("queue is full");
    assert!(matches!(
        err,
        Error::Busy {
            scope: LimitScope::Agent,
            queue: 1
        }
    ));

    drop(a);
    waiter
        .await
        .expect("join")
        .expect("queued send gets a permit");
    assert_eq!(limiter.waiting.load(Ordering::Acquire), 0);
}

#[tokio::test]
async fn a_dropped_waiter_leaves_the_queue() {
    let limiter = Limiter::new(LimitScope::Session, 1, 1);
    let _held = limiter.acquire().await.expect("permit");
    {
        let fut = limiter.acquire();
        tokio::pin!(fut);
        assert!(futures::poll!(&mut fut).is_pending());
        assert_eq!(limiter.waiting.load(Ordering::Acquire), 1);
    }
    assert_eq!(limiter.waiting.load(Ordering::Acquire), 0);
}

#[tokio::test]
async fn a_zero_queue_rejects_as_soon_as_the_limit_is_reached() {
    let limiter = Limiter::new(LimitScope::Global, 1, 0);
    let _held = limiter.acquire().await.expect("permit");
    assert!(matches!(limiter.acquire().await, Err(Error::Busy { .. })));
    assert!(!limiter.is_idle());
}
