//! The errors a caller of the runtime can act on.

use agentyard_transport::a2a::TaskState;
use agentyard_transport::{ContextId, TaskId};

use crate::limits::LimitScope;
use crate::store::StoreError;

/// What went wrong with a send, a task query or a cancel.
///
/// Each variant names something the caller can act on: retry later ([`Error::Busy`]),
/// fix the request ([`Error::InvalidMessage`]), give up ([`Error::PolicyRejected`]).
/// The HTTP edge maps each one to a JSON-RPC error code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No agent type is registered under this name.
    #[error("no agent named `{0}` is registered")]
    UnknownAgent(String),
    /// The policy refused the send; the agent never ran.
    #[error("policy rejected the send: {reason}")]
    PolicyRejected {
        /// Why, in words that name the rule or limit.
        reason: String,
        /// The structured rejection from the policy.
        rejection: agentyard_policy::Rejection,
    },
    /// A concurrency limit and its waiting queue are both full.
    #[error("busy: the {scope} concurrency limit and its queue of {queue} are full; retry later")]
    Busy {
        /// Which limit was full.
        scope: LimitScope,
        /// The size of the waiting queue that overflowed.
        queue: usize,
    },
    /// No task has this id.
    #[error("task `{0}` not found")]
    TaskNotFound(TaskId),
    /// The message names a task that has already ended.
    #[error(
        "task `{task_id}` is {state} and cannot take another message; send without a taskId to start a new task"
    )]
    TaskTerminal {
        /// The task the message named.
        task_id: TaskId,
        /// Its terminal state.
        state: TaskState,
    },
    /// Cancel was asked of a task that has already ended.
    #[error("task `{task_id}` is {state} and cannot be canceled")]
    TaskNotCancelable {
        /// The task.
        task_id: TaskId,
        /// Its terminal state.
        state: TaskState,
    },
    /// The message names a task of another agent or another context.
    #[error("task `{task_id}` belongs to {owner}, not to this request")]
    TaskMismatch {
        /// The task the message named.
        task_id: TaskId,
        /// Which agent/context owns it.
        owner: String,
    },
    /// An agent-to-agent send addressed a session that is itself waiting on the chain
    /// of sends this one belongs to (A → B → A in one conversation): it would wait for
    /// its own turn forever.
    #[error(
        "agent `{agent}` in context `{context_id}` is waiting on this chain of sends; sending to it again would deadlock (send without a contextId to start a new conversation)"
    )]
    DelegationCycle {
        /// The agent type addressed.
        agent: String,
        /// The conversation.
        context_id: ContextId,
    },
    /// The message itself is unusable (no parts, an invalid typed payload, …).
    #[error("invalid message: {0}")]
    InvalidMessage(String),
    /// The runtime is shutting down and takes no new work.
    #[error("the runtime is shutting down")]
    ShuttingDown,
    /// The session actor could not be started.
    #[error("could not start a session for agent `{agent}` in context `{context_id}`: {reason}")]
    SessionUnavailable {
        /// The agent type.
        agent: String,
        /// The session's context.
        context_id: ContextId,
        /// What failed.
        reason: String,
    },
    /// The task store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A remote agent could not be registered (its card is unreachable). Boxed:
    /// it carries the client's whole error, and every `Result` of the send path
    /// would otherwise grow by it.
    #[error(transparent)]
    Remote(Box<crate::remote::RemoteError>),
}

impl From<crate::remote::RemoteError> for Error {
    fn from(error: crate::remote::RemoteError) -> Self {
        Self::Remote(Box::new(error))
    }
}

/// The result type of the runtime's operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;
