//! Idempotency keys: a repeated send returns the first send's task instead of running
//! the agent again.
//!
//! A key is first *pending* (the first send is still on its way through limits and
//! routing), then *done* (it names the task it created, until its TTL runs out). A
//! repeat that finds it pending waits for the first one and gets its outcome, so
//! concurrent duplicates also run the agent once. If the first send fails before
//! creating a task (busy, shutdown), its key is released so a retry can go through.
//!
//! Memory is bounded twice: entries expire after the TTL, and past the capacity the
//! oldest entries are evicted first.
//!
//! Every key that names a task is also remembered by the store
//! ([`TaskStore::remember_key`]), which keeps the task while the key is remembered, so
//! a repeat never finds the key but not its task: a remembered key never answers
//! `TaskNotFound`. The store may forget the task once the key is gone
//! ([`TaskStore::forget_key`], on expiry or eviction here). A key this cache does not
//! hold (after a restart, with a durable store) is looked up in the store before it
//! counts as new, so keys still deduplicate after a restart.
//!
//! Keys are scoped by the caller (see [`scope`]): two callers that happen to use the
//! same key, or the same handoff `taskId`, get two tasks.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentyard_transport::TaskId;
use dashmap::mapref::entry::Entry;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::error::Error;
use crate::limits::LimitScope;
use crate::store::TaskStore;

#[cfg(test)]
mod tests;

type Outcome = Option<Result<TaskId, Failure>>;

/// Why the first send of a key failed, kept so that its concurrent repeats fail the
/// same way (a `busy` first send makes `busy` repeats, which callers retry).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    Busy { scope: LimitScope, queue: usize },
    ShuttingDown,
    Other(String),
}

impl Failure {
    pub(crate) fn of(error: &Error) -> Self {
        match error {
            Error::Busy { scope, queue } => Self::Busy {
                scope: *scope,
                queue: *queue,
            },
            Error::ShuttingDown => Self::ShuttingDown,
            other => Self::Other(other.to_string()),
        }
    }

    /// The error a repeat of `key` gets.
    pub(crate) fn into_error(self, key: &str) -> Error {
        match self {
            Self::Busy { scope, queue } => Error::Busy { scope, queue },
            Self::ShuttingDown => Error::ShuttingDown,
            Self::Other(reason) => Error::InvalidMessage(format!(
                "an earlier send with idempotency key `{key}` failed: {reason}"
            )),
        }
    }
}

#[derive(Debug)]
enum Slot {
    Pending(watch::Receiver<Outcome>),
    Done {
        task_id: TaskId,
        at: Instant,
        /// When the key was claimed: the `order` entry that evicts this slot.
        claimed: Instant,
    },
}

/// What a send learns when it presents its key.
#[derive(Debug)]
pub(crate) enum Claim<'a> {
    /// The key is new: this send goes ahead and must settle the guard.
    First(KeyGuard<'a>),
    /// A send with this key already created this task.
    Duplicate(TaskId),
    /// A send with this key failed before creating a task; this is its error.
    DuplicateFailed(Failure),
}

/// The cache of recent idempotency keys.
#[derive(Debug)]
pub(crate) struct IdempotencyCache {
    slots: crate::Map<String, Slot>,
    /// Insertion order, for eviction; touched once per keyed send, never while a
    /// `slots` shard is locked.
    order: Mutex<VecDeque<(String, Instant)>>,
    ttl: Duration,
    capacity: usize,
    /// Keeps the task of each remembered key.
    store: Option<Arc<dyn TaskStore>>,
}

/// The cache key of `key` for a send from `caller` (a principal, or the sending agent)
/// to the agent `to`. Principals and senders have separate name spaces; agent and
/// principal names come from the operator, and a key from HTTP cannot hold the unit
/// separator (the edge refuses control characters), so callers' scopes never meet.
pub(crate) fn scope(to: &str, caller: Caller<'_>, key: &str) -> String {
    let (kind, name) = match caller {
        Caller::Principal(name) => ('p', name),
        Caller::Sender(name) => ('s', name),
        Caller::Anonymous => ('-', ""),
    };
    // Written out rather than by `format!`, which guesses the length and grows.
    let mut scoped = String::with_capacity(to.len() + name.len() + key.len() + 3);
    scoped.push_str(to);
    scoped.push('\u{1f}');
    scoped.push(kind);
    scoped.push_str(name);
    scoped.push('\u{1f}');
    scoped.push_str(key);
    scoped
}

/// Who presents a key.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Caller<'a> {
    /// An authenticated principal.
    Principal(&'a str),
    /// A named sender (an agent, or an in-process caller that named itself).
    Sender(&'a str),
    /// A caller with no name: an unauthenticated HTTP caller, or in-process code.
    Anonymous,
}

/// Held by the first send of a key until it knows its outcome. Dropping it without
/// settling (the send failed or was dropped) releases the key.
#[derive(Debug)]
pub(crate) struct KeyGuard<'a> {
    cache: &'a IdempotencyCache,
    key: String,
    claimed: Instant,
    tx: Option<watch::Sender<Outcome>>,
}

impl IdempotencyCache {
    pub(crate) fn new(ttl: Duration, capacity: usize) -> Self {
        Self {
            slots: crate::Map::default(),
            order: Mutex::new(VecDeque::new()),
            ttl,
            capacity: capacity.max(1),
            store: None,
        }
    }

    /// Keeps the task of every remembered key in `store`.
    pub(crate) fn keeping(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The key is gone (expired or evicted): the store may forget its task.
    async fn forget(&self, key: &str) {
        if let Some(store) = &self.store
            && let Err(error) = store.forget_key(key).await
        {
            tracing::warn!(%error, "the task store did not forget an idempotency key");
        }
    }

    /// A key this cache does not hold, as the store remembers it (within the TTL):
    /// taken into the cache as done.
    async fn recall(&self, key: &str, now: Instant) -> Option<TaskId> {
        let store = self.store.as_ref()?;
        let since = std::time::SystemTime::now().checked_sub(self.ttl)?;
        let task_id = match store.recall_key(key, since).await {
            Ok(found) => found?,
            Err(error) => {
                tracing::warn!(%error, "the task store could not look up an idempotency key");
                return None;
            }
        };
        let Entry::Vacant(slot) = self.slots.entry(key.to_owned()) else {
            // Claimed meanwhile: the caller decides from the map.
            return None;
        };
        slot.insert(Slot::Done {
            task_id: task_id.clone(),
            at: now,
            claimed: now,
        });
        let evicted = self.remember(key, now);
        for old in evicted {
            self.forget(&old).await;
        }
        Some(task_id)
    }

    /// Presents a key at `now`.
    pub(crate) async fn claim(&self, key: &str, now: Instant) -> Claim<'_> {
        enum Step {
            First(watch::Sender<Outcome>),
            Wait(watch::Receiver<Outcome>),
        }
        if !self.slots.contains_key(key)
            && let Some(task_id) = self.recall(key, now).await
        {
            return Claim::Duplicate(task_id);
        }
        // Decide under the entry's shard lock, act after releasing it: `first` takes
        // other locks and must not nest inside this one.
        let mut expired = None;
        let step = match self.slots.entry(key.to_owned()) {
            Entry::Occupied(mut slot) => match slot.get() {
                Slot::Done { task_id, at, .. } if now.duration_since(*at) < self.ttl => {
                    return Claim::Duplicate(task_id.clone());
                }
                Slot::Done { .. } => {
                    let (tx, rx) = watch::channel(None);
                    if let Slot::Done { .. } = slot.insert(Slot::Pending(rx)) {
                        expired = Some(key.to_owned());
                    }
                    Step::First(tx)
                }
                Slot::Pending(rx) => Step::Wait(rx.clone()),
            },
            Entry::Vacant(slot) => {
                let (tx, rx) = watch::channel(None);
                slot.insert(Slot::Pending(rx));
                Step::First(tx)
            }
        };
        if let Some(key) = expired {
            self.forget(&key).await;
        }
        let mut rx = match step {
            Step::First(tx) => {
                let (claim, evicted) = self.first(key, tx, now);
                for old in evicted {
                    self.forget(&old).await;
                }
                return claim;
            }
            Step::Wait(rx) => rx,
        };
        // Wait outside the map: the first send settles, or drops its guard. The
        // outcome is cloned out at once so no watch guard lives across an await.
        let outcome = rx.wait_for(Option::is_some).await.map(|o| o.clone());
        match outcome {
            Ok(Some(Ok(task_id))) => Claim::Duplicate(task_id),
            Ok(Some(Err(error))) => Claim::DuplicateFailed(error),
            // The first send was dropped before it knew: try again from the top.
            Ok(None) | Err(_) => Box::pin(self.claim(key, now)).await,
        }
    }

    /// The claim of a new key, and the keys its arrival evicted (for the store to
    /// forget).
    fn first(
        &self,
        key: &str,
        tx: watch::Sender<Outcome>,
        now: Instant,
    ) -> (Claim<'_>, Vec<String>) {
        let evicted = self.remember(key, now);
        let claim = Claim::First(KeyGuard {
            cache: self,
            key: key.to_owned(),
            claimed: now,
            tx: Some(tx),
        });
        (claim, evicted)
    }

    /// Records the key's arrival and evicts what is expired or over capacity; the
    /// keys evicted.
    fn remember(&self, key: &str, now: Instant) -> Vec<String> {
        let mut evict = Vec::new();
        {
            let mut order = self.order.lock().unwrap_or_else(|e| e.into_inner());
            order.push_back((key.to_owned(), now));
            while let Some((_, at)) = order.front() {
                let expired = now.duration_since(*at) >= self.ttl;
                if !expired && order.len() <= self.capacity {
                    break;
                }
                if let Some(old) = order.pop_front() {
                    evict.push(old);
                }
            }
        }
        let mut evicted = Vec::new();
        for (old, at) in evict {
            // A pending slot belongs to a send still in flight: leave it to its guard.
            // A slot claimed again since this entry was made has an entry of its own.
            let removed = self.slots.remove_if(
                &old,
                |_, slot| matches!(slot, Slot::Done { claimed, .. } if *claimed == at),
            );
            if removed.is_some() {
                evicted.push(old);
            }
        }
        evicted
    }

    /// The number of keys held (pending or done).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }
}

impl KeyGuard<'_> {
    /// The send created `task_id`: repeats of the key now return it. The store
    /// remembers the key (keeping its task) before any repeat can answer with it.
    pub(crate) async fn settle(mut self, task_id: &TaskId) {
        if let Some(store) = &self.cache.store
            && let Err(error) = store.remember_key(&self.key, task_id).await
        {
            tracing::warn!(
                %error,
                "the task store did not remember an idempotency key; \
                 it deduplicates until the process stops"
            );
        }
        self.cache.slots.insert(
            self.key.clone(),
            Slot::Done {
                task_id: task_id.clone(),
                at: Instant::now(),
                claimed: self.claimed,
            },
        );
        if let Some(tx) = self.tx.take() {
            tx.send_replace(Some(Ok(task_id.clone())));
        }
    }

    /// The send failed before creating a task: waiting repeats get this error and the
    /// key is released for later retries.
    pub(crate) fn fail(mut self, error: Failure) {
        self.cache.slots.remove(&self.key);
        if let Some(tx) = self.tx.take() {
            tx.send_replace(Some(Err(error)));
        }
    }

    /// The send was refused for a reason a repeat may not share (a bad `taskId`, a
    /// session that could not start, …): the key is released, and waiting repeats
    /// claim it afresh. The same as dropping the guard, said out loud.
    pub(crate) fn release(self) {
        drop(self);
    }
}

impl Drop for KeyGuard<'_> {
    fn drop(&mut self) {
        if self.tx.is_some() {
            // Neither settled nor failed: the send was abandoned. Release the key; the
            // dropped sender wakes any waiter, which then claims it afresh.
            self.cache.slots.remove(&self.key);
        }
    }
}
