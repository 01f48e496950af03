use super::*;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Waits for `wait`, failing the test if it never ends: under paused time the clock
/// jumps to the deadline as soon as nothing else can run, so a permit a bug lost fails
/// the test at once instead of hanging the suite.
async fn ends<F: Future>(wait: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), wait)
        .await
        .expect("a wait that had to end did not: a permit was lost")
}

#[tokio::test(start_paused = true)]
async fn permits_up_to_the_limit_then_queues_then_rejects() {
    let limiter = Arc::new(ScopedLimiter::new(LimitScope::Agent, 2, 1));
    let a = limiter.acquire().await.expect("first permit");
    let _b = limiter.acquire().await.expect("second permit");

    // The third waits in the queue of one...
    let waiter = tokio::spawn({
        let limiter = Arc::clone(&limiter);
        async move { limiter.acquire().await.map(drop) }
    });
    ends(async {
        while limiter.waiting() == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await;
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
    ends(waiter)
        .await
        .expect("join")
        .expect("queued send gets a permit");
    assert_eq!(limiter.waiting(), 0);
}

#[tokio::test]
async fn a_dropped_waiter_leaves_the_queue() {
    let limiter = Arc::new(ScopedLimiter::new(LimitScope::Session, 1, 1));
    let _held = limiter.acquire().await.expect("permit");
    {
        let fut = limiter.acquire();
        tokio::pin!(fut);
        assert!(futures::poll!(&mut fut).is_pending());
        assert_eq!(limiter.waiting(), 1);
    }
    assert_eq!(limiter.waiting(), 0);
}

#[tokio::test]
async fn a_zero_queue_rejects_as_soon_as_the_limit_is_reached() {
    let limiter = Arc::new(ScopedLimiter::new(LimitScope::Global, 1, 0));
    let _held = limiter.acquire().await.expect("permit");
    assert!(matches!(limiter.acquire().await, Err(Error::Busy { .. })));
    assert!(!limiter.is_idle());
}

#[tokio::test(start_paused = true)]
async fn enqueued_places_are_served_in_the_order_they_were_taken() {
    let limiter = Arc::new(ScopedLimiter::new(LimitScope::Session, 1, 8));
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
    assert_eq!(limiter.waiting(), 4);
    // Spawned in reverse: the tasks may first run in any order, yet each is served in
    // the order its place was taken.
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut waiters = Vec::new();
    for (i, place) in places.into_iter().enumerate().rev() {
        let order = Arc::clone(&order);
        waiters.push(tokio::spawn(async move {
            let permit = ends(place.permit()).await.expect("served");
            order.lock().expect("not poisoned").push(i);
            tokio::task::yield_now().await;
            drop(permit);
        }));
    }
    tokio::task::yield_now().await;
    drop(first);
    for waiter in waiters {
        ends(waiter).await.expect("join");
    }
    assert_eq!(*order.lock().expect("not poisoned"), [0, 1, 2, 3]);
    assert_eq!(limiter.waiting(), 0);
    assert!(limiter.is_idle());
}

#[tokio::test]
async fn enqueue_refuses_past_the_line_and_a_dropped_place_leaves_it() {
    let limiter = Arc::new(ScopedLimiter::new(LimitScope::Session, 1, 1));
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
    assert_eq!(limiter.waiting(), 1);
    drop(place);
    assert_eq!(limiter.waiting(), 0);
    assert!(matches!(limiter.enqueue(), Ok(Place::Queued(_))));
}

#[tokio::test]
async fn a_limit_or_a_line_past_four_billion_is_as_good_as_none() {
    let limiter = Arc::new(ScopedLimiter::new(
        LimitScope::Global,
        usize::MAX,
        usize::MAX,
    ));
    assert_eq!(limiter.limit, u32::MAX);
    assert_eq!(limiter.queue, u32::MAX);
    let held: Vec<Permit> = (0..1_000)
        .map(|_| limiter.try_acquire().expect("far below the limit"))
        .collect();
    assert!(!limiter.is_idle());
    drop(held);
    assert!(limiter.is_idle(), "every permit given back");
    // Zero is raised to one: a limit that refused everything forever would be a bug.
    let one = Arc::new(ScopedLimiter::new(LimitScope::Agent, 0, 0));
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

/// A limiter of one permit, that permit held, and a place in line behind it.
fn held_and_in_line() -> (Arc<ScopedLimiter>, Permit, Queued) {
    let limiter = Arc::new(ScopedLimiter::new(LimitScope::Session, 1, 4));
    let held = limiter.try_acquire().expect("the free permit");
    let Place::Queued(place) = limiter.enqueue().expect("room in line") else {
        panic!("the permit is held");
    };
    (limiter, held, place)
}

#[tokio::test(start_paused = true)]
async fn a_release_goes_to_the_line_and_nobody_overtakes_it() {
    let (limiter, held, place) = held_and_in_line();
    drop(held);
    // The permit went to the place in line, not back to the free count.
    assert_eq!(free(limiter.state.load(Ordering::Acquire)), 0);
    assert!(limiter.try_acquire().is_none(), "a send overtook the line");
    let permit = ends(place.permit()).await.expect("served");
    assert_eq!(limiter.waiting(), 0);
    drop(permit);
    // Nobody waits now: the permit is a count again.
    assert_eq!(free(limiter.state.load(Ordering::Acquire)), 1);
    assert!(limiter.is_idle());
}

#[tokio::test]
async fn a_place_given_up_after_its_permit_came_leaves_the_permit_for_the_next() {
    let (limiter, held, place) = held_and_in_line();
    drop(held);
    // Handed to the place, which is dropped without taking it.
    drop(place);
    assert_eq!(limiter.waiting(), 0);
    assert!(limiter.is_idle(), "the permit was lost");
    assert!(!limiter.is_saturated());
    let again = limiter.try_acquire().expect("the permit the place left");
    assert!(limiter.try_acquire().is_none(), "a permit was made twice");
    drop(again);
    assert!(limiter.is_idle());
}

#[tokio::test]
async fn a_place_taken_while_a_permit_is_free_is_served_at_once() {
    let limiter = Arc::new(ScopedLimiter::new(LimitScope::Global, 2, 4));
    let _held = limiter.try_acquire().expect("one of two");
    // A place that finds the line empty and a permit free takes it.
    assert!(matches!(limiter.enqueue(), Ok(Place::Ready(_))));
}

/// Many sends on two workers take, hold and give back permits of a small limit, some
/// giving up while they wait (before or after their permit comes): never more than the
/// limit held at once, nobody left waiting forever, and every permit back at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permits_are_never_more_than_the_limit_nor_lost_under_contention() {
    const LIMIT: usize = 3;
    let limiter = Arc::new(ScopedLimiter::new(LimitScope::Agent, LIMIT, 10_000));
    let held = Arc::new(AtomicU32::new(0));
    let mut senders = Vec::new();
    for sender in 0..8_u32 {
        let limiter = Arc::clone(&limiter);
        let held = Arc::clone(&held);
        senders.push(tokio::spawn(async move {
            for round in 0..2_000_u32 {
                let wait = limiter.acquire();
                let permit = if (round + sender) % 5 == 0 {
                    // Gives up if the permit does not come by its second poll.
                    let mut wait = std::pin::pin!(wait);
                    match futures::poll!(wait.as_mut()) {
                        std::task::Poll::Ready(permit) => permit,
                        std::task::Poll::Pending => {
                            tokio::task::yield_now().await;
                            match futures::poll!(wait.as_mut()) {
                                std::task::Poll::Ready(permit) => permit,
                                std::task::Poll::Pending => continue,
                            }
                        }
                    }
                } else {
                    wait.await
                };
                let permit = permit.expect("the line is long enough");
                let now = held.fetch_add(1, Ordering::SeqCst) + 1;
                assert!(now as usize <= LIMIT, "{now} permits held at once");
                if round % 3 == 0 {
                    tokio::task::yield_now().await;
                }
                held.fetch_sub(1, Ordering::SeqCst);
                drop(permit);
            }
        }));
    }
    let all = futures::future::join_all(senders);
    let joined = tokio::time::timeout(Duration::from_secs(20), all)
        .await
        .expect("a send waited forever for a permit");
    for sender in joined {
        sender.expect("a sender panicked");
    }
    assert_eq!(limiter.waiting(), 0);
    assert!(limiter.is_idle(), "permits were lost");
    let every: Vec<Permit> = (0..LIMIT)
        .map(|_| limiter.try_acquire().expect("every permit is back"))
        .collect();
    assert!(limiter.try_acquire().is_none(), "a permit was made twice");
    drop(every);
}

/// A release and a place taken in line at the same moment, on two threads, many times:
/// whichever comes first, the permit ends with the place (served at once or handed to
/// it in line), never left in the free count while the place waits.
#[test]
fn a_release_racing_a_place_in_line_leaves_the_permit_with_the_place() {
    use futures::FutureExt as _;

    let limiter = Arc::new(ScopedLimiter::new(LimitScope::Session, 1, 4));
    let go = Arc::new(AtomicU32::new(0));
    let released = Arc::new(AtomicU32::new(0));
    let (hand, held) = std::sync::mpsc::channel::<Permit>();
    let releaser = std::thread::spawn({
        let go = Arc::clone(&go);
        let released = Arc::clone(&released);
        move || {
            let mut round = 0;
            while let Ok(permit) = held.recv() {
                round += 1;
                while go.load(Ordering::Acquire) != round {
                    std::hint::spin_loop();
                }
                drop(permit);
                released.store(round, Ordering::Release);
            }
        }
    });
    for round in 1..=20_000 {
        hand.send(
            limiter
                .try_acquire()
                .expect("the permit is free between rounds"),
        )
        .expect("the releaser runs");
        go.store(round, Ordering::Release);
        let place = limiter.enqueue().expect("room in line");
        while released.load(Ordering::Acquire) != round {
            std::hint::spin_loop();
        }
        let permit = match place {
            Place::Ready(permit) => permit,
            Place::Queued(place) => place
                .permit()
                .now_or_never()
                .unwrap_or_else(|| panic!("round {round}: the permit was left free"))
                .expect("served"),
        };
        drop(permit);
    }
    drop(hand);
    releaser.join().expect("the releaser did not panic");
    assert!(limiter.is_idle());
}
