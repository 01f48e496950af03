//! Suite 2: many sessions against as many raw ractor actors.
//!
//! Each side runs in a child process of its own (the program re-executed with a hidden
//! subcommand), so the allocator state one side leaves behind never shows in the
//! other's resident memory. A child measures three phases, reading `VmRSS` after a
//! settle before the first and after each:
//!
//! 1. **spawn** N sessions (`Runtime::spawn_session`) or N raw echo actors, idle;
//! 2. **deliver** one message to each (`send`, or `cast`), until all are handled;
//! 3. **stop** them all: `passivate_all_idle` until `session_count() == 0` and every
//!    agent value is dropped, or `stop` on every raw actor until every state is dropped.
//!
//! Memory per session after phase 2 includes the task the message created, which the
//! runtime keeps in its task store after the session is gone; that is what phase 3
//! leaves behind.
//!
//! Each side is measured twice a round: spawned in a storm (64 tasks that never yield,
//! the rows above) and at a server's pace (the same tasks yielding after every spawn,
//! as a server's request handlers do between the sessions they start; one row, idle
//! memory). A storm defers the work each spawn sets off (the session starting, the
//! supervisor hearing of it) until the spawners let go of the cores, and the runtime's
//! figure then scatters by about ±100 bytes a session from run to run; raw actors,
//! which set off nothing, hold the same either way.

use std::sync::Arc;
use std::time::Duration;

use agentyard::{ContextId, InMemoryTaskStore, Message, SendRequest};
use serde::{Deserialize, Serialize};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::fixtures::{
    Alive, Counter, ECHO, EchoArgs, EchoMsg, bench_builder, echo_runtime_with, eventually,
    spawn_echo_actors,
};
use crate::memory::rss_bytes;
use crate::options::{Options, progress};
use crate::report::{Better, Figure, Report, Unit};
use crate::suites::in_child;

const SUITE: &str = "sessions";

/// Tasks that spawn and deliver in parallel, on either side.
const WORKERS: usize = 64;

/// How long to wait before reading resident memory, so freed memory and finishing
/// tasks have settled.
const SETTLE: Duration = Duration::from_millis(300);

/// How long a phase may take before something is assumed lost.
const LOST_AFTER: Duration = Duration::from_secs(300);

/// Which side a child measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Side {
    /// Sessions of the runtime.
    Runtime,
    /// Raw ractor actors.
    Raw,
}

/// How a child's spawners go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Pace {
    /// Never yielding: as fast as the spawners can.
    Storm,
    /// Yielding after every spawn, as a server's request handlers would.
    Paced,
}

impl Pace {
    /// Lets the runtime's other tasks run, if this pace says so.
    async fn after_spawn(self) {
        if self == Self::Paced {
            tokio::task::yield_now().await;
        }
    }
}

/// What one child measured, in seconds and bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Phases {
    pub(crate) count: usize,
    pub(crate) spawn_secs: f64,
    pub(crate) deliver_secs: f64,
    pub(crate) stop_secs: f64,
    pub(crate) rss_base: u64,
    pub(crate) rss_idle: u64,
    pub(crate) rss_loaded: u64,
    pub(crate) rss_stopped: u64,
}

impl Phases {
    fn per_session(&self, bytes: u64, minus: u64) -> f64 {
        (bytes as f64 - minus as f64) / self.count as f64
    }
}

/// Runs the suite: each round starts one child per side.
///
/// # Errors
/// A child that fails.
pub(crate) async fn run(options: &Options, report: &mut Report) -> Result<()> {
    let n = options.sessions;
    let (mut runtime, mut raw) = (Vec::<Phases>::new(), Vec::<Phases>::new());
    let (mut runtime_paced, mut raw_paced) = (Vec::<Phases>::new(), Vec::<Phases>::new());
    for round in 0..options.rounds() {
        progress(format!(
            "{SUITE}: {n} sessions, {}",
            options.round_label(round)
        ));
        let (r, f) = pair(round, n, Pace::Storm).await?;
        let (rp, fp) = pair(round, n, Pace::Paced).await?;
        if options.measured(round) {
            runtime.push(r);
            raw.push(f);
            runtime_paced.push(rp);
            raw_paced.push(fp);
        }
    }
    type Pick = fn(&Phases) -> f64;
    let figures: [(&str, String, Unit, Better, Pick); 6] = [
        (
            "spawn_deliver.secs",
            format!("spawn {n} + deliver 1 message each, wall"),
            Unit::Seconds,
            Better::Lower,
            |p| p.spawn_secs + p.deliver_secs,
        ),
        (
            "idle.bytes",
            String::from("resident memory per idle session"),
            Unit::Bytes,
            Better::Lower,
            |p| p.per_session(p.rss_idle, p.rss_base),
        ),
        (
            "loaded.bytes",
            String::from("resident memory per session after 1 message"),
            Unit::Bytes,
            Better::Lower,
            |p| p.per_session(p.rss_loaded, p.rss_base),
        ),
        (
            "stop.secs",
            format!("passivate / stop all {n}, wall"),
            Unit::Seconds,
            Better::Lower,
            |p| p.stop_secs,
        ),
        (
            "returned.bytes",
            String::from("memory returned per session when stopped"),
            Unit::Bytes,
            Better::Higher,
            |p| p.per_session(p.rss_loaded, p.rss_stopped),
        ),
        (
            "retained.bytes",
            String::from("memory still held per session after stop"),
            Unit::Bytes,
            Better::Lower,
            |p| p.per_session(p.rss_stopped, p.rss_base),
        ),
    ];
    let values = |runs: &[Phases], pick: Pick| runs.iter().map(pick).collect::<Vec<_>>();
    for (id, case, unit, better, pick) in figures {
        report.rows.push(
            Figure::new(SUITE, id, case, unit, better)
                .against("raw ractor actors")
                .row(&values(&runtime, pick), &values(&raw, pick))?,
        );
    }
    let idle: Pick = |p| p.per_session(p.rss_idle, p.rss_base);
    report.rows.push(
        Figure::new(
            SUITE,
            "idle_paced.bytes",
            String::from("resident memory per idle session, spawned at a server's pace"),
            Unit::Bytes,
            Better::Lower,
        )
        .against("raw ractor actors")
        .row(&values(&runtime_paced, idle), &values(&raw_paced, idle))?,
    );
    report.notes.push(format!(
        "{SUITE}: each side in its own child process; memory is VmRSS after a {}ms settle, \
         minus the child's baseline, over {n}; the runtime's figure after 1 message \
         includes the task it created, which stays in the task store after passivation",
        SETTLE.as_millis()
    ));
    Ok(())
}

/// One child per side at `pace`, the side that goes first alternating by round.
async fn pair(round: usize, n: usize, pace: Pace) -> Result<(Phases, Phases)> {
    Ok(if round.is_multiple_of(2) {
        let r = child(Side::Runtime, n, pace).await?;
        (r, child(Side::Raw, n, pace).await?)
    } else {
        let f = child(Side::Raw, n, pace).await?;
        (child(Side::Runtime, n, pace).await?, f)
    })
}

/// A value as the child's command line spells it: the name clap parses it from, so
/// the two cannot drift apart.
fn arg(value: impl clap::ValueEnum) -> String {
    value
        .to_possible_value()
        .map(|name| name.get_name().to_owned())
        .unwrap_or_default()
}

async fn child(side: Side, sessions: usize, pace: Pace) -> Result<Phases> {
    let (side_arg, pace_arg) = (arg(side), arg(pace));
    let label = format!("{SUITE} ({side_arg}, {pace_arg})");
    in_child(
        &label,
        vec![
            String::from("child-sessions"),
            String::from("--side"),
            side_arg,
            String::from("--sessions"),
            sessions.to_string(),
            String::from("--pace"),
            pace_arg,
        ],
    )
    .await
}

/// The child's work: measure one side's phases.
///
/// # Errors
/// A spawn or send that fails, or a phase that never finishes.
pub(crate) async fn measure(side: Side, count: usize, pace: Pace) -> Result<Phases> {
    match side {
        Side::Runtime => measure_runtime(count, pace).await,
        Side::Raw => measure_raw(count, pace).await,
    }
}

fn context(i: usize) -> ContextId {
    ContextId::new(format!("session-{i:08}"))
}

/// Splits `0..count` into [`WORKERS`] ranges.
fn ranges(count: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let per = count.div_ceil(WORKERS).max(1);
    (0..count)
        .step_by(per)
        .map(move |start| start..(start + per).min(count))
}

async fn settle_rss() -> Result<u64> {
    tokio::time::sleep(SETTLE).await;
    rss_bytes()
}

async fn measure_runtime(count: usize, pace: Pace) -> Result<Phases> {
    let handled = Counter::new(count);
    let alive = Arc::new(Alive::default());
    // Every task is kept (the store's default keeps 10,000 ended ones), so the
    // figure after one message is a session plus its task, as the notes say.
    let store = InMemoryTaskStore::new().finished_task_limit(count);
    let runtime = echo_runtime_with(bench_builder()?.store(store), &handled, &alive).await?;
    let rss_base = settle_rss().await?;

    let start = Instant::now();
    let mut tasks = JoinSet::new();
    for range in ranges(count) {
        let runtime = runtime.clone();
        tasks.spawn(async move {
            for i in range {
                runtime.spawn_session(ECHO, Some(context(i)))?;
                pace.after_spawn().await;
            }
            Ok::<_, Error>(())
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined??;
    }
    eventually("every session starting", LOST_AFTER, || {
        alive.count() == count
    })
    .await?;
    let spawn_secs = start.elapsed().as_secs_f64();
    let rss_idle = settle_rss().await?;

    let start = Instant::now();
    for range in ranges(count) {
        let runtime = runtime.clone();
        tasks.spawn(async move {
            for i in range {
                let message = Message::user_text("hello").with_context_id(context(i));
                runtime
                    .send_request(SendRequest::new(ECHO, message))
                    .await?;
            }
            Ok::<_, Error>(())
        });
    }
    handled.reached(LOST_AFTER).await?;
    let deliver_secs = start.elapsed().as_secs_f64();
    while let Some(joined) = tasks.join_next().await {
        joined??;
    }
    let rss_loaded = settle_rss().await?;

    let start = Instant::now();
    let supervisor = runtime.supervisor();
    // A session whose task is still finishing is not idle yet: ask again until all are
    // gone.
    eventually("every session passivating", LOST_AFTER, || {
        supervisor.passivate_all_idle();
        supervisor.session_count() == 0
    })
    .await?;
    eventually("every session actor stopping", LOST_AFTER, || {
        alive.count() == 0
    })
    .await?;
    let stop_secs = start.elapsed().as_secs_f64();
    let rss_stopped = settle_rss().await?;
    runtime.shutdown(Duration::from_secs(5)).await;
    Ok(Phases {
        count,
        spawn_secs,
        deliver_secs,
        stop_secs,
        rss_base,
        rss_idle,
        rss_loaded,
        rss_stopped,
    })
}

async fn measure_raw(count: usize, pace: Pace) -> Result<Phases> {
    let handled = Counter::new(count);
    let alive = Arc::new(Alive::default());
    let args = EchoArgs {
        handled: Arc::clone(&handled),
        alive: Arc::clone(&alive),
    };
    let rss_base = settle_rss().await?;

    let start = Instant::now();
    let mut tasks = JoinSet::new();
    for range in ranges(count) {
        let args = args.clone();
        tasks.spawn(async move {
            if pace == Pace::Storm {
                return spawn_echo_actors(range.len(), &args);
            }
            let mut actors = Vec::with_capacity(range.len());
            for _ in range {
                actors.extend(spawn_echo_actors(1, &args)?);
                pace.after_spawn().await;
            }
            Ok::<_, Error>(actors)
        });
    }
    let mut groups = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        groups.push(Arc::new(joined??));
    }
    eventually("every raw actor starting", LOST_AFTER, || {
        alive.count() == count
    })
    .await?;
    let spawn_secs = start.elapsed().as_secs_f64();
    let rss_idle = settle_rss().await?;

    let start = Instant::now();
    let mut casts = JoinSet::new();
    for group in &groups {
        let group = Arc::clone(group);
        casts.spawn(async move {
            for actor in group.iter() {
                actor
                    .cast(EchoMsg::Cast(Message::user_text("hello")))
                    .map_err(|e| Error::Call(e.to_string()))?;
            }
            Ok::<_, Error>(())
        });
    }
    handled.reached(LOST_AFTER).await?;
    let deliver_secs = start.elapsed().as_secs_f64();
    while let Some(joined) = casts.join_next().await {
        joined??;
    }
    let rss_loaded = settle_rss().await?;

    let start = Instant::now();
    for actor in groups.iter().flat_map(|group| group.iter()) {
        actor.stop(None);
    }
    eventually("every raw actor stopping", LOST_AFTER, || {
        alive.count() == 0
    })
    .await?;
    let stop_secs = start.elapsed().as_secs_f64();
    drop(groups);
    let rss_stopped = settle_rss().await?;
    Ok(Phases {
        count,
        spawn_secs,
        deliver_secs,
        stop_secs,
        rss_base,
        rss_idle,
        rss_loaded,
        rss_stopped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_every_index_once() {
        for count in [0, 1, 63, 64, 65, 1000] {
            let covered: Vec<usize> = ranges(count).flatten().collect();
            assert_eq!(covered, (0..count).collect::<Vec<_>>(), "count {count}");
            assert!(ranges(count).count() <= WORKERS);
        }
    }

    #[test]
    fn the_child_is_asked_in_the_words_its_command_line_parses() {
        use clap::ValueEnum as _;
        for side in Side::value_variants() {
            assert_eq!(Side::from_str(&arg(*side), false), Ok(*side));
        }
        for pace in Pace::value_variants() {
            assert_eq!(Pace::from_str(&arg(*pace), false), Ok(*pace));
        }
        assert_eq!(arg(Pace::Storm), "storm", "the child's default");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn both_sides_measure_every_phase_in_process() {
        for side in [Side::Runtime, Side::Raw] {
            for pace in [Pace::Storm, Pace::Paced] {
                let phases = measure(side, 200, pace)
                    .await
                    .expect("a small run succeeds");
                assert_eq!(phases.count, 200);
                assert!(phases.rss_base > 0 && phases.rss_idle > 0 && phases.rss_loaded > 0);
                assert!(phases.spawn_secs > 0.0 && phases.deliver_secs > 0.0);
            }
        }
    }
}
