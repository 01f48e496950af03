//! The `agentyard` program as a user runs it: `agentyard serve` starts, prints the card
//! URLs, answers A2A calls on them, and stops cleanly on SIGTERM; a bad config file
//! fails at start with a message naming the key.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_agentyard");

/// Kills the child if a test fails half-way, so no server outlives the test.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `agentyard serve` on a free loopback port and returns it with the base URL
/// it printed.
fn start(extra: &[&str]) -> (Running, String) {
    let mut child = Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let running = Running(child);
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
    // The card URL lines follow; the echo agent's must be among them.
    let listed: Vec<String> = lines
        .by_ref()
        .take_while(|l| l.as_ref().is_ok_and(|l| !l.starts_with("press")))
        .map(|l| l.expect("utf-8"))
        .collect();
    assert!(
        listed
            .iter()
            .any(|l| l.contains(&format!("{base}/agents/echo/.well-known/agent-card.json"))),
        "{listed:?}"
    );
    (running, base)
}

fn post(url: &str, body: &'static str) -> serde_json::Value {
    let url = url.to_owned();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
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

#[test]
fn serve_answers_a2a_calls_and_stops_on_sigterm() {
    let (mut running, base) = start(&[]);
    let reply = post(
        &format!("{base}/agents/echo"),
        r#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-1","parts":[{"kind":"text","text":"hello"}]}}}"#,
    );
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["kind"], "message", "{reply}");
    assert_eq!(reply["result"]["parts"][0]["text"], "hello");

    let asked = post(
        &format!("{base}/agents/ask"),
        r#"{"jsonrpc":"2.0","id":"a","method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-2","parts":[{"kind":"text","text":"hi"}]}}}"#,
    );
    assert_eq!(
        asked["result"]["status"]["state"], "input-required",
        "{asked}"
    );

    let pid = running.0.id().to_string();
    let status = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let exit = loop {
        if let Some(exit) = running.0.try_wait().expect("wait") {
            break exit;
        }
        assert!(Instant::now() < deadline, "the server did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn a_bad_config_fails_at_start_naming_the_key() {
    let dir = std::env::temp_dir().join(format!("agentyard-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("bad.toml");
    std::fs::write(&path, "[limits]\nsession = 0\n").expect("write");
    let output = Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0", "--config"])
        .arg(&path)
        .output()
        .expect("runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("limits.session"), "{stderr}");

    std::fs::write(&path, "[agents]\nexposed = [\"echo\", \"nobody\"]\n").expect("write");
    let output = Command::new(BIN)
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
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_lists_the_serve_command() {
    let output = Command::new(BIN).arg("--help").output().expect("runs");
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("serve"));
}
