//! Tool nodes: registered Rust functions from artifacts to artifacts.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use agentyard_transport::a2a::{Artifact, Part};

/// What a tool is called with.
#[derive(Debug, Clone)]
pub struct ToolInput {
    /// The node's prompt, rendered (empty without one).
    pub text: String,
    /// The run's input.
    pub input: String,
    /// The artifacts of every node the tool node depends on, by node id.
    pub artifacts: BTreeMap<String, Vec<Artifact>>,
}

impl ToolInput {
    /// Every text part of the dependencies' artifacts, in node id order.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.artifacts
            .values()
            .flatten()
            .flat_map(|a| a.parts.iter())
            .filter_map(Part::as_text)
    }
}

/// What a tool returns: its artifacts, or why it failed (the node's error).
pub type ToolResult = Result<Vec<Artifact>, String>;

type ToolFn = Arc<dyn Fn(&ToolInput) -> ToolResult + Send + Sync>;

/// The registered tools, by name. Cheap to clone.
///
/// Tools run on the runner's task: they should be quick (a transform, a parse); slow
/// or blocking work belongs in an agent, which runs in its own session.
#[derive(Clone, Default)]
pub struct Tools {
    tools: Arc<HashMap<String, ToolFn>>,
}

impl fmt::Debug for Tools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.tools.keys()).finish()
    }
}

impl Tools {
    /// No tools.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in tools, each over its node's rendered prompt, or without one the
    /// texts of what it depends on joined by newlines: `upper` (upper-cased),
    /// `concat` (as is), `word_count` (a data part `{"words": N}`).
    #[must_use]
    pub fn builtin() -> Self {
        Self::new()
            .register("upper", |input| {
                Ok(vec![text_artifact("upper", joined(input).to_uppercase())])
            })
            .register("concat", |input| {
                Ok(vec![text_artifact("concat", joined(input))])
            })
            .register("word_count", |input| {
                let words = joined(input).split_whitespace().count();
                let mut data = serde_json::Map::new();
                data.insert("words".into(), serde_json::Value::from(words));
                Ok(vec![Artifact::new("word_count", vec![Part::data(data)])])
            })
    }

    /// Adds (or replaces) a tool.
    #[must_use]
    pub fn register(
        mut self,
        name: impl Into<String>,
        tool: impl Fn(&ToolInput) -> ToolResult + Send + Sync + 'static,
    ) -> Self {
        Arc::make_mut(&mut self.tools).insert(name.into(), Arc::new(tool));
        self
    }

    /// Whether a tool of this name is registered.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// The registered names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// Calls a tool; a panic in it is the node's error, not the runner's.
    pub(crate) fn call(&self, name: &str, input: &ToolInput) -> ToolResult {
        let tool = self
            .tools
            .get(name)
            .ok_or_else(|| format!("no tool `{name}` is registered"))?;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool(input)))
            .unwrap_or_else(|_| Err(format!("tool `{name}` panicked")))
    }
}

/// The rendered prompt when the node has one, else the dependencies' texts, one per
/// line (a prompt that names a dependency would otherwise count it twice).
fn joined(input: &ToolInput) -> String {
    if input.text.is_empty() {
        input.texts().collect::<Vec<_>>().join("\n")
    } else {
        input.text.clone()
    }
}

fn text_artifact(id: &str, text: String) -> Artifact {
    Artifact::new(id, vec![Part::text(text)])
}
