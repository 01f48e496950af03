//! The in-memory [`TaskStore`]: the library's default, lost when the process exits.
//! It never fails and never awaits.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use agentyard_transport::a2a::{
    Artifact, Message, StreamEvent, Task, TaskPushNotificationConfig, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use agentyard_transport::{ContextId, MessageId, TaskId};
use async_trait::async_trait;
use dashmap::DashMap;
use dashmap::mapref::entry::Entry;

use crate::contract::{Record, Retention, StoreError, TaskFilter, TaskOwner, TaskPage, TaskStore};

#[cfg(test)]
mod tests;

/// The store's maps: keyed by ids, many of them chosen by clients (conversation ids,
/// idempotency keys), so seeded per map; and hashed with foldhash rather than the
/// standard SipHash, which cost more than any other part of a lookup or of a
/// shard's rehash under steady churn (`docs/benchmarks.md`).
type Map<K, V> = DashMap<K, V, foldhash::quality::RandomState>;

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
///   names ([`TaskStore::remember_key`]): those go when their last key does, so at most the
///   idempotency cache's capacity of ended tasks is kept beyond the limit.
#[derive(Debug)]
pub struct InMemoryTaskStore {
    tasks: Map<TaskId, TaskEntry>,
    contexts: Map<ContextId, Conversation>,
    context_task_limit: usize,
    /// Ended tasks in the order they ended, oldest first, with when they ended.
    finished: Mutex<VecDeque<(TaskId, SystemTime)>>,
    finished_task_limit: usize,
    /// Numbers status changes: each takes the next, kept in the task's entry, and
    /// [`TaskStore::list`] pages newest first by it. A number, not a lock-guarded
    /// index, so a send's status writes share nothing but this counter; `list`
    /// sorts instead, over the bounded number of tasks kept.
    changes: AtomicU64,
    /// Numbers tasks as they are created: a conversation keeps its tasks in this
    /// order, so it finds one of them by a binary search ([`Conversation::remove`]).
    joined: AtomicU64,
    /// Remembered idempotency keys: the task each answered, and when.
    keys: Map<String, (TaskId, SystemTime)>,
    records: Map<(String, String), (u64, serde_json::Value)>,
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryTaskStore {
    /// How many ended tasks a new store keeps.
    pub const DEFAULT_FINISHED_TASK_LIMIT: usize = Retention::DEFAULT_FINISHED_TASKS;
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
            tasks: Map::default(),
            contexts: Map::default(),
            context_task_limit: limit.max(1),
            finished: Mutex::new(VecDeque::new()),
            finished_task_limit: Self::DEFAULT_FINISHED_TASK_LIMIT,
            changes: AtomicU64::new(0),
            joined: AtomicU64::new(0),
            keys: Map::default(),
            records: Map::default(),
        }
    }

    /// Keeps at most `limit` ended tasks (at least one), forgetting the one that ended
    /// first when another ends.
    #[must_use]
    pub fn finished_task_limit(mut self, limit: usize) -> Self {
        self.finished_task_limit = limit.max(1);
        self
    }

    /// Keeps ended tasks as `retention` says: its count here, its age when the runtime
    /// calls [`TaskStore::drop_ended_before`].
    #[must_use]
    pub fn retention(self, retention: Retention) -> Self {
        self.finished_task_limit(retention.finished_tasks)
    }

    /// Counts a task as ended at `at`, and forgets the oldest ended task past the
    /// limit.
    fn retire(&self, id: &TaskId, at: SystemTime) {
        let evicted = {
            let mut finished = self.finished.lock().unwrap_or_else(PoisonError::into_inner);
            finished.push_back((id.clone(), at));
            if finished.len() > self.finished_task_limit {
                finished.pop_front()
            } else {
                None
            }
        };
        if let Some((evicted, _)) = evicted {
            self.evict(&evicted);
        }
    }

    /// Forgets an ended task past the limits, unless a key keeps it: then the
    /// `release` of its last key forgets it. One lookup of the task either way: what
    /// keeps it is counted in its entry.
    fn evict(&self, id: &TaskId) {
        self.forget_if(id, |stored| {
            stored.overdue = stored.keys > 0;
            !stored.overdue
        });
    }

    /// Removes an ended task and its place in its conversation (and the conversation,
    /// once it has no task left), if `gone` says so of its entry. One map's lock at a
    /// time.
    fn forget_if(&self, id: &TaskId, gone: impl FnOnce(&mut TaskEntry) -> bool) {
        let Some((_, stored)) = self.tasks.remove_if_mut(id, |_, stored| gone(stored)) else {
            return;
        };
        // One lookup of the conversation: its member goes, and the conversation too
        // once it has none left.
        self.contexts
            .remove_if_mut(&stored.task.context_id, |_, conversation| {
                conversation.remove(id, stored.joined);
                conversation.is_empty()
            });
    }

    /// Stores a new task, with its owner when it has one, as of `at` (when it ended,
    /// if it is stored ended: asked only then, as [`Self::change_status`] asks). The
    /// owner is in place before the task joins its conversation, so a send naming the
    /// conversation never finds the task without the principal it belongs to.
    pub(crate) fn insert_at(
        &self,
        task: Task,
        owner: Option<TaskOwner>,
        at: impl FnOnce() -> SystemTime,
    ) -> Result<(), StoreError> {
        let context_id = task.context_id.clone();
        let task_id = task.id.clone();
        let ended = task.status.state.is_terminal();
        let principal = owner.as_ref().and_then(|owner| owner.principal.clone());
        let joined = self.joined.fetch_add(1, Ordering::Relaxed);
        match self.tasks.entry(task_id.clone()) {
            Entry::Occupied(_) => return Err(StoreError::AlreadyExists(task_id)),
            Entry::Vacant(slot) => {
                slot.insert(TaskEntry {
                    task,
                    change: self.next_change(),
                    joined,
                    owner,
                    // A task that runs logs two events at least (`working`, then
                    // how it ended): room for them at once, rather than grown on the
                    // first into room for four, which a retained task then keeps.
                    events: if ended {
                        Vec::new()
                    } else {
                        Vec::with_capacity(2)
                    },
                    push_configs: Vec::new(),
                    keys: 0,
                    overdue: false,
                });
            }
        }
        self.contexts.entry(context_id).or_default().push(
            Member {
                joined,
                id: task_id.clone(),
                principal,
            },
            self.context_task_limit,
        );
        if ended {
            self.retire(&task_id, at());
        }
        Ok(())
    }

    /// The number of a status change, later than every one before it.
    fn next_change(&self) -> u64 {
        self.changes.fetch_add(1, Ordering::Relaxed) + 1
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
        self.with_live_entry(id, |stored| f(&mut stored.task))
    }

    /// Runs `f` on a live (non-terminal) task's entry: the task and its event log in
    /// one lookup.
    fn with_live_entry<T>(
        &self,
        id: &TaskId,
        f: impl FnOnce(&mut TaskEntry) -> T,
    ) -> Result<T, StoreError> {
        let mut stored = self
            .tasks
            .get_mut(id)
            .ok_or_else(|| StoreError::NotFound(id.clone()))?;
        if stored.task.status.state.is_terminal() {
            return Err(StoreError::Terminal {
                task_id: id.clone(),
                state: stored.task.status.state,
            });
        }
        Ok(f(&mut stored))
    }

    /// Puts `status` on a live task, numbered as its latest change, and logs `event`
    /// with it if there is one: one lookup. Retires the task if it ended, as of `at`
    /// (asked only then: a clock read costs as much as the rest of a change).
    /// Returns the previous state and the event's number.
    pub(crate) fn change_status(
        &self,
        id: &TaskId,
        status: TaskStatus,
        event: Option<StreamEvent>,
        at: impl FnOnce() -> SystemTime,
    ) -> Result<(TaskState, Option<u64>), StoreError> {
        self.change_status_then(id, status, event, at, |_| ())
            .map(|(previous, seq, ())| (previous, seq))
    }

    /// [`Self::change_status`], and `then` on the task as the change left it, under
    /// the same lock (a read of the task after its change without a second lookup).
    fn change_status_then<T>(
        &self,
        id: &TaskId,
        status: TaskStatus,
        event: Option<StreamEvent>,
        at: impl FnOnce() -> SystemTime,
        then: impl FnOnce(&Task) -> T,
    ) -> Result<(TaskState, Option<u64>, T), StoreError> {
        let ends = status.state.is_terminal();
        let answer = self.with_live_entry(id, |stored| {
            // Numbered under the entry's lock: of two concurrent changes, the one
            // that lands last has the later number.
            stored.change = self.next_change();
            let previous = std::mem::replace(&mut stored.task.status, status).state;
            let seq = event.map(|event| stored.log(event));
            (previous, seq, then(&stored.task))
        })?;
        if ends {
            self.retire(id, at());
        }
        Ok(answer)
    }
}

/// The writes as plain functions: the trait's methods call them with the time now,
/// and the journal store ([`crate::journal`]) applies its logged writes through them,
/// in the log's order, with the times the log recorded.
impl InMemoryTaskStore {
    /// The state of a task, if it is kept.
    pub(crate) fn state_of(&self, id: &TaskId) -> Option<TaskState> {
        self.tasks.get(id).map(|stored| stored.task.status.state)
    }

    /// [`TaskStore::append_history`].
    pub(crate) fn push_history(
        &self,
        id: &TaskId,
        message: Arc<Message>,
    ) -> Result<(), StoreError> {
        self.with_live(id, |task| {
            task.history.get_or_insert_with(Vec::new).push(message)
        })
    }

    /// [`TaskStore::put_artifact`].
    pub(crate) fn store_artifact(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
    ) -> Result<Arc<Artifact>, StoreError> {
        self.with_live(id, |task| {
            let artifacts = task.artifacts.get_or_insert_with(Vec::new);
            crate::contract::merge_artifact(artifacts, &artifact, append)
        })
    }

    /// [`TaskStore::append_event`].
    pub(crate) fn log_event(&self, id: &TaskId, event: StreamEvent) -> Result<u64, StoreError> {
        let mut stored = self
            .tasks
            .get_mut(id)
            .ok_or_else(|| StoreError::NotFound(id.clone()))?;
        Ok(stored.log(event))
    }

    /// Keeps a task, even after it ends, until a matching [`release`](Self::release):
    /// an idempotency key that names it is still remembered, and a repeat of its send
    /// must find it. Calls nest (two keys may name one task). Only a task the store
    /// holds is kept: a key is remembered after its task is stored, so a keep of an id
    /// the store does not hold keeps nothing (and a task stored later under that id is
    /// not kept by it).
    pub(crate) fn keep(&self, id: &TaskId) {
        if let Some(mut stored) = self.tasks.get_mut(id) {
            stored.keys = stored.keys.saturating_add(1);
        }
    }

    /// Undoes one [`keep`](Self::keep); a task that ended and is past the store's
    /// limits may then be forgotten.
    pub(crate) fn release(&self, id: &TaskId) {
        self.forget_if(id, |stored| {
            stored.keys = stored.keys.saturating_sub(1);
            stored.keys == 0 && stored.overdue
        });
    }

    /// [`TaskStore::remember_key`], remembered as of `at`.
    pub(crate) fn remember_key_at(&self, key: &str, task: &TaskId, at: SystemTime) {
        self.keep(task);
        if let Some((old, _)) = self.keys.insert(key.to_owned(), (task.clone(), at)) {
            self.release(&old);
        }
    }

    /// [`TaskStore::forget_key`].
    pub(crate) fn unkey(&self, key: &str) {
        if let Some((_, (task, _))) = self.keys.remove(key) {
            self.release(&task);
        }
    }

    /// [`TaskStore::put_push_config`].
    pub(crate) fn store_push_config(
        &self,
        config: TaskPushNotificationConfig,
    ) -> Result<(), StoreError> {
        let mut stored = self
            .tasks
            .get_mut(&config.task_id)
            .ok_or_else(|| StoreError::NotFound(config.task_id.clone()))?;
        let configs = &mut stored.push_configs;
        match configs
            .iter_mut()
            .find(|old| old.push_notification_config.id == config.push_notification_config.id)
        {
            Some(old) => *old = config,
            None => configs.push(config),
        }
        Ok(())
    }

    /// [`TaskStore::delete_push_config`].
    pub(crate) fn remove_push_config(&self, id: &TaskId, config_id: &str) -> bool {
        let Some(mut stored) = self.tasks.get_mut(id) else {
            return false;
        };
        let configs = &mut stored.push_configs;
        let before = configs.len();
        configs.retain(|config| config.push_notification_config.id.as_deref() != Some(config_id));
        configs.len() != before
    }

    /// [`TaskStore::drop_ended_before`].
    pub(crate) fn drop_ended(&self, cutoff: SystemTime) -> usize {
        let mut dropped = Vec::new();
        {
            let mut finished = self.finished.lock().unwrap_or_else(PoisonError::into_inner);
            while finished.front().is_some_and(|(_, ended)| *ended < cutoff) {
                if let Some((id, _)) = finished.pop_front() {
                    dropped.push(id);
                }
            }
        }
        let mut gone = 0;
        for id in &dropped {
            self.evict(id);
            gone += usize::from(!self.tasks.contains_key(id));
        }
        gone
    }

    /// [`TaskStore::put_record`].
    pub(crate) fn store_record(
        &self,
        namespace: &str,
        key: &str,
        value: serde_json::Value,
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        match self.records.entry((namespace.to_owned(), key.to_owned())) {
            Entry::Occupied(mut slot) => {
                let found = slot.get().0;
                if expected.is_some_and(|expected| expected != found) {
                    return Err(StoreError::Conflict {
                        namespace: namespace.to_owned(),
                        key: key.to_owned(),
                        expected,
                        found: Some(found),
                    });
                }
                *slot.get_mut() = (found + 1, value);
                Ok(found + 1)
            }
            Entry::Vacant(slot) => {
                if expected.is_some_and(|expected| expected != 0) {
                    return Err(StoreError::Conflict {
                        namespace: namespace.to_owned(),
                        key: key.to_owned(),
                        expected,
                        found: None,
                    });
                }
                slot.insert((1, value));
                Ok(1)
            }
        }
    }

    /// [`TaskStore::delete_record`].
    pub(crate) fn remove_record(&self, namespace: &str, key: &str) -> bool {
        self.records
            .remove(&(namespace.to_owned(), key.to_owned()))
            .is_some()
    }
}

/// A task's entry as values ([`StoreImage`]).
#[derive(Debug, Clone)]
pub(crate) struct EntryImage {
    pub task: Task,
    pub change: u64,
    pub joined: u64,
    pub owner: Option<TaskOwner>,
    pub events: Vec<(u64, StreamEvent)>,
    pub push_configs: Vec<TaskPushNotificationConfig>,
}

/// Everything a store holds, as values: what the journal store snapshots and reads
/// back, so that a store rebuilt from it answers every read as the one it was taken
/// from, and its next writes number and retire as that one's would have.
#[derive(Debug, Default)]
pub(crate) struct StoreImage {
    pub entries: Vec<EntryImage>,
    /// Ended tasks in the order they ended, with when.
    pub finished: Vec<(TaskId, SystemTime)>,
    /// Each conversation's members, oldest first, by their numbers.
    pub conversations: Vec<(ContextId, Vec<(u64, TaskId)>)>,
    pub keys: Vec<(String, TaskId, SystemTime)>,
    pub records: Vec<(String, String, u64, serde_json::Value)>,
    pub changes: u64,
    pub joined: u64,
}

impl InMemoryTaskStore {
    /// The store's contents. Consistent only while nothing writes to the store (the
    /// journal store takes it on the thread that makes every write).
    pub(crate) fn image(&self) -> StoreImage {
        let mut entries: Vec<EntryImage> = self
            .tasks
            .iter()
            .map(|stored| EntryImage {
                task: stored.task.clone(),
                change: stored.change,
                joined: stored.joined,
                owner: stored.owner.clone(),
                events: stored.events.clone(),
                push_configs: stored.push_configs.clone(),
            })
            .collect();
        entries.sort_unstable_by_key(|entry| entry.joined);
        let finished = self
            .finished
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        let conversations = self
            .contexts
            .iter()
            .map(|conversation| {
                let members = conversation
                    .tasks
                    .iter()
                    .map(|member| (member.joined, member.id.clone()))
                    .collect();
                (conversation.key().clone(), members)
            })
            .collect();
        let keys = self
            .keys
            .iter()
            .map(|entry| (entry.key().clone(), entry.0.clone(), entry.1))
            .collect();
        let records = self
            .records
            .iter()
            .map(|entry| {
                let (namespace, key) = entry.key().clone();
                (namespace, key, entry.0, entry.1.clone())
            })
            .collect();
        StoreImage {
            entries,
            finished,
            conversations,
            keys,
            records,
            changes: self.changes.load(Ordering::Relaxed),
            joined: self.joined.load(Ordering::Relaxed),
        }
    }

    /// Puts `image` into this store, which must be empty: as
    /// [`InMemoryTaskStore::image`] took it, with the ended tasks a key keeps past
    /// the limits marked to go with their last key.
    pub(crate) fn restore(&self, image: StoreImage) {
        let mut finished_ids = std::collections::HashSet::with_capacity(image.finished.len());
        for (id, _) in &image.finished {
            finished_ids.insert(id.clone());
        }
        let mut principals = std::collections::HashMap::with_capacity(image.entries.len());
        for entry in image.entries {
            let id = entry.task.id.clone();
            principals.insert(
                id.clone(),
                entry
                    .owner
                    .as_ref()
                    .and_then(|owner| owner.principal.clone()),
            );
            self.tasks.insert(
                id,
                TaskEntry {
                    task: entry.task,
                    change: entry.change,
                    joined: entry.joined,
                    owner: entry.owner,
                    events: entry.events,
                    push_configs: entry.push_configs,
                    // Counted from the keys, below.
                    keys: 0,
                    overdue: false,
                },
            );
        }
        *self.finished.lock().unwrap_or_else(PoisonError::into_inner) =
            image.finished.into_iter().collect();
        for (context_id, members) in image.conversations {
            let mut conversation = Conversation::default();
            for (joined, id) in members {
                let principal = principals.get(&id).cloned().flatten();
                conversation.with_principal += usize::from(principal.is_some());
                conversation.tasks.push_back(Member {
                    joined,
                    id,
                    principal,
                });
            }
            self.contexts.insert(context_id, conversation);
        }
        for (key, task, at) in image.keys {
            self.keep(&task);
            self.keys.insert(key, (task, at));
        }
        for mut stored in self.tasks.iter_mut() {
            // Kept, ended, and no longer among the ended tasks counted: the limit
            // passed it by while a key kept it.
            if stored.keys > 0 && stored.task.status.state.is_terminal() {
                stored.overdue = !finished_ids.contains(stored.key());
            }
        }
        for (namespace, key, version, value) in image.records {
            self.records.insert((namespace, key), (version, value));
        }
        self.changes.store(image.changes, Ordering::Relaxed);
        self.joined.store(image.joined, Ordering::Relaxed);
    }
}

/// A task and what the store keeps beside it, in one entry: creating, changing and
/// forgetting a task each take one lookup of its id, not one per map.
#[derive(Debug)]
struct TaskEntry {
    task: Task,
    /// The number of the task's latest status change (see `changes`).
    change: u64,
    /// Its number among created tasks (see `joined`).
    joined: u64,
    /// Beside the task rather than in it: the wire `Task` has no place for it.
    owner: Option<TaskOwner>,
    /// The task's event log, numbered from 1.
    events: Vec<(u64, StreamEvent)>,
    push_configs: Vec<TaskPushNotificationConfig>,
    /// How many idempotency keys keep the task ([`InMemoryTaskStore::keep`]).
    keys: u32,
    /// Whether the finished-task limit has already passed the task by while a key
    /// kept it: then the release of its last key forgets it.
    overdue: bool,
}

impl TaskEntry {
    /// Appends `event` to the log and returns its number.
    fn log(&mut self, event: StreamEvent) -> u64 {
        let seq = self.events.last().map_or(1, |(seq, _)| seq + 1);
        self.events.push((seq, event));
        seq
    }
}

/// The runtime's most frequent calls, done at once. The [`TaskStore`] calls on this
/// store do the same through a boxed future each, as every call through a
/// `dyn TaskStore` is; a caller holding a `dyn TaskStore` reaches these through
/// [`TaskStore::in_memory`].
impl InMemoryTaskStore {
    /// [`TaskStore::insert_owned`] (and its `_unanswered` form), done at once.
    ///
    /// # Errors
    /// As [`TaskStore::insert_owned`].
    pub fn insert_owned_now(&self, task: Task, owner: TaskOwner) -> Result<(), StoreError> {
        self.insert_at(task, Some(owner), SystemTime::now)
    }

    /// [`TaskStore::context_principal`], done at once.
    #[must_use]
    pub fn context_principal_now(&self, context_id: &ContextId) -> Option<Arc<str>> {
        self.contexts
            .get(context_id)
            .and_then(|conversation| conversation.principal())
    }

    /// [`TaskStore::get`], done at once.
    #[must_use]
    pub fn get_now(&self, id: &TaskId, history_length: Option<usize>) -> Option<Task> {
        // Clone under the shard lock, trim outside it.
        let mut task = self.tasks.get(id).map(|stored| stored.task.clone())?;
        if let Some(n) = history_length {
            trim_history(&mut task, n);
        }
        Some(task)
    }

    /// [`TaskStore::set_status`], done at once.
    ///
    /// # Errors
    /// As [`TaskStore::set_status`].
    pub fn set_status_now(&self, id: &TaskId, status: TaskStatus) -> Result<TaskState, StoreError> {
        Ok(self.change_status(id, status, None, SystemTime::now)?.0)
    }

    /// [`TaskStore::set_status_logged`], done at once.
    ///
    /// # Errors
    /// As [`TaskStore::set_status_logged`].
    pub fn set_status_logged_now(
        &self,
        id: &TaskId,
        update: TaskStatusUpdateEvent,
    ) -> Result<(TaskState, Option<u64>), StoreError> {
        self.change_status_logged(id, update, |_| ())
            .map(|(previous, seq, ())| (previous, seq))
    }

    /// [`Self::set_status_logged_now`], and the task as the write left it, as
    /// [`TaskStore::get`] (the whole history) would read it next: one lookup for both.
    ///
    /// # Errors
    /// As [`TaskStore::set_status_logged`].
    pub fn set_status_logged_read_now(
        &self,
        id: &TaskId,
        update: TaskStatusUpdateEvent,
    ) -> Result<(TaskState, Option<u64>, Task), StoreError> {
        self.change_status_logged(id, update, Task::clone)
    }

    /// `update`'s status put on the task and `update` logged with it, as of now, and
    /// `then` on the task as the change left it.
    fn change_status_logged<T>(
        &self,
        id: &TaskId,
        update: TaskStatusUpdateEvent,
        then: impl FnOnce(&Task) -> T,
    ) -> Result<(TaskState, Option<u64>, T), StoreError> {
        let status = update.status.clone();
        self.change_status_then(
            id,
            status,
            Some(StreamEvent::StatusUpdate(update)),
            SystemTime::now,
            then,
        )
    }

    /// [`TaskStore::append_history`] (and its `_unanswered` form), done at once.
    ///
    /// # Errors
    /// As [`TaskStore::append_history`].
    pub fn append_history_now(&self, id: &TaskId, message: Arc<Message>) -> Result<(), StoreError> {
        self.push_history(id, message)
    }

    /// [`TaskStore::put_artifact_logged`], done at once.
    ///
    /// # Errors
    /// As [`TaskStore::put_artifact_logged`].
    pub fn put_artifact_logged_now(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
        event: &StreamEvent,
    ) -> Result<(Arc<Artifact>, Option<u64>), StoreError> {
        let stored = self.store_artifact(id, artifact, append)?;
        let seq = self.log_event(id, event.clone())?;
        Ok((stored, Some(seq)))
    }
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
        self.insert_at(task, None, SystemTime::now)
    }

    async fn insert_owned(&self, task: Task, owner: TaskOwner) -> Result<(), StoreError> {
        self.insert_owned_now(task, owner)
    }

    // The `_unanswered` writes are the same as the answered ones here, but written
    // out: the defaults would box a second future per call, on every send.
    async fn insert_owned_unanswered(
        &self,
        task: Task,
        owner: TaskOwner,
    ) -> Result<(), StoreError> {
        self.insert_owned_now(task, owner)
    }

    async fn owner(&self, id: &TaskId) -> Result<Option<TaskOwner>, StoreError> {
        Ok(self.tasks.get(id).and_then(|stored| stored.owner.clone()))
    }

    async fn context_principal(
        &self,
        context_id: &ContextId,
    ) -> Result<Option<Arc<str>>, StoreError> {
        Ok(self.context_principal_now(context_id))
    }

    async fn get(
        &self,
        id: &TaskId,
        history_length: Option<usize>,
    ) -> Result<Option<Task>, StoreError> {
        Ok(self.get_now(id, history_length))
    }

    async fn set_status(&self, id: &TaskId, status: TaskStatus) -> Result<TaskState, StoreError> {
        self.set_status_now(id, status)
    }

    async fn set_status_logged(
        &self,
        id: &TaskId,
        update: TaskStatusUpdateEvent,
    ) -> Result<(TaskState, Option<u64>), StoreError> {
        self.set_status_logged_now(id, update)
    }

    async fn append_history(&self, id: &TaskId, message: Arc<Message>) -> Result<(), StoreError> {
        self.append_history_now(id, message)
    }

    async fn append_history_unanswered(
        &self,
        id: &TaskId,
        message: Arc<Message>,
    ) -> Result<(), StoreError> {
        self.append_history_now(id, message)
    }

    async fn put_artifact(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
    ) -> Result<Arc<Artifact>, StoreError> {
        self.store_artifact(id, artifact, append)
    }

    async fn list(
        &self,
        filter: &TaskFilter<'_>,
        page_size: usize,
        before: Option<u64>,
    ) -> Result<TaskPage, StoreError> {
        // Every task is looked at, for `total`: a scan of the tasks kept, as the
        // in-memory store keeps a bounded number. Only the page's tasks are copied,
        // once the matching ones are in order.
        let mut page = TaskPage::default();
        let mut matching = Vec::new();
        for stored in self.tasks.iter() {
            if !filter(&stored.task, stored.owner.as_ref()) {
                continue;
            }
            page.total += 1;
            if before.is_none_or(|before| stored.change < before) {
                matching.push((stored.change, stored.key().clone()));
            }
        }
        matching.sort_unstable_by_key(|&(change, _)| std::cmp::Reverse(change));
        let mut last = None;
        for (change, id) in matching {
            if page.tasks.len() == page_size {
                page.next = last;
                break;
            }
            // Forgotten since the scan: not listed.
            let Some(stored) = self.tasks.get(&id) else {
                continue;
            };
            page.tasks.push(stored.task.clone());
            last = Some(change);
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
        // Reads a task's shard while holding the conversation's: deadlock-free because
        // no code path takes a `contexts` lock while it holds a `tasks` one. Walking
        // the ids in place, newest first, copies only the messages returned.
        let Some(conversation) = self.contexts.get(context_id) else {
            return Ok(Vec::new());
        };
        let ids = conversation.ids();
        let mut newest_first = Vec::with_capacity(limit.min(64));
        let mut skipped = Vec::new();
        let mut seen_before = before.is_none();
        'tasks: for id in ids.rev() {
            let Some(stored) = self.tasks.get(id) else {
                continue;
            };
            for message in stored.task.history.iter().flatten().rev() {
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

    async fn append_event(
        &self,
        id: &TaskId,
        event: &StreamEvent,
    ) -> Result<Option<u64>, StoreError> {
        self.log_event(id, event.clone()).map(Some)
    }

    async fn put_artifact_logged(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
        event: &StreamEvent,
    ) -> Result<(Arc<Artifact>, Option<u64>), StoreError> {
        self.put_artifact_logged_now(id, artifact, append, event)
    }

    fn in_memory(&self) -> Option<&InMemoryTaskStore> {
        Some(self)
    }

    async fn events_after(
        &self,
        id: &TaskId,
        after: u64,
    ) -> Result<Vec<(u64, StreamEvent)>, StoreError> {
        Ok(self.tasks.get(id).map_or_else(Vec::new, |stored| {
            // Numbers are dense from 1, so the event after `after` is at index `after`.
            let log = &stored.events;
            let start = usize::try_from(after).unwrap_or(usize::MAX).min(log.len());
            log[start..].to_vec()
        }))
    }

    async fn remember_key(&self, key: &str, task: &TaskId) -> Result<(), StoreError> {
        self.remember_key_at(key, task, SystemTime::now());
        Ok(())
    }

    async fn recall_key(&self, key: &str, since: SystemTime) -> Result<Option<TaskId>, StoreError> {
        Ok(self
            .keys
            .get(key)
            .filter(|entry| entry.1 >= since)
            .map(|entry| entry.0.clone()))
    }

    async fn forget_key(&self, key: &str) -> Result<(), StoreError> {
        self.unkey(key);
        Ok(())
    }

    async fn put_push_config(&self, config: &TaskPushNotificationConfig) -> Result<(), StoreError> {
        self.store_push_config(config.clone())
    }

    async fn push_configs(
        &self,
        id: &TaskId,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        Ok(self
            .tasks
            .get(id)
            .map_or_else(Vec::new, |stored| stored.push_configs.clone()))
    }

    async fn delete_push_config(&self, id: &TaskId, config_id: &str) -> Result<bool, StoreError> {
        Ok(self.remove_push_config(id, config_id))
    }

    async fn tasks_with_push_configs(&self) -> Result<Vec<TaskId>, StoreError> {
        Ok(self
            .tasks
            .iter()
            .filter(|stored| !stored.push_configs.is_empty())
            .map(|stored| stored.key().clone())
            .collect())
    }

    async fn unfinished(&self) -> Result<Vec<(TaskId, TaskState)>, StoreError> {
        Ok(self
            .tasks
            .iter()
            .filter(|stored| !stored.task.status.state.is_terminal())
            .map(|stored| (stored.task.id.clone(), stored.task.status.state))
            .collect())
    }

    async fn drop_ended_before(&self, cutoff: SystemTime) -> Result<usize, StoreError> {
        Ok(self.drop_ended(cutoff))
    }

    async fn put_record(
        &self,
        namespace: &str,
        key: &str,
        value: &serde_json::Value,
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        self.store_record(namespace, key, value.clone(), expected)
    }

    async fn get_record(&self, namespace: &str, key: &str) -> Result<Option<Record>, StoreError> {
        Ok(self
            .records
            .get(&(namespace.to_owned(), key.to_owned()))
            .map(|entry| Record::new(key, entry.0, entry.1.clone())))
    }

    async fn list_records(&self, namespace: &str) -> Result<Vec<Record>, StoreError> {
        let mut records: Vec<Record> = self
            .records
            .iter()
            .filter(|entry| entry.key().0 == namespace)
            .map(|entry| {
                Record::new(
                    entry.key().1.clone(),
                    entry.value().0,
                    entry.value().1.clone(),
                )
            })
            .collect();
        records.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(records)
    }

    async fn delete_record(&self, namespace: &str, key: &str) -> Result<bool, StoreError> {
        Ok(self.remove_record(namespace, key))
    }
}

/// One conversation's tasks, oldest first (at most the store's context task limit),
/// each with the principal that created it, and how many have one: a conversation
/// nobody authenticated in (every conversation of a public server) answers "whose is
/// it" at once instead of walking its tasks on every send.
#[derive(Debug, Default)]
struct Conversation {
    tasks: VecDeque<Member>,
    with_principal: usize,
}

/// A task of a conversation, under its number among created tasks. The task being
/// forgotten is usually one the conversation already let go of (a busy conversation
/// keeps only its newest tasks, the store forgets its oldest ended ones) or its
/// oldest, and a scan of every member to find that out was about a seventh of what
/// forgetting a task cost; by number it is a look at the oldest, or else a binary
/// search.
#[derive(Debug)]
struct Member {
    joined: u64,
    id: TaskId,
    principal: Option<Arc<str>>,
}

impl Conversation {
    /// Adds `member`, dropping the oldest past `limit`. Members stay in the order of
    /// their numbers: two tasks of one conversation created at once may join in the
    /// other order than they took their numbers (nearly always it goes last).
    fn push(&mut self, member: Member, limit: usize) {
        self.with_principal += usize::from(member.principal.is_some());
        let at = self
            .tasks
            .iter()
            .rposition(|other| other.joined < member.joined)
            .map_or(0, |before| before + 1);
        self.tasks.insert(at, member);
        if self.tasks.len() > limit
            && let Some(dropped) = self.tasks.pop_front()
        {
            self.with_principal -= usize::from(dropped.principal.is_some());
        }
    }

    /// Removes the task `id`, numbered `joined`, if the conversation still has it.
    fn remove(&mut self, id: &TaskId, joined: u64) {
        // The store forgets its oldest ended tasks first: the task is nearly always
        // older than every member (let go of already) or the oldest, and either is
        // known from the first member without a search through cold memory.
        let at = match self.tasks.front() {
            None => return,
            Some(oldest) if joined < oldest.joined => return,
            Some(oldest) if joined == oldest.joined => 0,
            Some(_) => match self
                .tasks
                .binary_search_by_key(&joined, |member| member.joined)
            {
                Ok(at) => at,
                Err(_) => return,
            },
        };
        if self.tasks[at].id != *id {
            return;
        }
        if let Some(member) = self.tasks.remove(at) {
            self.with_principal -= usize::from(member.principal.is_some());
        }
    }

    /// The principal of the newest task that has one.
    fn principal(&self) -> Option<Arc<str>> {
        if self.with_principal == 0 {
            return None;
        }
        self.tasks
            .iter()
            .rev()
            .find_map(|member| member.principal.clone())
    }

    fn ids(&self) -> impl DoubleEndedIterator<Item = &TaskId> {
        self.tasks.iter().map(|member| &member.id)
    }

    fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
}
