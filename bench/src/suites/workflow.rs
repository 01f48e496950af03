//! Suite 6: the workflow runner against plain sends.
//!
//! **Fan-out/fan-in.** A workflow of one input node, 100 agent nodes on an instant
//! echo agent (each its own conversation) and one output node gathering all 100,
//! with a per-run limit above 100 so every branch runs at once. Its cost per agent
//! node is the run's wall time over 100; the floor is the same 100 sends made
//! directly with `Supervisor::send_and_wait`, all at once, over 100. The ratio is what
//! the runner adds per node (templates, artifacts, events, scheduling); the target is
//! at most 1.5×. The same workflow in the pure-A2A mode (every node over the HTTP
//! edge, `message/stream` then `tasks/get`) against the same floor shows what the
//! in-process path saves.
//!
//! **Time to first node start.** From calling the runner to the first agent node's
//! handler starting, against from calling `send_and_wait` to the same handler
//! starting: the runner's start-up cost before any work reaches an agent.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentyard::workflow::client::OverHttp;
use agentyard::workflow::runner::{RunControl, RunOutcome};
use agentyard::workflow::{Tools, Workflow, Workflows};
use agentyard::{
    Agent, AgentDescriptor, AgentError, ContextId, Message, Runtime, SendRequest, TaskContext,
    TaskState,
};
use agentyard_actors::edge::{Edge, EdgeConfig};
use agentyard_transport::client::ClientOptions;
use futures::future::try_join_all;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::fixtures::bench_builder;
use crate::options::{Options, progress};
use crate::report::{Better, Figure, Report, Target, Unit, fmt_against};

const SUITE: &str = "workflow";

/// The agent nodes of the fan-out.
const WIDTH: usize = 100;

/// The echo agent the nodes call; it notes when its first handler of a run started.
const AGENT: &str = "instant";

/// Replies at once; records the first time it starts handling since the last reset.
struct Instant0(Arc<Mutex<Option<Instant>>>);

impl Agent for Instant0 {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        {
            let mut first = self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            first.get_or_insert_with(Instant::now);
        }
        let text = ctx.message().text();
        ctx.reply_text(text);
        Ok(())
    }
}

struct Setup {
    runtime: Runtime,
    edge: Edge,
    in_process: Workflows,
    over_http: Workflows,
    first: Arc<Mutex<Option<Instant>>>,
    fan_out: Arc<Workflow>,
    single: Arc<Workflow>,
}

async fn setup() -> Result<Setup> {
    let first = Arc::new(Mutex::new(None));
    let seen = Arc::clone(&first);
    let runtime = bench_builder()?
        .agent(AgentDescriptor::new(AGENT).exposed(true), move |_| {
            Instant0(Arc::clone(&seen))
        })
        .build()
        .await?;
    let edge = Edge::start(
        runtime.supervisor().clone(),
        EdgeConfig::default().agents([AGENT.to_owned()]),
    )
    .await
    .map_err(|e| Error::Unexpected(format!("the edge did not start: {e}")))?;
    let in_process = Workflows::new(Tools::new());
    in_process.bind(runtime.supervisor().clone());
    let over_http = Workflows::new(Tools::new());
    over_http.use_client(Arc::new(OverHttp::new(
        format!("http://{}", edge.local_addr()),
        ClientOptions::new(),
    )));
    over_http.bind(runtime.supervisor().clone());
    let catalog = in_process.catalog();
    let mut builder = Workflow::builder("fan_out")
        .concurrency(WIDTH + 2)
        .input("in");
    for i in 0..WIDTH {
        builder = builder.agent(format!("n{i:03}"), AGENT, "{{in}}");
    }
    let fan_out = builder
        .output("out", (0..WIDTH).map(|i| format!("n{i:03}")))
        .build(&catalog)
        .map_err(|e| Error::Unexpected(e.to_string()))?;
    let single = Workflow::builder("single")
        .input("in")
        .agent("one", AGENT, "{{in}}")
        .output("out", ["one"])
        .build(&catalog)
        .map_err(|e| Error::Unexpected(e.to_string()))?;
    drop(catalog);
    Ok(Setup {
        runtime,
        edge,
        in_process,
        over_http,
        first,
        fan_out: Arc::new(fan_out),
        single: Arc::new(single),
    })
}

/// Runs `workflow` once; its wall time.
async fn run_once(
    workflows: &Workflows,
    workflow: &Arc<Workflow>,
    expect: usize,
) -> Result<Duration> {
    let runner = workflows
        .runner()
        .ok_or_else(|| Error::Unexpected(String::from("the workflows are not bound")))?;
    let started = Instant::now();
    let report = runner
        .run(
            Arc::clone(workflow),
            String::from("ping"),
            RunControl::new(),
        )
        .await;
    let elapsed = started.elapsed();
    match report.outcome {
        RunOutcome::Completed(artifacts) if artifacts.len() == expect => Ok(elapsed),
        other => Err(Error::Unexpected(format!(
            "a benchmark run of `{}` ended {other:?}",
            workflow.name()
        ))),
    }
}

/// The floor: `width` plain sends at once, each its own conversation; their wall time.
async fn plain_sends(runtime: &Runtime, width: usize) -> Result<Duration> {
    let supervisor = runtime.supervisor();
    let started = Instant::now();
    let settled = try_join_all((0..width).map(|_| {
        let message = Message::user_text("ping").with_context_id(ContextId::mint());
        supervisor.send_and_wait(SendRequest::new(AGENT, message))
    }))
    .await?;
    let elapsed = started.elapsed();
    if let Some(bad) = settled
        .iter()
        .find(|s| s.task.status.state != TaskState::Completed)
    {
        return Err(Error::Unexpected(format!(
            "a plain send ended {}",
            bad.task.status.state
        )));
    }
    Ok(elapsed)
}

fn reset(first: &Mutex<Option<Instant>>) {
    *first
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
}

fn first_start(first: &Mutex<Option<Instant>>, since: Instant) -> Result<f64> {
    first
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .map(|at| at.duration_since(since).as_secs_f64() * 1e9)
        .ok_or_else(|| Error::Unexpected(String::from("the agent never started")))
}

/// Runs the suite.
///
/// # Errors
/// A run that does not complete, or an edge that does not start.
pub(crate) async fn run(options: &Options, report: &mut Report) -> Result<()> {
    let s = setup().await?;
    // Several runs per measured round: one 100-node run is a few milliseconds.
    let runs_per_round = if options.quick { 2 } else { 20 };
    let per_node = |total: Duration| total.as_secs_f64() * 1e9 / (WIDTH * runs_per_round) as f64;
    let (mut in_process, mut pure, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    let (mut first_runner, mut first_pure, mut first_plain) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..options.rounds() {
        progress(format!(
            "{SUITE}: {WIDTH}-node fan-out/fan-in, in process, pure A2A and plain sends, {}",
            options.round_label(round)
        ));
        let (mut a, mut b, mut c) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        for i in 0..runs_per_round {
            // Rotate which side goes first, so drift favours none.
            for side in 0..3 {
                match (side + i) % 3 {
                    0 => a += run_once(&s.in_process, &s.fan_out, WIDTH).await?,
                    1 => b += run_once(&s.over_http, &s.fan_out, WIDTH).await?,
                    _ => c += plain_sends(&s.runtime, WIDTH).await?,
                }
            }
        }
        let (mut x, mut y, mut z) = (0.0, 0.0, 0.0);
        for _ in 0..runs_per_round {
            reset(&s.first);
            let t0 = Instant::now();
            run_once(&s.in_process, &s.single, 1).await?;
            x += first_start(&s.first, t0)?;
            reset(&s.first);
            let t0 = Instant::now();
            run_once(&s.over_http, &s.single, 1).await?;
            y += first_start(&s.first, t0)?;
            reset(&s.first);
            let t0 = Instant::now();
            plain_sends(&s.runtime, 1).await?;
            z += first_start(&s.first, t0)?;
        }
        if options.measured(round) {
            in_process.push(per_node(a));
            pure.push(per_node(b));
            floor.push(per_node(c));
            let n = runs_per_round as f64;
            first_runner.push(x / n);
            first_pure.push(y / n);
            first_plain.push(z / n);
        }
    }
    let row = |id: &str, case: &str, runtime: &[f64], floor: &[f64]| {
        Figure::new(SUITE, id, case, Unit::Nanos, Better::Lower)
            .against("plain send_and_wait")
            .row(runtime, floor)
    };
    report.rows.push(row(
        "fan_out_100.per_node",
        "100-node fan-out/fan-in, cost per node, in process",
        &in_process,
        &floor,
    )?);
    report.rows.push(row(
        "fan_out_100.per_node.pure_a2a",
        "100-node fan-out/fan-in, cost per node, pure A2A (HTTP)",
        &pure,
        &floor,
    )?);
    report.rows.push(row(
        "first_node_start",
        "time to first node start, in process",
        &first_runner,
        &first_plain,
    )?);
    report.rows.push(row(
        "first_node_start.pure_a2a",
        "time to first node start, pure A2A (HTTP)",
        &first_pure,
        &first_plain,
    )?);
    if let Some(row) = report.row("workflow.fan_out_100.per_node") {
        let ratio = row.ratio.median;
        report.targets.push(Target::new(
            "workflow runner <= 1.5x a plain send_and_wait per node (100-node fan-out, in process)",
            format!("{} of plain", fmt_against(ratio, 1.5)),
            ratio <= 1.5,
        ));
    }
    report.notes.push(format!(
        "{SUITE}: {runs_per_round} runs of each side per measured round; the floor is the \
         same {WIDTH} sends made directly, all at once; time to first node start is to \
         the agent's handler"
    ));
    s.edge.stop().await;
    s.runtime.shutdown(Duration::from_secs(1)).await;
    Ok(())
}
