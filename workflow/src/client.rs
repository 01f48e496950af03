//! How the runner reaches a node's agent: [`NodeClient`], the seam the runner is an
//! A2A client through. [`InProcess`] sends through the supervisor (entry point
//! `workflow`); [`OverHttp`] speaks A2A JSON-RPC to the HTTP edge (the seed's
//! pure-A2A mode).

use std::fmt;

use agentyard_actors::{SendRequest, Supervisor};
use agentyard_policy::EntryPoint;
use agentyard_transport::ContextId;
use agentyard_transport::a2a::{Message, Task};
use async_trait::async_trait;

mod http;

pub use http::OverHttp;

/// One send of a node: the message goes to `agent` in a conversation the runner
/// minted for this attempt (`message.context_id`), so the attempt's task can be found
/// and canceled even before the send returns.
#[derive(Debug, Clone)]
pub struct NodeSend {
    /// The agent type.
    pub agent: String,
    /// The message; its `context_id` is set, and its `task_id` when it answers an
    /// input request.
    pub message: Message,
    /// Unique per run, node and attempt.
    pub idempotency_key: String,
    /// Media types accepted back (empty: any).
    pub accepted_output_modes: Vec<String>,
    /// Who sends: the workflow's name.
    pub from: String,
    /// How many agent-to-agent hops deep the send is.
    pub hops: u32,
}

/// Why a node's send failed before its task settled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NodeError(pub String);

/// Sends a node's message and follows its task: the A2A client the runner is.
#[async_trait]
pub trait NodeClient: Send + Sync + fmt::Debug + 'static {
    /// Sends and waits until the task ends or asks for input.
    ///
    /// # Errors
    /// [`NodeError`] when the send is refused or the agent cannot be reached.
    async fn send(&self, send: NodeSend) -> Result<Task, NodeError>;

    /// Cancels the task of `agent` in `context_id` (A2A `tasks/cancel`) if one is
    /// running; returns whether one was canceled.
    ///
    /// # Errors
    /// [`NodeError`] when the agent cannot be reached.
    async fn cancel(&self, agent: &str, context_id: &ContextId) -> Result<bool, NodeError>;

    /// The media types the agent produces, if known.
    fn output_modes(&self, agent: &str) -> Option<Vec<String>>;
}

/// Nodes reached through the in-process supervisor: every send is a supervisor send
/// with entry point `workflow` (policy, idempotency keyed by run and node, limits and
/// events apply).
#[derive(Debug, Clone)]
pub struct InProcess {
    supervisor: Supervisor,
}

impl InProcess {
    /// Sends through `supervisor`.
    #[must_use]
    pub fn new(supervisor: Supervisor) -> Self {
        Self { supervisor }
    }
}

#[async_trait]
impl NodeClient for InProcess {
    async fn send(&self, send: NodeSend) -> Result<Task, NodeError> {
        let request = SendRequest::new(send.agent, send.message)
            .entry_point(EntryPoint::Workflow)
            .from(send.from)
            .idempotency_key(send.idempotency_key)
            .hops(send.hops);
        self.supervisor
            .send_and_wait(request)
            .await
            .map(|settled| settled.task)
            .map_err(|e| NodeError(e.to_string()))
    }

    async fn cancel(&self, agent: &str, context_id: &ContextId) -> Result<bool, NodeError> {
        // A scan, but only on the timeout and cancel paths: the hot path (a send that
        // settles) never needs the task id before it returns.
        let page = self
            .supervisor
            .list_tasks(
                &|task: &Task, _| {
                    &task.context_id == context_id && !task.status.state.is_terminal()
                },
                16,
                None,
            )
            .await
            .map_err(|e| NodeError(e.to_string()))?;
        let mut canceled = false;
        for task in page.tasks {
            if self.supervisor.cancel_task(&task.id).await.is_ok() {
                canceled = true;
            }
        }
        let _ = agent;
        Ok(canceled)
    }

    fn output_modes(&self, agent: &str) -> Option<Vec<String>> {
        self.supervisor
            .agent(agent)
            .map(|descriptor| descriptor.output_modes.clone())
    }
}
