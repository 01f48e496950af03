//! The `agentyard` program as a user runs it: `agentyard serve` starts, prints the card
//! URLs and what it runs with, answers A2A calls, says what it waits for when stopped,
//! exits at once on a second signal; config and log problems are reported by name.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "serve_program/crash.rs"]
mod crash;

const BIN: &str = env!("CARGO_BIN_EXE_agentyard");

/// How long a test waits for something the program does promptly.
const PATIENCE: Duration = Duration::from_secs(20);

/// The running program, killed if a test fails half-way so no server outlives it.
struct Running {
    child: Child,
    base: String,
    banner: Vec<String>,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Waits until stderr contains `text`, and returns all of stderr.
    fn stderr_with(&self, text: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let stderr = self.stderr.lock().expect("lock").clone();
            if stderr.contains(text) {
                return stderr;
            }
            assert!(
                Instant::now() < deadline,
                "stderr never said {text:?}:\n{stderr}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn exit(&mut self, within: Duration) -> ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(exit) = self.child.try_wait().expect("wait") {
                return exit;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not stop:\n{}",
                self.stderr.lock().expect("lock")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The program, started in a scratch directory of this test process: `serve` keeps
/// its tasks in `./agentyard-data` by default, which must not land in the repository.
fn program() -> Command {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("agentyard-serve-cwd-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let mut command = Command::new(BIN);
    command.current_dir(dir);
    command
}

fn temp_config(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("agentyard-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

/// Starts `agentyard serve` on a free loopback port with stdout and stderr piped, and
/// returns it once the banner is printed.
fn start(extra: &[&str], env: &[(&str, &str)]) -> Running {
    let mut command = program();
    command
        .args(["serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("the binary starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let stderr = Arc::new(Mutex::new(String::new()));
    {
        let stderr = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0_u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                stderr
                    .lock()
                    .expect("lock")
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
    }
    let mut lines = BufReader::new(stdout).lines();
    let first = lines
        .next()
        .expect("the program prints its address")
        .expect("utf-8");
    let base = first
        .rsplit(' ')
        .next()
        .expect("the line ends with the URL")
        .to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{first}");
    let banner: Vec<String> = lines
        .by_ref()
        .take_while(|l| l.as_ref().is_ok_and(|l| !l.starts_with("press")))
        .map(|l| l.expect("utf-8"))
        .collect();
    // Keep reading stdout so the program never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Running {
        child,
        base,
        banner,
        stderr,
    }
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}

fn post(url: &str, body: &'static str) -> serde_json::Value {
    block_on(async move {
        reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .body(body)
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .expect("the server answers")
            .json()
            .await
            .expect("a JSON body")
    })
}

/// Opens `message/stream` in a thread of its own and sends each `data:` event (as
/// JSON) down the channel; the channel closes when the stream does.
fn stream(url: String, body: &'static str) -> mpsc::Receiver<serde_json::Value> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        block_on(async move {
            let Ok(mut response) = reqwest::Client::new()
                .post(url)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
            else {
                return;
            };
            let mut pending = String::new();
            while let Ok(Some(chunk)) = response.chunk().await {
                pending.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = pending.find("\n\n") {
                    let event: String = pending.drain(..end + 2).collect();
                    for line in event.lines() {
                        if let Some(data) = line.strip_prefix("data:")
                            && let Ok(json) = serde_json::from_str(data.trim())
                            && tx.send(json).is_err()
                        {
                            return;
                        }
                    }
                }
            }
        });
    });
    rx
}

const LONG_COUNTDOWN: &str = r#"{"jsonrpc":"2.0","id":"s","method":"message/stream","params":{"message":{"kind":"message","role":"user","messageId":"m-long","parts":[{"kind":"text","text":"600"}]}}}"#;

/// Reads the stream until its task runs (its first `working` update).
fn until_working(events: &mpsc::Receiver<serde_json::Value>) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let event = events.recv_timeout(PATIENCE).expect("a stream event");
        if event["result"]["status"]["state"] == "working" {
            return;
        }
        assert!(Instant::now() < deadline, "never working");
    }
}

#[test]
fn serve_answers_a2a_calls_and_stops_on_sigterm() {
    let mut running = start(&[], &[]);
    assert!(
        running.banner.iter().any(|l| l.contains(&format!(
            "{}/agents/echo/.well-known/agent-card.json",
            running.base
        ))),
        "{:?}",
        running.banner
    );
    let reply = post(
        &format!("{}/agents/echo", running.base),
        r#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-1","parts":[{"kind":"text","text":"hello"}]}}}"#,
    );
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["kind"], "message", "{reply}");
    assert_eq!(reply["result"]["parts"][0]["text"], "hello");

    let asked = post(
        &format!("{}/agents/ask", running.base),
        r#"{"jsonrpc":"2.0","id":"a","method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-2","parts":[{"kind":"text","text":"hi"}]}}}"#,
    );
    assert_eq!(
        asked["result"]["status"]["state"], "input-required",
        "{asked}"
    );

    running.signal("TERM");
    let exit = running.exit(PATIENCE);
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn the_banner_says_config_auth_and_where_the_data_lives() {
    let running = start(&[], &[]);
    let banner = running.banner.join("\n");
    assert!(
        banner.contains("config: none (embedded defaults"),
        "{banner}"
    );
    assert!(banner.contains("auth:   off"), "{banner}");
    assert!(
        banner.contains("data:   journal, in ./agentyard-data"),
        "{banner}"
    );
    assert!(
        banner.contains(&format!("console: {}/ui/", running.base)),
        "{banner}"
    );

    let path = temp_config(
        "auth.toml",
        "[[auth.api_keys]]\nname = \"ops\"\nkey = \"secret\"\n",
    );
    let running = start(&["--config", path.to_str().expect("utf-8")], &[]);
    let banner = running.banner.join("\n");
    assert!(
        banner.contains(&format!("config: {}", path.display())),
        "{banner}"
    );
    assert!(banner.contains("auth:   on (1 API key"), "{banner}");
}

#[test]
fn exposing_one_agent_alone_makes_it_the_default() {
    let path = temp_config("countdown.toml", "[agents]\nexposed = [\"countdown\"]\n");
    let running = start(&["--config", path.to_str().expect("utf-8")], &[]);
    let banner = running.banner.join("\n");
    assert!(banner.contains("countdown (default)"), "{banner}");
    assert!(!banner.contains("echo"), "{banner}");
}

#[test]
fn the_first_signal_says_what_it_waits_for_and_fails_what_is_still_running() {
    let path = temp_config("grace.toml", "[server]\nshutdown_grace_secs = 1\n");
    let mut running = start(&["--config", path.to_str().expect("utf-8")], &[]);
    let events = stream(format!("{}/agents/countdown", running.base), LONG_COUNTDOWN);
    until_working(&events);

    running.signal("INT");
    let said = running.stderr_with("shutting down");
    assert!(
        said.contains("up to 1s for 1 running or queued task(s) and 1 open stream(s)"),
        "{said}"
    );
    assert!(said.contains("Ctrl-C again"), "{said}");

    // The stream's last event is the task failing because of the shutdown.
    let mut last = None;
    while let Ok(event) = events.recv_timeout(PATIENCE) {
        last = Some(event);
    }
    let last = last.expect("events after the signal");
    assert_eq!(last["result"]["status"]["state"], "failed", "{last}");
    assert_eq!(last["result"]["final"], true, "{last}");
    assert!(
        last["result"]["status"]["message"]["parts"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("shut down")),
        "{last}"
    );
    let exit = running.exit(PATIENCE);
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn a_second_signal_exits_at_once_and_says_so() {
    let path = temp_config("long-grace.toml", "[server]\nshutdown_grace_secs = 3600\n");
    let mut running = start(&["--config", path.to_str().expect("utf-8")], &[]);
    let events = stream(format!("{}/agents/countdown", running.base), LONG_COUNTDOWN);
    until_working(&events);

    running.signal("TERM");
    running.stderr_with("up to 3600s");
    running.signal("INT");
    let exit = running.exit(PATIENCE);
    assert_eq!(exit.code(), Some(130), "{exit:?}");
    let stderr = running.stderr_with("exiting at once");
    assert!(stderr.contains("second stop signal"), "{stderr}");
}

#[test]
fn piped_logs_carry_no_colour_codes() {
    let mut running = start(&[], &[("RUST_LOG", "debug")]);
    running.stderr_with("HTTP edge listening");
    running.signal("TERM");
    running.exit(PATIENCE);
    let stderr = running.stderr_with("stopped");
    assert!(
        !stderr.contains('\u{1b}'),
        "ANSI codes in piped logs:\n{stderr}"
    );
}

#[test]
fn an_unusable_rust_log_gets_a_warning() {
    for (value, says) in [("info,[[", "malformed"), ("verbose", "`verbose`")] {
        let mut running = start(&[], &[("RUST_LOG", value)]);
        let stderr = running.stderr_with("RUST_LOG");
        assert!(stderr.contains("WARN"), "{stderr}");
        assert!(
            stderr.contains(says) || stderr.contains(&says.replace('`', "")),
            "{value}: {stderr}"
        );
        running.signal("TERM");
        running.exit(PATIENCE);
    }
    // A usable one is taken without a word.
    let mut running = start(&[], &[("RUST_LOG", "agentyard=debug,tower_http=info,warn")]);
    running.signal("TERM");
    running.exit(PATIENCE);
    assert!(!running.stderr.lock().expect("lock").contains("RUST_LOG"));
}

#[test]
fn bind_takes_localhost_and_a_bad_address_names_the_form() {
    let output = program()
        .args(["serve", "--bind", "localhost"])
        .output()
        .expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("HOST:PORT"), "{stderr}");

    let mut child = program()
        .args(["serve", "--bind", "localhost:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("runs");
    let stdout = child.stdout.take().expect("piped");
    let first = BufReader::new(stdout)
        .lines()
        .next()
        .expect("a line")
        .expect("utf-8");
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        first.contains("http://127.0.0.1:") || first.contains("http://[::1]:"),
        "{first}"
    );
}

#[test]
fn a_bad_config_fails_at_start_naming_the_file_and_the_key() {
    let path = temp_config("bad.toml", "[limits]\nsession = 0\n");
    let output = program()
        .args(["serve", "--bind", "127.0.0.1:0", "--config"])
        .arg(&path)
        .output()
        .expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("limits.session"), "{stderr}");
    assert!(stderr.contains("bad.toml"), "{stderr}");

    let path = temp_config(
        "nobody.toml",
        "[agents]\nexposed = [\"echo\", \"nobody\"]\n",
    );
    let output = program()
        .args(["serve", "--bind", "127.0.0.1:0", "--config"])
        .arg(&path)
        .output()
        .expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("agents.exposed[1]") && stderr.contains("nobody"),
        "{stderr}"
    );
    assert!(stderr.contains("nobody.toml"), "{stderr}");

    let path = temp_config("syntax.toml", "[server\n");
    let output = program()
        .args(["serve", "--config"])
        .arg(&path)
        .output()
        .expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("syntax.toml"), "{stderr}");
}

#[test]
fn json_logs_cover_start_up_errors() {
    let path = temp_config("bad-json.toml", "[limits]\nsession = 0\n");
    let output = program()
        .args(["--log-format", "json", "serve", "--config"])
        .arg(&path)
        .output()
        .expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr.lines().last().expect("a line");
    let json: serde_json::Value = serde_json::from_str(line).expect("a JSON log line");
    assert_eq!(json["level"], "ERROR", "{json}");
    let error = json["fields"]["error"].as_str().expect("an error field");
    assert!(
        error.contains("limits.session") && error.contains("bad-json.toml"),
        "{error}"
    );
}

#[test]
fn json_logs_cover_a_refused_command_line() {
    let output = program()
        .args(["--log-format", "json", "serve", "--bind", "localhost"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr.lines().last().expect("a line");
    let json: serde_json::Value = serde_json::from_str(line).expect("a JSON log line");
    let error = json["fields"]["error"].as_str().expect("an error field");
    assert!(error.contains("HOST:PORT"), "{error}");
}

#[test]
fn help_lists_the_serve_command_and_the_environment() {
    let output = program().arg("--help").output().expect("runs");
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("serve"), "{help}");
    assert!(
        help.contains("NO_COLOR") && help.contains("RUST_LOG"),
        "{help}"
    );
}

#[test]
fn a_closed_stdout_does_not_stop_the_server() {
    // The port is chosen here because the banner that names it cannot be read.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port();
    // A pipe whose read end is closed before the program starts, as in
    // `agentyard serve | true`: every write to stdout fails with a broken pipe.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let child = program()
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .env_remove("RUST_LOG")
        .stdout(writer)
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let mut running = Running {
        child,
        base: format!("http://127.0.0.1:{port}"),
        banner: Vec::new(),
        stderr: Arc::new(Mutex::new(String::new())),
    };
    let card = format!("{}/.well-known/agent-card.json", running.base);
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(exit) = running.child.try_wait().expect("wait") {
            panic!("the server stopped when its stdout closed: {exit}");
        }
        let answered = block_on(async {
            reqwest::Client::new()
                .get(&card)
                .timeout(Duration::from_secs(2))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
        });
        if answered {
            break;
        }
        assert!(Instant::now() < deadline, "the server never answered");
        std::thread::sleep(Duration::from_millis(50));
    }
    let reply = post(
        &format!("{}/agents/echo", running.base),
        r#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-1","parts":[{"kind":"text","text":"still here"}]}}}"#,
    );
    assert!(reply.get("result").is_some(), "{reply}");
    // A server that died writing its banner would have exited 101 by now; one that
    // ignored the closed stdout stops cleanly on SIGTERM.
    running.signal("TERM");
    let exit = running.exit(PATIENCE);
    assert!(exit.success(), "{exit:?}");
}
