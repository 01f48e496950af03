//! Waiting for something to happen, with a deadline instead of a guessed sleep: one
//! helper, [`eventually`], for every condition, and [`within`] for a future that must
//! finish.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// How long a test waits for something that should happen at once (over HTTP, on
/// real time).
pub const PATIENCE: Duration = Duration::from_secs(10);

/// How long to pause between two looks at a condition. Short, so a test finishes
/// moments after the condition holds; under paused time it costs nothing.
const POLL_EVERY: Duration = Duration::from_millis(1);

/// What a condition polled by [`eventually`] returns: `true` or `Some(value)` once it
/// holds.
pub trait Ready {
    /// What [`eventually`] returns once the condition holds.
    type Value;
    /// The value, if the condition holds.
    fn ready(self) -> Option<Self::Value>;
}

impl Ready for bool {
    type Value = ();
    fn ready(self) -> Option<()> {
        self.then_some(())
    }
}

impl<T> Ready for Option<T> {
    type Value = T;
    fn ready(self) -> Option<T> {
        self
    }
}

/// Waits until `condition` holds — returns `true`, or `Some` of what the test wants
/// back — looking again every millisecond; panics naming `what` if it still does
/// not after `deadline`.
///
/// The deadline is measured on tokio's clock, so under paused time it is virtual and
/// the test spends no real time waiting.
///
/// ```
/// # async fn example(count: std::sync::atomic::AtomicUsize) {
/// use std::sync::atomic::Ordering;
/// use agentyard_tests::{eventually, wait::PATIENCE};
///
/// eventually(PATIENCE, "two calls", async || count.load(Ordering::SeqCst) == 2).await;
/// let seen = eventually(PATIENCE, "a call", async || {
///     Some(count.load(Ordering::SeqCst)).filter(|n| *n > 0)
/// })
/// .await;
/// # let _ = seen;
/// # }
/// ```
///
/// # Panics
/// If the deadline passes first.
pub async fn eventually<R: Ready>(
    deadline: Duration,
    what: &str,
    mut condition: impl AsyncFnMut() -> R,
) -> R::Value {
    let give_up = Instant::now() + deadline;
    loop {
        if let Some(value) = condition().await.ready() {
            return value;
        }
        assert!(
            Instant::now() < give_up,
            "timed out after {deadline:?} waiting until {what}"
        );
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// Awaits `future`, panicking naming `what` if it takes longer than `deadline`: a
/// hang in the runtime becomes a failed test rather than a stuck test run.
///
/// # Panics
/// If the deadline passes first.
pub async fn within<T>(deadline: Duration, what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(deadline, future).await {
        Ok(value) => value,
        Err(_) => panic!("{what} did not finish within {deadline:?}"),
    }
}
