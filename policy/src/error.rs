//! Configuration errors.
//!
//! A policy never fails at decision time (a refusal is a [`Decision`](crate::Decision),
//! not an error); the only errors are in building one from bad configuration, and each
//! names the key and value that were wrong so the operator can fix the file.

/// What was wrong with a policy configuration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A match pattern that this crate does not understand.
    #[error("{field}: invalid pattern {pattern:?}: {reason}")]
    InvalidPattern {
        /// Where the pattern was found, e.g. `rules[2].to`.
        field: String,
        /// The pattern as written.
        pattern: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A rate limit whose capacity or refill rate cannot work.
    #[error("{field}: invalid rate limit: {reason}")]
    InvalidRateLimit {
        /// Where the limit was found, e.g. `rate_limit.per_second` or
        /// `sender_rate_limits.planner.capacity`.
        field: String,
        /// Why it was refused.
        reason: String,
    },
}

/// Result of building a policy.
pub type Result<T, E = PolicyError> = std::result::Result<T, E>;
