//! The conformance suite against each store: in memory, embedded (a SQLite file in a
//! temporary directory), the journal (in a temporary directory, with its default file
//! sizes and with tiny ones) and PostgreSQL (`AGENTYARD_TEST_POSTGRES_URL`, each test in a
//! schema of its own; skipped, saying why, when the variable is not set).

use std::sync::Arc;

use agentyard_store::journal::Tuning;
use agentyard_store::{
    InMemoryTaskStore, JournalTaskStore, Retention, SqlTaskStore, StoreLocation, TaskStore,
};

mod memory {
    use super::*;

    async fn make(retention: Retention) -> Option<(Arc<dyn TaskStore>, ())> {
        Some((Arc::new(InMemoryTaskStore::new().retention(retention)), ()))
    }

    agentyard_store::conformance_tests!(make);
}

mod embedded {
    use super::*;

    async fn make(retention: Retention) -> Option<(Arc<dyn TaskStore>, tempfile::TempDir)> {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = SqlTaskStore::open(StoreLocation::Embedded(dir.path().to_owned()), retention)
            .await
            .expect("open the embedded store");
        Some((Arc::new(store), dir))
    }

    agentyard_store::conformance_tests!(make);
}

mod journal {
    use super::*;

    async fn make(retention: Retention) -> Option<(Arc<dyn TaskStore>, tempfile::TempDir)> {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = JournalTaskStore::open(dir.path(), retention)
            .await
            .expect("open the journal store");
        Some((Arc::new(store), dir))
    }

    agentyard_store::conformance_tests!(make);
}

/// The journal with segments of 16 KiB and a snapshot every 32 KiB, so that the suite's
/// writes cross segments and snapshots while they run.
mod journal_rolling {
    use super::*;

    async fn make(retention: Retention) -> Option<(Arc<dyn TaskStore>, tempfile::TempDir)> {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = JournalTaskStore::open_tuned(dir.path(), retention, Tuning::tiny())
            .await
            .expect("open the journal store");
        Some((Arc::new(store), dir))
    }

    agentyard_store::conformance_tests!(make);
}

mod postgres {
    use super::*;

    async fn make(retention: Retention) -> Option<(Arc<dyn TaskStore>, ())> {
        let url = agentyard_store::testing::postgres_schema("conformance").await?;
        let store = SqlTaskStore::open(StoreLocation::Postgres(url), retention)
            .await
            .expect("open the PostgreSQL store");
        Some((Arc::new(store), ()))
    }

    agentyard_store::conformance_tests!(make);
}
