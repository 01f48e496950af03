//! `[workflows]`: the workflow files `agentyard serve` loads, and how they run.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;

/// `[workflows]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct WorkflowsSection {
    /// Workflow files (TOML, or JSON) to load at start, each registered as an agent
    /// type of its name (default none). A relative path is read from the config
    /// file's directory.
    pub files: Vec<PathBuf>,
    /// Whether the workflows are reachable over HTTP as agents (default yes).
    pub exposed: bool,
    /// Nodes running at once in one run, for workflows that do not say (default 32).
    pub concurrency: usize,
    /// Reach every node over the HTTP edge with A2A JSON-RPC instead of through the
    /// in-process supervisor (the seed's pure-A2A mode; default no). The nodes'
    /// agents must then be exposed.
    pub pure_a2a: bool,
    /// Where relative `files` are read from: the config file's directory.
    #[serde(skip)]
    pub(crate) base_dir: Option<PathBuf>,
}

impl Default for WorkflowsSection {
    fn default() -> Self {
        Self {
            files: Vec::new(),
            exposed: true,
            concurrency: agentyard_workflow::runner::DEFAULT_CONCURRENCY,
            pure_a2a: false,
            base_dir: None,
        }
    }
}

impl WorkflowsSection {
    /// Checks the values the types alone cannot.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the key.
    pub(crate) fn check(&self) -> Result<(), ConfigError> {
        if self.concurrency == 0 {
            return Err(ConfigError::Invalid {
                key: String::from("workflows.concurrency"),
                problem: String::from("must be at least 1"),
            });
        }
        Ok(())
    }

    /// Each file with where it is read from.
    #[must_use]
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files
            .iter()
            .map(|file| match &self.base_dir {
                Some(dir) if file.is_relative() => dir.join(file),
                _ => file.clone(),
            })
            .collect()
    }

    pub(crate) fn read_from(&mut self, config_file: &Path) {
        self.base_dir = config_file.parent().map(Path::to_path_buf);
    }
}
