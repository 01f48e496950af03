//! Suite 6: what a durable task store costs, against the in-memory store in the same
//! run.
//!
//! **Both sides.** The same runtime (the supervisor suite's policy and raised limits,
//! the echo agent) differing only in its task store: the embedded store (a SQLite file
//! in a fresh temporary directory), the journal store (an append-only log in one) or
//! PostgreSQL (a fresh schema on the server
//! `AGENTYARD_TEST_POSTGRES_URL` names; left out, and said so, without one) against
//! the in-memory store. Every write of a durable store is committed before it is
//! answered; concurrent writes share a transaction (group commit).
//!
//! **Calls.** HTTP `message/send` (blocking) to the echo agent through the edge, and
//! the supervisor's request/reply (`send_and_wait`) in process, each at 16 concurrent
//! senders with one conversation each; the two sides run in alternating order within a
//! round. Targets: the embedded and journal stores at least 60% of the in-memory
//! throughput, and PostgreSQL at least 40%, for both calls.
//!
//! **A turn that outlasts a batch.** A third call, without a target: request/reply to
//! an agent that takes [`TURN`] before it answers. The echo's insert, `working` and
//! final status usually share a batch, so its task is written once; this agent's final
//! status comes a batch or more later and updates the row its insert wrote, as any
//! agent's does whose work takes longer than a commit.
//!
//! **The disk's flush.** Before the rounds the suite times `fdatasync` of 16 KiB written
//! over a file in the scratch directory, and a note gives what its median allows any
//! store that flushes one batch at a time before it answers at 16 closed-loop senders,
//! against the in-memory store's figures: the ceiling the targets are measured under on
//! this machine. The probe runs on an idle disk; under the suite's load a flush takes
//! longer (`docs/benchmarks.md`), so the ceiling is an upper bound, not a forecast.

use std::sync::Arc;
use std::time::Duration;

use agentyard::store::{JournalTaskStore, Retention, SqlTaskStore, StoreLocation, TaskStore};
use agentyard::{
    Agent, AgentDescriptor, AgentError, ContextId, Message, Runtime, SendRequest, Supervisor,
    TaskContext, TaskState,
};
use agentyard_actors::edge::{AgentSettings, Edge, EdgeConfig, PushConfig};

use crate::error::{Error, Result};
use crate::fixtures::{ECHO, bench_builder, plain_echo};
use crate::load::{LoadResult, Pick, Requester, closed_loop, each};
use crate::options::{Options, progress};
use crate::report::{Better, Figure, Report, Target, Unit};
use crate::stats::Latencies;

const SUITE: &str = "store";

/// Concurrent senders of every call.
const CONCURRENCY: usize = 16;

/// How long the agent of [`Call::LongTurn`] takes before it answers: longer than a
/// durable store's commit, so its final status lands in a later batch than its insert.
const TURN: Duration = Duration::from_millis(2);

/// The agent that takes [`TURN`].
const PAUSE: &str = "pause";

/// The calls whose ratios issue 11's targets name.
const TARGETED: [Call; 2] = [Call::Http, Call::Supervisor];

/// Bytes each timed flush of [`flush_times`] writes: about what a commit of the
/// embedded store writes to its log for one send (`docs/benchmarks.md` §7).
const FLUSHED: usize = 16 * 1024;

/// A durable store to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Embedded,
    Journal,
    Postgres,
}

impl Kind {
    fn id(self) -> &'static str {
        match self {
            Self::Embedded => "embedded",
            Self::Journal => "journal",
            Self::Postgres => "postgres",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Embedded => "embedded store",
            Self::Journal => "journal store",
            Self::Postgres => "PostgreSQL store",
        }
    }

    /// The least ratio to the in-memory store's throughput (issue 11's targets).
    fn target(self) -> f64 {
        match self {
            Self::Embedded | Self::Journal => 0.6,
            Self::Postgres => 0.4,
        }
    }
}

/// The calls measured.
#[derive(Debug, Clone, Copy)]
enum Call {
    Http,
    Supervisor,
    /// Request/reply to the agent that takes [`TURN`].
    LongTurn,
}

impl Call {
    fn id(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Supervisor => "supervisor",
            Self::LongTurn => "long_turn",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Http => "HTTP message/send",
            Self::Supervisor => "supervisor request/reply",
            Self::LongTurn => "request/reply, 2 ms turn",
        }
    }

    /// The agent the call sends to.
    fn agent(self) -> &'static str {
        match self {
            Self::Http | Self::Supervisor => ECHO,
            Self::LongTurn => PAUSE,
        }
    }
}

/// An agent whose turn takes [`TURN`]: its task's final status is written a batch or
/// more after its insert.
struct Pause;

impl Agent for Pause {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        tokio::time::sleep(TURN).await;
        let text = ctx.message().text();
        ctx.reply_text(text);
        Ok(())
    }
}

/// Runs the suite.
///
/// # Errors
/// A store or server that cannot start, or a request that fails.
pub(crate) async fn run(options: &Options, report: &mut Report) -> Result<()> {
    // This disk's flush, in the scratch directory the embedded store gets: the floor
    // under every store that flushes before it answers (the note below the table).
    let flushes = {
        let scratch = tempdir()?;
        let times = flush_times(&scratch, if options.quick { 20 } else { 200 });
        let _ = std::fs::remove_dir_all(&scratch);
        times?
    };
    let mut kinds = vec![Kind::Embedded, Kind::Journal];
    match std::env::var(agentyard::store::testing::POSTGRES_URL_VAR) {
        Ok(_) => kinds.push(Kind::Postgres),
        Err(_) => report.notes.push(format!(
            "{SUITE}: PostgreSQL left out: {} is not set (store/ci/postgres.sh prints a URL)",
            agentyard::store::testing::POSTGRES_URL_VAR
        )),
    }
    let calls = [Call::Http, Call::Supervisor, Call::LongTurn];
    let case_id = |kind: Kind, call: Call| format!("{SUITE}.{}.{}", kind.id(), call.id());
    let cases: Vec<String> = kinds
        .iter()
        .flat_map(|&kind| calls.iter().map(move |&call| case_id(kind, call)))
        .collect();
    options.wants_any(SUITE, &cases)?;
    // (kind, call) → runs of the durable side and of the in-memory side.
    let mut durable: Vec<Vec<LoadResult>> = vec![Vec::new(); kinds.len() * calls.len()];
    let mut memory: Vec<Vec<LoadResult>> = vec![Vec::new(); kinds.len() * calls.len()];
    for round in 0..options.rounds() {
        progress(format!(
            "{SUITE}: {} stores, {}",
            kinds.len(),
            options.round_label(round)
        ));
        for (k, &kind) in kinds.iter().enumerate() {
            if !calls
                .iter()
                .any(|&call| options.wants(&case_id(kind, call)))
            {
                continue;
            }
            let scratch = tempdir()?;
            let store = open(kind, &scratch).await?;
            let durable_side = Side::start(Some(store)).await?;
            let memory_side = Side::start(None).await?;
            for (c, &call) in calls.iter().enumerate() {
                if !options.wants(&case_id(kind, call)) {
                    continue;
                }
                let slot = k * calls.len() + c;
                let run = options.run_time();
                let (d, m) = if (round + slot).is_multiple_of(2) {
                    let d = durable_side.measure(call, run).await?;
                    (d, memory_side.measure(call, run).await?)
                } else {
                    let m = memory_side.measure(call, run).await?;
                    (durable_side.measure(call, run).await?, m)
                };
                if options.measured(round) {
                    durable[slot].push(d);
                    memory[slot].push(m);
                }
            }
            durable_side.stop().await;
            memory_side.stop().await;
            let _ = std::fs::remove_dir_all(&scratch);
        }
    }
    for (k, &kind) in kinds.iter().enumerate() {
        for (c, &call) in calls.iter().enumerate() {
            let slot = k * calls.len() + c;
            if durable[slot].is_empty() {
                continue; // left out by --only
            }
            let figures: [(&str, &str, Unit, Better, Pick); 3] = [
                (
                    "throughput",
                    "requests",
                    Unit::PerSecond,
                    Better::Higher,
                    |r| Some(r.throughput()),
                ),
                ("p99", "p99 latency", Unit::Nanos, Better::Lower, |r| {
                    Some(r.latencies.quantile_ns(0.99))
                }),
                // The process's CPU per request (the store's writer thread and the
                // client included): set against the throughput's ratio, it tells a
                // store that costs CPU from one whose requests wait on the disk while
                // the cores have time.
                (
                    "cpu",
                    "CPU per request",
                    Unit::Nanos,
                    Better::Lower,
                    LoadResult::cpu_per_request_ns,
                ),
            ];
            for (id, what, unit, better, pick) in figures {
                let (Some(durable), Some(memory)) =
                    (each(&durable[slot], pick), each(&memory[slot], pick))
                else {
                    continue;
                };
                report.rows.push(
                    Figure::new(
                        SUITE,
                        format!("{}.{}.{CONCURRENCY}.{id}", kind.id(), call.id()),
                        format!(
                            "{}, {}, {CONCURRENCY} conn, {what}",
                            kind.label(),
                            call.label()
                        ),
                        unit,
                        better,
                    )
                    .against("the in-memory store")
                    .row(&durable, &memory)?,
                );
            }
        }
        let ratios: Vec<(String, f64)> = TARGETED
            .iter()
            .filter_map(|call| {
                let id = format!(
                    "{SUITE}.{}.{}.{CONCURRENCY}.throughput",
                    kind.id(),
                    call.id()
                );
                report
                    .row(&id)
                    .map(|row| (call.id().to_owned(), row.ratio.median))
            })
            .collect();
        let target = match kind {
            Kind::Embedded => {
                "embedded store >= 60% of the in-memory store's throughput (HTTP send and request/reply, 16 conn)"
            }
            Kind::Journal => {
                "journal store (the default) >= 60% of the in-memory store's throughput (HTTP send and request/reply, 16 conn)"
            }
            Kind::Postgres => {
                "PostgreSQL store >= 40% of the in-memory store's throughput (HTTP send and request/reply, 16 conn)"
            }
        };
        report.targets.push(Target::from_ratios(
            target,
            &ratios,
            TARGETED.len(),
            kind.target(),
        ));
    }
    report.notes.push(flush_note(&flushes, report, &TARGETED));
    report.notes.push(format!(
        "{SUITE}: each durable store is fresh per round (a new SQLite file; a new journal; a \
         new PostgreSQL schema), committed before it answers (SQLite synchronous=FULL, \
         WAL; the journal's fdatasync); one \
         conversation per sender; loopback HTTP with keep-alive"
    ));
    Ok(())
}

/// `samples` flush times of this machine's disk: each writes [`FLUSHED`] bytes over a
/// file written (and flushed) beforehand, as SQLite reuses its write-ahead log from its
/// start, then `fdatasync`s it (the `disk` probe's `overwrite` mode, by count).
/// Blocking, but a fraction of a second before any run is timed.
fn flush_times(dir: &std::path::Path, samples: usize) -> Result<Latencies> {
    crate::disk::overwrite_flushes(&dir.join("flush-probe"), FLUSHED, samples)
}

/// What this disk's flush allows a store that flushes one batch at a time before it
/// answers (as every store here does; two flushes in flight were measured and gained
/// nothing, `docs/benchmarks.md`): with
/// [`CONCURRENCY`] closed-loop senders, each answer waits for the flush that started
/// before its commit landed (half of one on average) and then its own, so at most
/// `CONCURRENCY / (1.5 × F)` sends a second, `F` the median flush; said against the
/// in-memory store's median throughput of each call, as the table's rows of the
/// first store measured show it.
fn flush_note(flushes: &Latencies, report: &Report, calls: &[Call]) -> String {
    let ms = |quantile: f64| flushes.quantile_ns(quantile) / 1e6;
    // CONCURRENCY is small: the cast is exact.
    #[allow(clippy::cast_precision_loss)]
    let ceiling = CONCURRENCY as f64 / (1.5 * (ms(0.5) / 1e3).max(1e-9));
    let against = calls
        .iter()
        .filter_map(|call| {
            // The in-memory side of the first store measured with this call.
            let rate = [Kind::Embedded, Kind::Journal, Kind::Postgres]
                .iter()
                .find_map(|kind| {
                    let id = format!(
                        "{SUITE}.{}.{}.{CONCURRENCY}.throughput",
                        kind.id(),
                        call.id()
                    );
                    report.row(&id).map(|row| row.floor.median)
                })?;
            Some(format!(
                "{:.3} of the in-memory {} median ({rate:.0}/s)",
                ceiling / rate,
                call.id(),
            ))
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{SUITE}: this disk flushes {} KiB written over a file in {:.3} ms at the median \
         ({:.3} ms at p90, {} fdatasyncs, idle); a store that flushes one batch at a \
         time before it answers serves at most {CONCURRENCY} / (1.5 x {:.3} ms) = \
         {ceiling:.0} sends/s with {CONCURRENCY} closed-loop senders: {against}",
        FLUSHED / 1024,
        ms(0.5),
        ms(0.9),
        flushes.count(),
        ms(0.5),
    )
}

fn tempdir() -> Result<std::path::PathBuf> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "agentyard-bench-store-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
        what: format!("creating {}", dir.display()),
        source,
    })?;
    Ok(dir)
}

async fn open(kind: Kind, scratch: &std::path::Path) -> Result<Arc<dyn TaskStore>> {
    let location = match kind {
        Kind::Embedded => StoreLocation::Embedded(scratch.to_owned()),
        Kind::Journal => {
            let store = JournalTaskStore::open(scratch, Retention::default())
                .await
                .map_err(|error| {
                    Error::Unexpected(format!("the {} did not open: {error}", kind.label()))
                })?;
            return Ok(Arc::new(store));
        }
        Kind::Postgres => {
            let url = agentyard::store::testing::postgres_schema("bench")
                .await
                .ok_or_else(|| Error::Unexpected(String::from("PostgreSQL is not reachable")))?;
            StoreLocation::Postgres(url)
        }
    };
    let store = SqlTaskStore::open(location, Retention::default())
        .await
        .map_err(|error| {
            Error::Unexpected(format!("the {} did not open: {error}", kind.label()))
        })?;
    Ok(Arc::new(store))
}

/// One runtime behind its edge, with a store.
struct Side {
    runtime: Runtime,
    edge: Edge,
    client: reqwest::Client,
}

impl Side {
    /// With `store`, or the in-memory store.
    async fn start(store: Option<Arc<dyn TaskStore>>) -> Result<Self> {
        let mut builder = bench_builder()?
            .agent(AgentDescriptor::new(ECHO).exposed(true), plain_echo())
            .agent(AgentDescriptor::new(PAUSE), |_| Pause);
        if let Some(store) = store {
            builder = builder.shared_store(store);
        }
        let runtime = builder.build().await?;
        let config = EdgeConfig::default()
            .agent_settings(ECHO, AgentSettings::default().answer_with_message(true))
            .push(PushConfig::disabled());
        let edge = Edge::start(runtime.supervisor().clone(), config)
            .await
            .map_err(|error| Error::Unexpected(format!("the HTTP edge did not start: {error}")))?;
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(Error::from)?;
        Ok(Self {
            runtime,
            edge,
            client,
        })
    }

    async fn measure(&self, call: Call, run: Duration) -> Result<LoadResult> {
        match call {
            Call::Http => {
                let http = Arc::new(HttpSend {
                    client: self.client.clone(),
                    url: self.edge.agent_url(call.agent()),
                });
                closed_loop(http, CONCURRENCY, run).await
            }
            Call::Supervisor | Call::LongTurn => {
                let agent = call.agent();
                let calls = Arc::new(RequestReply {
                    supervisor: self.runtime.supervisor().clone(),
                    agent,
                    contexts: (0..CONCURRENCY)
                        .map(|i| ContextId::new(format!("store-{agent}-{i}")))
                        .collect(),
                });
                closed_loop(calls, CONCURRENCY, run).await
            }
        }
    }

    async fn stop(self) {
        self.edge.stop().await;
        self.runtime.shutdown(Duration::from_secs(5)).await;
    }
}

/// A blocking `message/send` to the echo agent, one conversation per sender.
struct HttpSend {
    client: reqwest::Client,
    url: String,
}

impl Requester for HttpSend {
    async fn request(&self, sender: usize, seq: u64) -> Result<()> {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{seq},"method":"message/send","params":{{"message":{{"kind":"message","role":"user","messageId":"m-{sender}-{seq}","contextId":"store-{sender}","parts":[{{"kind":"text","text":"ping"}}]}}}}}}"#
        );
        let response = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await?;
        let status = response.status();
        let body = response.bytes().await?;
        if !status.is_success() || !body.windows(8).any(|w| w == b"\"result\"") {
            return Err(Error::Unexpected(format!(
                "{} answered HTTP {status}: {}",
                self.url,
                String::from_utf8_lossy(&body)
            )));
        }
        Ok(())
    }
}

/// The supervisor's request/reply to `agent`, one conversation per sender.
struct RequestReply {
    supervisor: Supervisor,
    agent: &'static str,
    contexts: Vec<ContextId>,
}

impl Requester for RequestReply {
    async fn request(&self, sender: usize, _seq: u64) -> Result<()> {
        let message = Message::user_text("ping").with_context_id(self.contexts[sender].clone());
        let done = self
            .supervisor
            .send_and_wait(SendRequest::new(self.agent, message))
            .await?;
        if done.task.status.state != TaskState::Completed {
            return Err(Error::Unexpected(format!(
                "a send to {} ended {}",
                self.agent, done.task.status.state
            )));
        }
        Ok(())
    }
}
