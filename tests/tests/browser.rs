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
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The key of the console's operator in the test server.
const API_KEY: &str = "browser-key-7d2e";
/// How long the script may run before it is killed (it takes ~5 s).
const SCRIPT_DEADLINE: Duration = Duration::from_secs(90);

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

/// `$CARGO_TARGET_DIR` (default `target/`), from the workspace root.
fn target_dir() -> PathBuf {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| "target".into(), PathBuf::from);
    root().join(target)
}

/// The `agentyard` binary `cargo test --workspace` built beside this test binary.
fn binary() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("no current exe: {e}"))?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("the test binary is not in target/<profile>/deps")?;
    let bin = profile_dir.join(format!("agentyard{}", std::env::consts::EXE_SUFFIX));
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "{} is not built (run `cargo test --workspace`, or `cargo build -p agentyard` first)",
            bin.display()
        ))
    }
}

/// Says why the test cannot run: a failure when CI requires it, else a skip.
fn unavailable(why: &str) {
    let required = std::env::var("AGENTYARD_BROWSER").is_ok_and(|v| v == "require");
    let message = format!("browser: {why}; set it up with `tests/browser/setup.sh`");
    assert!(!required, "{message} [AGENTYARD_BROWSER=require]");
    // Past the harness's capture: a skip must be seen in a plain `cargo test` run.
    let _ = writeln!(std::io::stderr(), "skipped: {message}");
}

/// A running `agentyard serve`, killed when dropped so no server outlives the test.
struct Server {
    child: Child,
    base: String,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts the binary on a free loopback port with `config` and a data directory
    /// in `dir`, and reads the base URL from the first line it prints.
    fn start(bin: &Path, dir: &Path, config: &str) -> Self {
        let path = dir.join("console.toml");
        std::fs::write(&path, config).expect("write the config");
        let log = dir.join("server.log");
        let mut child = Command::new(bin)
            .args(["serve", "--bind", "127.0.0.1:0", "--config"])
            .arg(&path)
            .arg("--data-dir")
            .arg(dir.join("data"))
            .stdout(Stdio::piped())
            .stderr(File::create(&log).expect("create the server log"))
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut server = Self {
            child,
            base: String::new(),
            log,
        };
        let mut stdout = BufReader::new(stdout);
        let mut first = String::new();
        let read = stdout.read_line(&mut first);
        // Keep reading what it prints: with the pipe closed its next line would fail.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        assert!(
            read.is_ok_and(|n| n > 0),
            "`agentyard serve` printed nothing: {}",
            server.log_tail()
        );
        server.base = first.trim_end().rsplit(' ').next().unwrap_or("").to_owned();
        assert!(
            server.base.starts_with("http://127.0.0.1:"),
            "unexpected banner: {first}"
        );
        server
    }

    /// The end of the server's log, to show beside a failure.
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
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
    let server = Server::start(
        &bin,
        dir.path(),
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
