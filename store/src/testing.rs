//! Helpers for tests: a PostgreSQL schema of their own for those that need a real
//! database, the texts of a history for those that check one, and a store that has
//! only what every store must have.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use agentyard_transport::a2a::Message;
use sqlx::{Connection, Executor};

use crate::InMemoryTaskStore;

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

/// Implements [`TaskStore`](crate::TaskStore) for a test store by handing each
/// method the trait requires to the store in one of its fields, plus the methods
/// written after it (which must not be required ones; the rest are the trait's
/// defaults). For a store that differs from another in a method or two:
///
/// ```
/// use agentyard_store::{InMemoryTaskStore, StoreError};
/// use agentyard_transport::TaskId;
///
/// /// The in-memory store, listing no task with push configs.
/// #[derive(Debug)]
/// struct Forgetful(InMemoryTaskStore);
///
/// agentyard_store::delegate_required! { Forgetful => 0;
///     async fn tasks_with_push_configs(&self) -> Result<Vec<TaskId>, StoreError> {
///         Ok(Vec::new())
///     }
/// }
/// ```
#[macro_export]
macro_rules! delegate_required {
    ($store:ty => $field:tt; $($more:tt)*) => {
        #[$crate::testing::__private::async_trait]
        impl $crate::TaskStore for $store {
            async fn insert(
                &self,
                task: $crate::testing::__private::Task,
            ) -> ::std::result::Result<(), $crate::StoreError> {
                self.$field.insert(task).await
            }
            async fn insert_owned(
                &self,
                task: $crate::testing::__private::Task,
                owner: $crate::TaskOwner,
            ) -> ::std::result::Result<(), $crate::StoreError> {
                self.$field.insert_owned(task, owner).await
            }
            async fn owner(
                &self,
                id: &$crate::testing::__private::TaskId,
            ) -> ::std::result::Result<::std::option::Option<$crate::TaskOwner>, $crate::StoreError>
            {
                self.$field.owner(id).await
            }
            async fn context_principal(
                &self,
                context_id: &$crate::testing::__private::ContextId,
            ) -> ::std::result::Result<
                ::std::option::Option<::std::sync::Arc<str>>,
                $crate::StoreError,
            > {
                self.$field.context_principal(context_id).await
            }
            async fn get(
                &self,
                id: &$crate::testing::__private::TaskId,
                n: ::std::option::Option<usize>,
            ) -> ::std::result::Result<
                ::std::option::Option<$crate::testing::__private::Task>,
                $crate::StoreError,
            > {
                self.$field.get(id, n).await
            }
            async fn set_status(
                &self,
                id: &$crate::testing::__private::TaskId,
                status: $crate::testing::__private::TaskStatus,
            ) -> ::std::result::Result<$crate::testing::__private::TaskState, $crate::StoreError>
            {
                self.$field.set_status(id, status).await
            }
            async fn append_history(
                &self,
                id: &$crate::testing::__private::TaskId,
                message: ::std::sync::Arc<$crate::testing::__private::Message>,
            ) -> ::std::result::Result<(), $crate::StoreError> {
                self.$field.append_history(id, message).await
            }
            async fn put_artifact(
                &self,
                id: &$crate::testing::__private::TaskId,
                artifact: ::std::sync::Arc<$crate::testing::__private::Artifact>,
                append: bool,
            ) -> ::std::result::Result<
                ::std::sync::Arc<$crate::testing::__private::Artifact>,
                $crate::StoreError,
            > {
                self.$field.put_artifact(id, artifact, append).await
            }
            async fn context_history(
                &self,
                context_id: &$crate::testing::__private::ContextId,
                before: ::std::option::Option<&$crate::testing::__private::MessageId>,
                limit: usize,
            ) -> ::std::result::Result<
                ::std::vec::Vec<::std::sync::Arc<$crate::testing::__private::Message>>,
                $crate::StoreError,
            > {
                self.$field.context_history(context_id, before, limit).await
            }
            $($more)*
        }
    };
}

/// What [`delegate_required!`] names, reachable from the crates that use it.
#[doc(hidden)]
pub mod __private {
    pub use agentyard_transport::a2a::{Artifact, Message, Task, TaskState, TaskStatus};
    pub use agentyard_transport::{ContextId, MessageId, TaskId};
    pub use async_trait::async_trait;
}

/// The in-memory store through only the methods a [`TaskStore`](crate::TaskStore)
/// must implement: every other one is the trait's default, so there is no event log
/// (streams number nothing and a lagging stream resynchronizes from the task), no
/// listing, and the rest of the optional contract as its defaults say. What a store
/// written with the least work looks like to the runtime; tests use it for the paths
/// such a store takes.
#[derive(Debug, Default)]
pub struct RequiredOnly(pub InMemoryTaskStore);

delegate_required! { RequiredOnly => 0; }
