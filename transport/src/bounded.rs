//! A call's stream of events as a server sends it: ending after the event the
//! protocol makes its last, or when the server shuts down. Shared by the SSE responses
//! of JSON-RPC and HTTP+JSON and by the gRPC streams.
//!
//! One hand-written stream rather than `unfold(..).take_until(shutdown)`: those made
//! a future for every event and polled the shutdown's cancellation future (a lock of
//! the token's node and one of its `Notify`'s waiters) on every poll. Here the
//! shutdown is looked at only when the stream waits: events already ready are sent
//! first (a task's log ends at its final event, so that is never long), and a stream
//! that waits ends at once.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tracing::Span;

/// See the [module docs](self).
pub(crate) struct Bounded<S, F> {
    /// `None` once the stream has ended: dropping the service's stream there (rather
    /// than when the connection closes) releases it at once.
    inner: Option<S>,
    /// Makes an item into what the stream sends, and says whether it was the last.
    /// In place, in the same poll: an item handed out whole and made into its frame
    /// a layer up was one more move of it per event.
    step: F,
    /// The call's span, entered while the service's stream is polled: its logs are the
    /// call's.
    span: Span,
    shutdown: Option<CancellationToken>,
    /// The wait for `shutdown`, made the first time the stream waits.
    stop: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
}

impl<S, F> Bounded<S, F> {
    /// `inner`'s items, each made by `step` into what is sent, up to the one `step`
    /// says is the last, until `shutdown` is cancelled while the stream waits.
    pub(crate) fn new(inner: S, span: Span, shutdown: Option<CancellationToken>, step: F) -> Self {
        Self {
            inner: Some(inner),
            step,
            span,
            shutdown,
            stop: None,
        }
    }
}

impl<S, F, T> Stream for Bounded<S, F>
where
    S: Stream + Unpin,
    F: FnMut(S::Item) -> (T, bool) + Unpin,
{
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let Self {
            inner,
            step,
            span,
            shutdown,
            stop,
        } = self.get_mut();
        let Some(stream) = inner.as_mut() else {
            return Poll::Ready(None);
        };
        let _entered = span.enter();
        let (item, more) = match Pin::new(stream).poll_next(cx) {
            Poll::Ready(Some(item)) => {
                let (item, last) = step(item);
                (Some(item), !last)
            }
            Poll::Ready(None) => (None, false),
            Poll::Pending => {
                let Some(shutdown) = shutdown else {
                    return Poll::Pending;
                };
                let stop = stop.get_or_insert_with(|| Box::pin(shutdown.clone().cancelled_owned()));
                if stop.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                (None, false)
            }
        };
        if !more {
            *inner = None;
            *stop = None;
        }
        Poll::Ready(item)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use futures::StreamExt as _;
    use tokio::sync::mpsc;
    use tokio_util::sync::CancellationToken;

    use super::Bounded;

    /// Sets its flag when dropped: the inner stream let go.
    struct Held(Arc<AtomicBool>);

    impl Drop for Held {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    type Fed = futures::stream::BoxStream<'static, u32>;
    type Step = fn(u32) -> (u32, bool);

    /// Items sent on the channel, ending after one over 100; the flag says whether the
    /// inner stream was dropped.
    fn fed(
        shutdown: Option<CancellationToken>,
    ) -> (
        mpsc::UnboundedSender<u32>,
        Arc<AtomicBool>,
        Bounded<Fed, Step>,
    ) {
        let (tx, rx) = mpsc::unbounded_channel();
        let dropped = Arc::new(AtomicBool::new(false));
        let held = Held(Arc::clone(&dropped));
        let inner = futures::stream::unfold((rx, held), |(mut rx, held)| async move {
            rx.recv().await.map(|item| (item, (rx, held)))
        })
        .boxed();
        let step: Step = |n| (n, n > 100);
        let bounded = Bounded::new(inner, tracing::Span::none(), shutdown, step);
        (tx, dropped, bounded)
    }

    #[tokio::test]
    async fn the_last_item_ends_the_stream_and_lets_the_inner_one_go() {
        let (tx, dropped, mut bounded) = fed(None);
        for n in [1, 101, 2] {
            tx.send(n).expect("open");
        }
        assert_eq!(bounded.next().await, Some(1));
        assert!(!dropped.load(Ordering::SeqCst));
        assert_eq!(bounded.next().await, Some(101));
        assert!(dropped.load(Ordering::SeqCst), "released at the last item");
        assert_eq!(bounded.next().await, None, "nothing after the last item");
    }

    #[tokio::test]
    async fn the_inner_streams_end_ends_it() {
        let (tx, dropped, mut bounded) = fed(None);
        tx.send(1).expect("open");
        drop(tx);
        assert_eq!(bounded.next().await, Some(1));
        assert_eq!(bounded.next().await, None);
        assert!(dropped.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn a_waiting_stream_ends_when_the_server_shuts_down() {
        let token = CancellationToken::new();
        let (tx, dropped, mut bounded) = fed(Some(token.clone()));
        tx.send(1).expect("open");
        assert_eq!(bounded.next().await, Some(1));
        let next = tokio::spawn(async move { bounded.next().await });
        tokio::task::yield_now().await;
        token.cancel();
        let ended = tokio::time::timeout(Duration::from_secs(10), next)
            .await
            .expect("ended by the shutdown")
            .expect("joined");
        assert_eq!(ended, None);
        assert!(dropped.load(Ordering::SeqCst), "released at the shutdown");
        drop(tx);
    }

    #[tokio::test]
    async fn ready_items_go_out_before_a_shutdown_and_no_wait_is_made_for_them() {
        let token = CancellationToken::new();
        token.cancel();
        let (tx, _, mut bounded) = fed(Some(token));
        tx.send(1).expect("open");
        assert_eq!(bounded.next().await, Some(1));
        assert!(bounded.stop.is_none(), "no wait, no shutdown future");
        // Then it waits, and the shutdown that came meanwhile ends it.
        assert_eq!(bounded.next().await, None);
        drop(tx);
    }
}
