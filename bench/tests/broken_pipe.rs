//! `agentyard-bench … | head`: a reader that stops early must not make the program
//! panic (exit 101); it finishes quietly and still writes its JSON file.

use std::path::PathBuf;
use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_is_not_a_panic() {
    let json = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-broken-pipe.json");
    let _ = std::fs::remove_file(&json);
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentyard-bench"))
        .args(["supervisor", "--quick", "--run-secs", "0.05"])
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the benchmark program starts");
    // The reader goes away before the program prints anything, as `head` does once it
    // has its lines.
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("it ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "exit {}\n{stderr}", output.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(json.exists(), "the JSON file is still written");
}
