//! Helpers for tests: a PostgreSQL schema of their own for those that need a real
//! database, the texts of a history for those that check one, and a store that has
//! only what every store must have.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use agentyard_transport::a2a::{Artifact, Message, Task, TaskState, TaskStatus};
use agentyard_transport::{ContextId, MessageId, TaskId};
use async_trait::async_trait;
use sqlx::{Connection, Executor};

use crate::{InMemoryTaskStore, StoreError, TaskOwner, TaskStore};

/// The text of each message, in order: what a test of a history compares.
pub fn texts<'a>(messages: impl IntoIterator<Item = &'a Arc<Message>>) -> Vec<String> {
    messages.into_iter().map(|message| message.text()).collect()
}

/// The environment variable that names the PostgreSQL server tests may use; `.ci/run`
/// sets it after making sure a server runs on loopback (`store/ci/postgres.sh`).
pub const POSTGRES_URL_VAR: &str = "AGENTYARD_TEST_POSTGRES_URL";

/// With this variable set to `require` (as `.ci/run` does), a test that cannot reach
/// PostgreSQL fails instead of skipping.
pub const POSTGRES_REQUIRED_VAR: &str = "AGENTYARD_TEST_POSTGRES";

/// Skips (printing why) or, when PostgreSQL is required, fails.
fn skip(why: &str) -> Option<String> {
    if std::env::var(POSTGRES_REQUIRED_VAR).is_ok_and(|v| v == "require") {
        panic!("{POSTGRES_REQUIRED_VAR}=require, but {why}");
    }
    eprintln!("skipped: {why}");
    None
}

/// A URL of the test PostgreSQL server whose connections use a new, empty schema (so
/// tests running at the same time never see each other's tasks), or `None` after
/// printing why the test is skipped: the variable is not set, or the server cannot be
/// reached.
///
/// # Panics
/// Instead of skipping, when [`POSTGRES_REQUIRED_VAR`] is `require`.
pub async fn postgres_schema(prefix: &str) -> Option<String> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let Ok(url) = std::env::var(POSTGRES_URL_VAR) else {
        return skip(&format!(
            "{POSTGRES_URL_VAR} is not set, so there is no PostgreSQL server to test against \
             (.ci/run starts one with store/ci/postgres.sh and sets it)"
        ));
    };
    sqlx::any::install_default_drivers();
    let mut conn = match sqlx::AnyConnection::connect(&url).await {
        Ok(conn) => conn,
        Err(error) => {
            return skip(&format!(
                "cannot reach the PostgreSQL server of {POSTGRES_URL_VAR}: {error}"
            ));
        }
    };
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let schema = format!(
        "{prefix}_{}_{nanos}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    // Schemas of earlier runs of this prefix (over an hour old) go first, so a test
    // machine's database does not fill up.
    let hour_ago = nanos.saturating_sub(3_600_000_000_000);
    if let Ok(old) =
        sqlx::query_scalar::<_, String>("SELECT nspname FROM pg_namespace WHERE nspname LIKE $1")
            .bind(format!("{prefix}\\_%"))
            .fetch_all(&mut conn)
            .await
    {
        for name in old {
            let made = name.rsplit('_').nth(1).and_then(|n| n.parse::<u128>().ok());
            if made.is_some_and(|made| made < hour_ago) {
                let _ = conn
                    .execute(format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE").as_str())
                    .await;
            }
        }
    }
    if let Err(error) = conn
        .execute(format!("CREATE SCHEMA \"{schema}\"").as_str())
        .await
    {
        return skip(&format!(
            "cannot create a schema on the PostgreSQL server: {error}"
        ));
    }
    let _ = conn.close().await;
    let joiner = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{joiner}options[search_path]={schema}"))
}

/// The in-memory store through only the methods a [`TaskStore`] must implement: every
/// other one is the trait's default, so there is no event log (streams number nothing
/// and a lagging stream resynchronizes from the task), no listing, and the rest of the
/// optional contract as its defaults say. What a store written with the least work
/// looks like to the runtime; tests use it for the paths such a store takes.
#[derive(Debug, Default)]
pub struct RequiredOnly(pub InMemoryTaskStore);

#[async_trait]
impl TaskStore for RequiredOnly {
    async fn insert(&self, task: Task) -> Result<(), StoreError> {
        self.0.insert(task).await
    }
    async fn insert_owned(&self, task: Task, owner: TaskOwner) -> Result<(), StoreError> {
        self.0.insert_owned(task, owner).await
    }
    async fn owner(&self, id: &TaskId) -> Result<Option<TaskOwner>, StoreError> {
        self.0.owner(id).await
    }
    async fn context_principal(
        &self,
        context_id: &ContextId,
    ) -> Result<Option<Arc<str>>, StoreError> {
        self.0.context_principal(context_id).await
    }
    async fn get(&self, id: &TaskId, n: Option<usize>) -> Result<Option<Task>, StoreError> {
        self.0.get(id, n).await
    }
    async fn set_status(&self, id: &TaskId, status: TaskStatus) -> Result<TaskState, StoreError> {
        self.0.set_status(id, status).await
    }
    async fn append_history(&self, id: &TaskId, message: Arc<Message>) -> Result<(), StoreError> {
        self.0.append_history(id, message).await
    }
    async fn put_artifact(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
    ) -> Result<Arc<Artifact>, StoreError> {
        self.0.put_artifact(id, artifact, append).await
    }
    async fn context_history(
        &self,
        context_id: &ContextId,
        before: Option<&MessageId>,
        limit: usize,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        self.0.context_history(context_id, before, limit).await
    }
}
