//! [`OverHttp`]: nodes reached over the HTTP edge with A2A JSON-RPC, as the seed's
//! decision record chose ("every node an A2A server, all communication HTTP").

use std::sync::Arc;

use agentyard_transport::a2a::{
    MessageSendConfiguration, MessageSendParams, StreamEvent, Task, TaskIdParams, TaskQueryParams,
};
use agentyard_transport::client::{A2aClient, ClientOptions, RetryPolicy};
use agentyard_transport::{ContextId, TaskId};
use async_trait::async_trait;
use dashmap::DashMap;
use futures::StreamExt as _;

use super::{NodeClient, NodeError, NodeSend};

/// Sends each node's message as `message/stream` to `{base_url}/agents/{agent}` (the
/// first event names the task, so it can be canceled with `tasks/cancel` while it
/// runs), then reads the settled task with `tasks/get`. The agents must be exposed.
#[derive(Debug, Clone)]
pub struct OverHttp {
    base_url: String,
    options: ClientOptions,
    clients: Arc<DashMap<String, A2aClient>>,
    /// The task each attempt's conversation runs, for `tasks/cancel`.
    running: Arc<DashMap<ContextId, (String, TaskId)>>,
    /// Attempts canceled before their task was named.
    abandoned: Arc<DashMap<ContextId, ()>>,
}

impl OverHttp {
    /// Reaches the agents served under `base_url` (e.g. `http://127.0.0.1:8080`),
    /// with `options` (credentials) on every call. Without a retry policy of their
    /// own, calls are retried up to 3 times where that cannot run work twice: a
    /// send then carries its `messageId` (the run/node/attempt key) as its
    /// `Idempotency-Key`, so the agent joins a repeat to the first attempt.
    #[must_use]
    pub fn new(base_url: impl Into<String>, options: ClientOptions) -> Self {
        let options = if options.retry_policy() == RetryPolicy::none() {
            options.retry(RetryPolicy::new(3))
        } else {
            options
        };
        Self {
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            options,
            clients: Arc::default(),
            running: Arc::default(),
            abandoned: Arc::default(),
        }
    }

    async fn exchange(&self, send: NodeSend, context_id: ContextId) -> Result<Task, NodeError> {
        let client = self.client(&send.agent).await?;
        let mut params = MessageSendParams::new(send.message);
        if !send.accepted_output_modes.is_empty() {
            params.configuration = Some(MessageSendConfiguration {
                accepted_output_modes: Some(send.accepted_output_modes),
                ..MessageSendConfiguration::default()
            });
        }
        let agent = send.agent;
        let failed = |e: &dyn std::fmt::Display| NodeError(format!("agent `{agent}`: {e}"));
        let mut stream = client
            .send_message_stream(params)
            .await
            .map_err(|e| failed(&e))?;
        let mut task_id = None;
        while let Some(event) = stream.next().await {
            let event = event.map_err(|e| failed(&e))?;
            if task_id.is_none()
                && let Some(id) = event.task_id()
            {
                task_id = Some(id.clone());
                if self.abandoned.remove(&context_id).is_some() {
                    // Canceled before it was named: cancel it now.
                    let _ = client.cancel_task(TaskIdParams::new(id.clone())).await;
                    return Err(failed(&"canceled"));
                }
                self.running
                    .insert(context_id.clone(), (agent.clone(), id.clone()));
            }
            if let StreamEvent::Message(message) = &event {
                // A direct message reply: no task to follow.
                self.running.remove(&context_id);
                let mut task = Task::new(
                    message.task_id.clone().unwrap_or_else(TaskId::mint),
                    message.context_id.clone().unwrap_or(context_id),
                    agentyard_transport::a2a::TaskStatus::new(
                        agentyard_transport::a2a::TaskState::Completed,
                    )
                    .with_message(message.clone()),
                );
                task.history = None;
                return Ok(task);
            }
            if event.is_final() {
                break;
            }
        }
        self.running.remove(&context_id);
        self.abandoned.remove(&context_id);
        let task_id = task_id.ok_or_else(|| failed(&"the stream ended before naming a task"))?;
        client
            .get_task(TaskQueryParams::new(task_id))
            .await
            .map_err(|e| failed(&e))
    }

    async fn client(&self, agent: &str) -> Result<A2aClient, NodeError> {
        if let Some(client) = self.clients.get(agent) {
            return Ok(client.clone());
        }
        let card = format!(
            "{}/agents/{agent}/.well-known/agent-card.json",
            self.base_url
        );
        let client = A2aClient::connect(&card, self.options.clone())
            .await
            .map_err(|e| NodeError(format!("agent `{agent}` over HTTP: {e}")))?;
        self.clients.insert(agent.to_owned(), client.clone());
        Ok(client)
    }
}

#[async_trait]
impl NodeClient for OverHttp {
    async fn send(&self, send: NodeSend) -> Result<Task, NodeError> {
        // The exchange runs in a task of its own: if the runner gives up on it (a
        // timeout, a cancel) before the first event named the task, the exchange
        // still learns the task's id and cancels it, rather than leave it running.
        let this = self.clone();
        let context_id = send
            .message
            .context_id
            .clone()
            .unwrap_or_else(ContextId::mint);
        let exchange = tokio::spawn(async move { this.exchange(send, context_id).await });
        exchange
            .await
            .map_err(|e| NodeError(format!("the node's HTTP exchange stopped: {e}")))?
    }

    async fn cancel(&self, agent: &str, context_id: &ContextId) -> Result<bool, NodeError> {
        let Some((_, (agent_name, task_id))) = self.running.remove(context_id) else {
            // Not named yet: the exchange cancels it when it is (see `send`).
            self.abandoned.insert(context_id.clone(), ());
            return Ok(false);
        };
        debug_assert_eq!(agent, agent_name);
        let client = self.client(&agent_name).await?;
        Ok(client.cancel_task(TaskIdParams::new(task_id)).await.is_ok())
    }

    fn output_modes(&self, _agent: &str) -> Option<Vec<String>> {
        // The edge checks `acceptedOutputModes` itself (-32005).
        None
    }
}
