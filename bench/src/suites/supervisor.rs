//! Suite 1: the supervisor's send path against raw ractor messaging.
//!
//! **Request/reply.** The runtime side is `Supervisor::send_and_wait` to the echo agent
//! through the whole path (events, a four-rule [`RulePolicy`](agentyard::policy::RulePolicy)
//! with a rate limit, idempotency, the three concurrency limits, routing, the task
//! store); one send in four carries a fresh idempotency key, so both the keyed and the
//! unkeyed path run. The floor is ractor `call` to an echo actor. Both sides give each
//! sender its own target — its own session (contextId) on the runtime side, because the
//! per-session limit of 1 would otherwise serialize the senders, and its own echo actor
//! on the raw side — so one sender is one conversation with one actor on either side.
//!
//! **Fire-and-forget.** `Supervisor::send` (returns once submitted) against ractor
//! `cast`, timed until the agent or actor has handled every message (an atomic count).
//! 64 senders each own 16 sessions / 16 actors and send to them in turn, so a sender
//! rarely waits for its own previous message to finish (the per-session limit).

use std::sync::Arc;
use std::time::Duration;

use agentyard::{ContextId, Message, Runtime, SendRequest, Supervisor, TaskState};
use ractor::ActorRef;
use ractor::rpc::CallResult;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::fixtures::{
    Alive, Counter, ECHO, EchoArgs, EchoMsg, echo_runtime, eventually, spawn_echo_actors,
};
use crate::load::{LoadResult, Pick, Requester, closed_loop, each};
use crate::options::{Options, progress};
use crate::report::{Better, Figure, Report, Unit};
use crate::stats::Summary;

const SUITE: &str = "supervisor";

/// One send in this many carries an idempotency key.
const KEY_EVERY: u64 = 4;

/// Fire-and-forget senders, and the sessions / actors each one sends to in turn.
const FIRE_SENDERS: usize = 64;
const FIRE_TARGETS_PER_SENDER: usize = 16;

/// How long a run may take before a lost message is assumed.
const LOST_AFTER: Duration = Duration::from_secs(60);

/// Runs the suite.
///
/// # Errors
/// Any failed send or call: the figures would not mean anything.
pub(crate) async fn run(options: &Options, report: &mut Report) -> Result<()> {
    let fire = format!("{SUITE}.fire_and_forget");
    let cases: Vec<String> = options
        .senders
        .iter()
        .map(|senders| format!("{SUITE}.request_reply.{senders}"))
        .chain([fire.clone()])
        .collect();
    options.wants_any(SUITE, &cases)?;
    // The median CPU per request of each side at each number of senders measured, for
    // the note on what many senders cost each request against one.
    let mut cpu: Vec<(usize, f64, f64)> = Vec::new();
    for (&senders, case) in options.senders.iter().zip(&cases) {
        if !options.wants(case) {
            continue;
        }
        let (mut runtime, mut raw) = (Vec::new(), Vec::new());
        for round in 0..options.rounds() {
            progress(format!(
                "{SUITE}: request/reply, {senders} sender(s), {}",
                options.round_label(round)
            ));
            // Alternate which side goes first, so a drift in the machine's load does
            // not always favour the same side.
            let (r, f) = if round % 2 == 0 {
                let r = runtime_request_reply(senders, options.run_time()).await?;
                (r, raw_request_reply(senders, options.run_time()).await?)
            } else {
                let f = raw_request_reply(senders, options.run_time()).await?;
                (runtime_request_reply(senders, options.run_time()).await?, f)
            };
            if options.measured(round) {
                runtime.push(r);
                raw.push(f);
            }
        }
        let figures: [(&str, &str, Unit, Better, Pick); 4] = [
            ("throughput", "", Unit::PerSecond, Better::Higher, |r| {
                Some(r.throughput())
            }),
            ("p50", " p50 latency", Unit::Nanos, Better::Lower, |r| {
                Some(r.latencies.quantile_ns(0.5))
            }),
            ("p99", " p99 latency", Unit::Nanos, Better::Lower, |r| {
                Some(r.latencies.quantile_ns(0.99))
            }),
            // The process's CPU per request (the senders' loop included, alike on
            // both sides): unlike throughput, not lowered when another process takes
            // a share of the cores, so it tells what a side costs from what the
            // machine gave it.
            (
                "cpu",
                " CPU per request",
                Unit::Nanos,
                Better::Lower,
                LoadResult::cpu_per_request_ns,
            ),
        ];
        for (id, label, unit, better, figure) in figures {
            let (Some(runtime), Some(raw)) = (each(&runtime, figure), each(&raw, figure)) else {
                // No CPU clock on this platform, or a run too short for it.
                continue;
            };
            if id == "cpu"
                && let (Some(r), Some(f)) = (Summary::of(&runtime), Summary::of(&raw))
            {
                cpu.push((senders, r.median, f.median));
            }
            report.rows.push(
                Figure::new(
                    SUITE,
                    format!("request_reply.{senders}.{id}"),
                    format!(
                        "request/reply, {senders} sender{}{label}",
                        if senders == 1 { "" } else { "s" }
                    ),
                    unit,
                    better,
                )
                .against("ractor call")
                .row(&runtime, &raw)?,
            );
        }
    }
    if let Some(note) = sharing_note(&cpu) {
        report.notes.push(note);
    }

    let messages = options.fire_messages.div_ceil(FIRE_SENDERS) * FIRE_SENDERS;
    report.notes.push(format!(
        "{SUITE}: one send in {KEY_EVERY} carries a fresh idempotency key; each sender \
         has its own session (runtime) or echo actor (raw); fire-and-forget sends \
         {messages} messages over {} sessions / actors",
        FIRE_SENDERS * FIRE_TARGETS_PER_SENDER
    ));
    if !options.wants(&fire) {
        return Ok(());
    }
    let (mut runtime, mut raw) = (Vec::new(), Vec::new());
    for round in 0..options.rounds() {
        progress(format!(
            "{SUITE}: fire-and-forget, {messages} messages, {}",
            options.round_label(round)
        ));
        let (r, f) = if round % 2 == 0 {
            let r = runtime_fire(messages).await?;
            (r, raw_fire(messages).await?)
        } else {
            let f = raw_fire(messages).await?;
            (runtime_fire(messages).await?, f)
        };
        if options.measured(round) {
            runtime.push(messages as f64 / r.as_secs_f64());
            raw.push(messages as f64 / f.as_secs_f64());
        }
    }
    report.rows.push(
        Figure::new(
            SUITE,
            "fire_and_forget.throughput",
            format!("fire-and-forget, {FIRE_SENDERS} senders, until all handled"),
            Unit::PerSecond,
            Better::Higher,
        )
        .against("ractor cast")
        .row(&runtime, &raw)?,
    );
    Ok(())
}

/// What a request costs in CPU with many senders against one, on each side: one
/// sender keeps one core busy; many keep every core busy on the same supervisor, and
/// each request then pays for the cache lines the cores hand back and forth (its
/// shared maps, counters and reference counts). The raw side shares nothing between
/// its actors, so its factor shows what the machine alone adds. `None` without a CPU
/// figure at one sender and at more.
fn sharing_note(cpu: &[(usize, f64, f64)]) -> Option<String> {
    let &(_, one_runtime, one_raw) = cpu.iter().find(|(senders, ..)| *senders == 1)?;
    let factors: Vec<String> = cpu
        .iter()
        .filter(|(senders, ..)| *senders > 1)
        .map(|&(senders, runtime, raw)| {
            format!(
                "{senders} senders {:.2}× (ractor call {:.2}×)",
                runtime / one_runtime,
                raw / one_raw
            )
        })
        .collect();
    if factors.is_empty() {
        return None;
    }
    Some(format!(
        "{SUITE}: CPU per request/reply against one sender's: {}",
        factors.join(", ")
    ))
}

/// The runtime side's sender: one conversation per sender.
struct RuntimeEcho {
    supervisor: Supervisor,
    contexts: Vec<ContextId>,
    senders: Vec<String>,
}

impl RuntimeEcho {
    fn new(runtime: &Runtime, contexts: usize) -> Self {
        Self {
            supervisor: runtime.supervisor().clone(),
            contexts: (0..contexts)
                .map(|i| ContextId::new(format!("bench-{i:08}")))
                .collect(),
            senders: (0..contexts).map(|i| format!("client-{i}")).collect(),
        }
    }

    /// The send `seq` of `sender` to conversation `target`.
    fn request(&self, sender: usize, target: usize, seq: u64) -> SendRequest {
        let message = Message::user_text("ping").with_context_id(self.contexts[target].clone());
        let request = SendRequest::new(ECHO, message).from(self.senders[sender].clone());
        if seq.is_multiple_of(KEY_EVERY) {
            request.idempotency_key(format!("{sender}:{seq}"))
        } else {
            request
        }
    }
}

impl Requester for RuntimeEcho {
    async fn request(&self, sender: usize, seq: u64) -> Result<()> {
        let done = self
            .supervisor
            .send_and_wait(RuntimeEcho::request(self, sender, sender, seq))
            .await?;
        if done.task.status.state != TaskState::Completed || done.deduplicated {
            return Err(Error::Unexpected(format!(
                "an echo ended {} (deduplicated: {})",
                done.task.status.state, done.deduplicated
            )));
        }
        Ok(())
    }
}

/// The raw side's sender: one echo actor per sender.
struct RawEcho {
    actors: Vec<ActorRef<EchoMsg>>,
}

impl Requester for RawEcho {
    async fn request(&self, sender: usize, _seq: u64) -> Result<()> {
        let message = Message::user_text("ping");
        match self.actors[sender]
            .call(|reply| EchoMsg::Call(message, reply), None)
            .await
        {
            Ok(CallResult::Success(_)) => Ok(()),
            Ok(CallResult::Timeout) => Err(Error::Call(String::from("timed out"))),
            Ok(CallResult::SenderError) => Err(Error::Call(String::from("reply port dropped"))),
            Err(error) => Err(Error::Call(error.to_string())),
        }
    }
}

async fn runtime_request_reply(senders: usize, run: Duration) -> Result<LoadResult> {
    let handled = Counter::new(usize::MAX);
    let alive = Arc::new(Alive::default());
    let runtime = echo_runtime(&handled, &alive).await?;
    let result = closed_loop(Arc::new(RuntimeEcho::new(&runtime, senders)), senders, run).await;
    runtime.shutdown(Duration::from_secs(5)).await;
    result
}

async fn raw_request_reply(senders: usize, run: Duration) -> Result<LoadResult> {
    let alive = Arc::new(Alive::default());
    let args = EchoArgs {
        handled: Counter::new(usize::MAX),
        alive: Arc::clone(&alive),
    };
    let actors = spawn_echo_actors(senders, &args)?;
    eventually("the raw echo actors starting", LOST_AFTER, || {
        alive.count() == senders
    })
    .await?;
    let echo = Arc::new(RawEcho { actors });
    let result = closed_loop(Arc::clone(&echo), senders, run).await;
    stop_all(&echo.actors, &alive).await?;
    result
}

/// Stops raw echo actors and waits until every one has dropped its state.
async fn stop_all(actors: &[ActorRef<EchoMsg>], alive: &Alive) -> Result<()> {
    for actor in actors {
        actor.stop(None);
    }
    eventually("the raw echo actors stopping", LOST_AFTER, || {
        alive.count() == 0
    })
    .await
}

/// Sends `messages` through the runtime with `send` and returns the time until the
/// agent has handled them all.
async fn runtime_fire(messages: usize) -> Result<Duration> {
    let handled = Counter::new(messages);
    let alive = Arc::new(Alive::default());
    let runtime = echo_runtime(&handled, &alive).await?;
    let targets = FIRE_SENDERS * FIRE_TARGETS_PER_SENDER;
    let echo = Arc::new(RuntimeEcho::new(&runtime, targets));
    // Start the sessions first, as the raw side spawns its actors first.
    for context in &echo.contexts {
        runtime.spawn_session(ECHO, Some(context.clone()))?;
    }
    eventually("the sessions starting", LOST_AFTER, || {
        alive.count() == targets
    })
    .await?;
    let per_sender = messages / FIRE_SENDERS;
    let (go, ready) = tokio::sync::watch::channel(false);
    let mut tasks = JoinSet::new();
    for sender in 0..FIRE_SENDERS {
        let echo = Arc::clone(&echo);
        let mut ready = ready.clone();
        tasks.spawn(async move {
            let _ = ready.wait_for(|go| *go).await;
            for seq in 0..per_sender {
                let target = sender * FIRE_TARGETS_PER_SENDER + seq % FIRE_TARGETS_PER_SENDER;
                let request = echo.request(sender, target, seq as u64);
                echo.supervisor.send(request).await?;
            }
            Ok::<_, Error>(())
        });
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let start = Instant::now();
    go.send_replace(true);
    handled.reached(LOST_AFTER).await?;
    let elapsed = start.elapsed();
    while let Some(joined) = tasks.join_next().await {
        joined??;
    }
    runtime.shutdown(Duration::from_secs(5)).await;
    Ok(elapsed)
}

/// Casts `messages` to raw echo actors and returns the time until they have handled
/// them all.
async fn raw_fire(messages: usize) -> Result<Duration> {
    let handled = Counter::new(messages);
    let alive = Arc::new(Alive::default());
    let targets = FIRE_SENDERS * FIRE_TARGETS_PER_SENDER;
    let actors = Arc::new(spawn_echo_actors(
        targets,
        &EchoArgs {
            handled: Arc::clone(&handled),
            alive: Arc::clone(&alive),
        },
    )?);
    eventually("the raw echo actors starting", LOST_AFTER, || {
        alive.count() == targets
    })
    .await?;
    let per_sender = messages / FIRE_SENDERS;
    let (go, ready) = tokio::sync::watch::channel(false);
    let mut tasks = JoinSet::new();
    for sender in 0..FIRE_SENDERS {
        let actors = Arc::clone(&actors);
        let mut ready = ready.clone();
        tasks.spawn(async move {
            let _ = ready.wait_for(|go| *go).await;
            for seq in 0..per_sender {
                let target = sender * FIRE_TARGETS_PER_SENDER + seq % FIRE_TARGETS_PER_SENDER;
                actors[target]
                    .cast(EchoMsg::Cast(Message::user_text("ping")))
                    .map_err(|e| Error::Call(e.to_string()))?;
            }
            Ok::<_, Error>(())
        });
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let start = Instant::now();
    go.send_replace(true);
    handled.reached(LOST_AFTER).await?;
    let elapsed = start.elapsed();
    while let Some(joined) = tasks.join_next().await {
        joined??;
    }
    stop_all(&actors, &alive).await?;
    Ok(elapsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sharing_note_sets_each_side_against_its_own_one_sender() {
        let cpu = [(1, 7_400.0, 2_600.0), (64, 10_000.0, 1_400.0)];
        let note = sharing_note(&cpu).expect("one sender and more were measured");
        assert_eq!(
            note,
            "supervisor: CPU per request/reply against one sender's: \
             64 senders 1.35× (ractor call 0.54×)"
        );
    }

    #[test]
    fn no_sharing_note_without_one_sender_or_without_more() {
        assert_eq!(sharing_note(&[(64, 10_000.0, 1_400.0)]), None);
        assert_eq!(sharing_note(&[(1, 7_400.0, 2_600.0)]), None);
        assert_eq!(sharing_note(&[]), None);
    }
}
