use std::time::Duration;

use super::*;

#[test]
fn a_cancel_is_seen_by_every_copy_and_set_once() {
    let cancel = Cancel::new();
    let copy = cancel.clone();
    assert!(!copy.is_cancelled());
    copy.cancel();
    assert!(cancel.is_cancelled() && copy.is_cancelled());
    cancel.cancel();
    assert!(cancel.is_cancelled(), "a second cancel changes nothing");
}

#[tokio::test(start_paused = true)]
async fn a_waiter_wakes_when_canceled_and_not_before() {
    let cancel = Cancel::new();
    let waiter = tokio::spawn({
        let cancel = cancel.clone();
        async move { cancel.cancelled().await }
    });
    tokio::task::yield_now().await;
    assert!(
        tokio::time::timeout(Duration::from_secs(1), cancel.cancelled())
            .await
            .is_err(),
        "nothing set: no wake-up"
    );
    assert!(!waiter.is_finished());
    cancel.cancel();
    tokio::time::timeout(Duration::from_secs(1), waiter)
        .await
        .expect("woken")
        .expect("joined");
}

#[tokio::test]
async fn a_wait_that_starts_after_the_cancel_ends_at_once() {
    let cancel = Cancel::new();
    cancel.cancel();
    cancel.clone().cancelled().await;
}

/// A cancel on one thread racing a wait on another, many times: every wait ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_racing_the_start_of_a_wait_is_never_missed() {
    for _ in 0..2_000 {
        let cancel = Cancel::new();
        let waiter = tokio::spawn({
            let cancel = cancel.clone();
            async move { cancel.cancelled().await }
        });
        let canceller = std::thread::spawn({
            let cancel = cancel.clone();
            move || cancel.cancel()
        });
        tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("the wait ended")
            .expect("joined");
        canceller.join().expect("the cancel ran");
    }
}
