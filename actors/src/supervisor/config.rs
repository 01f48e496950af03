//! The supervisor's settings: limits, timeouts, capacities, and the intent classifier.

use std::time::Duration;

use crate::intent::SharedIntentClassifier;

#[cfg(test)]
mod tests;

/// The supervisor's settings. Every field has a documented default
/// ([`SupervisorConfig::default`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SupervisorConfig {
    /// Tasks running at once in the whole runtime (default 10,000).
    pub global_limit: usize,
    /// Sends that may wait for the global limit before `busy` (default 10,000).
    pub global_queue: usize,
    /// Tasks of one agent type running at once, unless its descriptor says otherwise
    /// (default 1,000).
    pub agent_limit: usize,
    /// Sends that may wait for an agent type's limit (default 1,000).
    pub agent_queue: usize,
    /// Tasks of one session running at once (default 1: a session handles its messages
    /// one after another, in order).
    pub session_limit: usize,
    /// Sends that may wait for a session (default 64).
    pub session_queue: usize,
    /// A session with no work for this long is passivated: its actor stops, its
    /// history stays in the store (default 5 minutes).
    pub idle_timeout: Duration,
    /// Sessions kept live while they have no task running, queued or waiting for
    /// input (default 1,000). Such a session holds nothing the store lacks, so past
    /// this many the one used least recently is passivated as soon as another
    /// settles; a new conversation per request then costs a bounded amount of memory,
    /// not one actor per request until the idle timeout.
    pub warm_sessions: usize,
    /// How long a canceled handler may keep running before it is dropped (default 2 s).
    pub cancel_grace: Duration,
    /// How long an idempotency key is remembered (default 10 minutes).
    pub idempotency_ttl: Duration,
    /// How many idempotency keys are remembered at most (default 100,000).
    pub idempotency_capacity: usize,
    /// How many earlier messages of the conversation an agent sees (default 20).
    pub history_depth: usize,
    /// Events a subscriber may fall behind by before it lags (default 1,024; at most
    /// [`SupervisorConfig::MAX_EVENT_CAPACITY`], which a larger value is taken as).
    pub event_capacity: usize,
    /// Updates a task stream may fall behind by before it lags (default 16; at most
    /// [`SupervisorConfig::MAX_STREAM_CAPACITY`], which a larger value is taken as). A
    /// follower that lags reads what it missed back from the task's event log, so this
    /// trades the ring each stream allocates up front against those reads; it loses
    /// nothing either way with a store that keeps a log (every store of this workspace
    /// does).
    pub stream_capacity: usize,
    /// Says what free-text sends mean (default none: they have no intent); see
    /// [`crate::intent`].
    pub intent_classifier: Option<SharedIntentClassifier>,
    /// Whether the runtime keeps metrics (default yes; see [`crate::metrics`]). Off,
    /// the send path counts nothing and there is nothing to scrape.
    pub metrics: bool,
}

impl SupervisorConfig {
    /// The most events the event bus's ring holds: the ring is allocated whole when
    /// the runtime starts, so a capacity past what memory holds would abort it.
    pub const MAX_EVENT_CAPACITY: usize = 1 << 20;
    /// The most updates a task stream's ring holds: each streamed task allocates its
    /// ring whole when its first stream starts.
    pub const MAX_STREAM_CAPACITY: usize = 1 << 16;
}

impl Default for SupervisorConfig {
    fn default() -> Self {
        Self {
            global_limit: 10_000,
            global_queue: 10_000,
            agent_limit: 1_000,
            agent_queue: 1_000,
            session_limit: 1,
            session_queue: 64,
            idle_timeout: Duration::from_secs(300),
            warm_sessions: 1_000,
            cancel_grace: Duration::from_secs(2),
            idempotency_ttl: Duration::from_secs(600),
            idempotency_capacity: 100_000,
            history_depth: 20,
            event_capacity: 1_024,
            stream_capacity: 16,
            intent_classifier: None,
            metrics: true,
        }
    }
}
