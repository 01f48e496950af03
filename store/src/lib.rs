//! Where agentyard keeps tasks: the [`TaskStore`] contract, its conformance suite, and
//! four stores that keep it.
//!
//! # Layout
//!
//! - [`contract`]: [`TaskStore`] and the values it speaks in ([`StoreError`],
//!   [`TaskOwner`], [`TaskPage`], [`Record`], [`Retention`]).
//! - [`memory`]: [`InMemoryTaskStore`], the library's default, lost at exit.
//! - [`sql`]: [`SqlTaskStore`], the durable store: the embedded file database (SQLite,
//!   compiled in, nothing to install; the default of `agentyard serve`) or PostgreSQL,
//!   shared by several processes. Its writes are group-committed: concurrent writes
//!   share one transaction and one fsync, and none is acknowledged before it commits.
//! - [`journal`]: [`JournalTaskStore`], the durable store that keeps its tables in
//!   memory and every write in an append-only log, flushed before the write is applied
//!   or answered (group-committed too), replayed at start from its newest snapshot.
//! - [`data_dir`]: a data directory's lock, and which store is in it.
//! - [`restart`]: what a server does with its store when it starts again: running
//!   tasks end `failed` ("the server restarted"), waiting ones stay answerable.
//! - [`conformance`]: the test functions every store must pass; the crate's own tests
//!   run them against all four, and a store written elsewhere can run them too.
//! - [`testing`]: a PostgreSQL schema of its own for each test that needs one,
//!   [`testing::RequiredOnly`], a store with only the methods every store must have,
//!   and [`delegate_required!`] for test stores that differ from another in a method
//!   or two.
//!
//! This crate speaks the A2A data model of `agentyard-transport` and knows nothing of
//! actors; `agentyard-actors` builds on it.

pub mod conformance;
pub mod contract;
pub mod data_dir;
pub mod journal;
pub mod memory;
pub mod restart;
pub mod sql;
pub mod testing;

pub use contract::{Record, Retention, StoreError, TaskFilter, TaskOwner, TaskPage, TaskStore};
pub use journal::JournalTaskStore;
pub use memory::InMemoryTaskStore;
pub use sql::{SqlTaskStore, StoreLocation};
