//! Helpers shared by the crate's unit tests.

use std::future::Future;
use std::time::Duration;

/// How long a test waits for something that should happen at once.
pub(crate) const PATIENCE: Duration = Duration::from_secs(10);

/// Polls `check` until it gives a value, and returns it; fails the test, naming
/// `what`, when [`PATIENCE`] runs out first.
pub(crate) async fn until<T, F>(what: &str, mut check: impl FnMut() -> F) -> T
where
    F: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// [`until`] for a condition that needs no waiting to check.
pub(crate) async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    until(what, || std::future::ready(done().then_some(()))).await;
}
