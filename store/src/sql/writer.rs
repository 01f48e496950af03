//! The writer of a [`SqlTaskStore`](super::SqlTaskStore): group commit, with each
//! batch's task changes coalesced.
//!
//! Every write goes to one queue. The writer takes whatever is waiting (up to
//! [`BATCH`]), applies it in one transaction, commits once (one fsync), and only then
//! answers each: a write a caller sees acknowledged is on disk.
//!
//! Inside a batch, a task's writes change its row in memory ([`Staged`]); each row
//! is written once, when the batch ends (or before a write that reads the tables),
//! and the batch's new rows, changed rows and log events each go in with a few
//! multi-row statements. A send's insert, `working`, reply and final status were
//! about seven statements; a batch of a dozen sends is now about five. The writer
//! also remembers the live tasks as it last wrote them, so an update does not read
//! its row back first, and (the embedded store) the tasks that last committed
//! settled, so the read a waiting send makes once its task settles needs no
//! database ([`Settled`]).
//!
//! Nothing here holds only inside one process: a row update names the version it
//! was computed from, and when another process wrote the task in between (the update
//! finds no row of that version), the batch is redone a write at a time on fresh
//! reads. On PostgreSQL, batches of different processes take turns (see
//! `Writer::turn`); numbers (status-change order, ended order) are taken per
//! batch from the `counters` rows; the event log's primary key refuses a sequence
//! number another process took first.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use agentyard_transport::a2a::{
    Artifact, Message, Task, TaskPushNotificationConfig, TaskState, TaskStatus,
};
use agentyard_transport::{ContextId, TaskId};
use sqlx::{AnyPool, Row as _};
use tokio::sync::{mpsc, oneshot};

use super::link::{Arg, DbError, Dialect, Link, Row};
use super::{decode_task, encode, now_ms, state_name, to_u64};
use crate::contract::{Retention, StoreError, TaskOwner};

/// The most writes one transaction carries.
pub const BATCH: usize = 256;

/// How often a write is redone when another process changed its task in between.
const VERSION_RETRIES: usize = 16;

/// How many live tasks the writer remembers; past it, it starts over (a cache only:
/// a forgotten task is read back from its row).
const REMEMBERED: usize = 65_536;

/// How many settled tasks the embedded store answers reads of from memory.
const SETTLED: usize = 1024;

/// How many conversations the embedded store remembers to have no principal.
const UNOWNED: usize = 16_384;

/// How many inserts answered early and then lost the writer marks (until the
/// process restarts), so that their tasks' later writes name the database's failure
/// rather than a missing task. Past it, they fail as not found: a database down for
/// long fails every queued insert, and the marks must not grow with that.
const LOST_INSERTS: usize = 10_000;

/// One write, sent to the writer.
#[derive(Debug)]
pub(super) enum Write {
    Insert(Task, Option<TaskOwner>),
    SetStatus(TaskId, TaskStatus),
    SetStatusLogged(TaskId, TaskStatus, String),
    PutArtifactLogged(TaskId, Arc<Artifact>, bool, String),
    AppendHistory(TaskId, Arc<Message>),
    PutArtifact(TaskId, Arc<Artifact>, bool),
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
pub(super) enum Done {
    Unit,
    State(TaskState),
    Artifact(Arc<Artifact>),
    Logged(Option<TaskState>, Option<Arc<Artifact>>, u64),
    Number(u64),
    Flag(bool),
}

/// A write and whoever waits for it.
#[derive(Debug)]
pub(super) struct Job {
    pub(super) write: Write,
    /// Taken when the write is answered.
    pub(super) reply: Option<oneshot::Sender<Result<Done, StoreError>>>,
    /// When it is answered.
    pub(super) answered: Answered,
}

/// When a write is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answered {
    /// Once its transaction committed: every write a caller is acknowledged on.
    Committed,
    /// Once applied in the open transaction (its rules checked), before it commits: a
    /// write nobody is answered on before a later write of its task, which the writer
    /// commits with or after it
    /// ([`TaskStore::append_history_unanswered`](crate::TaskStore::append_history_unanswered)).
    Applied,
    /// Once queued: as [`Answered::Applied`], for a write whose rules cannot fail but
    /// for a broken database (the insert of a freshly minted task,
    /// [`TaskStore::insert_owned_unanswered`](crate::TaskStore::insert_owned_unanswered)).
    /// If it is refused or lost after all, its task's later writes fail.
    Queued,
}

impl Job {
    fn answer(&mut self, answer: Result<Done, StoreError>) {
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(answer);
        }
    }

    /// The write did not happen. If it was answered already, its task is marked lost,
    /// so that the later write it was answered on behalf of fails instead of
    /// acknowledging a task without it. A lost insert would fail its task's later
    /// writes anyway (its task is not there); it is marked too, up to
    /// [`LOST_INSERTS`], so that they say the database failed, not that the task is
    /// unknown.
    fn fail(mut self, ctx: &mut Writer, message: String) {
        if !matches!(self.write, Write::Insert(..)) {
            self.mark_lost(ctx);
        } else if ctx.lost_inserts < LOST_INSERTS && self.mark_lost(ctx) {
            ctx.lost_inserts += 1;
        }
        self.answer(Err(StoreError::Unavailable(message)));
    }

    /// Refused (with `error`) after it may have been answered already: an answer
    /// cannot be taken back, so then its task is marked lost as for [`Job::fail`]
    /// (an insert too: its id is another task's, which its later writes must not
    /// change).
    fn refuse(&mut self, ctx: &mut Writer, error: StoreError) {
        self.mark_lost(ctx);
        self.answer(Err(error));
    }

    /// Whether it marked the task (it does when the write was answered already).
    fn mark_lost(&self, ctx: &mut Writer) -> bool {
        if self.reply.is_none()
            && let Some(id) = self.write.task()
        {
            ctx.lost.insert(id.clone());
            return true;
        }
        false
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

/// Why a write did not happen.
enum Failed {
    /// It broke a rule (a terminal task, a missing one): answered at once, nothing
    /// written.
    Refused(StoreError),
    /// The database failed: the transaction is lost.
    Database(DbError),
    /// A row was not as the batch computed it: another process wrote the task, or
    /// holds its id already. The batch is redone a write at a time.
    Conflict(Conflict),
}

enum Conflict {
    /// An insert found the id taken.
    Taken(TaskId),
    /// An update found the row at another version.
    Changed(TaskId),
}

impl From<DbError> for Failed {
    fn from(error: DbError) -> Self {
        Self::Database(error)
    }
}

impl From<StoreError> for Failed {
    fn from(error: StoreError) -> Self {
        Self::Refused(error)
    }
}

/// The counters the writer numbers rows with.
#[derive(Debug, Clone, Copy)]
enum Counter {
    Changed,
    Created,
    Ended,
    Position,
}

impl Counter {
    fn name(self) -> &'static str {
        match self {
            Self::Changed => "changed",
            Self::Created => "created",
            Self::Ended => "ended",
            Self::Position => "position",
        }
    }
}

/// A task as the writer last wrote it.
#[derive(Debug, Clone)]
struct Current {
    task: Task,
    /// The row's version (0: not stored yet).
    version: i64,
    /// The last number of its event log.
    events: i64,
}

/// The embedded store's tasks that last committed settled (ended, or waiting for
/// input), as committed: every waiting send reads its task back once it settles, and
/// answering that from here spares a reader connection, whose page cache each commit
/// empties. Only the embedded store keeps one: its directory lock makes its writer the
/// file's only writer, so what the writer last committed of a task is what the file
/// holds. The writer forgets a task here before it writes the task again (or deletes
/// it) and adds it back only once that is committed.
#[derive(Debug, Default)]
pub(super) struct Settled {
    inner: Mutex<SettledTasks>,
    /// Conversations known to have no task with a principal.
    pub(super) unowned: Unowned,
}

/// The embedded store's conversations known to have no task with a principal: every
/// send that names a conversation asks who it belongs to, and most conversations
/// belong to nobody (unauthenticated callers). Remembering that spares a read of
/// the file per send. Only a new task with a principal makes the answer wrong, and
/// only this process's writer inserts tasks (the directory lock), so the store
/// forgets a conversation here when the batch that writes such a task commits (or
/// fails), and a read that overlapped that does not remember what it read. Until
/// then the file answers the same: an uncommitted task is not in it. Deleting tasks
/// can only leave a conversation unowned.
#[derive(Debug, Default)]
pub(super) struct Unowned {
    inner: Mutex<UnownedConversations>,
}

#[derive(Debug, Default)]
struct UnownedConversations {
    known: HashSet<ContextId>,
    /// Oldest first, to drop the oldest past [`UNOWNED`]; may name conversations
    /// forgotten since.
    order: VecDeque<ContextId>,
    /// How many times a conversation was forgotten: a read that saw this change
    /// while it ran is not remembered.
    owned: u64,
}

impl Unowned {
    fn lock(&self) -> std::sync::MutexGuard<'_, UnownedConversations> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `None` when `context` is known to have no task with a principal; else where
    /// the forgetting stands, for [`remember`](Self::remember) after the read.
    pub(super) fn lookup(&self, context: &ContextId) -> Option<u64> {
        let unowned = self.lock();
        (!unowned.known.contains(context)).then_some(unowned.owned)
    }

    /// Remembers that a read begun at `mark` ([`lookup`](Self::lookup)) found no
    /// principal for `context`,
    /// unless a conversation was forgotten since (the read may predate its owner).
    pub(super) fn remember(&self, context: &ContextId, mark: u64) {
        let mut unowned = self.lock();
        if unowned.owned != mark || !unowned.known.insert(context.clone()) {
            return;
        }
        unowned.order.push_back(context.clone());
        while unowned.order.len() > UNOWNED {
            if let Some(old) = unowned.order.pop_front() {
                unowned.known.remove(&old);
            }
        }
    }

    /// A task with a principal joins `context`.
    pub(super) fn owned(&self, context: &ContextId) {
        let mut unowned = self.lock();
        unowned.owned += 1;
        unowned.known.remove(context);
    }
}

#[derive(Debug, Default)]
struct SettledTasks {
    tasks: HashMap<TaskId, Task>,
    /// Oldest first, to drop the oldest past [`SETTLED`]; may name tasks forgotten
    /// since.
    order: VecDeque<TaskId>,
}

impl Settled {
    fn lock(&self) -> std::sync::MutexGuard<'_, SettledTasks> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The task as last committed, if it settled then and is remembered.
    pub(super) fn get(&self, id: &TaskId) -> Option<Task> {
        self.lock().tasks.get(id).cloned()
    }

    fn forget(&self, id: &TaskId) {
        self.lock().tasks.remove(id);
    }

    fn committed(&self, tasks: Vec<Task>) {
        let mut settled = self.lock();
        for task in tasks {
            settled.order.push_back(task.id.clone());
            settled.tasks.insert(task.id.clone(), task);
        }
        while settled.order.len() > SETTLED {
            if let Some(old) = settled.order.pop_front() {
                settled.tasks.remove(&old);
            }
        }
    }
}

/// What the writer keeps between writes: the retention, where numbers come from, the
/// live tasks it last wrote. Owned by the writer's task alone.
#[derive(Debug)]
pub(super) struct Writer {
    retention: Retention,
    /// The embedded store's counters, in memory: its directory lock makes this process
    /// the file's only writer, so a number needs no statement of its own (they start
    /// past the largest number stored). `None` for PostgreSQL, whose processes share
    /// the `counters` rows.
    local: Option<[i64; 4]>,
    /// The live tasks as last written, so an update does not read its row first. A
    /// row another process changed since is caught by its version. Emptied whenever a
    /// transaction fails, since it may hold what was not committed.
    live: HashMap<TaskId, Current>,
    /// Tasks an early-answered write of which was not committed: their later writes
    /// are refused, so nothing acknowledged lacks a write it was answered after.
    lost: HashSet<TaskId>,
    /// How many of `lost` are inserts ([`LOST_INSERTS`]).
    lost_inserts: usize,
    /// The embedded store's settled tasks, shared with its readers.
    settled: Option<Arc<Settled>>,
    /// What the open transaction last wrote of each task it wrote or deleted: the
    /// task, if it settled, for [`Settled`] once committed; `None` if it did not, or
    /// is deleted.
    written: HashMap<TaskId, Option<Task>>,
    /// The conversations the open transaction gave a task with a principal: forgotten
    /// as unowned ([`Unowned`]) once it commits or fails, so that a read made while it
    /// was open is not left remembered.
    owned: Vec<ContextId>,
    /// The last ended number retention dropped through, in what this writer
    /// committed (0: none yet, or forgotten after a failed transaction): ended tasks
    /// are dropped a chunk at a time ([`eviction_chunk`]).
    evicted: i64,
    /// Chunks dropped: every [`SWEEP_EVERY`]th looks from the oldest ended task on.
    evictions: u32,
}

impl Writer {
    /// The writer of an embedded store, reading where its counters stand.
    pub(super) async fn embedded(
        pool: &AnyPool,
        retention: Retention,
        settled: Arc<Settled>,
    ) -> Result<Self, sqlx::Error> {
        let row = sqlx::query(
            "SELECT COALESCE(MAX(changed), 0), COALESCE(MAX(created), 0), \
             COALESCE(MAX(ended_seq), 0), \
             (SELECT COALESCE(MAX(position), 0) FROM push_configs) FROM tasks",
        )
        .fetch_one(pool)
        .await?;
        let mut counters = [0; 4];
        for (n, counter) in counters.iter_mut().enumerate() {
            *counter = row.try_get::<i64, _>(n)?;
        }
        Ok(Self {
            local: Some(counters),
            settled: Some(settled),
            ..Self::shared(retention)
        })
    }

    /// The writer of a database other processes may write too.
    pub(super) fn shared(retention: Retention) -> Self {
        Self {
            retention,
            local: None,
            live: HashMap::new(),
            lost: HashSet::new(),
            lost_inserts: 0,
            evicted: 0,
            evictions: 0,
            settled: None,
            written: HashMap::new(),
            owned: Vec::new(),
        }
    }

    /// The statement that starts a batch's turn, run with its `BEGIN`
    /// ([`Link::begin`]). On a shared database, batches of different processes take
    /// turns: each holds the `changed` counter's row lock from its start (every batch
    /// that changes a status takes it anyway), so a batch's fresh reads cannot be
    /// overtaken before it commits, and no two batches wait on each other's rows.
    /// `None` for the embedded store, whose file has one writer.
    const fn turn(&self) -> Option<&'static str> {
        match self.local {
            Some(_) => None,
            None => Some("SELECT value FROM counters WHERE name = 'changed' FOR UPDATE"),
        }
    }

    /// The open transaction writes `task`, or deletes it (`None`): readers go to the
    /// database for it until what is written is committed, and then, if it settled,
    /// to [`Settled`].
    fn write_settled(&mut self, id: &TaskId, task: Option<&Task>) {
        if let Some(settled) = &self.settled {
            settled.forget(id);
            let task = task.filter(|task| task.status.state.is_settled());
            self.written.insert(id.clone(), task.cloned());
        }
    }

    fn unsettle(&mut self, id: &TaskId) {
        self.write_settled(id, None);
    }

    /// The open transaction committed: what it wrote of settled tasks is what the
    /// file holds.
    fn committed(&mut self) {
        let written = std::mem::take(&mut self.written);
        if let Some(settled) = &self.settled {
            settled.committed(written.into_values().flatten().collect());
        }
        self.owned_settled();
    }

    /// The open transaction writes a task with a principal into `context`.
    fn write_owned(&mut self, context: &ContextId) {
        if self.settled.is_some() {
            self.owned.push(context.clone());
        }
    }

    /// The open transaction is over (committed or not): a read that ran while it
    /// was open does not leave its conversations remembered as unowned.
    fn owned_settled(&mut self) {
        let owned = std::mem::take(&mut self.owned);
        if let Some(settled) = &self.settled {
            for context in &owned {
                settled.unowned.owned(context);
            }
        }
    }

    /// Tasks deleted (rows of their ids): readers no longer find them.
    fn deleted(&mut self, rows: &[Row]) -> Result<(), DbError> {
        if self.settled.is_some() {
            for row in rows {
                self.unsettle(&TaskId::new(row.text(0)?));
            }
        }
        Ok(())
    }

    /// A transaction failed: what the writer remembers may not be what is stored.
    fn forget_uncommitted(&mut self) {
        self.live.clear();
        self.evicted = 0;
        self.written.clear();
        self.owned_settled();
    }

    /// Takes `n` numbers of `counter`; the first of them.
    async fn reserve(
        &mut self,
        conn: &mut impl Link,
        counter: Counter,
        n: usize,
    ) -> Result<i64, DbError> {
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        if let Some(local) = &mut self.local {
            let value = &mut local[counter as usize];
            *value += n;
            return Ok(*value - n + 1);
        }
        let last = conn
            .fetch_one(
                "UPDATE counters SET value = value + $2 WHERE name = $1 RETURNING value",
                &[counter.name().into(), n.into()],
            )
            .await?
            .int(0)?;
        Ok(last - n + 1)
    }

    /// Takes `counts[i]` numbers of each of [`ROW_COUNTERS`]; the first of each (the
    /// next number when it takes none).
    async fn reserve_rows(
        &mut self,
        conn: &mut impl Link,
        counts: [usize; 3],
    ) -> Result<[i64; 3], DbError> {
        let counts = counts.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
        if let Some(local) = &mut self.local {
            return Ok(std::array::from_fn(|i| {
                let value = &mut local[ROW_COUNTERS[i] as usize];
                *value += counts[i];
                *value - counts[i] + 1
            }));
        }
        let rows = conn
            .fetch_all(
                "UPDATE counters SET value = value + CASE name \
                 WHEN 'changed' THEN $1 WHEN 'created' THEN $2 ELSE $3 END \
                 WHERE name IN ('changed', 'created', 'ended') RETURNING name, value",
                &[counts[0].into(), counts[1].into(), counts[2].into()],
            )
            .await?;
        let mut firsts = [None; 3];
        for row in &rows {
            let name = row.text(0)?;
            if let Some(i) = ROW_COUNTERS.iter().position(|c| c.name() == name) {
                firsts[i] = Some(row.int(1)? - counts[i] + 1);
            }
        }
        let mut answer = [0; 3];
        for (i, first) in firsts.into_iter().enumerate() {
            answer[i] = first.ok_or_else(|| {
                DbError::new(format!(
                    "the `{}` counter is missing",
                    ROW_COUNTERS[i].name()
                ))
            })?;
        }
        Ok(answer)
    }

    /// The last number `counter` gave.
    async fn last(&self, conn: &mut impl Link, counter: Counter) -> Result<i64, DbError> {
        if let Some(local) = &self.local {
            return Ok(local[counter as usize]);
        }
        conn.fetch_one(
            "SELECT value FROM counters WHERE name = $1",
            &[counter.name().into()],
        )
        .await?
        .int(0)
    }
}

/// A task a batch has read or changed, and what it changed.
struct Pending {
    current: Current,
    /// The batch inserts the task (with this owner) rather than updating its row.
    inserted: Option<Option<TaskOwner>>,
    /// The row must be written.
    dirty: bool,
    /// When in the batch its status last changed, it was created, and it ended (with
    /// the time): the numbers are taken at the flush in this order.
    changed: Option<u64>,
    created: Option<u64>,
    ended: Option<(u64, i64)>,
}

/// A batch's task changes not written yet.
#[derive(Default)]
struct Staged {
    pending: Vec<Pending>,
    index: HashMap<TaskId, usize>,
    /// Log events: the task (an index into `pending`), its number, the body.
    events: Vec<(usize, i64, String)>,
    /// Orders the batch's changes.
    clock: u64,
}

impl Staged {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// The task `id`, from the batch, the writer's memory or its row; its index.
    async fn load(
        &mut self,
        conn: &mut impl Link,
        ctx: &mut Writer,
        id: &TaskId,
    ) -> Result<usize, Failed> {
        if let Some(&at) = self.index.get(id) {
            return Ok(at);
        }
        let current = match ctx.live.remove(id) {
            Some(current) => current,
            None => {
                let row = conn
                    .fetch_optional(
                        "SELECT body, version, \
                         (SELECT COALESCE(MAX(seq), 0) FROM task_events WHERE task_id = $1) \
                         FROM tasks WHERE id = $1",
                        &[id.as_str().into()],
                    )
                    .await?
                    .ok_or_else(|| StoreError::NotFound(id.clone()))?;
                Current {
                    task: decode_task(row.text(0)?)?,
                    version: row.int(1)?,
                    events: row.int(2)?,
                }
            }
        };
        Ok(self.add(Pending {
            current,
            inserted: None,
            dirty: false,
            changed: None,
            created: None,
            ended: None,
        }))
    }

    fn add(&mut self, pending: Pending) -> usize {
        let at = self.pending.len();
        self.index.insert(pending.current.task.id.clone(), at);
        self.pending.push(pending);
        at
    }

    /// The live task `id`, to change (never a terminal one).
    async fn live(
        &mut self,
        conn: &mut impl Link,
        ctx: &mut Writer,
        id: &TaskId,
    ) -> Result<usize, Failed> {
        let at = self.load(conn, ctx, id).await?;
        let state = self.pending[at].current.task.status.state;
        if state.is_terminal() {
            return Err(StoreError::Terminal {
                task_id: id.clone(),
                state,
            }
            .into());
        }
        Ok(at)
    }

    fn insert(
        &mut self,
        ctx: &Writer,
        task: &Task,
        owner: Option<&TaskOwner>,
    ) -> Result<(), Failed> {
        if self.index.contains_key(&task.id) || ctx.live.contains_key(&task.id) {
            return Err(StoreError::AlreadyExists(task.id.clone()).into());
        }
        let now = self.tick();
        self.add(Pending {
            current: Current {
                task: task.clone(),
                version: 0,
                events: 0,
            },
            inserted: Some(owner.cloned()),
            dirty: true,
            changed: Some(now),
            created: Some(now),
            ended: task.status.state.is_terminal().then(|| (now, now_ms())),
        });
        Ok(())
    }

    /// A status write: always a change in the status order, even to the same state.
    /// The state it replaced.
    fn set_status(&mut self, at: usize, status: &TaskStatus) -> TaskState {
        let now = self.tick();
        let pending = &mut self.pending[at];
        let previous = std::mem::replace(&mut pending.current.task.status, status.clone()).state;
        pending.dirty = true;
        pending.changed = Some(now);
        if status.state.is_terminal() {
            pending.ended = Some((now, now_ms()));
        }
        previous
    }

    /// Appends an event to the task's log; its number.
    fn log(&mut self, at: usize, body: &str) -> u64 {
        let pending = &mut self.pending[at];
        pending.current.events += 1;
        let seq = pending.current.events;
        self.events.push((at, seq, body.to_owned()));
        to_u64(seq)
    }

    /// Writes what the batch changed: each changed task's row once, the events, and
    /// the retention of ended tasks; then remembers the live tasks as written.
    async fn flush<L: Link>(&mut self, conn: &mut L, ctx: &mut Writer) -> Result<(), Failed> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let [changed, created, ended] = numbers(conn, ctx, &self.pending).await?;
        // Each changed row once, a few rows per statement: new tasks inserted, the
        // others updated if still at the version they were computed from.
        let mut inserts = Vec::new();
        let mut updates = Vec::new();
        for (at, pending) in self.pending.iter().enumerate() {
            if !pending.dirty {
                continue;
            }
            let task = &pending.current.task;
            ctx.write_settled(&task.id, Some(task));
            if pending
                .inserted
                .as_ref()
                .and_then(Option::as_ref)
                .is_some_and(|owner| owner.principal.is_some())
            {
                ctx.write_owned(&task.context_id);
            }
            let row = RowWrite {
                at,
                body: encode(task)?,
                state: state_name(task.status.state)?,
            };
            if pending.inserted.is_some() {
                inserts.push(row);
            } else {
                updates.push(row);
            }
        }
        let pending = &self.pending;
        let short = INSERT_TASKS
            .run(conn, &inserts, Changes::OnePerRow, |args, row| {
                let pending = &pending[row.at];
                let task = &pending.current.task;
                let owner = pending.inserted.as_ref().and_then(Option::as_ref);
                args.extend([
                    task.id.as_str().into(),
                    task.context_id.as_str().into(),
                    owner.map(|owner| owner.agent.to_string()).into(),
                    owner.and_then(|owner| owner.principal.as_deref()).into(),
                    row.body.as_str().into(),
                    row.state.as_str().into(),
                    i64::from(task.status.state.is_terminal()).into(),
                    changed[row.at].into(),
                    created[row.at].into(),
                    ended[row.at].into(),
                    pending.ended.map(|(_, ms)| ms).into(),
                ]);
            })
            .await?;
        if let Some(row) = short {
            let id = pending[row.at].current.task.id.clone();
            return Err(Failed::Conflict(Conflict::Taken(id)));
        }
        let short = UPDATE_TASKS
            .run(conn, &updates, Changes::OnePerRow, |args, row| {
                let pending = &pending[row.at];
                let task = &pending.current.task;
                args.extend([
                    task.id.as_str().into(),
                    pending.current.version.into(),
                    row.body.as_str().into(),
                    row.state.as_str().into(),
                    i64::from(task.status.state.is_terminal()).into(),
                    changed[row.at].into(),
                    ended[row.at].into(),
                    pending.ended.map(|(_, ms)| ms).into(),
                ]);
            })
            .await?;
        if let Some(row) = short {
            let id = pending[row.at].current.task.id.clone();
            return Err(Failed::Conflict(Conflict::Changed(id)));
        }
        for pending in &mut self.pending {
            if pending.dirty {
                pending.current.version += 1;
            }
        }
        self.write_events(conn).await?;
        if let Some(last) = ended.iter().flatten().max() {
            evict_past_count(conn, *last, ctx).await?;
        }
        for pending in self.pending.drain(..) {
            if pending.current.task.status.state.is_terminal() {
                continue;
            }
            if ctx.live.len() >= REMEMBERED {
                ctx.live.clear();
            }
            ctx.live
                .insert(pending.current.task.id.clone(), pending.current);
        }
        self.index.clear();
        self.events.clear();
        Ok(())
    }

    /// Inserts the batch's log events, a few rows per statement. The primary key
    /// (task, seq) refuses a number another process took at the same time; the batch is
    /// then redone, on fresh reads.
    async fn write_events<L: Link>(&self, conn: &mut L) -> Result<(), Failed> {
        let short = INSERT_EVENTS
            .run(
                conn,
                &self.events,
                Changes::OnePerRow,
                |args, (at, seq, body)| {
                    args.extend([
                        self.pending[*at].current.task.id.as_str().into(),
                        (*seq).into(),
                        body.as_str().into(),
                    ]);
                },
            )
            .await?;
        match short {
            Some((at, ..)) => {
                let id = self.pending[*at].current.task.id.clone();
                Err(Failed::Conflict(Conflict::Changed(id)))
            }
            None => Ok(()),
        }
    }
}

/// A task row the flush writes: which pending task, encoded.
struct RowWrite {
    at: usize,
    body: String,
    state: String,
}

/// Rows per multi-row statement: powers of two, so that a batch's rows take a few
/// statements of a few shapes the database prepares once.
const CHUNKS: [usize; 7] = [64, 32, 16, 8, 4, 2, 1];

/// A multi-row statement in each size of [`CHUNKS`].
struct Shapes(Vec<String>);

impl Shapes {
    /// `head`, then one parenthesized group of `width` numbered parameters per row
    /// (each followed by `extra`), then `tail`; parameters spelled as `dialect` numbers
    /// them.
    fn new(dialect: Dialect, head: &str, width: usize, extra: &str, tail: &str) -> Self {
        Self(
            CHUNKS
                .iter()
                .map(|&rows| {
                    let mut sql = String::from(head);
                    for row in 0..rows {
                        sql.push_str(if row == 0 { "(" } else { ", (" });
                        for column in 0..width {
                            let sep = if column == 0 { "" } else { ", " };
                            let _ = write!(sql, "{sep}{}", dialect.param(row * width + column + 1));
                        }
                        sql.push_str(extra);
                        sql.push(')');
                    }
                    sql.push_str(tail);
                    sql
                })
                .collect(),
        )
    }

    /// The statement for the next rows of `rest`, those rows, and what is left after
    /// them; `None` when `rest` is empty.
    fn next<'r, T>(&self, rest: &'r [T]) -> Option<(&str, &'r [T], &'r [T])> {
        let (size, sql) = CHUNKS
            .iter()
            .zip(&self.0)
            .find(|(size, _)| **size <= rest.len())?;
        let (chunk, after) = rest.split_at(*size);
        Some((sql.as_str(), chunk, after))
    }

    /// Writes `rows`, a chunk per statement, each row's parameters bound by `bind`.
    /// With [`Changes::OnePerRow`], stops at a chunk that changed fewer rows than it
    /// has (an insert that found an id taken, an update that found a row at another
    /// version) and returns its first row.
    async fn run<'r, T>(
        &'r self,
        conn: &mut impl Link,
        rows: &'r [T],
        expect: Changes,
        bind: impl Fn(&mut Vec<Arg<'r>>, &'r T),
    ) -> Result<Option<&'r T>, DbError> {
        let mut rest = rows;
        let mut args = Vec::new();
        while let Some((sql, chunk, after)) = self.next(rest) {
            args.clear();
            for row in chunk {
                bind(&mut args, row);
            }
            let written = conn.execute(sql, &args).await?;
            if expect == Changes::OnePerRow && usize::try_from(written).ok() != Some(chunk.len()) {
                return Ok(chunk.first());
            }
            rest = after;
        }
        Ok(None)
    }
}

/// What a multi-row statement changes per row of its list ([`Shapes::run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Changes {
    /// Exactly one row: fewer means a conflict.
    OnePerRow,
    /// Any number (a delete by a list of ids: each id may have any number of rows).
    Any,
}

/// A multi-row statement as each database is given it. SQLite's spelling ignores
/// conflicts (`OR IGNORE`) instead of aborting the statement: a statement that may
/// abort halfway through a multi-row write makes SQLite copy every page it changes
/// into a statement journal first, to undo just that statement; that copying was a
/// tenth of the embedded writer's time. A row a conflict skipped is caught as a
/// chunk that wrote fewer rows than it has ([`Shapes::run`]), as PostgreSQL's
/// `ON CONFLICT DO NOTHING` already was.
///
/// On PostgreSQL a statement may instead take every row at once, as one JSON
/// parameter ([`Statement::rows_as_json`]): a round trip to the server is the writer's
/// largest cost there (each waits for the server's process to be scheduled; a batch
/// of a dozen sends made seven or eight), and the chunks of a batch's rows were one
/// round trip each.
struct Statement {
    postgres: Shapes,
    sqlite: Shapes,
    /// The PostgreSQL statement that reads its rows from `$1`, a JSON array of one
    /// object per row whose members `c0`, `c1`, ... are the row's values in order.
    postgres_json: Option<String>,
    /// Values per row.
    width: usize,
}

impl Statement {
    /// The same rows ([`Shapes::new`]'s `width` and `extra`) between each database's
    /// `(head, tail)`.
    fn new(width: usize, extra: &str, postgres: (&str, &str), sqlite: (&str, &str)) -> Self {
        Self {
            postgres: Shapes::new(Dialect::Postgres, postgres.0, width, extra, postgres.1),
            sqlite: Shapes::new(Dialect::Sqlite, sqlite.0, width, extra, sqlite.1),
            postgres_json: None,
            width,
        }
    }

    /// On PostgreSQL, every row in one statement. `types` are the SQL types of a row's
    /// values, one per value the rows bind; `sql` makes the statement from the list of
    /// those values (`r.c0, r.c1, ...`) and the row source that yields them
    /// (`json_to_recordset($1::json) AS r(c0 type, ...)`).
    fn rows_as_json(mut self, types: &[&str], sql: impl FnOnce(&str, &str) -> String) -> Self {
        debug_assert_eq!(types.len(), self.width, "one type per value a row binds");
        let values = (0..types.len())
            .map(|n| format!("r.c{n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let columns = types
            .iter()
            .enumerate()
            .map(|(n, kind)| format!("c{n} {kind}"))
            .collect::<Vec<_>>()
            .join(", ");
        let source = format!("json_to_recordset($1::json) AS r({columns})");
        self.postgres_json = Some(sql(&values, &source));
        self
    }

    /// Writes `rows` as [`Shapes::run`] does, in one statement where there is one
    /// for every row.
    async fn run<'r, L: Link, T>(
        &'r self,
        conn: &mut L,
        rows: &'r [T],
        expect: Changes,
        bind: impl Fn(&mut Vec<Arg<'r>>, &'r T),
    ) -> Result<Option<&'r T>, DbError> {
        let json = match (L::DIALECT, &self.postgres_json) {
            (Dialect::Postgres, Some(sql)) if rows.len() > 1 => sql,
            _ => return self.shapes::<L>().run(conn, rows, expect, bind).await,
        };
        let text = rows_json(rows, bind);
        let written = conn.execute(json, &[Arg::from(text)]).await?;
        if expect == Changes::OnePerRow && usize::try_from(written).ok() != Some(rows.len()) {
            return Ok(rows.first());
        }
        Ok(None)
    }

    /// A statement spelled alike for both databases but for its parameters.
    fn same(head: &str, width: usize, tail: &str) -> Self {
        Self::new(width, "", (head, tail), (head, tail))
    }

    /// The statement as `L`'s database is given it.
    fn shapes<L: Link>(&self) -> &Shapes {
        match L::DIALECT {
            Dialect::Postgres => &self.postgres,
            Dialect::Sqlite => &self.sqlite,
        }
    }
}

/// `rows` as [`Statement::rows_as_json`] reads them: a JSON array of one object per
/// row, whose members `c0`, `c1`, ... are the values `bind` gives the row, in order.
fn rows_json<'r, T>(rows: &'r [T], bind: impl Fn(&mut Vec<Arg<'r>>, &'r T)) -> String {
    let mut values = Vec::new();
    let mut text = String::from("[");
    for (n, row) in rows.iter().enumerate() {
        values.clear();
        bind(&mut values, row);
        text.push_str(if n == 0 { "{" } else { ",{" });
        for (column, value) in values.iter().enumerate() {
            let sep = if column == 0 { "" } else { "," };
            let _ = write!(text, "{sep}\"c{column}\":");
            match value {
                Arg::Int(number) => {
                    let _ = write!(text, "{number}");
                }
                Arg::Text(value) => push_json_string(&mut text, value),
                Arg::NullInt | Arg::NullText => text.push_str("null"),
            }
        }
        text.push('}');
    }
    text.push(']');
    text
}

/// `value` as a JSON string.
fn push_json_string(text: &mut String, value: &str) {
    // A `String`'s bytes are valid UTF-8 and serde_json writes only valid UTF-8.
    let mut bytes = std::mem::take(text).into_bytes();
    let _ = serde_json::to_writer(&mut bytes, value);
    *text = String::from_utf8(bytes).unwrap_or_default();
}

/// Inserts log events. On PostgreSQL a number another process took fails the batch
/// (a unique violation); on SQLite, whose file has one writer, it would be skipped
/// and caught as a short chunk.
static INSERT_EVENTS: LazyLock<Statement> = LazyLock::new(|| {
    let columns = "task_events (task_id, seq, body)";
    Statement::new(
        3,
        "",
        (&format!("INSERT INTO {columns} VALUES "), ""),
        (&format!("INSERT OR IGNORE INTO {columns} VALUES "), ""),
    )
    .rows_as_json(&["text", "bigint", "text"], |values, source| {
        format!("INSERT INTO {columns} SELECT {values} FROM {source}")
    })
});

/// Inserts new tasks; an id taken already is skipped (and caught as a short chunk).
static INSERT_TASKS: LazyLock<Statement> = LazyLock::new(|| {
    let columns = "tasks (id, context_id, agent, principal, body, state, terminal, \
                   changed, created, ended_seq, ended_at, version)";
    // Every value but the version, which a new row starts at 1.
    let types = [
        "text", "text", "text", "text", "text", "text", "bigint", "bigint", "bigint", "bigint",
        "bigint",
    ];
    Statement::new(
        11,
        ", 1",
        (
            &format!("INSERT INTO {columns} VALUES "),
            " ON CONFLICT (id) DO NOTHING",
        ),
        (&format!("INSERT OR IGNORE INTO {columns} VALUES "), ""),
    )
    .rows_as_json(&types, |values, source| {
        format!(
            "INSERT INTO {columns} SELECT {values}, 1 FROM {source} ON CONFLICT (id) DO NOTHING"
        )
    })
});

/// Updates rows still at the version named; a row's status-change and end numbers
/// stay as they were where the batch gave none. (`columnN` is how both SQLite and
/// PostgreSQL name the columns of a `VALUES` list.)
static UPDATE_TASKS: LazyLock<Statement> = LazyLock::new(|| {
    let set = "tasks SET body = v.column3, state = v.column4, terminal = v.column5, \
               changed = COALESCE(v.column6, tasks.changed), \
               ended_seq = COALESCE(v.column7, tasks.ended_seq), \
               ended_at = COALESCE(v.column8, tasks.ended_at), version = tasks.version + 1 \
               FROM (VALUES ";
    let tail = ") AS v WHERE tasks.id = v.column1 AND tasks.version = v.column2";
    Statement::new(
        8,
        "",
        (&format!("UPDATE {set}"), tail),
        (&format!("UPDATE OR IGNORE {set}"), tail),
    )
    // Looked up by the primary key, a row at a time, however many tasks there are:
    // PostgreSQL reckons a JSON row set at 100 rows, and with an equality it can hash
    // it joins them by a scan of the whole of `tasks` below a few thousand tasks, or
    // at any size with a plan it cached while the table was still small (9.5 ms for
    // two rows among 20,000 tasks, against 0.2 ms by the key; `docs/benchmarks.md`,
    // §7).
    // `= ANY (ARRAY[…])` and `IS NOT DISTINCT FROM` (the same as `=` here: neither
    // side is ever NULL) are conditions no hash or merge join takes, so the join is a
    // nested loop, and its inner side a lookup in `tasks_pkey`.
    .rows_as_json(
        &[
            "text", "bigint", "text", "text", "bigint", "bigint", "bigint", "bigint",
        ],
        |_, source| {
            format!(
                "UPDATE tasks SET body = r.c2, state = r.c3, terminal = r.c4, \
                 changed = COALESCE(r.c5, tasks.changed), \
                 ended_seq = COALESCE(r.c6, tasks.ended_seq), \
                 ended_at = COALESCE(r.c7, tasks.ended_at), version = tasks.version + 1 \
                 FROM {source} \
                 WHERE tasks.id = ANY (ARRAY[r.c0]) AND tasks.version IS NOT DISTINCT FROM r.c1"
            )
        },
    )
});

/// The counters a batch's rows take numbers of, in the order [`numbers`] answers them.
const ROW_COUNTERS: [Counter; 3] = [Counter::Changed, Counter::Created, Counter::Ended];

/// Numbers the pending tasks that took each of [`ROW_COUNTERS`] (a status change, a
/// creation, an end), in the order they took it in the batch; by index into
/// `pending`. The three are reserved together: on a shared database one statement
/// instead of one per counter, each a round trip.
async fn numbers(
    conn: &mut impl Link,
    ctx: &mut Writer,
    pending: &[Pending],
) -> Result<[Vec<Option<i64>>; 3], DbError> {
    let stamps: [fn(&Pending) -> Option<u64>; 3] =
        [|p| p.changed, |p| p.created, |p| p.ended.map(|(at, _)| at)];
    let orders = stamps.map(|stamp| {
        let mut order: Vec<(u64, usize)> = pending
            .iter()
            .enumerate()
            .filter_map(|(at, p)| stamp(p).map(|when| (when, at)))
            .collect();
        order.sort_unstable();
        order
    });
    let mut numbers = [
        vec![None; pending.len()],
        vec![None; pending.len()],
        vec![None; pending.len()],
    ];
    if orders.iter().all(Vec::is_empty) {
        return Ok(numbers);
    }
    let firsts = ctx
        .reserve_rows(conn, [orders[0].len(), orders[1].len(), orders[2].len()])
        .await?;
    for ((numbers, order), first) in numbers.iter_mut().zip(&orders).zip(firsts) {
        for (n, (_, at)) in (first..).zip(order) {
            numbers[*at] = Some(n);
        }
    }
    Ok(numbers)
}

/// How many ended tasks past the count a writer drops at once: a 64th of the count
/// kept, between one and 256. Each drop writes the pages of the oldest rows of the
/// table and of each index, and dropping eight tasks a batch wrote those same pages
/// again and again; a chunk at a time writes each about once. The chunk is dropped
/// early, when the first task of it falls past the count, so the store never holds
/// more ended tasks than the count.
fn eviction_chunk(limit: i64) -> i64 {
    (limit / 64).clamp(1, 256)
}

/// The last ended number to drop now (every ended task up to it not named by a key),
/// given the last one taken; `None` when the writer dropped that far already.
fn eviction_due(limit: i64, ended: i64, evicted: i64) -> Option<i64> {
    let past = ended.saturating_sub(limit);
    (past > 0 && past > evicted).then(|| past.saturating_add(eviction_chunk(limit) - 1))
}

/// Every this many chunks, retention by count looks for ended tasks from the oldest
/// on, not from where the chunk before it stopped ([`evict_past_count`]).
const SWEEP_EVERY: u32 = 64;

/// The ended number a chunk of retention looks past, given how many chunks were
/// dropped and the last number dropped through: 0 (from the oldest) every
/// [`SWEEP_EVERY`]th chunk.
const fn eviction_floor(evictions: u32, evicted: i64) -> i64 {
    if evictions.is_multiple_of(SWEEP_EVERY) {
        0
    } else {
        evicted
    }
}

/// Drops the ended tasks past the count, a chunk at a time ([`eviction_chunk`]),
/// except those a key still names.
///
/// A chunk looks from where the one before it stopped: PostgreSQL keeps a deleted
/// row's index entries until a vacuum, and a look from the index's start read every
/// entry evicted since (12,000 per chunk in the store suite, `docs/benchmarks.md`).
/// Every [`SWEEP_EVERY`]th chunk looks from the oldest, for what the others skip: a
/// task a key kept, whose key has gone since, and on a shared database a task
/// another process numbered below this writer's last chunk and committed after it.
async fn evict_past_count(
    conn: &mut impl Link,
    ended: i64,
    ctx: &mut Writer,
) -> Result<(), DbError> {
    let limit = i64::try_from(ctx.retention.finished_tasks).unwrap_or(i64::MAX);
    let Some(through) = eviction_due(limit, ended, ctx.evicted) else {
        return Ok(());
    };
    let after = eviction_floor(ctx.evictions, ctx.evicted);
    let gone = delete_tasks(
        conn,
        "ended_seq IS NOT NULL AND ended_seq > $2 AND ended_seq <= $1 AND NOT EXISTS \
         (SELECT 1 FROM idempotency_keys k WHERE k.task_id = tasks.id)",
        &[through.into(), after.into()],
    )
    .await?;
    ctx.deleted(&gone)?;
    ctx.evicted = through;
    ctx.evictions = ctx.evictions.wrapping_add(1);
    Ok(())
}

/// Deletes the tasks `filter` selects (a condition on `tasks`, its parameters in
/// `args`) with their event logs and push configs, which nothing else takes along
/// (migration 0004 dropped the foreign keys that did, at a check per event logged and
/// a query per task deleted). The deleted tasks' ids.
///
/// The logs and configs go by the ids the task delete returns, not by a subquery of
/// the filter: PostgreSQL plans a prepared statement once for any parameter, and for
/// `task_id IN (SELECT id FROM tasks WHERE ended_seq <= $1 …)` it guessed a third of
/// the tasks and read the whole log table for every chunk evicted (`docs/benchmarks.md`);
/// a list of ids is a lookup in the log's key per id in both databases.
async fn delete_tasks<L: Link>(
    conn: &mut L,
    filter: &str,
    args: &[Arg<'_>],
) -> Result<Vec<Row>, DbError> {
    let gone = conn
        .fetch_all(
            &format!("DELETE FROM tasks WHERE {filter} RETURNING id"),
            args,
        )
        .await?;
    let ids = gone
        .iter()
        .map(|row| row.text(0))
        .collect::<Result<Vec<_>, _>>()?;
    for statement in [&*DELETE_EVENTS, &*DELETE_PUSH_CONFIGS] {
        statement
            .shapes::<L>()
            .run(conn, &ids, Changes::Any, |args, id| {
                args.push(Arg::from(*id))
            })
            .await?;
    }
    Ok(gone)
}

/// Deletes the event logs of the tasks listed.
static DELETE_EVENTS: LazyLock<Statement> =
    LazyLock::new(|| Statement::same("DELETE FROM task_events WHERE task_id IN (", 1, ")"));

/// Deletes the push configs of the tasks listed.
static DELETE_PUSH_CONFIGS: LazyLock<Statement> =
    LazyLock::new(|| Statement::same("DELETE FROM push_configs WHERE task_id IN (", 1, ")"));

/// The writer: batches of waiting writes, one transaction each, on one connection it
/// keeps (no pool checkout, and for PostgreSQL no ping, per batch) until the database
/// fails it.
pub(super) async fn write_loop(
    pool: AnyPool,
    mut link: impl Link,
    mut jobs: mpsc::Receiver<Job>,
    mut ctx: Writer,
) {
    let mut batch = Vec::with_capacity(BATCH);
    // `SqlTaskStore::close` waits for every connection of the pool to come back, and
    // means the store is done: the writer lets its own connection go.
    let mut closing = std::pin::pin!(pool.close_event());
    loop {
        let received = tokio::select! {
            received = jobs.recv_many(&mut batch, BATCH) => received,
            () = &mut closing, if link.holds() => {
                link.release();
                continue;
            }
        };
        if received == 0 {
            break;
        }
        let now = std::mem::take(&mut batch);
        if let Err(leftover) = commit_batch(&mut link, now, &mut ctx).await {
            // The batch could not be applied as one: each write on its own, so that
            // one bad write (or a database back from a restart, or a task another
            // process changed) affects only itself.
            for job in leftover {
                if let Err(lone) = commit_batch(&mut link, vec![job], &mut ctx).await {
                    for job in lone {
                        job.fail(
                            &mut ctx,
                            "the database refused the write; see the earlier error".into(),
                        );
                    }
                }
            }
        }
    }
}

/// How a write of a batch was answered so far.
enum Answer {
    /// Answered once applied: nothing to send at the commit.
    Sent,
    /// Refused: not part of the batch any more.
    Refused,
    /// To be answered once committed.
    AtCommit(Done),
}

/// Applies `jobs` in one transaction and answers them after it commits (a write
/// answered before its commit ([`Answered`]) is answered once applied and only committed
/// here). Hands back the jobs to be redone one at a time when the batch could not be
/// applied as one (after logging why); a single job is never handed back.
async fn commit_batch(
    link: &mut impl Link,
    mut jobs: Vec<Job>,
    ctx: &mut Writer,
) -> Result<(), Vec<Job>> {
    let mut redone = 0;
    loop {
        if let Err(error) = link.begin(ctx.turn()).await {
            link.abandon(true).await;
            fail_all(jobs, &error, ctx);
            return Ok(());
        }
        let mut staged = Staged::default();
        let mut answers = Vec::with_capacity(jobs.len());
        let mut failed = None;
        for job in &mut jobs {
            if failed.is_some() {
                break;
            }
            match apply(link, &mut staged, &job.write, ctx).await {
                Ok(done) if job.answered != Answered::Committed => {
                    job.answer(Ok(done));
                    answers.push(Answer::Sent);
                }
                Ok(done) => answers.push(Answer::AtCommit(done)),
                Err(Failed::Refused(error)) => {
                    job.refuse(ctx, error);
                    answers.push(Answer::Refused);
                }
                Err(other) => {
                    failed = Some(other);
                    break;
                }
            }
        }
        if failed.is_none()
            && let Err(error) = staged.flush(link, ctx).await
        {
            failed = Some(error);
        }
        let Some(failed) = failed else {
            match link.commit().await {
                Ok(()) => {
                    ctx.committed();
                    for (mut job, answer) in jobs.into_iter().zip(answers) {
                        if let Answer::AtCommit(done) = answer {
                            job.answer(Ok(done));
                        }
                    }
                }
                Err(error) => {
                    link.abandon(true).await;
                    ctx.forget_uncommitted();
                    tracing::warn!(%error, "task store commit failed");
                    let message = format!("the database did not commit the write: {error}");
                    for (job, answer) in jobs.into_iter().zip(answers) {
                        if !matches!(answer, Answer::Refused) {
                            job.fail(ctx, message.clone());
                        }
                    }
                }
            }
            return Ok(());
        };
        // A database error may have broken the connection: it is let go. A conflict or
        // a refusal leaves it as good as it was.
        link.abandon(matches!(failed, Failed::Database(_))).await;
        ctx.forget_uncommitted();
        // The refused are answered and out; the rest is redone.
        let mut refused = answers.iter().map(|a| matches!(a, Answer::Refused));
        let mut rest: Vec<Job> = jobs
            .into_iter()
            .filter(|_| !refused.next().unwrap_or(false))
            .collect();
        if rest.len() > 1 {
            if let Failed::Database(error) = &failed {
                tracing::warn!(%error, "task store write failed; retrying each write alone");
            }
            return Err(rest);
        }
        let Some(mut job) = rest.pop() else {
            return Ok(());
        };
        match failed {
            Failed::Database(error) => {
                tracing::warn!(%error, "task store write failed");
                job.fail(ctx, format!("the database refused the write: {error}"));
            }
            Failed::Refused(error) => job.refuse(ctx, error),
            Failed::Conflict(Conflict::Taken(id)) => {
                job.refuse(ctx, StoreError::AlreadyExists(id));
            }
            Failed::Conflict(Conflict::Changed(id)) => {
                redone += 1;
                if redone < VERSION_RETRIES {
                    jobs = vec![job];
                    continue;
                }
                job.fail(
                    ctx,
                    format!("task `{id}` kept changing under this write; try again"),
                );
            }
        }
        return Ok(());
    }
}

fn fail_all(jobs: Vec<Job>, error: &DbError, ctx: &mut Writer) {
    tracing::warn!(%error, "task store unreachable");
    let message = format!("cannot reach the database: {error}");
    for job in jobs {
        job.fail(ctx, message.clone());
    }
}

/// Applies one write: a task's write to the batch's [`Staged`] rows, any other
/// directly (after writing what the batch staged, which it may read).
async fn apply(
    conn: &mut impl Link,
    staged: &mut Staged,
    write: &Write,
    ctx: &mut Writer,
) -> Result<Done, Failed> {
    if let Some(id) = write.task()
        && ctx.lost.contains(id)
    {
        return Err(StoreError::Unavailable(format!(
            "an earlier write of task `{id}` was not stored (the database failed); \
             the task cannot be changed until the server restarts"
        ))
        .into());
    }
    match write {
        Write::Insert(task, owner) => {
            staged.insert(ctx, task, owner.as_ref())?;
            Ok(Done::Unit)
        }
        Write::SetStatus(id, status) => {
            let at = staged.live(conn, ctx, id).await?;
            Ok(Done::State(staged.set_status(at, status)))
        }
        Write::SetStatusLogged(id, status, event) => {
            let at = staged.live(conn, ctx, id).await?;
            let previous = staged.set_status(at, status);
            let seq = staged.log(at, event);
            Ok(Done::Logged(Some(previous), None, seq))
        }
        Write::PutArtifactLogged(id, artifact, append, event) => {
            let at = staged.live(conn, ctx, id).await?;
            let stored = put_artifact(&mut staged.pending[at], artifact, *append);
            let seq = staged.log(at, event);
            Ok(Done::Logged(None, Some(stored), seq))
        }
        Write::AppendHistory(id, message) => {
            let at = staged.live(conn, ctx, id).await?;
            let pending = &mut staged.pending[at];
            pending
                .current
                .task
                .history
                .get_or_insert_with(Vec::new)
                .push(Arc::clone(message));
            pending.dirty = true;
            Ok(Done::Unit)
        }
        Write::PutArtifact(id, artifact, append) => {
            let at = staged.live(conn, ctx, id).await?;
            Ok(Done::Artifact(put_artifact(
                &mut staged.pending[at],
                artifact,
                *append,
            )))
        }
        Write::AppendEvent(id, body) => {
            let at = staged.load(conn, ctx, id).await?;
            Ok(Done::Number(staged.log(at, body)))
        }
        other => {
            staged.flush(conn, ctx).await?;
            apply_direct(conn, other, ctx).await
        }
    }
}

/// A write may be applied again (a batch redone a write at a time), so it is
/// shared here, never moved out of.
fn put_artifact(pending: &mut Pending, artifact: &Arc<Artifact>, append: bool) -> Arc<Artifact> {
    pending.dirty = true;
    let artifacts = pending.current.task.artifacts.get_or_insert_with(Vec::new);
    crate::contract::merge_artifact(artifacts, artifact, append)
}

/// The writes that are not a task's row or log: keys, push configs, retention,
/// records.
async fn apply_direct(
    conn: &mut impl Link,
    write: &Write,
    ctx: &mut Writer,
) -> Result<Done, Failed> {
    match write {
        Write::RememberKey(key, task) => {
            conn.execute(
                "INSERT INTO idempotency_keys (key, task_id, at) VALUES ($1, $2, $3) \
                 ON CONFLICT (key) DO UPDATE SET task_id = excluded.task_id, at = excluded.at",
                &[key.as_str().into(), task.as_str().into(), now_ms().into()],
            )
            .await?;
            Ok(Done::Unit)
        }
        Write::ForgetKey(key) => {
            let row = conn
                .fetch_optional(
                    "DELETE FROM idempotency_keys WHERE key = $1 RETURNING task_id",
                    &[key.as_str().into()],
                )
                .await?;
            if let Some(row) = row {
                let task = row.text(0)?.to_owned();
                // Past the limits already: it goes now, as the in-memory store's
                // last release forgets an overdue task.
                let ended = ctx.last(conn, Counter::Ended).await?;
                let limit = i64::try_from(ctx.retention.finished_tasks).unwrap_or(i64::MAX);
                // As far as the count drops, or its last chunk dropped already.
                let overdue = ended.saturating_sub(limit).max(ctx.evicted);
                ctx.unsettle(&TaskId::new(task.as_str()));
                let cutoff = ctx.retention.max_age.map_or(i64::MIN, |age| {
                    now_ms().saturating_sub(i64::try_from(age.as_millis()).unwrap_or(i64::MAX))
                });
                delete_tasks(
                    conn,
                    "id = $1 AND ended_seq IS NOT NULL AND (ended_seq <= $2 OR ended_at < $3) \
                     AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.task_id = tasks.id)",
                    &[task.into(), overdue.into(), cutoff.into()],
                )
                .await?;
            }
            Ok(Done::Unit)
        }
        Write::PutPushConfig(config) => {
            let exists = conn
                .fetch_optional(
                    "SELECT 1 FROM tasks WHERE id = $1",
                    &[config.task_id.as_str().into()],
                )
                .await?;
            if exists.is_none() {
                return Err(StoreError::NotFound(config.task_id.clone()).into());
            }
            let position = ctx.reserve(conn, Counter::Position, 1).await?;
            let config_id = config
                .push_notification_config
                .id
                .as_deref()
                .unwrap_or_default();
            conn.execute(
                "INSERT INTO push_configs (task_id, config_id, position, body) \
                 VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (task_id, config_id) DO UPDATE SET body = excluded.body",
                &[
                    config.task_id.as_str().into(),
                    config_id.into(),
                    position.into(),
                    encode(config)?.into(),
                ],
            )
            .await?;
            Ok(Done::Unit)
        }
        Write::DeletePushConfig(id, config_id) => {
            let gone = conn
                .execute(
                    "DELETE FROM push_configs WHERE task_id = $1 AND config_id = $2",
                    &[id.as_str().into(), config_id.as_str().into()],
                )
                .await?;
            Ok(Done::Flag(gone > 0))
        }
        Write::DropEndedBefore(cutoff) => {
            let gone = delete_tasks(
                conn,
                "ended_at IS NOT NULL AND ended_at < $1 AND NOT EXISTS \
                 (SELECT 1 FROM idempotency_keys k WHERE k.task_id = tasks.id)",
                &[(*cutoff).into()],
            )
            .await?;
            ctx.deleted(&gone)?;
            Ok(Done::Number(u64::try_from(gone.len()).unwrap_or(u64::MAX)))
        }
        Write::PutRecord(namespace, key, body, expected) => {
            put_record(conn, namespace, key, body, *expected).await
        }
        Write::DeleteRecord(namespace, key) => {
            let gone = conn
                .execute(
                    "DELETE FROM records WHERE namespace = $1 AND key = $2",
                    &[namespace.as_str().into(), key.as_str().into()],
                )
                .await?;
            Ok(Done::Flag(gone > 0))
        }
        Write::Insert(..)
        | Write::SetStatus(..)
        | Write::SetStatusLogged(..)
        | Write::PutArtifactLogged(..)
        | Write::AppendHistory(..)
        | Write::PutArtifact(..)
        | Write::AppendEvent(..) => Err(StoreError::Backend(
            "a task's write reached the direct path of the store's writer".into(),
        )
        .into()),
    }
}

async fn put_record(
    conn: &mut impl Link,
    namespace: &str,
    key: &str,
    body: &str,
    expected: Option<u64>,
) -> Result<Done, Failed> {
    let found = conn
        .fetch_optional(
            "SELECT version FROM records WHERE namespace = $1 AND key = $2",
            &[namespace.into(), key.into()],
        )
        .await?
        .map(|row| row.int(0))
        .transpose()?;
    let conflict = |found: Option<i64>| StoreError::Conflict {
        namespace: namespace.to_owned(),
        key: key.to_owned(),
        expected,
        found: found.map(to_u64),
    };
    match (found, expected) {
        (None, Some(expected)) if expected != 0 => Err(conflict(None).into()),
        (Some(version), Some(expected)) if to_u64(version) != expected => {
            Err(conflict(Some(version)).into())
        }
        (None, _) => {
            let inserted = conn
                .execute(
                    "INSERT INTO records (namespace, key, version, body) VALUES ($1, $2, 1, $3) \
                     ON CONFLICT (namespace, key) DO NOTHING",
                    &[namespace.into(), key.into(), body.into()],
                )
                .await?;
            if inserted == 0 {
                return Err(conflict(None).into());
            }
            Ok(Done::Number(1))
        }
        (Some(version), _) => {
            let written = conn
                .execute(
                    "UPDATE records SET version = version + 1, body = $1 \
                     WHERE namespace = $2 AND key = $3 AND version = $4",
                    &[body.into(), namespace.into(), key.into(), version.into()],
                )
                .await?;
            if written == 0 {
                return Err(conflict(Some(version)).into());
            }
            Ok(Done::Number(to_u64(version) + 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use agentyard_transport::ContextId;

    use super::{
        Arg, Changes, DELETE_EVENTS, Dialect, INSERT_EVENTS, INSERT_TASKS, SWEEP_EVERY, Shapes,
        UNOWNED, UPDATE_TASKS, Unowned, eviction_chunk, eviction_due, eviction_floor, rows_json,
    };
    use crate::sql::link::{Link as _, Pooled};

    /// Text that JSON must escape, and text it must not mangle. (No NUL character:
    /// PostgreSQL's text holds none, however it is sent; a task's JSON body spells one
    /// as the six characters `\u0000`, which are here.)
    const AWKWARD: &str =
        "quote \" backslash \\ newline \n tab \t escaped nul \\u0000 crab 🦀 \u{2028}";

    /// Each one-statement form declares one typed column per value its rows bind (a
    /// mismatch fails the debug assertion as the statement is made) and reads them all.
    #[test]
    fn json_statements_read_every_value_their_rows_bind() {
        for (statement, width) in [
            (&*INSERT_EVENTS, 3),
            (&*INSERT_TASKS, 11),
            (&*UPDATE_TASKS, 8),
        ] {
            let sql = statement
                .postgres_json
                .as_deref()
                .expect("a one-statement form");
            assert!(sql.contains(&format!("c{} ", width - 1)), "{sql}");
            assert!(!sql.contains(&format!("c{width} ")), "{sql}");
        }
    }

    #[test]
    fn rows_as_json_read_back_as_the_values_bound() {
        let rows = [(1_i64, AWKWARD), (-7, ""), (i64::MAX, "plain")];
        let text = rows_json(&rows, |args, (number, text)| {
            args.extend([
                Arg::from(*number),
                Arg::from(*text),
                Arg::NullInt,
                Arg::NullText,
            ]);
        });
        let read: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let expected: Vec<serde_json::Value> = rows
            .iter()
            .map(|(number, text)| {
                serde_json::json!({"c0": number, "c1": text, "c2": null, "c3": null})
            })
            .collect();
        assert_eq!(read, serde_json::Value::Array(expected));
    }

    /// A connection to a fresh PostgreSQL schema that has the crate's migrations, in an
    /// open transaction; `None` (the test skips, saying why) without a server.
    async fn migrated(prefix: &str) -> Option<Pooled> {
        let url = crate::testing::postgres_schema(prefix).await?;
        let store = crate::SqlTaskStore::open(
            crate::StoreLocation::Postgres(url.clone()),
            crate::Retention::default(),
        )
        .await
        .expect("open");
        store.close().await;
        let pool = sqlx::AnyPool::connect(&url).await.expect("connect");
        let mut link = Pooled::new(pool);
        link.begin(None).await.expect("begin");
        Some(link)
    }

    /// The PostgreSQL statements that take a batch's rows as one JSON parameter, run
    /// directly (through the writer a refused batch would be redone a row at a time,
    /// hiding the refusal): every row lands as bound, and an id already taken makes
    /// the statement report a short write.
    #[tokio::test]
    async fn postgres_takes_every_row_of_a_batch_in_one_statement() {
        let Some(mut link) = migrated("rows_json").await else {
            return;
        };
        let events = [("t1", 1_i64, AWKWARD), ("t1", 2, "two"), ("t2", 1, "")];
        let short = INSERT_EVENTS
            .run(
                &mut link,
                &events,
                Changes::OnePerRow,
                |args, (id, seq, body)| {
                    args.extend([Arg::from(*id), Arg::from(*seq), Arg::from(*body)]);
                },
            )
            .await
            .expect("the events' statement runs");
        assert!(short.is_none(), "every event written");
        let rows = link
            .fetch_all(
                "SELECT task_id, seq, body FROM task_events ORDER BY task_id, seq",
                &[],
            )
            .await
            .expect("read");
        let read: Vec<(String, i64, String)> = rows
            .iter()
            .map(|row| {
                (
                    row.text(0).expect("id").to_owned(),
                    row.int(1).expect("seq"),
                    row.text(2).expect("body").to_owned(),
                )
            })
            .collect();
        let expected: Vec<(String, i64, String)> = events
            .iter()
            .map(|(id, seq, body)| ((*id).to_owned(), *seq, (*body).to_owned()))
            .collect();
        assert_eq!(read, expected);

        let task = |id: &'static str| (id, "c1", AWKWARD);
        let bind =
            |args: &mut Vec<Arg<'_>>,
             (id, context, body): &(&'static str, &'static str, &'static str)| {
                args.extend([
                    Arg::from(*id),
                    Arg::from(*context),
                    Arg::NullText,
                    Arg::NullText,
                    Arg::from(*body),
                    Arg::from("submitted"),
                    Arg::from(0),
                    Arg::from(1),
                    Arg::from(1),
                    Arg::NullInt,
                    Arg::NullInt,
                ]);
            };
        let first = [task("a"), task("b")];
        let short = INSERT_TASKS
            .run(&mut link, &first, Changes::OnePerRow, bind)
            .await
            .expect("the tasks' statement runs");
        assert!(short.is_none(), "both tasks written");
        let again = [task("c"), task("a"), task("d")];
        let short = INSERT_TASKS
            .run(&mut link, &again, Changes::OnePerRow, bind)
            .await
            .expect("the tasks' statement runs");
        assert!(short.is_some(), "a taken id makes the write short");
        let bodies = link
            .fetch_all("SELECT id, body FROM tasks ORDER BY id", &[])
            .await
            .expect("read");
        let ids: Vec<&str> = bodies.iter().map(|row| row.text(0).expect("id")).collect();
        assert_eq!(ids, ["a", "b", "c", "d"]);
        assert!(
            bodies
                .iter()
                .all(|row| row.text(1).expect("body") == AWKWARD)
        );

        // Updates name the version they were computed from: all land at version 1,
        // and one computed from a version that is gone makes the write short.
        let update =
            |args: &mut Vec<Arg<'_>>, (id, version, body): &(&'static str, i64, &'static str)| {
                args.extend([
                    Arg::from(*id),
                    Arg::from(*version),
                    Arg::from(*body),
                    Arg::from("completed"),
                    Arg::from(1),
                    Arg::from(2),
                    Arg::from(1),
                    Arg::NullInt,
                ]);
            };
        let short = UPDATE_TASKS
            .run(
                &mut link,
                &[("a", 1, "a, updated"), ("b", 1, AWKWARD)],
                Changes::OnePerRow,
                update,
            )
            .await
            .expect("the update runs");
        assert!(short.is_none(), "both updates written");
        let short = UPDATE_TASKS
            .run(
                &mut link,
                &[("c", 1, "c, updated"), ("a", 1, "stale")],
                Changes::OnePerRow,
                update,
            )
            .await
            .expect("the update runs");
        assert!(
            short.is_some(),
            "an update of a version that is gone makes the write short"
        );
        let rows = link
            .fetch_all(
                "SELECT id, body, state, version FROM tasks ORDER BY id",
                &[],
            )
            .await
            .expect("read");
        let read: Vec<(String, String, String, i64)> = rows
            .iter()
            .map(|row| {
                (
                    row.text(0).expect("id").to_owned(),
                    row.text(1).expect("body").to_owned(),
                    row.text(2).expect("state").to_owned(),
                    row.int(3).expect("version"),
                )
            })
            .collect();
        let expected = [
            ("a", "a, updated", "completed", 2),
            ("b", AWKWARD, "completed", 2),
            ("c", "c, updated", "completed", 2),
            ("d", AWKWARD, "submitted", 1),
        ]
        .map(|(id, body, state, version)| {
            (id.to_owned(), body.to_owned(), state.to_owned(), version)
        });
        assert_eq!(read, expected);
        link.abandon(false).await;
    }

    /// An update of several tasks looks each up by the primary key: with the plan
    /// PostgreSQL caches for a prepared statement when it was made while `tasks` was
    /// empty and kept as the table grew, and with a fresh plan on a small table whose
    /// statistics are current. Either way a join by a scan of `tasks` would read the
    /// whole table on every batch that updates two tasks or more.
    #[tokio::test]
    async fn postgres_updates_tasks_by_key_whatever_the_table_holds() {
        let Some(mut link) = migrated("update_plan").await else {
            return;
        };
        let sql = UPDATE_TASKS
            .postgres_json
            .as_deref()
            .expect("a one-statement form");
        let rows = rows_json(&["t5", "t7"], |args, id| {
            args.extend([
                Arg::from(*id),
                Arg::from(1),
                Arg::from("body"),
                Arg::from("completed"),
                Arg::from(1),
                Arg::from(2),
                Arg::from(1),
                Arg::from(99),
            ]);
        });
        assert!(
            !rows.contains('\''),
            "quoted as an SQL literal below: {rows}"
        );
        let fill = |n: u32| {
            format!(
                "INSERT INTO tasks (id, context_id, body, state, terminal, changed, created, \
                 version) SELECT 't' || g, 'c', repeat('x', 600), 'working', 0, g, g, 1 \
                 FROM generate_series(1, {n}) g"
            )
        };
        /// The plan of `sql` as one text.
        async fn explain(link: &mut Pooled, sql: &str) -> String {
            link.fetch_all(sql, &[])
                .await
                .expect("explain")
                .iter()
                .map(|row| row.text(0).expect("a plan line").to_owned())
                .collect::<Vec<_>>()
                .join("\n")
        }
        let plan = format!("EXPLAIN EXECUTE update_rows('{rows}')");
        let by_key = |plan: &str| {
            plan.contains("Index Scan using tasks_pkey on tasks") && !plan.contains("Seq Scan")
        };

        link.execute(&format!("PREPARE update_rows(text) AS {sql}"), &[])
            .await
            .expect("prepare");
        // Past its first five runs PostgreSQL keeps a generic plan, made on the empty
        // table.
        for _ in 0..7 {
            link.execute(&format!("EXECUTE update_rows('{rows}')"), &[])
                .await
                .expect("update");
        }
        link.execute(&fill(20_000), &[]).await.expect("fill");
        let cached = explain(&mut link, &plan).await;
        assert!(by_key(&cached), "a plan made on the empty table:\n{cached}");

        link.execute("TRUNCATE tasks", &[]).await.expect("empty");
        link.execute(&fill(1_000), &[]).await.expect("fill");
        link.execute("ANALYZE tasks", &[]).await.expect("analyze");
        link.execute("DEALLOCATE update_rows", &[])
            .await
            .expect("deallocate");
        link.execute(&format!("PREPARE update_rows(text) AS {sql}"), &[])
            .await
            .expect("prepare");
        let fresh = explain(&mut link, &plan).await;
        assert!(by_key(&fresh), "a fresh plan on 1,000 tasks:\n{fresh}");
        let updated = link
            .execute(&format!("EXECUTE update_rows('{rows}')"), &[])
            .await
            .expect("update");
        assert_eq!(updated, 2, "both tasks were at the version named");
        link.abandon(false).await;
    }

    #[test]
    fn a_conversation_is_remembered_unowned_only_if_nothing_was_owned_during_the_read() {
        let unowned = Unowned::default();
        let known = |context: &ContextId| unowned.lookup(context).is_none();
        let (a, b) = (ContextId::new("a"), ContextId::new("b"));
        let mark = unowned.lookup(&a).expect("not known yet");
        unowned.remember(&a, mark);
        assert!(known(&a));
        // A read that began before a task with a principal joined any conversation
        // may predate that task: not remembered.
        let mark = unowned.lookup(&b).expect("not known yet");
        unowned.owned(&ContextId::new("elsewhere"));
        unowned.remember(&b, mark);
        assert!(!known(&b));
        unowned.owned(&a);
        assert!(!known(&a), "owned now");
        let mark = unowned.lookup(&b).expect("not known yet");
        unowned.remember(&b, mark);
        assert!(known(&b));
        // Bounded: the oldest go first.
        for n in 0..UNOWNED {
            unowned.remember(&ContextId::new(format!("c{n}")), mark);
        }
        assert!(!known(&b));
        assert!(known(&ContextId::new(format!("c{}", UNOWNED - 1))));
    }

    #[test]
    fn a_delete_by_ids_lists_one_parameter_per_id_in_both_dialects() {
        let ids = ["a", "b", "c"];
        let (sql, chunk, rest) = DELETE_EVENTS.postgres.next(&ids).expect("a chunk");
        assert_eq!(sql, "DELETE FROM task_events WHERE task_id IN (($1), ($2))");
        assert_eq!((chunk.len(), rest.len()), (2, 1));
        let (sql, _, _) = DELETE_EVENTS.sqlite.next(&ids[2..]).expect("a chunk");
        assert_eq!(sql, "DELETE FROM task_events WHERE task_id IN ((?1))");
    }

    #[test]
    fn eviction_looks_past_the_last_chunk_and_sweeps_from_the_oldest_every_so_often() {
        assert_eq!(eviction_floor(0, 0), 0);
        assert_eq!(eviction_floor(1, 500), 500);
        assert_eq!(eviction_floor(SWEEP_EVERY - 1, 900), 900);
        assert_eq!(eviction_floor(SWEEP_EVERY, 1_000), 0);
        assert_eq!(eviction_floor(SWEEP_EVERY + 1, 1_100), 1_100);
    }

    #[test]
    fn eviction_drops_a_chunk_ahead_and_never_keeps_more_than_the_count() {
        assert_eq!(eviction_chunk(2), 1, "a small count is kept exactly");
        assert_eq!(eviction_chunk(10_000), 156);
        assert_eq!(eviction_chunk(1_000_000), 256);
        // A small count: each task past it goes as it falls past.
        assert_eq!(eviction_due(2, 2, 0), None);
        assert_eq!(eviction_due(2, 3, 0), Some(1));
        assert_eq!(eviction_due(2, 4, 1), Some(2));
        // 10,000 kept: the first past it takes the next 155 along.
        assert_eq!(eviction_due(10_000, 10_000, 0), None);
        assert_eq!(eviction_due(10_000, 10_001, 0), Some(156));
        for ended in 10_001..=10_156 {
            assert_eq!(eviction_due(10_000, ended, 156), None, "{ended}");
        }
        assert_eq!(eviction_due(10_000, 10_157, 156), Some(312));
        // A batch that ends many at once drops all past the count.
        assert_eq!(eviction_due(10_000, 11_000, 156), Some(1155));
        // After a failed transaction (nothing dropped as far as it knows) it drops
        // again from the start.
        assert_eq!(eviction_due(10_000, 10_500, 0), Some(655));
    }

    #[test]
    fn shapes_take_the_largest_chunk_and_number_parameters_row_by_row() {
        let shapes = Shapes::new(Dialect::Postgres, "INSERT INTO t VALUES ", 2, ", 1", " END");
        let rows = [0_u8; 7];
        let (sql, chunk, rest) = shapes.next(&rows).expect("seven rows");
        assert_eq!(chunk.len(), 4);
        assert_eq!(
            sql,
            "INSERT INTO t VALUES ($1, $2, 1), ($3, $4, 1), ($5, $6, 1), ($7, $8, 1) END"
        );
        let (sql, chunk, rest) = shapes.next(rest).expect("three rows");
        assert_eq!(chunk.len(), 2);
        assert_eq!(sql, "INSERT INTO t VALUES ($1, $2, 1), ($3, $4, 1) END");
        let (sql, chunk, rest) = shapes.next(rest).expect("one row");
        assert_eq!(
            (sql, chunk.len()),
            ("INSERT INTO t VALUES ($1, $2, 1) END", 1)
        );
        assert!(shapes.next(rest).is_none());
        // SQLite's spelling numbers parameters by position.
        let shapes = Shapes::new(Dialect::Sqlite, "INSERT INTO t VALUES ", 2, "", "");
        let (sql, ..) = shapes.next(&rows[..2]).expect("two rows");
        assert_eq!(sql, "INSERT INTO t VALUES (?1, ?2), (?3, ?4)");
    }
}
