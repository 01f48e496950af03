//! A small value that changes, and whoever waits for it to: what the send path used
//! `tokio::sync::watch` for, at a fraction of its cost.
//!
//! Why not `watch`: its sender wakes waiters through eight `Notify`s (spread for
//! contention between many waiters), and locks all eight on every send and on drop,
//! waiter or not. A task's state and its "`working` is stored" barrier are sent two
//! or three times per send and almost never have more than one waiter; in the
//! supervisor suite's one-sender profile those locks were about 0.75 µs of a ~10.9 µs
//! send. Here a send takes the value's lock and one `Notify`'s.
//!
//! A value may come with an attachment for its waiters (a settled task's snapshot,
//! or the status of an outcome the store refused): set with the value under one
//! lock, so a waiter that saw the value finds the attachment sent with it, never an
//! older one. A waiter takes it (the others then go without) or copies it.
//!
//! A send wakes waiters only if someone waits: the waiters count themselves before
//! they read the value, so a send that finds the count at zero after it wrote the
//! value knows that any waiter to come will read it. `Notify::notify_waiters` takes
//! its lock whether anyone waits or not, and most sends of a task's state, whose
//! caller runs the turn itself and reads the state after, have nobody waiting.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

/// The sending side: sets the value (and its attachment, of type `A`). Dropping it
/// closes the signal.
#[derive(Debug)]
pub(crate) struct Sender<T, A = ()> {
    shared: Arc<Shared<T, A>>,
}

/// A waiting side.
#[derive(Debug)]
pub(crate) struct Receiver<T, A = ()> {
    shared: Arc<Shared<T, A>>,
    /// The version this receiver last saw.
    seen: u64,
}

/// The sender is gone: the value will not change again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Closed;

// By hand: a derived `Clone` would ask `A: Clone` of an attachment it never copies.
impl<T, A> Clone for Receiver<T, A> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            seen: self.seen,
        }
    }
}

#[derive(Debug)]
struct Shared<T, A> {
    state: Mutex<State<T, A>>,
    changed: Notify,
    /// How many receivers wait now (see [`Waiting`]).
    waiting: AtomicUsize,
}

#[derive(Debug)]
struct State<T, A> {
    value: T,
    /// What came with the value: gone with the next send, or once a waiter takes it.
    attached: Option<A>,
    version: u64,
    closed: bool,
}

impl<T: Copy, A> Sender<T, A> {
    /// A signal holding `value`.
    pub(crate) fn new(value: T) -> Self {
        Self {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    value,
                    attached: None,
                    version: 0,
                    closed: false,
                }),
                changed: Notify::new(),
                waiting: AtomicUsize::new(0),
            }),
        }
    }

    /// Sets the value and wakes the waiters.
    pub(crate) fn send_replace(&self, value: T) {
        self.send_with(value, None);
    }

    /// Sets the value with `attached` (none: the last one goes) and wakes the
    /// waiters.
    pub(crate) fn send_with(&self, value: T, attached: Option<A>) {
        let old = {
            let mut state = self.shared.lock();
            state.value = value;
            state.version += 1;
            std::mem::replace(&mut state.attached, attached)
        };
        // Dropped outside the lock.
        drop(old);
        self.shared.wake();
    }

    /// Whether any receiver is left to wait for a value (one subscribing right
    /// after may still come).
    pub(crate) fn is_watched(&self) -> bool {
        Arc::strong_count(&self.shared) > 1
    }

    /// The value now.
    pub(crate) fn get(&self) -> T {
        self.shared.lock().value
    }

    /// A receiver that has seen the value now.
    pub(crate) fn subscribe(&self) -> Receiver<T, A> {
        let seen = self.shared.lock().version;
        Receiver {
            shared: Arc::clone(&self.shared),
            seen,
        }
    }
}

impl<T, A> Drop for Sender<T, A> {
    fn drop(&mut self) {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .closed = true;
        self.shared.wake();
    }
}

impl<T: Copy, A> Receiver<T, A> {
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
        let _waiting = Waiting::count(&self.shared);
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

    /// Lends `use_it` what came with the value this receiver last saw (in
    /// [`Receiver::wait_for`]; nothing if a later value replaced it), under the
    /// value's lock: it may take the attachment, so that no other receiver gets it, or
    /// copy it and leave it for the value's other receivers.
    pub(crate) fn with_attached<R>(&self, use_it: impl FnOnce(&mut Option<A>) -> R) -> R {
        let mut state = self.shared.lock();
        if state.version == self.seen {
            use_it(&mut state.attached)
        } else {
            use_it(&mut None)
        }
    }

    /// Waits for a value this receiver has not seen.
    ///
    /// # Errors
    /// [`Closed`] when the sender is dropped first.
    #[cfg(test)]
    pub(crate) async fn changed(&mut self) -> Result<(), Closed> {
        let _waiting = Waiting::count(&self.shared);
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

impl<T, A> Shared<T, A> {
    fn lock(&self) -> std::sync::MutexGuard<'_, State<T, A>> {
        // The lock is held only to copy a value in or out: a panic cannot leave it
        // half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes the receivers that wait, after a change made under the lock. A receiver
    /// counts itself in `waiting` before it takes the lock to read the value: if it
    /// took the lock after this change, it reads the change and need not be woken;
    /// if before, its count was made before this change's lock, and this load sees
    /// it.
    fn wake(&self) {
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.changed.notify_waiters();
        }
    }
}

/// A receiver counted in [`Shared::waiting`] while it waits.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn count<T, A>(shared: &'a Shared<T, A>) -> Self {
        shared.waiting.fetch_add(1, Ordering::SeqCst);
        Self(&shared.waiting)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    impl<T: Copy, A> Receiver<T, A> {
        /// What came with the value last seen, taken if no other receiver took it.
        fn take_attached(&self) -> Option<A> {
            self.with_attached(Option::take)
        }
    }

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
        let tx: Sender<u8> = Sender::new(0);
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
        let tx: Sender<u8> = Sender::new(3);
        let mut rx = tx.subscribe();
        assert_eq!(rx.wait_for(|v| *v == 3).await, Ok(3));
        assert_eq!(rx.get(), 3);
        assert_eq!(tx.get(), 3);
    }

    #[tokio::test]
    async fn dropping_the_sender_ends_every_wait() {
        let tx: Sender<bool> = Sender::new(false);
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
        let tx: Sender<u32> = Sender::new(0);
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

    /// A signal whose value 1 came with the attachment "one", and two receivers that
    /// both saw it.
    async fn two_waiters_of_one() -> (
        Sender<u8, String>,
        Receiver<u8, String>,
        Receiver<u8, String>,
    ) {
        let tx: Sender<u8, String> = Sender::new(0);
        let mut first = tx.subscribe();
        let mut second = first.clone();
        tx.send_with(1, Some(String::from("one")));
        assert_eq!(first.wait_for(|v| *v == 1).await, Ok(1));
        assert_eq!(second.wait_for(|v| *v == 1).await, Ok(1));
        (tx, first, second)
    }

    #[tokio::test]
    async fn an_attachment_goes_to_one_waiter_of_its_value() {
        let (_tx, first, second) = two_waiters_of_one().await;
        assert_eq!(first.take_attached().as_deref(), Some("one"));
        assert_eq!(second.take_attached(), None, "taken by the first");
    }

    #[tokio::test]
    async fn an_attachment_lent_and_left_reaches_every_waiter_of_its_value() {
        let (tx, first, second) = two_waiters_of_one().await;
        let copy = |attached: &mut Option<String>| attached.clone();
        assert_eq!(first.with_attached(copy).as_deref(), Some("one"));
        assert_eq!(
            second.take_attached().as_deref(),
            Some("one"),
            "left by the first"
        );
        tx.send_with(2, Some(String::from("two")));
        assert_eq!(
            first.with_attached(copy),
            None,
            "a receiver that saw 1 is lent nothing of 2"
        );
    }

    #[tokio::test]
    async fn an_attachment_does_not_outlive_its_value() {
        let tx: Sender<u8, String> = Sender::new(0);
        let mut rx = tx.subscribe();
        tx.send_with(1, Some(String::from("one")));
        assert_eq!(rx.wait_for(|v| *v == 1).await, Ok(1));
        tx.send_replace(2);
        assert_eq!(
            rx.take_attached(),
            None,
            "a receiver that saw 1 does not get what came after it"
        );
        assert_eq!(rx.wait_for(|v| *v == 2).await, Ok(2));
        assert_eq!(rx.take_attached(), None, "2 came with nothing");
        tx.send_with(3, Some(String::from("three")));
        tx.send_with(4, None);
        assert_eq!(rx.wait_for(|v| *v == 4).await, Ok(4));
        assert_eq!(rx.take_attached(), None, "the next value lets the last go");
    }

    /// A send on one thread racing the start of a wait on another, many times: the
    /// wait ends every time (a send that found nobody counted as waiting must have
    /// written its value before the waiter read it).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_send_racing_the_start_of_a_wait_is_never_missed() {
        for _ in 0..2_000 {
            let tx = Sender::<u8>::new(0);
            let mut rx = tx.subscribe();
            let waiter = tokio::spawn(async move { rx.wait_for(|v| *v == 1).await });
            let sender = std::thread::spawn(move || {
                tx.send_replace(1);
                tx
            });
            assert_eq!(joined(waiter).await, Ok(1));
            drop(sender.join().expect("the send ran"));
        }
    }

    #[test]
    fn a_sender_knows_whether_anyone_watches() {
        let tx: Sender<u8> = Sender::new(0);
        assert!(!tx.is_watched());
        let rx = tx.subscribe();
        assert!(tx.is_watched());
        drop(rx);
        assert!(!tx.is_watched());
    }
}
