//! The durable [`TaskStore`]: an embedded SQLite file or a PostgreSQL database, through
//! one sqlx `Any` pool and one code path.
//!
//! # Acknowledged means durable, and fast: group commit
//!
//! Every write goes to one writer task per store. It takes whatever writes are waiting
//! (up to [`BATCH`]), applies them in one transaction, commits once (one fsync), and
//! only then answers each: a write a caller sees acknowledged is on disk. Concurrent
//! sends therefore share transactions; a lone send pays one commit per write. A write
//! that breaks a rule (a terminal task, a taken id) is refused before it touches the
//! database and answered at once. The writes answered before their commit are
//! [`TaskStore::append_history_unanswered`] and [`TaskStore::insert_owned_unanswered`]:
//! each is answered once applied in the open transaction, and the task's next answered
//! write commits with or after it.
//!
//! # Several processes on one database
//!
//! Nothing here holds only inside one process. Each task row has a `version`; an
//! update names the version it read and is retried on a fresh read when another
//! process got there first, so no concurrent update is lost. Numbers (status-change
//! order, ended order, event sequence) come from rows of the database, which
//! PostgreSQL locks until the transaction that took one commits.
//!
//! # Bad days
//!
//! A database that cannot be reached, or refuses a write (full disk, a locked or
//! corrupt file), fails the operation with [`StoreError::Unavailable`] naming the
//! cause; nothing is acknowledged that was not committed. The pool opens new
//! connections as it needs them, so the store recovers by itself when the database
//! returns.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agentyard_transport::a2a::{
    Artifact, Message, StreamEvent, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use agentyard_transport::{ContextId, MessageId, TaskId};
use async_trait::async_trait;
use futures::future::BoxFuture;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions, AnyRow};
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Executor, Row};
use tokio::sync::{mpsc, oneshot};

use crate::contract::{Record, Retention, StoreError, TaskFilter, TaskOwner, TaskPage, TaskStore};

/// The most writes one transaction carries.
pub const BATCH: usize = 256;

/// The file of the embedded store inside its data directory.
pub const EMBEDDED_FILE: &str = "agentyard.db";

/// How many tasks of one conversation [`TaskStore::context_history`] looks at, as the
/// in-memory store remembers.
const CONTEXT_TASKS: i64 = 256;

/// How often an update is retried when another process changed the task in between.
const VERSION_RETRIES: usize = 16;

/// Where a [`SqlTaskStore`] keeps its data.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreLocation {
    /// An embedded SQLite database, the file [`EMBEDDED_FILE`] in this directory
    /// (created with the directory on first open).
    Embedded(PathBuf),
    /// A PostgreSQL database, by its `postgres://` URL.
    Postgres(String),
}

impl StoreLocation {
    /// What the location is, for messages: the file's path or the URL without its
    /// password.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Embedded(dir) => dir.join(EMBEDDED_FILE).display().to_string(),
            Self::Postgres(url) => redact(url),
        }
    }
}

/// A URL with any password replaced by `***`.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let Some((userinfo, host)) = rest.split_once('@') else {
        return url.to_owned();
    };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

/// The durable task store; see the module docs. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct SqlTaskStore {
    pool: AnyPool,
    writer: mpsc::Sender<Job>,
    location: StoreLocation,
    /// The embedded store's lock on its directory, held while the store is open: a
    /// second process on the same directory is refused at open, by name, rather than
    /// both writing one file.
    _lock: Option<std::fs::File>,
}

/// The lock file of an embedded store's directory.
pub const LOCK_FILE: &str = "agentyard.lock";

/// Takes the directory's lock, or says who holds it.
fn lock_dir(dir: &Path) -> Result<std::fs::File, String> {
    use std::io::{Read, Seek, Write};
    let path = dir.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("cannot open the lock file {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(format!(
                "the data directory {} is in use by another agentyard process{} \
                 (stop it, or give this one another --data-dir)",
                dir.display(),
                match holder.trim() {
                    "" => String::new(),
                    pid => format!(" (pid {pid})"),
                }
            ));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(format!("cannot lock {}: {e}", path.display()));
        }
    }
    // Who holds it, for the message above; the lock itself is what counts.
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    let _ = file.flush();
    Ok(file)
}

/// The schema, shipped in the crate and applied at open.
#[derive(Debug)]
struct Schema;

impl MigrationSource<'static> for Schema {
    fn resolve(self) -> BoxFuture<'static, Result<Vec<Migration>, sqlx::error::BoxDynError>> {
        Box::pin(async {
            Ok(vec![Migration::new(
                1,
                Cow::Borrowed("tasks"),
                MigrationType::Simple,
                Cow::Borrowed(include_str!("../migrations/0001_tasks.sql")),
                false,
            )])
        })
    }
}

fn unavailable(error: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(error.to_string())
}

fn now_ms() -> i64 {
    millis(SystemTime::now())
}

fn millis(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn corrupt(what: &str, error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("stored {what} cannot be read: {error}").into())
}

fn encode<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value)
        .map_err(|e| StoreError::Backend(format!("cannot encode for the store: {e}").into()))
}

fn decode_task(body: &str) -> Result<Task, StoreError> {
    serde_json::from_str(body).map_err(|e| corrupt("task", e))
}

/// Stream events are stored as the 0.3 wire writes them, and told apart by `kind`.
fn decode_event(body: &str) -> Result<StreamEvent, StoreError> {
    let value: serde_json::Value = serde_json::from_str(body).map_err(|e| corrupt("event", e))?;
    let kind = value
        .get("kind")
        .and_then(|kind| kind.as_str())
        .unwrap_or("");
    let event = match kind {
        "task" => serde_json::from_value::<Task>(value).map(StreamEvent::Task),
        "message" => serde_json::from_value::<Message>(value).map(StreamEvent::Message),
        "status-update" => {
            serde_json::from_value::<TaskStatusUpdateEvent>(value).map(StreamEvent::StatusUpdate)
        }
        "artifact-update" => serde_json::from_value::<TaskArtifactUpdateEvent>(value)
            .map(StreamEvent::ArtifactUpdate),
        other => return Err(corrupt("event", format!("unknown kind `{other}`"))),
    };
    event.map_err(|e| corrupt("event", e))
}

fn state_name(state: TaskState) -> Result<String, StoreError> {
    let value = serde_json::to_value(state)
        .map_err(|e| StoreError::Backend(format!("cannot encode a state: {e}").into()))?;
    Ok(value.as_str().unwrap_or("unknown").to_owned())
}

fn state_of(name: &str) -> Result<TaskState, StoreError> {
    serde_json::from_value(serde_json::Value::String(name.to_owned()))
        .map_err(|e| corrupt("task state", e))
}

impl SqlTaskStore {
    /// Opens (creating on first use) the store at `location`, applies the schema
    /// migrations it lacks, and starts its writer. Must be called inside a tokio
    /// runtime.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] naming the location when the directory cannot be
    /// created, the database cannot be opened or reached, or its schema is not one this
    /// version knows.
    pub async fn open(location: StoreLocation, retention: Retention) -> Result<Self, StoreError> {
        sqlx::any::install_default_drivers();
        let place = location.describe();
        let failed = |e: &dyn std::fmt::Display| {
            StoreError::Unavailable(format!("cannot open the task store at {place}: {e}"))
        };
        let (url, sqlite, lock) = match &location {
            StoreLocation::Embedded(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| failed(&e))?;
                let lock = lock_dir(dir).map_err(|e| failed(&e))?;
                (embedded_url(&dir.join(EMBEDDED_FILE)), true, Some(lock))
            }
            StoreLocation::Postgres(url) => (url.clone(), false, None),
        };
        let options: AnyConnectOptions = url.parse().map_err(|e| failed(&e))?;
        let pool = AnyPoolOptions::new()
            .max_connections(if sqlite { 4 } else { 8 })
            .acquire_timeout(Duration::from_secs(5))
            // A file has no connection to lose: no ping before each use. (A PostgreSQL
            // connection is checked, so one cut by a restart is replaced, not used.)
            .test_before_acquire(!sqlite)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if sqlite {
                        // WAL: readers never wait for the writer; FULL: a commit is
                        // on disk when it returns. Foreign keys take a task's log and
                        // configs with it.
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                             PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
                        )
                        .await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(|e| failed(&e))?;
        let migrator = Migrator::new(Schema).await.map_err(|e| failed(&e))?;
        migrator.run(&pool).await.map_err(|e| failed(&e))?;
        let (writer, jobs) = mpsc::channel(BATCH * 4);
        let ctx = if sqlite {
            Writer::local(&pool, retention)
                .await
                .map_err(|e| failed(&e))?
        } else {
            Writer {
                retention,
                local: None,
                live: None,
                lost: std::sync::Mutex::default(),
            }
        };
        tokio::spawn(write_loop(pool.clone(), jobs, Arc::new(ctx)));
        Ok(Self {
            pool,
            writer,
            location,
            _lock: lock,
        })
    }

    /// Where the store keeps its data.
    #[must_use]
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    async fn write(&self, write: Write) -> Result<Done, StoreError> {
        self.send_write(write, false).await
    }

    /// Sends a write to the writer; its answer once committed, or with `early` once
    /// applied (see [`Job::early`]).
    async fn send_write(&self, write: Write, early: bool) -> Result<Done, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.writer
            .send(Job {
                write,
                reply: Some(reply),
                early,
            })
            .await
            .map_err(|_| StoreError::Unavailable("the task store's writer has stopped".into()))?;
        answer
            .await
            .map_err(|_| StoreError::Unavailable("the task store's writer has stopped".into()))?
    }

    async fn fetch_task(&self, id: &TaskId) -> Result<Option<AnyRow>, StoreError> {
        sqlx::query("SELECT body, agent, principal FROM tasks WHERE id = $1")
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(unavailable)
    }

    /// Closes the pool after the writes already sent are done.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

fn embedded_url(file: &Path) -> String {
    format!("sqlite://{}?mode=rwc", file.display())
}

/// One write, sent to the writer.
#[derive(Debug)]
enum Write {
    Insert(Task, Option<TaskOwner>),
    SetStatus(TaskId, TaskStatus),
    SetStatusLogged(TaskId, TaskStatus, String),
    PutArtifactLogged(TaskId, Artifact, bool, String),
    AppendHistory(TaskId, Message),
    PutArtifact(TaskId, Artifact, bool),
    AppendEvent(TaskId, String),
    RememberKey(String, TaskId),
    ForgetKey(String),
    PutPushConfig(TaskPushNotificationConfig),
    DeletePushConfig(TaskId, String),
    DropEndedBefore(i64),
    PutRecord(String, String, String, Option<u64>),
    DeleteRecord(String, String),
}

/// What a write answers.
#[derive(Debug)]
enum Done {
    Unit,
    State(TaskState),
    Artifact(Artifact),
    Logged(Option<TaskState>, Option<Artifact>, u64),
    Number(u64),
    Flag(bool),
}

#[derive(Debug)]
struct Job {
    write: Write,
    /// Taken when the write is answered.
    reply: Option<oneshot::Sender<Result<Done, StoreError>>>,
    /// Answered once applied, before its transaction commits: a write nobody is
    /// answered on before a later write of its task, which the writer commits with or
    /// after it ([`TaskStore::append_history_unanswered`]).
    early: bool,
}

impl Job {
    fn answer(&mut self, answer: Result<Done, StoreError>) {
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(answer);
        }
    }

    /// The write did not happen. If it was answered already, its task is marked lost,
    /// so that the later write it was answered on behalf of fails instead of
    /// acknowledging a task without it.
    fn fail(mut self, ctx: &Writer, message: String) {
        if self.reply.is_none()
            && let Some(id) = self.write.task()
        {
            ctx.lost
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(id.clone());
        }
        self.answer(Err(StoreError::Unavailable(message)));
    }
}

impl Write {
    /// The task a write changes, if one.
    fn task(&self) -> Option<&TaskId> {
        match self {
            Self::Insert(task, _) => Some(&task.id),
            Self::SetStatus(id, _)
            | Self::SetStatusLogged(id, ..)
            | Self::PutArtifactLogged(id, ..)
            | Self::AppendHistory(id, _)
            | Self::PutArtifact(id, ..)
            | Self::AppendEvent(id, _) => Some(id),
            Self::PutPushConfig(config) => Some(&config.task_id),
            Self::DeletePushConfig(id, _) => Some(id),
            Self::RememberKey(..)
            | Self::ForgetKey(_)
            | Self::DropEndedBefore(_)
            | Self::PutRecord(..)
            | Self::DeleteRecord(..) => None,
        }
    }
}

/// Why a write did not happen: a rule it broke (answered at once, nothing written) or
/// the database (the transaction is lost).
enum Failed {
    Refused(StoreError),
    Database(sqlx::Error),
}

impl From<sqlx::Error> for Failed {
    fn from(error: sqlx::Error) -> Self {
        Self::Database(error)
    }
}

impl From<StoreError> for Failed {
    fn from(error: StoreError) -> Self {
        Self::Refused(error)
    }
}

/// The writer: batches of waiting writes, one transaction each, on one connection it
/// keeps (no pool checkout, and for PostgreSQL no ping, per batch) until the database
/// fails it.
async fn write_loop(pool: AnyPool, mut jobs: mpsc::Receiver<Job>, ctx: Arc<Writer>) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut conn = None;
    // `SqlTaskStore::close` waits for every connection to come back: the writer gives
    // its own back when the pool closes.
    let mut closing = std::pin::pin!(pool.close_event());
    loop {
        let received = tokio::select! {
            received = jobs.recv_many(&mut batch, BATCH) => received,
            () = &mut closing, if conn.is_some() => {
                conn = None;
                continue;
            }
        };
        if received == 0 {
            break;
        }
        let jobs_now = std::mem::take(&mut batch);
        if let Err(leftover) = commit_batch(&pool, &mut conn, jobs_now, &ctx).await {
            // The batch's transaction failed: each write on its own, so that one bad
            // write (or a database back from a restart) fails only itself.
            for job in leftover {
                match commit_batch(&pool, &mut conn, vec![job], &ctx).await {
                    Ok(()) => {}
                    Err(mut lone) => {
                        if let Some(job) = lone.pop() {
                            job.fail(
                                &ctx,
                                "the database refused the write; see the earlier error".into(),
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Applies `jobs` in one transaction and answers them after it commits (a write
/// answered when applied, [`Job::early`], is answered at once and only committed
/// here). On a database error, hands back the jobs not yet done (after logging the
/// error).
async fn commit_batch(
    pool: &AnyPool,
    held: &mut Option<PoolConnection<Any>>,
    jobs: Vec<Job>,
    ctx: &Writer,
) -> Result<(), Vec<Job>> {
    // Taken out while in use; put back only while the database has not failed it.
    let mut conn = match held.take() {
        Some(conn) => conn,
        None => match pool.acquire().await {
            Ok(conn) => conn,
            Err(error) => {
                fail_all(jobs, &error, ctx);
                return Ok(());
            }
        },
    };
    let mut tx = match conn.begin().await {
        Ok(tx) => tx,
        Err(error) => {
            fail_all(jobs, &error, ctx);
            return Ok(());
        }
    };
    let mut done = Vec::with_capacity(jobs.len());
    let mut rest = jobs.into_iter();
    while let Some(mut job) = rest.next() {
        match apply(&mut tx, &job.write, ctx).await {
            Ok(answer) => {
                let answer = if job.early {
                    job.answer(Ok(answer));
                    None
                } else {
                    Some(answer)
                };
                done.push((job, answer));
            }
            Err(Failed::Refused(error)) => job.answer(Err(error)),
            Err(Failed::Database(error)) => {
                tracing::warn!(%error, "task store write failed; retrying each write alone");
                drop(tx);
                ctx.forget_uncommitted();
                let mut leftover: Vec<Job> = done.into_iter().map(|(job, _)| job).collect();
                if leftover.is_empty() {
                    // Alone already: nothing to retry, this write failed.
                    job.fail(ctx, format!("the database refused the write: {error}"));
                    leftover.extend(rest);
                    return if leftover.is_empty() {
                        Ok(())
                    } else {
                        Err(leftover)
                    };
                }
                leftover.push(job);
                leftover.extend(rest);
                return Err(leftover);
            }
        }
    }
    match tx.commit().await {
        Ok(()) => {
            *held = Some(conn);
            for (mut job, answer) in done {
                if let Some(answer) = answer {
                    job.answer(Ok(answer));
                }
            }
        }
        Err(error) => {
            ctx.forget_uncommitted();
            tracing::warn!(%error, "task store commit failed");
            let message = format!("the database did not commit the write: {error}");
            for (job, _) in done {
                job.fail(ctx, message.clone());
            }
        }
    }
    Ok(())
}

fn fail_all(jobs: Vec<Job>, error: &sqlx::Error, ctx: &Writer) {
    tracing::warn!(%error, "task store unreachable");
    let message = format!("cannot reach the database: {error}");
    for job in jobs {
        job.fail(ctx, message.clone());
    }
}

/// What the writer applies writes with: the retention, and where numbers come from.
#[derive(Debug)]
struct Writer {
    retention: Retention,
    /// The embedded store's counters, in memory: its directory lock makes this process
    /// the file's only writer, so a number needs no statement of its own (they start
    /// past the largest number stored). `None` for PostgreSQL, whose processes share
    /// the `counters` rows.
    local: Option<std::sync::Mutex<std::collections::HashMap<&'static str, i64>>>,
    /// The embedded store's live tasks as the writer last wrote them, so an update
    /// does not read its task back first. Only the writer touches it; it is emptied
    /// whenever a transaction fails, since it may hold what was not committed. `None`
    /// for PostgreSQL, where another process may have written the row.
    live: Option<std::sync::Mutex<std::collections::HashMap<TaskId, Current>>>,
    /// Tasks an early-answered write of which was not committed: their later writes
    /// are refused, so nothing acknowledged lacks a write it was answered after.
    lost: std::sync::Mutex<std::collections::HashSet<TaskId>>,
}

/// The counters, by name.
const COUNTERS: [&str; 4] = ["changed", "created", "ended", "position"];

impl Writer {
    /// Reads where the embedded store's counters stand.
    async fn local(pool: &AnyPool, retention: Retention) -> Result<Self, sqlx::Error> {
        let row = sqlx::query(
            "SELECT COALESCE(MAX(changed), 0), COALESCE(MAX(created), 0), \
             COALESCE(MAX(ended_seq), 0), \
             (SELECT COALESCE(MAX(position), 0) FROM push_configs) FROM tasks",
        )
        .fetch_one(pool)
        .await?;
        let mut counters = std::collections::HashMap::new();
        for (n, name) in COUNTERS.iter().enumerate() {
            counters.insert(*name, row.try_get::<i64, _>(n)?);
        }
        Ok(Self {
            retention,
            local: Some(std::sync::Mutex::new(counters)),
            live: Some(std::sync::Mutex::new(std::collections::HashMap::new())),
            lost: std::sync::Mutex::default(),
        })
    }

    fn live(
        &self,
    ) -> Option<std::sync::MutexGuard<'_, std::collections::HashMap<TaskId, Current>>> {
        self.live.as_ref().map(|live| {
            live.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        })
    }

    /// A write of `task` at `version` went into the transaction.
    fn wrote(&self, task: &Task, version: i64) {
        if let Some(mut live) = self.live() {
            if task.status.state.is_terminal() {
                live.remove(&task.id);
            } else {
                live.insert(
                    task.id.clone(),
                    Current {
                        task: task.clone(),
                        version,
                    },
                );
            }
        }
    }

    /// A transaction failed: what the writer remembers may not be what is stored.
    fn forget_uncommitted(&self) {
        if let Some(mut live) = self.live() {
            live.clear();
        }
    }
}

/// The last number a counter gave.
async fn current(
    conn: &mut AnyConnection,
    ctx: &Writer,
    counter: &'static str,
) -> Result<i64, sqlx::Error> {
    if let Some(local) = &ctx.local {
        let counters = local
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        return Ok(counters.get(counter).copied().unwrap_or(0));
    }
    sqlx::query("SELECT value FROM counters WHERE name = $1")
        .bind(counter)
        .fetch_one(&mut *conn)
        .await?
        .try_get(0)
}

/// Takes the next number of a counter.
async fn next(
    conn: &mut AnyConnection,
    ctx: &Writer,
    counter: &'static str,
) -> Result<i64, sqlx::Error> {
    if let Some(local) = &ctx.local {
        let mut counters = local
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let value = counters.entry(counter).or_insert(0);
        *value += 1;
        return Ok(*value);
    }
    let row = sqlx::query("UPDATE counters SET value = value + 1 WHERE name = $1 RETURNING value")
        .bind(counter)
        .fetch_one(&mut *conn)
        .await?;
    row.try_get::<i64, _>(0)
}

/// A task row as read for an update.
#[derive(Debug, Clone)]
struct Current {
    task: Task,
    version: i64,
}

async fn read_task(conn: &mut AnyConnection, ctx: &Writer, id: &TaskId) -> Result<Current, Failed> {
    if let Some(current) = ctx.live().and_then(|live| live.get(id).cloned()) {
        return Ok(current);
    }
    let row = sqlx::query("SELECT body, version FROM tasks WHERE id = $1")
        .bind(id.as_str())
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| StoreError::NotFound(id.clone()))?;
    let body: String = row.try_get(0)?;
    Ok(Current {
        task: decode_task(&body)?,
        version: row.try_get(1)?,
    })
}

/// Reads a live task, changes its history or artifacts with `change` (never its
/// status), and writes it back if nobody else wrote it in between (else again, on a
/// fresh read).
async fn update_live<T>(
    conn: &mut AnyConnection,
    ctx: &Writer,
    id: &TaskId,
    mut change: impl FnMut(&mut Task) -> T,
) -> Result<T, Failed> {
    for _ in 0..VERSION_RETRIES {
        let Current { mut task, version } = read_task(conn, ctx, id).await?;
        if task.status.state.is_terminal() {
            return Err(StoreError::Terminal {
                task_id: id.clone(),
                state: task.status.state,
            }
            .into());
        }
        let answer = change(&mut task);
        let written = sqlx::query(
            "UPDATE tasks SET body = $1, version = version + 1 WHERE id = $2 AND version = $3",
        )
        .bind(encode(&task)?)
        .bind(id.as_str())
        .bind(version)
        .execute(&mut *conn)
        .await?;
        if written.rows_affected() == 1 {
            ctx.wrote(&task, version + 1);
            return Ok(answer);
        }
    }
    Err(StoreError::Unavailable(format!(
        "task `{id}` kept changing under this write; try again"
    ))
    .into())
}

/// Drops the ended tasks past the count, except those a key still names.
async fn evict_past_count(
    conn: &mut AnyConnection,
    ended: i64,
    ctx: &Writer,
) -> Result<(), sqlx::Error> {
    let limit = i64::try_from(ctx.retention.finished_tasks).unwrap_or(i64::MAX);
    let last_dropped = ended.saturating_sub(limit);
    if last_dropped <= 0 {
        return Ok(());
    }
    sqlx::query(
        "DELETE FROM tasks WHERE ended_seq IS NOT NULL AND ended_seq <= $1 \
         AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.task_id = tasks.id)",
    )
    .bind(last_dropped)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

async fn apply(conn: &mut AnyConnection, write: &Write, ctx: &Writer) -> Result<Done, Failed> {
    if let Some(id) = write.task()
        && ctx
            .lost
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(id)
    {
        return Err(StoreError::Unavailable(format!(
            "an earlier write of task `{id}` was not stored (the database failed); \
             the task cannot be changed until the server restarts"
        ))
        .into());
    }
    match write {
        Write::Insert(task, owner) => {
            let ends = task.status.state.is_terminal();
            let changed = next(conn, ctx, "changed").await?;
            let created = next(conn, ctx, "created").await?;
            let (ended_seq, ended_at) = if ends {
                (Some(next(conn, ctx, "ended").await?), Some(now_ms()))
            } else {
                (None, None)
            };
            let inserted = sqlx::query(
                "INSERT INTO tasks (id, context_id, agent, principal, body, state, terminal, \
                 changed, created, ended_seq, ended_at, version) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 1) \
                 ON CONFLICT (id) DO NOTHING",
            )
            .bind(task.id.as_str())
            .bind(task.context_id.as_str())
            .bind(owner.as_ref().map(|owner| owner.agent.to_string()))
            .bind(
                owner
                    .as_ref()
                    .and_then(|owner| owner.principal.as_deref().map(str::to_owned)),
            )
            .bind(encode(task)?)
            .bind(state_name(task.status.state)?)
            .bind(i64::from(ends))
            .bind(changed)
            .bind(created)
            .bind(ended_seq)
            .bind(ended_at)
            .execute(&mut *conn)
            .await?;
            if inserted.rows_affected() == 0 {
                // The numbers taken are only gaps; nothing else was written.
                return Err(StoreError::AlreadyExists(task.id.clone()).into());
            }
            ctx.wrote(task, 1);
            if let Some(ended) = ended_seq {
                evict_past_count(conn, ended, ctx).await?;
            }
            Ok(Done::Unit)
        }
        Write::SetStatus(id, status) => {
            let previous = update_status(conn, id, status, ctx).await?;
            Ok(Done::State(previous))
        }
        Write::SetStatusLogged(id, status, event) => {
            let previous = update_status(conn, id, status, ctx).await?;
            let seq = log_event(conn, id, event).await?;
            Ok(Done::Logged(Some(previous), None, seq))
        }
        Write::PutArtifactLogged(id, artifact, append, event) => {
            let stored = put_artifact(conn, ctx, id, artifact, *append).await?;
            let seq = log_event(conn, id, event).await?;
            Ok(Done::Logged(None, Some(stored), seq))
        }
        Write::AppendHistory(id, message) => {
            update_live(conn, ctx, id, |task| {
                task.history
                    .get_or_insert_with(Vec::new)
                    .push(message.clone());
            })
            .await?;
            Ok(Done::Unit)
        }
        Write::PutArtifact(id, artifact, append) => {
            let stored = put_artifact(conn, ctx, id, artifact, *append).await?;
            Ok(Done::Artifact(stored))
        }
        Write::AppendEvent(id, body) => {
            let exists = sqlx::query("SELECT 1 FROM tasks WHERE id = $1")
                .bind(id.as_str())
                .fetch_optional(&mut *conn)
                .await?;
            if exists.is_none() {
                return Err(StoreError::NotFound(id.clone()).into());
            }
            Ok(Done::Number(log_event(conn, id, body).await?))
        }
        Write::RememberKey(key, task) => {
            sqlx::query(
                "INSERT INTO idempotency_keys (key, task_id, at) VALUES ($1, $2, $3) \
                 ON CONFLICT (key) DO UPDATE SET task_id = excluded.task_id, at = excluded.at",
            )
            .bind(key.as_str())
            .bind(task.as_str())
            .bind(now_ms())
            .execute(&mut *conn)
            .await?;
            Ok(Done::Unit)
        }
        Write::ForgetKey(key) => {
            let row = sqlx::query("DELETE FROM idempotency_keys WHERE key = $1 RETURNING task_id")
                .bind(key.as_str())
                .fetch_optional(&mut *conn)
                .await?;
            if let Some(row) = row {
                let task: String = row.try_get(0)?;
                // Past the limits already: it goes now, as the in-memory store's
                // last release forgets an overdue task.
                let ended = current(conn, ctx, "ended").await?;
                let limit = i64::try_from(ctx.retention.finished_tasks).unwrap_or(i64::MAX);
                sqlx::query(
                    "DELETE FROM tasks WHERE id = $1 AND ended_seq IS NOT NULL \
                     AND (ended_seq <= $2 OR ended_at < $3) \
                     AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.task_id = tasks.id)",
                )
                .bind(task)
                .bind(ended.saturating_sub(limit))
                .bind(ctx.retention.max_age.map_or(i64::MIN, |age| {
                    now_ms().saturating_sub(i64::try_from(age.as_millis()).unwrap_or(i64::MAX))
                }))
                .execute(&mut *conn)
                .await?;
            }
            Ok(Done::Unit)
        }
        Write::PutPushConfig(config) => {
            let exists = sqlx::query("SELECT 1 FROM tasks WHERE id = $1")
                .bind(config.task_id.as_str())
                .fetch_optional(&mut *conn)
                .await?;
            if exists.is_none() {
                return Err(StoreError::NotFound(config.task_id.clone()).into());
            }
            let position = next(conn, ctx, "position").await?;
            sqlx::query(
                "INSERT INTO push_configs (task_id, config_id, position, body) \
                 VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (task_id, config_id) DO UPDATE SET body = excluded.body",
            )
            .bind(config.task_id.as_str())
            .bind(
                config
                    .push_notification_config
                    .id
                    .clone()
                    .unwrap_or_default(),
            )
            .bind(position)
            .bind(encode(config)?)
            .execute(&mut *conn)
            .await?;
            Ok(Done::Unit)
        }
        Write::DeletePushConfig(id, config_id) => {
            let gone =
                sqlx::query("DELETE FROM push_configs WHERE task_id = $1 AND config_id = $2")
                    .bind(id.as_str())
                    .bind(config_id.as_str())
                    .execute(&mut *conn)
                    .await?;
            Ok(Done::Flag(gone.rows_affected() > 0))
        }
        Write::DropEndedBefore(cutoff) => {
            let gone = sqlx::query(
                "DELETE FROM tasks WHERE ended_at IS NOT NULL AND ended_at < $1 \
                 AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.task_id = tasks.id)",
            )
            .bind(*cutoff)
            .execute(&mut *conn)
            .await?;
            Ok(Done::Number(gone.rows_affected()))
        }
        Write::PutRecord(namespace, key, body, expected) => {
            let found: Option<i64> =
                sqlx::query("SELECT version FROM records WHERE namespace = $1 AND key = $2")
                    .bind(namespace.as_str())
                    .bind(key.as_str())
                    .fetch_optional(&mut *conn)
                    .await?
                    .map(|row| row.try_get(0))
                    .transpose()?;
            let conflict = |found: Option<i64>| StoreError::Conflict {
                namespace: namespace.clone(),
                key: key.clone(),
                expected: *expected,
                found: found.map(to_u64),
            };
            match (found, *expected) {
                (None, Some(expected)) if expected != 0 => Err(conflict(None).into()),
                (Some(version), Some(expected)) if to_u64(version) != expected => {
                    Err(conflict(Some(version)).into())
                }
                (None, _) => {
                    let inserted = sqlx::query(
                        "INSERT INTO records (namespace, key, version, body) VALUES ($1, $2, 1, $3) \
                         ON CONFLICT (namespace, key) DO NOTHING",
                    )
                    .bind(namespace.as_str())
                    .bind(key.as_str())
                    .bind(body.as_str())
                    .execute(&mut *conn)
                    .await?;
                    if inserted.rows_affected() == 0 {
                        return Err(conflict(None).into());
                    }
                    Ok(Done::Number(1))
                }
                (Some(version), _) => {
                    let written = sqlx::query(
                        "UPDATE records SET version = version + 1, body = $1 \
                         WHERE namespace = $2 AND key = $3 AND version = $4",
                    )
                    .bind(body.as_str())
                    .bind(namespace.as_str())
                    .bind(key.as_str())
                    .bind(version)
                    .execute(&mut *conn)
                    .await?;
                    if written.rows_affected() == 0 {
                        return Err(conflict(Some(version)).into());
                    }
                    Ok(Done::Number(to_u64(version) + 1))
                }
            }
        }
        Write::DeleteRecord(namespace, key) => {
            let gone = sqlx::query("DELETE FROM records WHERE namespace = $1 AND key = $2")
                .bind(namespace.as_str())
                .bind(key.as_str())
                .execute(&mut *conn)
                .await?;
            Ok(Done::Flag(gone.rows_affected() > 0))
        }
    }
}

async fn put_artifact(
    conn: &mut AnyConnection,
    ctx: &Writer,
    id: &TaskId,
    artifact: &Artifact,
    append: bool,
) -> Result<Artifact, Failed> {
    update_live(conn, ctx, id, |task| {
        let artifacts = task.artifacts.get_or_insert_with(Vec::new);
        match artifacts
            .iter_mut()
            .find(|a| a.artifact_id == artifact.artifact_id)
        {
            Some(existing) if append => {
                existing.parts.extend(artifact.parts.iter().cloned());
                existing.clone()
            }
            Some(existing) => {
                *existing = artifact.clone();
                existing.clone()
            }
            None => {
                artifacts.push(artifact.clone());
                artifact.clone()
            }
        }
    })
    .await
}

/// Appends an event to the log of a task known to exist; its number.
async fn log_event(conn: &mut AnyConnection, id: &TaskId, body: &str) -> Result<u64, Failed> {
    // The primary key (task, seq) refuses a number another process took at the same
    // time; the retry of the batch takes the next one.
    let row = sqlx::query(
        "INSERT INTO task_events (task_id, seq, body) VALUES ($1, \
         (SELECT COALESCE(MAX(seq), 0) + 1 FROM task_events WHERE task_id = $1), $2) \
         RETURNING seq",
    )
    .bind(id.as_str())
    .bind(body)
    .fetch_one(&mut *conn)
    .await?;
    Ok(to_u64(row.try_get::<i64, _>(0)?))
}

/// A status write: always a change in the status order, even to the same state.
async fn update_status(
    conn: &mut AnyConnection,
    id: &TaskId,
    status: &TaskStatus,
    ctx: &Writer,
) -> Result<TaskState, Failed> {
    for _ in 0..VERSION_RETRIES {
        let Current { mut task, version } = read_task(conn, ctx, id).await?;
        if task.status.state.is_terminal() {
            return Err(StoreError::Terminal {
                task_id: id.clone(),
                state: task.status.state,
            }
            .into());
        }
        let previous = std::mem::replace(&mut task.status, status.clone()).state;
        let state = status.state;
        let ends = state.is_terminal();
        let changed = next(conn, ctx, "changed").await?;
        let (ended_seq, ended_at) = if ends {
            (Some(next(conn, ctx, "ended").await?), Some(now_ms()))
        } else {
            (None, None)
        };
        let written = sqlx::query(
            "UPDATE tasks SET body = $1, state = $2, terminal = $3, changed = $4, \
             ended_seq = $5, ended_at = $6, version = version + 1 \
             WHERE id = $7 AND version = $8",
        )
        .bind(encode(&task)?)
        .bind(state_name(state)?)
        .bind(i64::from(ends))
        .bind(changed)
        .bind(ended_seq)
        .bind(ended_at)
        .bind(id.as_str())
        .bind(version)
        .execute(&mut *conn)
        .await?;
        if written.rows_affected() == 1 {
            ctx.wrote(&task, version + 1);
            if let Some(ended) = ended_seq {
                evict_past_count(conn, ended, ctx).await?;
            }
            return Ok(previous);
        }
    }
    Err(StoreError::Unavailable(format!(
        "task `{id}` kept changing under this write; try again"
    ))
    .into())
}

fn owner_of(row: &AnyRow) -> Result<Option<TaskOwner>, StoreError> {
    let agent: Option<String> = row.try_get("agent").map_err(unavailable)?;
    let principal: Option<String> = row.try_get("principal").map_err(unavailable)?;
    Ok(agent.map(|agent| TaskOwner::new(agent, principal.map(Arc::from))))
}

fn unexpected(done: Done) -> StoreError {
    StoreError::Backend(format!("the task store's writer answered {done:?}").into())
}

/// Keeps only the `n` most recent messages of a history.
fn trim_history(task: &mut Task, n: usize) {
    if let Some(history) = task.history.as_mut() {
        let excess = history.len().saturating_sub(n);
        history.drain(..excess);
    }
}

#[async_trait]
impl TaskStore for SqlTaskStore {
    async fn insert(&self, task: Task) -> Result<(), StoreError> {
        match self.write(Write::Insert(task, None)).await? {
            Done::Unit => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn insert_owned(&self, task: Task, owner: TaskOwner) -> Result<(), StoreError> {
        match self.write(Write::Insert(task, Some(owner))).await? {
            Done::Unit => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn insert_owned_unanswered(
        &self,
        task: Task,
        owner: TaskOwner,
    ) -> Result<(), StoreError> {
        match self
            .send_write(Write::Insert(task, Some(owner)), true)
            .await?
        {
            Done::Unit => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn owner(&self, id: &TaskId) -> Result<Option<TaskOwner>, StoreError> {
        match self.fetch_task(id).await? {
            Some(row) => owner_of(&row),
            None => Ok(None),
        }
    }

    async fn context_principal(
        &self,
        context_id: &ContextId,
    ) -> Result<Option<Arc<str>>, StoreError> {
        let row = sqlx::query(
            "SELECT principal FROM (SELECT principal, created FROM tasks WHERE context_id = $1 \
             ORDER BY created DESC LIMIT $2) recent WHERE principal IS NOT NULL \
             ORDER BY created DESC LIMIT 1",
        )
        .bind(context_id.as_str())
        .bind(CONTEXT_TASKS)
        .fetch_optional(&self.pool)
        .await
        .map_err(unavailable)?;
        Ok(row
            .map(|row| row.try_get::<String, _>(0))
            .transpose()
            .map_err(unavailable)?
            .map(Arc::from))
    }

    async fn get(
        &self,
        id: &TaskId,
        history_length: Option<usize>,
    ) -> Result<Option<Task>, StoreError> {
        let Some(row) = self.fetch_task(id).await? else {
            return Ok(None);
        };
        let body: String = row.try_get(0).map_err(unavailable)?;
        let mut task = decode_task(&body)?;
        if let Some(n) = history_length {
            trim_history(&mut task, n);
        }
        Ok(Some(task))
    }

    async fn set_status(&self, id: &TaskId, status: TaskStatus) -> Result<TaskState, StoreError> {
        match self.write(Write::SetStatus(id.clone(), status)).await? {
            Done::State(state) => Ok(state),
            other => Err(unexpected(other)),
        }
    }

    async fn set_status_logged(
        &self,
        id: &TaskId,
        status: TaskStatus,
        event: &StreamEvent,
    ) -> Result<(TaskState, Option<u64>), StoreError> {
        match self
            .write(Write::SetStatusLogged(id.clone(), status, encode(event)?))
            .await?
        {
            Done::Logged(Some(previous), _, seq) => Ok((previous, Some(seq))),
            other => Err(unexpected(other)),
        }
    }

    async fn put_artifact_logged(
        &self,
        id: &TaskId,
        artifact: Artifact,
        append: bool,
        event: &StreamEvent,
    ) -> Result<(Artifact, Option<u64>), StoreError> {
        match self
            .write(Write::PutArtifactLogged(
                id.clone(),
                artifact,
                append,
                encode(event)?,
            ))
            .await?
        {
            Done::Logged(_, Some(stored), seq) => Ok((stored, Some(seq))),
            other => Err(unexpected(other)),
        }
    }

    async fn append_history(&self, id: &TaskId, message: Message) -> Result<(), StoreError> {
        match self
            .write(Write::AppendHistory(id.clone(), message))
            .await?
        {
            Done::Unit => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn append_history_unanswered(
        &self,
        id: &TaskId,
        message: Message,
    ) -> Result<(), StoreError> {
        match self
            .send_write(Write::AppendHistory(id.clone(), message), true)
            .await?
        {
            Done::Unit => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn put_artifact(
        &self,
        id: &TaskId,
        artifact: Artifact,
        append: bool,
    ) -> Result<Artifact, StoreError> {
        match self
            .write(Write::PutArtifact(id.clone(), artifact, append))
            .await?
        {
            Done::Artifact(artifact) => Ok(artifact),
            other => Err(unexpected(other)),
        }
    }

    async fn list(
        &self,
        filter: &TaskFilter<'_>,
        page_size: usize,
        before: Option<u64>,
    ) -> Result<TaskPage, StoreError> {
        // The filter is code, so every task is looked at (for `total`), newest change
        // first, as the in-memory store does.
        let rows =
            sqlx::query("SELECT body, agent, principal, changed FROM tasks ORDER BY changed DESC")
                .fetch_all(&self.pool)
                .await
                .map_err(unavailable)?;
        let mut page = TaskPage::default();
        let mut last = None;
        for row in rows {
            let body: String = row.try_get(0).map_err(unavailable)?;
            let change = to_u64(row.try_get::<i64, _>(3).map_err(unavailable)?);
            let task = decode_task(&body)?;
            let owner = owner_of(&row)?;
            if !filter(&task, owner.as_ref()) {
                continue;
            }
            page.total += 1;
            if before.is_some_and(|before| change >= before) {
                continue;
            }
            if page.tasks.len() < page_size {
                page.tasks.push(task);
                last = Some(change);
            } else if page.next.is_none() {
                page.next = last;
            }
        }
        Ok(page)
    }

    async fn context_history(
        &self,
        context_id: &ContextId,
        before: Option<&MessageId>,
        limit: usize,
    ) -> Result<Vec<Message>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "SELECT body FROM tasks WHERE context_id = $1 ORDER BY created DESC LIMIT $2",
        )
        .bind(context_id.as_str())
        .bind(CONTEXT_TASKS)
        .fetch_all(&self.pool)
        .await
        .map_err(unavailable)?;
        let mut newest_first = Vec::with_capacity(limit.min(64));
        let mut skipped = Vec::new();
        let mut seen_before = before.is_none();
        'tasks: for row in rows {
            let body: String = row.try_get(0).map_err(unavailable)?;
            let task = decode_task(&body)?;
            for message in task.history.into_iter().flatten().rev() {
                if !seen_before {
                    if before == Some(&message.message_id) {
                        seen_before = true;
                    } else if skipped.len() < limit {
                        skipped.push(message);
                    }
                    continue;
                }
                newest_first.push(message);
                if newest_first.len() == limit {
                    break 'tasks;
                }
            }
        }
        if !seen_before {
            newest_first = skipped;
        }
        newest_first.reverse();
        Ok(newest_first)
    }

    async fn append_event(
        &self,
        id: &TaskId,
        event: &StreamEvent,
    ) -> Result<Option<u64>, StoreError> {
        match self
            .write(Write::AppendEvent(id.clone(), encode(event)?))
            .await?
        {
            Done::Number(seq) => Ok(Some(seq)),
            other => Err(unexpected(other)),
        }
    }

    async fn events_after(
        &self,
        id: &TaskId,
        after: u64,
    ) -> Result<Vec<(u64, StreamEvent)>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, body FROM task_events WHERE task_id = $1 AND seq > $2 ORDER BY seq",
        )
        .bind(id.as_str())
        .bind(to_i64(after))
        .fetch_all(&self.pool)
        .await
        .map_err(unavailable)?;
        rows.iter()
            .map(|row| {
                let seq: i64 = row.try_get(0).map_err(unavailable)?;
                let body: String = row.try_get(1).map_err(unavailable)?;
                Ok((to_u64(seq), decode_event(&body)?))
            })
            .collect()
    }

    async fn remember_key(&self, key: &str, task: &TaskId) -> Result<(), StoreError> {
        match self
            .write(Write::RememberKey(key.to_owned(), task.clone()))
            .await?
        {
            Done::Unit => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn recall_key(&self, key: &str, since: SystemTime) -> Result<Option<TaskId>, StoreError> {
        let row = sqlx::query("SELECT task_id FROM idempotency_keys WHERE key = $1 AND at >= $2")
            .bind(key)
            .bind(millis(since))
            .fetch_optional(&self.pool)
            .await
            .map_err(unavailable)?;
        Ok(row
            .map(|row| row.try_get::<String, _>(0))
            .transpose()
            .map_err(unavailable)?
            .map(TaskId::new))
    }

    async fn forget_key(&self, key: &str) -> Result<(), StoreError> {
        match self.write(Write::ForgetKey(key.to_owned())).await? {
            Done::Unit => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn put_push_config(&self, config: &TaskPushNotificationConfig) -> Result<(), StoreError> {
        match self.write(Write::PutPushConfig(config.clone())).await? {
            Done::Unit => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn push_configs(
        &self,
        id: &TaskId,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        let rows =
            sqlx::query("SELECT body FROM push_configs WHERE task_id = $1 ORDER BY position")
                .bind(id.as_str())
                .fetch_all(&self.pool)
                .await
                .map_err(unavailable)?;
        rows.iter()
            .map(|row| {
                let body: String = row.try_get(0).map_err(unavailable)?;
                serde_json::from_str(&body).map_err(|e| corrupt("push config", e))
            })
            .collect()
    }

    async fn delete_push_config(&self, id: &TaskId, config_id: &str) -> Result<bool, StoreError> {
        match self
            .write(Write::DeletePushConfig(id.clone(), config_id.to_owned()))
            .await?
        {
            Done::Flag(gone) => Ok(gone),
            other => Err(unexpected(other)),
        }
    }

    async fn tasks_with_push_configs(&self) -> Result<Vec<TaskId>, StoreError> {
        let rows = sqlx::query("SELECT DISTINCT task_id FROM push_configs ORDER BY task_id")
            .fetch_all(&self.pool)
            .await
            .map_err(unavailable)?;
        rows.iter()
            .map(|row| {
                Ok(TaskId::new(
                    row.try_get::<String, _>(0).map_err(unavailable)?,
                ))
            })
            .collect()
    }

    async fn unfinished(&self) -> Result<Vec<(TaskId, TaskState)>, StoreError> {
        let rows = sqlx::query("SELECT id, state FROM tasks WHERE terminal = 0 ORDER BY created")
            .fetch_all(&self.pool)
            .await
            .map_err(unavailable)?;
        rows.iter()
            .map(|row| {
                let id: String = row.try_get(0).map_err(unavailable)?;
                let state: String = row.try_get(1).map_err(unavailable)?;
                Ok((TaskId::new(id), state_of(&state)?))
            })
            .collect()
    }

    async fn drop_ended_before(&self, cutoff: SystemTime) -> Result<usize, StoreError> {
        match self.write(Write::DropEndedBefore(millis(cutoff))).await? {
            Done::Number(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
            other => Err(unexpected(other)),
        }
    }

    async fn put_record(
        &self,
        namespace: &str,
        key: &str,
        value: &serde_json::Value,
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        match self
            .write(Write::PutRecord(
                namespace.to_owned(),
                key.to_owned(),
                encode(value)?,
                expected,
            ))
            .await?
        {
            Done::Number(version) => Ok(version),
            other => Err(unexpected(other)),
        }
    }

    async fn get_record(&self, namespace: &str, key: &str) -> Result<Option<Record>, StoreError> {
        let row =
            sqlx::query("SELECT version, body FROM records WHERE namespace = $1 AND key = $2")
                .bind(namespace)
                .bind(key)
                .fetch_optional(&self.pool)
                .await
                .map_err(unavailable)?;
        row.map(|row| {
            let version: i64 = row.try_get(0).map_err(unavailable)?;
            let body: String = row.try_get(1).map_err(unavailable)?;
            let value = serde_json::from_str(&body).map_err(|e| corrupt("record", e))?;
            Ok(Record::new(key, to_u64(version), value))
        })
        .transpose()
    }

    async fn list_records(&self, namespace: &str) -> Result<Vec<Record>, StoreError> {
        let rows =
            sqlx::query("SELECT key, version, body FROM records WHERE namespace = $1 ORDER BY key")
                .bind(namespace)
                .fetch_all(&self.pool)
                .await
                .map_err(unavailable)?;
        rows.iter()
            .map(|row| {
                let key: String = row.try_get(0).map_err(unavailable)?;
                let version: i64 = row.try_get(1).map_err(unavailable)?;
                let body: String = row.try_get(2).map_err(unavailable)?;
                let value = serde_json::from_str(&body).map_err(|e| corrupt("record", e))?;
                Ok(Record::new(key, to_u64(version), value))
            })
            .collect()
    }

    async fn delete_record(&self, namespace: &str, key: &str) -> Result<bool, StoreError> {
        match self
            .write(Write::DeleteRecord(namespace.to_owned(), key.to_owned()))
            .await?
        {
            Done::Flag(gone) => Ok(gone),
            other => Err(unexpected(other)),
        }
    }
}
