use super::*;

/// The defaults are what the field docs say.
#[test]
fn the_defaults_are_the_documented_ones() {
    let config = SupervisorConfig::default();
    assert_eq!((config.global_limit, config.global_queue), (10_000, 10_000));
    assert_eq!((config.agent_limit, config.agent_queue), (1_000, 1_000));
    assert_eq!((config.session_limit, config.session_queue), (1, 64));
    assert_eq!(config.idle_timeout, Duration::from_secs(300));
    assert_eq!(config.warm_sessions, 1_000);
    assert_eq!(config.cancel_grace, Duration::from_secs(2));
    assert_eq!(config.idempotency_ttl, Duration::from_secs(600));
    assert_eq!(config.idempotency_capacity, 100_000);
    assert_eq!(config.history_depth, 20);
    assert_eq!((config.event_capacity, config.stream_capacity), (1_024, 16));
    assert!(config.intent_classifier.is_none());
}
