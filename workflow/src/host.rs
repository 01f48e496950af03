//! [`Workflows`]: the workflows of a runtime, each registered as an agent type
//! ([`WorkflowAgent`]), so a run is an A2A task and a workflow can be a node of
//! another; and the definitions behind them, kept in a [`DefinitionStore`].

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agentyard_actors::{Agent, AgentDescriptor, AgentError, Supervisor, TaskContext};
use agentyard_transport::TaskId;
use agentyard_transport::a2a::{AgentSkill, Artifact};
use dashmap::DashMap;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::client::{InProcess, NodeClient};
use crate::definition::{Catalog, DefinitionError, NodeKind, Workflow, WorkflowSpec};
use crate::runner::{RunControl, RunEvent, RunOutcome, RunReport, Runner};
use crate::store::{DefinitionStore, DefinitionStoreError, InMemoryDefinitions};
use crate::tools::Tools;

/// How long a suspended run's task is checked for having been canceled while it
/// waits for an answer (nothing else would wake the run).
const SUSPENDED_CHECK: Duration = Duration::from_secs(1);

/// Why a definition could not be stored.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PutError {
    /// The definition is invalid; the message names the node.
    #[error(transparent)]
    Invalid(#[from] DefinitionError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] DefinitionStoreError),
}

/// The workflows of one runtime. Cheap to clone.
///
/// Made before the runtime (each workflow's [`WorkflowAgent`] is registered with the
/// builder), then [bound](Workflows::bind) to the runtime's supervisor, through which
/// every node's send goes.
#[derive(Clone)]
pub struct Workflows {
    inner: Arc<Inner>,
}

struct Inner {
    tools: Tools,
    concurrency: usize,
    definitions: Arc<dyn DefinitionStore>,
    /// The validated workflow of every stored definition.
    loaded: DashMap<String, Arc<Workflow>>,
    supervisor: OnceLock<Supervisor>,
    client: OnceLock<Arc<dyn NodeClient>>,
    /// Runs waiting for an answer, by the workflow task that asked.
    suspended: DashMap<TaskId, Suspended>,
}

impl fmt::Debug for Workflows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workflows")
            .field("tools", &self.inner.tools)
            .field("loaded", &self.inner.loaded.len())
            .field("suspended", &self.inner.suspended.len())
            .finish_non_exhaustive()
    }
}

/// A run stopped at an input request, kept between the workflow task's turns.
struct Suspended {
    answers: mpsc::Sender<String>,
    events: mpsc::UnboundedReceiver<RunEvent>,
    cancel: CancellationToken,
    run: JoinHandle<RunReport>,
}

impl Workflows {
    /// No workflows yet; definitions in memory.
    #[must_use]
    pub fn new(tools: Tools) -> Self {
        Self::with_store(tools, Arc::new(InMemoryDefinitions::new()))
    }

    /// No workflows yet; definitions in `store`.
    #[must_use]
    pub fn with_store(tools: Tools, store: Arc<dyn DefinitionStore>) -> Self {
        Self::build(tools, store, crate::runner::DEFAULT_CONCURRENCY)
    }

    fn build(tools: Tools, definitions: Arc<dyn DefinitionStore>, concurrency: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                tools,
                concurrency,
                definitions,
                loaded: DashMap::new(),
                supervisor: OnceLock::new(),
                client: OnceLock::new(),
                suspended: DashMap::new(),
            }),
        }
    }

    /// Sets the per-run concurrency limit for workflows that do not set their own
    /// (only before the first clone is shared).
    #[must_use]
    pub fn concurrency(self, limit: usize) -> Self {
        Self::build(
            self.inner.tools.clone(),
            Arc::clone(&self.inner.definitions),
            limit.max(1),
        )
    }

    /// The tools tool nodes call.
    #[must_use]
    pub fn tools(&self) -> &Tools {
        &self.inner.tools
    }

    /// Binds to the runtime's supervisor: nodes are sent through it (unless another
    /// client was set with [`Workflows::use_client`]), and definitions put later are
    /// checked against its agents.
    pub fn bind(&self, supervisor: Supervisor) {
        let client: Arc<dyn NodeClient> = Arc::new(InProcess::new(supervisor.clone()));
        let _ = self.inner.client.set(client);
        let _ = self.inner.supervisor.set(supervisor);
    }

    /// Reaches nodes through `client` instead of the supervisor (e.g.
    /// [`OverHttp`](crate::client::OverHttp), the pure-A2A mode). Call before
    /// [`Workflows::bind`]; returns false if a client was already set.
    pub fn use_client(&self, client: Arc<dyn NodeClient>) -> bool {
        self.inner.client.set(client).is_ok()
    }

    /// The runner, once bound.
    #[must_use]
    pub fn runner(&self) -> Option<Runner> {
        self.inner.client.get().map(|client| {
            let runner = Runner::new(Arc::clone(client), self.inner.tools.clone())
                .concurrency(self.inner.concurrency);
            // Node events go on the runtime's bus (`/events`), whichever client runs.
            match self.inner.supervisor.get() {
                Some(supervisor) => runner.publishing_to(supervisor.clone()),
                None => runner,
            }
        })
    }

    /// The supervisor, once bound.
    #[must_use]
    pub fn supervisor(&self) -> Option<&Supervisor> {
        self.inner.supervisor.get()
    }

    /// Adds a validated workflow (before the runtime starts: register its agent with
    /// [`Workflows::descriptor`] and [`Workflows::agent`]).
    ///
    /// # Errors
    /// Only store failures.
    pub async fn add(&self, workflow: Workflow) -> Result<Arc<Workflow>, DefinitionStoreError> {
        self.inner.definitions.put(workflow.spec().clone()).await?;
        let workflow = Arc::new(workflow);
        self.inner
            .loaded
            .insert(workflow.name().to_owned(), Arc::clone(&workflow));
        Ok(workflow)
    }

    /// Validates `spec` against the bound runtime's agents and the tools, and stores
    /// it; returns it and whether it is new. A name an agent (not a workflow) is
    /// registered under is refused. A new name can be run through the API
    /// at once; it becomes an agent type at the next start.
    ///
    /// # Errors
    /// [`PutError::Invalid`] naming the node; [`PutError::Store`].
    pub async fn put(&self, spec: WorkflowSpec) -> Result<(Arc<Workflow>, bool), PutError> {
        let taken = !self.inner.loaded.contains_key(&spec.name)
            && self
                .inner
                .supervisor
                .get()
                .is_some_and(|s| s.agent(&spec.name).is_some());
        if taken {
            return Err(PutError::Invalid(DefinitionError::Workflow {
                workflow: spec.name.clone(),
                problem: String::from(
                    "an agent of that name is registered; a workflow needs a name of its own",
                ),
            }));
        }
        let workflow = spec.validate(&self.catalog())?;
        let created = self.inner.definitions.put(workflow.spec().clone()).await?;
        let workflow = Arc::new(workflow);
        self.inner
            .loaded
            .insert(workflow.name().to_owned(), Arc::clone(&workflow));
        Ok((workflow, created))
    }

    /// Removes a definition; returns whether it was there. Its agent type stays
    /// registered until the next start, and refuses to run.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn delete(&self, name: &str) -> Result<bool, DefinitionStoreError> {
        self.inner.loaded.remove(name);
        self.inner.definitions.delete(name).await
    }

    /// The current definition of `name`, validated.
    ///
    /// # Errors
    /// Store failures, or a stored definition that no longer validates.
    pub async fn get(&self, name: &str) -> Result<Option<Arc<Workflow>>, PutError> {
        if let Some(workflow) = self.inner.loaded.get(name) {
            return Ok(Some(Arc::clone(&workflow)));
        }
        let Some(spec) = self.inner.definitions.get(name).await? else {
            return Ok(None);
        };
        let workflow = Arc::new(spec.validate(&self.catalog())?);
        self.inner
            .loaded
            .insert(name.to_owned(), Arc::clone(&workflow));
        Ok(Some(workflow))
    }

    /// Every stored name, sorted.
    ///
    /// # Errors
    /// Only store failures.
    pub async fn names(&self) -> Result<Vec<String>, DefinitionStoreError> {
        self.inner.definitions.names().await
    }

    /// What definitions are checked against: the bound runtime's agent types (with
    /// the workflows loaded so far) and the tools.
    #[must_use]
    pub fn catalog(&self) -> impl Catalog + '_ {
        HostCatalog(self)
    }

    /// The agent descriptor of `workflow`: its name, description and version, a
    /// skill for the whole workflow and one per agent and tool node.
    #[must_use]
    pub fn descriptor(workflow: &Workflow) -> AgentDescriptor {
        let mut whole = AgentSkill::new(
            workflow.name(),
            workflow.name(),
            if workflow.description().is_empty() {
                format!("runs the workflow `{}`", workflow.name())
            } else {
                workflow.description().to_owned()
            },
        );
        whole.tags = vec![String::from("workflow")];
        let mut descriptor = AgentDescriptor::new(workflow.name())
            .description(workflow.description())
            .version(workflow.version())
            .skill(whole);
        for node in workflow.nodes() {
            let what = match &node.kind {
                NodeKind::Agent(agent) => format!(
                    "sends `{}` to the agent `{}`",
                    agent.prompt.source(),
                    agent.agent
                ),
                NodeKind::Tool(tool) => format!("calls the tool `{}`", tool.tool),
                NodeKind::Input | NodeKind::Output(_) => continue,
            };
            let mut skill = AgentSkill::new(
                format!("{}.{}", workflow.name(), node.id),
                node.id.clone(),
                node.description.clone().unwrap_or(what),
            );
            skill.tags = vec![String::from("workflow-node")];
            descriptor = descriptor.skill(skill);
        }
        descriptor
    }

    /// The agent that runs the workflow `name` (one per session; all share this).
    #[must_use]
    pub fn agent(&self, name: &str) -> WorkflowAgent {
        WorkflowAgent {
            name: Arc::from(name),
            workflows: self.clone(),
        }
    }
}

struct HostCatalog<'a>(&'a Workflows);

impl Catalog for HostCatalog<'_> {
    fn has_agent(&self, name: &str) -> bool {
        self.0
            .inner
            .supervisor
            .get()
            .is_some_and(|s| s.agent(name).is_some())
            || self.0.inner.loaded.contains_key(name)
    }
    fn has_tool(&self, name: &str) -> bool {
        self.0.inner.tools.contains(name)
    }
}

/// A workflow as an agent: each message runs the workflow on the message's text;
/// the task's status updates narrate the nodes (`working`, with a text note such as
/// `node.started: draft (attempt 1)` and the event as a data part, see
/// [`event_data`]), its artifacts are the output node's, and a
/// node that asks for input makes the task `input-required` until the caller answers.
#[derive(Debug, Clone)]
pub struct WorkflowAgent {
    name: Arc<str>,
    workflows: Workflows,
}

/// The note a status update carries for a run event.
#[must_use]
pub fn narration(event: &RunEvent) -> String {
    match event {
        RunEvent::RunStarted { run_id, .. } => format!("run.started: {run_id}"),
        RunEvent::NodeStarted { node, attempt } => {
            format!("node.started: {node} (attempt {attempt})")
        }
        RunEvent::NodeCompleted { node, artifacts } => {
            format!("node.completed: {node} ({} artifact(s))", artifacts.len())
        }
        RunEvent::NodeRetrying {
            node,
            attempt,
            error,
            backoff_ms,
        } => {
            format!(
                "node.retrying: {node} (attempt {attempt} failed: {error}; next in {backoff_ms} ms)"
            )
        }
        RunEvent::NodeError { node, error } => format!("node.error: {node}: {error}"),
        RunEvent::NodeCanceled { node, reason } => format!("node.canceled: {node}: {reason}"),
        RunEvent::NodeInputRequired { node, question } => {
            format!("node.input_required: {node}: {question}")
        }
        RunEvent::RunCompleted { artifacts } => {
            format!("run.completed ({} artifact(s))", artifacts.len())
        }
        RunEvent::RunFailed { node, error } => format!("run.failed: {node}: {error}"),
        RunEvent::RunCanceled => String::from("run.canceled"),
    }
}

/// The data part a status update carries for a run event: the event as the HTTP API
/// streams it (`{"event": "node.started", "node": "draft", "attempt": 1}`), with an
/// artifact count in place of the artifacts.
#[must_use]
pub fn event_data(event: &RunEvent) -> serde_json::Map<String, serde_json::Value> {
    let mut data = match serde_json::to_value(event) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    if let Some(serde_json::Value::Array(artifacts)) = data.get("artifacts") {
        let count = artifacts.len();
        data.insert(String::from("artifacts"), serde_json::Value::from(count));
    }
    data
}

/// Publishes a run event as a `working` status: the narration as text, the event as
/// data.
async fn narrate(ctx: &mut TaskContext, event: &RunEvent) {
    let parts = vec![
        agentyard_transport::a2a::Part::text(narration(event)),
        agentyard_transport::a2a::Part::data(event_data(event)),
    ];
    // A task that has ended (canceled meanwhile) takes no more updates; the run's
    // own end decides what the caller sees.
    let _ = ctx.working_parts(parts).await;
}

impl Agent for WorkflowAgent {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let inner = &self.workflows.inner;
        let run = if let Some((_, suspended)) = inner.suspended.remove(ctx.task_id()) {
            // The caller's answer to the node that asked.
            let answer = ctx.message().text();
            if suspended.answers.send(answer).await.is_err() {
                ctx.fail("the run this answer was for has ended");
                return Ok(());
            }
            suspended
        } else {
            let workflow = match self.workflows.get(&self.name).await {
                Ok(Some(workflow)) => workflow,
                Ok(None) => {
                    ctx.fail(format!("the workflow `{}` has been deleted", self.name));
                    return Ok(());
                }
                Err(error) => {
                    ctx.fail(error.to_string());
                    return Ok(());
                }
            };
            let Some(runner) = self.workflows.runner() else {
                ctx.fail("the workflows are not bound to a runtime");
                return Ok(());
            };
            let (events, events_rx) = mpsc::unbounded_channel();
            let (answers, answers_rx) = mpsc::channel(1);
            let mut control = RunControl::new();
            control.events = Some(events);
            control.answers = Some(answers_rx);
            control.from = Some(self.name.to_string());
            control.hops = ctx.hops().saturating_add(1);
            control.task_id = Some(ctx.task_id().clone());
            control.context_id = Some(ctx.context_id().clone());
            let cancel = control.cancel.clone();
            let input = ctx.message().text();
            let run = tokio::spawn(async move { runner.run(workflow, input, control).await });
            Suspended {
                answers,
                events: events_rx,
                cancel,
                run,
            }
        };
        self.follow(ctx, run).await
    }
}

impl WorkflowAgent {
    /// Narrates the run until it ends or asks for input.
    async fn follow(&self, ctx: &mut TaskContext, mut run: Suspended) -> Result<(), AgentError> {
        loop {
            tokio::select! {
                biased;
                () = ctx.cancelled() => {
                    run.cancel.cancel();
                    // The runner cancels every started node's task before it returns.
                    let _ = (&mut run.run).await;
                    return Ok(());
                }
                event = run.events.recv() => {
                    let Some(event) = event else { break };
                    if let RunEvent::NodeInputRequired { question, .. } = &event {
                        let question = question.clone();
                        narrate(ctx, &event).await;
                        ctx.require_input(question);
                        self.suspend(ctx.task_id().clone(), run);
                        return Ok(());
                    }
                    if !matches!(event, RunEvent::RunCompleted { .. }) {
                        narrate(ctx, &event).await;
                    }
                }
            }
        }
        let report = match run.run.await {
            Ok(report) => report,
            Err(error) => {
                ctx.fail(format!("the run stopped: {error}"));
                return Ok(());
            }
        };
        match report.outcome {
            RunOutcome::Completed(artifacts) => {
                let count = artifacts.len();
                for artifact in unique_ids(artifacts) {
                    ctx.artifact(artifact).await?;
                }
                ctx.reply_text(format!(
                    "workflow `{}` completed with {count} artifact(s)",
                    self.name
                ));
            }
            RunOutcome::Failed { node, error } => {
                ctx.fail(format!(
                    "workflow `{}` failed at node `{node}`: {error}",
                    self.name
                ));
            }
            RunOutcome::Canceled => ctx.fail(format!("workflow `{}` was canceled", self.name)),
        }
        Ok(())
    }

    /// Keeps the run for the task's next turn, and cancels it if the task is
    /// canceled meanwhile.
    fn suspend(&self, task_id: TaskId, run: Suspended) {
        let cancel = run.cancel.clone();
        self.workflows.inner.suspended.insert(task_id.clone(), run);
        let Some(supervisor) = self.workflows.supervisor().cloned() else {
            return;
        };
        let workflows = self.workflows.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(SUSPENDED_CHECK).await;
                if !workflows.inner.suspended.contains_key(&task_id) {
                    return;
                }
                let ended = supervisor
                    .get_task(&task_id, Some(0))
                    .await
                    .map_or(true, |task| task.status.state.is_terminal());
                if ended {
                    workflows.inner.suspended.remove(&task_id);
                    cancel.cancel();
                    return;
                }
            }
        });
    }
}

/// Artifact ids are unique within a task; two nodes may have used the same one.
fn unique_ids(artifacts: Vec<Artifact>) -> Vec<Artifact> {
    let mut seen = std::collections::HashSet::new();
    artifacts
        .into_iter()
        .map(|mut artifact| {
            let base = artifact.artifact_id.clone();
            let mut n = 1;
            while !seen.insert(artifact.artifact_id.clone()) {
                n += 1;
                artifact.artifact_id = format!("{base}-{n}");
            }
            artifact
        })
        .collect()
}
