use super::*;

const SECOND: Duration = Duration::from_secs(1);

fn limit(capacity: u32, per_second: f64) -> RateLimit {
    RateLimit::per_second(capacity, per_second).expect("valid test limit")
}

fn limits(default: Option<RateLimit>, max_tracked: usize) -> SenderLimits {
    SenderLimits::new(default, HashMap::new(), max_tracked)
}

fn allowed(limits: &SenderLimits, sender: Option<&str>, now: Instant) -> bool {
    limits.check(sender, now, RateMode::Consume).is_ok()
}

#[test]
fn no_limit_allows_everything_and_tracks_nothing() {
    let limits = limits(None, 10);
    let t0 = Instant::now();
    for _ in 0..100 {
        assert!(allowed(&limits, Some("a"), t0));
        assert!(allowed(&limits, None, t0));
    }
    assert_eq!(limits.tracked(), 0);
}

#[test]
fn each_sender_has_its_own_bucket() {
    let limits = limits(Some(limit(1, 1.0)), 10);
    let t0 = Instant::now();
    assert!(allowed(&limits, Some("a"), t0));
    assert!(!allowed(&limits, Some("a"), t0));
    assert!(allowed(&limits, Some("b"), t0));
}

#[test]
fn anonymous_callers_share_one_bucket_apart_from_named_senders() {
    let limits = limits(Some(limit(2, 1.0)), 10);
    let t0 = Instant::now();
    assert!(allowed(&limits, None, t0));
    assert!(allowed(&limits, None, t0));
    assert!(!allowed(&limits, None, t0));
    assert!(allowed(&limits, Some("named"), t0));
    assert_eq!(limits.tracked(), 1);
}

#[test]
fn listed_sender_uses_its_own_limit_and_others_the_default() {
    let per_sender = HashMap::from([("planner".to_owned(), limit(3, 1.0))]);
    let limits = SenderLimits::new(Some(limit(1, 1.0)), per_sender, 10);
    let t0 = Instant::now();
    let planner = (0..10).filter(|_| allowed(&limits, Some("planner"), t0));
    assert_eq!(planner.count(), 3);
    let other = (0..10).filter(|_| allowed(&limits, Some("other"), t0));
    assert_eq!(other.count(), 1);
}

#[test]
fn listed_sender_is_limited_even_without_a_default() {
    let per_sender = HashMap::from([("noisy".to_owned(), limit(1, 1.0))]);
    let limits = SenderLimits::new(None, per_sender, 10);
    let t0 = Instant::now();
    assert!(allowed(&limits, Some("noisy"), t0));
    assert_eq!(
        limits.check(Some("noisy"), t0, RateMode::Consume),
        Err(SECOND)
    );
    assert!(allowed(&limits, Some("quiet"), t0));
    assert!(allowed(&limits, Some("quiet"), t0));
    assert!(allowed(&limits, None, t0));
}

#[test]
fn peek_never_creates_or_drains_a_bucket() {
    let limits = limits(Some(limit(1, 1.0)), 10);
    let t0 = Instant::now();
    for _ in 0..5 {
        assert_eq!(limits.check(Some("a"), t0, RateMode::Peek), Ok(()));
        assert_eq!(limits.check(None, t0, RateMode::Peek), Ok(()));
    }
    assert_eq!(limits.tracked(), 0);
    assert!(allowed(&limits, Some("a"), t0));
    assert_eq!(limits.check(Some("a"), t0, RateMode::Peek), Err(SECOND));
    assert!(allowed(&limits, None, t0));
    assert_eq!(limits.check(None, t0, RateMode::Peek), Err(SECOND));
}

#[test]
fn many_distinct_senders_do_not_grow_the_map_past_its_bound() {
    let limits = limits(Some(limit(1, 0.1)), 3);
    let t0 = Instant::now();
    for i in 0..1000 {
        let name = format!("sender-{i}");
        let _ = limits.check(
            Some(&name),
            t0 + i * Duration::from_millis(10),
            RateMode::Consume,
        );
        assert!(limits.tracked() <= 3);
    }
}

#[test]
fn senders_past_the_bound_share_an_overflow_bucket_and_stay_limited() {
    let limits = limits(Some(limit(2, 0.1)), 2);
    let t0 = Instant::now();
    assert!(allowed(&limits, Some("a"), t0));
    assert!(allowed(&limits, Some("b"), t0));
    // The map is full of non-full buckets: newcomers share one bucket of capacity 2.
    assert!(allowed(&limits, Some("c"), t0));
    assert!(allowed(&limits, Some("d"), t0));
    assert!(!allowed(&limits, Some("e"), t0));
    assert!(!allowed(&limits, Some("c"), t0));
    assert_eq!(limits.tracked(), 2);
    // Tracked senders keep their own buckets.
    assert!(allowed(&limits, Some("a"), t0));
    assert!(!allowed(&limits, Some("a"), t0));
}

#[test]
fn full_buckets_are_evicted_to_make_room_without_changing_any_answer() {
    let limits = limits(Some(limit(1, 1.0)), 2);
    let t0 = Instant::now();
    assert!(allowed(&limits, Some("a"), t0));
    assert!(allowed(&limits, Some("b"), t0));
    // Two seconds on, both buckets are full again, so forgetting them is invisible.
    let t2 = t0 + 2 * SECOND;
    assert!(allowed(&limits, Some("c"), t2));
    assert_eq!(limits.tracked(), 1);
    assert!(allowed(&limits, Some("a"), t2));
    assert!(!allowed(&limits, Some("a"), t2));
}

#[test]
fn eviction_never_forgives_a_drained_sender() {
    let limits = limits(Some(limit(1, 0.1)), 1);
    let t0 = Instant::now();
    assert!(allowed(&limits, Some("drained"), t0));
    let later = t0 + 2 * SECOND;
    // A newcomer sweeps, but the drained bucket (8s from a token) is not full.
    assert!(allowed(&limits, Some("newcomer"), later));
    assert_eq!(limits.tracked(), 1);
    assert_eq!(
        limits.check(Some("drained"), later, RateMode::Consume),
        Err(8 * SECOND)
    );
}

#[test]
fn the_map_is_swept_at_most_once_per_interval() {
    let limits = limits(Some(limit(1, 1.0)), 1);
    let t0 = Instant::now();
    assert!(allowed(&limits, Some("a"), t0));
    // First sweep at 0.5s: `a` is not full yet, so `b` goes to the overflow bucket.
    let half = t0 + SWEEP_INTERVAL / 2;
    assert!(allowed(&limits, Some("b"), half));
    assert_eq!(limits.tracked(), 1);
    // At 1s `a` is full, but the last sweep was only 0.5s ago: `c` lands in the
    // overflow bucket, which `b` emptied half a second earlier.
    assert_eq!(
        limits.check(Some("c"), t0 + SWEEP_INTERVAL, RateMode::Consume),
        Err(SWEEP_INTERVAL / 2)
    );
    assert_eq!(limits.tracked(), 1);
    // At 1.5s the sweep runs again, evicts `a`, and `d` gets a bucket of its own.
    assert!(allowed(&limits, Some("d"), half + SWEEP_INTERVAL));
    assert!(!allowed(&limits, Some("d"), half + SWEEP_INTERVAL));
    assert_eq!(limits.tracked(), 1);
}

#[test]
fn listed_senders_always_get_their_own_bucket() {
    let per_sender = HashMap::from([("vip".to_owned(), limit(1, 0.1))]);
    let limits = SenderLimits::new(Some(limit(1, 0.1)), per_sender, 1);
    let t0 = Instant::now();
    assert!(allowed(&limits, Some("a"), t0));
    assert!(allowed(&limits, Some("vip"), t0));
    assert_eq!(limits.tracked(), 2);
    assert!(!allowed(&limits, Some("vip"), t0));
}
