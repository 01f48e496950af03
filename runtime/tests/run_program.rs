//! `agentyard run` as a user runs it: the example workflows run on the built-in agents
//! and print their output; a failing run exits non-zero naming the node; a bad file
//! is refused naming the node; an input request reads its answer from stdin.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agentyard");

fn example(name: &str) -> String {
    format!(
        "{}/../examples/workflows/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(BIN)
        .arg("run")
        .args(args)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the program starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write");
    child.wait_with_output().expect("it exits")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_review_example_runs_and_prints_its_output_artifacts() {
    for extra in [&[][..], &["--pure-a2a"][..]] {
        let mut args = vec![example("review.toml")];
        args.extend(["--input".to_owned(), "actors".to_owned()]);
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run(&args, "");
        let stdout = text(&output.stdout);
        assert!(
            output.status.success(),
            "{stdout}\n{}",
            text(&output.stderr)
        );
        // Not a terminal: one plain line per change of a node's state.
        assert!(stdout.contains("draft  working"), "{stdout}");
        assert!(
            stdout.contains("draft  completed      1 artifact(s)"),
            "{stdout}"
        );
        assert!(
            !stdout.contains('\x1b'),
            "no escape codes off a terminal: {stdout}"
        );
        assert!(
            stdout.contains("== shout ==\nA SHORT NOTE ON ACTORS: THEY ARE CHEAP, ISOLATED AND SUPERVISED.\n== count ==\n{\"words\":11}\n"),
            "{stdout}"
        );
    }
}

#[test]
fn an_input_request_is_answered_from_stdin() {
    let output = run(&[&example("greet.toml"), "--input", "hello"], "Ada\n");
    let stdout = text(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        text(&output.stderr)
    );
    assert!(stdout.contains("name asks: What is your name?"), "{stdout}");
    assert!(stdout.contains("hello, Nice to meet you, Ada."), "{stdout}");
}

#[test]
fn a_failing_run_exits_non_zero_naming_the_node() {
    let dir = std::env::temp_dir().join(format!("agentyard-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    // A node that fails on its own (its template names a part the input lacks) fails
    // the run, naming it, while the independent branch finishes.
    let failing = dir.join("failing.json");
    std::fs::write(
        &failing,
        r#"{"name": "failing", "nodes": [
            {"id": "in", "kind": "input"},
            {"id": "q", "kind": "agent", "agent": "echo", "prompt": "{{in.parts[3]}}"},
            {"id": "ok", "kind": "agent", "agent": "echo", "prompt": "{{in}}"},
            {"id": "out", "kind": "output", "from": ["q", "ok"]}]}"#,
    )
    .expect("write");
    let output = run(&[failing.to_str().expect("utf-8"), "--input", "x"], "");
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("failed at node `q`") && stderr.contains("no part 3"),
        "{stderr}"
    );
    assert!(stdout.contains("ok   completed"), "{stdout}");

    // `ask` asks; with stdin closed nobody answers, and the run ends unsuccessfully.
    // (Whether the echo branch finished first is a race the run's cancel may win, so
    // only the outcome is checked here.)
    let unanswered = dir.join("unanswered.json");
    std::fs::write(
        &unanswered,
        r#"{"name": "unanswered", "nodes": [
            {"id": "in", "kind": "input"},
            {"id": "q", "kind": "agent", "agent": "ask", "prompt": "{{in}}"},
            {"id": "ok", "kind": "agent", "agent": "echo", "prompt": "{{in}}"},
            {"id": "out", "kind": "output", "from": ["q", "ok"]}]}"#,
    )
    .expect("write");
    let output = run(&[unanswered.to_str().expect("utf-8"), "--input", "x"], "");
    assert!(
        !output.status.success(),
        "{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("workflow `unanswered` was canceled")
            || stderr.contains("failed at node `q`"),
        "{stderr}"
    );

    let unknown = dir.join("unknown.toml");
    std::fs::write(
        &unknown,
        "name = \"u\"\n[[nodes]]\nid = \"in\"\nkind = \"input\"\n[[nodes]]\nid = \"x\"\nkind = \"agent\"\nagent = \"nobody\"\nprompt = \"hi\"\n[[nodes]]\nid = \"out\"\nkind = \"output\"\nfrom = [\"x\"]\n",
    )
    .expect("write");
    let output = run(&[unknown.to_str().expect("utf-8"), "--input", "x"], "");
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("node `x`") && stderr.contains("unknown agent `nobody`"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
