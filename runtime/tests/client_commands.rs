//! The client commands of the `agentyard` program (`card`, `send`, `stream`, `get`,
//! `cancel`, `resubscribe`) against `agentyard serve`, checked on their output and
//! exit codes; and `[[remote]]` in a served config: a second `agentyard serve`
//! reached through the first as a gateway.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_agentyard");

/// The exit statuses the commands document.
const COMPLETED: i32 = 0;
const FAILED: i32 = 3;
const CANCELED: i32 = 4;
const INPUT_REQUIRED: i32 = 5;
const TRANSPORT: i32 = 6;
const AGENT_ERROR: i32 = 7;

/// A running `agentyard serve`, killed when dropped.
struct Serve {
    child: Child,
    base: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    fn start(config: Option<&str>) -> Self {
        let mut command = Command::new(BIN);
        command.args(["serve", "--bind", "127.0.0.1:0"]);
        // Each server its own data directory: `serve` keeps tasks in an embedded store,
        // by default in `./agentyard-data`, which must not land in the repository.
        let data = std::env::temp_dir().join(format!(
            "agentyard-client-data-{}-{}",
            std::process::id(),
            uuid_like()
        ));
        command.arg("--data-dir").arg(data);
        if let Some(text) = config {
            let dir = std::env::temp_dir().join(format!("agentyard-client-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("temp dir");
            let path = dir.join(format!("{}.toml", uuid_like()));
            std::fs::write(&path, text).expect("write");
            command.arg("--config").arg(path);
        }
        let mut child = command
            .env("RUST_LOG", "warn")
            .env("GATEWAY_PEER_KEY", "peer-key-1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("the banner");
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let base = first
            .trim()
            .rsplit(' ')
            .next()
            .unwrap_or_default()
            .to_owned();
        assert!(base.starts_with("http://127.0.0.1:"), "banner: {first}");
        Self { child, base }
    }

    fn agent(&self, name: &str) -> String {
        format!("{}/agents/{name}", self.base)
    }
}

fn uuid_like() -> String {
    format!("{:?}", Instant::now()).replace(|c: char| !c.is_ascii_alphanumeric(), "")
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("the program runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn code(output: &Output) -> i32 {
    output.status.code().expect("an exit code")
}

#[test]
fn card_send_get_and_their_exit_codes() {
    let serve = Serve::start(Some(
        "[agents]\nexposed = [\"echo\", \"countdown\", \"ask\", \"worker\"]\n",
    ));
    let card = run(&["card", &serve.base]);
    assert_eq!(code(&card), COMPLETED, "{}", stderr(&card));
    let text = stdout(&card);
    assert!(text.starts_with("echo "), "{text}");
    assert!(text.contains("streaming: yes"), "{text}");

    let card_json = run(&["card", &serve.agent("ask"), "--json"]);
    let value: serde_json::Value = serde_json::from_str(&stdout(&card_json)).expect("JSON");
    assert_eq!(value["name"], "ask");

    let sent = run(&["send", &serve.agent("countdown"), "1"]);
    assert_eq!(code(&sent), COMPLETED, "{}", stderr(&sent));
    let text = stdout(&sent);
    assert!(text.contains(" completed "), "{text}");
    assert!(text.contains("liftoff"), "{text}");
    let task_id = text
        .split_whitespace()
        .nth(1)
        .expect("task <id>")
        .to_owned();

    let got = run(&["get", &serve.agent("countdown"), &task_id, "--json"]);
    assert_eq!(code(&got), COMPLETED, "{}", stderr(&got));
    let value: serde_json::Value = serde_json::from_str(&stdout(&got)).expect("JSON");
    assert_eq!(value["id"], task_id.as_str());
    assert_eq!(value["status"]["state"], "completed");

    let asked = run(&["send", &serve.agent("ask"), "hi"]);
    assert_eq!(code(&asked), INPUT_REQUIRED, "{}", stdout(&asked));
    let text = stdout(&asked);
    let task_id = text
        .split_whitespace()
        .nth(1)
        .expect("task <id>")
        .to_owned();
    let answered = run(&["send", &serve.agent("ask"), "Ada", "--task-id", &task_id]);
    assert_eq!(code(&answered), COMPLETED, "{}", stdout(&answered));
    assert!(stdout(&answered).contains("Ada"), "{}", stdout(&answered));

    let rejected = run(&["send", &serve.agent("worker"), "free text"]);
    assert_eq!(code(&rejected), FAILED, "{}", stdout(&rejected));
    assert!(
        stdout(&rejected).contains(" rejected "),
        "{}",
        stdout(&rejected)
    );

    let missing = run(&["get", &serve.agent("echo"), "no-such-task"]);
    assert_eq!(code(&missing), AGENT_ERROR);
    let said = stderr(&missing);
    assert!(
        said.starts_with("error: the agent answered with error -32001"),
        "{said}"
    );
    assert!(
        !said.contains("JsonRpc("),
        "a sentence, not Debug output: {said}"
    );

    let nowhere = run(&["send", "http://127.0.0.1:9", "hi", "--timeout", "2"]);
    assert_eq!(code(&nowhere), TRANSPORT);
    assert!(
        stderr(&nowhere).starts_with("error: could not connect"),
        "{}",
        stderr(&nowhere)
    );

    let bad_data = run(&["send", &serve.base, "hi", "--data", "/nonexistent.json"]);
    assert_eq!(code(&bad_data), AGENT_ERROR);
    assert!(stderr(&bad_data).contains("cannot read /nonexistent.json"));
}

#[test]
fn stream_shows_progress_and_a_summary_and_cancel_ends_the_task() {
    let serve = Serve::start(None);
    let streamed = run(&["stream", &serve.agent("countdown"), "2"]);
    assert_eq!(code(&streamed), COMPLETED, "{}", stderr(&streamed));
    let text = stdout(&streamed);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines
            .iter()
            .any(|line| line.trim_start().starts_with("working 2 left")),
        "{text}"
    );
    assert!(
        lines.iter().any(|line| line.contains("[countdown]")),
        "{text}"
    );
    let summary = lines.last().expect("a summary");
    assert!(
        summary.starts_with("task ") && summary.contains(" completed in "),
        "{text}"
    );

    let json = run(&["stream", &serve.agent("countdown"), "1", "--json"]);
    assert_eq!(code(&json), COMPLETED);
    for line in stdout(&json).lines() {
        let event: serde_json::Value = serde_json::from_str(line).expect("one JSON value per line");
        assert!(event.get("kind").is_some(), "{line}");
    }

    // A long countdown, submitted without waiting, then canceled and resubscribed.
    let submitted = run(&[
        "send",
        &serve.agent("countdown"),
        "30",
        "--no-wait",
        "--json",
    ]);
    assert_eq!(code(&submitted), COMPLETED, "{}", stderr(&submitted));
    let value: serde_json::Value = serde_json::from_str(&stdout(&submitted)).expect("JSON");
    let task_id = value["id"].as_str().expect("a task").to_owned();
    let follower = Command::new(BIN)
        .args(["resubscribe", &serve.agent("countdown"), &task_id])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("resubscribe runs");
    // The follower is connected once the task shows its next working update.
    std::thread::sleep(Duration::from_millis(1500));
    let canceled = run(&["cancel", &serve.agent("countdown"), &task_id]);
    assert_eq!(code(&canceled), COMPLETED, "{}", stderr(&canceled));
    assert!(
        stdout(&canceled).contains(" canceled "),
        "{}",
        stdout(&canceled)
    );
    let followed = follower.wait_with_output().expect("resubscribe ends");
    assert_eq!(code(&followed), CANCELED, "{}", stdout(&followed));
    assert!(
        stdout(&followed)
            .lines()
            .last()
            .is_some_and(|line| line.contains(" canceled in "))
    );

    let again = run(&["cancel", &serve.agent("countdown"), &task_id]);
    assert_eq!(code(&again), AGENT_ERROR, "{}", stderr(&again));
}

/// `[[remote]]` with `expose = true`: the first server fronts the second (a
/// gateway), with its own auth, policy and rate limits at the door and the peer's
/// key (from the environment) behind it; the peer never sees a refused call.
#[test]
fn a_remote_agent_in_the_config_is_served_through_the_gateway() {
    let peer = Serve::start(Some(
        "[[auth.api_keys]]\nname = \"gateway\"\nkey = \"peer-key-1\"\n",
    ));
    let gateway = Serve::start(Some(&format!(
        r#"
[agents]
exposed = ["echo"]

[[auth.api_keys]]
name = "front"
key = "front-key"

[[auth.api_keys]]
name = "blocked"
key = "blocked-key"

[policy.sender_rate_limits]
front = {{ capacity = 2, per_second = 0.001 }}

[[policy.rules]]
effect = "deny"
name = "no-blocked"
from = "blocked"
to = "far-countdown"

[[remote]]
name = "far-countdown"
card_url = "{}/.well-known/agent-card.json"
expose = true
[remote.auth]
type = "api_key"
key_env = "GATEWAY_PEER_KEY"
"#,
        peer.agent("countdown")
    )));
    let front = gateway.agent("far-countdown");
    let key = "X-API-Key:front-key";

    // The peer's card, served under the gateway's URL with its security.
    let card = run(&["card", &front, "--json", "--header", key]);
    assert_eq!(code(&card), COMPLETED, "{}", stderr(&card));
    let value: serde_json::Value = serde_json::from_str(&stdout(&card)).expect("JSON");
    assert_eq!(value["name"], "far-countdown");
    assert!(
        value["url"]
            .as_str()
            .is_some_and(|url| url.starts_with(&gateway.base)),
        "{value}"
    );
    assert!(
        value["securitySchemes"].is_object(),
        "the gateway's security: {value}"
    );

    let anonymous = run(&["send", &front, "1"]);
    assert_eq!(
        code(&anonymous),
        TRANSPORT,
        "without a key: {}",
        stdout(&anonymous)
    );
    assert!(stderr(&anonymous).contains("401"), "{}", stderr(&anonymous));

    let blocked = run(&["send", &front, "1", "--header", "X-API-Key:blocked-key"]);
    assert_eq!(
        code(&blocked),
        AGENT_ERROR,
        "denied by policy: {}",
        stdout(&blocked)
    );
    assert!(
        stderr(&blocked).contains("no-blocked"),
        "{}",
        stderr(&blocked)
    );

    let streamed = run(&["stream", &front, "1", "--header", key]);
    assert_eq!(
        code(&streamed),
        COMPLETED,
        "{}{}",
        stdout(&streamed),
        stderr(&streamed)
    );
    assert!(
        stdout(&streamed).contains("liftoff"),
        "{}",
        stdout(&streamed)
    );
    let sent = run(&["send", &front, "1", "--header", key]);
    assert_eq!(code(&sent), COMPLETED, "{}{}", stdout(&sent), stderr(&sent));
    let limited = run(&["send", &front, "1", "--header", key]);
    assert_ne!(
        code(&limited),
        COMPLETED,
        "past the rate limit: {}",
        stdout(&limited)
    );
    assert!(stderr(&limited).contains("rate"), "{}", stderr(&limited));

    // Only the two allowed calls reached the peer.
    let tasks = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(async {
            use agentyard_transport::client::{A2aClient, ClientOptions};
            let options = ClientOptions::new().api_key("X-API-Key", "peer-key-1");
            let card = format!("{}/.well-known/agent-card.json", peer.agent("countdown"));
            let client = A2aClient::connect(&card, options).await.expect("the peer");
            let listed = client
                .list_tasks(agentyard_transport::a2a::v1::ListTasksRequest::default())
                .await
                .expect("listed");
            listed.tasks.len()
        });
    assert_eq!(tasks, 2);
}

#[test]
fn the_client_commands_speak_rest_and_either_version_when_told() {
    let serve = Serve::start(Some("[agents]\nexposed = [\"echo\", \"countdown\"]\n"));
    for version in ["1.0", "0.3"] {
        let card = run(&[
            "card",
            &serve.base,
            "--transport",
            "rest",
            "--a2a-version",
            version,
        ]);
        assert_eq!(code(&card), COMPLETED, "{}", stderr(&card));
        assert!(
            stdout(&card).contains(&format!("(HTTP+JSON, A2A {version})")),
            "{}",
            stdout(&card)
        );
        let sent = run(&[
            "send",
            &serve.agent("countdown"),
            "1",
            "--transport",
            "rest",
            "--a2a-version",
            version,
        ]);
        assert_eq!(code(&sent), COMPLETED, "{version}: {}", stderr(&sent));
        let text = stdout(&sent);
        assert!(text.contains("liftoff"), "{text}");
        let task_id = text
            .split_whitespace()
            .nth(1)
            .expect("task <id>")
            .to_owned();
        let got = run(&[
            "get",
            &serve.agent("countdown"),
            &task_id,
            "--transport",
            "rest",
        ]);
        assert_eq!(code(&got), COMPLETED, "{}", stderr(&got));
        let streamed = run(&[
            "stream",
            &serve.agent("countdown"),
            "1",
            "--transport",
            "rest",
            "--a2a-version",
            version,
        ]);
        assert_eq!(
            code(&streamed),
            COMPLETED,
            "{version}: {}",
            stderr(&streamed)
        );
        let missing = run(&["get", &serve.agent("echo"), "nope", "--transport", "rest"]);
        assert_eq!(code(&missing), AGENT_ERROR, "{}", stderr(&missing));
    }
    let json_rpc = run(&[
        "card",
        &serve.base,
        "--transport",
        "jsonrpc",
        "--a2a-version",
        "0.3",
    ]);
    assert!(
        stdout(&json_rpc).contains("(JSONRPC, A2A 0.3)"),
        "{}",
        stdout(&json_rpc)
    );
    // gRPC from the same card (serve has it on by default); a bad version is refused
    // before anything is sent.
    let grpc = run(&["send", &serve.agent("echo"), "hi", "--transport", "grpc"]);
    assert_eq!(code(&grpc), COMPLETED, "{}", stderr(&grpc));
    let card = run(&["card", &serve.base, "--transport", "grpc"]);
    assert!(
        stdout(&card).contains("(GRPC, A2A 1.0)"),
        "{}",
        stdout(&card)
    );
    let bad = run(&["send", &serve.agent("echo"), "hi", "--a2a-version", "2.0"]);
    assert_eq!(code(&bad), 2, "{}", stderr(&bad));
    assert!(stderr(&bad).contains("2.0"), "{}", stderr(&bad));
}
