//! Concurrency limits with a bounded waiting queue.
//!
//! A send takes one permit from each of three limiters (global, its agent type, its
//! session) before it reaches the session, and holds them until its task stops running.
//! Past a limit, a send waits in line; past the line's length it is refused at once
//! with [`crate::Error::Busy`]. The line is a counter, not a buffer: the waiting sends
//! are the callers' own futures, so memory is bounded by the queue size.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use tokio::sync::Semaphore;

use crate::error::Error;

#[cfg(test)]
mod tests;

/// Which concurrency limit a send ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LimitScope {
    /// The limit over every running task in the runtime.
    Global,
    /// The limit over the running tasks of one agent type.
    Agent,
    /// The limit over the running tasks of one session.
    Session,
}

impl fmt::Display for LimitScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Global => "global",
            Self::Agent => "per-agent",
            Self::Session => "per-session",
        })
    }
}

/// One limit: at most `limit` running, at most `queue` waiting.
///
/// Reached through an `Arc` of what holds it (see [`Limited`]): each [`Permit`]
/// keeps that `Arc` to give its permit back. The semaphore sits inline rather than in
/// an `Arc` of its own (what tokio's owned permits need), so a session's limiter is
/// part of its shared state's one allocation instead of two more. The limit, the
/// line's length and the counts are `u32`s for the same reason, and the scope a
/// refusal names is the holder's (a session's is always the session's): every idle
/// session carries a limiter (a line of four billion sends would not fit in memory).
///
/// Permits live in two places. While nobody waits they are a count, taken and given
/// back with one atomic operation each: tokio's semaphore takes its waiters' lock on
/// every release, whether anyone waits or not, and the global and agent limiters are
/// released by every send on every worker. The semaphore is the line: it holds the
/// permits handed to waiting sends, in their order. The free count and the count in
/// line share one atomic word, so a release that finds nobody in line adds to the
/// count, and one that finds anyone gives its permit to the semaphore, in one step
/// that no send can join the line in the middle of; while anyone is in line the
/// count stays at zero (a send joins only when it finds the count empty). A permit
/// can also rest in the semaphore with nobody in line (a waiter that gave up after
/// its permit was handed over returns it there); a send that finds the count empty
/// looks there before it joins the line.
#[derive(Debug)]
pub(crate) struct Limiter {
    permits: Semaphore,
    /// The free permits (low half) and the sends in line (high half).
    state: AtomicU64,
    limit: u32,
    queue: u32,
}

/// One send in line, as counted in [`Limiter::state`].
const ONE_IN_LINE: u64 = 1 << 32;

/// The free permits of a [`Limiter::state`].
fn free(state: u64) -> u32 {
    // The low half.
    #[allow(clippy::cast_possible_truncation)]
    let free = state as u32;
    free
}

/// The sends in line of a [`Limiter::state`].
fn in_line(state: u64) -> u32 {
    // The high half, which fits.
    #[allow(clippy::cast_possible_truncation)]
    let waiting = (state >> 32) as u32;
    waiting
}

/// What holds a [`Limiter`]: an agent's or the global [`ScopedLimiter`], or a
/// session's shared state. Its methods take the holder's `Arc`, which the permits
/// they hand out keep.
pub(crate) trait Limited: Send + Sync + 'static {
    /// The limiter held.
    fn limiter(&self) -> &Limiter;

    /// Which limit the limiter is, named when it refuses a send.
    fn scope(&self) -> LimitScope;

    /// The error of a send refused by this limiter.
    fn busy(&self) -> Error {
        Error::Busy {
            scope: self.scope(),
            queue: self.limiter().queue as usize,
        }
    }

    /// A permit if one is free right now and nobody is in line for one (who would be
    /// overtaken).
    fn try_acquire(self: &Arc<Self>) -> Option<Permit>
    where
        Self: Sized,
    {
        self.limiter().take_free().then(|| Permit::of(self))
    }

    /// Takes a permit, waiting in line if there is room in the line: [`Limited::enqueue`]
    /// then the wait, so the line is counted and refused in one place.
    ///
    /// The semaphore is fair, so waiting sends run in arrival order; that is what keeps
    /// a session's messages in order.
    fn acquire(self: &Arc<Self>) -> impl Future<Output = Result<Permit, Error>> + Send
    where
        Self: Sized,
    {
        async move {
            match self.enqueue()? {
                Place::Ready(permit) => Ok(permit),
                Place::Queued(place) => place.permit().await,
            }
        }
    }

    /// Takes a place in line now, without waiting: a permit if one is free, else a
    /// [`Queued`] place that a task of its own can wait on, else `Busy`.
    ///
    /// The place is taken before this returns, in the caller's order: a send that
    /// returns before another is served before it, even though the two wait in tasks
    /// that tokio may poll in any order. (`acquire` alone would join the semaphore's
    /// line only when first polled.)
    fn enqueue(self: &Arc<Self>) -> Result<Place, Error>
    where
        Self: Sized,
    {
        let limiter = self.limiter();
        // Takes a free permit, or joins the line if none is free and the line has
        // room, in one step: a release between the look and the join would otherwise
        // leave its permit in the count while this send waits. (A permit resting in
        // the semaphore is found by the first poll below.)
        let mut state = limiter.state.load(Ordering::Acquire);
        loop {
            let next = if in_line(state) == 0 && free(state) > 0 {
                state - 1
            } else if in_line(state) >= limiter.queue {
                return Err(self.busy());
            } else {
                state + ONE_IN_LINE
            };
            match limiter.state.compare_exchange_weak(
                state,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) if next < state => {
                    return Ok(Place::Ready(Permit::of(self)));
                }
                Ok(_) => break,
                Err(now) => state = now,
            }
        }
        let in_line = InLine(Arc::clone(self) as Arc<dyn Limited>);
        let holder = Arc::clone(self);
        let mut acquire: Pin<Box<AcquireFuture>> = Box::pin(async move {
            let permit = holder
                .limiter()
                .permits
                .acquire()
                .await
                .map_err(|_| Error::ShuttingDown)?;
            Ok(Permit::adopt(permit, &holder))
        });
        // One poll joins the semaphore's FIFO line; the waker is replaced by the real
        // one when the waiting task polls again (tokio's `Acquire` keeps the latest),
        // and a permit granted in between is found on that poll.
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        match acquire.as_mut().poll(&mut cx) {
            Poll::Ready(permit) => permit.map(Place::Ready),
            Poll::Pending => Ok(Place::Queued(Queued {
                acquire,
                _in_line: in_line,
            })),
        }
    }
}

/// An agent type's or the runtime's limiter: a [`Limiter`] that names its scope.
#[derive(Debug)]
pub(crate) struct ScopedLimiter {
    limiter: Limiter,
    scope: LimitScope,
}

impl ScopedLimiter {
    /// A limiter of `limit` running and `queue` waiting sends that names `scope` when
    /// it refuses one.
    pub(crate) fn new(scope: LimitScope, limit: usize, queue: usize) -> Self {
        Self {
            limiter: Limiter::new(limit, queue),
            scope,
        }
    }
}

impl std::ops::Deref for ScopedLimiter {
    type Target = Limiter;

    fn deref(&self) -> &Limiter {
        &self.limiter
    }
}

impl Limited for ScopedLimiter {
    fn limiter(&self) -> &Limiter {
        &self.limiter
    }

    fn scope(&self) -> LimitScope {
        self.scope
    }
}

/// One permit of a [`Limiter`], given back when dropped.
pub(crate) struct Permit(Arc<dyn Limited>);

impl Permit {
    /// A permit already taken from `holder`'s limiter (from its free count, or from
    /// its semaphore and forgotten there), given back when dropped.
    fn of<L: Limited>(holder: &Arc<L>) -> Self {
        Self(Arc::clone(holder) as Arc<dyn Limited>)
    }

    /// Takes over a permit acquired from `holder`'s semaphore and forgotten there.
    fn adopt<L: Limited>(permit: tokio::sync::SemaphorePermit<'_>, holder: &Arc<L>) -> Self {
        permit.forget();
        Self::of(holder)
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.limiter().release();
    }
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Permit({})", self.0.scope())
    }
}

impl Limiter {
    /// A limiter of `limit` running and `queue` waiting sends, every permit free.
    pub(crate) fn new(limit: usize, queue: usize) -> Self {
        // A limit of zero would refuse everything forever; one is the least that works.
        // Past `u32::MAX` (four billion) a limit or a line is as good as none.
        let limit = u32::try_from(limit).unwrap_or(u32::MAX).max(1);
        Self {
            permits: Semaphore::new(0),
            state: AtomicU64::new(u64::from(limit)),
            limit,
            queue: u32::try_from(queue).unwrap_or(u32::MAX),
        }
    }

    /// Takes a free permit if nobody is in line: from the count, else one resting in
    /// the semaphore.
    fn take_free(&self) -> bool {
        let taken = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                (in_line(state) == 0 && free(state) > 0).then(|| state - 1)
            });
        match taken {
            Ok(_) => true,
            // tokio hands a permit to the first in its line as it is released, so
            // one it holds with nobody in line is nobody's.
            Err(state) => {
                in_line(state) == 0
                    && self
                        .permits
                        .try_acquire()
                        .map(tokio::sync::SemaphorePermit::forget)
                        .is_ok()
            }
        }
    }

    /// Gives a permit back: to the free count while nobody is in line, else to the
    /// line.
    fn release(&self) {
        let counted = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                (in_line(state) == 0).then(|| state + 1)
            });
        if counted.is_err() {
            self.permits.add_permits(1);
        }
    }

    /// How many sends wait in line now.
    pub(crate) fn waiting(&self) -> usize {
        in_line(self.state.load(Ordering::Acquire)) as usize
    }

    /// Free permits, in the count or resting in the semaphore.
    fn available(&self) -> usize {
        free(self.state.load(Ordering::Acquire)) as usize + self.permits.available_permits()
    }

    /// Whether a send would be refused right now: every permit taken and the line
    /// full. A hint, not a reservation: it lets a send that would only be refused skip
    /// the work before the limiter (spawning a session).
    pub(crate) fn is_saturated(&self) -> bool {
        self.available() == 0 && self.waiting() >= self.queue as usize
    }

    /// Whether nobody holds or waits for a permit (used to forget idle session limiters).
    pub(crate) fn is_idle(&self) -> bool {
        self.waiting() == 0 && self.available() >= self.limit as usize
    }
}

/// A place counted in a limiter's line until it is served or dropped.
struct InLine(Arc<dyn Limited>);

impl Drop for InLine {
    fn drop(&mut self) {
        self.0
            .limiter()
            .state
            .fetch_sub(ONE_IN_LINE, Ordering::AcqRel);
    }
}

type AcquireFuture = dyn Future<Output = Result<Permit, Error>> + Send;

/// What [`Limiter::enqueue`] took.
pub(crate) enum Place {
    /// A permit was free.
    Ready(Permit),
    /// A place in line, already holding its position.
    Queued(Queued),
}

impl fmt::Debug for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ready(_) => "Place::Ready",
            Self::Queued(_) => "Place::Queued",
        })
    }
}

/// A place in a limiter's line; counts as waiting until it is served or dropped.
pub(crate) struct Queued {
    acquire: Pin<Box<AcquireFuture>>,
    _in_line: InLine,
}

impl fmt::Debug for Queued {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queued").finish_non_exhaustive()
    }
}

impl Queued {
    /// Waits for the permit this place is in line for.
    pub(crate) async fn permit(self) -> Result<Permit, Error> {
        let Self { acquire, _in_line } = self;
        acquire.await
    }
}

/// The permits a running task holds; dropping them lets the next send in.
#[derive(Debug)]
pub(crate) struct Permits {
    _global: Permit,
    _agent: Permit,
    _session: Permit,
}

impl Permits {
    /// The three permits, taken separately.
    pub(crate) fn from_parts(session: Permit, agent: Permit, global: Permit) -> Self {
        Self {
            _global: global,
            _agent: agent,
            _session: session,
        }
    }

    /// Takes the three permits most specific first (session, agent, global), always in
    /// that order so two sends can never hold one each of what the other needs, and so
    /// a send waiting on a busy session holds nothing other sessions need.
    pub(crate) async fn acquire(
        session: &Arc<impl Limited>,
        agent: &Arc<ScopedLimiter>,
        global: &Arc<ScopedLimiter>,
    ) -> Result<Self, Error> {
        let session = session.acquire().await?;
        let agent = agent.acquire().await?;
        let global = global.acquire().await?;
        Ok(Self {
            _global: global,
            _agent: agent,
            _session: session,
        })
    }
}
