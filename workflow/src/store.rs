//! Where workflow definitions are kept: [`DefinitionStore`], in memory
//! ([`InMemoryDefinitions`]) or in the task store's records ([`StoredDefinitions`]), so
//! that a definition is as durable as the tasks: kept across restarts by the embedded
//! store, shared by the servers of one PostgreSQL database. Specs are stored as written
//! ([`WorkflowSpec`], plain serde data), as JSON by name.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, RwLock};

use agentyard_actors::store::TaskStore;
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

/// Definitions kept as records of a task store (namespace
/// [`StoredDefinitions::NAMESPACE`], key the workflow's name, value its spec as JSON).
#[derive(Debug, Clone)]
pub struct StoredDefinitions {
    store: Arc<dyn TaskStore>,
}

impl StoredDefinitions {
    /// The records' namespace in the task store.
    pub const NAMESPACE: &'static str = "agentyard.workflows";

    /// Definitions in `store`'s records.
    #[must_use]
    pub fn new(store: Arc<dyn TaskStore>) -> Self {
        Self { store }
    }
}

fn store_error(error: impl fmt::Display) -> DefinitionStoreError {
    DefinitionStoreError(error.to_string())
}

#[async_trait]
impl DefinitionStore for StoredDefinitions {
    async fn get(&self, name: &str) -> Result<Option<WorkflowSpec>, DefinitionStoreError> {
        let Some(record) = self
            .store
            .get_record(Self::NAMESPACE, name)
            .await
            .map_err(store_error)?
        else {
            return Ok(None);
        };
        // A record this version cannot read (written by a newer one, or edited by
        // hand) is an error naming the workflow, not a silently missing definition.
        serde_json::from_value(record.value).map(Some).map_err(|e| {
            DefinitionStoreError(format!(
                "the stored definition of `{name}` cannot be read: {e}"
            ))
        })
    }

    async fn put(&self, spec: WorkflowSpec) -> Result<bool, DefinitionStoreError> {
        let value = serde_json::to_value(&spec).map_err(store_error)?;
        let version = self
            .store
            .put_record(Self::NAMESPACE, &spec.name, &value, None)
            .await
            .map_err(store_error)?;
        Ok(version == 1)
    }

    async fn delete(&self, name: &str) -> Result<bool, DefinitionStoreError> {
        self.store
            .delete_record(Self::NAMESPACE, name)
            .await
            .map_err(store_error)
    }

    async fn names(&self) -> Result<Vec<String>, DefinitionStoreError> {
        let mut names: Vec<String> = self
            .store
            .list_records(Self::NAMESPACE)
            .await
            .map_err(store_error)?
            .into_iter()
            .map(|record| record.key)
            .collect();
        names.sort();
        Ok(names)
    }
}

#[cfg(test)]
mod tests;
