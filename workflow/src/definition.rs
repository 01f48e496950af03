//! Workflow definitions: the file format (TOML, JSON accepted too), the Rust builder,
//! and the one validated value both produce, [`Workflow`].
//!
//! A workflow file:
//!
//! ```toml
//! name = "review"
//! description = "Drafts and checks a text"
//!
//! [[nodes]]
//! id = "topic"
//! kind = "input"
//!
//! [[nodes]]
//! id = "draft"
//! kind = "agent"
//! agent = "echo"
//! prompt = "Draft about {{topic}}"
//! timeout_ms = 30000
//! retries = 1
//!
//! [[nodes]]
//! id = "out"
//! kind = "output"
//! from = ["draft"]
//! ```
//!
//! Node kinds: `input` (the run's input as a text artifact), `agent` (`agent`: a
//! registered agent type, or a remote agent's card URL (`http(s)://...`), which
//! must be registered as [`remote_agent_name`]; `prompt`: a [template](crate::template); optional
//! `accepted_output_modes`, `timeout_ms`, `retries` (default 0), `backoff_ms` (default
//! 100, doubled on each retry)), `tool` (`tool`: a registered Rust function; optional
//! `prompt` rendered for it), `output` (`from`: the nodes whose artifacts are the
//! run's result). Every node may list `depends_on`; edges come from it, from the
//! template's references and from `from`.
//!
//! Loading refuses, with a message naming the node: duplicate ids, unknown
//! references, unknown agents or tools, bad templates, fields that do not belong to
//! the node's kind, cycles, and anything but exactly one `output` node.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::template::{Template, is_valid_id};

#[cfg(test)]
mod tests;

/// The backoff before the first retry when a node does not say.
pub const DEFAULT_BACKOFF: Duration = Duration::from_millis(100);

/// A node's kind, as a file names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKindName {
    /// `input`.
    Input,
    /// `agent`.
    Agent,
    /// `tool`.
    Tool,
    /// `output`.
    Output,
}

impl fmt::Display for NodeKindName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Input => "input",
            Self::Agent => "agent",
            Self::Tool => "tool",
            Self::Output => "output",
        })
    }
}

/// A workflow as written: the file's shape, before validation. The builder makes one
/// too, so both go through the same [`WorkflowSpec::validate`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkflowSpec {
    /// The workflow's name: the agent type it registers as.
    pub name: String,
    /// What it does (its card's description).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its version (default `0.1.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Nodes running at once in one run (default: the runner's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    /// The nodes.
    #[serde(default)]
    pub nodes: Vec<NodeSpec>,
}

/// A node as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Unique within the workflow: letters, digits, `_`, `-`.
    pub id: String,
    /// What the node is.
    pub kind: NodeKindName,
    /// What it does (its skill's description).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `agent` nodes: the agent type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// `tool` nodes: the registered function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// `agent` and `tool` nodes: the prompt template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// `output` nodes: whose artifacts make the result, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub from: Vec<String>,
    /// Nodes that must complete first (besides those the prompt refers to).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    /// `agent` nodes: media types the node accepts back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted_output_modes: Vec<String>,
    /// `agent` nodes: how long one attempt may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// `agent` nodes: attempts after the first (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
    /// `agent` nodes: the wait before the first retry, doubled on each next one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_ms: Option<u64>,
}

impl NodeSpec {
    /// A node with only an id and a kind.
    #[must_use]
    pub fn new(id: impl Into<String>, kind: NodeKindName) -> Self {
        Self {
            id: id.into(),
            kind,
            description: None,
            agent: None,
            tool: None,
            prompt: None,
            from: Vec::new(),
            depends_on: Vec::new(),
            accepted_output_modes: Vec::new(),
            timeout_ms: None,
            retries: None,
            backoff_ms: None,
        }
    }
}

/// What a definition is checked against: the agent types and tools that exist.
pub trait Catalog {
    /// Whether an agent type of this name is registered.
    fn has_agent(&self, name: &str) -> bool;
    /// Whether a tool of this name is registered.
    fn has_tool(&self, name: &str) -> bool;
}

/// A [`Catalog`] from two sets of names.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Agent type names.
    pub agents: HashSet<String>,
    /// Tool names.
    pub tools: HashSet<String>,
}

impl Names {
    /// A catalog of these agents and tools.
    #[must_use]
    pub fn new<A, T>(agents: A, tools: T) -> Self
    where
        A: IntoIterator,
        A::Item: Into<String>,
        T: IntoIterator,
        T::Item: Into<String>,
    {
        Self {
            agents: agents.into_iter().map(Into::into).collect(),
            tools: tools.into_iter().map(Into::into).collect(),
        }
    }
}

impl Catalog for Names {
    fn has_agent(&self, name: &str) -> bool {
        self.agents.contains(name)
    }
    fn has_tool(&self, name: &str) -> bool {
        self.tools.contains(name)
    }
}

/// Why a definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// The text is not a workflow file (TOML or JSON syntax, a missing or unknown
    /// field); the message says where.
    #[error("workflow file: {0}")]
    Syntax(String),
    /// The workflow as a whole is wrong.
    #[error("workflow `{workflow}`: {problem}")]
    Workflow {
        /// The workflow's name.
        workflow: String,
        /// What was wrong.
        problem: String,
    },
    /// One node is wrong.
    #[error("workflow `{workflow}`, node `{node}`: {problem}")]
    Node {
        /// The workflow's name.
        workflow: String,
        /// The node.
        node: String,
        /// What was wrong.
        problem: String,
    },
}

impl DefinitionError {
    /// The node the error is about, if one.
    #[must_use]
    pub fn node(&self) -> Option<&str> {
        match self {
            Self::Node { node, .. } => Some(node),
            Self::Syntax(_) | Self::Workflow { .. } => None,
        }
    }
}

/// Whether `agent` names a remote agent by its card URL rather than a local agent
/// type.
#[must_use]
pub fn is_card_url(agent: &str) -> bool {
    agent.starts_with("http://") || agent.starts_with("https://")
}

/// The agent type a remote agent given by its card URL is registered as (by
/// `agentyard serve` and `agentyard run`, which register one per card URL their
/// workflows name): `remote:` and the URL.
#[must_use]
pub fn remote_agent_name(card_url: &str) -> String {
    format!("remote:{card_url}")
}

/// An `agent` node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentNode {
    /// The agent type sent to (for a remote agent, [`remote_agent_name`] of its
    /// card URL).
    pub agent: String,
    /// The card URL the node named, for a remote agent.
    pub card_url: Option<String>,
    /// The prompt.
    pub prompt: Template,
    /// Media types accepted back (empty: whatever the agent gives).
    pub accepted_output_modes: Vec<String>,
    /// How long one attempt may take (`None`: no limit of its own).
    pub timeout: Option<Duration>,
    /// Attempts after the first.
    pub retries: u32,
    /// The wait before the first retry; doubled on each next one.
    pub backoff: Duration,
}

/// A `tool` node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolNode {
    /// The registered tool.
    pub tool: String,
    /// The prompt rendered for it (`None`: the tool gets an empty text).
    pub prompt: Option<Template>,
}

/// What a node does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeKind {
    /// The run's input as a text artifact.
    Input,
    /// A send to an agent.
    Agent(AgentNode),
    /// A registered Rust function from artifacts to artifacts.
    Tool(ToolNode),
    /// The aggregate of these nodes' artifacts, in order.
    Output(Vec<String>),
}

/// A validated node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Its id.
    pub id: String,
    /// What it does.
    pub kind: NodeKind,
    /// Its description.
    pub description: Option<String>,
    /// Every node it waits for: `depends_on`, template references and `from`,
    /// sorted.
    pub dependencies: Vec<String>,
}

/// A validated workflow: unique ids, every reference known, acyclic, one output.
#[derive(Debug, Clone, PartialEq)]
pub struct Workflow {
    spec: WorkflowSpec,
    nodes: Vec<Node>,
    index: HashMap<String, usize>,
    output: usize,
    order: Vec<usize>,
}

impl WorkflowSpec {
    /// Reads a workflow file: JSON when the text starts with `{`, TOML otherwise.
    ///
    /// # Errors
    /// [`DefinitionError::Syntax`] naming the line or field.
    pub fn parse(text: &str) -> Result<Self, DefinitionError> {
        if text.trim_start().starts_with('{') {
            Self::from_json(text)
        } else {
            Self::from_toml(text)
        }
    }

    /// Reads TOML.
    ///
    /// # Errors
    /// [`DefinitionError::Syntax`].
    pub fn from_toml(text: &str) -> Result<Self, DefinitionError> {
        toml::from_str(text).map_err(|e| DefinitionError::Syntax(e.to_string()))
    }

    /// Reads JSON.
    ///
    /// # Errors
    /// [`DefinitionError::Syntax`].
    pub fn from_json(text: &str) -> Result<Self, DefinitionError> {
        serde_json::from_str(text).map_err(|e| DefinitionError::Syntax(e.to_string()))
    }

    /// Checks the spec against `catalog` and makes the workflow.
    ///
    /// # Errors
    /// [`DefinitionError`] naming the node.
    pub fn validate(self, catalog: &dyn Catalog) -> Result<Workflow, DefinitionError> {
        let workflow = self.name.clone();
        let whole = |problem: String| DefinitionError::Workflow {
            workflow: workflow.clone(),
            problem,
        };
        let node_error = |node: &str, problem: String| DefinitionError::Node {
            workflow: workflow.clone(),
            node: node.to_owned(),
            problem,
        };
        if !is_valid_id(&self.name) {
            return Err(whole(String::from(
                "the name must be letters, digits, `_` and `-`",
            )));
        }
        if self.concurrency == Some(0) {
            return Err(whole(String::from("`concurrency` must be at least 1")));
        }
        let mut index = HashMap::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if !is_valid_id(&node.id) {
                return Err(node_error(
                    &node.id,
                    String::from("an id must be letters, digits, `_` and `-`"),
                ));
            }
            if index.insert(node.id.clone(), i).is_some() {
                return Err(node_error(&node.id, String::from("duplicate id")));
            }
        }
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for spec in &self.nodes {
            let node = validate_node(spec, catalog).map_err(|p| node_error(&spec.id, p))?;
            for dependency in &node.dependencies {
                if !index.contains_key(dependency) {
                    return Err(node_error(
                        &node.id,
                        format!("refers to `{dependency}`, which is no node of this workflow"),
                    ));
                }
                if dependency == &node.id {
                    return Err(node_error(&node.id, String::from("depends on itself")));
                }
            }
            nodes.push(node);
        }
        let outputs: Vec<usize> = nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| matches!(n.kind, NodeKind::Output(_)))
            .map(|(i, _)| i)
            .collect();
        let output = match outputs.as_slice() {
            [one] => *one,
            [] => return Err(whole(String::from("it has no `output` node"))),
            [_, second, ..] => {
                return Err(node_error(
                    &nodes[*second].id,
                    String::from("a second `output` node; a workflow has exactly one"),
                ));
            }
        };
        let order = topological_order(&nodes, &index).map_err(|cycle| {
            node_error(
                &cycle[0],
                format!("is on a cycle: {} -> {}", cycle.join(" -> "), cycle[0]),
            )
        })?;
        Ok(Workflow {
            spec: self,
            nodes,
            index,
            output,
            order,
        })
    }
}

fn validate_node(spec: &NodeSpec, catalog: &dyn Catalog) -> Result<Node, String> {
    let kind = spec.kind;
    let not_for = |field: &str| format!("`{field}` does not belong to a `{kind}` node");
    let template = |source: &str| Template::parse(source).map_err(|e| e.to_string());
    let agent_only = [
        (
            "accepted_output_modes",
            !spec.accepted_output_modes.is_empty(),
        ),
        ("timeout_ms", spec.timeout_ms.is_some()),
        ("retries", spec.retries.is_some()),
        ("backoff_ms", spec.backoff_ms.is_some()),
    ];
    if kind != NodeKindName::Agent
        && let Some((field, _)) = agent_only.iter().find(|(_, set)| *set)
    {
        return Err(not_for(field));
    }
    if kind != NodeKindName::Agent && spec.agent.is_some() {
        return Err(not_for("agent"));
    }
    if kind != NodeKindName::Tool && spec.tool.is_some() {
        return Err(not_for("tool"));
    }
    if kind != NodeKindName::Output && !spec.from.is_empty() {
        return Err(not_for("from"));
    }
    if matches!(kind, NodeKindName::Input | NodeKindName::Output) && spec.prompt.is_some() {
        return Err(not_for("prompt"));
    }
    let mut dependencies: BTreeSet<String> = spec.depends_on.iter().cloned().collect();
    let node_kind = match kind {
        NodeKindName::Input => NodeKind::Input,
        NodeKindName::Output => {
            if spec.from.is_empty() {
                return Err(String::from(
                    "an `output` node needs `from`: the nodes whose artifacts it gathers",
                ));
            }
            dependencies.extend(spec.from.iter().cloned());
            NodeKind::Output(spec.from.clone())
        }
        NodeKindName::Agent => {
            let written = spec.agent.clone().ok_or_else(|| {
                String::from("an `agent` node needs `agent`: the agent type to send to")
            })?;
            let card_url = is_card_url(&written).then(|| written.clone());
            let agent = card_url
                .as_deref()
                .map_or_else(|| written.clone(), remote_agent_name);
            if !catalog.has_agent(&agent) {
                return Err(match &card_url {
                    Some(url) => format!(
                        "unknown remote agent `{url}`: no remote agent type is registered for that card URL"
                    ),
                    None => {
                        format!("unknown agent `{agent}`: no agent type of that name is registered")
                    }
                });
            }
            let prompt = template(
                spec.prompt
                    .as_deref()
                    .ok_or_else(|| String::from("an `agent` node needs `prompt`"))?,
            )?;
            if spec.timeout_ms == Some(0) {
                return Err(String::from("`timeout_ms` must be more than 0"));
            }
            dependencies.extend(
                prompt
                    .references()
                    .filter_map(|r| r.node())
                    .map(str::to_owned),
            );
            NodeKind::Agent(AgentNode {
                agent,
                card_url,
                prompt,
                accepted_output_modes: spec.accepted_output_modes.clone(),
                timeout: spec.timeout_ms.map(Duration::from_millis),
                retries: spec.retries.unwrap_or(0),
                backoff: spec
                    .backoff_ms
                    .map_or(DEFAULT_BACKOFF, Duration::from_millis),
            })
        }
        NodeKindName::Tool => {
            let tool = spec.tool.clone().ok_or_else(|| {
                String::from("a `tool` node needs `tool`: the registered function")
            })?;
            if !catalog.has_tool(&tool) {
                return Err(format!(
                    "unknown tool `{tool}`: no tool of that name is registered"
                ));
            }
            let prompt = spec.prompt.as_deref().map(template).transpose()?;
            if let Some(prompt) = &prompt {
                dependencies.extend(
                    prompt
                        .references()
                        .filter_map(|r| r.node())
                        .map(str::to_owned),
                );
            }
            NodeKind::Tool(ToolNode { tool, prompt })
        }
    };
    Ok(Node {
        id: spec.id.clone(),
        kind: node_kind,
        description: spec.description.clone(),
        dependencies: dependencies.into_iter().collect(),
    })
}

/// Kahn's algorithm; on a cycle, the nodes of one cycle in order.
fn topological_order(
    nodes: &[Node],
    index: &HashMap<String, usize>,
) -> Result<Vec<usize>, Vec<String>> {
    let mut indegree: Vec<usize> = nodes.iter().map(|n| n.dependencies.len()).collect();
    let mut dependents = vec![Vec::new(); nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        for dependency in &node.dependencies {
            dependents[index[dependency]].push(i);
        }
    }
    let mut ready: Vec<usize> = (0..nodes.len()).filter(|&i| indegree[i] == 0).collect();
    ready.reverse();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(i) = ready.pop() {
        order.push(i);
        for &d in &dependents[i] {
            indegree[d] -= 1;
            if indegree[d] == 0 {
                ready.push(d);
            }
        }
    }
    if order.len() == nodes.len() {
        return Ok(order);
    }
    // Walk dependencies among the unfinished nodes until one repeats: that is a cycle.
    let start = (0..nodes.len()).find(|&i| indegree[i] > 0).unwrap_or(0);
    let mut path = vec![start];
    let mut current = start;
    loop {
        let next = nodes[current]
            .dependencies
            .iter()
            .map(|d| index[d])
            .find(|&d| indegree[d] > 0)
            .unwrap_or(start);
        if let Some(at) = path.iter().position(|&p| p == next) {
            let mut cycle: Vec<String> = path[at..].iter().map(|&i| nodes[i].id.clone()).collect();
            // Written in the direction of the edges: a node, then what waits for it.
            cycle.reverse();
            return Err(cycle);
        }
        path.push(next);
        current = next;
    }
}

impl Workflow {
    /// Reads and validates a workflow file (TOML or JSON).
    ///
    /// # Errors
    /// [`DefinitionError`] naming the node.
    pub fn load(text: &str, catalog: &dyn Catalog) -> Result<Self, DefinitionError> {
        WorkflowSpec::parse(text)?.validate(catalog)
    }

    /// Starts a builder.
    pub fn builder(name: impl Into<String>) -> WorkflowBuilder {
        WorkflowBuilder {
            spec: WorkflowSpec {
                name: name.into(),
                description: String::new(),
                version: None,
                concurrency: None,
                nodes: Vec::new(),
            },
        }
    }

    /// The name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The description.
    #[must_use]
    pub fn description(&self) -> &str {
        &self.spec.description
    }

    /// The version.
    #[must_use]
    pub fn version(&self) -> &str {
        self.spec.version.as_deref().unwrap_or("0.1.0")
    }

    /// The per-run concurrency limit the definition asks for.
    #[must_use]
    pub fn concurrency(&self) -> Option<usize> {
        self.spec.concurrency
    }

    /// The spec it was made from (what `GET /api/workflows/{name}` returns).
    #[must_use]
    pub fn spec(&self) -> &WorkflowSpec {
        &self.spec
    }

    /// The nodes, in definition order.
    #[must_use]
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// A node by id.
    #[must_use]
    pub fn node(&self, id: &str) -> Option<&Node> {
        self.index.get(id).map(|&i| &self.nodes[i])
    }

    /// The position of a node in [`Workflow::nodes`].
    #[must_use]
    pub fn position(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The output node.
    #[must_use]
    pub fn output(&self) -> &Node {
        &self.nodes[self.output]
    }

    /// The nodes in an order where each comes after what it depends on.
    pub fn topological(&self) -> impl Iterator<Item = &Node> {
        self.order.iter().map(|&i| &self.nodes[i])
    }
}

/// Builds a [`WorkflowSpec`] in Rust; [`WorkflowBuilder::build`] validates it as a
/// file is.
///
/// ```
/// use agentyard_workflow::definition::{Names, Workflow};
///
/// let catalog = Names::new(["echo"], Vec::<String>::new());
/// let built = Workflow::builder("hello")
///     .input("in")
///     .agent("greet", "echo", "Hello {{in}}")
///     .output("out", ["greet"])
///     .build(&catalog)
///     .unwrap();
/// let loaded = Workflow::load(
///     r#"
///     name = "hello"
///     [[nodes]]
///     id = "in"
///     kind = "input"
///     [[nodes]]
///     id = "greet"
///     kind = "agent"
///     agent = "echo"
///     prompt = "Hello {{in}}"
///     [[nodes]]
///     id = "out"
///     kind = "output"
///     from = ["greet"]
///     "#,
///     &catalog,
/// )
/// .unwrap();
/// assert_eq!(built, loaded);
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct WorkflowBuilder {
    spec: WorkflowSpec,
}

impl WorkflowBuilder {
    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.spec.description = description.into();
        self
    }

    /// Sets the per-run concurrency limit.
    pub fn concurrency(mut self, limit: usize) -> Self {
        self.spec.concurrency = Some(limit);
        self
    }

    /// Adds an `input` node.
    pub fn input(self, id: impl Into<String>) -> Self {
        self.node(NodeSpec::new(id, NodeKindName::Input))
    }

    /// Adds an `agent` node sending `prompt` to `agent`.
    pub fn agent(
        self,
        id: impl Into<String>,
        agent: impl Into<String>,
        prompt: impl Into<String>,
    ) -> Self {
        let mut node = NodeSpec::new(id, NodeKindName::Agent);
        node.agent = Some(agent.into());
        node.prompt = Some(prompt.into());
        self.node(node)
    }

    /// Adds a `tool` node calling `tool` with `prompt` rendered.
    pub fn tool(
        self,
        id: impl Into<String>,
        tool: impl Into<String>,
        prompt: Option<&str>,
    ) -> Self {
        let mut node = NodeSpec::new(id, NodeKindName::Tool);
        node.tool = Some(tool.into());
        node.prompt = prompt.map(str::to_owned);
        self.node(node)
    }

    /// Adds the `output` node gathering `from`.
    pub fn output<I, S>(self, id: impl Into<String>, from: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut node = NodeSpec::new(id, NodeKindName::Output);
        node.from = from.into_iter().map(Into::into).collect();
        self.node(node)
    }

    /// Adds any node, e.g. one with a timeout and retries.
    pub fn node(mut self, node: NodeSpec) -> Self {
        self.spec.nodes.push(node);
        self
    }

    /// Changes the last node added (to set its timeout, retries, dependencies ...).
    pub fn with_last(mut self, change: impl FnOnce(&mut NodeSpec)) -> Self {
        if let Some(last) = self.spec.nodes.last_mut() {
            change(last);
        }
        self
    }

    /// The spec as built, unvalidated.
    #[must_use]
    pub fn spec(self) -> WorkflowSpec {
        self.spec
    }

    /// Validates against `catalog`.
    ///
    /// # Errors
    /// As [`WorkflowSpec::validate`].
    pub fn build(self, catalog: &dyn Catalog) -> Result<Workflow, DefinitionError> {
        self.spec.validate(catalog)
    }
}
