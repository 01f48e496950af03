//! Small agents whose behaviour a test can steer and observe.
//!
//! Each is `Clone` and shares its counters between clones, so a test keeps one value,
//! hands the runtime a factory that clones it (`move |_| echo.clone()`), and reads the
//! counters afterwards however many sessions were made from it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agentyard::{Agent, AgentError, Role, TaskContext};
use tokio::sync::watch;

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
            .map(agentyard::Message::text)
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
