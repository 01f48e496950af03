//! `--only`: a run that measures a few cases measures those and no others, leaves
//! the targets it cannot decide undecided, and refuses a part that names no case.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

#[test]
fn only_the_named_cases_are_measured() {
    let json = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-only.json");
    let _ = std::fs::remove_file(&json);
    let output = Command::new(env!("CARGO_BIN_EXE_agentyard-bench"))
        .args([
            "supervisor",
            "--quick",
            "--run-secs",
            "0.05",
            "--only",
            "request_reply.1",
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .expect("the benchmark program starts");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "exit {}\n{stderr}", output.status);

    let text = std::fs::read_to_string(&json).expect("the JSON file was written");
    let document: Value = serde_json::from_str(&text).expect("the file is JSON");
    let mut ids: Vec<&str> = document["rows"]
        .as_array()
        .expect("a list of rows")
        .iter()
        .map(|row| row["id"].as_str().expect("an id"))
        .collect();
    ids.sort_unstable();
    // The CPU row is there only where the run outlasted the CPU clock's tick (10 ms):
    // these runs are short.
    let (cpu, ids): (Vec<&str>, Vec<&str>) = ids.into_iter().partition(|id| id.ends_with(".cpu"));
    assert!(
        cpu.iter().all(|id| *id == "supervisor.request_reply.1.cpu"),
        "{cpu:?}"
    );
    // Not the 64 or 1024 senders' rows, nor fire-and-forget.
    assert_eq!(
        ids,
        [
            "supervisor.request_reply.1.p50",
            "supervisor.request_reply.1.p99",
            "supervisor.request_reply.1.throughput",
        ]
    );
    // The 64-sender target's row was left out: not decided, not missed.
    let target = document["targets"]
        .as_array()
        .expect("a list of targets")
        .iter()
        .find(|t| {
            t["target"]
                .as_str()
                .is_some_and(|t| t.contains("64 senders"))
        })
        .expect("the supervisor's target");
    assert_eq!(target["met"], Value::Null, "{target}");
}

/// What the program says on stderr when `args` make it refuse to run.
fn refusal(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_agentyard-bench"))
        .args(args)
        .output()
        .expect("the benchmark program starts");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{args:?} ran: {stderr}");
    stderr
}

#[test]
fn a_part_that_names_no_case_is_refused_with_the_cases() {
    let stderr = refusal(&["supervisor", "--quick", "--only", "request_reply.2"]);
    assert!(
        stderr.contains("names no case of the supervisor suite")
            && stderr.contains("supervisor.request_reply.64"),
        "{stderr}"
    );
    let stderr = refusal(&["sessions", "--quick", "--only", "idle"]);
    assert!(stderr.contains("--only narrows"), "{stderr}");
}
