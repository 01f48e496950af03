//! The live console in a real browser: headless Chromium, driven by Playwright
//! (`playwright-core` from npm, no browser download), opens `/ui` on the built
//! `agentyard serve`, is refused a wrong key and signs in with the right one, sees the
//! agents, sends messages and watches the replies stream in, opens a task to its
//! history and timeline, sees a workflow run drawn with its node states, checks the
//! charts, and saves a screenshot. The cases live in `tests/browser/console.mjs`;
//! this harness starts the server, runs the script and fails with its output and the
//! server's log.
//!
//! `tests/browser/setup.sh` installs what it needs (Debian's `chromium` with apt-get
//! when missing, `playwright-core` with npm ci); `.ci/run` calls it. Without them the
//! test says it was skipped and why, unless `AGENTYARD_BROWSER=require` (set by
//! `.ci/run`), where a missing setup fails it: CI never skips silently.
//!
//! The screenshot goes to `$CARGO_TARGET_DIR/browser/console.png`; with
//! `AGENTYARD_UPDATE_SCREENSHOT=1` also to `docs/console.png`, the one the docs show
//! (a run does not rewrite a committed file unless asked).
//!
//! A test binary of its own, as the interop suite is: cargo runs test binaries one
//! after the other, so the browser does not compete for the CPU with the e2e tests.

use std::fs::File;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentyard_tests::process::{ServeProcess, binary, root, target_dir};

/// The key of the console's operator in the test server.
const API_KEY: &str = "browser-key-7d2e";
/// How long the script may run before it is killed (it takes ~5 s).
const SCRIPT_DEADLINE: Duration = Duration::from_secs(90);

/// Says why the test cannot run: a failure when CI requires it, else a skip.
fn unavailable(why: &str) {
    let required = std::env::var("AGENTYARD_BROWSER").is_ok_and(|v| v == "require");
    let message = format!("browser: {why}; set it up with `tests/browser/setup.sh`");
    assert!(!required, "{message} [AGENTYARD_BROWSER=require]");
    // Past the harness's capture: a skip must be seen in a plain `cargo test` run.
    let _ = writeln!(std::io::stderr(), "skipped: {message}");
}

/// Whether `program --version` runs.
fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn the_console_signs_in_sends_a_message_and_shows_the_reply_streaming() {
    let scripts = root().join("tests/browser");
    if !scripts
        .join("node_modules/playwright-core/package.json")
        .is_file()
    {
        return unavailable(&format!(
            "no playwright-core in {}/node_modules",
            scripts.display()
        ));
    }
    if !runs("node") {
        return unavailable("no `node` on PATH");
    }
    let chromium = std::env::var_os("AGENTYARD_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    if !chromium.is_file() {
        return unavailable(&format!("no browser at {}", chromium.display()));
    }
    let bin = match binary() {
        Ok(bin) => bin,
        Err(why) => return unavailable(&why),
    };

    let dir = tempfile::tempdir().expect("a scratch directory");
    let review = root().join("examples/workflows/review.toml");
    let server = ServeProcess::start(
        &bin,
        dir.path(),
        "console",
        &format!(
            "[[auth.api_keys]]\nname = \"operator\"\nkey = \"{API_KEY}\"\n\n\
             [console]\noperators = [\"operator\"]\n\n\
             [workflows]\nfiles = [{review:?}]\n"
        ),
    );
    let shots = target_dir().join("browser");
    std::fs::create_dir_all(&shots).expect("create the screenshot directory");
    let screenshot = shots.join("console.png");
    let out_path = dir.path().join("browser.out");
    let out = File::create(&out_path).expect("create the output file");
    let mut child = Command::new("node")
        .arg(scripts.join("console.mjs"))
        .current_dir(&scripts)
        .env("AGENTYARD_URL", &server.base)
        .env("AGENTYARD_API_KEY", API_KEY)
        .env("CHROMIUM", &chromium)
        .env("SCREENSHOT", &screenshot)
        .stdin(Stdio::null())
        .stdout(out.try_clone().expect("clone the output file"))
        .stderr(out)
        .spawn()
        .expect("node starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the script") {
            break Some(status);
        }
        if started.elapsed() > SCRIPT_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = std::fs::read_to_string(&out_path).unwrap_or_default();
    match status {
        Some(status) if status.success() => {
            // Shown with --nocapture: which steps ran and how long each took.
            println!("{output}");
            assert!(
                screenshot.is_file(),
                "no screenshot at {}",
                screenshot.display()
            );
            if std::env::var("AGENTYARD_UPDATE_SCREENSHOT").is_ok_and(|v| v == "1") {
                std::fs::copy(&screenshot, root().join("docs/console.png"))
                    .expect("copy the screenshot into docs/");
            }
        }
        _ => panic!(
            "the browser test failed ({}):\n{output}\n--- server log ---\n{}",
            status.map_or_else(
                || format!("killed after {SCRIPT_DEADLINE:?}"),
                |s| s.to_string()
            ),
            server.log_tail(),
        ),
    }
}
