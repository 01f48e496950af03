//! Where tasks live: the [`TaskStore`] trait and its in-memory implementation.
//!
//! The store is the single source of truth for a task's status, history and artifacts.
//! Its one hard rule is that a terminal task never changes state again
//! ([`TaskStore::set_status`] refuses), which is what makes a cancel racing with a
//! completion come out as exactly one of the two.
//!
//! The trait is async and returns `Result` everywhere so that a durable store (a
//! database, a log) can implement it; the in-memory store never fails and never awaits.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use agentyard_transport::a2a::{Artifact, Message, Task, TaskState, TaskStatus};
use agentyard_transport::{ContextId, MessageId, TaskId};
use async_trait::async_trait;
use dashmap::DashMap;
use dashmap::mapref::entry::Entry;

#[cfg(test)]
mod tests;

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

    /// Keeps a task, even after it ends, until a matching [`TaskStore::release`]: an
    /// idempotency key that names the task is still remembered, and a repeat of its
    /// send must find the task. Calls nest (two keys may name one task). A store that
    /// never forgets tasks needs nothing here, which is the default.
    fn keep(&self, id: &TaskId) {
        let _ = id;
    }

    /// Undoes one [`TaskStore::keep`]; a task that ended and is past the store's
    /// limits may then be forgotten.
    fn release(&self, id: &TaskId) {
        let _ = id;
    }

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

    /// Appends a message to the task's history.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; [`StoreError::Terminal`] if the task has ended.
    async fn append_history(&self, id: &TaskId, message: Message) -> Result<(), StoreError>;

    /// Adds an artifact to the task. With `append`, the parts are added to the artifact
    /// of the same id (created if absent); otherwise an artifact of the same id is
    /// replaced. Returns the artifact as stored.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; [`StoreError::Terminal`] if the task has ended.
    async fn put_artifact(
        &self,
        id: &TaskId,
        artifact: Artifact,
        append: bool,
    ) -> Result<Artifact, StoreError>;

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
    ) -> Result<Vec<Message>, StoreError>;
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

/// The tasks ordered by when their status last changed: each change takes the next
/// number, so a cursor (a number) stays meaningful while tasks change.
#[derive(Debug, Default)]
struct StatusOrder {
    by_change: BTreeMap<u64, TaskId>,
    of_task: HashMap<TaskId, u64>,
    next: u64,
}

impl StatusOrder {
    fn touch(&mut self, id: &TaskId) {
        self.next += 1;
        if let Some(old) = self.of_task.insert(id.clone(), self.next) {
            self.by_change.remove(&old);
        }
        self.by_change.insert(self.next, id.clone());
    }

    fn remove(&mut self, id: &TaskId) {
        if let Some(old) = self.of_task.remove(id) {
            self.by_change.remove(&old);
        }
    }
}

/// The default [`TaskStore`]: tasks in a concurrent map, lost when the process exits.
///
/// Each operation locks one shard of the map for a few pointer moves; nothing is held
/// across an await (there are none). Memory is bounded two ways:
///
/// - conversations remember the ids of their most recent tasks only
///   ([`InMemoryTaskStore::with_context_task_limit`], default 256), so one long
///   conversation cannot grow without bound;
/// - ended tasks (completed, failed, canceled, rejected) are kept for `tasks/get` up to
///   [`InMemoryTaskStore::finished_task_limit`] (default 10,000); past it the task that
///   ended first is forgotten, and reads of it find nothing. Tasks still running or
///   waiting for input are never forgotten, nor are tasks an idempotency key still
///   names ([`TaskStore::keep`]): those go when their last key does, so at most the
///   idempotency cache's capacity of ended tasks is kept beyond the limit.
#[derive(Debug)]
pub struct InMemoryTaskStore {
    tasks: DashMap<TaskId, Task>,
    /// Beside `tasks` rather than in it: the wire `Task` has no place for it.
    owners: DashMap<TaskId, TaskOwner>,
    /// Tasks kept for idempotency keys.
    kept: DashMap<TaskId, Kept>,
    contexts: DashMap<ContextId, VecDeque<TaskId>>,
    context_task_limit: usize,
    /// Ended tasks in the order they ended, oldest first.
    finished: Mutex<VecDeque<TaskId>>,
    finished_task_limit: usize,
    /// The index [`TaskStore::list`] pages through. Its lock is never held while a
    /// map's is, nor taken while one is held.
    order: Mutex<StatusOrder>,
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryTaskStore {
    /// How many ended tasks a new store keeps.
    pub const DEFAULT_FINISHED_TASK_LIMIT: usize = 10_000;
    /// How many tasks of one conversation a new store remembers.
    pub const DEFAULT_CONTEXT_TASK_LIMIT: usize = 256;

    /// An empty store remembering up to 256 tasks per conversation and 10,000 ended
    /// tasks.
    #[must_use]
    pub fn new() -> Self {
        Self::with_context_task_limit(Self::DEFAULT_CONTEXT_TASK_LIMIT)
    }

    /// An empty store that remembers the `limit` most recent tasks of each conversation
    /// for [`TaskStore::context_history`] (at least one).
    #[must_use]
    pub fn with_context_task_limit(limit: usize) -> Self {
        Self {
            tasks: DashMap::new(),
            owners: DashMap::new(),
            kept: DashMap::new(),
            contexts: DashMap::new(),
            context_task_limit: limit.max(1),
            finished: Mutex::new(VecDeque::new()),
            finished_task_limit: Self::DEFAULT_FINISHED_TASK_LIMIT,
            order: Mutex::default(),
        }
    }

    /// Keeps at most `limit` ended tasks (at least one), forgetting the one that ended
    /// first when another ends.
    #[must_use]
    pub fn finished_task_limit(mut self, limit: usize) -> Self {
        self.finished_task_limit = limit.max(1);
        self
    }

    /// Counts a task as ended, and forgets the oldest ended task past the limit.
    fn retire(&self, id: &TaskId) {
        let evicted = {
            let mut finished = self.finished.lock().unwrap_or_else(PoisonError::into_inner);
            finished.push_back(id.clone());
            if finished.len() > self.finished_task_limit {
                finished.pop_front()
            } else {
                None
            }
        };
        if let Some(evicted) = evicted {
            // A kept task is forgotten by the `release` of its last key instead.
            let kept = self
                .kept
                .get_mut(&evicted)
                .map(|mut kept| kept.overdue = true);
            if kept.is_none() {
                self.forget(&evicted);
            }
        }
    }

    /// Removes an ended task and its place in its conversation (and the conversation,
    /// once it has no task left). One map's lock at a time.
    fn forget(&self, id: &TaskId) {
        let Some((_, task)) = self.tasks.remove(id) else {
            return;
        };
        self.owners.remove(id);
        self.order().remove(id);
        if let Some(mut ids) = self.contexts.get_mut(&task.context_id) {
            // Usually the conversation's oldest task, so usually the front.
            if ids.front() == Some(id) {
                ids.pop_front();
            } else {
                ids.retain(|other| other != id);
            }
        }
        self.contexts
            .remove_if(&task.context_id, |_, ids| ids.is_empty());
    }

    fn order(&self) -> std::sync::MutexGuard<'_, StatusOrder> {
        self.order.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The number of tasks stored.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether the store holds no task.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Runs `f` on a live (non-terminal) task.
    fn with_live<T>(&self, id: &TaskId, f: impl FnOnce(&mut Task) -> T) -> Result<T, StoreError> {
        let mut task = self
            .tasks
            .get_mut(id)
            .ok_or_else(|| StoreError::NotFound(id.clone()))?;
        if task.status.state.is_terminal() {
            return Err(StoreError::Terminal {
                task_id: id.clone(),
                state: task.status.state,
            });
        }
        Ok(f(&mut task))
    }
}

/// How many idempotency keys keep a task, and whether the finished-task limit has
/// already passed it by (then the last release forgets it).
#[derive(Debug, Default)]
struct Kept {
    keys: usize,
    overdue: bool,
}

/// Keeps only the `n` most recent messages of a history.
fn trim_history(task: &mut Task, n: usize) {
    if let Some(history) = task.history.as_mut() {
        let excess = history.len().saturating_sub(n);
        history.drain(..excess);
    }
}

#[async_trait]
impl TaskStore for InMemoryTaskStore {
    async fn insert(&self, task: Task) -> Result<(), StoreError> {
        let context_id = task.context_id.clone();
        let task_id = task.id.clone();
        let ended = task.status.state.is_terminal();
        match self.tasks.entry(task_id.clone()) {
            Entry::Occupied(_) => return Err(StoreError::AlreadyExists(task_id)),
            Entry::Vacant(slot) => {
                slot.insert(task);
            }
        }
        {
            let mut ids = self.contexts.entry(context_id).or_default();
            ids.push_back(task_id.clone());
            if ids.len() > self.context_task_limit {
                ids.pop_front();
            }
        }
        self.order().touch(&task_id);
        if ended {
            self.retire(&task_id);
        }
        Ok(())
    }

    async fn insert_owned(&self, task: Task, owner: TaskOwner) -> Result<(), StoreError> {
        let id = task.id.clone();
        self.insert(task).await?;
        // Nobody outside knows the id before this returns, so the owner coming second
        // is never seen missing. A task stored already ended may be gone again at once.
        self.owners.insert(id.clone(), owner);
        if !self.tasks.contains_key(&id) {
            self.owners.remove(&id);
        }
        Ok(())
    }

    async fn owner(&self, id: &TaskId) -> Result<Option<TaskOwner>, StoreError> {
        Ok(self.owners.get(id).map(|owner| owner.clone()))
    }

    async fn context_principal(
        &self,
        context_id: &ContextId,
    ) -> Result<Option<Arc<str>>, StoreError> {
        // An `owners` lock inside a `contexts` one: no path takes them the other way.
        let Some(ids) = self.contexts.get(context_id) else {
            return Ok(None);
        };
        Ok(ids.iter().rev().find_map(|id| {
            self.owners
                .get(id)
                .and_then(|owner| owner.principal.clone())
        }))
    }

    fn keep(&self, id: &TaskId) {
        self.kept.entry(id.clone()).or_default().keys += 1;
    }

    fn release(&self, id: &TaskId) {
        let overdue = match self.kept.entry(id.clone()) {
            Entry::Occupied(mut kept) => {
                let keys = kept.get().keys.saturating_sub(1);
                kept.get_mut().keys = keys;
                keys == 0 && kept.remove().overdue
            }
            Entry::Vacant(_) => false,
        };
        if overdue {
            self.forget(id);
        }
    }

    async fn get(
        &self,
        id: &TaskId,
        history_length: Option<usize>,
    ) -> Result<Option<Task>, StoreError> {
        // Clone under the shard lock, trim outside it.
        let Some(mut task) = self.tasks.get(id).map(|t| t.clone()) else {
            return Ok(None);
        };
        if let Some(n) = history_length {
            trim_history(&mut task, n);
        }
        Ok(Some(task))
    }

    async fn set_status(&self, id: &TaskId, status: TaskStatus) -> Result<TaskState, StoreError> {
        let ends = status.state.is_terminal();
        let previous =
            self.with_live(id, |task| std::mem::replace(&mut task.status, status).state)?;
        self.order().touch(id);
        if ends {
            self.retire(id);
        }
        Ok(previous)
    }

    async fn append_history(&self, id: &TaskId, message: Message) -> Result<(), StoreError> {
        self.with_live(id, |task| {
            task.history.get_or_insert_with(Vec::new).push(message)
        })
    }

    async fn put_artifact(
        &self,
        id: &TaskId,
        artifact: Artifact,
        append: bool,
    ) -> Result<Artifact, StoreError> {
        self.with_live(id, |task| {
            let artifacts = task.artifacts.get_or_insert_with(Vec::new);
            match artifacts
                .iter_mut()
                .find(|a| a.artifact_id == artifact.artifact_id)
            {
                Some(existing) if append => {
                    existing.parts.extend(artifact.parts);
                    existing.clone()
                }
                Some(existing) => {
                    *existing = artifact;
                    existing.clone()
                }
                None => {
                    artifacts.push(artifact.clone());
                    artifact
                }
            }
        })
    }

    async fn list(
        &self,
        filter: &TaskFilter<'_>,
        page_size: usize,
        before: Option<u64>,
    ) -> Result<TaskPage, StoreError> {
        // A snapshot of the order, so no map is read under the index's lock. Every
        // task is looked at, for `total`: a scan of the tasks kept, as the in-memory
        // store keeps a bounded number.
        let order: Vec<(u64, TaskId)> = self
            .order()
            .by_change
            .iter()
            .rev()
            .map(|(change, id)| (*change, id.clone()))
            .collect();
        let mut page = TaskPage::default();
        let mut last = None;
        for (change, id) in order {
            let owner = self.owners.get(&id).map(|owner| owner.clone());
            let Some(task) = self.tasks.get(&id) else {
                continue;
            };
            if !filter(&task, owner.as_ref()) {
                continue;
            }
            page.total += 1;
            if before.is_some_and(|before| change >= before) {
                continue;
            }
            if page.tasks.len() < page_size {
                page.tasks.push(task.clone());
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
        // Reads a task's shard while holding the conversation's: deadlock-free because
        // no code path takes a `contexts` lock while it holds a `tasks` one. Walking
        // the ids in place, newest first, copies only the messages returned.
        let Some(ids) = self.contexts.get(context_id) else {
            return Ok(Vec::new());
        };
        let mut newest_first = Vec::with_capacity(limit.min(64));
        let mut skipped = Vec::new();
        let mut seen_before = before.is_none();
        'tasks: for id in ids.iter().rev() {
            let Some(task) = self.tasks.get(id) else {
                continue;
            };
            for message in task.history.iter().flatten().rev() {
                if !seen_before {
                    if before == Some(&message.message_id) {
                        seen_before = true;
                    } else if skipped.len() < limit {
                        // Kept only for when `before` turns out not to be here.
                        skipped.push(message.clone());
                    }
                    continue;
                }
                newest_first.push(message.clone());
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
}
