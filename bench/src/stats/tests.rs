use std::time::Duration;

use super::*;

#[test]
fn median_of_an_odd_count_is_the_middle_value() {
    let summary = Summary::of(&[5.0, 1.0, 3.0]).expect("three values");
    assert_eq!(summary.median, 3.0);
    assert_eq!(summary.min, 1.0);
    assert_eq!(summary.max, 5.0);
    assert_eq!(summary.runs, 3);
}

#[test]
fn median_of_an_even_count_is_the_mean_of_the_middle_two() {
    let summary = Summary::of(&[4.0, 1.0, 3.0, 10.0]).expect("four values");
    assert_eq!(summary.median, 3.5);
    assert_eq!(summary.max, 10.0);
}

#[test]
fn nothing_to_summarize_gives_none() {
    assert_eq!(Summary::of(&[]), None);
}

#[test]
fn ratios_are_taken_pair_by_pair() {
    let ratios = pair_ratios(&[10.0, 30.0], &[20.0, 30.0]);
    assert_eq!(ratios, vec![0.5, 1.0]);
    let summary = Summary::of(&ratios).expect("two ratios");
    assert_eq!(summary.median, 0.75);
}

#[test]
fn a_zero_floor_gives_a_ratio_that_is_not_a_number() {
    assert!(pair_ratios(&[1.0], &[0.0])[0].is_nan());
}

#[test]
fn percentiles_come_from_the_recorded_latencies() {
    let mut latencies = Latencies::new();
    for micros in 1..=100 {
        latencies.record(Duration::from_micros(micros));
    }
    assert_eq!(latencies.count(), 100);
    assert_eq!(latencies.quantile_ns(0.5), 50_000.0);
    assert_eq!(latencies.quantile_ns(0.99), 99_000.0);
    assert_eq!(latencies.max_ns(), 100_000.0);
    // Sorting changes nothing but the cost of reading.
    latencies.sort();
    assert_eq!(latencies.quantile_ns(0.5), 50_000.0);
    assert_eq!(latencies.quantile_ns(1.0), 100_000.0);
    assert_eq!(latencies.quantile_ns(0.0), 1_000.0);
}

#[test]
fn merged_latencies_hold_both_runs() {
    let mut a = Latencies::new();
    a.record(Duration::from_millis(1));
    let mut b = Latencies::new();
    b.record(Duration::from_millis(3));
    a.sort();
    a.merge(&b);
    assert_eq!(a.count(), 2);
    assert_eq!(a.max_ns(), 3_000_000.0);
    assert_eq!(a.quantile_ns(0.5), 1_000_000.0);
}

#[test]
fn empty_latencies_read_as_zero() {
    let latencies = Latencies::new();
    assert_eq!(latencies.quantile_ns(0.99), 0.0);
    assert_eq!(latencies.max_ns(), 0.0);
}
