//! The contract every task store keeps: [`TaskStore`] and the values it speaks in.
//!
//! The store is the single source of truth for a task's status, history and artifacts.
//! Its one hard rule is that a terminal task never changes state again
//! ([`TaskStore::set_status`] refuses), which is what makes a cancel racing with a
//! completion come out as exactly one of the two.
//!
//! Beside tasks a store keeps what must outlive the process with them: the per-task
//! event log (whose sequence numbers are the SSE `id:`s a stream resumes from),
//! idempotency keys with the task they answered, push-notification configs, and
//! versioned records (workflow definitions and anything else a crate above wants kept).
//! Every write a method acknowledges is durable in a durable store: it returns only
//! after the transaction that holds it committed (except the `…_unanswered` writes,
//! which the task's next answered write commits).
//!
//! The trait is async and returns `Result` everywhere so that a durable store (a
//! database, a log) can implement it. The methods added for durability have defaults
//! (nothing kept), so a store written against the first contract still compiles.

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use agentyard_transport::a2a::{
    Artifact, Message, StreamEvent, Task, TaskPushNotificationConfig, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use agentyard_transport::{ContextId, MessageId, TaskId};
use async_trait::async_trait;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No task has this id.
    #[error("task `{0}` not found")]
    NotFound(TaskId),
    /// A task with this id exists already.
    #[error("task `{0}` already exists")]
    AlreadyExists(TaskId),
    /// The task has reached a terminal state and cannot change any more.
    #[error("task `{task_id}` is already {state}")]
    Terminal {
        /// The task.
        task_id: TaskId,
        /// The terminal state it is in.
        state: TaskState,
    },
    /// The storage backend failed.
    #[error("task store backend failed")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The database cannot be reached or refused the write (down, restarting, full
    /// disk, locked or corrupt file); nothing of the operation was stored. Reads that
    /// need it fail too; the store reconnects by itself when the database returns.
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
    /// A record was changed by someone else since it was read
    /// ([`TaskStore::put_record`] with an expected version).
    #[error("record `{namespace}/{key}` is at version {found:?}, not {expected:?}")]
    Conflict {
        /// The record's namespace.
        namespace: String,
        /// The record's key.
        key: String,
        /// The version the writer expected (`None`: that it did not exist).
        expected: Option<u64>,
        /// The version it has (`None`: it does not exist).
        found: Option<u64>,
    },
}

/// Who a task belongs to: the agent it was created for and the authenticated caller
/// that created it. The HTTP edge answers a task's methods only at that agent's
/// endpoint and only to that caller; everyone else gets `TaskNotFound`.
///
/// Kept by the store beside the task, never inside it, so it never reaches a client,
/// an agent or a webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskOwner {
    /// The agent type the task runs on.
    pub agent: Arc<str>,
    /// The principal that created the task; `None` for tasks created in-process, by an
    /// agent, or by an unauthenticated caller.
    pub principal: Option<Arc<str>>,
}

impl TaskOwner {
    /// The owner of a task of `agent`, created by `principal`.
    #[must_use]
    pub fn new(agent: impl Into<Arc<str>>, principal: Option<Arc<str>>) -> Self {
        Self {
            agent: agent.into(),
            principal,
        }
    }

    /// Whether `principal` created the task: the same name, or both unauthenticated.
    /// The isolation rule every outside entry point applies (docs/semantics.md,
    /// "Isolation"), beside its own check that the task's agent is the one asked.
    #[must_use]
    pub fn created_by(&self, principal: Option<&str>) -> bool {
        self.principal.as_deref() == principal
    }
}

/// Storage for tasks, their history and artifacts.
///
/// Implementations must be safe to call from many tasks at once; the runtime shares one
/// store between every session.
#[async_trait]
pub trait TaskStore: Send + Sync + fmt::Debug + 'static {
    /// Stores a new task.
    ///
    /// # Errors
    /// [`StoreError::AlreadyExists`] if the id is taken.
    async fn insert(&self, task: Task) -> Result<(), StoreError>;

    /// Stores a new task with its owner ([`TaskStore::owner`] returns it for as long as
    /// the task is kept). The supervisor creates every task this way.
    ///
    /// # Errors
    /// [`StoreError::AlreadyExists`] if the id is taken (the existing task keeps its
    /// owner).
    async fn insert_owned(&self, task: Task, owner: TaskOwner) -> Result<(), StoreError>;

    /// [`TaskStore::insert_owned`] for a task nobody is answered on before a later
    /// write of it (a send whose caller waits until the task settles: the final status
    /// is written, and answered, before the task is returned), with an id minted for
    /// it ([`TaskId::mint`]). A durable store may return before the write is
    /// committed, even before its rules are checked, since it commits a task's writes
    /// in order: if this one is refused or lost, the task's later writes fail. Until
    /// it commits, reads may not see the task. The default is
    /// [`TaskStore::insert_owned`].
    ///
    /// # Errors
    /// As [`TaskStore::insert_owned`].
    async fn insert_owned_unanswered(
        &self,
        task: Task,
        owner: TaskOwner,
    ) -> Result<(), StoreError> {
        self.insert_owned(task, owner).await
    }

    /// This store as the in-memory store, when it is one. Every call on that store is
    /// done at once, so the runtime makes its most frequent calls on it directly
    /// (`InMemoryTaskStore::set_status_logged_now` and the like), without the boxed
    /// future of each call through a `dyn TaskStore`. `None`, the default, for any
    /// other store, one that wraps an in-memory store included: its calls are its own.
    fn in_memory(&self) -> Option<&crate::InMemoryTaskStore> {
        None
    }

    /// The owner of a task, or `None` if there is no such task or it was stored
    /// without one ([`TaskStore::insert`]).
    ///
    /// # Errors
    /// Only backend failures.
    async fn owner(&self, id: &TaskId) -> Result<Option<TaskOwner>, StoreError>;

    /// The principal a conversation belongs to: the principal of its most recent task
    /// that has one; `None` when no task of the conversation was created by an
    /// authenticated caller (or the conversation is unknown).
    ///
    /// # Errors
    /// Only backend failures.
    async fn context_principal(
        &self,
        context_id: &ContextId,
    ) -> Result<Option<Arc<str>>, StoreError>;

    /// Returns a task with at most the `history_length` most recent history messages
    /// (all of them when `None`), or `None` if there is no such task.
    ///
    /// # Errors
    /// Only backend failures.
    async fn get(
        &self,
        id: &TaskId,
        history_length: Option<usize>,
    ) -> Result<Option<Task>, StoreError>;

    /// Moves a task to `status` and returns the state it had before.
    ///
    /// # Errors
    /// [`StoreError::Terminal`] if the task has already reached a terminal state (it is
    /// left as it is); [`StoreError::NotFound`] if there is no such task.
    async fn set_status(&self, id: &TaskId, status: TaskStatus) -> Result<TaskState, StoreError>;

    /// Appends a message to the task's history. The message is shared, not copied:
    /// the same one can sit in the history, a status and the event log at once.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; [`StoreError::Terminal`] if the task has ended.
    async fn append_history(&self, id: &TaskId, message: Arc<Message>) -> Result<(), StoreError>;

    /// [`TaskStore::append_history`] for a message nobody is answered on before a
    /// later write of the same task (the agent's last message before its final
    /// status; a continuing message before the task is resubmitted). The rules are
    /// checked before it returns, as there; a durable store may return before the
    /// write is committed, since it commits a task's writes in order: the later write
    /// that is answered commits this one with or before it, and fails if this one
    /// was lost. The default is [`TaskStore::append_history`].
    ///
    /// # Errors
    /// As [`TaskStore::append_history`].
    async fn append_history_unanswered(
        &self,
        id: &TaskId,
        message: Arc<Message>,
    ) -> Result<(), StoreError> {
        self.append_history(id, message).await
    }

    /// Adds an artifact to the task. With `append`, the parts are added to the artifact
    /// of the same id (created if absent); otherwise an artifact of the same id is
    /// replaced. Returns the artifact as stored.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; [`StoreError::Terminal`] if the task has ended.
    async fn put_artifact(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
    ) -> Result<Arc<Artifact>, StoreError>;

    /// One page of the tasks `filter` accepts, most recently changed status first:
    /// at most `page_size` tasks changed before the cursor `before` (from the start
    /// when `None`), the cursor of the next page (`None` on the last), and how many
    /// tasks the filter accepts in all. `filter` sees each task and its owner.
    ///
    /// # Errors
    /// Only backend failures; a store without a status-time index answers
    /// [`StoreError::Backend`] (the default).
    async fn list(
        &self,
        filter: &TaskFilter<'_>,
        page_size: usize,
        before: Option<u64>,
    ) -> Result<TaskPage, StoreError> {
        let _ = (filter, page_size, before);
        Err(StoreError::Backend(
            "this task store cannot list tasks".into(),
        ))
    }

    /// Returns the `limit` most recent messages of a conversation, across its tasks,
    /// oldest first. With `before`, only messages older than that message count (it
    /// and anything newer are left out), so an agent sees the conversation as it
    /// stood when the message it handles arrived, even if more has been added since;
    /// if `before` is not in the conversation, the most recent messages are returned.
    ///
    /// # Errors
    /// Only backend failures.
    async fn context_history(
        &self,
        context_id: &ContextId,
        before: Option<&MessageId>,
        limit: usize,
    ) -> Result<Vec<Arc<Message>>, StoreError>;

    /// Appends an event to the task's event log and returns its sequence number: 1 for
    /// the task's first event, then one more for each. The number is the SSE `id:` of
    /// the event, from which a stream resumes ([`TaskStore::events_after`]). The log
    /// goes with its task. `None` from a store that keeps no log (the default).
    ///
    /// # Errors
    /// [`StoreError::NotFound`] if there is no such task; backend failures.
    async fn append_event(
        &self,
        id: &TaskId,
        event: &StreamEvent,
    ) -> Result<Option<u64>, StoreError> {
        let _ = (id, event);
        Ok(None)
    }

    /// [`TaskStore::set_status`] of the update's status and
    /// [`TaskStore::append_event`] of the update, as one write: a durable store
    /// commits both or neither, so a stream that resumes never misses a status the
    /// task has. The status is taken from the update, so the two cannot disagree, and
    /// the update is the store's to keep. Returns the previous state and the event's
    /// number.
    ///
    /// # Errors
    /// As [`TaskStore::set_status`].
    async fn set_status_logged(
        &self,
        id: &TaskId,
        update: TaskStatusUpdateEvent,
    ) -> Result<(TaskState, Option<u64>), StoreError> {
        let previous = self.set_status(id, update.status.clone()).await?;
        let seq = self
            .append_event(id, &StreamEvent::StatusUpdate(update))
            .await?;
        Ok((previous, seq))
    }

    /// [`TaskStore::put_artifact`] and [`TaskStore::append_event`] of the update that
    /// announces it, as one write. Returns the artifact as stored and the event's
    /// number.
    ///
    /// # Errors
    /// As [`TaskStore::put_artifact`].
    async fn put_artifact_logged(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
        event: &StreamEvent,
    ) -> Result<(Arc<Artifact>, Option<u64>), StoreError> {
        let stored = self.put_artifact(id, artifact, append).await?;
        let seq = self.append_event(id, event).await?;
        Ok((stored, seq))
    }

    /// The events of a task's log after sequence number `after` (all with 0), in order,
    /// with their numbers. Empty for an unknown task.
    ///
    /// # Errors
    /// Only backend failures.
    async fn events_after(
        &self,
        id: &TaskId,
        after: u64,
    ) -> Result<Vec<(u64, StreamEvent)>, StoreError> {
        let _ = (id, after);
        Ok(Vec::new())
    }

    /// Remembers that the send with idempotency key `key` (already scoped to its
    /// caller) answered with `task`, replacing an older entry of the key. While the
    /// key is remembered its task is never dropped by retention.
    ///
    /// # Errors
    /// Only backend failures.
    async fn remember_key(&self, key: &str, task: &TaskId) -> Result<(), StoreError> {
        let _ = (key, task);
        Ok(())
    }

    /// The task a key answered, if the key was remembered at or after `since` and not
    /// forgotten since.
    ///
    /// # Errors
    /// Only backend failures.
    async fn recall_key(&self, key: &str, since: SystemTime) -> Result<Option<TaskId>, StoreError> {
        let _ = (key, since);
        Ok(None)
    }

    /// Forgets a key; its task may then be dropped by retention, at once if it is past
    /// the limits already.
    ///
    /// # Errors
    /// Only backend failures.
    async fn forget_key(&self, key: &str) -> Result<(), StoreError> {
        let _ = key;
        Ok(())
    }

    /// Stores a push-notification config, replacing the one of the same task and
    /// config id. Configs go with their task.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] if there is no such task; backend failures.
    async fn put_push_config(&self, config: &TaskPushNotificationConfig) -> Result<(), StoreError> {
        let _ = config;
        Err(StoreError::Backend(
            "this task store cannot keep push configs".into(),
        ))
    }

    /// The push-notification configs of a task, in the order they were first set.
    ///
    /// # Errors
    /// Only backend failures.
    async fn push_configs(
        &self,
        id: &TaskId,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        let _ = id;
        Ok(Vec::new())
    }

    /// Deletes a push-notification config; whether there was one.
    ///
    /// # Errors
    /// Only backend failures.
    async fn delete_push_config(&self, id: &TaskId, config_id: &str) -> Result<bool, StoreError> {
        let _ = (id, config_id);
        Ok(false)
    }

    /// The tasks that have push-notification configs: what a notifier reloads after a
    /// restart.
    ///
    /// # Errors
    /// Only backend failures.
    async fn tasks_with_push_configs(&self) -> Result<Vec<TaskId>, StoreError> {
        Ok(Vec::new())
    }

    /// Every task that has not ended (working, submitted, input-required, …), with its
    /// state: what a restart looks at.
    ///
    /// # Errors
    /// Only backend failures.
    async fn unfinished(&self) -> Result<Vec<(TaskId, TaskState)>, StoreError> {
        Ok(Vec::new())
    }

    /// Drops the ended tasks that ended before `cutoff` (with their logs and configs),
    /// except those a remembered key names; how many went. Retention by age; retention
    /// by count happens as tasks end.
    ///
    /// # Errors
    /// Only backend failures.
    async fn drop_ended_before(&self, cutoff: SystemTime) -> Result<usize, StoreError> {
        let _ = cutoff;
        Ok(0)
    }

    /// Stores a versioned record under `namespace`/`key` and returns its new version.
    /// With `expected`, the write happens only if the record is at that version
    /// (`Some(0)`: only if it does not exist), so two writers never lose each other's
    /// update; without, it always happens.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the version differs; backend failures.
    async fn put_record(
        &self,
        namespace: &str,
        key: &str,
        value: &serde_json::Value,
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        let _ = (namespace, key, value, expected);
        Err(StoreError::Backend(
            "this task store cannot keep records".into(),
        ))
    }

    /// A record and its version.
    ///
    /// # Errors
    /// Only backend failures.
    async fn get_record(&self, namespace: &str, key: &str) -> Result<Option<Record>, StoreError> {
        let _ = (namespace, key);
        Ok(None)
    }

    /// Every record of a namespace, by key.
    ///
    /// # Errors
    /// Only backend failures.
    async fn list_records(&self, namespace: &str) -> Result<Vec<Record>, StoreError> {
        let _ = namespace;
        Ok(Vec::new())
    }

    /// Deletes a record; whether there was one.
    ///
    /// # Errors
    /// Only backend failures.
    async fn delete_record(&self, namespace: &str, key: &str) -> Result<bool, StoreError> {
        let _ = (namespace, key);
        Ok(false)
    }
}

/// A versioned record of [`TaskStore::put_record`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Record {
    /// Its key within the namespace.
    pub key: String,
    /// Its version: 1 when first written, one more at each write.
    pub version: u64,
    /// Its value.
    pub value: serde_json::Value,
}

impl Record {
    /// A record as stored.
    #[must_use]
    pub fn new(key: impl Into<String>, version: u64, value: serde_json::Value) -> Self {
        Self {
            key: key.into(),
            version,
            value,
        }
    }
}

/// How long ended tasks are kept, the same in every store: at most `finished_tasks`
/// of them (the one that ended first goes when another ends past the count), and none
/// older than `max_age` (dropped by [`TaskStore::drop_ended_before`], which the runtime
/// calls now and then). Tasks that have not ended, and tasks a remembered idempotency
/// key names, are never dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retention {
    /// How many ended tasks are kept.
    pub finished_tasks: usize,
    /// How long an ended task is kept; `None` keeps it until the count drops it.
    pub max_age: Option<std::time::Duration>,
}

impl Retention {
    /// How many ended tasks a store keeps by default.
    pub const DEFAULT_FINISHED_TASKS: usize = 10_000;

    /// Keeps `finished_tasks` ended tasks (at least one), of any age.
    #[must_use]
    pub fn new(finished_tasks: usize) -> Self {
        Self {
            finished_tasks: finished_tasks.max(1),
            max_age: None,
        }
    }

    /// Also drops ended tasks older than `max_age`.
    #[must_use]
    pub fn max_age(mut self, max_age: Option<std::time::Duration>) -> Self {
        self.max_age = max_age;
        self
    }
}

impl Default for Retention {
    fn default() -> Self {
        Self::new(Self::DEFAULT_FINISHED_TASKS)
    }
}

/// What [`TaskStore::list`] keeps: a test of a task and its owner.
pub type TaskFilter<'a> = dyn Fn(&Task, Option<&TaskOwner>) -> bool + Send + Sync + 'a;

/// A page of [`TaskStore::list`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct TaskPage {
    /// The tasks of this page, most recently changed status first.
    pub tasks: Vec<Task>,
    /// The cursor of the next page; `None` on the last.
    pub next: Option<u64>,
    /// How many tasks the filter accepts over all pages.
    pub total: usize,
}

/// Puts `artifact` among a task's `artifacts` as [`TaskStore::put_artifact`] says: with
/// `append`, its parts go after those of the artifact of the same id (added if there
/// is none); without, it replaces that artifact. Returns the artifact as stored. Every
/// store keeps this rule through here. The existing artifact is copied first only if
/// an event or a reader still holds it as it was.
pub(crate) fn merge_artifact(
    artifacts: &mut Vec<Arc<Artifact>>,
    artifact: &Arc<Artifact>,
    append: bool,
) -> Arc<Artifact> {
    match artifacts
        .iter_mut()
        .find(|a| a.artifact_id == artifact.artifact_id)
    {
        Some(existing) if append => {
            Arc::make_mut(existing)
                .parts
                .extend(artifact.parts.iter().cloned());
            Arc::clone(existing)
        }
        Some(existing) => {
            *existing = Arc::clone(artifact);
            Arc::clone(artifact)
        }
        None => {
            artifacts.push(Arc::clone(artifact));
            Arc::clone(artifact)
        }
    }
}
