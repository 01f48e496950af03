//! Helpers for tests that need a real database: a PostgreSQL schema of their own.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::{Connection, Executor};

/// The environment variable that names the PostgreSQL server tests may use; `.ci/run`
/// sets it after making sure a server runs on loopback (`store/ci/postgres.sh`).
pub const POSTGRES_URL_VAR: &str = "AGENTYARD_TEST_POSTGRES_URL";

/// A URL of the test PostgreSQL server whose connections use a new, empty schema (so
/// tests running at the same time never see each other's tasks), or `None` after
/// printing why the test is skipped: the variable is not set, or the server cannot be
/// reached.
pub async fn postgres_schema(prefix: &str) -> Option<String> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let Ok(url) = std::env::var(POSTGRES_URL_VAR) else {
        eprintln!(
            "skipped: {POSTGRES_URL_VAR} is not set, so there is no PostgreSQL server to test \
             against (.ci/run starts one and sets it)"
        );
        return None;
    };
    sqlx::any::install_default_drivers();
    let mut conn = match sqlx::AnyConnection::connect(&url).await {
        Ok(conn) => conn,
        Err(error) => {
            eprintln!("skipped: cannot reach the PostgreSQL server of {POSTGRES_URL_VAR}: {error}");
            return None;
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
    if let Err(error) = conn
        .execute(format!("CREATE SCHEMA \"{schema}\"").as_str())
        .await
    {
        eprintln!("skipped: cannot create a schema on the PostgreSQL server: {error}");
        return None;
    }
    let _ = conn.close().await;
    let joiner = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{joiner}options[search_path]={schema}"))
}
