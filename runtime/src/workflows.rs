//! Workflows in the runtime: the files `[workflows]` names are read, each workflow is
//! registered as an agent type of its name, and, once the runtime runs, bound to its
//! supervisor (or, in pure-A2A mode, to the HTTP edge) and checked against the agents
//! that really exist.

use std::path::PathBuf;
use std::sync::Arc;

use agentyard_workflow::definition::{Catalog, WorkflowSpec, is_card_url, remote_agent_name};
use agentyard_workflow::{DefinitionStore, Workflow, Workflows};

use agentyard_transport::client::ClientOptions;
use agentyard_workflow::client::{NodeClient, OverHttp};
use agentyard_workflow::http::ApiOptions;

use crate::config::{Config, ConfigError};
use crate::{Runtime, RuntimeBuilder};

/// Accepts every agent name: the runtime's agents are known only once it is built,
/// when [`bind`] checks the workflows again against them.
struct AnyAgent<'a>(&'a Workflows);

impl Catalog for AnyAgent<'_> {
    fn has_agent(&self, _: &str) -> bool {
        true
    }
    fn has_tool(&self, name: &str) -> bool {
        self.0.tools().contains(name)
    }
}

/// Reads and parses workflow files; an error names the file (as `key[i]`).
///
/// # Errors
/// [`ConfigError::Invalid`] naming the key, the file and what is wrong.
pub fn read_specs(paths: &[PathBuf], key: &str) -> Result<Vec<WorkflowSpec>, ConfigError> {
    paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let invalid = |problem: String| ConfigError::Invalid {
                key: format!("{key}[{i}]"),
                problem: format!("{}: {problem}", path.display()),
            };
            let text = std::fs::read_to_string(path).map_err(|e| invalid(e.to_string()))?;
            WorkflowSpec::parse(&text).map_err(|e| invalid(e.to_string()))
        })
        .collect()
}

/// Registers each workflow of `specs` as an agent type on `builder` (exposed over
/// HTTP when `exposed`), and adds it to `workflows`; every card URL an agent node
/// names is registered as a remote agent type ([`remote_agent_name`]), whose card
/// is fetched when the runtime starts (an unreachable card fails the start). `taken` says which names other
/// agent types already use.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the workflow and node, for a definition that is
/// wrong whatever agents exist, or a name that is taken (by an agent, or by an
/// earlier workflow).
pub async fn register(
    mut builder: RuntimeBuilder,
    workflows: &Workflows,
    specs: Vec<WorkflowSpec>,
    exposed: bool,
    taken: impl Fn(&str) -> bool,
) -> Result<RuntimeBuilder, ConfigError> {
    let mut names = std::collections::HashSet::new();
    let mut remotes = std::collections::HashSet::new();
    for spec in specs {
        // A node naming a remote agent by its card URL sends to a remote agent type
        // registered for that URL (one per URL), so it goes through the supervisor
        // like any other node.
        for node in &spec.nodes {
            if let Some(url) = node.agent.as_deref().filter(|a| is_card_url(a))
                && remotes.insert(url.to_owned())
            {
                builder = builder.remote(remote_agent_name(url), url);
            }
        }
        if taken(&spec.name) || !names.insert(spec.name.clone()) {
            return Err(invalid_workflow(&format!(
                "workflow `{}`: the name is taken by another agent or workflow; a workflow needs a name of its own",
                spec.name
            )));
        }
        let workflow = spec
            .validate(&AnyAgent(workflows))
            .map_err(|e| invalid_workflow(&e.to_string()))?;
        let descriptor = Workflows::descriptor(&workflow).exposed(exposed);
        let agent = workflows.agent(workflow.name());
        builder = builder.agent(descriptor, move |_| agent.clone());
        workflows
            .add(workflow)
            .await
            .map_err(|e| invalid_workflow(&e.to_string()))?;
    }
    Ok(builder)
}

/// The workflows kept in `definitions` (put through the API before this start) that
/// are not among `files`, to be registered as agents again. One that cannot be read,
/// or names an agent (or tool) this server does not have, is left out with a warning
/// rather than stopping the start: it stays stored, and `DELETE /api/workflows/{name}`
/// removes it.
pub async fn stored_specs(
    definitions: &dyn DefinitionStore,
    files: &[WorkflowSpec],
    is_agent: impl Fn(&str) -> bool,
) -> Vec<WorkflowSpec> {
    let names = match definitions.names().await {
        Ok(names) => names,
        Err(error) => {
            tracing::warn!(%error, "the stored workflows could not be listed; none is served");
            return Vec::new();
        }
    };
    let mut stored = Vec::new();
    for name in names {
        if files.iter().any(|spec| spec.name == name) {
            continue;
        }
        let spec = match definitions.get(&name).await {
            Ok(Some(spec)) => spec,
            Ok(None) => continue,
            Err(error) => {
                tracing::warn!(workflow = %name, %error, "a stored workflow is not served");
                continue;
            }
        };
        stored.push(spec);
    }
    // Known agents: this server's, and the workflows themselves (a workflow may be a
    // node of another).
    let known = |agent: &str| {
        is_agent(agent)
            || is_card_url(agent)
            || files.iter().chain(&stored).any(|spec| spec.name == agent)
    };
    let mut kept = Vec::with_capacity(stored.len());
    for spec in &stored {
        if is_agent(&spec.name) {
            tracing::warn!(workflow = %spec.name, "a stored workflow is not served: an agent has its name");
            continue;
        }
        let unknown = spec
            .nodes
            .iter()
            .filter_map(|node| node.agent.as_deref())
            .find(|agent| !known(agent));
        if let Some(agent) = unknown {
            tracing::warn!(
                workflow = %spec.name,
                agent,
                "a stored workflow is not served: it names an agent this server does not have"
            );
            continue;
        }
        kept.push(spec.clone());
    }
    kept
}

fn invalid_workflow(problem: &str) -> ConfigError {
    ConfigError::Invalid {
        key: String::from("workflows.files"),
        problem: problem.to_owned(),
    }
}

/// Binds `workflows` to the running `runtime` and checks every stored workflow
/// against its agents: a node naming an agent that is not registered fails here,
/// naming the node.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the workflow and node.
pub async fn bind(
    workflows: &Workflows,
    runtime: &Runtime,
) -> Result<Vec<Arc<Workflow>>, ConfigError> {
    workflows.bind(runtime.supervisor().clone());
    let names = workflows
        .names()
        .await
        .map_err(|e| invalid_workflow(&e.to_string()))?;
    let mut loaded = Vec::with_capacity(names.len());
    for name in names {
        let Some(workflow) = workflows
            .get(&name)
            .await
            .map_err(|e| invalid_workflow(&e.to_string()))?
        else {
            continue;
        };
        workflow
            .spec()
            .clone()
            .validate(&workflows.catalog())
            .map_err(|e| invalid_workflow(&e.to_string()))?;
        loaded.push(workflow);
    }
    Ok(loaded)
}

/// The workflow API's settings: the same credentials as the A2A routes (`edge`'s).
#[must_use]
pub fn api_options(edge: &agentyard_actors::edge::EdgeConfig) -> ApiOptions {
    ApiOptions {
        auth: edge.auth.clone(),
        ..ApiOptions::default()
    }
}

/// The pure-A2A client: the server's own edge at `addr` (loopback when bound to an
/// unspecified address), with the first configured credential.
#[must_use]
pub fn over_http(config: &Config, addr: std::net::SocketAddr) -> Arc<dyn NodeClient> {
    let mut addr = addr;
    if addr.ip().is_unspecified() {
        addr.set_ip(if addr.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    let mut options = ClientOptions::new();
    if let Some(key) = config.auth.api_keys.first() {
        options = options.api_key(config.auth.api_key_header.clone(), key.key.clone());
    } else if let Some(token) = config.auth.bearer_tokens.first() {
        options = options.bearer_token(token.token.clone());
    }
    Arc::new(OverHttp::new(format!("http://{addr}"), options))
}

/// Whether `name` is a built-in agent's (what [`crate::builtin::register`] registers).
#[must_use]
pub fn is_builtin(name: &str) -> bool {
    crate::builtin::EXPOSED.contains(&name) || name == crate::builtin::Worker::descriptor().name
}
