//! Servers in child processes of this program, for the suites whose server must not
//! share a process (its allocator, its tokio workers, its memory figures) with the
//! load generator: the program starts itself again with a hidden subcommand, which
//! prints one line saying where it listens and serves until its standard input
//! closes.

use std::io::{BufRead as _, BufReader, Read as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use crate::error::{Error, Result};

/// A server running in a child process (see the [module](self)).
pub(crate) struct ChildServer {
    child: Child,
    /// Closing it tells the child to stop.
    stdin: Option<ChildStdin>,
    /// The first line the child printed: where it listens.
    announced: String,
}

impl ChildServer {
    /// Starts this program with `subcommand` and reads the line it prints once it
    /// listens. `suite` names the measurement in errors.
    ///
    /// # Errors
    /// The child cannot be started, or ends before printing its line.
    pub(crate) fn start(subcommand: &str, suite: &str) -> Result<Self> {
        let exe = std::env::current_exe().map_err(|source| Error::Io {
            what: format!("finding this program's path to start its {subcommand} child"),
            source,
        })?;
        let mut child = Command::new(&exe)
            .arg(subcommand)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|source| Error::Io {
                what: format!("starting {} {subcommand}", exe.display()),
                source,
            })?;
        let stdin = child.stdin.take();
        let mut line = String::new();
        if let Some(stdout) = child.stdout.take() {
            let _ = BufReader::new(stdout).read_line(&mut line);
        }
        let announced = line.trim().to_owned();
        if announced.is_empty() {
            let _ = child.kill();
            let status = child.wait();
            return Err(Error::Child {
                what: suite.to_owned(),
                detail: format!("{subcommand} ended ({status:?}) before saying where it listens"),
            });
        }
        Ok(Self {
            child,
            stdin,
            announced,
        })
    }

    /// What the child printed when it began to listen (an address, a URL).
    pub(crate) fn announced(&self) -> &str {
        &self.announced
    }

    /// The child's process id, for reading its memory and CPU time.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the child at once (for a child that printed something unusable).
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Closes the child's standard input (it shuts down as on Ctrl-C) and waits for
    /// it; kills it if it has not stopped within 20 s.
    pub(crate) async fn stop(mut self) {
        drop(self.stdin.take());
        let _ = tokio::task::spawn_blocking(move || {
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            while std::time::Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        })
        .await;
    }
}

/// In the child: waits until the parent closes our standard input, its signal to
/// stop (end of input and a read error both mean stop).
pub(crate) async fn until_stdin_closes() {
    let _ = tokio::task::spawn_blocking(|| {
        let mut sink = Vec::new();
        std::io::stdin().read_to_end(&mut sink)
    })
    .await;
}
