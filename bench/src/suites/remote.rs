//! Suite: a local agent type calling a remote agent over loopback, against the same
//! call made with the bare client.
//!
//! **Peer.** An agentyard runtime with the echo agent behind its HTTP edge on
//! 127.0.0.1 (its card says it streams), in two placements measured in the same
//! rounds: in a child process of its own (this program started again with a hidden
//! subcommand), as a remote agent is, and in the same process as the callers.
//! Beside the callers, the peer shares their allocator, tokio workers and caches, so
//! whatever the runtime side adds to them also makes the peer's own work dearer; in
//! a child only the two cores are shared.
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
//! requests/s, i.e. costs at most 20%, with the peer in its own process). CPU per
//! call is given for the callers' process and, with the peer in a child, for the
//! peer's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentyard::{AgentDescriptor, Message, Runtime, TaskState};
use agentyard_actors::edge::{Edge, EdgeConfig};
use agentyard_transport::ContextId;
use agentyard_transport::a2a::{MessageSendParams, StreamEvent};
use agentyard_transport::client::{A2aClient, ClientOptions, RetryPolicy};
use futures::StreamExt as _;

use crate::child::ChildServer;
use crate::error::{Error, Result};
use crate::fixtures::{ECHO, bench_builder, plain_echo};
use crate::load::{LoadResult, Requester, closed_loop, process_cpu_of};
use crate::options::{Options, progress};
use crate::report::{Better, Figure, Report, Target, Unit};

const SUITE: &str = "remote";
/// The concurrent callers of each case.
const CALLERS: [usize; 2] = [1, 16];

/// Where the peer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// In a child process of its own, as a remote agent is.
    Apart,
    /// In the callers' process.
    Beside,
}

impl Placement {
    const ALL: [Self; 2] = [Self::Apart, Self::Beside];

    /// The figure ids' prefix.
    const fn id(self) -> &'static str {
        match self {
            Self::Apart => "apart",
            Self::Beside => "call",
        }
    }

    const fn label(self) -> &'static str {
        match self {
            Self::Apart => "peer in its own process",
            Self::Beside => "peer in the same process",
        }
    }
}

/// The peer: an echo runtime behind its edge.
struct Peer {
    runtime: Runtime,
    edge: Edge,
}

impl Peer {
    async fn start() -> Result<Self> {
        let runtime = Runtime::builder()
            .agent(AgentDescriptor::new(ECHO).exposed(true), plain_echo())
            .session_queue(1 << 16)
            .warm_sessions(1 << 16)
            .build()
            .await?;
        let edge = Edge::start(
            runtime.supervisor().clone(),
            EdgeConfig::default().agents([ECHO.to_owned()]),
        )
        .await
        .map_err(|e| Error::Unexpected(format!("the peer's edge did not start: {e}")))?;
        Ok(Self { runtime, edge })
    }

    fn card_url(&self) -> String {
        self.edge.card_url(ECHO)
    }

    async fn stop(self) {
        self.runtime.shutdown(Duration::from_secs(1)).await;
        self.edge.stop().await;
    }
}

/// The hidden child of the `Apart` placement: serves the peer on a free loopback
/// port, prints its card URL, and stops when its standard input closes.
///
/// # Errors
/// The peer cannot start.
pub(crate) async fn serve_peer() -> Result<()> {
    let peer = Peer::start().await?;
    println!("{}", peer.card_url());
    crate::child::until_stdin_closes().await;
    peer.stop().await;
    Ok(())
}

/// The peer where it runs.
enum Placed {
    Apart(ChildServer),
    Beside(Peer),
}

/// The peer and the runtime that calls it.
struct Servers {
    peer: Placed,
    local: Runtime,
    card: String,
}

impl Servers {
    async fn start(placement: Placement) -> Result<Self> {
        let (peer, card) = match placement {
            Placement::Apart => {
                let child = ChildServer::start("child-peer", SUITE)?;
                let card = child.announced().to_owned();
                (Placed::Apart(child), card)
            }
            Placement::Beside => {
                let peer = Peer::start().await?;
                let card = peer.card_url();
                (Placed::Beside(peer), card)
            }
        };
        let local = bench_builder()?
            .remote("peer", card.clone())
            .build()
            .await?;
        Ok(Self { peer, local, card })
    }

    /// The peer's CPU time so far, when it runs in a process of its own.
    fn peer_cpu(&self) -> Option<Duration> {
        match &self.peer {
            Placed::Apart(child) => process_cpu_of(child.pid()),
            Placed::Beside(_) => None,
        }
    }

    async fn stop(self) {
        self.local.shutdown(Duration::from_secs(1)).await;
        match self.peer {
            Placed::Apart(child) => child.stop().await,
            Placed::Beside(peer) => peer.stop().await,
        }
    }
}

/// One closed-loop run, and the peer's CPU per call over it when it is known.
#[derive(Clone)]
struct Measured {
    load: LoadResult,
    peer_cpu_ns: Option<f64>,
}

async fn measure<R: Requester>(
    servers: &Servers,
    target: &Arc<R>,
    callers: usize,
    run: Duration,
) -> Result<Measured> {
    let before = servers.peer_cpu();
    let load = closed_loop(Arc::clone(target), callers, run).await?;
    let peer_cpu_ns = servers
        .peer_cpu()
        .zip(before)
        .map(|(after, before)| after.saturating_sub(before))
        .map(|cpu| cpu.as_secs_f64() * 1e9 / load.latencies.count().max(1) as f64);
    Ok(Measured { load, peer_cpu_ns })
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
    // Per placement, per caller count: the runtime side's runs and the floor's.
    let mut runs: Vec<Vec<(Vec<Measured>, Vec<Measured>)>> =
        vec![vec![(Vec::new(), Vec::new()); CALLERS.len()]; Placement::ALL.len()];
    for round in 0..options.rounds() {
        for (p, &placement) in Placement::ALL.iter().enumerate() {
            progress(format!(
                "{SUITE}: 1 and 16 callers, {}, {}",
                placement.label(),
                options.round_label(round)
            ));
            let servers = Servers::start(placement).await?;
            let through = Arc::new(ThroughRuntime {
                runtime: servers.local.clone(),
            });
            let bare = Arc::new(BareClient {
                // Configured as the remote agent's client is (retries on, so every
                // send carries an Idempotency-Key the peer checks): the same call.
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
                    let r = measure(&servers, &through, callers, run).await?;
                    (r, measure(&servers, &bare, callers, run).await?)
                } else {
                    let f = measure(&servers, &bare, callers, run).await?;
                    (measure(&servers, &through, callers, run).await?, f)
                };
                if options.measured(round) {
                    runs[p][slot].0.push(r);
                    runs[p][slot].1.push(f);
                }
            }
            servers.stop().await;
        }
    }

    for (p, &placement) in Placement::ALL.iter().enumerate() {
        for (slot, &callers) in CALLERS.iter().enumerate() {
            let (runtime, floor) = &runs[p][slot];
            add_rows(report, placement, callers, runtime, floor)?;
        }
    }
    report.notes.push(format!(
        "{SUITE}: peer = agentyard echo behind its edge on loopback, in a child process \
         (`apart`) and in the callers' process (`call`); both sides make message/stream \
         calls in one conversation per caller; the peer and the callers share the two cores"
    ));
    let ratios: Vec<(usize, f64)> = CALLERS
        .iter()
        .filter_map(|callers| {
            report
                .row(&format!(
                    "{SUITE}.{}.{callers}.throughput",
                    Placement::Apart.id()
                ))
                .map(|row| (*callers, row.ratio.median))
        })
        .collect();
    let measured = ratios
        .iter()
        .map(|(callers, ratio)| format!("{callers}: {}", crate::report::fmt_against(*ratio, 0.8)))
        .collect::<Vec<_>>()
        .join(", ");
    let met = ratios.len() == CALLERS.len() && ratios.iter().all(|(_, ratio)| *ratio >= 0.8);
    report.targets.push(Target::new(
        "a remote call through the supervisor >= 80% of the bare client's requests/s, peer in its own process (1 and 16 callers)",
        measured,
        met,
    ));
    Ok(())
}

/// One placement's and caller count's rows: throughput, p50, p99, the callers' CPU
/// per call and, with the peer apart, the peer's.
fn add_rows(
    report: &mut Report,
    placement: Placement,
    callers: usize,
    runtime: &[Measured],
    floor: &[Measured],
) -> Result<()> {
    type Pick = fn(&Measured) -> Option<f64>;
    let figures: [(&str, &str, Unit, Better, Pick); 5] = [
        (
            "throughput",
            "requests",
            Unit::PerSecond,
            Better::Higher,
            |m| Some(m.load.throughput()),
        ),
        ("p50", "p50 latency", Unit::Nanos, Better::Lower, |m| {
            Some(m.load.latencies.quantile_ns(0.5))
        }),
        ("p99", "p99 latency", Unit::Nanos, Better::Lower, |m| {
            Some(m.load.latencies.quantile_ns(0.99))
        }),
        // The callers' process CPU per call: what the supervisor adds, without the
        // share of the cores other processes happen to take.
        ("cpu", "CPU per call", Unit::Nanos, Better::Lower, |m| {
            m.load.cpu_per_request_ns()
        }),
        (
            "peer_cpu",
            "the peer's CPU per call",
            Unit::Nanos,
            Better::Lower,
            |m| m.peer_cpu_ns,
        ),
    ];
    for (id, what, unit, better, pick) in figures {
        let values = |runs: &[Measured]| runs.iter().map(pick).collect::<Option<Vec<_>>>();
        let (Some(r), Some(f)) = (values(runtime), values(floor)) else {
            continue;
        };
        report.rows.push(
            Figure::new(
                SUITE,
                format!("{}.{callers}.{id}", placement.id()),
                format!(
                    "local agent → remote agent, {}, {callers} caller(s), {what}",
                    placement.label()
                ),
                unit,
                better,
            )
            .against("the same message/stream with the bare A2aClient")
            .row(&r, &f)?,
        );
    }
    Ok(())
}
