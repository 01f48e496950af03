//! Runs the benchmark program in its quick mode, as a user would, and checks that every
//! suite printed its rows and wrote them as JSON. No figure is compared with a time:
//! only that each was measured, beside a floor, and that the correctness checks held.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

#[test]
fn the_quick_run_measures_every_suite_and_writes_the_same_rows_as_json() {
    let json = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-quick.json");
    let _ = std::fs::remove_file(&json);
    let output = Command::new(env!("CARGO_BIN_EXE_agentyard-bench"))
        .args([
            "all",
            "--quick",
            "--sessions",
            "500",
            "--overload-secs",
            "0.3",
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .expect("the benchmark program starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "exit {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );

    let text = std::fs::read_to_string(&json).expect("the JSON file was written");
    let document: Value = serde_json::from_str(&text).expect("the file is JSON");
    let rows = document["rows"].as_array().expect("a list of rows");
    for id in [
        "supervisor.request_reply.1.throughput",
        "supervisor.request_reply.64.p99",
        "supervisor.request_reply.1024.p50",
        "supervisor.fire_and_forget.throughput",
        "sessions.spawn_deliver.secs",
        "sessions.idle.bytes",
        "sessions.retained.bytes",
        "http.send.message.16.throughput",
        "http.send.task.64.p50",
        "http.stream.3.1.p99",
        "observability.metrics.16.throughput",
        "observability.metrics.64.throughput",
        "overload.goodput",
        "overload.reject.p99",
        "overload.peak_rss",
        "sustained.throughput",
        "sustained.rss",
        "sustained.peak_rss",
    ] {
        let row = rows
            .iter()
            .find(|row| row["id"] == id)
            .unwrap_or_else(|| panic!("no row `{id}` in {text}"));
        for side in ["runtime", "floor"] {
            let median = row[side]["median"].as_f64();
            assert!(
                median.is_some_and(f64::is_finite),
                "`{id}` has no {side} figure: {row}"
            );
        }
        let case = row["case"].as_str().expect("a case");
        assert!(stdout.contains(case), "the table lacks `{case}`:\n{stdout}");
    }
    for check in document["checks"].as_array().expect("a list of checks") {
        assert_eq!(check["ok"], true, "a check failed: {check}");
    }
    // The store suite's ceiling for stores that flush before they answer, from this
    // disk's flush timed in the same run.
    let notes = document["notes"].as_array().expect("a list of notes");
    assert!(
        notes.iter().filter_map(Value::as_str).any(|note| {
            note.starts_with("store: this disk flushes") && note.contains(" sends/s with 16 ")
        }),
        "no flush note from the store suite: {notes:?}"
    );
    assert_eq!(document["context"]["options"]["quick"], true);
    assert!(
        document["targets"]
            .as_array()
            .is_some_and(|targets| targets.len() >= 5)
    );
}
