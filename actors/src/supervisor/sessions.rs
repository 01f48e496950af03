//! The session registry: the live sessions by key, the warm set of idle ones, and
//! the one way a session is passivated (out of the registry first, then drained).
//!
//! Passivation is remove-then-drain everywhere — the idle sweep, a full warm set,
//! a stop, a session spawned for a refused send: a send that already holds the old
//! actor either lands before the drain marker (and runs) or is refused with its
//! message handed back (and goes to a fresh session).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ractor::ActorRef;
use tokio::time::Instant;

use crate::agent::DynAgent;
use crate::error::Result;
use crate::limits::{LimitScope, Limiter};
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

/// The idle sessions kept live, least recently settled first.
///
/// A queue of stamped entries rather than a linked map: marking a session warm again
/// pushes a new entry and leaves the old one stale, to be skipped when it reaches the
/// front or dropped when stale entries outnumber current ones. `len` counts sessions
/// whose stamp is set, i.e. current entries; every change of a stamp between zero and
/// non-zero goes through a swap or compare-exchange that tells which way it went.
#[derive(Debug, Default)]
struct WarmLine {
    entries: Mutex<VecDeque<WarmEntry>>,
    len: AtomicUsize,
    next_stamp: AtomicU64,
}

impl WarmLine {
    /// Takes a session out of the warm set (it is in use, or leaves the registry).
    fn take(&self, session: &SessionShared) {
        if session.warm.swap(0, Ordering::AcqRel) != 0 {
            self.len.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The live sessions and the warm set.
#[derive(Debug)]
pub(crate) struct Sessions {
    slots: crate::Map<SessionKey, Slot>,
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

    fn elapsed_ms(&self) -> u64 {
        self.ms_at(Instant::now())
    }

    /// `now` as milliseconds since the registry started.
    fn ms_at(&self, now: Instant) -> u64 {
        u64::try_from(now.saturating_duration_since(self.started).as_millis()).unwrap_or(u64::MAX)
    }

    /// The number of live sessions.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
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
            .store(self.ms_at(now), Ordering::Relaxed);
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
                vacant.insert(Slot {
                    actor,
                    agent,
                    session: Arc::new(SessionShared::new(
                        Limiter::new(LimitScope::Session, self.session_limit, self.session_queue),
                        self.elapsed_ms(),
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
            self.warm.take(&slot.session);
        }
    }

    /// Passivates the session under `key` if `pick` chooses its slot; returns
    /// whether it did.
    pub(crate) fn passivate_if(&self, key: &SessionKey, pick: impl FnOnce(&Slot) -> bool) -> bool {
        match self.slots.remove_if(key, |_, slot| pick(slot)) {
            Some((_, slot)) => {
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
        let now = self.elapsed_ms();
        let idle_ms = u64::try_from(idle_timeout.as_millis()).unwrap_or(u64::MAX);
        self.passivate_all(|session| {
            now.saturating_sub(session.last_used.load(Ordering::Relaxed)) >= idle_ms
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
    /// still registered under `key` joins it as the most recently used, and the least
    /// recently used ones past the warm limit are passivated at once.
    pub(crate) fn settled(&self, key: &SessionKey, session: &Arc<SessionShared>) {
        if !session.is_idle() || !self.is_current(key, session) {
            // Busy, or passivated or stopped already: nothing to keep warm.
            return;
        }
        let stamp = self.warm.next_stamp.fetch_add(1, Ordering::Relaxed) + 1;
        if session.warm.swap(stamp, Ordering::AcqRel) == 0 {
            self.warm.len.fetch_add(1, Ordering::AcqRel);
        }
        let victims = {
            let mut entries = self
                .warm
                .entries
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            entries.push_back(WarmEntry {
                key: key.clone(),
                session: Arc::clone(session),
                stamp,
            });
            let mut victims = Vec::new();
            while self.warm.len.load(Ordering::Acquire) > self.warm_limit {
                let Some(entry) = entries.pop_front() else {
                    break;
                };
                if entry
                    .session
                    .warm
                    .compare_exchange(entry.stamp, 0, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    self.warm.len.fetch_sub(1, Ordering::AcqRel);
                    victims.push(entry);
                }
            }
            // Stale entries are skipped at the front; drop them in one pass once they
            // outnumber the current ones, so the line stays O(warm sessions).
            if entries.len() > 2 * self.warm.len.load(Ordering::Acquire) + 64 {
                entries.retain(|e| e.session.warm.load(Ordering::Acquire) == e.stamp);
            }
            victims
        };
        // Outside the line's lock: removal takes a registry shard lock.
        for victim in victims {
            self.passivate_if(&victim.key, |slot| {
                Arc::ptr_eq(&slot.session, &victim.session) && slot.session.is_idle()
            });
        }
    }

    /// Forgets every session and the warm set (at shutdown, once the actors are told
    /// to stop).
    pub(crate) fn clear(&self) {
        self.slots.clear();
        self.warm
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// What the supervisor's own tests read of the registry.
#[cfg(test)]
impl Sessions {
    /// How many sessions are warm.
    pub(crate) fn warm_len(&self) -> usize {
        self.warm.len.load(Ordering::Acquire)
    }

    /// How many entries the warm line holds, stale ones included.
    pub(crate) fn warm_entries(&self) -> usize {
        self.warm
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether every live session is idle.
    pub(crate) fn all_idle(&self) -> bool {
        self.slots.iter().all(|slot| slot.session.is_idle())
    }
}
