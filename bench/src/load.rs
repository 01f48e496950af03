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
    /// CPU time the whole process used over the same span (all threads, user and
    /// system), where the platform tells it.
    pub(crate) cpu: Option<Duration>,
}

impl LoadResult {
    /// Answered requests per second.
    pub(crate) fn throughput(&self) -> f64 {
        self.latencies.count() as f64 / self.elapsed.as_secs_f64()
    }

    /// CPU nanoseconds the process spent per answered request, where known. On a
    /// loaded machine throughput mixes in what other processes take; this does not,
    /// so it shows what a side costs even when the cores are not all its own. `None`
    /// too where the run used less than one tick of the CPU clock (10 ms): a zero
    /// there says the run was short, not that requests were free.
    pub(crate) fn cpu_per_request_ns(&self) -> Option<f64> {
        let count = self.latencies.count();
        let cpu = self.cpu.filter(|cpu| !cpu.is_zero())?;
        if count == 0 {
            return None;
        }
        Some(cpu.as_secs_f64() * 1e9 / count as f64)
    }
}

/// One figure of a run, where the run has it (the CPU per request may not be).
pub(crate) type Pick = fn(&LoadResult) -> Option<f64>;

/// `pick` of every run, in order; `None` if any run lacks it, so that a row is made
/// of every run or left out, never of some.
pub(crate) fn each(runs: &[LoadResult], pick: Pick) -> Option<Vec<f64>> {
    runs.iter().map(pick).collect()
}

/// The CPU time this process has used so far (user and system, all threads), on
/// Linux from `/proc/self/stat`; `None` elsewhere. Its unit is the kernel's
/// `USER_HZ` tick, 10 ms on every Linux ABI, so a run of a few seconds reads it
/// to well under one percent.
pub(crate) fn process_cpu() -> Option<Duration> {
    cpu_from("/proc/self/stat")
}

/// The CPU time process `pid` (a child server) has used so far, as [`process_cpu`].
pub(crate) fn process_cpu_of(pid: u32) -> Option<Duration> {
    cpu_from(&format!("/proc/{pid}/stat"))
}

fn cpu_from(path: &str) -> Option<Duration> {
    const TICKS_PER_SECOND: u64 = 100;
    let stat = std::fs::read_to_string(path).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count the
    // fields after its closing one. utime and stime are fields 14 and 15.
    let mut after = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let user: u64 = after.nth(11)?.parse().ok()?;
    let system: u64 = after.next()?.parse().ok()?;
    Some(Duration::from_millis(
        (user + system) * (1000 / TICKS_PER_SECOND),
    ))
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
    let cpu_before = process_cpu();
    let start = Instant::now();
    go.send_replace(Some(start + run));
    let mut latencies = Latencies::new();
    while let Some(joined) = tasks.join_next().await {
        latencies.merge(&joined??);
    }
    let elapsed = start.elapsed();
    let cpu = process_cpu()
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
    latencies.sort();
    Ok(LoadResult {
        latencies,
        elapsed,
        cpu,
    })
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

    #[test]
    fn the_process_cpu_time_reads_and_grows_with_work() {
        let before = process_cpu();
        if !cfg!(target_os = "linux") {
            assert_eq!(before, None, "only Linux is read");
            return;
        }
        let before = before.expect("Linux always has /proc/self/stat");
        // Spin until the clock has ticked past at least two of its 10 ms steps.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let mut spins = 0_u64;
        while process_cpu().is_some_and(|now| now < before + Duration::from_millis(20)) {
            spins = std::hint::black_box(spins + 1);
            assert!(
                std::time::Instant::now() < deadline,
                "5 s of spinning never showed 20 ms of CPU"
            );
        }
        assert!(process_cpu().is_some_and(|now| now >= before + Duration::from_millis(20)));
        let by_pid = process_cpu_of(std::process::id()).expect("our own pid reads too");
        assert!(by_pid >= before + Duration::from_millis(20));
    }

    #[test]
    fn cpu_per_request_is_known_only_past_one_tick_of_the_clock() {
        let mut latencies = Latencies::new();
        for _ in 0..1000 {
            latencies.record(Duration::from_micros(10));
        }
        let run = |cpu| LoadResult {
            latencies: latencies.clone(),
            elapsed: Duration::from_secs(1),
            cpu,
        };
        assert_eq!(
            run(Some(Duration::from_millis(10))).cpu_per_request_ns(),
            Some(10_000.0)
        );
        assert_eq!(run(Some(Duration::ZERO)).cpu_per_request_ns(), None);
        assert_eq!(run(None).cpu_per_request_ns(), None);
        let none = LoadResult {
            latencies: Latencies::new(),
            elapsed: Duration::from_secs(1),
            cpu: Some(Duration::from_millis(10)),
        };
        assert_eq!(none.cpu_per_request_ns(), None);
    }

    #[test]
    fn a_figure_some_run_lacks_makes_no_values() {
        let mut latencies = Latencies::new();
        latencies.record(Duration::from_micros(10));
        let run = |cpu| LoadResult {
            latencies: latencies.clone(),
            elapsed: Duration::from_secs(1),
            cpu,
        };
        let runs = [run(Some(Duration::from_millis(10))), run(None)];
        assert_eq!(each(&runs, LoadResult::cpu_per_request_ns), None);
        assert_eq!(each(&runs, |r| Some(r.throughput())), Some(vec![1.0, 1.0]));
        assert_eq!(
            each(&runs[..1], LoadResult::cpu_per_request_ns),
            Some(vec![1e7])
        );
    }

    #[tokio::test]
    async fn a_failed_request_fails_the_run() {
        let result = closed_loop(Arc::new(FailsAtThree), 2, Duration::from_secs(5)).await;
        assert!(matches!(result, Err(Error::Unexpected(_))));
    }
}
