//! The closed-loop load generator: N senders, each sending its next request as soon as
//! the last one is answered, for a fixed time.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::stats::Latencies;

/// Something a sender can ask and wait for: a request through the runtime, a raw
/// ractor call, an HTTP request.
pub(crate) trait Requester: Send + Sync + 'static {
    /// Sends request number `seq` of sender `sender` and waits for its answer.
    ///
    /// # Errors
    /// Any failure: the run stops, since its figures would be wrong.
    fn request(&self, sender: usize, seq: u64) -> impl Future<Output = Result<()>> + Send;
}

/// What one closed-loop run measured.
#[derive(Debug, Clone)]
pub(crate) struct LoadResult {
    pub(crate) latencies: Latencies,
    /// From the start signal until the last sender's last answer.
    pub(crate) elapsed: Duration,
}

impl LoadResult {
    /// Answered requests per second.
    pub(crate) fn throughput(&self) -> f64 {
        self.latencies.count() as f64 / self.elapsed.as_secs_f64()
    }
}

/// Runs `senders` concurrent senders against `target` for `run`, then waits for the
/// requests in flight. Each sender is its own tokio task.
///
/// # Errors
/// The first failed request, or a sender task that panicked.
pub(crate) async fn closed_loop<R: Requester>(
    target: Arc<R>,
    senders: usize,
    run: Duration,
) -> Result<LoadResult> {
    let (go, ready) = watch::channel(None::<Instant>);
    let mut tasks = JoinSet::new();
    for sender in 0..senders {
        let target = Arc::clone(&target);
        let mut ready = ready.clone();
        tasks.spawn(async move {
            // Every sender starts on the same signal, so none gets a head start while
            // the others are still being spawned.
            let deadline = ready
                .wait_for(Option::is_some)
                .await
                .map(|deadline| *deadline)
                .map_err(|_| Error::Unexpected(String::from("the start signal was lost")))?
                .ok_or_else(|| Error::Unexpected(String::from("no deadline was sent")))?;
            let mut latencies = Latencies::new();
            let mut seq = 0;
            while Instant::now() < deadline {
                let sent = Instant::now();
                target.request(sender, seq).await?;
                latencies.record(sent.elapsed());
                seq += 1;
            }
            Ok::<_, Error>(latencies)
        });
    }
    // Let the senders reach the start line.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let start = Instant::now();
    go.send_replace(Some(start + run));
    let mut latencies = Latencies::new();
    while let Some(joined) = tasks.join_next().await {
        latencies.merge(&joined??);
    }
    let elapsed = start.elapsed();
    latencies.sort();
    Ok(LoadResult { latencies, elapsed })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Instant0;

    impl Requester for Instant0 {
        async fn request(&self, _sender: usize, _seq: u64) -> Result<()> {
            tokio::task::yield_now().await;
            Ok(())
        }
    }

    struct FailsAtThree;

    impl Requester for FailsAtThree {
        async fn request(&self, _sender: usize, seq: u64) -> Result<()> {
            if seq == 3 {
                return Err(Error::Unexpected(String::from("refused")));
            }
            Ok(())
        }
    }

    #[tokio::test]
    async fn every_sender_sends_until_the_deadline() {
        let result = closed_loop(Arc::new(Instant0), 4, Duration::from_millis(20))
            .await
            .expect("nothing fails");
        assert!(
            result.latencies.count() >= 4,
            "each sender sends at least once"
        );
        assert!(result.elapsed >= Duration::from_millis(20));
        assert!(result.throughput() > 0.0);
    }

    #[tokio::test]
    async fn a_failed_request_fails_the_run() {
        let result = closed_loop(Arc::new(FailsAtThree), 2, Duration::from_secs(5)).await;
        assert!(matches!(result, Err(Error::Unexpected(_))));
    }
}
