//! Suite 4: ten times the sustainable send rate against an agent with a small limit.
//!
//! The agent (`slow`) takes [`WORK`] per message, may run [`LIMIT`] at once and lets
//! [`QUEUE`] more wait; past that, sends are refused with `Error::Busy`. Every request
//! is a new conversation, as an HTTP client sending without a contextId would be.
//!
//! Each round runs in a child process (so its peak resident memory is its own):
//!
//! 1. **sustainable rate**: `2 × LIMIT` closed-loop senders with `send_and_wait`;
//!    completions per second.
//! 2. **floor**: open-loop sends at a fifth of that rate; how long `send` takes to be
//!    admitted while the agent has room.
//! 3. **overload**: open-loop `send_and_wait`s at ten times the sustainable rate for
//!    `--overload-secs`, each in its own task; then wait for every one to finish.
//!
//! The figures: goodput under overload against the sustainable rate, busy-rejection
//! latency against admission latency, and peak resident memory against the memory
//! before the overload.

use std::sync::Arc;
use std::time::Duration;

use agentyard::{
    Agent, AgentDescriptor, AgentError, Error as RuntimeError, Message, Runtime, SendRequest,
    TaskContext, TaskState,
};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::time::{Instant, MissedTickBehavior};

use crate::error::{Error, Result};
use crate::load::{Requester, closed_loop};
use crate::memory::{peak_rss_bytes, rss_bytes};
use crate::options::{Options, progress};
use crate::report::{Better, Figure, Report, Target, Unit};
use crate::stats::Latencies;
use crate::suites::in_child;

const SUITE: &str = "overload";

/// The agent's concurrency limit.
const LIMIT: usize = 4;
/// Sends that may wait for the agent's limit before `busy`.
const QUEUE: usize = 16;
/// How long the agent works on one message.
const WORK: Duration = Duration::from_millis(5);
/// How many times the sustainable rate is offered.
const OVERLOAD: f64 = 10.0;

const SLOW: &str = "slow";

/// What one child measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Figures {
    pub(crate) sustainable_per_sec: f64,
    pub(crate) sustainable_p99_ns: f64,
    pub(crate) admit_p50_ns: f64,
    pub(crate) admit_p99_ns: f64,
    pub(crate) admit_max_ns: f64,
    pub(crate) offered_per_sec: f64,
    pub(crate) offered: u64,
    pub(crate) completed: u64,
    /// Accepted requests whose task did not end `completed`.
    pub(crate) not_completed: u64,
    pub(crate) rejected: u64,
    /// Failures other than `busy`.
    pub(crate) other_errors: u64,
    pub(crate) first_other_error: Option<String>,
    pub(crate) goodput_per_sec: f64,
    pub(crate) accepted_p99_ns: f64,
    pub(crate) reject_p50_ns: f64,
    pub(crate) reject_p99_ns: f64,
    pub(crate) reject_max_ns: f64,
    pub(crate) rss_before: u64,
    pub(crate) rss_peak: u64,
    pub(crate) rss_after: u64,
    pub(crate) sessions_after: usize,
    /// Sessions the accepted requests of all three phases account for: every request
    /// is a new conversation, so each accepted one leaves an idle session until the
    /// idle timeout. More than this were left by refused requests.
    pub(crate) sessions_accepted: usize,
}

impl Figures {
    /// Sessions still live that no accepted request accounts for.
    fn sessions_left_by_refusals(&self) -> usize {
        self.sessions_after.saturating_sub(self.sessions_accepted)
    }
}

/// Runs the suite, one child per round.
///
/// # Errors
/// A child that fails.
pub(crate) async fn run(options: &Options, report: &mut Report) -> Result<()> {
    let mut runs = Vec::<Figures>::new();
    for round in 0..options.rounds() {
        progress(format!(
            "{SUITE}: {OVERLOAD}× for {}s, {}",
            options.overload_secs,
            options.round_label(round)
        ));
        let secs = if options.measured(round) {
            options.overload_secs
        } else {
            // The warm-up only needs to touch every path.
            options.overload_secs.min(2.0)
        };
        let figures: Figures = in_child(
            SUITE,
            vec![
                String::from("child-overload"),
                String::from("--secs"),
                secs.to_string(),
                String::from("--run-secs"),
                options.run_secs.to_string(),
            ],
        )
        .await?;
        if options.measured(round) {
            runs.push(figures);
        }
    }

    type Pick = fn(&Figures) -> f64;
    let rows: [(&str, &str, Unit, Better, &str, Pick, Pick); 6] = [
        (
            "goodput",
            "completions/s under 10× offered load",
            Unit::PerSecond,
            Better::Higher,
            "sustainable rate",
            |f| f.goodput_per_sec,
            |f| f.sustainable_per_sec,
        ),
        (
            "reject.p50",
            "busy rejection p50 latency",
            Unit::Nanos,
            Better::Lower,
            "admission p50, idle",
            |f| f.reject_p50_ns,
            |f| f.admit_p50_ns,
        ),
        (
            "reject.p99",
            "busy rejection p99 latency",
            Unit::Nanos,
            Better::Lower,
            "admission p99, idle",
            |f| f.reject_p99_ns,
            |f| f.admit_p99_ns,
        ),
        (
            "reject.max",
            "busy rejection max latency",
            Unit::Nanos,
            Better::Lower,
            "admission max, idle",
            |f| f.reject_max_ns,
            |f| f.admit_max_ns,
        ),
        (
            "accepted.p99",
            "accepted request/reply p99 latency",
            Unit::Nanos,
            Better::Lower,
            "p99 at sustainable rate",
            |f| f.accepted_p99_ns,
            |f| f.sustainable_p99_ns,
        ),
        (
            "peak_rss",
            "peak resident memory",
            Unit::Bytes,
            Better::Lower,
            "resident before overload",
            |f| f.rss_peak as f64,
            |f| f.rss_before as f64,
        ),
    ];
    for (id, case, unit, better, floor_is, runtime, floor) in rows {
        let values = |pick: Pick| runs.iter().map(pick).collect::<Vec<_>>();
        report.rows.push(
            Figure::new(SUITE, id, case, unit, better)
                .against(floor_is)
                .row(&values(runtime), &values(floor))?,
        );
    }

    let total = |pick: fn(&Figures) -> u64| runs.iter().map(pick).sum::<u64>();
    let (completed, not_completed, rejected, other) = (
        total(|f| f.completed),
        total(|f| f.not_completed),
        total(|f| f.rejected),
        total(|f| f.other_errors),
    );
    report.check(
        SUITE,
        format!("every accepted request completed ({completed} completed, {not_completed} not)"),
        not_completed == 0,
    );
    let first_error = runs.iter().find_map(|f| f.first_other_error.clone());
    report.check(
        SUITE,
        format!(
            "every refusal was busy ({rejected} busy, {other} other{})",
            first_error.map(|e| format!(": {e}")).unwrap_or_default()
        ),
        other == 0,
    );
    report.check(
        SUITE,
        format!("the load did overflow ({rejected} refused)"),
        rejected > 0,
    );
    let worst_reject = runs.iter().map(|f| f.reject_p99_ns).fold(0.0, f64::max);
    report.targets.push(Target::new(
        "overload: every busy refusal within a few milliseconds (p99 <= 5 ms in every run)",
        format!("worst p99 {:.3} ms", worst_reject / 1e6),
        worst_reject <= 5e6,
    ));
    report.targets.push(Target::new(
        "overload: every accepted request completes",
        format!("{completed} completed, {not_completed} accepted but not completed"),
        not_completed == 0,
    ));
    // Memory is bounded when it depends on the limits and queues, not on how much is
    // offered: a refused send must leave nothing behind. Accepted sends do leave their
    // task (in the store) and their session (among the warm ones), so growth alone
    // cannot tell; sessions no accepted send accounts for can.
    let leaked = runs
        .iter()
        .map(Figures::sessions_left_by_refusals)
        .max()
        .unwrap_or(0);
    let growth = runs
        .iter()
        .map(|f| (f.rss_peak as f64 - f.rss_before as f64) / f.offered.max(1) as f64)
        .fold(0.0, f64::max);
    let peak = runs.iter().map(|f| f.rss_peak).max().unwrap_or(0);
    report.targets.push(Target::new(
        "overload: peak resident memory bounded (refused sends leave nothing behind)",
        format!(
            "peak {:.1} MiB, growth {growth:.0} B per offered request; up to {leaked} \
             sessions left by refused sends",
            peak as f64 / 1_048_576.0
        ),
        leaked == 0,
    ));
    if let Some(last) = runs.last() {
        report.notes.push(format!(
            "{SUITE}: agent limit {LIMIT}, queue {QUEUE}, {}ms per message; last run \
             offered {:.0}/s ({} requests), {} completed, {} busy; peak resident {:.1} MiB \
             (before {:.1} MiB, after {:.1} MiB); {} sessions still live after the run, {} \
             of them left by refused sends",
            WORK.as_millis(),
            last.offered_per_sec,
            last.offered,
            last.completed,
            last.rejected,
            last.rss_peak as f64 / 1_048_576.0,
            last.rss_before as f64 / 1_048_576.0,
            last.rss_after as f64 / 1_048_576.0,
            last.sessions_after,
            last.sessions_left_by_refusals()
        ));
    }
    Ok(())
}

/// The slow agent: works for [`WORK`], then replies.
#[derive(Debug)]
struct Slow;

impl Agent for Slow {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        tokio::time::sleep(WORK).await;
        ctx.reply_text("done");
        Ok(())
    }
}

fn request() -> SendRequest {
    SendRequest::new(SLOW, Message::user_text("work"))
}

struct ClosedLoop(Runtime);

impl Requester for ClosedLoop {
    async fn request(&self, _sender: usize, _seq: u64) -> Result<()> {
        let done = self.0.supervisor().send_and_wait(request()).await?;
        if done.task.status.state != TaskState::Completed {
            return Err(Error::Unexpected(format!(
                "a slow task ended {}",
                done.task.status.state
            )));
        }
        Ok(())
    }
}

/// How one open-loop request ended.
enum Outcome {
    Completed(Duration),
    NotCompleted,
    Busy(Duration),
    Other(String),
}

/// The child's work: one round of the three phases.
///
/// # Errors
/// If the runtime cannot start, the closed loop fails, or requests never finish.
pub(crate) async fn measure(overload_secs: f64, run_secs: f64) -> Result<Figures> {
    let runtime = Runtime::builder()
        .agent_queue(QUEUE)
        .agent(AgentDescriptor::new(SLOW).concurrency(LIMIT), |_| Slow)
        .build()
        .await?;

    let run = Duration::from_secs_f64(run_secs.max(0.1) * 2.0);
    let sustainable = closed_loop(Arc::new(ClosedLoop(runtime.clone())), 2 * LIMIT, run).await?;
    let sustainable_per_sec = sustainable.throughput();

    // Admission latency while the agent has room: `send` returns once admitted.
    let mut admit = Latencies::new();
    let admit_rate = sustainable_per_sec / 5.0;
    let (tx, mut rx) = mpsc::unbounded_channel();
    paced(
        admit_rate,
        Duration::from_secs_f64(run_secs.max(0.1)),
        |_| {
            let (runtime, tx) = (runtime.clone(), tx.clone());
            tokio::spawn(async move {
                let sent = Instant::now();
                let result = runtime.supervisor().send(request()).await;
                let _ = tx.send(result.map(|_| sent.elapsed()));
            });
        },
    )
    .await;
    drop(tx);
    while let Some(result) = rx.recv().await {
        admit.record(result?);
    }
    // Let the admitted tasks finish before the overload starts.
    tokio::time::sleep(WORK * 4 + Duration::from_millis(50)).await;

    let rss_before = rss_bytes()?;
    let offered_per_sec = sustainable_per_sec * OVERLOAD;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let start = Instant::now();
    let offered = paced(
        offered_per_sec,
        Duration::from_secs_f64(overload_secs),
        |_| {
            let (runtime, tx) = (runtime.clone(), tx.clone());
            tokio::spawn(async move {
                let sent = Instant::now();
                let outcome = match runtime.supervisor().send_and_wait(request()).await {
                    Ok(done) if done.task.status.state == TaskState::Completed => {
                        Outcome::Completed(sent.elapsed())
                    }
                    Ok(_) => Outcome::NotCompleted,
                    Err(RuntimeError::Busy { .. }) => Outcome::Busy(sent.elapsed()),
                    Err(other) => Outcome::Other(other.to_string()),
                };
                let _ = tx.send(outcome);
            });
        },
    )
    .await;
    drop(tx);

    let (mut accepted, mut rejects) = (Latencies::new(), Latencies::new());
    let (mut not_completed, mut other_errors, mut first_other_error) = (0, 0, None);
    let drain = async {
        while let Some(outcome) = rx.recv().await {
            match outcome {
                Outcome::Completed(latency) => accepted.record(latency),
                Outcome::NotCompleted => not_completed += 1,
                Outcome::Busy(latency) => rejects.record(latency),
                Outcome::Other(error) => {
                    other_errors += 1;
                    first_other_error.get_or_insert(error);
                }
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), drain)
        .await
        .map_err(|_| {
            Error::Unexpected(String::from(
                "overload requests were still unfinished a minute after the load stopped",
            ))
        })?;
    let elapsed = start.elapsed();
    admit.sort();
    accepted.sort();
    rejects.sort();
    let rss_peak = peak_rss_bytes()?;
    let sessions_after = runtime.supervisor().session_count();
    let rss_after = rss_bytes()?;
    runtime.shutdown(Duration::from_secs(5)).await;

    Ok(Figures {
        sustainable_per_sec,
        sustainable_p99_ns: sustainable.latencies.quantile_ns(0.99),
        admit_p50_ns: admit.quantile_ns(0.5),
        admit_p99_ns: admit.quantile_ns(0.99),
        admit_max_ns: admit.max_ns(),
        offered_per_sec,
        offered,
        completed: accepted.count(),
        not_completed,
        rejected: rejects.count(),
        other_errors,
        first_other_error,
        goodput_per_sec: accepted.count() as f64 / elapsed.as_secs_f64(),
        accepted_p99_ns: accepted.quantile_ns(0.99),
        reject_p50_ns: rejects.quantile_ns(0.5),
        reject_p99_ns: rejects.quantile_ns(0.99),
        reject_max_ns: rejects.max_ns(),
        rss_before,
        rss_peak,
        rss_after,
        sessions_after,
        sessions_accepted: usize::try_from(
            sustainable.latencies.count() + admit.count() + accepted.count() + not_completed,
        )
        .unwrap_or(usize::MAX),
    })
}

/// Calls `issue` `rate` times per second for `length`, open loop: the schedule does not
/// wait for anything `issue` starts. The timer ticks each millisecond and issues what
/// is due by then, so rates above 1,000/s go out in small bursts. Returns how many were
/// issued.
async fn paced(rate: f64, length: Duration, mut issue: impl FnMut(u64)) -> u64 {
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let start = Instant::now();
    let mut issued = 0;
    loop {
        tick.tick().await;
        let elapsed = start.elapsed().min(length);
        let due = (rate * elapsed.as_secs_f64()) as u64;
        while issued < due {
            issue(issued);
            issued += 1;
        }
        if elapsed >= length {
            return issued;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn pacing_issues_the_rate_times_the_length() {
        let mut seen = Vec::new();
        let issued = paced(2_000.0, Duration::from_millis(50), |i| seen.push(i)).await;
        assert_eq!(issued, 100);
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_short_overload_completes_what_it_accepts_and_refuses_the_rest_as_busy() {
        let figures = measure(0.3, 0.1).await.expect("a short round succeeds");
        assert!(figures.offered > 0);
        assert_eq!(figures.not_completed, 0);
        assert_eq!(figures.other_errors, 0, "{:?}", figures.first_other_error);
        assert_eq!(figures.completed + figures.rejected, figures.offered);
        // Every accepted request started a conversation of its own.
        assert!(figures.sessions_after >= figures.sessions_accepted);
    }
}
