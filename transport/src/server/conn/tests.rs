//! The watchdog on paused time: a connection closes at its deadline, not before and
//! not a timer period late, and requests that follow each other wake nothing.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::FutureExt as _;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{Activity, Graceful, Limits, MIN_PERIOD, watch};

/// A connection that never ends by itself: only the watchdog ends it.
struct Open;

impl Future for Open {
    type Output = hyper::Result<()>;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Pending
    }
}

impl Graceful for Open {
    fn shut_down(self: Pin<&mut Self>) {}
}

fn limits(header_read_timeout: Duration, idle_timeout: Duration) -> Limits {
    Limits::new(header_read_timeout, idle_timeout)
}

/// The server's defaults (10 s for a head, 75 s idle).
const DEFAULTS: Limits = Limits {
    header_read_timeout: Duration::from_secs(10),
    idle_timeout: Duration::from_secs(75),
};

/// Watches an open connection; the handle answers when the watchdog closed it.
fn watched(activity: &Arc<Activity>) -> tokio::task::JoinHandle<Instant> {
    let activity = Arc::clone(activity);
    tokio::spawn(async move {
        watch(Open, &activity, CancellationToken::new()).await;
        Instant::now()
    })
}

/// Lets the watchdog run until it waits again.
async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

/// Asserts the watchdog closed the connection at `deadline` (the timer's
/// millisecond granularity allowed).
async fn closes_at(closer: tokio::task::JoinHandle<Instant>, deadline: Instant) {
    let closed = closer.await.expect("the watchdog ends");
    assert!(
        closed >= deadline && closed <= deadline + Duration::from_millis(1),
        "closed {:?} after the deadline",
        closed.checked_duration_since(deadline).map_or_else(
            || format!("-{:?}", deadline - closed),
            |late| format!("{late:?}")
        )
    );
}

#[tokio::test(start_paused = true)]
async fn a_connection_that_sends_nothing_closes_after_the_header_read_timeout() {
    let start = Instant::now();
    let activity = Arc::new(Activity::new(DEFAULTS));
    closes_at(watched(&activity), start + DEFAULTS.header_read_timeout).await;
}

#[tokio::test(start_paused = true)]
async fn an_idle_connection_closes_at_its_idle_deadline_through_many_periods() {
    let activity = Arc::new(Activity::new(DEFAULTS));
    let closer = watched(&activity);
    let request = activity.begin_request();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let ended = Instant::now();
    drop(request);
    // The watchdog looks every 10 s (the shorter limit) and closes at 75 s idle.
    closes_at(closer, ended + DEFAULTS.idle_timeout).await;
}

#[tokio::test(start_paused = true)]
async fn a_head_begun_on_an_idle_connection_closes_after_the_header_read_timeout() {
    let activity = Arc::new(Activity::new(DEFAULTS));
    let closer = watched(&activity);
    drop(activity.begin_request());
    tokio::time::sleep(Duration::from_secs(33)).await;
    let first_byte = Instant::now();
    activity.read();
    closes_at(closer, first_byte + DEFAULTS.header_read_timeout).await;
}

#[tokio::test(start_paused = true)]
async fn a_request_in_flight_keeps_the_connection_open_past_every_limit() {
    let activity = Arc::new(Activity::new(DEFAULTS));
    let closer = watched(&activity);
    let request = activity.begin_request();
    tokio::time::sleep(DEFAULTS.idle_timeout * 3).await;
    settle().await;
    assert!(!closer.is_finished(), "closed with a request in flight");
    drop(request);
    let ended = Instant::now();
    closes_at(closer, ended + DEFAULTS.idle_timeout).await;
}

#[tokio::test(start_paused = true)]
async fn a_write_the_client_leaves_unread_closes_after_the_idle_timeout() {
    let activity = Arc::new(Activity::new(DEFAULTS));
    let closer = watched(&activity);
    let _request = activity.begin_request();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let stalled = Instant::now();
    activity.wrote(false);
    closes_at(closer, stalled + DEFAULTS.idle_timeout).await;
}

#[tokio::test(start_paused = true)]
async fn requests_that_follow_each_other_do_not_wake_the_watchdog() {
    let activity = Arc::new(Activity::new(DEFAULTS));
    let closer = watched(&activity);
    settle().await;
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(3)).await;
        activity.read();
        let request = activity.begin_request();
        activity.wrote(true);
        drop(request);
        // Every deadline these started falls after the watchdog's timer: no wake-up
        // is waiting for it.
        assert!(
            activity.sooner.notified().now_or_never().is_none(),
            "a request woke the watchdog"
        );
    }
    closer.abort();
}

#[tokio::test(start_paused = true)]
async fn limits_shorter_than_the_timer_s_period_wake_the_watchdog_early() {
    let short = limits(Duration::from_millis(2), Duration::from_millis(3));
    assert!(short.idle_timeout < MIN_PERIOD);
    let activity = Arc::new(Activity::new(short));
    let closer = watched(&activity);
    let request = activity.begin_request();
    settle().await;
    drop(request);
    let ended = Instant::now();
    closes_at(closer, ended + short.idle_timeout).await;
}

#[tokio::test(start_paused = true)]
async fn limits_too_long_for_the_clock_keep_the_connection_open_without_a_panic() {
    let activity = Arc::new(Activity::new(limits(Duration::MAX, Duration::MAX)));
    let closer = watched(&activity);
    activity.read();
    let request = activity.begin_request();
    activity.wrote(false);
    drop(request);
    tokio::time::sleep(Duration::from_secs(365 * 24 * 60 * 60)).await;
    settle().await;
    assert!(
        !closer.is_finished(),
        "the watchdog ended: {:?}",
        closer.await
    );
}

/// A service that is not ready at once (here a place under a limit held elsewhere)
/// answers once it is, woken by the call's future rather than by the no-op waker it
/// was first asked with, and a fresh clone takes its place: the place, once freed,
/// goes to the waiting call and comes back after it.
#[tokio::test(start_paused = true)]
async fn a_service_not_ready_at_once_answers_once_ready_and_a_clone_takes_its_place() {
    use axum::body::Body;
    use axum::http::Request;

    let router = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
    let places = Arc::new(tokio::sync::Semaphore::new(1));
    let mut app = tower::limit::ConcurrencyLimit::with_semaphore(router, Arc::clone(&places));
    let get = || Request::get("/").body(Body::empty()).expect("a request");
    let held = Arc::clone(&places).acquire_owned().await.expect("open");
    let answer = crate::server::call_in_place(&mut app, get());
    drop(held);
    let answered = tokio::time::timeout(Duration::from_secs(5), answer)
        .await
        .expect("answered once the place was freed")
        .expect("infallible");
    assert_eq!(answered.status(), 200);
    assert_eq!(places.available_permits(), 1, "no place is left taken");
    // Ready at once again: called in place.
    let again = crate::server::call_in_place(&mut app, get());
    assert!(matches!(again, futures::future::Either::Left(_)));
    assert_eq!(again.await.expect("infallible").status(), 200);
}
