//! The session registry: the live sessions by key, the warm set of idle ones, and
//! the one way a session is passivated (out of the registry first, then drained).
//!
//! Passivation is remove-then-drain everywhere — the idle sweep, a full warm set,
//! a stop, a session spawned for a refused send: a send that already holds the old
//! actor either lands before the drain marker (and runs) or is refused with its
//! message handed back (and goes to a fresh session).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ractor::ActorRef;
use tokio::time::Instant;

use crate::agent::DynAgent;
use crate::error::Result;
use crate::limits::Limiter;
use crate::metrics::Metrics;
use crate::occupancy::SessionShared;
use crate::send::SessionKey;
use crate::session::SessionMsg;

#[cfg(test)]
mod tests;

/// A live session in the registry; the send path takes a copy of it (a few
/// reference counts).
#[derive(Clone)]
pub(crate) struct Slot {
    pub(crate) actor: ActorRef<SessionMsg>,
    pub(crate) session: Arc<SessionShared>,
    /// The session's agent value (its actor holds the same one): a caller that waits
    /// for its own send's task runs the turn with it, in the caller's task.
    pub(crate) agent: Arc<dyn DynAgent>,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("actor", &self.actor)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

/// One entry of the warm line: current only while its session's `warm` stamp still
/// equals `stamp` (a session used or settled again since has a newer entry, or none).
#[derive(Debug)]
struct WarmEntry {
    key: SessionKey,
    session: Arc<SessionShared>,
    stamp: u64,
}

/// A session's `warm` mark while the line is not kept: it settled and has not been
/// used since, and it has no entry in the line (nor a place in `WarmLine::len`).
/// The line's stamps count up from 1 and never reach it.
const UNLINED: u64 = u64::MAX;

/// The idle sessions kept live, least recently settled first.
///
/// A queue of stamped entries rather than a linked map: marking a session warm again
/// pushes a new entry and leaves the old one stale, to be skipped when it reaches the
/// front or dropped when stale entries outnumber current ones. `len` counts sessions
/// whose stamp is set, i.e. current entries; every change of a stamp between zero (or
/// [`UNLINED`]) and a stamp goes through a swap or compare-exchange that tells which
/// way it went.
///
/// The line is kept only while the registry holds more sessions than the warm limit:
/// below it, no idle session can be one too many, and keeping the order would cost
/// every send the line's lock and counters, which every worker shares. Then a session
/// that settles is only marked ([`UNLINED`], on its own state); the first to settle
/// once the registry has grown past the limit lines up the marked ones, least
/// recently used first, and the line is kept until the registry is back to half the
/// limit.
#[derive(Debug, Default)]
struct WarmLine {
    entries: Mutex<VecDeque<WarmEntry>>,
    len: AtomicUsize,
    next_stamp: AtomicU64,
    /// Whether the line is kept (changed only under `entries`' lock).
    kept: AtomicBool,
}

impl WarmLine {
    /// The line's entries, locked. A panic under the lock leaves them whole (each
    /// change is one push, pop or pass of `retain`), so a poisoned lock is taken as is.
    fn locked(&self) -> MutexGuard<'_, VecDeque<WarmEntry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a session out of the warm set (it is in use, or leaves the registry).
    fn take(&self, session: &SessionShared) {
        self.remark(session, 0);
    }

    /// Marks an idle session warm while the line is not kept (its own state only).
    fn mark(&self, session: &SessionShared) {
        self.remark(session, UNLINED);
    }

    /// Gives `session` a new stamp, newer than every entry in the line.
    fn stamp(&self, session: &SessionShared) -> u64 {
        let stamp = self.next_stamp.fetch_add(1, Ordering::Relaxed) + 1;
        self.remark(session, stamp);
        stamp
    }

    /// Sets a session's mark, keeping `len` the count of sessions with a stamp.
    fn remark(&self, session: &SessionShared, mark: u64) {
        let was = session.warm.swap(mark, Ordering::SeqCst);
        self.recount(was, mark);
    }

    /// Changes a session's mark from `expected` to `mark` if it is still `expected`
    /// (an entry's stamp, say, that a use or a later settle may have replaced),
    /// keeping `len` as [`WarmLine::remark`] does; whether it did.
    fn remark_if(&self, session: &SessionShared, expected: u64, mark: u64) -> bool {
        let changed = session
            .warm
            .compare_exchange(expected, mark, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if changed {
            self.recount(expected, mark);
        }
        changed
    }

    /// Counts a session's mark changing from `was` to `mark` in `len`.
    fn recount(&self, was: u64, mark: u64) {
        match (has_stamp(was), has_stamp(mark)) {
            (true, false) => {
                self.len.fetch_sub(1, Ordering::AcqRel);
            }
            (false, true) => {
                self.len.fetch_add(1, Ordering::AcqRel);
            }
            _ => {}
        }
    }
}

/// Whether a session's `warm` mark is a stamp, i.e. an entry in the line.
fn has_stamp(mark: u64) -> bool {
    mark != 0 && mark != UNLINED
}

/// The live sessions and the warm set.
#[derive(Debug)]
pub(crate) struct Sessions {
    slots: crate::Map<SessionKey, Slot>,
    /// How many sessions `slots` holds: read on every settle, which `DashMap::len`
    /// (a lock per shard) is too slow for.
    live: AtomicUsize,
    warm: WarmLine,
    /// Idle sessions kept live at most ([`super::SupervisorConfig::warm_sessions`]).
    warm_limit: usize,
    /// Each new session's own concurrency limit and waiting line.
    session_limit: usize,
    session_queue: usize,
    started: Instant,
    /// Where passivations are counted, when metrics are on.
    metrics: Option<Arc<Metrics>>,
}

impl Sessions {
    pub(crate) fn new(warm_limit: usize, session_limit: usize, session_queue: usize) -> Self {
        Self {
            slots: crate::Map::default(),
            live: AtomicUsize::new(0),
            warm: WarmLine::default(),
            warm_limit,
            session_limit,
            session_queue,
            started: Instant::now(),
            metrics: None,
        }
    }

    /// Counts passivations in `metrics`.
    pub(crate) fn counting(mut self, metrics: Option<Arc<Metrics>>) -> Self {
        self.metrics = metrics;
        self
    }

    /// How many sends wait for a session, in all.
    pub(crate) fn waiting(&self) -> usize {
        self.slots
            .iter()
            .map(|slot| slot.session.limiter.waiting())
            .sum()
    }

    fn elapsed_ns(&self) -> u64 {
        self.ns_at(Instant::now())
    }

    /// `now` as nanoseconds since the registry started (a u64 of them lasts 584
    /// years). Nanoseconds, not milliseconds: the warm line is ordered by this, and
    /// sessions used one after another within one millisecond (a few sends' worth)
    /// would tie, and be passivated in no particular order.
    fn ns_at(&self, now: Instant) -> u64 {
        u64::try_from(now.saturating_duration_since(self.started).as_nanos()).unwrap_or(u64::MAX)
    }

    /// The number of live sessions.
    pub(crate) fn len(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }

    /// The number of live sessions of each agent type that has any. Walks the
    /// registry (one shard lock at a time), so it is for an operator's view and the
    /// metrics scrape, not the send path.
    pub(crate) fn count_by_agent(&self) -> HashMap<Arc<str>, usize> {
        let mut counts: HashMap<Arc<str>, usize> = HashMap::new();
        for slot in &self.slots {
            *counts.entry(Arc::clone(&slot.key().agent)).or_default() += 1;
        }
        counts
    }

    /// Whether a session is live under `key`.
    #[cfg(test)]
    pub(crate) fn contains(&self, key: &SessionKey) -> bool {
        self.slots.contains_key(key)
    }

    /// The live session under `key`, marked used at `now` and taken out of the warm
    /// set.
    pub(crate) fn touch(&self, key: &SessionKey, now: Instant) -> Option<Slot> {
        let slot = self.slots.get(key)?;
        slot.session
            .last_used
            .store(self.ns_at(now), Ordering::Relaxed);
        // In use again: out of the warm set until it settles.
        self.warm.take(&slot.session);
        Some(slot.clone())
    }

    /// The session under `key`, registering the actor and agent `spawn` makes if
    /// there is none (`spawn` is not called if a racing send registered one first);
    /// `true` with it if this call registered it.
    pub(crate) fn get_or_spawn(
        &self,
        key: &SessionKey,
        spawn: impl FnOnce() -> Result<(ActorRef<SessionMsg>, Arc<dyn DynAgent>)>,
    ) -> Result<(Slot, bool)> {
        let mut created = false;
        let slot = match self.slots.entry(key.clone()) {
            dashmap::mapref::entry::Entry::Occupied(slot) => slot.into_ref(),
            dashmap::mapref::entry::Entry::Vacant(vacant) => {
                let (actor, agent) = spawn()?;
                created = true;
                self.live.fetch_add(1, Ordering::AcqRel);
                vacant.insert(Slot {
                    actor,
                    agent,
                    session: Arc::new(SessionShared::new(
                        Limiter::new(self.session_limit, self.session_queue),
                        self.elapsed_ns(),
                    )),
                })
            }
        };
        if !created {
            self.warm.take(&slot.session);
        }
        Ok((slot.clone(), created))
    }

    /// Whether `session` is still the one registered under `key`.
    pub(crate) fn is_current(&self, key: &SessionKey, session: &Arc<SessionShared>) -> bool {
        self.slots
            .get(key)
            .is_some_and(|slot| Arc::ptr_eq(&slot.session, session))
    }

    /// Forgets a session whose actor has stopped (it refused a message), if `actor`
    /// is still the one registered; nothing to drain.
    pub(crate) fn forget(&self, key: &SessionKey, actor: &ActorRef<SessionMsg>) {
        let id = actor.get_id();
        if let Some((_, slot)) = self
            .slots
            .remove_if(key, |_, slot| slot.actor.get_id() == id)
        {
            self.live.fetch_sub(1, Ordering::AcqRel);
            self.warm.take(&slot.session);
        }
    }

    /// Passivates the session under `key` if `pick` chooses its slot; returns
    /// whether it did.
    pub(crate) fn passivate_if(&self, key: &SessionKey, pick: impl FnOnce(&Slot) -> bool) -> bool {
        match self.slots.remove_if(key, |_, slot| pick(slot)) {
            Some((_, slot)) => {
                self.live.fetch_sub(1, Ordering::AcqRel);
                self.passivate(&key.agent, slot);
                true
            }
            None => false,
        }
    }

    /// Passivates every session `pick` chooses.
    pub(crate) fn passivate_all(&self, pick: impl Fn(&SessionShared) -> bool) {
        let mut removed = Vec::new();
        self.slots.retain(|key, slot| {
            let chosen = pick(&slot.session);
            if chosen {
                // Out of the warm count with the registry, not a moment later.
                self.live.fetch_sub(1, Ordering::AcqRel);
                self.warm.take(&slot.session);
                removed.push((Arc::clone(&key.agent), slot.clone()));
            }
            !chosen
        });
        // Outside the registry's locks: a drain is a message to the actor.
        for (agent, slot) in removed {
            self.passivate(&agent, slot);
        }
    }

    /// Passivates the sessions that have been idle (no permit held or waited for)
    /// for `idle_timeout`.
    pub(crate) fn passivate_idle_for(&self, idle_timeout: Duration) {
        let now = self.elapsed_ns();
        let idle_ns = u64::try_from(idle_timeout.as_nanos()).unwrap_or(u64::MAX);
        self.passivate_all(|session| {
            now.saturating_sub(session.last_used.load(Ordering::Relaxed)) >= idle_ns
                && session.limiter.is_idle()
        });
    }

    /// The one passivation routine: a slot already out of the registry leaves the
    /// warm set, and its actor stops after the messages already in its mailbox.
    fn passivate(&self, agent: &str, slot: Slot) {
        self.warm.take(&slot.session);
        if let Some(metrics) = self.metrics.as_ref().and_then(|m| m.agent(agent)) {
            metrics.passivated();
        }
        let _ = slot.actor.drain();
    }

    /// Offers a session that may have become idle to the warm set: an idle session
    /// is marked warm on its own state while the registry is within the warm limit;
    /// past it, one still registered under `key` joins the line as the most recently
    /// used, and the least recently used ones past the limit are passivated at once.
    pub(crate) fn settled(&self, key: &SessionKey, session: &Arc<SessionShared>) {
        if !session.is_idle() {
            // Busy: nothing to keep warm.
            return;
        }
        let live = self.live.load(Ordering::Acquire);
        let kept = self.warm.kept.load(Ordering::SeqCst);
        if !kept && live > self.warm_limit {
            self.keep_line();
        } else if kept && live <= self.warm_limit / 2 {
            self.drop_line();
        }
        if !self.warm.kept.load(Ordering::SeqCst) {
            self.warm.mark(session);
            // Marked after a first line was made without it: line it up now.
            if !self.warm.kept.load(Ordering::SeqCst) {
                return;
            }
        }
        if !self.is_current(key, session) {
            // Passivated or stopped already.
            return;
        }
        let stamp = self.warm.stamp(session);
        let mut entries = self.warm.locked();
        entries.push_back(WarmEntry {
            key: key.clone(),
            session: Arc::clone(session),
            stamp,
        });
        self.evict(entries);
    }

    /// Begins keeping the line, if no one has: the sessions marked warm go into it,
    /// least recently used first, and the oldest past the limit are passivated.
    fn keep_line(&self) {
        let mut entries = self.warm.locked();
        if self.warm.kept.load(Ordering::SeqCst) {
            return;
        }
        // Before the marks are read: a session marked after this sees the line kept
        // and joins it itself (`settled`).
        self.warm.kept.store(true, Ordering::SeqCst);
        let mut marked: Vec<_> = self
            .slots
            .iter()
            .filter(|slot| slot.session.warm.load(Ordering::SeqCst) == UNLINED)
            .map(|slot| {
                (
                    slot.session.last_used.load(Ordering::Relaxed),
                    slot.key().clone(),
                    Arc::clone(&slot.session),
                )
            })
            .collect();
        marked.sort_unstable_by_key(|(last_used, ..)| *last_used);
        for (_, key, session) in marked {
            let stamp = self.warm.next_stamp.fetch_add(1, Ordering::Relaxed) + 1;
            // Not if it was used (0) or lined up by its own settle since.
            if self.warm.remark_if(&session, UNLINED, stamp) {
                entries.push_back(WarmEntry {
                    key,
                    session,
                    stamp,
                });
            }
        }
        self.evict(entries);
    }

    /// Stops keeping the line, if the registry is still small enough: its sessions
    /// stay warm, marked on their own state.
    fn drop_line(&self) {
        let mut entries = self.warm.locked();
        if !self.warm.kept.load(Ordering::SeqCst)
            || self.live.load(Ordering::Acquire) > self.warm_limit / 2
        {
            return;
        }
        self.warm.kept.store(false, Ordering::SeqCst);
        for entry in entries.drain(..) {
            self.warm.remark_if(&entry.session, entry.stamp, UNLINED);
        }
    }

    /// Passivates the least recently settled sessions past the warm limit, and drops
    /// stale entries once they pile up; given the line's lock, it lets it go before
    /// the passivations.
    fn evict(&self, mut entries: MutexGuard<'_, VecDeque<WarmEntry>>) {
        let mut victims = Vec::new();
        while self.warm.len.load(Ordering::Acquire) > self.warm_limit {
            let Some(entry) = entries.pop_front() else {
                break;
            };
            if self.warm.remark_if(&entry.session, entry.stamp, 0) {
                victims.push(entry);
            }
        }
        // Stale entries are skipped at the front; drop them in one pass once they
        // outnumber the current ones, so the line stays O(warm sessions).
        if entries.len() > 2 * self.warm.len.load(Ordering::Acquire) + 64 {
            entries.retain(|e| e.session.warm.load(Ordering::Acquire) == e.stamp);
        }
        // Outside the line's lock: removal takes a registry shard lock.
        drop(entries);
        for victim in victims {
            self.passivate_if(&victim.key, |slot| {
                Arc::ptr_eq(&slot.session, &victim.session) && slot.session.is_idle()
            });
        }
    }

    /// Forgets every session and the warm set (at shutdown, once the actors are told
    /// to stop).
    pub(crate) fn clear(&self) {
        self.slots.retain(|_, _| {
            self.live.fetch_sub(1, Ordering::AcqRel);
            false
        });
        self.warm.locked().clear();
    }
}

/// What the supervisor's own tests read of the registry.
#[cfg(test)]
impl Sessions {
    /// How many sessions are warm, whether the line is kept or not.
    pub(crate) fn warm_len(&self) -> usize {
        self.slots
            .iter()
            .filter(|slot| slot.session.warm.load(Ordering::Acquire) != 0)
            .count()
    }

    /// Whether the warm line is kept (the registry outgrew the warm limit).
    pub(crate) fn line_kept(&self) -> bool {
        self.warm.kept.load(Ordering::Acquire)
    }

    /// How many entries the warm line holds, stale ones included.
    pub(crate) fn warm_entries(&self) -> usize {
        self.warm.locked().len()
    }

    /// Whether every live session is idle.
    pub(crate) fn all_idle(&self) -> bool {
        self.slots.iter().all(|slot| slot.session.is_idle())
    }

    /// What must hold of the registry and the warm line once no call is running:
    /// `live` counts the registry; `len` counts the line's current entries (an entry
    /// whose session still carries its stamp), no session has two, and every
    /// registered session with a stamp has one (or it could never be evicted, and
    /// would hold a place under the limit for ever), and while the line is kept none
    /// is marked warm outside it. A session that left the registry may still have a
    /// current entry (it settled as it was passivated); evicting it later is
    /// harmless, so that is allowed.
    pub(crate) fn check_warm_count(&self) -> std::result::Result<(), String> {
        let registered = self.slots.len();
        let live = self.live.load(Ordering::Acquire);
        if live != registered {
            return Err(format!(
                "live counts {live}, the registry holds {registered}"
            ));
        }
        let entries = self.warm.locked();
        let current: Vec<&WarmEntry> = entries
            .iter()
            .filter(|entry| entry.session.warm.load(Ordering::Acquire) == entry.stamp)
            .collect();
        for (i, entry) in current.iter().enumerate() {
            if current[..i]
                .iter()
                .any(|other| Arc::ptr_eq(&other.session, &entry.session))
            {
                return Err(format!("{:?} has two current entries", entry.key));
            }
        }
        let len = self.warm.len.load(Ordering::Acquire);
        if len != current.len() {
            return Err(format!(
                "len counts {len}, the line holds {} current entries",
                current.len()
            ));
        }
        let kept = self.warm.kept.load(Ordering::Acquire);
        for slot in &self.slots {
            let mark = slot.session.warm.load(Ordering::Acquire);
            if kept && mark == UNLINED {
                return Err(format!(
                    "{:?} is marked warm outside a kept line: it would never be evicted",
                    slot.key()
                ));
            }
            if has_stamp(mark)
                && !current
                    .iter()
                    .any(|entry| Arc::ptr_eq(&entry.session, &slot.session))
            {
                return Err(format!("{:?} has stamp {mark} and no entry", slot.key()));
            }
        }
        Ok(())
    }
}
