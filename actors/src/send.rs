//! The plain values of a send: what a caller asks for ([`SendRequest`]), what it gets
//! back ([`Submitted`], [`Settled`]), the session a send addresses ([`SessionKey`]),
//! and what a caller follows of its task. No actors, no shared state: the supervisor
//! and the session and task modules all build on these, and these on nothing of theirs.

use std::sync::Arc;

use agentyard_policy::EntryPoint;
use agentyard_transport::a2a::{Message, Metadata, Role, Task, TaskState, TaskStatus};
use agentyard_transport::handoff::HandoffPayload;
use agentyard_transport::{ContextId, MessageId};
use tokio::sync::broadcast;

use crate::idempotency::Caller;
#[cfg(doc)]
use crate::store::TaskOwner;

#[cfg(test)]
mod tests;

/// A session: one agent type in one conversation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SessionKey {
    pub(crate) agent: Arc<str>,
    pub(crate) context_id: ContextId,
}

/// A send: a message for an agent type, with who sent it and how.
#[derive(Debug, Clone)]
pub struct SendRequest {
    /// The target agent type.
    pub to: String,
    /// The message. Its `contextId` picks the conversation (a new one is minted when
    /// absent); its `taskId` continues a task that has not ended.
    pub message: Message,
    /// Where the send comes from (default `api`).
    pub entry_point: EntryPoint,
    /// The sender: an agent name, or the caller's principal. Shared: the send's
    /// envelope and events hold it too, and an agent's sends take its registered name
    /// without a copy.
    pub from: Option<Arc<str>>,
    /// The authenticated caller the send comes from (set by the HTTP edge). The task
    /// it creates belongs to this principal ([`TaskOwner`]), and its idempotency key
    /// is scoped by it rather than by `from`.
    pub principal: Option<String>,
    /// A key that makes repeats of this send return the first one's task. A handoff
    /// payload's taskId / questionId serves when none is given. Keys are scoped by the
    /// target agent and the caller (`principal`, else `from`): two callers never share
    /// a key.
    pub idempotency_key: Option<String>,
    /// How many agent-to-agent hops deep this send is.
    pub hops: u32,
    /// A typed handoff payload to attach to the message as a data part.
    pub payload: Option<HandoffPayload>,
    /// The request's own metadata (A2A `params.metadata`), for the agent.
    pub metadata: Option<Metadata>,
    /// The extension URIs activated for this send (A2A `X-A2A-Extensions` that the
    /// agent's card declares), for the agent.
    pub extensions: Vec<String>,
    /// The sessions waiting on this send, outermost first (set by agent-to-agent sends).
    pub(crate) chain: Arc<[SessionKey]>,
    /// The payload of the message's handoff data part, when whoever built the
    /// request (the HTTP edge) has already read and validated it: the send path
    /// then does not decode it again. Boxed: most sends carry none, and a request
    /// is moved several times on its way in (every builder call moves it whole).
    pub(crate) read_payload: Option<Box<HandoffPayload>>,
}

impl SendRequest {
    /// A send of `message` to the agent type `to`, from the API entry point.
    #[must_use]
    pub fn new(to: impl Into<String>, message: Message) -> Self {
        Self {
            to: to.into(),
            message,
            entry_point: EntryPoint::Api,
            from: None,
            principal: None,
            idempotency_key: None,
            hops: 0,
            payload: None,
            metadata: None,
            extensions: Vec::new(),
            // Shared, not allocated: an empty `Arc<[_]>` is a static.
            chain: Arc::default(),
            read_payload: None,
        }
    }

    /// Sets the sender.
    #[must_use]
    pub fn from(mut self, from: impl Into<Arc<str>>) -> Self {
        self.from = Some(from.into());
        self
    }

    /// Sets the authenticated principal the send comes from.
    #[must_use]
    pub fn principal(mut self, principal: impl Into<String>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// Sets the entry point.
    #[must_use]
    pub fn entry_point(mut self, entry_point: EntryPoint) -> Self {
        self.entry_point = entry_point;
        self
    }

    /// Sets the idempotency key.
    #[must_use]
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// Sets the hop count.
    #[must_use]
    pub fn hops(mut self, hops: u32) -> Self {
        self.hops = hops;
        self
    }

    /// Attaches a typed handoff payload.
    #[must_use]
    pub fn payload(mut self, payload: HandoffPayload) -> Self {
        self.payload = Some(payload);
        self
    }

    /// Sets the request's metadata (A2A `params.metadata`).
    #[must_use]
    pub fn metadata(mut self, metadata: Option<Metadata>) -> Self {
        self.metadata = metadata;
        self
    }

    /// Sets the activated extension URIs.
    #[must_use]
    pub fn extensions(mut self, extensions: Vec<String>) -> Self {
        self.extensions = extensions;
        self
    }
}

/// A send that reached its session.
#[derive(Debug, Clone)]
pub struct Submitted {
    /// The task as it stood when submitted.
    pub task: Task,
    /// Whether this was a repeat of an earlier send (by idempotency key).
    pub deduplicated: bool,
}

/// A send whose task has settled: it ended — `completed`, but also `failed`,
/// `canceled` or `rejected` — or stopped to ask for input or authentication. Read
/// which from `task.status.state`.
#[derive(Debug, Clone)]
pub struct Settled {
    /// The task as it stands now.
    pub task: Task,
    /// Whether this was a repeat of an earlier send (by idempotency key).
    pub deduplicated: bool,
}

/// What a send's caller will follow of its task.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Follow {
    /// Nothing: the caller returns once the task is submitted.
    Nothing,
    /// The task's state, to wait until it settles.
    State,
    /// Every update, to stream them.
    Updates,
}

/// What is left where a message was moved out on its way to the agent (a request,
/// a work unit): no parts, and the empty id, which allocates nothing. Minting one
/// would cost a clock read, random bits and formatting, for a value nobody reads.
pub(crate) fn vacated_message() -> Message {
    Message {
        role: Role::User,
        parts: Vec::new(),
        message_id: MessageId::default(),
        task_id: None,
        context_id: None,
        reference_task_ids: None,
        extensions: None,
        metadata: None,
    }
}

/// An update with its number in the task's event log (0 when the store keeps no log).
pub(crate) type Sequenced = (u64, agentyard_transport::a2a::StreamEvent);

/// An update as a task's stream carries it ([`Sequenced`], the event shared). A
/// stream's ring holds `stream_capacity` slots of these, all made when the stream
/// starts: with the event inline a slot took about 200 bytes (about 50 KiB per
/// streamed task at the former default of 256), and making and dropping the ring
/// showed in the profile of every stream. Shared, a slot is about a quarter of that,
/// and a follower takes the event without a copy (the ring lets go of its own once
/// every follower read it). The default is now 16 slots (under 1 KiB): a follower
/// further behind reads the rest from the task's event log.
pub(crate) type Published = (u64, std::sync::Arc<agentyard_transport::a2a::StreamEvent>);

/// The receiving end of what a caller follows.
#[derive(Debug)]
pub(crate) enum Watcher {
    /// Nothing to follow.
    Nothing,
    /// The task's state (and, once settled, the task as it was then).
    State(StateWatch),
    /// The task's updates.
    Updates(broadcast::Receiver<Published>),
}

/// A waiter on a task's state: the state, and what came with a settled one.
pub(crate) type StateWatch = crate::signal::Receiver<TaskState, Handover>;

/// What a waiter on a task's state is handed when the task settles, so that it need
/// not read the task back from the store, or knows what the store does not have.
#[derive(Debug)]
pub(crate) enum Handover {
    /// The task as it settled, read back with its final write: the store may forget
    /// it before the waiter would have read it, past its retention. Boxed: moved
    /// whole through the calls to its waiter, its 168 bytes cost more than the
    /// allocation (`docs/benchmarks.md`).
    Task(Box<Task>),
    /// The store refused the final write: the task is as the store holds it, with
    /// this status, as its streams end. (Not read back here: a store that refuses
    /// may also be slow to answer, and the streams' final update would wait for it.)
    Unstored(TaskStatus),
}

/// The metadata key that marks a task returned for a repeated idempotency key:
/// `"agentyard.deduplicated": true` on the copy handed to the repeat, never stored.
pub const DEDUPLICATED_METADATA_KEY: &str = "agentyard.deduplicated";

pub(crate) fn mark_deduplicated(task: &mut Task) {
    task.metadata.get_or_insert_with(Default::default).insert(
        DEDUPLICATED_METADATA_KEY.to_owned(),
        serde_json::Value::Bool(true),
    );
}

/// Who presents a send's idempotency key: its principal, else its named sender.
pub(crate) fn caller(request: &SendRequest) -> Caller<'_> {
    match (&request.principal, &request.from) {
        (Some(principal), _) => Caller::Principal(principal),
        (None, Some(from)) => Caller::Sender(from),
        (None, None) => Caller::Anonymous,
    }
}

/// The send as the policy sees it.
pub(crate) fn policy_request<'a>(
    request: &'a SendRequest,
    payload_type: Option<&'a str>,
) -> agentyard_policy::SendRequest<'a> {
    let mut described =
        agentyard_policy::SendRequest::new(&request.to, request.entry_point).hops(request.hops);
    if let Some(from) = request.from.as_deref() {
        described = described.from(from);
    }
    if let Some(payload_type) = payload_type {
        described = described.payload_type(payload_type);
    }
    described
}
