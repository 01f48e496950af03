use super::*;

const SECOND: Duration = Duration::from_secs(1);

fn limit(capacity: u32, per_second: f64) -> RateLimit {
    RateLimit::per_second(capacity, per_second).expect("valid test limit")
}

fn drain(bucket: &mut TokenBucket, now: Instant) -> u32 {
    let mut taken = 0;
    while bucket.try_acquire(now).is_ok() {
        taken += 1;
    }
    taken
}

#[test]
fn new_bucket_is_full_and_allows_exactly_capacity_sends() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(limit(5, 1.0), t0);
    assert!(bucket.is_full(t0));
    assert_eq!(bucket.available(t0), 5);
    assert_eq!(drain(&mut bucket, t0), 5);
    assert_eq!(bucket.available(t0), 0);
}

#[test]
fn refill_earns_one_token_per_interval() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(limit(10, 4.0), t0);
    assert_eq!(drain(&mut bucket, t0), 10);
    // 4 per second: 250ms per token, so 1.1s earns 4 whole tokens.
    let later = t0 + Duration::from_millis(1100);
    assert_eq!(bucket.available(later), 4);
    assert_eq!(drain(&mut bucket, later), 4);
    // The 100ms left over is kept: 150ms more completes the next token.
    assert!(
        bucket
            .try_acquire(later + Duration::from_millis(149))
            .is_err()
    );
    assert!(
        bucket
            .try_acquire(later + Duration::from_millis(150))
            .is_ok()
    );
}

#[test]
fn refill_never_exceeds_capacity() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(limit(3, 1.0), t0);
    assert_eq!(drain(&mut bucket, t0), 3);
    let much_later = t0 + 100 * SECOND;
    assert_eq!(bucket.available(much_later), 3);
    assert!(bucket.is_full(much_later));
    assert_eq!(drain(&mut bucket, much_later), 3);
}

#[test]
fn retry_after_is_exactly_the_time_to_the_next_token() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(limit(1, 1.0), t0);
    assert!(bucket.try_acquire(t0).is_ok());
    let now = t0 + Duration::from_millis(300);
    assert_eq!(bucket.try_acquire(now), Err(Duration::from_millis(700)));
    // A refused attempt takes nothing: the answer is the same a moment later.
    assert_eq!(bucket.peek(now), Err(Duration::from_millis(700)));
    let retry_at = now + Duration::from_millis(700);
    assert!(
        bucket
            .try_acquire(retry_at - Duration::from_nanos(1))
            .is_err()
    );
    assert!(bucket.try_acquire(retry_at).is_ok());
}

#[test]
fn retry_after_holds_for_rates_that_do_not_divide_a_second() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(limit(1, 3.0), t0);
    assert!(bucket.try_acquire(t0).is_ok());
    let retry_after = bucket.try_acquire(t0).expect_err("empty bucket");
    assert_eq!(retry_after, bucket.limit().refill_interval());
    assert!(bucket.try_acquire(t0 + retry_after).is_ok());
}

#[test]
fn peek_answers_like_try_acquire_but_takes_nothing() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(limit(2, 1.0), t0);
    for _ in 0..10 {
        assert_eq!(bucket.peek(t0), Ok(()));
    }
    assert_eq!(bucket.available(t0), 2);
    assert_eq!(drain(&mut bucket, t0), 2);
    assert_eq!(bucket.peek(t0), Err(SECOND));
}

#[test]
fn huge_elapsed_time_does_not_overflow() {
    let t0 = Instant::now();
    let mut bucket = TokenBucket::new(limit(u32::MAX, 1e9), t0);
    assert!(bucket.try_acquire(t0).is_ok());
    let century = t0 + Duration::from_secs(100 * 365 * 24 * 3600);
    assert!(bucket.is_full(century));
    assert_eq!(bucket.available(century), u32::MAX);
    assert!(bucket.try_acquire(century).is_ok());
}

#[test]
fn absurd_limit_saturates_instead_of_overflowing() {
    let t0 = Instant::now();
    let limit = RateLimit::new(u32::MAX, Duration::MAX).expect("valid, if absurd");
    let mut bucket = TokenBucket::new(limit, t0);
    // Full credit saturates at Duration::MAX, which still buys one token.
    assert!(bucket.try_acquire(t0).is_ok());
    assert!(bucket.try_acquire(t0).is_err());
    assert!(
        bucket
            .try_acquire(t0 + Duration::from_secs(1 << 40))
            .is_err()
    );
}

#[test]
fn an_earlier_instant_counts_as_no_time_passing() {
    let t0 = Instant::now();
    let t1 = t0 + SECOND;
    let mut bucket = TokenBucket::new(limit(1, 1.0), t0);
    assert!(bucket.try_acquire(t1).is_ok());
    // A racing caller with an older instant neither refills nor rewinds the bucket.
    assert_eq!(bucket.try_acquire(t0), Err(SECOND));
    assert!(bucket.try_acquire(t1 + SECOND).is_ok());
}

#[test]
fn fractional_rate_means_one_token_per_several_seconds() {
    let limit = limit(1, 0.5);
    assert_eq!(limit.refill_interval(), 2 * SECOND);
}

#[test]
fn zero_capacity_is_refused() {
    let err = RateLimit::per_second(0, 1.0).expect_err("zero capacity");
    assert!(matches!(
        &err,
        PolicyError::InvalidRateLimit { field, .. } if field == "capacity"
    ));
}

#[test]
fn zero_negative_and_non_finite_rates_are_refused() {
    for rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = RateLimit::per_second(1, rate).expect_err("bad rate");
        assert!(
            matches!(&err, PolicyError::InvalidRateLimit { field, .. } if field == "per_second"),
            "{rate}: {err:?}"
        );
    }
    assert!(RateLimit::new(1, Duration::ZERO).is_err());
}

#[test]
fn rates_too_fast_or_too_slow_for_a_duration_are_refused() {
    let fast = RateLimit::per_second(1, 1e10).expect_err("interval rounds to zero");
    assert!(fast.to_string().contains("too large"), "{fast}");
    let slow = RateLimit::per_second(1, 1e-30).expect_err("interval overflows");
    assert!(slow.to_string().contains("too small"), "{slow}");
}
