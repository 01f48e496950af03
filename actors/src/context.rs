//! [`TaskContext`]: what an agent sees of the task it handles, and the one way it
//! acts — reply, publish progress and artifacts, decide the outcome, send to other
//! agents. It holds a [`Port`], never the supervisor.

use std::fmt;
use std::sync::Arc;

use agentyard_policy::EntryPoint;
use agentyard_transport::a2a::{Artifact, Message, Metadata, Part, Role, Task, TaskState};
use agentyard_transport::handoff::{HandoffPayload, Intent};
use agentyard_transport::{ContextId, TaskId};

use crate::cancel::Cancel;
use crate::channel::{ArtifactChunk, TaskEvents, status};
use crate::error::{Error, Result};
use crate::port::Port;
use crate::send::{SendRequest, SessionKey, Settled, Submitted};

#[cfg(test)]
mod tests;

/// How the task should stand when the handler returns.
#[derive(Debug)]
pub(crate) enum Finish {
    Completed,
    InputRequired(Message),
    AuthRequired(Message),
    Failed(Message),
    Rejected(Message),
}

impl Finish {
    /// The outcome an agent chose on its context, if it chose one other than the
    /// default (for the failure message when it then returned an error).
    pub(crate) fn name(&self) -> Option<&'static str> {
        match self {
            Self::Completed => None,
            Self::InputRequired(_) => Some("input-required"),
            Self::AuthRequired(_) => Some("auth-required"),
            Self::Failed(_) => Some("failed"),
            Self::Rejected(_) => Some("rejected"),
        }
    }
}

/// What an agent sees of the task it is handling, and what it acts through.
///
/// Status changes other than `working` take effect when the handler returns, so the
/// task's outcome is decided in one place; artifacts and `working` updates are
/// published at once, so streaming clients see progress as it happens.
///
/// An agent reaches other agents only through the context's send methods, which
/// stamp each send as this agent's and carry the chain of sessions waiting on it, so
/// the policy's hop limit and the delegation-cycle check always apply. There is no
/// supervisor behind it to call directly:
///
/// ```compile_fail
/// use agentyard_actors::{SendRequest, TaskContext};
/// use agentyard_transport::a2a::Message;
///
/// async fn bypass(ctx: &TaskContext) {
///     // Does not compile: the context does not hand out its supervisor.
///     let request = ctx.request_to("other", Message::user_text("hi"));
///     let _ = ctx.supervisor().send_and_wait(request).await;
/// }
/// ```
pub struct TaskContext {
    pub(crate) port: Arc<dyn Port>,
    pub(crate) agent: Arc<str>,
    pub(crate) task_id: TaskId,
    pub(crate) context_id: ContextId,
    pub(crate) message: Arc<Message>,
    pub(crate) payload: Option<Box<HandoffPayload>>,
    pub(crate) intent: Option<Intent>,
    pub(crate) request_metadata: Option<Metadata>,
    pub(crate) extensions: Vec<String>,
    pub(crate) sender: Option<Arc<str>>,
    pub(crate) entry_point: EntryPoint,
    pub(crate) hops: u32,
    /// The sessions waiting on this task's sender; a waiting send adds this one.
    pub(crate) waiting: Arc<[SessionKey]>,
    /// Loaded on first use: most agents never read it, and copying it out of the
    /// store for every message was a large part of a send's cost.
    pub(crate) history: tokio::sync::OnceCell<Vec<Arc<Message>>>,
    pub(crate) cancel: Cancel,
    pub(crate) events: TaskEvents,
    /// Whether the turn's first write (`working`) is stored: see [`Stored`].
    pub(crate) stored: Stored,
    pub(crate) reply: Option<Message>,
    pub(crate) finish: Finish,
}

/// Whether the turn's `working` status is stored yet. The handler starts while it is
/// being written (a durable store commits it with the turn's later writes), so what
/// the handler reads of the store (its task, the conversation) and what it sends to
/// other agents waits for it first: they see the task, and this turn's message, as
/// they would had the handler started after the write.
#[derive(Debug, Clone)]
pub(crate) struct Stored(Option<crate::signal::Receiver<bool>>);

impl Stored {
    /// A barrier, and what lifts it (by sending `true`, or by being dropped).
    pub(crate) fn new() -> (crate::signal::Sender<bool>, Self) {
        let lift = crate::signal::Sender::new(false);
        let wait = lift.subscribe();
        (lift, Self(Some(wait)))
    }

    /// No barrier: the writes before the handler are stored already (a store that
    /// writes at once, as the in-memory one does: no signal to make).
    pub(crate) const fn lifted() -> Self {
        Self(None)
    }

    /// Waits until the write is stored (or failed: then the reads see what is there).
    pub(crate) async fn wait(&self) {
        if let Some(wait) = &self.0 {
            let mut wait = wait.clone();
            let _ = wait.wait_for(|stored| *stored).await;
        }
    }
}

impl fmt::Debug for TaskContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskContext")
            .field("agent", &self.agent)
            .field("task_id", &self.task_id)
            .field("context_id", &self.context_id)
            .field("sender", &self.sender)
            .field("entry_point", &self.entry_point)
            .field("hops", &self.hops)
            .finish_non_exhaustive()
    }
}

impl TaskContext {
    /// The message being handled.
    #[must_use]
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The typed handoff payload the message carries, if any.
    #[must_use]
    pub fn payload(&self) -> Option<&HandoffPayload> {
        self.payload.as_deref()
    }

    /// What the sender means: the payload type's intent when the message carries a
    /// payload, else what the runtime's intent classifier said of the free text
    /// (`None` without a classifier, or when it could not tell).
    #[must_use]
    pub fn intent(&self) -> Option<Intent> {
        self.intent
    }

    /// The metadata of the request that brought the message (A2A
    /// `params.metadata`); the message's own metadata is
    /// [`message().metadata`](Message::metadata).
    #[must_use]
    pub fn request_metadata(&self) -> Option<&Metadata> {
        self.request_metadata.as_ref()
    }

    /// The extension URIs activated for this message: those the client listed in
    /// `X-A2A-Extensions` that this agent's card declares (the handoff extension
    /// and any an operator declared), in the client's order. Empty for sends that
    /// did not come over HTTP.
    #[must_use]
    pub fn extensions(&self) -> &[String] {
        &self.extensions
    }

    /// Whether the extension `uri` is activated for this message (exact match: a
    /// `/v2` URI does not activate `/v1`).
    #[must_use]
    pub fn has_extension(&self, uri: &str) -> bool {
        self.extensions.iter().any(|active| active == uri)
    }

    /// This agent type's name.
    #[must_use]
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// The task being worked on.
    #[must_use]
    pub fn task_id(&self) -> &TaskId {
        &self.task_id
    }

    /// The conversation.
    #[must_use]
    pub fn context_id(&self) -> &ContextId {
        &self.context_id
    }

    /// Who sent the message: an agent name for agent-to-agent sends, the caller's
    /// principal or nothing otherwise.
    #[must_use]
    pub fn sender(&self) -> Option<&str> {
        self.sender.as_deref()
    }

    /// Where the message entered the runtime.
    #[must_use]
    pub fn entry_point(&self) -> EntryPoint {
        self.entry_point
    }

    /// How many agent-to-agent hops deep this message is (0 from outside).
    #[must_use]
    pub fn hops(&self) -> u32 {
        self.hops
    }

    /// The conversation's earlier messages, oldest first, up to the configured depth:
    /// the conversation as it stood when the message being handled arrived (that
    /// message is not included). Read from the task store on the first call and kept
    /// for the rest of the handler; a store failure reads as no history (and is logged).
    pub async fn history(&self) -> &[Arc<Message>] {
        self.history
            .get_or_init(|| async {
                let depth = self.port.history_depth();
                if depth == 0 {
                    return Vec::new();
                }
                self.stored.wait().await;
                self.port
                    .store()
                    .context_history(&self.context_id, Some(&self.message.message_id), depth)
                    .await
                    .unwrap_or_else(|error| {
                        tracing::warn!(%error, context_id = %self.context_id, "could not read the conversation's history");
                        Vec::new()
                    })
            })
            .await
    }

    /// Whether the task has been canceled. A canceled task ends `canceled` whatever the
    /// handler does; the handler gets a grace period to stop, then is dropped.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Resolves when the task is canceled; use it in `tokio::select!` around long work.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await;
    }

    /// A message from this agent in this task and conversation.
    #[must_use]
    pub fn agent_message(&self, parts: Vec<Part>) -> Message {
        let mut message = Message::new(Role::Agent, parts);
        message.task_id = Some(self.task_id.clone());
        message.context_id = Some(self.context_id.clone());
        message
    }

    /// Sets the reply: the message the task ends with (the last one set wins).
    pub fn reply(&mut self, parts: Vec<Part>) {
        self.reply = Some(self.agent_message(parts));
    }

    /// Sets a text reply.
    pub fn reply_text(&mut self, text: impl Into<String>) {
        self.reply(vec![Part::text(text)]);
    }

    /// Sets a reply carrying a typed handoff payload beside its free text (e.g. the
    /// `answer` to a `question`, a `status_report` on a `task_delegation`); the
    /// `a2a.response` event then carries its type and JSON.
    pub fn reply_payload(&mut self, text: impl Into<String>, payload: &HandoffPayload) {
        let mut message = self.agent_message(vec![Part::text(text)]);
        agentyard_transport::handoff::attach_to_message(&mut message, payload);
        self.reply = Some(message);
    }

    /// Publishes a `working` status with an optional progress note.
    ///
    /// # Errors
    /// [`crate::Error::Store`] if the task has already ended (e.g. it was canceled).
    pub async fn working(&mut self, note: Option<&str>) -> Result<()> {
        let message = note.map(|text| self.agent_message(vec![Part::text(text)]));
        self.events
            .progress(
                self.port.store(),
                self.port.events(),
                status(TaskState::Working, message.map(Into::into)),
            )
            .await
    }

    /// Publishes a `working` status whose message carries these parts: progress a
    /// client can read as data (e.g. a data part beside a text note), where
    /// [`TaskContext::working`] carries text only.
    ///
    /// # Errors
    /// [`crate::Error::Store`] if the task has already ended (e.g. it was canceled).
    pub async fn working_parts(&mut self, parts: Vec<Part>) -> Result<()> {
        let message = self.agent_message(parts);
        self.events
            .progress(
                self.port.store(),
                self.port.events(),
                status(TaskState::Working, Some(message.into())),
            )
            .await
    }

    /// Publishes a whole artifact (replacing one with the same id). An
    /// `Arc<Artifact>` is shared with the store and the events, not copied.
    ///
    /// # Errors
    /// [`crate::Error::Store`] if the task has already ended.
    pub async fn artifact(&mut self, artifact: impl Into<Arc<Artifact>>) -> Result<()> {
        self.artifact_chunk(artifact, ArtifactChunk::Whole).await
    }

    /// Publishes a piece of an artifact streamed in chunks; `chunk` says which piece
    /// it is (a first or whole one replaces the artifact of the same id, the others
    /// add their parts to it).
    ///
    /// # Errors
    /// [`crate::Error::Store`] if the task has already ended.
    pub async fn artifact_chunk(
        &mut self,
        artifact: impl Into<Arc<Artifact>>,
        chunk: ArtifactChunk,
    ) -> Result<()> {
        self.events
            .artifact(
                self.port.store(),
                self.port.events(),
                artifact.into(),
                chunk,
            )
            .await
    }

    /// Ends this turn in `input-required` with a question; the next message sent to
    /// this task resumes it (the handler is called again with that message).
    pub fn require_input(&mut self, question: impl Into<String>) {
        self.finish = Finish::InputRequired(self.agent_message(vec![Part::text(question)]));
    }

    /// Ends this turn in `auth-required` with an explanation.
    pub fn require_auth(&mut self, explanation: impl Into<String>) {
        self.finish = Finish::AuthRequired(self.agent_message(vec![Part::text(explanation)]));
    }

    /// Ends the task `failed` with a reason, without returning an error.
    pub fn fail(&mut self, reason: impl Into<String>) {
        self.finish = Finish::Failed(self.agent_message(vec![Part::text(reason)]));
    }

    /// Ends the task `rejected`: the agent declines the work.
    pub fn reject(&mut self, reason: impl Into<String>) {
        self.finish = Finish::Rejected(self.agent_message(vec![Part::text(reason)]));
    }

    /// Ends the task `completed` (the default when the handler returns `Ok`).
    pub fn complete(&mut self) {
        self.finish = Finish::Completed;
    }

    /// A send to another agent from this one: the sender is this agent, the entry point
    /// `agent`, the hop count one more than this message's. Adjust it, then send it
    /// with [`TaskContext::send_request`] or [`TaskContext::send_request_and_wait`];
    /// it goes through the supervisor like every other send (policy, idempotency,
    /// limits).
    #[must_use]
    pub fn request_to(&self, to: impl Into<String>, message: Message) -> SendRequest {
        SendRequest::new(to, message)
            .from(self.agent.to_string())
            .entry_point(EntryPoint::Agent)
            .hops(self.hops.saturating_add(1))
    }

    /// Sends to another agent and returns once its task is submitted.
    ///
    /// # Errors
    /// Whatever the supervisor refuses the send with.
    pub async fn send(&self, to: impl Into<String>, message: Message) -> Result<Submitted> {
        self.send_request(self.request_to(to, message)).await
    }

    /// Sends to another agent and waits for its task to complete or ask for input.
    ///
    /// # Errors
    /// Whatever the supervisor refuses the send with.
    pub async fn send_and_wait(&self, to: impl Into<String>, message: Message) -> Result<Settled> {
        self.send_request_and_wait(self.request_to(to, message))
            .await
    }

    /// Hands a typed payload (with a free-text summary beside it) to another agent and
    /// waits for its task to complete or ask for input.
    ///
    /// # Errors
    /// Whatever the supervisor refuses the send with.
    pub async fn delegate(
        &self,
        to: impl Into<String>,
        text: impl Into<String>,
        payload: HandoffPayload,
    ) -> Result<Settled> {
        let message = Message::new(Role::User, vec![Part::text(text)]);
        self.send_request_and_wait(self.request_to(to, message).payload(payload))
            .await
    }

    /// Sends a request built with [`TaskContext::request_to`] (and adjusted: a
    /// payload, a conversation, an idempotency key, more hops) and returns once its
    /// task is submitted.
    ///
    /// The request is stamped as this agent's whatever it says: the sender is this
    /// agent, the entry point `agent`, no caller's principal, and at least one hop
    /// deeper than this message — an agent cannot send as someone else, or shallower
    /// than it is.
    ///
    /// # Errors
    /// Whatever the supervisor refuses the send with.
    pub async fn send_request(&self, request: SendRequest) -> Result<Submitted> {
        self.stored.wait().await;
        self.port.send(self.stamped(request)).await
    }

    /// [`TaskContext::send_request`] that waits for the task to complete, end or ask
    /// for input. Every waiting send of the context comes through here: the request
    /// carries the chain of sessions waiting on it, so a send back into one of them
    /// is refused ([`crate::Error::DelegationCycle`]) instead of deadlocking.
    ///
    /// # Errors
    /// Whatever the supervisor refuses the send with.
    pub async fn send_request_and_wait(&self, request: SendRequest) -> Result<Settled> {
        self.stored.wait().await;
        let mut request = self.stamped(request);
        request.chain = self
            .waiting
            .iter()
            .cloned()
            .chain([SessionKey {
                agent: Arc::clone(&self.agent),
                context_id: self.context_id.clone(),
            }])
            .collect();
        self.port.send_and_wait(request).await
    }

    /// The task being worked on as the store has it now, with at most
    /// `history_length` of its most recent messages (all with `None`): its status,
    /// artifacts published so far, and the messages of its earlier turns.
    ///
    /// # Errors
    /// [`crate::Error::Store`] if the store fails; [`crate::Error::TaskNotFound`]
    /// only if the store lost the task.
    pub async fn task(&self, history_length: Option<usize>) -> Result<Task> {
        self.stored.wait().await;
        self.port
            .store()
            .get(&self.task_id, history_length)
            .await?
            .ok_or_else(|| Error::TaskNotFound(self.task_id.clone()))
    }

    /// `request` as a send from this agent (see [`TaskContext::send_request`]).
    pub(crate) fn stamped(&self, mut request: SendRequest) -> SendRequest {
        request.from = Some(Arc::clone(&self.agent));
        request.entry_point = EntryPoint::Agent;
        request.principal = None;
        request.hops = request.hops.max(self.hops.saturating_add(1));
        request.chain = Arc::default();
        crate::remote::carry(self.request_metadata.as_ref(), &mut request.metadata);
        request
    }
}
