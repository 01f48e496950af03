//! The durable [`TaskStore`]: an embedded SQLite file or a PostgreSQL database, with one
//! code path. Reads go through one sqlx `Any` pool. The writer's statements, the same
//! for both databases, go through its `Link`, on a thread of its own: for PostgreSQL
//! a connection of its own (a pool of one, besides the readers' pool); for the
//! embedded file a SQLite connection of its own. The embedded store's point reads (a
//! task by its id, a conversation's principal) also run on SQLite connections of
//! their own, in place, rather than hop to sqlx's worker thread and back.
//!
//! # Acknowledged means durable, and fast: group commit
//!
//! Every write goes to one writer per store. It takes whatever writes are waiting
//! (up to [`BATCH`]), applies them in one transaction, commits once (one fsync), and
//! only then answers each: a write a caller sees acknowledged is on disk. Concurrent
//! sends therefore share transactions; a lone send pays one commit per write. Within a
//! batch a task's writes are coalesced: its row is written once, however many of its
//! writes the batch holds, and the batch's log events go in a few rows per statement
//! (see the `writer` module). A write
//! that breaks a rule (a terminal task, a taken id) is refused before it touches the
//! database and answered at once. The writes answered before their commit are
//! [`TaskStore::append_history_unanswered`], answered once applied in the open
//! transaction, and [`TaskStore::insert_owned_unanswered`], answered once queued
//! (the insert of a freshly minted id breaks no rule): the task's next answered
//! write commits with or after them, and fails if they were refused or lost.
//!
//! # Several processes on one database
//!
//! Nothing here holds only inside one process. Each task row has a `version`; an
//! update names the version it was computed from and is redone on a fresh read when
//! another process got there first, so no concurrent update is lost. Numbers (status-change
//! order, ended order, event sequence) come from rows of the database, which
//! PostgreSQL locks until the transaction that took one commits.
//!
//! # Bad days
//!
//! A database that cannot be reached, or refuses a write (full disk, a locked or
//! corrupt file), fails the operation with [`StoreError::Unavailable`] naming the
//! cause; nothing is acknowledged that was not committed. The pool opens new
//! connections as it needs them, and the writer and the point readers let go of a
//! connection the database failed and open another on their next use, so the store
//! recovers by itself when the database returns.

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
use sqlx::{AnyPool, Executor, Row};
use tokio::sync::{mpsc, oneshot};

use crate::contract::{Record, Retention, StoreError, TaskFilter, TaskOwner, TaskPage, TaskStore};

mod link;
mod writer;

use link::{Embedded, PointReads, Pooled, Readers};
pub use writer::BATCH;
use writer::{Answered, Done, Job, Settled, Write, Writer, write_loop};

/// The file of the embedded store inside its data directory.
pub const EMBEDDED_FILE: &str = "agentyard.db";

/// How many tasks of one conversation [`TaskStore::context_history`] looks at, as the
/// in-memory store remembers.
const CONTEXT_TASKS: i64 = 256;

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
    /// PostgreSQL's writer's own pool (its one connection), closed with the store.
    writer_pool: Option<AnyPool>,
    writer: mpsc::Sender<Job>,
    /// The embedded store's recently settled tasks, as its writer committed them.
    settled: Option<Arc<Settled>>,
    /// Where reads of a row by its key are made ([`PointReads`]).
    point_reads: PointReads,
    location: StoreLocation,
    /// The embedded store's lock on its directory, held while the store is open: a
    /// second process on the same directory is refused at open, by name, rather than
    /// both writing one file.
    _lock: Option<std::fs::File>,
}

pub use crate::data_dir::LOCK_FILE;

/// The schema, shipped in the crate and applied at open.
#[derive(Debug)]
struct Schema;

impl MigrationSource<'static> for Schema {
    fn resolve(self) -> BoxFuture<'static, Result<Vec<Migration>, sqlx::error::BoxDynError>> {
        /// One of the crate's migrations, applied in a transaction.
        fn migration(version: i64, name: &'static str, sql: &'static str) -> Migration {
            let (name, sql) = (Cow::Borrowed(name), Cow::Borrowed(sql));
            Migration::new(version, name, MigrationType::Simple, sql, false)
        }
        Box::pin(async {
            Ok(vec![
                migration(1, "tasks", include_str!("../migrations/0001_tasks.sql")),
                migration(
                    2,
                    "context principal index",
                    include_str!("../migrations/0002_context_principal_index.sql"),
                ),
                migration(
                    3,
                    "partial indexes",
                    include_str!("../migrations/0003_partial_indexes.sql"),
                ),
                migration(
                    4,
                    "logs without foreign keys",
                    include_str!("../migrations/0004_logs_without_foreign_keys.sql"),
                ),
            ])
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
        let (url, file, lock) = match &location {
            StoreLocation::Embedded(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| failed(&e))?;
                let lock = crate::data_dir::lock(dir).map_err(|e| failed(&e))?;
                let file = dir.join(EMBEDDED_FILE);
                (embedded_url(&file), Some(file), Some(lock))
            }
            StoreLocation::Postgres(url) => (url.clone(), None, None),
        };
        let sqlite = file.is_some();
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
                        // on disk when it returns. (No foreign keys: the writer deletes
                        // a task's log and configs with it, migration 0004.)
                        conn.execute(
                            "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                             PRAGMA busy_timeout = 5000;",
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
        let settled = sqlite.then(|| Arc::new(Settled::default()));
        let ctx = match &settled {
            Some(settled) => Writer::embedded(&pool, retention, Arc::clone(settled))
                .await
                .map_err(|e| failed(&e))?,
            None => Writer::shared(retention),
        };
        let point_reads = match &file {
            Some(file) => PointReads::InPlace(Readers::new(file.clone(), pool.clone())),
            None => PointReads::Pool(pool.clone()),
        };
        // Each writer runs on a thread of its own, with a runtime of its own. The
        // embedded one blocks on SQLite (and on its fsync), which must stay off the
        // runtime's workers. PostgreSQL's makes several round trips a batch, and on
        // the runtime's workers each answer waited behind every request they were
        // serving before the writer's task ran again (a `BEGIN` that PostgreSQL
        // answers at once took ~0.4 ms under the store suite's load); on its own
        // thread, with its own connection (its own pool of one, made on that thread,
        // so the socket's readiness reaches it there), it runs as soon as the answer
        // arrives: +13-50% sends a second (docs/benchmarks.md, §7).
        let mut writer_pool = None;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| failed(&e))?;
        let spawned = match file {
            Some(file) => {
                let link = Embedded::new(file, pool.clone());
                let loop_pool = pool.clone();
                std::thread::Builder::new()
                    .name("agentyard-store-writer".into())
                    .spawn(move || runtime.block_on(write_loop(loop_pool, link, jobs, ctx)))
            }
            None => {
                let own = AnyPoolOptions::new()
                    .max_connections(1)
                    .acquire_timeout(Duration::from_secs(5))
                    .test_before_acquire(true)
                    .connect_lazy_with(url.parse().map_err(|e| failed(&e))?);
                let loop_pool = own.clone();
                writer_pool = Some(own);
                std::thread::Builder::new()
                    .name("agentyard-store-writer".into())
                    .spawn(move || {
                        runtime.block_on(write_loop(
                            loop_pool.clone(),
                            Pooled::new(loop_pool),
                            jobs,
                            ctx,
                        ));
                    })
            }
        };
        spawned.map_err(|e| failed(&e))?;
        Ok(Self {
            pool,
            writer_pool,
            writer,
            settled,
            point_reads,
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
        self.send_write(write, Answered::Committed).await
    }

    /// Sends a write to the writer; its answer when [`Answered`] says.
    async fn send_write(&self, write: Write, answered: Answered) -> Result<Done, StoreError> {
        let stopped = || StoreError::Unavailable("the task store's writer has stopped".into());
        if answered == Answered::Queued {
            self.writer
                .send(Job {
                    write,
                    reply: None,
                    answered,
                })
                .await
                .map_err(|_| stopped())?;
            return Ok(Done::Unit);
        }
        let (reply, answer) = oneshot::channel();
        self.writer
            .send(Job {
                write,
                reply: Some(reply),
                answered,
            })
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    async fn fetch_task(&self, id: &TaskId) -> Result<Option<TaskRow>, StoreError> {
        const SQL: &str = "SELECT body, agent, principal FROM tasks WHERE id = $1";
        let row = self
            .point_reads
            .fetch_optional(SQL, &[id.as_str().into()])
            .await
            .map_err(unavailable)?;
        row.map(|row| -> Result<TaskRow, link::DbError> {
            Ok(TaskRow {
                body: row.text(0)?.to_owned(),
                agent: row.opt_text(1)?.map(str::to_owned),
                principal: row.opt_text(2)?.map(str::to_owned),
            })
        })
        .transpose()
        .map_err(unavailable)
    }

    /// Closes the store after the writes already sent are done: its pool now, the
    /// writer's and the point readers' own connections as they next look; later
    /// reads and writes fail.
    pub async fn close(&self) {
        if let Some(own) = &self.writer_pool {
            own.close().await;
        }
        self.pool.close().await;
    }
}

fn embedded_url(file: &Path) -> String {
    format!("sqlite://{}?mode=rwc", file.display())
}

/// A task's row as a read by its id gives it.
struct TaskRow {
    body: String,
    agent: Option<String>,
    principal: Option<String>,
}

impl TaskRow {
    /// Its first three columns: body, agent, principal.
    fn read(row: &AnyRow) -> Result<Self, sqlx::Error> {
        Ok(Self {
            body: row.try_get(0)?,
            agent: row.try_get(1)?,
            principal: row.try_get(2)?,
        })
    }

    fn owner(self) -> Option<TaskOwner> {
        let principal = self.principal.map(Arc::from);
        self.agent.map(|agent| TaskOwner::new(agent, principal))
    }
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
            .send_write(Write::Insert(task, Some(owner)), Answered::Queued)
            .await?
        {
            Done::Unit => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn owner(&self, id: &TaskId) -> Result<Option<TaskOwner>, StoreError> {
        Ok(self.fetch_task(id).await?.and_then(TaskRow::owner))
    }

    async fn context_principal(
        &self,
        context_id: &ContextId,
    ) -> Result<Option<Arc<str>>, StoreError> {
        // Served by the partial index `tasks_principal_by_context` alone (migration 0003).
        const SQL: &str = "SELECT principal FROM tasks \
             WHERE context_id = $1 AND principal IS NOT NULL ORDER BY created DESC LIMIT 1";
        let unowned = self.settled.as_ref().map(|settled| &settled.unowned);
        let mark = match unowned.map(|unowned| unowned.lookup(context_id)) {
            Some(None) => return Ok(None),
            Some(Some(mark)) => Some(mark),
            None => None,
        };
        let row = self
            .point_reads
            .fetch_optional(SQL, &[context_id.as_str().into()])
            .await
            .map_err(unavailable)?;
        let principal = row
            .map(|row| row.text(0).map(Arc::from))
            .transpose()
            .map_err(unavailable)?;
        if principal.is_none()
            && let (Some(unowned), Some(mark)) = (unowned, mark)
        {
            unowned.remember(context_id, mark);
        }
        Ok(principal)
    }

    async fn get(
        &self,
        id: &TaskId,
        history_length: Option<usize>,
    ) -> Result<Option<Task>, StoreError> {
        let mut task = match self.settled.as_ref().and_then(|settled| settled.get(id)) {
            Some(task) => task,
            None => {
                let Some(row) = self.fetch_task(id).await? else {
                    return Ok(None);
                };
                decode_task(&row.body)?
            }
        };
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
        update: TaskStatusUpdateEvent,
    ) -> Result<(TaskState, Option<u64>), StoreError> {
        // The update is written as the stream event it is: the event's JSON is the
        // update's own (it carries its `kind`).
        let body = encode(&update)?;
        match self
            .write(Write::SetStatusLogged(id.clone(), update.status, body))
            .await?
        {
            Done::Logged(Some(previous), _, seq) => Ok((previous, Some(seq))),
            other => Err(unexpected(other)),
        }
    }

    async fn put_artifact_logged(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
        event: &StreamEvent,
    ) -> Result<(Arc<Artifact>, Option<u64>), StoreError> {
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

    async fn append_history(&self, id: &TaskId, message: Arc<Message>) -> Result<(), StoreError> {
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
        message: Arc<Message>,
    ) -> Result<(), StoreError> {
        match self
            .send_write(Write::AppendHistory(id.clone(), message), Answered::Applied)
            .await?
        {
            Done::Unit => Ok(()),
            other => Err(unexpected(other)),
        }
    }

    async fn put_artifact(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
    ) -> Result<Arc<Artifact>, StoreError> {
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
            let change = to_u64(row.try_get::<i64, _>(3).map_err(unavailable)?);
            let row = TaskRow::read(&row).map_err(unavailable)?;
            let task = decode_task(&row.body)?;
            let owner = row.owner();
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
    ) -> Result<Vec<Arc<Message>>, StoreError> {
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
