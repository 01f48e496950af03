//! Where workflow definitions are kept: [`DefinitionStore`], with an in-memory
//! implementation. Specs are stored as written ([`WorkflowSpec`], plain serde data),
//! so a durable store only has to keep JSON by name: a table
//! `(name TEXT PRIMARY KEY, spec JSONB, updated_at)` or a file per name.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::RwLock;

use async_trait::async_trait;

use crate::definition::WorkflowSpec;

/// Why the definition store failed.
#[derive(Debug, thiserror::Error)]
#[error("workflow definition store: {0}")]
pub struct DefinitionStoreError(pub String);

/// Keeps workflow definitions by name.
#[async_trait]
pub trait DefinitionStore: Send + Sync + fmt::Debug + 'static {
    /// The definition of `name`.
    ///
    /// # Errors
    /// Only store failures.
    async fn get(&self, name: &str) -> Result<Option<WorkflowSpec>, DefinitionStoreError>;
    /// Stores `spec` under its name; returns whether it is new.
    ///
    /// # Errors
    /// Only store failures.
    async fn put(&self, spec: WorkflowSpec) -> Result<bool, DefinitionStoreError>;
    /// Removes `name`; returns whether it was there.
    ///
    /// # Errors
    /// Only store failures.
    async fn delete(&self, name: &str) -> Result<bool, DefinitionStoreError>;
    /// Every stored name, sorted.
    ///
    /// # Errors
    /// Only store failures.
    async fn names(&self) -> Result<Vec<String>, DefinitionStoreError>;
}

/// Definitions in memory, lost when the process ends.
#[derive(Debug, Default)]
pub struct InMemoryDefinitions {
    // A std lock: never held across an await.
    specs: RwLock<BTreeMap<String, WorkflowSpec>>,
}

impl InMemoryDefinitions {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

fn poisoned<T>(_: T) -> DefinitionStoreError {
    DefinitionStoreError(String::from("the lock was poisoned by a panic"))
}

#[async_trait]
impl DefinitionStore for InMemoryDefinitions {
    async fn get(&self, name: &str) -> Result<Option<WorkflowSpec>, DefinitionStoreError> {
        Ok(self.specs.read().map_err(poisoned)?.get(name).cloned())
    }

    async fn put(&self, spec: WorkflowSpec) -> Result<bool, DefinitionStoreError> {
        Ok(self
            .specs
            .write()
            .map_err(poisoned)?
            .insert(spec.name.clone(), spec)
            .is_none())
    }

    async fn delete(&self, name: &str) -> Result<bool, DefinitionStoreError> {
        Ok(self.specs.write().map_err(poisoned)?.remove(name).is_some())
    }

    async fn names(&self) -> Result<Vec<String>, DefinitionStoreError> {
        Ok(self
            .specs
            .read()
            .map_err(poisoned)?
            .keys()
            .cloned()
            .collect())
    }
}
