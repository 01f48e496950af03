//! The agents `agentyard serve` starts with, each showing one thing the runtime does.
//!
//! - [`Echo`] (`echo`): answers with the text it got — the smallest agent.
//! - [`Countdown`] (`countdown`): a long-running task that streams a `working` status
//!   and an artifact chunk every second for N seconds and stops at once when canceled.
//! - [`Ask`] (`ask`): goes `input-required` with a question and completes with the
//!   answer (human in the loop).
//! - [`Planner`] (`planner`): delegates two subtasks to in-process [`Worker`]s with
//!   `task_delegation` payloads and reports their `status_report`s.

use std::time::Duration;

use agentyard_actors::{Agent, AgentDescriptor, AgentError, ArtifactChunk, TaskContext};
use agentyard_transport::a2a::{AgentSkill, Artifact, Message, Part, Role};
use agentyard_transport::handoff::{
    HandoffPayload, Priority, ReportStatus, StatusReport, TaskDelegation, payload_from_message,
};

use crate::RuntimeBuilder;

#[cfg(test)]
mod tests;

/// How long [`Countdown`] counts when the message names no number.
pub const COUNTDOWN_DEFAULT_SECONDS: u64 = 5;
/// The longest [`Countdown`] accepts, so one request cannot hold a task for days.
pub const COUNTDOWN_MAX_SECONDS: u64 = 3_600;

/// Registers every built-in agent on `builder`, marking those named in `exposed` as
/// reachable over HTTP; `planner`'s workers are registered too.
pub fn register(builder: RuntimeBuilder, exposed: &[String]) -> RuntimeBuilder {
    let expose = |d: AgentDescriptor| {
        let on = exposed.contains(&d.name);
        d.exposed(on)
    };
    builder
        .agent(expose(Echo::descriptor()), |_| Echo)
        .agent(expose(Countdown::descriptor()), |_| Countdown::default())
        .agent(expose(Ask::descriptor()), |_| Ask)
        .agent(expose(Planner::descriptor()), |_| Planner)
        .agent(expose(Worker::descriptor()), |_| Worker)
}

/// The names of the built-in agents that are meant to be exposed over HTTP.
pub const EXPOSED: &[&str] = &["echo", "countdown", "ask", "planner"];

fn skill(id: &str, name: &str, description: &str, examples: &[&str]) -> AgentSkill {
    let mut skill = AgentSkill::new(id, name, description);
    skill.tags = vec![id.to_owned()];
    skill.examples = Some(examples.iter().map(|e| (*e).to_owned()).collect());
    skill
}

/// Answers with the text it got.
#[derive(Debug, Clone, Copy, Default)]
pub struct Echo;

impl Echo {
    /// The echo agent's descriptor.
    #[must_use]
    pub fn descriptor() -> AgentDescriptor {
        AgentDescriptor::new("echo")
            .description("Answers with the text of the message it receives.")
            .skill(skill(
                "echo",
                "Echo",
                "Repeats the message's text.",
                &["hello"],
            ))
    }
}

impl Agent for Echo {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(text);
        Ok(())
    }
}

/// Counts down from N (the first whole number in the message, else
/// [`COUNTDOWN_DEFAULT_SECONDS`]), one step per `tick`.
#[derive(Debug, Clone, Copy)]
pub struct Countdown {
    tick: Duration,
}

impl Default for Countdown {
    fn default() -> Self {
        Self {
            tick: Duration::from_secs(1),
        }
    }
}

impl Countdown {
    /// A countdown with this step (one second in `agentyard serve`).
    #[must_use]
    pub fn with_tick(tick: Duration) -> Self {
        Self { tick }
    }

    /// The countdown agent's descriptor.
    #[must_use]
    pub fn descriptor() -> AgentDescriptor {
        AgentDescriptor::new("countdown")
            .description(
                "Counts down from N seconds (the number in the message, default 5), \
                 streaming a status update and an artifact chunk each second.",
            )
            .skill(skill(
                "countdown",
                "Countdown",
                "A long-running task that streams progress and can be canceled.",
                &["10"],
            ))
    }

    /// The number of seconds a message asks for.
    fn seconds(text: &str) -> u64 {
        text.split(|c: char| !c.is_ascii_digit())
            .find(|s| !s.is_empty())
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(COUNTDOWN_DEFAULT_SECONDS)
            .min(COUNTDOWN_MAX_SECONDS)
    }
}

impl Agent for Countdown {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let total = Self::seconds(&ctx.message().text());
        for left in (1..=total).rev() {
            ctx.working(Some(&format!("{left} left"))).await?;
            let chunk = Artifact::new("countdown", vec![Part::text(format!("{left}\n"))]);
            let piece = if left == total {
                ArtifactChunk::First
            } else {
                ArtifactChunk::More
            };
            ctx.artifact_chunk(chunk, piece).await?;
            tokio::select! {
                () = tokio::time::sleep(self.tick) => {}
                // Stop at once: the runtime has already marked the task canceled.
                () = ctx.cancelled() => return Ok(()),
            }
        }
        let last = Artifact::new("countdown", vec![Part::text("liftoff\n")]);
        // After no pieces at all (a countdown from 0) the last is the whole artifact.
        let piece = if total > 0 {
            ArtifactChunk::Last
        } else {
            ArtifactChunk::Whole
        };
        ctx.artifact_chunk(last, piece).await?;
        ctx.reply_text(format!("counted down {total} seconds"));
        Ok(())
    }
}

/// Asks for the caller's name, then greets them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ask;

impl Ask {
    /// The ask agent's descriptor.
    #[must_use]
    pub fn descriptor() -> AgentDescriptor {
        AgentDescriptor::new("ask")
            .description(
                "Asks a question (input-required), then completes with the answer: \
                 send anything, then send your answer with the same taskId.",
            )
            .skill(skill(
                "ask",
                "Ask",
                "Human in the loop: the task waits for your answer.",
                &["hi"],
            ))
    }
}

impl Agent for Ask {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        // The first message of the task opens it; a later one is the answer.
        let task = ctx.task(None).await?;
        let user_messages = task
            .history
            .iter()
            .flatten()
            .filter(|m| m.role == Role::User)
            .count();
        if user_messages <= 1 {
            ctx.require_input("What is your name?");
        } else {
            let answer = ctx.message().text();
            ctx.reply_text(format!("Nice to meet you, {}.", answer.trim()));
        }
        Ok(())
    }
}

/// Splits a request into two subtasks, hands each to a [`Worker`] with a
/// `task_delegation` payload, and reports what the workers said.
#[derive(Debug, Clone, Copy, Default)]
pub struct Planner;

impl Planner {
    /// The planner agent's descriptor.
    #[must_use]
    pub fn descriptor() -> AgentDescriptor {
        AgentDescriptor::new("planner")
            .description(
                "Delegates a request to two in-process workers with typed task_delegation \
                 payloads and reports their status_report results.",
            )
            .skill(skill(
                "plan",
                "Plan and delegate",
                "Splits the request into research and writing, delegates both, reports back.",
                &["write a haiku about actors"],
            ))
    }
}

impl Agent for Planner {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let request = ctx.message().text();
        let steps = [
            ("research", format!("Research: {request}")),
            ("draft", format!("Draft an answer to: {request}")),
        ];
        // Both subtasks run at once: each worker has a session of its own.
        let shared: &TaskContext = ctx;
        let delegations = steps.iter().map(|(step, title)| {
            let payload = TaskDelegation::builder()
                .task_id(format!("{}-{step}", shared.task_id()))
                .task_title(title.clone())
                .task_description(format!("{title}. Report back with a status_report."))
                .priority(Priority::Medium)
                .build()
                .map(HandoffPayload::from);
            async move {
                let payload = payload?;
                let summary = payload.summary();
                shared
                    .delegate("worker", summary, payload)
                    .await
                    .map_err(AgentError::from)
            }
        });
        let results = futures::future::try_join_all(delegations).await?;
        let mut report = String::new();
        for done in &results {
            let reply = done.task.status.message.as_deref();
            let line = match reply.and_then(payload_from_message) {
                Some(Ok(HandoffPayload::StatusReport(r))) => format!(
                    "{}: {} ({})",
                    r.task_id(),
                    r.status(),
                    r.completed_work().unwrap_or("no details")
                ),
                _ => format!("{}: {}", done.task.id, done.task.status.state),
            };
            report.push_str(&line);
            report.push('\n');
        }
        ctx.artifact(Artifact::new(
            "plan-report",
            vec![Part::text(report.clone())],
        ))
        .await?;
        ctx.reply_text(report);
        Ok(())
    }
}

/// Does a delegated subtask and answers with a `status_report`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Worker;

impl Worker {
    /// The worker's descriptor (not exposed: only the planner calls it).
    #[must_use]
    pub fn descriptor() -> AgentDescriptor {
        AgentDescriptor::new("worker")
            .description("Does one delegated subtask and reports with a status_report.")
    }
}

impl Agent for Worker {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let Some(HandoffPayload::TaskDelegation(task)) = ctx.payload().cloned() else {
            ctx.reject("the worker takes task_delegation payloads only");
            return Ok(());
        };
        let report = StatusReport::builder()
            .task_id(task.task_id())
            .status(ReportStatus::Completed)
            .completed_work(format!("done: {}", task.task_title()))
            .progress_percent(100)
            .build()?;
        let payload = HandoffPayload::from(report);
        let mut reply = Message::new(Role::Agent, vec![Part::text(payload.summary())]);
        agentyard_transport::handoff::attach_to_message(&mut reply, &payload);
        ctx.reply(reply.parts);
        Ok(())
    }
}
