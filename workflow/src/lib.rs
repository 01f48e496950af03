//! Workflows for agentyard: a graph of nodes, each an A2A agent, run by a DAG runner
//! that is an A2A client — it sends each node its task, follows the task, and passes
//! the node's artifacts to the nodes that depend on it (the seed
//! `dag-runner-a2a-integration.md`).
//!
//! # Layout
//!
//! - [`definition`]: the workflow file (TOML or JSON), the Rust builder, and the
//!   validated [`Workflow`] both produce.
//! - [`template`]: prompt templates (`{{node}}`, `{{node.data}}`,
//!   `{{node.parts[N]}}`, `{{input}}`).
//! - [`runner`]: the [`Runner`]: parallel topological execution, timeouts,
//!   retries, failure and cancel propagation, input requests; [`RunEvent`]s.
//! - [`client`]: how the runner reaches nodes: [`InProcess`](client::InProcess)
//!   through the supervisor (entry point `workflow`), [`OverHttp`](client::OverHttp)
//!   over the HTTP edge (pure A2A).
//! - [`tools`]: tool nodes' registered Rust functions.
//! - [`host`]: [`Workflows`], each workflow registered as an agent type
//!   ([`WorkflowAgent`]).
//! - [`store`]: where definitions are kept ([`DefinitionStore`]).
//! - [`http`]: the `/api/workflows` routes, node cards and the aggregate card.
//!
//! This crate builds on `agentyard-actors` (the supervisor every in-process send goes
//! through, never a mailbox) and `agentyard-transport` (the A2A model and client);
//! the `agentyard` crate wires it into `serve` and `agentyard run`.

pub mod client;
pub mod definition;
pub mod host;
pub mod http;
pub mod runner;
pub mod store;
pub mod template;
pub mod tools;

pub use definition::{DefinitionError, Workflow, WorkflowSpec};
pub use host::{WorkflowAgent, Workflows};
pub use runner::{NodeState, RunControl, RunEvent, RunOutcome, RunReport, Runner};
pub use store::{DefinitionStore, InMemoryDefinitions, StoredDefinitions};
pub use tools::{ToolInput, Tools};
