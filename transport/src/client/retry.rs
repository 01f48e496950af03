//! When a failed call is tried again, and how long the client waits first.
//!
//! A call is retried only when repeating it cannot run the work twice: reads
//! (`tasks/get`, card fetches), `tasks/cancel` and `tasks/resubscribe` always, and a
//! send only when it carries an `Idempotency-Key` (the client sets one to the
//! message's `messageId` when retries are on), so the agent joins the repeat to the
//! first attempt instead of starting new work. What is retried: connection failures
//! and timeouts, and the statuses that mean "later" (429 Too Many Requests, 503
//! Service Unavailable). The wait grows exponentially with full jitter, so that many
//! clients refused at once do not come back at once; a `Retry-After` the server sent
//! replaces it, unless it is longer than the policy's cap (then the error is
//! returned: the server asked for more patience than the caller allowed).

use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

use super::ClientError;

#[cfg(test)]
mod tests;

/// How often and how patiently a client retries: only calls that a repeat cannot
/// run twice (reads, cancels, resubscriptions, and sends carrying an
/// `Idempotency-Key`, which the client sets to the `messageId` when retries are on),
/// only after a connection failure, a timeout, 429 or 503; waiting with exponential
/// backoff and full jitter, or the server's `Retry-After` when it is not longer than
/// [`max_delay`](Self::max_delay).
///
/// ```
/// use std::time::Duration;
/// use agentyard_transport::client::RetryPolicy;
///
/// let policy = RetryPolicy::new(4).base_delay(Duration::from_millis(50));
/// assert_eq!(policy.attempts(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    attempts: u32,
    base: Duration,
    max_delay: Duration,
}

impl Default for RetryPolicy {
    /// No retries: one attempt.
    fn default() -> Self {
        Self::none()
    }
}

impl RetryPolicy {
    /// At most `attempts` tries in all (1 retries nothing), waiting 100 ms before the
    /// first retry, doubling up to 5 s.
    #[must_use]
    pub const fn new(attempts: u32) -> Self {
        Self {
            attempts: if attempts == 0 { 1 } else { attempts },
            base: Duration::from_millis(100),
            max_delay: Duration::from_secs(5),
        }
    }

    /// One attempt, no retry.
    #[must_use]
    pub const fn none() -> Self {
        Self::new(1)
    }

    /// The wait before the first retry (doubled for each one after).
    #[must_use]
    pub const fn base_delay(mut self, base: Duration) -> Self {
        self.base = base;
        self
    }

    /// The longest wait between two attempts, and the longest `Retry-After` obeyed.
    #[must_use]
    pub const fn max_delay(mut self, max: Duration) -> Self {
        self.max_delay = max;
        self
    }

    /// Tries in all.
    #[must_use]
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Whether any retry is made.
    #[must_use]
    pub const fn retries(&self) -> bool {
        self.attempts > 1
    }

    /// How long to wait after failed attempt `attempt` (1 for the first) failing
    /// with `error`, or `None` when the error is not worth another try or the tries
    /// are used up.
    pub(super) fn delay(&self, attempt: u32, error: &ClientError) -> Option<Duration> {
        if attempt >= self.attempts {
            return None;
        }
        let backoff = self.backoff(attempt);
        match error {
            ClientError::Transport(_) => Some(backoff),
            // A server that cannot be reached, is busy, or limits the rate: as HTTP
            // 503 and 429 are, and a connection that failed.
            ClientError::Grpc {
                code: tonic::Code::Unavailable | tonic::Code::ResourceExhausted,
                ..
            } => Some(backoff),
            ClientError::Http {
                status,
                retry_after_secs,
                ..
            } if retryable_status(*status) => match retry_after_secs {
                Some(secs) if Duration::from_secs(u64::from(*secs)) > self.max_delay => None,
                Some(secs) => Some(Duration::from_secs(u64::from(*secs))),
                None => Some(backoff),
            },
            _ => None,
        }
    }

    /// Full jitter: a uniform wait between zero and the exponential bound.
    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1_u32
            .checked_shl(attempt.saturating_sub(1))
            .unwrap_or(u32::MAX);
        let bound = self.base.saturating_mul(factor).min(self.max_delay);
        let random = uuid::Uuid::new_v4().as_u128() as u64;
        let nanos = u64::try_from(bound.as_nanos()).unwrap_or(u64::MAX);
        // Never zero: a retry storm against a refusing server is what this avoids.
        Duration::from_nanos(random % nanos.max(1)).max(self.base / 4)
    }
}

/// Statuses that ask the client to come back later.
const fn retryable_status(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
    )
}

/// The response's `Retry-After` in whole seconds (rounded up), given in seconds or
/// as an HTTP date.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<u32> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(u32::try_from(seconds).unwrap_or(u32::MAX));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let wait = at.duration_since(SystemTime::now()).unwrap_or_default();
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    Some(u32::try_from(secs).unwrap_or(u32::MAX))
}
