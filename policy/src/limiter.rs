//! Per-sender rate limits: one [`TokenBucket`] per sender, shared by every caller.
//!
//! # Concurrency
//!
//! The supervisor checks sends from many tasks at once, so the buckets live in a
//! [`DashMap`] rather than one `Mutex<HashMap>`: the map is split into shards by key
//! hash, and two senders on different shards never wait for each other. A check holds
//! one shard's lock only for a few integer operations (refill and take a token) and
//! never across anything slow; the policy has no `.await` at all. The few single
//! buckets (anonymous callers, overflow) are std `Mutex`es for the same reason: the
//! critical section is tiny and synchronous, so an async mutex would only add cost.
//!
//! # Bounded memory
//!
//! Sender names can come from outside (HTTP principals), so the map must not grow
//! with every new name. Two facts keep it bounded:
//!
//! - A full bucket behaves exactly like a new one, so evicting full buckets changes
//!   no decision. When the map reaches `max_tracked` buckets, a new sender triggers a
//!   sweep that drops every full bucket (at most one sweep per [`SWEEP_INTERVAL`], so
//!   a flood of new names cannot make every check scan the map).
//! - If the map is still at the bound after that, the many active senders are a flood,
//!   and a new unlisted sender shares one overflow bucket (with the default limit)
//!   with every other sender that did not fit. That keeps the limit in force (a new
//!   name never gets a fresh burst) at the cost of fairness, only while under flood.
//!
//! Senders with a limit of their own are named in the configuration, so there are few
//! of them, and they always get their own bucket. The map therefore holds at most
//! `max_tracked` plus the number of listed senders (plus, briefly, one per thread
//! racing to insert a new sender).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use dashmap::DashMap;

use crate::{RateLimit, RateMode, TokenBucket};

#[cfg(test)]
mod tests;

/// The least time between two sweeps of the bucket map.
pub(crate) const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// The rate-limit state of a [`RulePolicy`](crate::RulePolicy).
#[derive(Debug)]
pub(crate) struct SenderLimits {
    /// The limit of a sender not listed in `per_sender`; `None` for no limit.
    default: Option<RateLimit>,
    /// Limits of named senders, overriding `default`.
    per_sender: HashMap<String, RateLimit>,
    /// Buckets of named senders, created on a sender's first consuming check.
    buckets: DashMap<Box<str>, TokenBucket>,
    /// One bucket shared by every anonymous caller (there is no name to tell them
    /// apart); created on first use.
    anonymous: Mutex<Option<TokenBucket>>,
    /// One bucket shared by unlisted senders that arrive while the map is full.
    overflow: Mutex<Option<TokenBucket>>,
    /// How many buckets the map may hold before a new unlisted sender has to share.
    max_tracked: usize,
    /// When the map was last swept; the lock also keeps sweeps from running at once.
    last_sweep: Mutex<Option<Instant>>,
}

impl SenderLimits {
    pub(crate) fn new(
        default: Option<RateLimit>,
        per_sender: HashMap<String, RateLimit>,
        max_tracked: usize,
    ) -> Self {
        Self {
            default,
            per_sender,
            buckets: DashMap::new(),
            anonymous: Mutex::new(None),
            overflow: Mutex::new(None),
            max_tracked,
            last_sweep: Mutex::new(None),
        }
    }

    /// Checks `sender`'s rate limit at `now`.
    ///
    /// Returns how long to wait when the sender is out of tokens.
    pub(crate) fn check(
        &self,
        sender: Option<&str>,
        now: Instant,
        mode: RateMode,
    ) -> Result<(), Duration> {
        let Some(name) = sender else {
            return match self.default {
                Some(limit) => apply_shared(&self.anonymous, limit, now, mode),
                None => Ok(()),
            };
        };
        let (limit, listed) = match self.per_sender.get(name) {
            Some(limit) => (*limit, true),
            None => match self.default {
                Some(limit) => (limit, false),
                None => return Ok(()),
            },
        };

        // Fast path: the sender has a bucket. The guard is dropped before anything
        // else touches the map (a second lock on the same shard would deadlock).
        match mode {
            RateMode::Consume => {
                if let Some(mut bucket) = self.buckets.get_mut(name) {
                    return bucket.try_acquire(now);
                }
            }
            RateMode::Peek => {
                if let Some(bucket) = self.buckets.get(name) {
                    return bucket.peek(now);
                }
            }
        }

        if !listed && !self.has_room(now) {
            return apply_shared(&self.overflow, limit, now, mode);
        }
        match mode {
            // A new bucket is full, and a limit has a capacity of at least one.
            RateMode::Peek => TokenBucket::new(limit, now).peek(now),
            RateMode::Consume => self
                .buckets
                .entry(Box::from(name))
                .or_insert_with(|| TokenBucket::new(limit, now))
                .try_acquire(now),
        }
    }

    /// Whether a new unlisted sender may have its own bucket, sweeping first if the
    /// map is at its bound.
    fn has_room(&self, now: Instant) -> bool {
        if self.buckets.len() < self.max_tracked {
            return true;
        }
        self.sweep(now);
        self.buckets.len() < self.max_tracked
    }

    /// Drops every full bucket, unless another thread is sweeping or the last sweep
    /// was less than [`SWEEP_INTERVAL`] ago.
    fn sweep(&self, now: Instant) {
        let mut last = match self.last_sweep.try_lock() {
            Ok(guard) => guard,
            // Nothing can panic while the lock is held; take the guard regardless.
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        if last.is_some_and(|at| now.saturating_duration_since(at) < SWEEP_INTERVAL) {
            return;
        }
        *last = Some(now);
        self.buckets.retain(|_, bucket| !bucket.is_full(now));
    }

    /// How many named buckets exist (tests check the memory bound with it).
    #[cfg(test)]
    pub(crate) fn tracked(&self) -> usize {
        self.buckets.len()
    }
}

/// Checks a bucket shared by many senders, creating it full on first use.
fn apply_shared(
    slot: &Mutex<Option<TokenBucket>>,
    limit: RateLimit,
    now: Instant,
    mode: RateMode,
) -> Result<(), Duration> {
    let mut slot = lock(slot);
    match (mode, slot.as_mut()) {
        (RateMode::Consume, Some(bucket)) => bucket.try_acquire(now),
        (RateMode::Consume, None) => slot.insert(TokenBucket::new(limit, now)).try_acquire(now),
        (RateMode::Peek, Some(bucket)) => bucket.peek(now),
        (RateMode::Peek, None) => TokenBucket::new(limit, now).peek(now),
    }
}

/// Locks a bucket mutex. Bucket arithmetic cannot panic, so a poisoned lock still
/// holds a consistent bucket and is used as is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
