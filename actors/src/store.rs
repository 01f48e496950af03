//! Where tasks live: the [`TaskStore`] contract and its stores, from
//! `agentyard-store`, re-exported here so that callers of this crate see one path.

pub use agentyard_store::data_dir;
pub use agentyard_store::{
    InMemoryTaskStore, JournalTaskStore, Record, Retention, SqlTaskStore, StoreError,
    StoreLocation, TaskFilter, TaskOwner, TaskPage, TaskStore,
};
