//! agentyard-bench: what the agentyard runtime costs, against its floors, in one run.
//!
//! Every figure is measured beside its floor — the same work done with the least
//! machinery (a raw ractor actor, a bare axum route) — in the same run on the same
//! machine, and printed with the ratio between the two. Each figure is repeated
//! (5 runs after a warm-up by default) and shown as median [min–max]: on a shared,
//! noisy machine no absolute time means much alone, but a ratio of paired runs does.
//!
//! Run it with `cargo run --release -p agentyard-bench -- [SUITE] [FLAGS]`; see
//! `docs/benchmarks.md` for what each suite measures and how to read it.
//!
//! # Layout
//!
//! - `suites`: one module per suite; each adds rows to the report.
//! - `load`: the closed-loop load generator the request/reply figures use.
//! - `fixtures`: the echo agent, the raw echo actor, counters.
//! - `stats`: medians, ranges, pairwise ratios, latency histograms.
//! - `report`: rows, the printed table, the JSON file, the performance targets.
//! - `machine`: what the machine is, and what its cores do together.
//! - `memory`: resident memory from `/proc/self/status`.
//! - `child`: servers in child processes of this program (the sustained suite's,
//!   the remote suite's peer).
//! - `options`: sizes and repeat counts, full and `--quick`.
//! - `disk`: the `disk` subcommand, what this disk charges for each way of asking for
//!   durability (the disk figures of docs/benchmarks.md's store entries).

// What the `agentyard` program runs with (docs/benchmarks.md, "The allocator").
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod child;
mod disk;
mod error;
mod fixtures;
mod load;
mod machine;
mod memory;
mod options;
mod report;
mod stats;
mod suites;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use agentyard::telemetry::{self, LogFormat, Logs, Telemetry};
use clap::{Parser, Subcommand, ValueEnum};
use serde::Serialize;
use tracing_subscriber::EnvFilter;

use crate::error::{Error, Result};
use crate::machine::Machine;
use crate::options::Options;
use crate::report::Report;
use crate::suites::sessions::{Pace, Side};

/// Measures the agentyard runtime against its floors and prints one table.
#[derive(Debug, Parser)]
#[command(
    name = "agentyard-bench",
    version,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    /// The disk probe, or a child measurement (hidden: the program starts these
    /// itself).
    #[command(subcommand)]
    command: Option<Command>,
    /// Which suite to run.
    #[arg(value_enum, default_value_t = Suite::All)]
    suite: Suite,
    /// A fast smoke run: small sizes, one repeat, no warm-up. Checks that everything
    /// works; its figures mean little.
    #[arg(long)]
    quick: bool,
    /// Measured runs per figure (default 5; 1 with --quick).
    #[arg(long)]
    repeats: Option<usize>,
    /// Sessions (and raw actors) for the sessions suite (default 100,000).
    #[arg(long)]
    sessions: Option<usize>,
    /// Seconds of overload per overload run (default 10).
    #[arg(long)]
    overload_secs: Option<f64>,
    /// Seconds of load in the sustained suite (default 300).
    #[arg(long)]
    sustained_secs: Option<f64>,
    /// Seconds per closed-loop request/reply run (default 1).
    #[arg(long)]
    run_secs: Option<f64>,
    /// Measure only the cases whose ids hold one of these as whole dot-separated words
    /// (comma-separated or repeated): a case's id is its rows' id without the figure, e.g.
    /// `http.send.message.16`, `store.journal.http`, `supervisor.request_reply.64`.
    /// For the supervisor, http and store suites; targets whose rows are left out are
    /// not decided.
    #[arg(long, value_delimiter = ',', value_name = "PART")]
    only: Vec<String>,
    /// Where to write the figures as JSON.
    #[arg(long, default_value = "target/bench.json")]
    json: PathBuf,
}

/// The suites, in the order `all` runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Suite {
    /// Every suite.
    All,
    /// The supervisor's send path against raw ractor `call` / `cast`.
    Supervisor,
    /// Many sessions against as many raw ractor actors: time and memory.
    Sessions,
    /// A2A over HTTP through the edge against bare axum routes.
    Http,
    /// A2A 1.0 through JSON-RPC, HTTP+JSON and gRPC against each other and the bare
    /// axum floor.
    Bindings,
    /// HTTP `message/send` with metrics (and, once added, tracing) on against off.
    Observability,
    /// Ten times the sustainable rate against a small concurrency limit.
    Overload,
    /// Five minutes of new conversations against `agentyard serve`: memory and
    /// throughput over time.
    Sustained,
    /// A local agent calling a remote agent over loopback against the bare client.
    Remote,
    /// The durable task stores (embedded, journal, PostgreSQL) against the in-memory store.
    Store,
    /// A 100-node workflow fan-out/fan-in (in process and pure A2A) against plain
    /// sends, and the time to the first node's start.
    Workflow,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Times durable writes on a directory's disk (append or overwrite and
    /// `fdatasync`, `O_DSYNC`, `O_DIRECT | O_DSYNC`) from several threads and prints a
    /// table.
    Disk {
        /// The directory whose disk is measured (a file is made and removed in it).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// Bytes a write carries (rounded up to whole 4 KiB blocks for `O_DIRECT`).
        #[arg(long, default_value_t = 8192)]
        size: usize,
        /// Seconds each mode runs at each thread count.
        #[arg(long, default_value_t = 3.0)]
        secs: f64,
        /// Thread counts, each run in turn.
        #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16")]
        threads: Vec<usize>,
        /// Modes, each run in turn.
        #[arg(
            long,
            value_enum,
            value_delimiter = ',',
            default_value = "grow,overwrite,dsync,direct-dsync"
        )]
        modes: Vec<disk::Mode>,
    },
    /// Measures one side of the sessions suite and prints its figures as JSON.
    #[command(hide = true)]
    ChildSessions {
        #[arg(long, value_enum)]
        side: Side,
        #[arg(long)]
        sessions: usize,
        #[arg(long, value_enum, default_value = "storm")]
        pace: Pace,
    },
    /// Measures one round of the overload suite and prints its figures as JSON.
    #[command(hide = true)]
    ChildOverload {
        #[arg(long)]
        secs: f64,
        #[arg(long)]
        run_secs: f64,
    },
    /// Runs `agentyard serve` with its defaults for the sustained suite.
    #[command(name = "child-serve", hide = true)]
    ServeDefaults,
    /// Serves the remote suite's peer and prints its card URL.
    #[command(name = "child-peer", hide = true)]
    RemotePeer,
}

/// What the JSON file says about the run beside its figures.
#[derive(Debug, Serialize)]
struct Context<'a> {
    program: &'static str,
    version: &'static str,
    suite: String,
    options: &'a Options,
    machine: Machine,
    /// Seconds since the Unix epoch when the run finished.
    finished_unix_secs: u64,
    wall_secs: f64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let tokio = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(tokio) => tokio,
        Err(error) => {
            eprintln!("agentyard-bench: cannot start tokio: {error}");
            return ExitCode::FAILURE;
        }
    };
    match tokio.block_on(run(cli)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(2),
        Err(error) => {
            eprintln!("agentyard-bench: {error}");
            let mut source = std::error::Error::source(&error);
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            ExitCode::FAILURE
        }
    }
}

/// Log lines of warnings and errors to stderr (or what `RUST_LOG` says), kept until the
/// returned value is dropped.
fn warnings() -> Result<Telemetry> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    telemetry::install(None, Some(Logs::new(LogFormat::Text, filter)))
        .map_err(|error| Error::Unexpected(format!("cannot install the log subscriber: {error}")))
}

/// Runs what the command line asks; `Ok(false)` when a check failed.
async fn run(cli: Cli) -> Result<bool> {
    match cli.command {
        Some(Command::ChildSessions {
            side,
            sessions,
            pace,
        }) => {
            let phases = suites::sessions::measure(side, sessions, pace).await?;
            emit(&format!("{}\n", serde_json::to_string(&phases)?))?;
            return Ok(true);
        }
        Some(Command::ChildOverload { secs, run_secs }) => {
            let figures = suites::overload::measure(secs, run_secs).await?;
            emit(&format!("{}\n", serde_json::to_string(&figures)?))?;
            return Ok(true);
        }
        Some(Command::ServeDefaults) => {
            suites::sustained::serve().await?;
            return Ok(true);
        }
        Some(Command::RemotePeer) => {
            suites::remote::serve_peer().await?;
            return Ok(true);
        }
        Some(Command::Disk {
            dir,
            size,
            secs,
            threads,
            modes,
        }) => {
            let probe = disk::Probe {
                dir,
                size,
                run: Duration::from_secs_f64(positive("--secs", secs)?),
                threads,
                modes,
            };
            // Blocking file I/O for seconds: off the runtime's workers.
            let outcomes = tokio::task::spawn_blocking({
                let probe = probe.clone();
                move || disk::run(&probe)
            })
            .await??;
            emit(&disk::table(&probe, &outcomes))?;
            return Ok(true);
        }
        None => {}
    }

    // The runtime's warnings (a store's writer naming the database's error behind a
    // refused write, an agent that panicked) are what says why a run failed; without a
    // subscriber they would go nowhere. The observability suite installs the
    // process's one global subscriber itself, so a run that includes it has none.
    let _logs = if matches!(cli.suite, Suite::All | Suite::Observability) {
        None
    } else {
        Some(warnings()?)
    };

    let mut options = if cli.quick {
        Options::quick()
    } else {
        Options::full()
    };
    if let Some(repeats) = cli.repeats {
        options.repeats = repeats.max(1);
    }
    if let Some(sessions) = cli.sessions {
        options.sessions = sessions.max(1);
    }
    if let Some(secs) = cli.overload_secs {
        options.overload_secs = positive("--overload-secs", secs)?;
    }
    if let Some(secs) = cli.sustained_secs {
        options.sustained_secs = positive("--sustained-secs", secs)?;
    }
    if let Some(secs) = cli.run_secs {
        options.run_secs = positive("--run-secs", secs)?;
    }
    if !cli.only.is_empty() {
        if !matches!(cli.suite, Suite::Supervisor | Suite::Http | Suite::Store) {
            return Err(Error::Unexpected(String::from(
                "--only narrows the cases of the supervisor, http and store suites: name one of them",
            )));
        }
        if cli.only.iter().any(String::is_empty) {
            return Err(Error::Unexpected(String::from(
                "--only takes non-empty parts of case ids, e.g. `send.message.16`",
            )));
        }
        options.only = cli.only;
    }

    // Before the suites, so that nothing of theirs is still running.
    let machine = Machine::detect(cli.quick);
    let started = Instant::now();
    let mut report = Report::default();
    let every = cli.suite == Suite::All;
    if every || cli.suite == Suite::Supervisor {
        suites::supervisor::run(&options, &mut report).await?;
    }
    if every || cli.suite == Suite::Sessions {
        suites::sessions::run(&options, &mut report).await?;
    }
    if every || cli.suite == Suite::Http {
        suites::http::run(&options, &mut report).await?;
    }
    if every || cli.suite == Suite::Bindings {
        suites::bindings::run(&options, &mut report).await?;
    }
    if every || cli.suite == Suite::Observability {
        suites::observability::run(&options, &mut report).await?;
    }
    if every || cli.suite == Suite::Overload {
        suites::overload::run(&options, &mut report).await?;
    }
    if every || cli.suite == Suite::Store {
        suites::store::run(&options, &mut report).await?;
    }
    if every || cli.suite == Suite::Workflow {
        suites::workflow::run(&options, &mut report).await?;
    }
    if every || cli.suite == Suite::Sustained {
        suites::sustained::run(&options, &mut report).await?;
    }
    if every || cli.suite == Suite::Remote {
        suites::remote::run(&options, &mut report).await?;
    }
    report.evaluate_targets();

    let header = format!(
        "agentyard-bench {} — {}; figures are median [min–max] over {} run(s){}; \
         ratio = runtime/floor per paired run (↑ higher is better, ↓ lower is better)",
        env!("CARGO_PKG_VERSION"),
        machine.describe(),
        options.repeats,
        if options.warmup {
            " after a warm-up"
        } else {
            ""
        },
    );
    emit(&report.render(&header))?;
    let wall_secs = started.elapsed().as_secs_f64();
    let context = Context {
        program: env!("CARGO_PKG_NAME"),
        version: env!("CARGO_PKG_VERSION"),
        suite: format!("{:?}", cli.suite).to_lowercase(),
        options: &options,
        machine,
        finished_unix_secs: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        wall_secs,
    };
    report.write_json(&cli.json, &context)?;
    emit(&format!(
        "\nwall time {wall_secs:.0}s; figures written to {}\n",
        cli.json.display()
    ))?;
    Ok(report.checks.iter().all(|check| check.ok))
}

/// Writes to stdout. A reader that has gone away (`agentyard-bench | head`) is not a
/// failure: the rest of the output is dropped, the run finishes and writes its JSON
/// file, and nothing panics (`print!` would, on the broken pipe).
fn emit(text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(Error::Io {
            what: String::from("writing to stdout"),
            source,
        }),
        Ok(()) => Ok(()),
    }
}

/// `value` seconds from `flag`, refused unless positive and short enough for a
/// `Duration` (the suites turn them into one with `Duration::from_secs_f64`, which
/// panics past its range).
fn positive(flag: &str, value: f64) -> Result<f64> {
    if value > 0.0 && Duration::try_from_secs_f64(value).is_ok() {
        Ok(value)
    } else {
        Err(Error::Unexpected(format!(
            "{flag} must be a positive number of seconds, not {value}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_taken_only_when_positive_and_a_duration_holds_them() {
        assert_eq!(positive("--run-secs", 0.5).ok(), Some(0.5));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e30] {
            let refused = positive("--run-secs", bad).expect_err("refused");
            assert!(
                refused
                    .to_string()
                    .starts_with("--run-secs must be a positive number of seconds"),
                "{refused}"
            );
        }
    }
}
