//! The [`Agent`] trait users implement (and its two other forms: [`SessionAgent`]
//! with per-session state behind `&mut self`, and [`agent_fn`] for a closure), the
//! [`AgentDescriptor`], and an agent type's [`Registration`]. The [`TaskContext`] an
//! agent works through is re-exported from its own module.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use agentyard_transport::ContextId;
use agentyard_transport::a2a::{AgentSkill, Message, Part};

pub use crate::channel::ArtifactChunk;
pub use crate::context::TaskContext;
use crate::port::BoxFuture;

#[cfg(test)]
mod tests;

/// The error an agent returns; its text becomes the failed task's status message.
pub type AgentError = Box<dyn std::error::Error + Send + Sync>;

/// An agent: the code that handles the messages of one session.
///
/// The runtime creates one value per session (agent type + conversation) with the
/// factory given at registration, and calls [`Agent::handle`] once per incoming
/// message, with at most one call per session at a time by default. `&self` is
/// shared: state that changes per message belongs in a [`SessionAgent`] instead,
/// and a small stateless agent can be a closure ([`agent_fn`]).
///
/// **The outcome is set in one place, the context**: [`TaskContext::reply`] and its
/// siblings say what the turn answers, and [`TaskContext::require_input`],
/// [`require_auth`](TaskContext::require_auth), [`fail`](TaskContext::fail) and
/// [`reject`](TaskContext::reject) how it ends (the last call wins; `completed` by
/// default). `Ok(())` means "as the context says". `Err` — or a panic — is not an
/// outcome but the handler failing: the task fails with the error's text, and an
/// outcome set on the context before is dropped *and named* in that text. Neither
/// takes down the session's siblings or the process, and the next message to the
/// agent is handled as usual.
///
/// ```
/// use agentyard_actors::{Agent, AgentError, TaskContext};
///
/// struct Echo;
///
/// impl Agent for Echo {
///     async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
///         let text = ctx.message().text();
///         ctx.reply_text(format!("echo: {text}"));
///         Ok(())
///     }
/// }
/// ```
pub trait Agent: Send + Sync + 'static {
    /// Handles one message of a task.
    ///
    /// # Errors
    /// Any error fails the task; its text is the status message the caller sees.
    fn handle(&self, ctx: &mut TaskContext) -> impl Future<Output = Result<(), AgentError>> + Send;
}

/// [`Agent`] with the future boxed, so that agents of different types can sit behind
/// one pointer type.
pub(crate) trait DynAgent: Send + Sync + 'static {
    fn handle_dyn<'a>(&'a self, ctx: &'a mut TaskContext) -> BoxFuture<'a, Result<(), AgentError>>;
}

impl<A: Agent> DynAgent for A {
    fn handle_dyn<'a>(&'a self, ctx: &'a mut TaskContext) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(self.handle(ctx))
    }
}

/// What a factory learns about the session it makes an agent for.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// The agent type's registered name.
    pub agent: Arc<str>,
    /// The session's key: the conversation's contextId.
    pub context_id: ContextId,
}

pub(crate) type Factory = Arc<dyn Fn(&SessionInfo) -> Arc<dyn DynAgent> + Send + Sync>;

/// Makes a type-erased factory from a user's factory.
pub(crate) fn erase_factory<A, F>(factory: F) -> Factory
where
    A: Agent,
    F: Fn(&SessionInfo) -> A + Send + Sync + 'static,
{
    Arc::new(move |info| Arc::new(factory(info)) as Arc<dyn DynAgent>)
}

/// How an agent type describes itself: the facts its A2A agent card is made of, and
/// its own concurrency limits.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentDescriptor {
    /// The unique name the agent type is registered and addressed under.
    pub name: String,
    /// What the agent does, for humans and for other agents.
    pub description: String,
    /// The agent's own version.
    pub version: String,
    /// What the agent can do.
    pub skills: Vec<AgentSkill>,
    /// Media types the agent accepts (default `text/plain`, `application/json`).
    pub input_modes: Vec<String>,
    /// Media types the agent produces (default `text/plain`, `application/json`).
    pub output_modes: Vec<String>,
    /// Whether the agent is reachable over HTTP (default: no).
    pub exposed: bool,
    /// At most this many tasks of this agent type run at once (default: the runtime's
    /// per-agent limit).
    pub concurrency: Option<usize>,
    /// Whether a task of this agent that was running when the server stopped (a crash)
    /// is run again at the next start, with its last message, instead of ending
    /// `failed` (default: no). Only for agents whose work is safe to repeat.
    pub rerun_after_restart: bool,
}

impl AgentDescriptor {
    /// A descriptor with only a name; the rest at their defaults.
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: String::new(),
            version: String::from("0.1.0"),
            skills: Vec::new(),
            input_modes: vec!["text/plain".into(), "application/json".into()],
            output_modes: vec!["text/plain".into(), "application/json".into()],
            exposed: false,
            concurrency: None,
            rerun_after_restart: false,
        }
    }

    /// Runs a task of this agent that a crash cut off again at the next start, with its
    /// last message, instead of ending it `failed`: for agents whose work is safe to
    /// repeat (idempotent).
    #[must_use]
    pub fn rerun_after_restart(mut self, rerun: bool) -> Self {
        self.rerun_after_restart = rerun;
        self
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Sets the version.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Adds a skill.
    #[must_use]
    pub fn skill(mut self, skill: AgentSkill) -> Self {
        self.skills.push(skill);
        self
    }

    /// Sets the accepted and produced media types.
    #[must_use]
    pub fn modes(mut self, input: Vec<String>, output: Vec<String>) -> Self {
        self.input_modes = input;
        self.output_modes = output;
        self
    }

    /// Makes the agent reachable over HTTP.
    #[must_use]
    pub fn expose(self) -> Self {
        self.exposed(true)
    }

    /// Sets whether the agent is reachable over HTTP, from a setting (for a fixed
    /// choice, [`AgentDescriptor::expose`] reads better).
    #[must_use]
    pub fn exposed(mut self, exposed: bool) -> Self {
        self.exposed = exposed;
        self
    }

    /// Limits how many tasks of this agent type run at once.
    #[must_use]
    pub fn concurrency(mut self, limit: usize) -> Self {
        self.concurrency = Some(limit);
        self
    }
}

/// An agent type's registration, as the runtime builder collects them: its
/// descriptor and the factory that makes one agent per session.
pub struct Registration {
    pub(crate) descriptor: AgentDescriptor,
    pub(crate) factory: Factory,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("descriptor", &self.descriptor)
            .finish_non_exhaustive()
    }
}

impl Registration {
    /// Registers an [`Agent`] type: its descriptor and the factory that makes one
    /// agent per session.
    pub fn new<A, F>(descriptor: AgentDescriptor, factory: F) -> Self
    where
        A: Agent,
        F: Fn(&SessionInfo) -> A + Send + Sync + 'static,
    {
        Self {
            descriptor,
            factory: erase_factory(factory),
        }
    }

    /// Registers a [`SessionAgent`] type: one value per session, handed to each of
    /// the session's messages as `&mut self`.
    pub fn session<A, F>(descriptor: AgentDescriptor, factory: F) -> Self
    where
        A: SessionAgent,
        F: Fn(&SessionInfo) -> A + Send + Sync + 'static,
    {
        Self::new(descriptor, move |info: &SessionInfo| Stateful {
            agent: tokio::sync::Mutex::new(factory(info)),
        })
    }

    /// Registers a closure as an agent type (see [`agent_fn`]); every session
    /// shares it.
    pub fn from_fn<F, Fut, R>(descriptor: AgentDescriptor, handler: F) -> Self
    where
        F: Fn(Message) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, AgentError>> + Send + 'static,
        R: Into<Outcome> + 'static,
    {
        let agent = Arc::new(agent_fn(handler));
        Self {
            descriptor,
            factory: Arc::new(move |_| Arc::clone(&agent) as Arc<dyn DynAgent>),
        }
    }

    /// The agent type's descriptor.
    #[must_use]
    pub fn descriptor(&self) -> &AgentDescriptor {
        &self.descriptor
    }
}

/// An agent that keeps state for its session and changes it without a lock of its
/// own: the runtime makes one value per session (agent type + conversation) and
/// hands it to each of the session's messages as `&mut self`, one message at a time
/// (a session with a concurrency limit above one runs its messages one after another
/// here too). The outcome is set as for [`Agent`].
///
/// ```
/// use agentyard_actors::{AgentError, SessionAgent, TaskContext};
///
/// #[derive(Default)]
/// struct Counter {
///     seen: u32,
/// }
///
/// impl SessionAgent for Counter {
///     async fn handle(&mut self, ctx: &mut TaskContext) -> Result<(), AgentError> {
///         self.seen += 1;
///         ctx.reply_text(format!("message {} of this conversation", self.seen));
///         Ok(())
///     }
/// }
/// ```
pub trait SessionAgent: Send + 'static {
    /// Handles one message of a task, with the session's state.
    ///
    /// # Errors
    /// Any error fails the task; its text is the status message the caller sees.
    fn handle(
        &mut self,
        ctx: &mut TaskContext,
    ) -> impl Future<Output = Result<(), AgentError>> + Send;
}

/// A [`SessionAgent`] as an [`Agent`]: the session's value behind the runtime's
/// lock, so user code needs none. Uncontended at the default session limit of one.
struct Stateful<A> {
    agent: tokio::sync::Mutex<A>,
}

impl<A: SessionAgent> Agent for Stateful<A> {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.agent.lock().await.handle(ctx).await
    }
}

/// How a closure agent's turn ends: the outcome is its return value, the one way
/// such an agent sets it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// Completed with this reply (no reply when empty).
    Reply(Vec<Part>),
    /// Stops in `input-required` with this question.
    InputRequired(String),
    /// Ends `rejected` with this reason: the agent declines the work.
    Rejected(String),
}

impl From<String> for Outcome {
    fn from(text: String) -> Self {
        Self::Reply(vec![Part::text(text)])
    }
}

impl From<&str> for Outcome {
    fn from(text: &str) -> Self {
        Self::Reply(vec![Part::text(text)])
    }
}

impl From<Vec<Part>> for Outcome {
    fn from(parts: Vec<Part>) -> Self {
        Self::Reply(parts)
    }
}

impl From<()> for Outcome {
    fn from((): ()) -> Self {
        Self::Reply(Vec::new())
    }
}

/// A small agent written as a closure from the message to its [`Outcome`] (or
/// anything that converts into one: a `String` reply, parts, `()`); an `Err` fails
/// the task. The closure sees only the message; an agent that sends to others,
/// streams artifacts or reads its history implements [`Agent`] instead.
///
/// ```
/// use agentyard_actors::{AgentError, agent_fn};
/// use agentyard_transport::a2a::Message;
///
/// let upper = agent_fn(|message: Message| async move {
///     Ok::<_, AgentError>(message.text().to_uppercase())
/// });
/// # let _ = upper;
/// ```
pub fn agent_fn<F, Fut, R>(handler: F) -> FnAgent<F>
where
    F: Fn(Message) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, AgentError>> + Send + 'static,
    R: Into<Outcome> + 'static,
{
    FnAgent { handler }
}

/// A closure as an [`Agent`]; made by [`agent_fn`].
pub struct FnAgent<F> {
    handler: F,
}

impl<F> fmt::Debug for FnAgent<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnAgent").finish_non_exhaustive()
    }
}

impl<F, Fut, R> Agent for FnAgent<F>
where
    F: Fn(Message) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, AgentError>> + Send + 'static,
    R: Into<Outcome> + 'static,
{
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        match (self.handler)(ctx.message().clone()).await?.into() {
            Outcome::Reply(parts) if parts.is_empty() => {}
            Outcome::Reply(parts) => ctx.reply(parts),
            Outcome::InputRequired(question) => ctx.require_input(question),
            Outcome::Rejected(reason) => ctx.reject(reason),
        }
        Ok(())
    }
}
