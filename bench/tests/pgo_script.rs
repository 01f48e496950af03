//! `bench/pgo.sh`'s arguments: a profile-guided build takes a quarter of an hour, too
//! long for CI, so what CI checks is the part that runs before any build: usage, and
//! the refusal of what the script cannot do, each with a message naming what was wrong.

use std::path::Path;
use std::process::{Command, Output};

/// Runs the script with `args` and a `PATH` of the system's directories only, where
/// rustup's `cargo` and `rustc` are not: were a refusal to stop failing, the script
/// would fail at once on `rustc` instead of starting a quarter-hour build.
fn pgo(args: &[&str]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("pgo.sh");
    Command::new("bash")
        .arg(script)
        .args(args)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("bash runs the script")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The script refused `args` with a failing status (`code`, when the script picks it
/// rather than the shell) and a message holding `says`.
fn assert_refused(args: &[&str], code: Option<i32>, says: &str) {
    let output = pgo(args);
    let stderr = stderr(&output);
    assert!(!output.status.success(), "{args:?}: {stderr}");
    if code.is_some() {
        assert_eq!(output.status.code(), code, "{args:?}: {stderr}");
    }
    assert!(stderr.contains(says), "{args:?}: {stderr}");
}

#[test]
fn help_prints_the_usage() {
    let output = pgo(&["--help"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout.contains("usage: bench/pgo.sh [--profile release|dist]"),
        "{stdout}"
    );
    assert!(stdout.contains("target/pgo/use/"), "{stdout}");
}

#[test]
fn a_profile_other_than_release_or_dist_is_refused_by_name() {
    assert_refused(
        &["--profile", "debug"],
        Some(2),
        "--profile is release or dist, not 'debug'",
    );
}

#[test]
fn an_unknown_argument_is_refused_by_name() {
    assert_refused(&["--fast"], Some(2), "unknown argument '--fast'");
}

#[test]
fn a_flag_without_its_value_is_refused() {
    // `${2:?message}`: the shell prints the message and picks the status.
    assert_refused(&["--profile"], None, "--profile needs release or dist");
    assert_refused(
        &["--train"],
        None,
        "--train needs the arguments of the training run",
    );
}
