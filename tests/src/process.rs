//! `agentyard serve` as a child process, for the suites that drive the real program
//! from outside (the official SDKs' interop, the browser test).

use std::fs::File;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The workspace root: scripts and the setups' installs are found from it.
#[must_use]
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

/// `$CARGO_TARGET_DIR` (default `target/`), a relative one taken from the workspace
/// root, as the setup scripts do.
#[must_use]
pub fn target_dir() -> PathBuf {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| "target".into(), PathBuf::from);
    // `join` keeps an absolute path as it is.
    root().join(target)
}

/// The `agentyard` binary `cargo test --workspace` built beside the running test
/// binary (`target/debug/deps/interop-…` → `target/debug/agentyard`). Another
/// package's binary has no `CARGO_BIN_EXE_…`, and building it from a test would fight
/// cargo for the target directory's lock.
///
/// # Errors
/// Why there is no binary to run, and how to build it.
pub fn binary() -> Result<PathBuf, String> {
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

/// A running `agentyard serve`, killed when dropped so no server outlives a test.
#[derive(Debug)]
pub struct ServeProcess {
    child: Child,
    /// The base URL the server printed first (`http://127.0.0.1:PORT`).
    pub base: String,
    log: PathBuf,
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ServeProcess {
    /// Starts `bin` on a free loopback port with `config` (written to
    /// `{dir}/{name}.toml`), its data in `{dir}/{name}-data` and its log in
    /// `{dir}/{name}.log`, and reads the base URL from the first line it prints.
    ///
    /// # Panics
    /// When the program cannot start or prints no banner (with its log's end).
    #[must_use]
    pub fn start(bin: &Path, dir: &Path, name: &str, config: &str) -> Self {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, config).expect("write the config");
        let log = dir.join(format!("{name}.log"));
        let mut child = Command::new(bin)
            .args(["serve", "--bind", "127.0.0.1:0", "--config"])
            .arg(&path)
            .arg("--data-dir")
            .arg(dir.join(format!("{name}-data")))
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
        // Keep reading what it prints: with the pipe closed, the server's next
        // `println!` would fail (it panics on a broken pipe).
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
    #[must_use]
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}
