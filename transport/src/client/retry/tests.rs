use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

use super::*;

fn http(status: StatusCode, retry_after_secs: Option<u32>) -> ClientError {
    ClientError::Http {
        status,
        url: "http://127.0.0.1:1/".to_owned(),
        error: None,
        message: String::new(),
        retry_after_secs,
    }
}

#[test]
fn busy_statuses_are_retried_and_others_are_not() {
    let policy = RetryPolicy::new(3);
    assert!(
        policy
            .delay(1, &http(StatusCode::TOO_MANY_REQUESTS, None))
            .is_some()
    );
    assert!(
        policy
            .delay(1, &http(StatusCode::SERVICE_UNAVAILABLE, None))
            .is_some()
    );
    assert!(
        policy
            .delay(1, &http(StatusCode::BAD_REQUEST, None))
            .is_none()
    );
    assert!(
        policy
            .delay(1, &http(StatusCode::INTERNAL_SERVER_ERROR, None))
            .is_none()
    );
    assert!(
        policy
            .delay(1, &ClientError::Protocol("bad".to_owned()))
            .is_none()
    );
}

#[test]
fn tries_stop_at_the_policy_count() {
    let policy = RetryPolicy::new(3);
    let busy = http(StatusCode::SERVICE_UNAVAILABLE, None);
    assert!(policy.delay(2, &busy).is_some());
    assert!(policy.delay(3, &busy).is_none());
    assert!(RetryPolicy::none().delay(1, &busy).is_none());
}

#[test]
fn retry_after_is_obeyed_up_to_the_cap() {
    let policy = RetryPolicy::new(3).max_delay(Duration::from_secs(2));
    let soon = http(StatusCode::TOO_MANY_REQUESTS, Some(1));
    assert_eq!(policy.delay(1, &soon), Some(Duration::from_secs(1)));
    let late = http(StatusCode::TOO_MANY_REQUESTS, Some(60));
    assert_eq!(policy.delay(1, &late), None);
}

#[test]
fn backoff_grows_and_stays_under_the_cap() {
    let policy = RetryPolicy::new(10)
        .base_delay(Duration::from_millis(100))
        .max_delay(Duration::from_millis(800));
    for attempt in 1..10 {
        for _ in 0..50 {
            let wait = policy.backoff(attempt);
            let bound = Duration::from_millis(100 << (attempt - 1).min(3));
            assert!(wait <= bound, "attempt {attempt}: {wait:?} > {bound:?}");
            assert!(wait >= Duration::from_millis(25), "{wait:?}");
        }
    }
}

#[test]
fn retry_after_reads_seconds_and_dates() {
    let mut headers = HeaderMap::new();
    headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
    assert_eq!(retry_after(&headers), Some(7));
    let later = SystemTime::now() + Duration::from_secs(30);
    let date = httpdate::fmt_http_date(later);
    headers.insert(RETRY_AFTER, HeaderValue::from_str(&date).expect("a header"));
    let wait = retry_after(&headers).expect("a date");
    assert!((28..=31).contains(&wait), "{wait}");
    headers.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
    assert_eq!(retry_after(&headers), None);
}
