//! The DAG runner: every node whose dependencies have completed starts at once, up to
//! a per-run concurrency limit; the run's state is `node → Vec<Artifact>`.
//!
//! - An `agent` node renders its prompt, sends it through the [`NodeClient`] in a
//!   conversation of its own per attempt, and keeps the settled task's artifacts (or,
//!   when it has none, its final message's parts as one artifact).
//! - A per-node timeout cancels that attempt's task (`tasks/cancel`); failures are
//!   retried after `backoff`, doubled each time (default: no retry).
//! - A node that fails for good publishes `node.error`; the nodes downstream of it are
//!   canceled (`tasks/cancel` for any that had started), while independent branches
//!   finish; the run then ends failed, naming the node.
//! - Canceling the run cancels every started node's task.
//! - A node whose task asks for input (`input-required`) publishes
//!   `node.input_required` and waits for an answer on the run's answer channel; the
//!   answer goes to the node's task, which resumes.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use agentyard_actors::Supervisor;
use agentyard_actors::events::{Event, EventDetail, EventKind};
use agentyard_policy::EntryPoint;
use agentyard_transport::a2a::{Artifact, Message, Part, Role, Task, TaskState};
use agentyard_transport::{ContextId, MessageId, TaskId};
use futures::FutureExt as _;
use serde::Serialize;
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::client::{NodeClient, NodeSend};
use crate::definition::{AgentNode, NodeKind, Workflow};
use crate::tools::{ToolInput, Tools};

#[cfg(test)]
mod tests;

/// Nodes running at once in one run when neither the runner nor the workflow says.
pub const DEFAULT_CONCURRENCY: usize = 32;

/// What happens in a run, in order, as the HTTP API streams it (`event` names it).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event")]
#[non_exhaustive]
pub enum RunEvent {
    /// The run began.
    #[serde(rename = "run.started")]
    RunStarted {
        /// The run.
        run_id: String,
        /// The workflow.
        workflow: String,
    },
    /// A node began (an attempt of it, for agent nodes).
    #[serde(rename = "node.started")]
    NodeStarted {
        /// The node.
        node: String,
        /// 1 for the first attempt.
        attempt: u32,
    },
    /// A node completed with these artifacts.
    #[serde(rename = "node.completed")]
    NodeCompleted {
        /// The node.
        node: String,
        /// Its artifacts.
        artifacts: Vec<Artifact>,
    },
    /// An attempt failed and the node will try again after `backoff_ms`.
    #[serde(rename = "node.retrying")]
    NodeRetrying {
        /// The node.
        node: String,
        /// The attempt that failed.
        attempt: u32,
        /// Why.
        error: String,
        /// The wait before the next attempt.
        backoff_ms: u64,
    },
    /// A node failed for good.
    #[serde(rename = "node.error")]
    NodeError {
        /// The node.
        node: String,
        /// Why.
        error: String,
    },
    /// A node was canceled: the run was, or a node it depends on failed.
    #[serde(rename = "node.canceled")]
    NodeCanceled {
        /// The node.
        node: String,
        /// Why.
        reason: String,
    },
    /// A node's task asks for input; the run waits for an answer.
    #[serde(rename = "node.input_required")]
    NodeInputRequired {
        /// The node.
        node: String,
        /// What the agent asks.
        question: String,
    },
    /// The run completed with the output node's artifacts.
    #[serde(rename = "run.completed")]
    RunCompleted {
        /// The output.
        artifacts: Vec<Artifact>,
    },
    /// The run failed.
    #[serde(rename = "run.failed")]
    RunFailed {
        /// The first node that failed.
        node: String,
        /// Why.
        error: String,
    },
    /// The run was canceled.
    #[serde(rename = "run.canceled")]
    RunCanceled,
}

impl RunEvent {
    /// The event's name (`node.started`, ...).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::RunStarted { .. } => "run.started",
            Self::NodeStarted { .. } => "node.started",
            Self::NodeCompleted { .. } => "node.completed",
            Self::NodeRetrying { .. } => "node.retrying",
            Self::NodeError { .. } => "node.error",
            Self::NodeCanceled { .. } => "node.canceled",
            Self::NodeInputRequired { .. } => "node.input_required",
            Self::RunCompleted { .. } => "run.completed",
            Self::RunFailed { .. } => "run.failed",
            Self::RunCanceled => "run.canceled",
        }
    }

    /// The node the event is about, if one.
    #[must_use]
    pub fn node(&self) -> Option<&str> {
        match self {
            Self::NodeStarted { node, .. }
            | Self::NodeCompleted { node, .. }
            | Self::NodeRetrying { node, .. }
            | Self::NodeError { node, .. }
            | Self::NodeCanceled { node, .. }
            | Self::NodeInputRequired { node, .. } => Some(node),
            Self::RunFailed { node, .. } => Some(node),
            Self::RunStarted { .. } | Self::RunCompleted { .. } | Self::RunCanceled => None,
        }
    }
}

/// Where a node stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeState {
    /// Waiting for its dependencies or a free slot.
    Pending,
    /// Running.
    Working,
    /// Its task asks for input.
    InputRequired,
    /// Done, with artifacts.
    Completed,
    /// Failed for good.
    Failed,
    /// Canceled (the run was, or something it depends on failed).
    Canceled,
}

impl NodeState {
    /// The state's name as events and the live view write it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Working => "working",
            Self::InputRequired => "input-required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Canceled => "canceled",
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// Every node completed; the output node's artifacts.
    Completed(Vec<Artifact>),
    /// A node failed (the first one to).
    Failed {
        /// The node.
        node: String,
        /// Why.
        error: String,
    },
    /// The run was canceled.
    Canceled,
}

/// A finished run: its outcome, each node's final state and artifacts.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The run's id.
    pub run_id: String,
    /// How it ended.
    pub outcome: RunOutcome,
    /// Each node's final state, in definition order.
    pub states: Vec<(String, NodeState)>,
    /// The artifacts of every completed node.
    pub artifacts: HashMap<String, Vec<Artifact>>,
}

impl RunReport {
    /// A node's final state.
    #[must_use]
    pub fn state(&self, node: &str) -> Option<NodeState> {
        self.states
            .iter()
            .find(|(id, _)| id == node)
            .map(|(_, state)| *state)
    }
}

/// The caller's side of a run: its id, events, cancellation and answers.
#[derive(Debug)]
pub struct RunControl {
    /// The run's id (part of every node's idempotency key).
    pub run_id: String,
    /// Receives every [`RunEvent`]. Unbounded so that a slow reader never stalls the
    /// run; a run sends at most a few events per node and attempt.
    pub events: Option<mpsc::UnboundedSender<RunEvent>>,
    /// Cancels the run.
    pub cancel: CancellationToken,
    /// Answers to input requests, one text per request, in the order asked. `None`:
    /// a node that asks for input fails.
    pub answers: Option<mpsc::Receiver<String>>,
    /// Who the sends are from (default: the workflow's name).
    pub from: Option<String>,
    /// The hop count of the sends (one more than the run's own request).
    pub hops: u32,
    /// The task whose work the run is (a workflow run as an agent), named on the
    /// node events the runner publishes on the runtime's bus.
    pub task_id: Option<TaskId>,
    /// That task's conversation.
    pub context_id: Option<ContextId>,
}

impl RunControl {
    /// A run with a fresh id, no events, no answers.
    #[must_use]
    pub fn new() -> Self {
        Self {
            run_id: uuid::Uuid::new_v4().to_string(),
            events: None,
            cancel: CancellationToken::new(),
            answers: None,
            from: None,
            hops: 1,
            task_id: None,
            context_id: None,
        }
    }
}

impl Default for RunControl {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs workflows through a [`NodeClient`]. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Runner {
    client: Arc<dyn NodeClient>,
    tools: Tools,
    concurrency: usize,
    /// The runtime whose event bus gets the node events, if any.
    bus: Option<Supervisor>,
}

/// What each node's future shares.
#[derive(Debug)]
struct Shared {
    client: Arc<dyn NodeClient>,
    tools: Tools,
    workflow: Arc<Workflow>,
    input: String,
    run_id: String,
    from: String,
    hops: u32,
    events: Option<mpsc::UnboundedSender<RunEvent>>,
    answers: Option<Mutex<mpsc::Receiver<String>>>,
    bus: Option<Supervisor>,
    task_id: Option<TaskId>,
    context_id: Option<ContextId>,
}

impl Shared {
    fn emit(&self, event: RunEvent) {
        if let Some(bus) = &self.bus {
            self.publish(bus, &event);
        }
        if let Some(events) = &self.events {
            let _ = events.send(event);
        }
    }

    /// Puts a node's start, completion or failure on the runtime's bus as
    /// `workflow.node.*`, from the workflow to the node's agent (the workflow itself
    /// for other nodes), in the run's task and conversation.
    fn publish(&self, bus: &Supervisor, event: &RunEvent) {
        let (kind, node, error) = match event {
            RunEvent::NodeStarted { node, .. } => (EventKind::WorkflowNodeStarted, node, None),
            RunEvent::NodeCompleted { node, .. } => (EventKind::WorkflowNodeCompleted, node, None),
            RunEvent::NodeError { node, error } => {
                (EventKind::WorkflowNodeError, node, Some(error.clone()))
            }
            _ => return,
        };
        bus.publish(|| {
            let workflow = self.workflow.name();
            let to = match self.workflow.node(node).map(|n| &n.kind) {
                Some(NodeKind::Agent(agent)) => agent.agent.as_str(),
                _ => workflow,
            };
            let detail = EventDetail::WorkflowNode {
                workflow: workflow.to_owned(),
                run_id: self.run_id.clone(),
                run_task_id: self.task_id.clone(),
                node: node.clone(),
                error,
            };
            let mut event = Event::new(kind, EntryPoint::Workflow, Some(workflow), to, detail);
            event.task_id.clone_from(&self.task_id);
            event.context_id.clone_from(&self.context_id);
            event
        });
    }
}

enum NodeResult {
    Completed(Vec<Artifact>),
    Failed(String),
    Canceled,
}

impl Runner {
    /// A runner sending through `client`, with these tools, at most
    /// [`DEFAULT_CONCURRENCY`] nodes at once per run.
    #[must_use]
    pub fn new(client: Arc<dyn NodeClient>, tools: Tools) -> Self {
        Self {
            client,
            tools,
            concurrency: DEFAULT_CONCURRENCY,
            bus: None,
        }
    }

    /// Publishes every run's node events (`workflow.node.started`, `.completed`,
    /// `.error`) on this runtime's event bus too, beside the run's own events.
    #[must_use]
    pub fn publishing_to(mut self, supervisor: Supervisor) -> Self {
        self.bus = Some(supervisor);
        self
    }

    /// Sets the per-run concurrency limit (a workflow's own `concurrency` wins).
    #[must_use]
    pub fn concurrency(mut self, limit: usize) -> Self {
        self.concurrency = limit.max(1);
        self
    }

    /// The tools.
    #[must_use]
    pub fn tools(&self) -> &Tools {
        &self.tools
    }

    /// Runs `workflow` on `input` to the end.
    pub async fn run(
        &self,
        workflow: Arc<Workflow>,
        input: String,
        control: RunControl,
    ) -> RunReport {
        let limit = workflow.concurrency().unwrap_or(self.concurrency).max(1);
        let shared = Arc::new(Shared {
            client: Arc::clone(&self.client),
            tools: self.tools.clone(),
            from: control.from.unwrap_or_else(|| workflow.name().to_owned()),
            workflow: Arc::clone(&workflow),
            input,
            run_id: control.run_id.clone(),
            hops: control.hops,
            events: control.events,
            answers: control.answers.map(Mutex::new),
            bus: self.bus.clone(),
            task_id: control.task_id,
            context_id: control.context_id,
        });
        shared.emit(RunEvent::RunStarted {
            run_id: control.run_id.clone(),
            workflow: workflow.name().to_owned(),
        });
        let nodes = workflow.nodes();
        let n = nodes.len();
        let mut waiting: Vec<usize> = nodes.iter().map(|node| node.dependencies.len()).collect();
        let mut dependents = vec![Vec::new(); n];
        for (i, node) in nodes.iter().enumerate() {
            for dependency in &node.dependencies {
                if let Some(d) = workflow.position(dependency) {
                    dependents[d].push(i);
                }
            }
        }
        let mut states = vec![NodeState::Pending; n];
        let mut artifacts: HashMap<String, Vec<Artifact>> = HashMap::new();
        let mut ready: VecDeque<usize> = workflow
            .topological()
            .filter_map(|node| workflow.position(&node.id))
            .filter(|&i| waiting[i] == 0)
            .collect();
        let mut running: JoinSet<(usize, NodeResult)> = JoinSet::new();
        let mut tokens: HashMap<usize, CancellationToken> = HashMap::new();
        let mut failure: Option<(String, String)> = None;
        let mut canceled = false;
        // Input, output and tool nodes finish without waiting: they run here, in the
        // scheduler, rather than as tasks of their own (two task hops fewer before the
        // first agent node starts).
        let mut finished: VecDeque<(usize, NodeResult)> = VecDeque::new();
        loop {
            while !canceled && tokens.len() < limit {
                let Some(i) = ready.pop_front() else { break };
                let node = &nodes[i];
                // A node's inputs: the artifacts of what it depends on, copied so the
                // node's future owns them.
                let inputs: BTreeMap<String, Vec<Artifact>> = node
                    .dependencies
                    .iter()
                    .map(|d| (d.clone(), artifacts.get(d).cloned().unwrap_or_default()))
                    .collect();
                states[i] = NodeState::Working;
                let token = control.cancel.child_token();
                if !matches!(node.kind, NodeKind::Agent(_)) {
                    // Nothing in these nodes awaits, so the future is ready at once.
                    let result = run_node(&shared, i, inputs, token)
                        .now_or_never()
                        .unwrap_or_else(|| {
                            NodeResult::Failed(String::from("the node did not finish at once"))
                        });
                    finished.push_back((i, result));
                    continue;
                }
                tokens.insert(i, token.clone());
                let shared = Arc::clone(&shared);
                running.spawn(async move { (i, run_node(&shared, i, inputs, token).await) });
            }
            let (i, result) = if let Some(done) = finished.pop_front() {
                done
            } else {
                if running.is_empty() {
                    break;
                }
                tokio::select! {
                    () = control.cancel.cancelled(), if !canceled => {
                        canceled = true;
                        for token in tokens.values() {
                            token.cancel();
                        }
                        continue;
                    }
                    Some(joined) = running.join_next() => match joined {
                        Ok(done) => done,
                        Err(error) => {
                            // A node's future panicked: which one a JoinError does not
                            // say, so the run fails plainly.
                            tracing::error!(%error, "a workflow node's task panicked");
                            failure.get_or_insert_with(|| (String::from("<runner>"), error.to_string()));
                            continue;
                        }
                    },
                }
            };
            tokens.remove(&i);
            let id = nodes[i].id.clone();
            match result {
                NodeResult::Completed(produced) => {
                    states[i] = NodeState::Completed;
                    shared.emit(RunEvent::NodeCompleted {
                        node: id.clone(),
                        artifacts: produced.clone(),
                    });
                    artifacts.insert(id, produced);
                    for &d in &dependents[i] {
                        waiting[d] -= 1;
                        if waiting[d] == 0 && states[d] == NodeState::Pending {
                            ready.push_back(d);
                        }
                    }
                }
                NodeResult::Canceled if control.cancel.is_cancelled() || failure.is_some() => {
                    states[i] = NodeState::Canceled;
                    let reason = if control.cancel.is_cancelled() {
                        String::from("the run was canceled")
                    } else {
                        String::from("a node it depends on failed")
                    };
                    shared.emit(RunEvent::NodeCanceled { node: id, reason });
                }
                result @ (NodeResult::Failed(_) | NodeResult::Canceled) => {
                    // A node canceled on its own (not by the run, nor by a
                    // failure upstream) has failed as far as the run goes.
                    let error = match result {
                        NodeResult::Failed(error) => error,
                        _ => String::from("its task was canceled before it completed"),
                    };
                    states[i] = NodeState::Failed;
                    shared.emit(RunEvent::NodeError {
                        node: id.clone(),
                        error: error.clone(),
                    });
                    failure.get_or_insert_with(|| (id.clone(), error));
                    // Everything downstream is canceled; the rest goes on.
                    let mut stack = dependents[i].clone();
                    while let Some(d) = stack.pop() {
                        if matches!(
                            states[d],
                            NodeState::Pending | NodeState::Working | NodeState::InputRequired
                        ) {
                            if let Some(token) = tokens.get(&d) {
                                token.cancel();
                            } else {
                                states[d] = NodeState::Canceled;
                                ready.retain(|&r| r != d);
                                shared.emit(RunEvent::NodeCanceled {
                                    node: nodes[d].id.clone(),
                                    reason: format!("`{id}`, which it depends on, failed"),
                                });
                            }
                            stack.extend(dependents[d].iter().copied());
                        }
                    }
                }
            }
        }
        // The last node may have ended (canceled) before the select saw the run's
        // cancel: the token, not the flag, says whether the run was canceled.
        let canceled = canceled || control.cancel.is_cancelled();
        if canceled {
            for (i, state) in states.iter_mut().enumerate() {
                if *state == NodeState::Pending {
                    *state = NodeState::Canceled;
                    shared.emit(RunEvent::NodeCanceled {
                        node: nodes[i].id.clone(),
                        reason: String::from("the run was canceled"),
                    });
                }
            }
        }
        let outcome = if canceled {
            RunOutcome::Canceled
        } else if let Some((node, error)) = failure {
            RunOutcome::Failed { node, error }
        } else {
            RunOutcome::Completed(
                artifacts
                    .get(&workflow.output().id)
                    .cloned()
                    .unwrap_or_default(),
            )
        };
        shared.emit(match &outcome {
            RunOutcome::Completed(artifacts) => RunEvent::RunCompleted {
                artifacts: artifacts.clone(),
            },
            RunOutcome::Failed { node, error } => RunEvent::RunFailed {
                node: node.clone(),
                error: error.clone(),
            },
            RunOutcome::Canceled => RunEvent::RunCanceled,
        });
        RunReport {
            run_id: control.run_id,
            outcome,
            states: nodes
                .iter()
                .zip(states)
                .map(|(node, state)| (node.id.clone(), state))
                .collect(),
            artifacts,
        }
    }
}

async fn run_node(
    shared: &Shared,
    i: usize,
    inputs: BTreeMap<String, Vec<Artifact>>,
    cancel: CancellationToken,
) -> NodeResult {
    let node = &shared.workflow.nodes()[i];
    let lookup = |id: &str| inputs.get(id).map(Vec::as_slice);
    match &node.kind {
        NodeKind::Input => {
            shared.emit(RunEvent::NodeStarted {
                node: node.id.clone(),
                attempt: 1,
            });
            let mut artifact =
                Artifact::new(node.id.clone(), vec![Part::text(shared.input.clone())]);
            artifact.name = Some(node.id.clone());
            NodeResult::Completed(vec![artifact])
        }
        NodeKind::Output(from) => {
            shared.emit(RunEvent::NodeStarted {
                node: node.id.clone(),
                attempt: 1,
            });
            let gathered = from
                .iter()
                .flat_map(|source| {
                    inputs
                        .get(source)
                        .into_iter()
                        .flatten()
                        .map(move |artifact| {
                            let mut artifact = artifact.clone();
                            artifact.name.get_or_insert_with(|| source.clone());
                            artifact
                        })
                })
                .collect();
            NodeResult::Completed(gathered)
        }
        NodeKind::Tool(tool) => {
            shared.emit(RunEvent::NodeStarted {
                node: node.id.clone(),
                attempt: 1,
            });
            let text = match &tool.prompt {
                Some(prompt) => match prompt.render(&shared.input, lookup) {
                    Ok(text) => text,
                    Err(error) => return NodeResult::Failed(error.to_string()),
                },
                None => String::new(),
            };
            let input = ToolInput {
                text,
                input: shared.input.clone(),
                artifacts: inputs,
            };
            match shared.tools.call(&tool.tool, &input) {
                Ok(artifacts) => NodeResult::Completed(artifacts),
                Err(error) => NodeResult::Failed(format!("tool `{}`: {error}", tool.tool)),
            }
        }
        NodeKind::Agent(agent) => {
            let prompt = match agent.prompt.render(&shared.input, lookup) {
                Ok(prompt) => prompt,
                Err(error) => {
                    shared.emit(RunEvent::NodeStarted {
                        node: node.id.clone(),
                        attempt: 1,
                    });
                    return NodeResult::Failed(error.to_string());
                }
            };
            run_agent(shared, &node.id, agent, &prompt, &cancel).await
        }
    }
}

/// The result of one attempt.
enum Attempt {
    Done(NodeResult),
    Retry(String),
}

async fn run_agent(
    shared: &Shared,
    node: &str,
    agent: &AgentNode,
    prompt: &str,
    cancel: &CancellationToken,
) -> NodeResult {
    if !agent.accepted_output_modes.is_empty()
        && let Some(produced) = shared.client.output_modes(&agent.agent)
        && !produced
            .iter()
            .any(|m| agent.accepted_output_modes.contains(m))
    {
        shared.emit(RunEvent::NodeStarted {
            node: node.to_owned(),
            attempt: 1,
        });
        return NodeResult::Failed(format!(
            "agent `{}` produces {produced:?}, none of the accepted output modes {:?}",
            agent.agent, agent.accepted_output_modes
        ));
    }
    let mut attempt = 1;
    loop {
        shared.emit(RunEvent::NodeStarted {
            node: node.to_owned(),
            attempt,
        });
        match attempt_agent(shared, node, agent, prompt, attempt, cancel).await {
            Attempt::Done(result) => return result,
            Attempt::Retry(error) if attempt <= agent.retries => {
                let backoff = agent
                    .backoff
                    .saturating_mul(2u32.saturating_pow(attempt - 1));
                shared.emit(RunEvent::NodeRetrying {
                    node: node.to_owned(),
                    attempt,
                    error,
                    backoff_ms: u64::try_from(backoff.as_millis()).unwrap_or(u64::MAX),
                });
                tokio::select! {
                    () = tokio::time::sleep(backoff) => {}
                    () = cancel.cancelled() => return NodeResult::Canceled,
                }
                attempt += 1;
            }
            Attempt::Retry(error) => return NodeResult::Failed(error),
        }
    }
}

async fn attempt_agent(
    shared: &Shared,
    node: &str,
    agent: &AgentNode,
    prompt: &str,
    attempt: u32,
    cancel: &CancellationToken,
) -> Attempt {
    let context_id = ContextId::mint();
    let mut message =
        Message::new(Role::User, vec![Part::text(prompt)]).with_context_id(context_id.clone());
    let mut round = 0u32;
    loop {
        let key = format!("workflow:{}:{node}:{attempt}:{round}", shared.run_id);
        // The message id is the key too: unique per message, and the same if the
        // client repeats the message (an HTTP client may key its retries by it).
        message.message_id = MessageId::new(key.clone());
        let send = NodeSend {
            agent: agent.agent.clone(),
            message,
            idempotency_key: key,
            accepted_output_modes: agent.accepted_output_modes.clone(),
            from: shared.from.clone(),
            hops: shared.hops,
        };
        let sent = shared.client.send(send);
        let settled = tokio::select! {
            settled = with_timeout(agent.timeout, sent) => settled,
            () = cancel.cancelled() => {
                cancel_quietly(shared, &agent.agent, &context_id).await;
                return Attempt::Done(NodeResult::Canceled);
            }
        };
        let task: Task = match settled {
            None => {
                cancel_quietly(shared, &agent.agent, &context_id).await;
                let limit = agent.timeout.unwrap_or_default();
                return Attempt::Retry(format!("timed out after {} ms", limit.as_millis()));
            }
            Some(Err(error)) => return Attempt::Retry(error.to_string()),
            Some(Ok(task)) => task,
        };
        match task.status.state {
            TaskState::Completed => {
                return Attempt::Done(NodeResult::Completed(artifacts_of(node, task)));
            }
            TaskState::InputRequired => {
                let question = task
                    .status
                    .message
                    .as_deref()
                    .map(Message::text)
                    .unwrap_or_default();
                let Some(answers) = &shared.answers else {
                    cancel_quietly(shared, &agent.agent, &context_id).await;
                    return Attempt::Done(NodeResult::Failed(format!(
                        "asks for input (\"{question}\"), and this run takes no answers"
                    )));
                };
                // One question at a time: the lock is held while the caller answers.
                let mut answers = answers.lock().await;
                shared.emit(RunEvent::NodeInputRequired {
                    node: node.to_owned(),
                    question,
                });
                let answer = tokio::select! {
                    answer = answers.recv() => answer,
                    () = cancel.cancelled() => None,
                };
                let Some(answer) = answer else {
                    cancel_quietly(shared, &agent.agent, &context_id).await;
                    return Attempt::Done(NodeResult::Canceled);
                };
                drop(answers);
                message = Message::new(Role::User, vec![Part::text(answer)])
                    .with_context_id(context_id.clone())
                    .with_task_id(task.id.clone());
                round += 1;
            }
            TaskState::AuthRequired => {
                return Attempt::Done(NodeResult::Failed(String::from(
                    "the agent asks for authentication, which a workflow cannot give",
                )));
            }
            state => {
                let reason = task
                    .status
                    .message
                    .as_deref()
                    .map(Message::text)
                    .filter(|text| !text.is_empty())
                    .unwrap_or_else(|| String::from("no reason given"));
                return Attempt::Retry(format!("task {} {}: {reason}", task.id, state_name(state)));
            }
        }
    }
}

fn state_name(state: TaskState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{state:?}"))
}

async fn with_timeout<F: Future>(limit: Option<Duration>, future: F) -> Option<F::Output> {
    match limit {
        Some(limit) => tokio::time::timeout(limit, future).await.ok(),
        None => Some(future.await),
    }
}

async fn cancel_quietly(shared: &Shared, agent: &str, context_id: &ContextId) {
    if let Err(error) = shared.client.cancel(agent, context_id).await {
        tracing::warn!(%error, agent, %context_id, "could not cancel a workflow node's task");
    }
}

/// A settled task's artifacts, or its final message's parts as one artifact.
fn artifacts_of(node: &str, task: Task) -> Vec<Artifact> {
    if !task.artifacts.as_ref().is_none_or(Vec::is_empty) {
        return task
            .artifacts
            .unwrap_or_default()
            .into_iter()
            .map(Arc::unwrap_or_clone)
            .collect();
    }
    match task.status.message {
        Some(message) if !message.parts.is_empty() => {
            let parts = Arc::unwrap_or_clone(message).parts;
            let mut artifact = Artifact::new(format!("{node}-reply"), parts);
            artifact.name = Some(node.to_owned());
            vec![artifact]
        }
        _ => Vec::new(),
    }
}
