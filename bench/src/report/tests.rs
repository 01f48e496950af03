use super::*;

fn throughput_row(runtime: &[f64], floor: &[f64]) -> Row {
    Figure::new(
        "supervisor",
        "request_reply.64.throughput",
        "request/reply, 64 senders",
        Unit::PerSecond,
        Better::Higher,
    )
    .against("ractor call")
    .row(runtime, floor)
    .expect("runs were given")
}

#[test]
fn a_row_pairs_each_run_with_its_floor() {
    let row = throughput_row(
        &[50_000.0, 40_000.0, 60_000.0],
        &[100_000.0, 100_000.0, 100_000.0],
    );
    assert_eq!(row.id, "supervisor.request_reply.64.throughput");
    assert_eq!(row.runtime.median, 50_000.0);
    assert_eq!(row.ratio.median, 0.5);
    assert_eq!(row.ratio.min, 0.4);
    assert_eq!(row.ratio.max, 0.6);
}

#[test]
fn a_row_without_runs_is_an_error() {
    let figure = Figure::new("sessions", "idle.bytes", "idle", Unit::Bytes, Better::Lower);
    assert!(figure.row(&[], &[]).is_err());
}

#[test]
fn the_table_shows_both_figures_in_one_unit_and_the_ratio() {
    let report = Report {
        rows: vec![throughput_row(&[50_000.0], &[1_000_000.0])],
        ..Report::default()
    };
    let text = report.render("header");
    assert!(text.starts_with("header\n"), "{text}");
    let line = text.lines().nth(2).expect("a row under the column names");
    assert!(line.contains("M/s ↑"), "{line}");
    assert!(line.contains("0.050 [0.050–0.050]"), "{line}");
    assert!(line.contains("1.00 [1.00–1.00]"), "{line}");
    assert!(line.contains("ractor call"), "{line}");
}

#[test]
fn targets_compare_the_median_ratio_and_the_memory_difference() {
    let idle = Figure::new("sessions", "idle.bytes", "idle", Unit::Bytes, Better::Lower)
        .row(&[3000.0], &[500.0])
        .expect("one run");
    let mut report = Report {
        rows: vec![throughput_row(&[60.0], &[100.0]), idle],
        ..Report::default()
    };
    report.evaluate_targets();
    assert_eq!(report.targets[0].met, Some(true));
    assert_eq!(report.targets[1].met, Some(false));
    assert!(report.targets[1].measured.starts_with("2500 B more"));
}

#[test]
fn targets_of_suites_not_run_are_marked_so() {
    let mut report = Report::default();
    report.evaluate_targets();
    assert!(report.targets.iter().all(|t| t.met.is_none()));
}

#[test]
fn ratios_print_with_three_significant_figures() {
    assert_eq!(fmt_ratio(0.2144), "0.214");
    assert_eq!(fmt_ratio(1.5), "1.50");
    assert_eq!(fmt_ratio(12.34), "12.3");
    assert_eq!(fmt_ratio(f64::NAN), "n/a");
}
