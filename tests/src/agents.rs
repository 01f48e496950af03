//! Every test agent, each under a name of its own: small agents whose behaviour a
//! test can steer and observe.
//!
//! Each is `Clone` and shares its counters between clones, so a test keeps one value,
//! hands the runtime a factory that clones it (`move |_| echo.clone()`), and reads the
//! counters afterwards however many sessions were made from it.
//!
//! Two that hold work in flight, and differ on purpose: [`Gated`] waits at a
//! [`Gate`] that lets everyone through once opened and ignores cancellation (an
//! agent that never looks); [`Turnstile`] publishes `working`, lets one message
//! through per permit, and stops when canceled.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agentyard::{Agent, AgentError, Artifact, ArtifactChunk, Part, Role, TaskContext};
use tokio::sync::{Semaphore, watch};

/// A shared counter of how often something happened.
#[derive(Debug, Clone, Default)]
pub struct Calls(Arc<AtomicUsize>);

impl Calls {
    /// Counts one more.
    pub fn hit(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    /// How many so far.
    #[must_use]
    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A gate that agents wait at until the test opens it; once open it stays open.
#[derive(Debug, Clone)]
pub struct Gate {
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl Gate {
    /// A closed gate.
    #[must_use]
    pub fn new() -> Self {
        Self {
            tx: Arc::new(watch::Sender::new(false)),
        }
    }

    /// Opens the gate for everyone waiting and everyone to come.
    pub fn open(&self) {
        self.tx.send_replace(true);
    }

    /// Resolves once the gate is open.
    pub async fn passed(&self) {
        let mut rx = self.tx.subscribe();
        // Err only if the sender is gone, and `self` holds it.
        let _ = rx.wait_for(|open| *open).await;
    }
}

/// Replies `echo: <text>` and counts its calls.
#[derive(Debug, Clone, Default)]
pub struct Echo {
    /// One per message handled.
    pub calls: Calls,
}

impl Agent for Echo {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.calls.hit();
        let text = ctx.message().text();
        ctx.reply_text(format!("echo: {text}"));
        Ok(())
    }
}

/// Waits at a [`Gate`], ignoring cancellation, then replies `opened: <text>`.
///
/// A test holds work "in flight" with it for as long as it likes, and it stands for
/// an agent that never looks at its cancellation signal.
#[derive(Debug, Clone, Default)]
pub struct Gated {
    /// One per message whose handling began.
    pub started: Calls,
    /// One per message handled to the end.
    pub finished: Calls,
    /// What the agent waits for.
    pub gate: Gate,
}

impl Agent for Gated {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.started.hit();
        self.gate.passed().await;
        let text = ctx.message().text();
        ctx.reply_text(format!("opened: {text}"));
        self.finished.hit();
        Ok(())
    }
}

/// Works until its task is canceled, then returns `Ok` as a well-behaved agent does.
#[derive(Debug, Clone, Default)]
pub struct Cancellable {
    /// One per message whose handling began.
    pub started: Calls,
    /// One per cancellation the agent saw.
    pub noticed: Calls,
}

impl Agent for Cancellable {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.started.hit();
        ctx.cancelled().await;
        self.noticed.hit();
        ctx.reply_text("stopped as asked");
        Ok(())
    }
}

/// The panic message [`Fragile`] panics with.
pub const PANIC_TEXT: &str = "boom: the agent fell over";
/// The error text [`Fragile`] returns.
pub const ERROR_TEXT: &str = "refused: bad input";

/// Panics on the text `panic`, returns an error on `error`, otherwise replies
/// `fine: <text>`.
#[derive(Debug, Clone, Default)]
pub struct Fragile {
    /// One per message handled, whatever the outcome.
    pub calls: Calls,
}

impl Agent for Fragile {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.calls.hit();
        let text = ctx.message().text();
        match text.as_str() {
            "panic" => panic!("{PANIC_TEXT}"),
            "error" => Err(ERROR_TEXT.into()),
            _ => {
                ctx.reply_text(format!("fine: {text}"));
                Ok(())
            }
        }
    }
}

/// The question [`Asking`] asks.
pub const QUESTION: &str = "Which colour should it be?";

/// Asks [`QUESTION`] on a task's first message (`input-required`); on the next
/// message to the same task replies `painting it <text>`.
///
/// It tells the two apart by its own history: a question it asked earlier in this
/// task means the message is the answer.
#[derive(Debug, Clone, Default)]
pub struct Asking {
    /// One per message handled.
    pub calls: Calls,
}

impl Agent for Asking {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.calls.hit();
        let task_id = ctx.task_id().clone();
        let asked = ctx
            .history()
            .await
            .iter()
            .any(|m| m.role == Role::Agent && m.task_id.as_ref() == Some(&task_id));
        if asked {
            let answer = ctx.message().text();
            ctx.reply_text(format!("painting it {answer}"));
        } else {
            ctx.require_input(QUESTION);
        }
        Ok(())
    }
}

/// What a [`Recorder`] saw of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The message's text.
    pub text: String,
    /// The texts of the conversation's earlier messages, oldest first.
    pub history: Vec<String>,
}

/// Records each message with the history it came with, and replies `noted: <text>`.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Recorder {
    /// Everything seen so far, in order.
    #[must_use]
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Agent for Recorder {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        let history = ctx
            .history()
            .await
            .iter()
            .map(|message| message.text())
            .collect();
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Seen {
                text: text.clone(),
                history,
            });
        ctx.reply_text(format!("noted: {text}"));
        Ok(())
    }
}

/// Publishes `working`, waits for a permit ([`Turnstile::let_through`]) or a cancel,
/// then replies `done: <text>`. Clones share the permits.
#[derive(Debug, Clone)]
pub struct Turnstile {
    permits: Arc<Semaphore>,
}

impl Default for Turnstile {
    fn default() -> Self {
        Self {
            permits: Arc::new(Semaphore::new(0)),
        }
    }
}

impl Turnstile {
    /// Lets `n` more messages through, waiting or to come.
    pub fn let_through(&self, n: usize) {
        self.permits.add_permits(n);
    }
}

impl Agent for Turnstile {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        ctx.working(Some("started")).await?;
        tokio::select! {
            permit = self.permits.acquire() => {
                permit?.forget();
            }
            () = ctx.cancelled() => return Ok(()),
        }
        let text = ctx.message().text();
        ctx.reply_text(format!("done: {text}"));
        Ok(())
    }
}

/// Replies with what it received: `task_delegation: <title>` for a typed delegation,
/// the payload type for another payload, `free: <text>` for free text.
#[derive(Debug, Clone, Copy, Default)]
pub struct PayloadProbe;

impl Agent for PayloadProbe {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let reply = match ctx.payload() {
            Some(agentyard::handoff::HandoffPayload::TaskDelegation(task)) => {
                format!("task_delegation: {}", task.task_title())
            }
            Some(other) => other.payload_type().as_str().to_owned(),
            None => format!("free: {}", ctx.message().text()),
        };
        ctx.reply_text(reply);
        Ok(())
    }
}

/// The question [`Interviewer`] asks.
pub const INTERVIEW_QUESTION: &str = "Which colour?";

/// Asks [`INTERVIEW_QUESTION`] on a task's first message (`input-required`); on the
/// next message to the task replies `answer: <text>`. Like [`Asking`] with other
/// words, for the A2A tests that match them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Interviewer;

impl Agent for Interviewer {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let asked = ctx
            .history()
            .await
            .iter()
            .any(|m| m.task_id.as_ref() == Some(ctx.task_id()) && m.role == Role::Agent);
        if asked {
            let text = ctx.message().text();
            ctx.reply_text(format!("answer: {text}"));
        } else {
            ctx.require_input(INTERVIEW_QUESTION);
        }
        Ok(())
    }
}

/// Counts to three: a `working` update and an artifact chunk (`count`: first, more,
/// last) per step, then replies `counted`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChunkCounter;

impl Agent for ChunkCounter {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        for n in 1..=3 {
            ctx.working(Some(&format!("step {n}"))).await?;
            ctx.artifact_chunk(
                Artifact::new("count", vec![Part::text(n.to_string())]),
                match n {
                    1 => ArtifactChunk::First,
                    3 => ArtifactChunk::Last,
                    _ => ArtifactChunk::More,
                },
            )
            .await?;
        }
        ctx.reply_text("counted");
        Ok(())
    }
}
