//! How busy one live session is, shared by the send path, the session's tasks and
//! the session registry: its concurrency limiter, its tasks that have not ended, when
//! it was last used, and its place in the warm set. Held by `Arc` so each can reach it
//! without a registry lookup; nothing here knows about actors.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::limits::{LimitScope, Limited, Limiter};

#[cfg(test)]
mod tests;

/// What the send path, the session's tasks and the warm line share about one live
/// session.
#[derive(Debug)]
pub(crate) struct SessionShared {
    /// Inline, not in an `Arc` of its own: the session's permits keep this whole
    /// state alive instead (see [`Limited`]), which saves every live session an
    /// allocation.
    pub(crate) limiter: Limiter,
    /// Nanoseconds since the supervisor started, at the last send to this session.
    pub(crate) last_used: AtomicU64,
    /// The stamp of this session's entry in the warm line; 0 while it has none.
    pub(crate) warm: AtomicU64,
    /// The session's tasks that have not ended: queued, running or waiting for input.
    live_tasks: AtomicUsize,
}

impl SessionShared {
    /// A session's shared state, as it is when spawned: used now, not warm, no task.
    pub(crate) fn new(limiter: Limiter, now_ns: u64) -> Self {
        Self {
            limiter,
            last_used: AtomicU64::new(now_ns),
            warm: AtomicU64::new(0),
            live_tasks: AtomicUsize::new(0),
        }
    }

    /// Whether the session holds nothing the store lacks: no task of its own that
    /// has not ended, and nobody holding or waiting for its permit.
    pub(crate) fn is_idle(&self) -> bool {
        self.live_tasks.load(Ordering::Acquire) == 0 && self.limiter.is_idle()
    }
}

impl Limited for SessionShared {
    fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    fn scope(&self) -> LimitScope {
        LimitScope::Session
    }
}

/// Counts a task among its session's live tasks for as long as it is held (by the
/// task's entry in the live set).
#[derive(Debug)]
pub(crate) struct TaskPin(Arc<SessionShared>);

impl TaskPin {
    pub(crate) fn new(session: &Arc<SessionShared>) -> Self {
        session.live_tasks.fetch_add(1, Ordering::AcqRel);
        Self(Arc::clone(session))
    }

    pub(crate) fn session(&self) -> Arc<SessionShared> {
        Arc::clone(&self.0)
    }
}

impl Drop for TaskPin {
    fn drop(&mut self) {
        self.0.live_tasks.fetch_sub(1, Ordering::AcqRel);
    }
}
