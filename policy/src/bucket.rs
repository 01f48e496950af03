//! A token bucket: the rate limit of one sender.
//!
//! The bucket keeps its tokens as *credit*, the refill time it has banked, in whole
//! nanoseconds: one token is worth one refill interval. Integer time arithmetic
//! (saturating) instead of fractional `f64` tokens means the refill math is exact, a
//! `retry_after` is exact (a retry after exactly that long succeeds), and a huge gap
//! between two sends cannot overflow.

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use crate::PolicyError;

#[cfg(test)]
mod tests;

/// The shape of a rate limit: up to `capacity` sends in a burst, then one send per
/// refill interval.
///
/// A rate of zero (no refill) is refused: a bucket that never refills is a lifetime
/// quota, which would lock a sender out for the life of the process, and that is not
/// what a rate limit is for.
///
/// ```
/// use std::time::Duration;
/// use agentyard_policy::RateLimit;
///
/// let limit = RateLimit::per_second(10, 2.0)?;
/// assert_eq!(limit.capacity(), 10);
/// assert_eq!(limit.refill_interval(), Duration::from_millis(500));
/// assert!(RateLimit::per_second(10, 0.0).is_err());
/// # Ok::<(), agentyard_policy::PolicyError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RateLimit {
    capacity: NonZeroU32,
    /// Time to earn one token; never zero.
    interval: Duration,
}

impl RateLimit {
    /// A bucket of `capacity` tokens that earns one token every `refill_interval`.
    ///
    /// # Errors
    ///
    /// [`PolicyError::InvalidRateLimit`] when `capacity` is zero (no send could ever
    /// pass) or `refill_interval` is zero (no limit at all; leave the limit out
    /// instead).
    pub fn new(capacity: u32, refill_interval: Duration) -> Result<Self, PolicyError> {
        let capacity = NonZeroU32::new(capacity).ok_or_else(|| {
            invalid(
                "capacity",
                "capacity must be at least 1, or no send could ever pass".to_owned(),
            )
        })?;
        if refill_interval.is_zero() {
            return Err(invalid(
                "refill_interval",
                "the refill interval must be longer than zero".to_owned(),
            ));
        }
        Ok(Self {
            capacity,
            interval: refill_interval,
        })
    }

    /// A bucket of `capacity` tokens that refills at `per_second` tokens per second
    /// (fractions allowed: `0.5` is one token every two seconds). The refill interval
    /// is `1 / per_second` rounded to the nanosecond.
    ///
    /// # Errors
    ///
    /// [`PolicyError::InvalidRateLimit`] when `capacity` is zero, or `per_second` is
    /// not a finite number above zero, or is so large that the interval rounds to zero
    /// (above a billion per second) or so small that it does not fit a `Duration`.
    pub fn per_second(capacity: u32, per_second: f64) -> Result<Self, PolicyError> {
        if !(per_second.is_finite() && per_second > 0.0) {
            return Err(invalid(
                "per_second",
                format!(
                    "per_second must be a finite number above zero, got {per_second} \
                     (leave the rate limit out for no limit)"
                ),
            ));
        }
        let interval = Duration::try_from_secs_f64(1.0 / per_second).map_err(|_| {
            invalid(
                "per_second",
                format!("per_second {per_second} is too small: one token would take forever"),
            )
        })?;
        if interval.is_zero() {
            return Err(invalid(
                "per_second",
                format!("per_second {per_second} is too large: at most 1e9 tokens per second"),
            ));
        }
        Self::new(capacity, interval)
    }

    /// The most tokens the bucket holds: the largest burst.
    #[must_use]
    pub const fn capacity(&self) -> u32 {
        self.capacity.get()
    }

    /// How long the bucket takes to earn one token.
    #[must_use]
    pub const fn refill_interval(&self) -> Duration {
        self.interval
    }

    /// The credit of a full bucket, saturating at `Duration::MAX` for absurd limits.
    const fn max_credit(&self) -> Duration {
        self.interval.saturating_mul(self.capacity.get())
    }
}

/// A [`PolicyError::InvalidRateLimit`] for `field`; callers that know where the limit
/// came from rename the field to its full path.
fn invalid(field: &str, reason: String) -> PolicyError {
    PolicyError::InvalidRateLimit {
        field: field.to_owned(),
        reason,
    }
}

/// The state of one rate limit: a [`RateLimit`] and the tokens left.
///
/// It starts full. It takes the current instant on every call rather than reading a
/// clock, so tests drive it with made-up instants. An instant earlier than one seen
/// before (two threads racing) counts as no time passing, never as negative time.
///
/// ```
/// use std::time::{Duration, Instant};
/// use agentyard_policy::{RateLimit, TokenBucket};
///
/// let t0 = Instant::now();
/// let mut bucket = TokenBucket::new(RateLimit::per_second(2, 1.0)?, t0);
/// assert!(bucket.try_acquire(t0).is_ok());
/// assert!(bucket.try_acquire(t0).is_ok());
/// assert_eq!(bucket.try_acquire(t0), Err(Duration::from_secs(1)));
/// assert!(bucket.try_acquire(t0 + Duration::from_secs(1)).is_ok());
/// # Ok::<(), agentyard_policy::PolicyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBucket {
    limit: RateLimit,
    /// Banked refill time; a token costs `limit.interval`. At most `max_credit`.
    credit: Duration,
    /// The latest instant the credit was brought up to date to.
    updated: Instant,
}

impl TokenBucket {
    /// A full bucket.
    #[must_use]
    pub const fn new(limit: RateLimit, now: Instant) -> Self {
        Self {
            limit,
            credit: limit.max_credit(),
            updated: now,
        }
    }

    /// The limit this bucket enforces.
    #[must_use]
    pub const fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Takes a token if there is one.
    ///
    /// # Errors
    ///
    /// How long until the next token, when the bucket is empty.
    pub fn try_acquire(&mut self, now: Instant) -> Result<(), Duration> {
        self.refill(now);
        let cost = self.limit.interval;
        match self.credit.checked_sub(cost) {
            Some(left) => {
                self.credit = left;
                Ok(())
            }
            None => Err(cost - self.credit),
        }
    }

    /// Whether [`try_acquire`](Self::try_acquire) would succeed at `now`, without
    /// taking a token or changing anything.
    ///
    /// # Errors
    ///
    /// How long until the next token, when the bucket is empty.
    pub fn peek(&self, now: Instant) -> Result<(), Duration> {
        let credit = self.credit_at(now);
        let cost = self.limit.interval;
        if credit >= cost {
            Ok(())
        } else {
            Err(cost - credit)
        }
    }

    /// Whole tokens available at `now`.
    #[must_use]
    pub fn available(&self, now: Instant) -> u32 {
        let tokens = self.credit_at(now).as_nanos() / self.limit.interval.as_nanos();
        // Credit never exceeds capacity * interval, so this fits; saturate anyway.
        u32::try_from(tokens).unwrap_or(u32::MAX)
    }

    /// Whether the bucket is full at `now`. A full bucket behaves exactly like a new
    /// one, so forgetting it loses nothing: that is what makes eviction safe.
    #[must_use]
    pub fn is_full(&self, now: Instant) -> bool {
        self.credit_at(now) >= self.limit.max_credit()
    }

    /// The credit at `now`, capped at a full bucket.
    fn credit_at(&self, now: Instant) -> Duration {
        let elapsed = now.saturating_duration_since(self.updated);
        self.credit
            .saturating_add(elapsed)
            .min(self.limit.max_credit())
    }

    fn refill(&mut self, now: Instant) {
        self.credit = self.credit_at(now);
        // Never move backwards: an older instant from a racing caller adds nothing.
        self.updated = self.updated.max(now);
    }
}
