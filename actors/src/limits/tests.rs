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
    let limiter = Arc::new(Limiter::new(LimitScope::Session, 1, 1));
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
    let limiter = Arc::new(Limiter::new(LimitScope::Global, 1, 0));
    let _held = limiter.acquire().await.expect("permit");
    assert!(matches!(limiter.acquire().await, Err(Error::Busy { .. })));
    assert!(!limiter.is_idle());
}

#[tokio::test]
async fn enqueued_places_are_served_in_the_order_they_were_taken() {
    let limiter = Arc::new(Limiter::new(LimitScope::Session, 1, 8));
    let first = match limiter.enqueue().expect("a free permit") {
        Place::Ready(permit) => permit,
        Place::Queued(_) => panic!("the first place is served at once"),
    };
    let places: Vec<Queued> = (0..4)
        .map(|_| match limiter.enqueue().expect("room in line") {
            Place::Queued(place) => place,
            Place::Ready(_) => panic!("the permit is taken"),
        })
        .collect();
    assert_eq!(limiter.waiting.load(Ordering::Acquire), 4);
    // Spawned in reverse: the tasks may first run in any order, yet each is served in
    // the order its place was taken.
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut waiters = Vec::new();
    for (i, place) in places.into_iter().enumerate().rev() {
        let order = Arc::clone(&order);
        waiters.push(tokio::spawn(async move {
            let permit = place.permit().await.expect("served");
            order.lock().expect("not poisoned").push(i);
            tokio::task::yield_now().await;
            drop(permit);
        }));
    }
    tokio::task::yield_now().await;
    drop(first);
    for waiter in waiters {
        waiter.await.expect("join");
    }
    assert_eq!(*order.lock().expect("not poisoned"), [0, 1, 2, 3]);
    assert_eq!(limiter.waiting.load(Ordering::Acquire), 0);
    assert!(limiter.is_idle());
}

#[tokio::test]
async fn enqueue_refuses_past_the_line_and_a_dropped_place_leaves_it() {
    let limiter = Arc::new(Limiter::new(LimitScope::Session, 1, 1));
    let _held = limiter.enqueue().expect("a free permit");
    let place = limiter.enqueue().expect("room for one");
    assert!(matches!(place, Place::Queued(_)));
    assert!(matches!(
        limiter.enqueue(),
        Err(Error::Busy {
            scope: LimitScope::Session,
            queue: 1
        })
    ));
    assert_eq!(limiter.waiting.load(Ordering::Acquire), 1);
    drop(place);
    assert_eq!(limiter.waiting.load(Ordering::Acquire), 0);
    assert!(matches!(limiter.enqueue(), Ok(Place::Queued(_))));
}

#[tokio::test]
async fn a_limit_or_a_line_past_four_billion_is_as_good_as_none() {
    let limiter = Arc::new(Limiter::new(LimitScope::Global, usize::MAX, usize::MAX));
    assert_eq!(limiter.limit, u32::MAX);
    assert_eq!(limiter.queue, u32::MAX);
    let held: Vec<Permit> = (0..1_000)
        .map(|_| limiter.try_acquire().expect("far below the limit"))
        .collect();
    assert!(!limiter.is_idle());
    drop(held);
    assert!(limiter.is_idle(), "every permit given back");
    // Zero is raised to one: a limit that refused everything forever would be a bug.
    let one = Arc::new(Limiter::new(LimitScope::Agent, 0, 0));
    let _only = one.try_acquire().expect("one permit");
    assert!(one.try_acquire().is_none());
    assert!(matches!(
        one.acquire().await,
        Err(Error::Busy {
            scope: LimitScope::Agent,
            queue: 0
        })
    ));
}
