//! The `disk` subcommand through the real binary: its flags reach the probe and the
//! table names every mode and thread count asked for.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_disk_probe_prints_one_row_per_mode_and_thread_count() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench-disk");
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let output = Command::new(env!("CARGO_BIN_EXE_agentyard-bench"))
        .args(["disk", "--secs", "0.05", "--size", "1000"])
        .args(["--threads", "1,2", "--modes", "overwrite,dsync"])
        .arg("--dir")
        .arg(&dir)
        .output()
        .expect("the benchmark runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("1000 bytes a write"), "{stdout}");
    for row in [
        "| overwrite + fdatasync | 1 | 1000 |",
        "| overwrite + fdatasync | 2 | 1000 |",
        "| O_DSYNC | 1 | 1000 |",
        "| O_DSYNC | 2 | 1000 |",
    ] {
        assert_eq!(stdout.matches(row).count(), 1, "{row} in\n{stdout}");
    }
    assert!(
        !stdout.contains("grow"),
        "only the modes asked for: {stdout}"
    );
    assert_eq!(
        std::fs::read_dir(&dir)
            .expect("the scratch directory")
            .count(),
        0,
        "the probe's file is removed"
    );
}

#[test]
fn a_length_of_time_that_is_not_one_is_refused() {
    // Negative, none at all, and past what a `Duration` holds (which would panic if
    // let through): each refused with the flag and the value named.
    for secs in ["-1", "0", "1e30"] {
        let output = Command::new(env!("CARGO_BIN_EXE_agentyard-bench"))
            .args(["disk", &format!("--secs={secs}")])
            .output()
            .expect("the benchmark runs");
        assert!(!output.status.success(), "--secs={secs}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("--secs must be a positive number of seconds, not"),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
