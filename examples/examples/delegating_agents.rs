//! A planner delegates work to two workers with typed handoff payloads, and the
//! program prints the runtime's event stream as it happens.
//!
//! Run it with:
//!
//! ```text
//! cargo run --release -p agentyard-examples --example delegating_agents
//! ```
//!
//! What it shows:
//!
//! - `task_delegation`: the planner hands one task to `worker-a` and one to
//!   `worker-b`, both at once, with [`TaskContext::delegate`];
//! - `status_report`: each worker reports `in_progress` and then `completed` back to
//!   the planner;
//! - `question` / `answer`: `worker-b` asks the planner a question halfway through and
//!   the planner's reply carries an `answer` payload, which the worker reads with
//!   [`handoff::payload_from_message`] and acts on;
//! - the event stream: every event with its name, entry point, sender → target, the
//!   send's payload type and intent (or "free text"), and for status updates the new
//!   state and the payload the status message carries; then a summary. Agents pick
//!   what to do from the payload type alone; nothing classifies free text.
//!
//! # The message flow
//!
//! ```text
//! main ──free text (api)──▶ planner            conversation P (the plan)
//!   planner ──task_delegation──▶ worker-a      conversation A (minted by the send)
//!   planner ──task_delegation──▶ worker-b      conversation B
//!     worker-a ──status_report in_progress──▶ planner   in conversation A
//!     worker-a ──status_report completed───▶ planner   in conversation A
//!     worker-b ──status_report in_progress──▶ planner   in conversation B
//!     worker-b ──question──▶ planner (reply carries the answer) in conversation B
//!     worker-b ──status_report completed───▶ planner   in conversation B
//!   planner replies to main with a summary of what came back
//! ```
//!
//! # Why it cannot deadlock
//!
//! A session is one agent type in one conversation, and it handles one message at a
//! time (the per-session limit is 1). The planner's session in P is busy for the whole
//! run: its handler waits in `delegate` (a `send_and_wait`) until both workers finish.
//! Had a worker sent its reports to the planner *in P*, each report would queue behind
//! the very handler that is waiting for that worker: a cycle, and both would wait
//! forever. (A plain `send` would not help: a send waits for its session's permit
//! before it returns.)
//!
//! So each worker writes to the planner in its *own* conversation, the one the
//! delegation opened (`ctx.context_id()`). That is another planner session, idle,
//! which records the report on a desk that every planner session shares (the factory
//! hands each session the same `Arc`) and answers questions at once, without waiting
//! on anyone. Every wait points one way — planner in P → worker → planner in A or B,
//! which waits on nothing — so the graph of waits has no cycle. Keep that shape when
//! agents talk back to the agent that called them: reply in a conversation the caller
//! is not blocked in, or send to an agent type that never waits.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use agentyard::handoff::{
    self, Answer, HandoffPayload, Priority, Question, ReportStatus, StatusReport, TaskDelegation,
    Urgency,
};
use agentyard::policy::EntryPoint;
use agentyard::{
    Agent, AgentDescriptor, AgentError, Event, EventDetail, EventKind, Message, Part, Received,
    Runtime, Settled, TaskContext, TaskState,
};

const PLANNER: &str = "planner";
const WORKER_A: &str = "worker-a";
const WORKER_B: &str = "worker-b";

/// How long the whole run may take before the program gives up (it needs well under a
/// second; the limit only turns a hang into a visible failure).
const RUN_LIMIT: Duration = Duration::from_secs(10);

/// One status report as the planner recorded it.
#[derive(Debug, Clone)]
struct Note {
    from: String,
    task_id: String,
    status: ReportStatus,
    progress: Option<u8>,
    work: String,
}

/// What every planner session shares: the reports that came in, in arrival order.
///
/// A std mutex: it is held only to push or copy, never across an `.await`.
#[derive(Debug, Default)]
struct Desk {
    notes: Mutex<Vec<Note>>,
}

impl Desk {
    fn record(&self, note: Note) {
        self.notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(note);
    }

    fn notes(&self) -> Vec<Note> {
        self.notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Splits work between the workers (free text from outside), records their reports
/// and answers their questions (payloads from the workers).
struct Planner {
    desk: Arc<Desk>,
}

impl Agent for Planner {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        // The payload type alone says what the sender means.
        match ctx.payload().cloned() {
            None => self.plan(ctx).await,
            Some(HandoffPayload::StatusReport(report)) => {
                self.desk.record(Note {
                    from: ctx.sender().unwrap_or("?").to_owned(),
                    task_id: report.task_id().to_owned(),
                    status: report.status(),
                    progress: report.progress_percent(),
                    work: report.completed_work().unwrap_or_default().to_owned(),
                });
                ctx.reply_text(format!(
                    "noted: {} is {}",
                    report.task_id(),
                    report.status()
                ));
                Ok(())
            }
            Some(HandoffPayload::Question(question)) => {
                let answer = Answer::builder()
                    .question_id(question.question_id())
                    .answer("staging")
                    .confidence(0.9)
                    .references(["release-calendar.md"])
                    .build()?;
                let text = "Use staging: production stays frozen until Friday.";
                let data = HandoffPayload::from(answer).to_data_part();
                ctx.reply(vec![Part::text(text), Part::Data(data)]);
                Ok(())
            }
            Some(other) => {
                ctx.reject(format!(
                    "a planner takes status reports and questions, not {}",
                    other.payload_type()
                ));
                Ok(())
            }
        }
    }
}

impl Planner {
    async fn plan(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let goal = ctx.message().text();
        let docs = TaskDelegation::builder()
            .task_id("rel-1.4-notes")
            .task_title("Release notes")
            .task_description(format!("Write the release notes for: {goal}"))
            .priority(Priority::Medium)
            .acceptance_criteria(["Every merged PR is listed"])
            .build()?;
        let migrate = TaskDelegation::builder()
            .task_id("rel-1.4-migrate")
            .task_title("Database migration")
            .task_description(format!("Run the schema migration for: {goal}"))
            .priority(Priority::High)
            .acceptance_criteria(["Migration applied", "Rollback tested"])
            .build()?;

        // Both at once: the workers run in their own sessions, in parallel.
        let (a, b) = tokio::join!(
            ctx.delegate(WORKER_A, "Please write the release notes.", docs.into()),
            ctx.delegate(WORKER_B, "Please run the migration.", migrate.into()),
        );
        let mut lines = Vec::new();
        for (worker, done) in [(WORKER_A, a?), (WORKER_B, b?)] {
            let text = done
                .task
                .status
                .message
                .as_deref()
                .map(Message::text)
                .unwrap_or_default();
            if done.task.status.state != TaskState::Completed {
                return Err(format!("{worker} ended {}: {text}", done.task.status.state).into());
            }
            lines.push(format!("{worker}: {text}"));
        }
        let reports = self.desk.notes().len();
        ctx.reply_text(format!(
            "Both tasks done ({reports} status reports received). {}",
            lines.join(" | ")
        ));
        Ok(())
    }
}

/// Does one delegated task, reporting progress to the planner; asks the planner a
/// question first when `asks` is set.
struct Worker {
    asks: bool,
}

impl Agent for Worker {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let Some(HandoffPayload::TaskDelegation(task)) = ctx.payload().cloned() else {
            ctx.reject("a worker takes task_delegation payloads only");
            return Ok(());
        };
        report(ctx, &task, ReportStatus::InProgress, 10, "started").await?;

        let mut work = format!("{} done", task.task_title());
        if self.asks {
            let question = Question::builder()
                .question_id(format!("{}-where", task.task_id()))
                .question("Which cluster should the migration run on?")
                .options(["staging", "production"])
                .urgency(Urgency::Urgent)
                .build()?;
            let done = to_planner(
                ctx,
                "Which cluster should the migration run on?",
                question.into(),
            )
            .await?;
            let answer = done
                .task
                .status
                .message
                .as_deref()
                .and_then(handoff::payload_from_message);
            let Some(Ok(HandoffPayload::Answer(answer))) = answer else {
                return Err("the planner's reply carried no answer payload".into());
            };
            work = format!("{work} on {}, as the planner answered", answer.answer());
        }

        // The work itself: short, so the example runs fast, but long enough that the
        // two workers' events interleave.
        tokio::time::sleep(Duration::from_millis(30)).await;
        report(ctx, &task, ReportStatus::Completed, 100, &work).await?;
        ctx.reply_text(work);
        Ok(())
    }
}

/// Sends `payload` to the planner in this worker's own conversation (see the module
/// docs for why not in the planner's) and waits for the planner to handle it.
async fn to_planner(
    ctx: &TaskContext,
    text: &str,
    payload: HandoffPayload,
) -> Result<Settled, AgentError> {
    let message = Message::user_text(text).with_context_id(ctx.context_id().clone());
    let request = ctx.request_to(PLANNER, message).payload(payload);
    let done = ctx.send_request_and_wait(request).await?;
    if done.task.status.state != TaskState::Completed {
        return Err(format!("the planner did not take it: {}", done.task.status.state).into());
    }
    Ok(done)
}

async fn report(
    ctx: &TaskContext,
    task: &TaskDelegation,
    status: ReportStatus,
    progress: u8,
    work: &str,
) -> Result<(), AgentError> {
    let report = StatusReport::builder()
        .task_id(task.task_id())
        .status(status)
        .progress_percent(progress)
        .completed_work(work)
        .build()?;
    let text = format!("{}: {status} ({progress}%)", task.task_id());
    to_planner(ctx, &text, report.into()).await?;
    Ok(())
}

/// Counts what the event stream showed, for the summary.
#[derive(Debug, Default)]
struct Tally {
    events: usize,
    by_kind: BTreeMap<&'static str, usize>,
    sends_by_payload: BTreeMap<String, usize>,
    payloads_in_replies: BTreeMap<String, usize>,
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// Prints one event on one line and counts it.
fn print_event(event: &Event, started: SystemTime, tally: &mut Tally) {
    let at = event
        .timestamp
        .duration_since(started)
        .unwrap_or_default()
        .as_millis();
    let payload = match (event.payload_type, event.intent) {
        (Some(payload_type), Some(intent)) => format!("{payload_type}/{intent}"),
        (Some(payload_type), None) => payload_type.to_string(),
        _ => String::from("free text"),
    };
    // An answer (`a2a.response`) also says what kind of send it answers.
    let payload = match event.in_response_to_payload_type {
        Some(answered) => format!("{payload} re {answered}"),
        None => payload,
    };
    let task = event.task_id.as_ref().map_or("-", |id| short(id.as_str()));
    let detail = match &event.detail {
        EventDetail::Status { update } => {
            let carried = update
                .status
                .message
                .as_deref()
                .and_then(handoff::payload_from_message)
                .and_then(Result::ok)
                .map(|p| {
                    let name = p.payload_type().to_string();
                    *tally.payloads_in_replies.entry(name.clone()).or_default() += 1;
                    format!(", carries {name}/{}", p.intent())
                })
                .unwrap_or_default();
            format!(" [{}{carried}]", update.status.state)
        }
        EventDetail::Reason { reason } => format!(" [{reason}]"),
        _ => String::new(),
    };
    println!(
        "{at:>5}ms  {:<24} {:<5} {:>8} → {:<8} {:<24} task {task}{detail}",
        event.kind.name(),
        event.entry_point.to_string(),
        event.from.as_deref().unwrap_or("-"),
        event.to,
        payload,
    );
    tally.events += 1;
    *tally.by_kind.entry(event.kind.name()).or_default() += 1;
    if event.kind == EventKind::SendInitiated {
        *tally.sends_by_payload.entry(payload).or_default() += 1;
    }
}

/// Whether this event closes the send from `main` (the run is then over).
fn closes_the_run(event: &Event) -> bool {
    matches!(event.entry_point, EntryPoint::Api)
        && matches!(
            event.kind,
            EventKind::SendCompleted
                | EventKind::SendFailed
                | EventKind::SendPolicyRejected
                | EventKind::SendBusy
        )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let desk = Arc::new(Desk::default());
    let runtime = Runtime::builder()
        .agent(
            AgentDescriptor::new(PLANNER).description("Splits a goal into delegated tasks"),
            {
                let desk = Arc::clone(&desk);
                move |_session| Planner {
                    desk: Arc::clone(&desk),
                }
            },
        )
        .agent(
            AgentDescriptor::new(WORKER_A).description("Writes documents"),
            |_session| Worker { asks: false },
        )
        .agent(
            AgentDescriptor::new(WORKER_B).description("Runs migrations; asks when unsure"),
            |_session| Worker { asks: true },
        )
        .build()
        .await?;

    // Subscribe before sending, so that the stream starts with the first event.
    let mut events = runtime.subscribe();
    let started = SystemTime::now();
    let run = tokio::spawn({
        let runtime = runtime.clone();
        async move {
            runtime
                .send_and_wait(PLANNER, Message::user_text("release 1.4"))
                .await
        }
    });

    println!(
        "{:>7}  {:<24} {:<5} {:>8} → {:<8} {:<24} task",
        "time", "event", "entry", "from", "to", "payload/intent"
    );
    let mut tally = Tally::default();
    let limit = tokio::time::sleep(RUN_LIMIT);
    tokio::pin!(limit);
    loop {
        tokio::select! {
            () = &mut limit => return Err("the run did not finish in time".into()),
            received = events.recv() => match received {
                Some(Received::Event(event)) => {
                    print_event(&event, started, &mut tally);
                    if closes_the_run(&event) {
                        break;
                    }
                }
                Some(Received::Lagged(missed)) => println!("  … {missed} events missed"),
                None => break,
            },
        }
    }
    let done = run.await??;
    // The planner in P, A and B, and one session per worker.
    let sessions = runtime.supervisor().session_count();
    runtime.shutdown(Duration::from_secs(1)).await;

    println!();
    println!("summary");
    println!("  events: {}", tally.events);
    for (kind, count) in &tally.by_kind {
        println!("    {kind:<24} {count}");
    }
    println!("  sends by payload type:");
    for (payload, count) in &tally.sends_by_payload {
        println!("    {payload:<24} {count}");
    }
    println!("  payloads carried by status messages:");
    for (payload, count) in &tally.payloads_in_replies {
        println!("    {payload:<24} {count}");
    }
    println!("  live sessions at the end: {sessions}");
    println!("  reports on the planner's desk, in arrival order:");
    for note in desk.notes() {
        println!(
            "    {:<8} {:<16} {:<11} {:>3}%  {}",
            note.from,
            note.task_id,
            note.status.as_str(),
            note.progress.unwrap_or(0),
            note.work
        );
    }
    let reply = done
        .task
        .status
        .message
        .as_deref()
        .map(Message::text)
        .unwrap_or_default();
    println!("  the plan ended {}: {reply}", done.task.status.state);
    if done.task.status.state != TaskState::Completed {
        return Err("the plan did not complete".into());
    }
    Ok(())
}
