//! Suite: a local agent type calling a remote agent over loopback, against the same
//! call made with the bare client.
//!
//! **Peer.** An agentyard runtime with the echo agent behind its HTTP edge on
//! 127.0.0.1 (its card says it streams), in the same process.
//!
//! **Runtime side.** A second runtime (the supervisor suite's send path) with the
//! peer registered as the remote agent type `peer`: each sender does
//! `send_and_wait("peer", …)` in its own conversation, so the send runs the whole
//! supervisor path, then the remote agent's session calls the peer with
//! `message/stream` (retries on, a traceparent and the hop metadata on every call)
//! and mirrors the remote task into the local one.
//!
//! **Floor.** The bare [`A2aClient`] making the same call to the same peer:
//! `message/stream` of the same text with retries on (so, like the remote agent's
//! calls, every send carries an `Idempotency-Key` the peer checks), each sender in
//! its own remote conversation, the stream read to its end.
//!
//! The ratio is what the supervisor, the local task and the mirroring cost around
//! the remote call (target: the runtime keeps at least 80% of the bare client's
//! requests/s, i.e. costs at most 20%).

use std::sync::{Arc, Mutex};

use agentyard::{AgentDescriptor, Message, Runtime, TaskState};
use agentyard_actors::edge::{Edge, EdgeConfig};
use agentyard_transport::ContextId;
use agentyard_transport::a2a::{MessageSendParams, StreamEvent};
use agentyard_transport::client::{A2aClient, ClientOptions, RetryPolicy};
use futures::StreamExt as _;

use crate::error::{Error, Result};
use crate::fixtures::{ECHO, bench_builder, plain_echo};
use crate::load::{LoadResult, Requester, closed_loop};
use crate::options::{Options, progress};
use crate::report::{Better, Figure, Report, Target, Unit};

const SUITE: &str = "remote";
/// The concurrent callers of each case.
const CALLERS: [usize; 2] = [1, 16];

/// The peer and the runtime that calls it.
struct Servers {
    peer: Runtime,
    edge: Edge,
    local: Runtime,
    card: String,
}

impl Servers {
    async fn start() -> Result<Self> {
        let peer = Runtime::builder()
            .agent(AgentDescriptor::new(ECHO).exposed(true), plain_echo())
            .session_queue(1 << 16)
            .warm_sessions(1 << 16)
            .build()
            .await?;
        let edge = Edge::start(
            peer.supervisor().clone(),
            EdgeConfig::default().agents([ECHO.to_owned()]),
        )
        .await
        .map_err(|e| Error::Unexpected(format!("the peer's edge did not start: {e}")))?;
        let card = edge.card_url(ECHO);
        let local = bench_builder()?
            .remote("peer", card.clone())
            .build()
            .await?;
        Ok(Self {
            peer,
            edge,
            local,
            card,
        })
    }

    async fn stop(self) {
        self.local.shutdown(std::time::Duration::from_secs(1)).await;
        self.peer.shutdown(std::time::Duration::from_secs(1)).await;
        self.edge.stop().await;
    }
}

/// The runtime side: a send to the remote agent type, in the sender's conversation.
struct ThroughRuntime {
    runtime: Runtime,
}

impl Requester for ThroughRuntime {
    async fn request(&self, sender: usize, seq: u64) -> Result<()> {
        let message = Message::user_text(format!("hello {seq}"))
            .with_context_id(format!("remote-bench-{sender}"));
        let settled = self.runtime.send_and_wait("peer", message).await?;
        if settled.task.status.state != TaskState::Completed {
            return Err(Error::Unexpected(format!(
                "the remote call ended {}: {:?}",
                settled.task.status.state, settled.task.status.message
            )));
        }
        Ok(())
    }
}

/// The floor: the bare client, the same call, one remote conversation per sender.
struct BareClient {
    client: A2aClient,
    contexts: Mutex<Vec<Option<ContextId>>>,
}

impl Requester for BareClient {
    async fn request(&self, sender: usize, seq: u64) -> Result<()> {
        let mut message = Message::user_text(format!("hello {seq}"));
        message.context_id = self
            .contexts
            .lock()
            .map_err(|_| Error::Unexpected("a poisoned lock".to_owned()))?
            .get(sender)
            .cloned()
            .flatten();
        let mut events = self
            .client
            .send_message_stream(MessageSendParams::new(message))
            .await
            .map_err(|e| Error::Unexpected(format!("the bare call failed: {e}")))?;
        let mut context = None;
        let mut state = None;
        while let Some(event) = events.next().await {
            match event.map_err(|e| Error::Unexpected(format!("the bare stream failed: {e}")))? {
                StreamEvent::Task(task) => {
                    context = Some(task.context_id);
                    state = Some(task.status.state);
                }
                StreamEvent::StatusUpdate(update) => {
                    context = Some(update.context_id);
                    state = Some(update.status.state);
                }
                StreamEvent::ArtifactUpdate(_) | StreamEvent::Message(_) => {}
            }
        }
        if state != Some(TaskState::Completed) {
            return Err(Error::Unexpected(format!("the bare call ended {state:?}")));
        }
        let mut contexts = self
            .contexts
            .lock()
            .map_err(|_| Error::Unexpected("a poisoned lock".to_owned()))?;
        if contexts.len() <= sender {
            contexts.resize(sender + 1, None);
        }
        if contexts[sender].is_none() {
            contexts[sender] = context;
        }
        Ok(())
    }
}

pub(crate) async fn run(options: &Options, report: &mut Report) -> Result<()> {
    let mut runtime_runs: Vec<Vec<LoadResult>> = vec![Vec::new(); CALLERS.len()];
    let mut floor_runs: Vec<Vec<LoadResult>> = vec![Vec::new(); CALLERS.len()];
    for round in 0..options.rounds() {
        progress(format!(
            "{SUITE}: 1 and 16 callers, {}",
            options.round_label(round)
        ));
        let servers = Servers::start().await?;
        let through = Arc::new(ThroughRuntime {
            runtime: servers.local.clone(),
        });
        let bare = Arc::new(BareClient {
            // Configured as the remote agent's client is (retries on, so every send
            // carries an Idempotency-Key the peer checks): the same call.
            client: A2aClient::connect(
                &servers.card,
                ClientOptions::new().retry(RetryPolicy::new(3)),
            )
            .await
            .map_err(|e| Error::Unexpected(format!("the peer's card: {e}")))?,
            contexts: Mutex::new(Vec::new()),
        });
        for (slot, &callers) in CALLERS.iter().enumerate() {
            let run = options.run_time();
            let (r, f) = if (round + slot) % 2 == 0 {
                let r = closed_loop(Arc::clone(&through), callers, run).await?;
                (r, closed_loop(Arc::clone(&bare), callers, run).await?)
            } else {
                let f = closed_loop(Arc::clone(&bare), callers, run).await?;
                (closed_loop(Arc::clone(&through), callers, run).await?, f)
            };
            if options.measured(round) {
                runtime_runs[slot].push(r);
                floor_runs[slot].push(f);
            }
        }
        servers.stop().await;
    }

    type Pick = fn(&LoadResult) -> f64;
    for (slot, &callers) in CALLERS.iter().enumerate() {
        let figures: [(&str, &str, Unit, Better, Pick); 3] = [
            (
                "throughput",
                "requests",
                Unit::PerSecond,
                Better::Higher,
                LoadResult::throughput,
            ),
            ("p50", "p50 latency", Unit::Nanos, Better::Lower, |r| {
                r.latencies.quantile_ns(0.5)
            }),
            ("p99", "p99 latency", Unit::Nanos, Better::Lower, |r| {
                r.latencies.quantile_ns(0.99)
            }),
        ];
        for (id, what, unit, better, pick) in figures {
            let values = |runs: &[LoadResult]| runs.iter().map(pick).collect::<Vec<_>>();
            report.rows.push(
                Figure::new(
                    SUITE,
                    format!("call.{callers}.{id}"),
                    format!("local agent → remote agent, {callers} caller(s), {what}"),
                    unit,
                    better,
                )
                .against("the same message/stream with the bare A2aClient")
                .row(&values(&runtime_runs[slot]), &values(&floor_runs[slot]))?,
            );
        }
        // The process's CPU per call on each side: what the supervisor adds, without the
        // share of the cores other processes happen to take.
        let cpu = |runs: &[LoadResult]| {
            runs.iter()
                .map(LoadResult::cpu_per_request_ns)
                .collect::<Option<Vec<_>>>()
        };
        if let (Some(runtime), Some(floor)) = (cpu(&runtime_runs[slot]), cpu(&floor_runs[slot])) {
            report.rows.push(
                Figure::new(
                    SUITE,
                    format!("call.{callers}.cpu"),
                    format!("local agent → remote agent, {callers} caller(s), CPU per call"),
                    Unit::Nanos,
                    Better::Lower,
                )
                .against("the same message/stream with the bare A2aClient")
                .row(&runtime, &floor)?,
            );
        }
    }
    report.notes.push(format!(
        "{SUITE}: peer = agentyard echo behind its edge on loopback, in the same process; \
         both sides make message/stream calls in one conversation per caller; the peer and \
         both callers share the two cores"
    ));
    let ratios: Vec<(usize, f64)> = CALLERS
        .iter()
        .filter_map(|callers| {
            report
                .row(&format!("{SUITE}.call.{callers}.throughput"))
                .map(|row| (*callers, row.ratio.median))
        })
        .collect();
    let measured = ratios
        .iter()
        .map(|(callers, ratio)| format!("{callers}: {}", crate::report::fmt_ratio(*ratio)))
        .collect::<Vec<_>>()
        .join(", ");
    let met = ratios.len() == CALLERS.len() && ratios.iter().all(|(_, ratio)| *ratio >= 0.8);
    report.targets.push(Target::new(
        "a remote call through the supervisor >= 80% of the bare client's requests/s (1 and 16 callers)",
        measured,
        met,
    ));
    Ok(())
}
