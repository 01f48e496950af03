//! The official A2A clients against the `agentyard` program: the Python SDK
//! (`a2a-sdk` 0.3.x) and the JS SDK (`@a2a-js/sdk` 0.3.x) drive `agentyard serve` —
//! cards, send, stream, get, cancel, resubscribe, errors on streams, input-required,
//! push to a local webhook, API-key auth, the handoff extension, the samples'
//! `acceptedOutputModes`, a non-blocking send to a busy conversation; and the JS SDK
//! 1.x (`@a2a-js/sdk` 1.3, default options) and the Python SDK 1.x (`a2a-sdk` 1.3, on
//! its A2A 1.0 transport) send, stream, get, cancel, subscribe and list (the JS SDK
//! 1.x also input-required, the unknown-task and not-cancelable errors, API-key auth
//! and the handoff extension). The 1.x
//! clients run again on the HTTP+JSON binding in 1.0, and the 0.3 Python client on
//! HTTP+JSON in 0.3 (`AGENTYARD_BINDING=HTTP+JSON`). Over gRPC,
//! the Python SDK 1.x (its `grpc` extra, A2A 1.0) and 0.3.x (A2A 0.3.0) and the JS
//! SDK 1.x (its `client/grpc` transport, A2A 1.0) drive `agentyard serve`'s gRPC
//! listener, found from the cards. The cases
//! live in `tests/interop/{python,js,python1,js1}`;
//! this harness starts the servers, runs each script and fails with its output.
//! The other way round, agentyard's `A2aClient` sends, streams and gets against a
//! tiny `a2a-sdk` 1.3 server (`tests/interop/python1/server.py`), with its default
//! options (1.0 only) and with 0.3 compatibility on.
//!
//! The SDKs are installed by `tests/interop/setup.sh` (`.ci/run` calls it). Without
//! them the tests say they were skipped and why, unless `AGENTYARD_INTEROP=require`
//! (set by `.ci/run`), where a missing setup fails: CI never skips silently.
//!
//! A test binary of its own, not a module of `e2e`: cargo runs test binaries one
//! after the other, so the clients' calls do not compete for the CPU with the e2e
//! tests. Its own cases link agentyard's client to drive an official server.

#[path = "interop/remote.rs"]
mod remote;
#[path = "interop/workflow_remote.rs"]
mod workflow_remote;

use std::fs::File;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentyard_tests::process::{ServeProcess, binary, root, target_dir};

/// The API key of the server that wants one.
const API_KEY: &str = "interop-key-4f1c";
/// How long one client script may run before it is killed (the cases take ~15 s).
const SCRIPT_DEADLINE: Duration = Duration::from_secs(120);

/// Where the setup put the Python venv: `$CARGO_TARGET_DIR/interop`, a relative one
/// taken from the workspace root, as setup.sh does.
fn interop_dir() -> PathBuf {
    target_dir().join("interop")
}

/// The remedy for a missing SDK install.
const SET_UP: &str = "set it up with `tests/interop/setup.sh` (see tests/interop/README.md)";

/// Says why the suite cannot run (and what to do): a failure when CI requires it,
/// else a skip.
fn unavailable(client: &str, why: &str) {
    let required = std::env::var("AGENTYARD_INTEROP").is_ok_and(|v| v == "require");
    let message = format!("interop ({client}): {why}");
    assert!(!required, "{message} [AGENTYARD_INTEROP=require]");
    // Straight to stderr, past the test harness's capture: a skip must be seen in a
    // plain `cargo test` run, where a passing test's output is hidden.
    let _ = writeln!(std::io::stderr(), "skipped: {message}");
}

/// A scratch directory of this test process for configs and logs.
fn scratch(client: &str) -> PathBuf {
    let dir = interop_dir()
        .join("run")
        .join(format!("{client}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    dir
}

/// Starts the two servers the scripts talk to and runs `program args` with `env`
/// besides the servers' addresses, failing with its output (and the servers' logs)
/// unless it exits 0.
fn drive(client: &str, program: &Path, args: &[PathBuf], env: &[(&str, &str)], bin: &Path) {
    let dir = scratch(client);
    // Webhooks go to the script's receiver on 127.0.0.1, which the SSRF guard refuses
    // unless told otherwise.
    let open = ServeProcess::start(
        bin,
        &dir,
        "open",
        "[push]\nallow_private_addresses = true\n",
    );
    let keyed = ServeProcess::start(
        bin,
        &dir,
        "auth",
        &format!("[[auth.api_keys]]\nname = \"interop\"\nkey = \"{API_KEY}\"\n"),
    );
    let out_path = dir.join("client.out");
    let out = File::create(&out_path).expect("create the output file");
    let mut child = Command::new(program)
        .args(args)
        .env("AGENTYARD_URL", &open.base)
        .env("AGENTYARD_AUTH_URL", &keyed.base)
        .env("AGENTYARD_API_KEY", API_KEY)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(out.try_clone().expect("clone the output file"))
        .stderr(out)
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", program.display()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the client") {
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
            // Shown with --nocapture: which cases ran and how long each took.
            println!("{output}");
            drop((open, keyed));
            let _ = std::fs::remove_dir_all(&dir);
        }
        _ => panic!(
            "the {client} client failed ({}):\n{output}\n--- open server log ---\n{}\n--- auth server log ---\n{}",
            status.map_or_else(
                || format!("killed after {SCRIPT_DEADLINE:?}"),
                |s| s.to_string()
            ),
            open.log_tail(),
            keyed.log_tail(),
        ),
    }
}

/// The scripts' variable naming the binding their client must use.
const BINDING: &str = "AGENTYARD_BINDING";
/// HTTP+JSON, as the cards name it.
const REST: &[(&str, &str)] = &[(BINDING, "HTTP+JSON")];
/// gRPC, as the cards name it.
const GRPC: &[(&str, &str)] = &[(BINDING, "GRPC")];

#[test]
fn python_sdk_drives_the_server() {
    python_drives_the_server("python", "venv", "tests/interop/python/interop.py", &[]);
}

#[test]
fn python_sdk_drives_the_server_over_http_json_in_a2a_0_3() {
    python_drives_the_server(
        "python-rest",
        "venv",
        "tests/interop/python/interop.py",
        REST,
    );
}

#[test]
fn python_sdk_1_x_drives_the_server_in_a2a_1_0() {
    python_drives_the_server("python1", "venv1", "tests/interop/python1/interop.py", &[]);
}

#[test]
fn python_sdk_1_x_drives_the_server_over_http_json_in_a2a_1_0() {
    python_drives_the_server(
        "python1-rest",
        "venv1",
        "tests/interop/python1/interop.py",
        REST,
    );
}

#[test]
fn python_sdk_1_x_drives_the_server_over_grpc_in_a2a_1_0() {
    python_drives_the_server(
        "python1-grpc",
        "venv1",
        "tests/interop/python1/interop.py",
        GRPC,
    );
}

#[test]
fn python_sdk_0_3_drives_the_server_over_grpc() {
    python_drives_the_server(
        "python-grpc",
        "venv",
        "tests/interop/python/grpc_interop.py",
        &[],
    );
}

/// Runs a Python client `script` from the venv `venv` of the interop directory.
fn python_drives_the_server(client: &str, venv: &str, script: &str, env: &[(&str, &str)]) {
    let venv = interop_dir().join(venv);
    let python = if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    };
    // Written by setup.sh only once the SDK is installed.
    if !venv.join(".agentyard-installed").is_file() || !python.is_file() {
        return unavailable(
            client,
            &format!("no a2a-sdk venv at {}; {SET_UP}", venv.display()),
        );
    }
    // The gRPC scripts need the SDK's `grpc` extra (requirements.txt); a venv set up
    // before it was listed lacks it.
    if client.ends_with("-grpc") {
        let importable = Command::new(&python)
            .args(["-c", "import grpc"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !importable {
            return unavailable(client, &format!("the venv lacks grpcio; {SET_UP}"));
        }
    }
    let bin = match binary() {
        Ok(bin) => bin,
        Err(why) => return unavailable(client, &why),
    };
    drive(client, &python, &[root().join(script)], env, &bin);
}

#[test]
fn js_sdk_drives_the_server() {
    let js = root().join("tests/interop/js");
    if !js.join("node_modules/@a2a-js/sdk/package.json").is_file() {
        return unavailable(
            "js",
            &format!("no @a2a-js/sdk in {}/node_modules; {SET_UP}", js.display()),
        );
    }
    let node = PathBuf::from("node");
    if Command::new(&node).arg("--version").output().is_err() {
        return unavailable("js", &format!("`node` is not on PATH; {SET_UP}"));
    }
    let bin = match binary() {
        Ok(bin) => bin,
        Err(why) => return unavailable("js", &why),
    };
    drive("js", &node, &[js.join("interop.mjs")], &[], &bin);
}

#[test]
fn js_sdk_1_x_with_default_options_drives_the_server_in_a2a_1_0() {
    js1_drives_the_server("js1", &[]);
}

#[test]
fn js_sdk_1_x_drives_the_server_over_http_json_in_a2a_1_0() {
    js1_drives_the_server("js1-rest", REST);
}

#[test]
fn js_sdk_1_x_drives_the_server_over_grpc_in_a2a_1_0() {
    js1_drives_the_server("js1-grpc", GRPC);
}

/// Runs the JS SDK 1.x script with `env`.
fn js1_drives_the_server(client: &str, env: &[(&str, &str)]) {
    let js = root().join("tests/interop/js1");
    if !js.join("node_modules/@a2a-js/sdk/package.json").is_file() {
        return unavailable(
            client,
            &format!("no @a2a-js/sdk in {}/node_modules; {SET_UP}", js.display()),
        );
    }
    // The SDK's gRPC transport needs its peers (package.json); node_modules installed
    // before they were listed lacks them.
    if client.ends_with("-grpc") && !js.join("node_modules/@grpc/grpc-js/package.json").is_file() {
        return unavailable(
            client,
            &format!(
                "no @grpc/grpc-js in {}/node_modules; {SET_UP}",
                js.display()
            ),
        );
    }
    let node = PathBuf::from("node");
    if Command::new(&node).arg("--version").output().is_err() {
        return unavailable(client, &format!("`node` is not on PATH; {SET_UP}"));
    }
    let bin = match binary() {
        Ok(bin) => bin,
        Err(why) => return unavailable(client, &why),
    };
    drive(client, &node, &[js.join("interop.mjs")], env, &bin);
}

/// A running official server (`tests/interop/python1/server.py`, a2a-sdk 1.3), killed
/// when dropped.
struct SdkServer {
    child: Child,
    base: String,
}

impl Drop for SdkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl SdkServer {
    /// Starts the script with `args`; its first line is its base URL.
    fn start(python: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(python)
            .arg(root().join("tests/interop/python1/server.py"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the SDK server starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut server = Self {
            child,
            base: String::new(),
        };
        let mut stdout = BufReader::new(stdout);
        let mut first = String::new();
        let read = stdout.read_line(&mut first);
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        assert!(read.is_ok_and(|n| n > 0), "the SDK server printed nothing");
        first.trim().clone_into(&mut server.base);
        assert!(
            server.base.starts_with("http://127.0.0.1:"),
            "unexpected first line: {first}"
        );
        server
    }
}

/// The Python of the 1.x venv, when it can run the SDK's server.
fn sdk_server_python(client: &str) -> Option<PathBuf> {
    let venv = interop_dir().join("venv1");
    let python = venv.join("bin").join("python");
    if !venv.join(".agentyard-installed").is_file() || !python.is_file() {
        unavailable(
            client,
            &format!("no a2a-sdk venv at {}; {SET_UP}", venv.display()),
        );
        return None;
    }
    // The server needs the SDK's `http-server` extra and uvicorn (requirements.txt);
    // a venv set up before they were listed lacks them.
    let importable = Command::new(&python)
        .args(["-c", "import uvicorn, starlette, sse_starlette"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !importable {
        unavailable(
            client,
            &format!("the venv lacks uvicorn/starlette; {SET_UP}"),
        );
        return None;
    }
    Some(python)
}

#[test]
fn agentyard_client_drives_an_sdk_1_x_server_in_a2a_1_0() {
    let Some(python) = sdk_server_python("client-sdk1") else {
        return;
    };
    let server = SdkServer::start(&python, &[]);
    client_drives(&server.base, None);
}

#[test]
fn agentyard_client_drives_an_sdk_1_x_server_with_0_3_compat() {
    let Some(python) = sdk_server_python("client-sdk1-compat") else {
        return;
    };
    let server = SdkServer::start(&python, &["--compat"]);
    // The card offers both: the client takes 1.0; forced, it speaks 0.3 to the
    // SDK's compatibility transport.
    client_drives(&server.base, None);
    client_drives(
        &server.base,
        Some(agentyard::a2a::v1::ProtocolVersion::V0_3),
    );
}

/// Send, stream and get with agentyard's client against the echo agent at `base`,
/// in the version the card picks or `forced`.
fn client_drives(base: &str, forced: Option<agentyard::a2a::v1::ProtocolVersion>) {
    use agentyard::a2a::v1::ProtocolVersion;
    use agentyard::a2a::{
        Message, MessageSendParams, Part, SendMessageResult, StreamEvent, TaskQueryParams,
        TaskState,
    };
    use agentyard::client::{A2aClient, ClientOptions};
    use futures::StreamExt as _;

    fn echo_of(artifacts: Option<&Vec<Arc<agentyard::a2a::Artifact>>>) -> Vec<String> {
        artifacts
            .into_iter()
            .flatten()
            .flat_map(|artifact| &artifact.parts)
            .filter_map(|part| match part {
                Part::Text(text) => Some(text.text.clone()),
                _ => None,
            })
            .collect()
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let deadline = Duration::from_secs(30);
        let mut options = ClientOptions::new().timeout(Duration::from_secs(20));
        if let Some(version) = forced {
            options = options.protocol_version(version);
        }
        let card = format!("{base}/.well-known/agent-card.json");
        let client = A2aClient::connect(&card, options).await.expect("a client");
        assert_eq!(
            client.protocol_version(),
            forced.unwrap_or(ProtocolVersion::V1_0)
        );

        let sent = client
            .send_message(MessageSendParams::new(Message::user_text("hi")))
            .await
            .expect("sent");
        let SendMessageResult::Task(task) = sent else {
            panic!("a task: {sent:?}");
        };
        assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
        assert_eq!(echo_of(task.artifacts.as_ref()), ["echo: hi"]);

        let got = client
            .get_task(TaskQueryParams::new(task.id.as_str()))
            .await
            .expect("got");
        assert_eq!((got.id.as_str(), got.status.state), (task.id.as_str(), TaskState::Completed));

        let stream = client
            .send_message_stream(MessageSendParams::new(Message::user_text("go")))
            .await
            .expect("a stream");
        let events: Vec<StreamEvent> = tokio::time::timeout(deadline, stream.collect::<Vec<_>>())
            .await
            .expect("the stream ends")
            .into_iter()
            .map(|event| event.expect("an event"))
            .collect();
        let echoed: Vec<String> = events
            .iter()
            .filter_map(|event| match event {
                StreamEvent::ArtifactUpdate(update) => {
                    Some(echo_of(Some(&vec![Arc::clone(&update.artifact)])))
                }
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(echoed, ["echo: go"], "{events:?}");
        let last = events.last().expect("events");
        assert!(
            matches!(last, StreamEvent::StatusUpdate(update) if update.status.state == TaskState::Completed)
                || matches!(last, StreamEvent::Task(task) if task.status.state == TaskState::Completed),
            "the stream ends completed: {events:?}"
        );
    });
}
