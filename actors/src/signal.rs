//! A small value that changes, and whoever waits for it to: what the send path used
//! `tokio::sync::watch` for, at a fraction of its cost.
//!
//! Why not `watch`: its sender wakes waiters through eight `Notify`s (spread for
//! contention between many waiters), and locks all eight on every send and on drop,
//! waiter or not. A task's state and its "`working` is stored" barrier are sent two
//! or three times per send and almost never have more than one waiter; in the
//! supervisor suite's one-sender profile those locks were about 0.75 µs of a ~10.9 µs
//! send. Here a send takes the value's lock and one `Notify`'s.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

/// The sending side: sets the value. Dropping it closes the signal.
#[derive(Debug)]
pub(crate) struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// A waiting side.
#[derive(Debug, Clone)]
pub(crate) struct Receiver<T> {
    shared: Arc<Shared<T>>,
    /// The version this receiver last saw.
    seen: u64,
}

/// The sender is gone: the value will not change again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Closed;

#[derive(Debug)]
struct Shared<T> {
    state: Mutex<State<T>>,
    changed: Notify,
}

#[derive(Debug)]
struct State<T> {
    value: T,
    version: u64,
    closed: bool,
}

impl<T: Copy> Sender<T> {
    /// A signal holding `value`.
    pub(crate) fn new(value: T) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    value,
                    version: 0,
                    closed: false,
                }),
                changed: Notify::new(),
            }),
        }
    }

    /// Sets the value and wakes the waiters.
    pub(crate) fn send_replace(&self, value: T) {
        {
            let mut state = self.shared.lock();
            state.value = value;
            state.version += 1;
        }
        self.shared.changed.notify_waiters();
    }

    /// The value now.
    pub(crate) fn get(&self) -> T {
        self.shared.lock().value
    }

    /// A receiver that has seen the value now.
    pub(crate) fn subscribe(&self) -> Receiver<T> {
        let seen = self.shared.lock().version;
        Receiver {
            shared: Arc::clone(&self.shared),
            seen,
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .closed = true;
        self.shared.changed.notify_waiters();
    }
}

impl<T: Copy> Receiver<T> {
    /// The value now.
    #[cfg(test)]
    pub(crate) fn get(&self) -> T {
        self.shared.lock().value
    }

    /// Waits until the value satisfies `ready` (at once if it does now) and returns
    /// it.
    ///
    /// # Errors
    /// [`Closed`] when the sender is dropped before it does.
    pub(crate) async fn wait_for(&mut self, ready: impl Fn(&T) -> bool) -> Result<T, Closed> {
        loop {
            // Registered before the value is read: a send in between still wakes us.
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let state = self.shared.lock();
                self.seen = state.version;
                if ready(&state.value) {
                    return Ok(state.value);
                }
                if state.closed {
                    return Err(Closed);
                }
            }
            notified.await;
        }
    }

    /// Waits for a value this receiver has not seen.
    ///
    /// # Errors
    /// [`Closed`] when the sender is dropped first.
    #[cfg(test)]
    pub(crate) async fn changed(&mut self) -> Result<(), Closed> {
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let state = self.shared.lock();
                if state.version != self.seen {
                    self.seen = state.version;
                    return Ok(());
                }
                if state.closed {
                    return Err(Closed);
                }
            }
            notified.await;
        }
    }
}

impl<T> Shared<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<T>> {
        // The lock is held only to copy a value in or out: a panic cannot leave it
        // half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Joins `task` within the tests' patience: a missed wake-up fails the test
    /// instead of hanging it.
    async fn joined<T>(task: tokio::task::JoinHandle<T>) -> T {
        tokio::time::timeout(crate::testing::PATIENCE, task)
            .await
            .expect("the waiter was woken")
            .expect("joined")
    }

    #[tokio::test]
    async fn a_waiter_sees_the_value_it_waits_for_sent_later() {
        let tx = Sender::new(0_u8);
        let mut rx = tx.subscribe();
        let waiter = tokio::spawn(async move { rx.wait_for(|v| *v == 2).await });
        // On this single-threaded runtime each yield lets the waiter run until it
        // waits: it is parked before each send, so each send must wake it.
        tokio::task::yield_now().await;
        tx.send_replace(1);
        tokio::task::yield_now().await;
        assert!(
            !waiter.is_finished(),
            "woken by a value it does not wait for"
        );
        tx.send_replace(2);
        assert_eq!(joined(waiter).await, Ok(2));
    }

    #[tokio::test]
    async fn a_value_already_there_is_returned_at_once() {
        let tx = Sender::new(3_u8);
        let mut rx = tx.subscribe();
        assert_eq!(rx.wait_for(|v| *v == 3).await, Ok(3));
        assert_eq!(rx.get(), 3);
        assert_eq!(tx.get(), 3);
    }

    #[tokio::test]
    async fn dropping_the_sender_ends_every_wait() {
        let tx = Sender::new(false);
        let mut first = tx.subscribe();
        let mut second = first.clone();
        let waiting = tokio::spawn(async move { first.wait_for(|v| *v).await });
        tokio::task::yield_now().await;
        drop(tx);
        assert_eq!(joined(waiting).await, Err(Closed));
        assert_eq!(second.wait_for(|v| *v).await, Err(Closed));
        assert_eq!(second.changed().await, Err(Closed));
    }

    #[tokio::test]
    async fn changed_wakes_for_a_send_after_subscribing_and_not_before() {
        let tx = Sender::new(0_u32);
        tx.send_replace(1);
        let mut rx = tx.subscribe();
        let early = tokio::time::timeout(Duration::from_millis(20), rx.changed()).await;
        assert!(
            early.is_err(),
            "a value sent before subscribing is not news"
        );
        tx.send_replace(2);
        assert_eq!(rx.changed().await, Ok(()));
        assert_eq!(rx.get(), 2);
    }
}
