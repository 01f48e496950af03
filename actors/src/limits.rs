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
use std::sync::atomic::{AtomicU32, Ordering};
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
/// line's length and the count in line are `u32`s for the same reason: every idle
/// session carries them (a line of four billion sends would not fit in memory).
#[derive(Debug)]
pub(crate) struct Limiter {
    permits: Semaphore,
    waiting: AtomicU32,
    limit: u32,
    queue: u32,
    scope: LimitScope,
}

/// What holds a [`Limiter`]: the limiter itself, or a session's shared state. Its
/// methods take the holder's `Arc`, which the permits they hand out keep.
pub(crate) trait Limited: Send + Sync + 'static {
    /// The limiter held.
    fn limiter(&self) -> &Limiter;

    /// A permit if one is free right now.
    fn try_acquire(self: &Arc<Self>) -> Option<Permit>
    where
        Self: Sized,
    {
        let permit = self.limiter().permits.try_acquire().ok()?;
        Some(Permit::adopt(permit, self))
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
        if let Some(permit) = self.try_acquire() {
            return Ok(Place::Ready(permit));
        }
        let limiter = self.limiter();
        let waiting = limiter.waiting.fetch_add(1, Ordering::AcqRel);
        let in_line = InLine(Arc::clone(self) as Arc<dyn Limited>);
        if waiting >= limiter.queue {
            return Err(limiter.busy());
        }
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

impl Limited for Limiter {
    fn limiter(&self) -> &Limiter {
        self
    }
}

/// One permit of a [`Limiter`], given back when dropped.
pub(crate) struct Permit(Arc<dyn Limited>);

impl Permit {
    /// Takes over a permit acquired from `holder`'s semaphore and forgotten there.
    fn adopt<L: Limited>(permit: tokio::sync::SemaphorePermit<'_>, holder: &Arc<L>) -> Self {
        permit.forget();
        Self(Arc::clone(holder) as Arc<dyn Limited>)
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.0.limiter().permits.add_permits(1);
    }
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Permit({})", self.0.limiter().scope)
    }
}

impl Limiter {
    pub(crate) fn new(scope: LimitScope, limit: usize, queue: usize) -> Self {
        // A limit of zero would refuse everything forever; one is the least that works.
        // Past `u32::MAX` (four billion) a limit or a line is as good as none.
        let limit = u32::try_from(limit).unwrap_or(u32::MAX).max(1);
        Self {
            permits: Semaphore::new(limit as usize),
            waiting: AtomicU32::new(0),
            limit,
            queue: u32::try_from(queue).unwrap_or(u32::MAX),
            scope,
        }
    }

    /// How many sends wait in line now.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire) as usize
    }

    /// Whether a send would be refused right now: every permit taken and the line
    /// full. A hint, not a reservation: it lets a send that would only be refused skip
    /// the work before the limiter (spawning a session).
    pub(crate) fn is_saturated(&self) -> bool {
        self.permits.available_permits() == 0 && self.waiting.load(Ordering::Acquire) >= self.queue
    }

    /// The error of a send refused by this limiter.
    pub(crate) fn busy(&self) -> Error {
        Error::Busy {
            scope: self.scope,
            queue: self.queue as usize,
        }
    }

    /// Whether nobody holds or waits for a permit (used to forget idle session limiters).
    pub(crate) fn is_idle(&self) -> bool {
        self.waiting.load(Ordering::Acquire) == 0
            && self.permits.available_permits() >= self.limit as usize
    }
}

/// A place counted in a limiter's line until it is served or dropped.
struct InLine(Arc<dyn Limited>);

impl Drop for InLine {
    fn drop(&mut self) {
        self.0.limiter().waiting.fetch_sub(1, Ordering::AcqRel);
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
        agent: &Arc<Limiter>,
        global: &Arc<Limiter>,
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
