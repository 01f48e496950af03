//! Waiting for something to happen, with a deadline instead of a guessed sleep.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// How long to pause between two looks at a condition. Short, so a test finishes
/// moments after the condition holds; under paused time it costs nothing.
const POLL_EVERY: Duration = Duration::from_millis(1);

/// Waits until `condition` holds, looking again every millisecond; panics naming
/// `what` if it still does not hold after `deadline`.
///
/// The deadline is measured on tokio's clock, so under paused time it is virtual and
/// the test spends no real time waiting.
///
/// # Panics
/// If the deadline passes first.
pub async fn eventually(deadline: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let give_up = Instant::now() + deadline;
    while !condition() {
        assert!(
            Instant::now() < give_up,
            "timed out after {deadline:?} waiting until {what}"
        );
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// As [`eventually`], for a condition that must await (reading a task, for instance).
///
/// # Panics
/// If the deadline passes first.
pub async fn eventually_async(
    deadline: Duration,
    what: &str,
    mut condition: impl AsyncFnMut() -> bool,
) {
    let give_up = Instant::now() + deadline;
    while !condition().await {
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
