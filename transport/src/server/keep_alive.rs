//! An SSE stream's keep-alive, with its timer made only while the stream waits.
//!
//! axum's `Sse::keep_alive` resets its timer after every event, and a reset of a
//! tokio timer registers it again in the runtime's timer wheel under the driver's
//! lock: four times for a stream of four events, though a stream whose events are
//! all ready at once never waits long enough to need a keep-alive. Here the timer is
//! set when the stream starts to wait, once per wait, and never for a stream that
//! does not wait; a comment goes out after each `interval` of waiting, as axum's.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::stream::Stream;
use tokio::time::{Instant, Sleep};

/// `inner`, with `alive()` sent after each `interval` it waits for its next item.
pub(super) fn keep_alive<S, F>(inner: S, interval: Duration, alive: F) -> KeepAlive<S, F> {
    KeepAlive {
        inner,
        interval,
        alive,
        timer: None,
        waiting: false,
    }
}

/// See [`keep_alive`].
pub(super) struct KeepAlive<S, F> {
    inner: S,
    interval: Duration,
    alive: F,
    /// Made the first time the stream waits, and kept for its later waits.
    timer: Option<Pin<Box<Sleep>>>,
    /// Whether the timer runs for the current wait.
    waiting: bool,
}

impl<S, F, T> Stream for KeepAlive<S, F>
where
    S: Stream<Item = T> + Unpin,
    F: Fn() -> T + Unpin,
{
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        if let Poll::Ready(item) = Pin::new(&mut this.inner).poll_next(cx) {
            this.waiting = false;
            return Poll::Ready(item);
        }
        // A wait begins: the keep-alive is due an interval from now (far in the
        // future if the interval is too long for the clock).
        if !this.waiting {
            this.waiting = true;
            let due = Instant::now()
                .checked_add(this.interval)
                .unwrap_or_else(far_future);
            match &mut this.timer {
                Some(timer) => timer.as_mut().reset(due),
                None => this.timer = Some(Box::pin(tokio::time::sleep_until(due))),
            }
        }
        let Some(timer) = this.timer.as_mut() else {
            return Poll::Pending;
        };
        if timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        // Still waiting: the next keep-alive is an interval after this one.
        let next = timer
            .deadline()
            .checked_add(this.interval)
            .unwrap_or_else(far_future);
        timer.as_mut().reset(next);
        Poll::Ready(Some((this.alive)()))
    }
}

/// About thirty years from now: what tokio itself takes for "never".
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365 * 30)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures::StreamExt as _;
    use futures::stream::{self, BoxStream};
    use tokio::sync::mpsc;

    use super::keep_alive;

    const INTERVAL: Duration = Duration::from_secs(15);

    fn alive() -> &'static str {
        "alive"
    }

    /// The items of a stream fed from a channel, with keep-alives.
    fn fed() -> (
        mpsc::UnboundedSender<&'static str>,
        BoxStream<'static, &'static str>,
    ) {
        let (tx, rx) = mpsc::unbounded_channel();
        (tx, keep_alive(received(rx), INTERVAL, alive).boxed())
    }

    /// What `rx` receives, as a stream that waits between items.
    fn received(rx: mpsc::UnboundedReceiver<&'static str>) -> BoxStream<'static, &'static str> {
        stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        })
        .boxed()
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_whose_items_are_ready_sends_no_keep_alive_and_makes_no_timer() {
        let mut stream = keep_alive(stream::iter(["a", "b", "c"]), INTERVAL, alive);
        let items: Vec<_> = (&mut stream).collect().await;
        assert_eq!(items, ["a", "b", "c"]);
        assert!(stream.timer.is_none(), "no wait, no timer");
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_stream_sends_a_keep_alive_each_interval() {
        let (tx, mut stream) = fed();
        tx.send("first").expect("open");
        assert_eq!(stream.next().await, Some("first"));
        let started = tokio::time::Instant::now();
        // Nothing comes: keep-alives at one and two intervals.
        assert_eq!(stream.next().await, Some("alive"));
        assert_eq!(started.elapsed(), INTERVAL);
        assert_eq!(stream.next().await, Some("alive"));
        assert_eq!(started.elapsed(), INTERVAL * 2);
        tx.send("second").expect("open");
        assert_eq!(stream.next().await, Some("second"));
        drop(tx);
        assert_eq!(stream.next().await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn an_item_starts_the_wait_for_the_next_keep_alive_over() {
        let (tx, mut stream) = fed();
        let sender = tokio::spawn(async move {
            // Items at 10 s and 20 s: no wait reaches 15 s before 35 s.
            for item in ["at 10", "at 20"] {
                tokio::time::sleep(Duration::from_secs(10)).await;
                tx.send(item).expect("open");
            }
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        let started = tokio::time::Instant::now();
        assert_eq!(stream.next().await, Some("at 10"));
        assert_eq!(stream.next().await, Some("at 20"));
        assert_eq!(stream.next().await, Some("alive"));
        assert_eq!(started.elapsed(), Duration::from_secs(35));
        sender.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn an_interval_too_long_for_the_clock_never_sends_one() {
        let (tx, rx) = mpsc::unbounded_channel::<&'static str>();
        let mut stream = keep_alive(received(rx), Duration::MAX, alive);
        let waited = tokio::time::timeout(Duration::from_secs(86_400), stream.next()).await;
        assert!(waited.is_err(), "nothing in a day: {waited:?}");
        drop(tx);
    }
}
