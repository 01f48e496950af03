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
    let output = pgo(&["--profile", "debug"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("--profile is release or dist, not 'debug'"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_unknown_argument_is_refused_by_name() {
    let output = pgo(&["--fast"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("unknown argument '--fast'"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_flag_without_its_value_is_refused() {
    for (flag, says) in [
        ("--profile", "--profile needs release or dist"),
        ("--train", "--train needs the arguments of the training run"),
    ] {
        let output = pgo(&[flag]);
        assert!(!output.status.success(), "{flag}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(says),
            "{flag}: {}",
            stderr(&output)
        );
    }
}
