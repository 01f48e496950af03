//! agentyard's remote agents against a peer agentyard did not write: a small agent
//! built with the official Python SDK, a2a-sdk 0.3.x (`tests/interop/python/peer.py`),
//! started here on an ephemeral loopback port. Send, stream, the input-required round
//! trip, cancel propagation, a peer that fails, a peer killed mid-stream, and the
//! hop count and trace that go out with every call.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use agentyard::a2a::{Part, StreamEvent, TaskIdParams, TaskQueryParams, TaskState};
use agentyard::client::{A2aClient, ClientOptions};
use agentyard::remote::{REMOTE_METADATA_KEY, RemoteOptions, RemotePeer};
use agentyard::{Agent, AgentDescriptor, AgentError, Message, Runtime, SendRequest, TaskContext};
use futures::StreamExt as _;

use super::{interop_dir, unavailable};

/// The SDK peer, killed when dropped.
struct Peer {
    child: Child,
    base: String,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    fn start(python: &Path, args: &[&str]) -> Self {
        let script = super::root().join("tests/interop/python/peer.py");
        let mut child = Command::new(python)
            .arg(script)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the SDK peer starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stdout = BufReader::new(stdout);
        let mut first = String::new();
        let read = stdout.read_line(&mut first);
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        assert!(read.is_ok_and(|n| n > 0), "the SDK peer printed nothing");
        Self {
            child,
            base: first.trim().to_owned(),
        }
    }

    fn card(&self) -> String {
        format!("{}/.well-known/agent-card.json", self.base)
    }

    /// A client straight to the peer, to see the remote side.
    async fn client(&self) -> A2aClient {
        A2aClient::connect(&self.card(), ClientOptions::new())
            .await
            .expect("the peer's card")
    }
}

/// The Python of the 0.3 venv, when it can run the peer.
fn python(case: &str) -> Option<PathBuf> {
    let venv = interop_dir().join("venv");
    let python = venv.join("bin").join("python");
    let importable = python.is_file()
        && Command::new(&python)
            .args([
                "-c",
                "import uvicorn, starlette, sse_starlette, a2a.server.apps",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
    if importable {
        Some(python)
    } else {
        unavailable(
            case,
            &format!(
                "no a2a-sdk 0.3 venv with the http-server extra at {}; {}",
                venv.display(),
                super::SET_UP
            ),
        );
        None
    }
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(future)
}

async fn runtime_with(
    peer: &Peer,
    options: impl FnOnce(RemoteOptions) -> RemoteOptions,
) -> Runtime {
    Runtime::builder()
        .remote_with("peer", options(RemoteOptions::new(peer.card())))
        .build()
        .await
        .expect("the runtime starts with the peer's card")
}

fn reply_text(task: &agentyard::Task) -> String {
    task.status
        .message
        .as_deref()
        .map(Message::text)
        .unwrap_or_default()
}

async fn poll<T, Fut: std::future::Future<Output = Option<T>>>(
    what: &str,
    mut check: impl FnMut() -> Fut,
) -> T {
    agentyard_tests::eventually(agentyard_tests::PATIENCE, what, async || check().await).await
}

#[test]
fn a_remote_sdk_agent_answers_sends_as_a_local_agent_type() {
    let Some(python) = python("remote-send") else {
        return;
    };
    let peer = Peer::start(&python, &[]);
    block_on(async {
        let runtime = runtime_with(&peer, |o| o).await;
        let descriptor = runtime.supervisor().agent("peer").expect("registered");
        assert_eq!(
            descriptor.description,
            "an a2a-sdk 0.3 agent for agentyard's remote agents"
        );
        let done = runtime
            .send_and_wait("peer", Message::user_text("hello"))
            .await
            .expect("sent");
        assert_eq!(
            done.task.status.state,
            TaskState::Completed,
            "{:?}",
            done.task
        );
        assert_eq!(reply_text(&done.task), "echo: hello");
        let artifacts = done.task.artifacts.clone().unwrap_or_default();
        assert_eq!(artifacts.len(), 1, "{artifacts:?}");
        assert_eq!(artifacts[0].parts[0].as_text(), Some("echo: hello"));
        // The local task names the remote one, which the peer knows as completed.
        let remote = done
            .task
            .status
            .message
            .as_ref()
            .and_then(|m| m.metadata.as_ref())
            .and_then(|m| m.get(REMOTE_METADATA_KEY))
            .cloned()
            .expect("remote ids on the reply");
        let remote_task = remote["taskId"].as_str().expect("a remote task id");
        assert_ne!(remote_task, done.task.id.as_str());
        let seen = peer
            .client()
            .await
            .get_task(TaskQueryParams::new(remote_task))
            .await
            .expect("the peer has it");
        assert_eq!(seen.status.state, TaskState::Completed);
        assert_eq!(remote["contextId"].as_str(), Some(seen.context_id.as_str()));
    });
}

#[test]
fn a_remote_agent_streams_status_and_artifact_chunks_through() {
    let Some(python) = python("remote-stream") else {
        return;
    };
    let peer = Peer::start(&python, &[]);
    block_on(async {
        let runtime = runtime_with(&peer, |o| o).await;
        let events: Vec<StreamEvent> = runtime
            .stream("peer", Message::user_text("chunks please"))
            .await
            .expect("a stream")
            .collect()
            .await;
        let chunks: Vec<(String, Option<bool>)> = events
            .iter()
            .filter_map(|event| match event {
                StreamEvent::ArtifactUpdate(update) => Some((
                    update
                        .artifact
                        .parts
                        .iter()
                        .filter_map(Part::as_text)
                        .collect(),
                    update.append,
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            chunks
                .iter()
                .map(|(text, _)| text.as_str())
                .collect::<Vec<_>>(),
            ["one ", "two ", "three"],
            "{events:?}"
        );
        assert!(chunks[1].1 == Some(true), "later chunks append: {chunks:?}");
        let Some(StreamEvent::StatusUpdate(last)) = events.last() else {
            panic!("ends with a status: {events:?}");
        };
        assert_eq!(last.status.state, TaskState::Completed);
        let task = runtime
            .get_task(&last.task_id, None)
            .await
            .expect("the task");
        let story = task.artifacts.unwrap_or_default();
        let text: String = story[0].parts.iter().filter_map(Part::as_text).collect();
        assert_eq!(text, "one two three");
    });
}

/// The input-required round trip, streaming and polling: the question comes back to
/// the caller, and the answer continues the same remote task.
#[test]
fn input_required_comes_back_and_the_answer_continues_the_remote_task() {
    let Some(python) = python("remote-input") else {
        return;
    };
    for args in [&[][..], &["--no-streaming"][..]] {
        let peer = Peer::start(&python, args);
        block_on(async {
            let runtime = runtime_with(&peer, |o| o).await;
            let asked = runtime
                .send_and_wait("peer", Message::user_text("ask me"))
                .await
                .expect("sent");
            assert_eq!(
                asked.task.status.state,
                TaskState::InputRequired,
                "{args:?}: {:?}",
                asked.task
            );
            assert_eq!(reply_text(&asked.task), "which colour?");
            let answer = Message::user_text("blue").with_task_id(asked.task.id.clone());
            let done = runtime
                .supervisor()
                .send_and_wait(SendRequest::new("peer", answer))
                .await
                .expect("answered");
            assert_eq!(done.task.id, asked.task.id);
            assert_eq!(
                done.task.status.state,
                TaskState::Completed,
                "{args:?}: {:?}",
                done.task
            );
            assert_eq!(reply_text(&done.task), "colour: blue");
            // One remote task went through both turns.
            let remote = done
                .task
                .status
                .message
                .as_ref()
                .and_then(|m| m.metadata.as_ref())
                .and_then(|m| m.get(REMOTE_METADATA_KEY))
                .cloned()
                .expect("remote ids");
            let remote_task = remote["taskId"].as_str().expect("an id").to_owned();
            let seen = peer
                .client()
                .await
                .get_task(TaskQueryParams::new(remote_task))
                .await
                .expect("the peer's task");
            assert_eq!(seen.status.state, TaskState::Completed);
            let texts: Vec<String> = seen
                .history
                .unwrap_or_default()
                .iter()
                .filter(|m| m.role == agentyard::Role::User)
                .map(|message| message.text())
                .collect();
            assert_eq!(texts, ["ask me", "blue"], "{args:?}");
        });
    }
}

#[test]
fn canceling_the_local_task_cancels_the_remote_one() {
    let Some(python) = python("remote-cancel") else {
        return;
    };
    let peer = Peer::start(&python, &[]);
    block_on(async {
        let peer_handle = RemotePeer::connect("peer", RemoteOptions::new(peer.card()))
            .await
            .expect("connected");
        let runtime = Runtime::builder()
            .remote_peer(&peer_handle)
            .build()
            .await
            .expect("runtime");
        let submitted = runtime
            .send("peer", Message::user_text("slow work"))
            .await
            .expect("sent");
        let task_id = submitted.task.id.clone();
        let remote = poll("the remote task id", || {
            let found = peer_handle.remote_ids(&task_id);
            async move { found }
        })
        .await;
        let canceled = runtime.cancel_task(&task_id).await.expect("canceled");
        assert_eq!(canceled.status.state, TaskState::Canceled);
        let client = peer.client().await;
        poll("the peer's task canceled", || {
            let client = client.clone();
            let id = remote.task_id.clone();
            async move {
                let task = client.get_task(TaskQueryParams::new(id)).await.ok()?;
                (task.status.state == TaskState::Canceled).then_some(())
            }
        })
        .await;
        // Canceling again is refused by the peer: it already ended there.
        assert!(
            client
                .cancel_task(TaskIdParams::new(remote.task_id.clone()))
                .await
                .is_err()
        );
    });
}

#[test]
fn a_peer_that_fails_fails_the_local_task_naming_the_peer() {
    let Some(python) = python("remote-fail") else {
        return;
    };
    let peer = Peer::start(&python, &["--no-streaming"]);
    block_on(async {
        let runtime = runtime_with(&peer, |o| o).await;
        let done = runtime
            .send_and_wait("peer", Message::user_text("fail now"))
            .await
            .expect("sent");
        assert_eq!(done.task.status.state, TaskState::Failed);
        let reason = reply_text(&done.task);
        assert!(reason.contains("remote agent `peer`"), "{reason}");
        assert!(reason.contains(&peer.base), "{reason}");
        assert!(reason.contains("the peer failed on purpose"), "{reason}");
    });
}

#[test]
fn a_peer_killed_mid_stream_fails_the_local_task_naming_the_peer() {
    let Some(python) = python("remote-killed") else {
        return;
    };
    let mut peer = Peer::start(&python, &[]);
    block_on(async {
        let peer_handle = RemotePeer::connect("peer", RemoteOptions::new(peer.card()))
            .await
            .expect("connected");
        let runtime = Runtime::builder()
            .remote_peer(&peer_handle)
            .build()
            .await
            .expect("runtime");
        let mut stream = Box::pin(
            runtime
                .stream("peer", Message::user_text("slow stream"))
                .await
                .expect("a stream"),
        );
        // Wait until the peer works on it, then kill the peer.
        let mut task_id = None;
        while let Some(event) = stream.next().await {
            if let StreamEvent::StatusUpdate(update) = &event
                && update.status.state == TaskState::Working
                && peer_handle.remote_ids(&update.task_id).is_some()
            {
                task_id = Some(update.task_id.clone());
                break;
            }
        }
        let task_id = task_id.expect("the task works remotely");
        let _ = peer.child.kill();
        let _ = peer.child.wait();
        let task = poll("the local task failed", || {
            let runtime = runtime.clone();
            let id = task_id.clone();
            async move {
                let task = runtime.get_task(&id, Some(0)).await.ok()?;
                task.status.state.is_terminal().then_some(task)
            }
        })
        .await;
        assert_eq!(task.status.state, TaskState::Failed);
        let reason = reply_text(&task);
        assert!(reason.contains("remote agent `peer`"), "{reason}");
        assert!(reason.contains("disappeared mid-task"), "{reason}");
    });
}

/// A local agent that sends the text it gets to `peer` and replies with the answer.
struct Forward;

impl Agent for Forward {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        let settled = ctx.send_and_wait("peer", Message::user_text(text)).await?;
        let answer = settled
            .task
            .status
            .message
            .map(|m| m.text())
            .unwrap_or_default();
        ctx.reply_text(answer);
        Ok(())
    }
}

#[test]
fn hops_chain_trace_and_idempotency_key_go_out_with_the_call() {
    let Some(python) = python("remote-meta") else {
        return;
    };
    let peer = Peer::start(&python, &[]);
    block_on(async {
        let runtime = Runtime::builder()
            .agent(AgentDescriptor::new("forward"), |_| Forward)
            .remote("peer", peer.card())
            .build()
            .await
            .expect("runtime");
        let mut metadata = agentyard::a2a::Metadata::new();
        let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        metadata.insert("traceparent".to_owned(), incoming.into());
        let request =
            SendRequest::new("forward", Message::user_text("meta")).metadata(Some(metadata));
        let done = runtime
            .supervisor()
            .send_and_wait(request)
            .await
            .expect("sent");
        assert_eq!(
            done.task.status.state,
            TaskState::Completed,
            "{:?}",
            done.task
        );
        let seen: serde_json::Value =
            serde_json::from_str(&reply_text(&done.task)).expect("the peer's JSON");
        assert_eq!(seen["metadata"]["agentyard.dev/hops"], 2, "{seen}");
        let chain = seen["metadata"]["agentyard.dev/chain"]
            .as_array()
            .expect("a chain")
            .clone();
        assert_eq!(chain.len(), 1, "{seen}");
        assert!(
            chain[0]
                .as_str()
                .is_some_and(|entry| entry.ends_with("/forward")),
            "{seen}"
        );
        let traceparent = seen["traceparent"].as_str().expect("a traceparent");
        assert!(
            traceparent.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"),
            "{traceparent}"
        );
        assert_ne!(traceparent, incoming, "a new span of the same trace");
        assert!(
            seen["idempotencyKey"]
                .as_str()
                .is_some_and(|key| !key.is_empty()),
            "{seen}"
        );
    });
}

/// Delegates a typed payload to `peer` with the text `meta`.
struct TypedForward;

impl Agent for TypedForward {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let payload = agentyard::handoff::TaskDelegation::builder()
            .task_id("job-1")
            .task_title("Look")
            .task_description("Look at it.")
            .build()?;
        let settled = ctx.delegate("peer", "meta", payload.into()).await?;
        let answer = settled
            .task
            .status
            .message
            .map(|m| m.text())
            .unwrap_or_default();
        ctx.reply_text(answer);
        Ok(())
    }
}

#[test]
fn a_typed_handoff_reaches_a_peer_without_the_extension_as_free_text() {
    let Some(python) = python("remote-free-text") else {
        return;
    };
    let peer = Peer::start(&python, &[]);
    block_on(async {
        let runtime = Runtime::builder()
            .agent(AgentDescriptor::new("typed"), |_| TypedForward)
            .remote("peer", peer.card())
            .build()
            .await
            .expect("runtime");
        let done = runtime
            .send_and_wait("typed", Message::user_text("go"))
            .await
            .expect("sent");
        assert_eq!(
            done.task.status.state,
            TaskState::Completed,
            "{:?}",
            done.task
        );
        let seen: serde_json::Value =
            serde_json::from_str(&reply_text(&done.task)).expect("the peer's JSON");
        assert_eq!(seen["parts"], serde_json::json!(["text"]), "{seen}");
        assert!(seen["extensions"].is_null(), "nothing activated: {seen}");
    });
}

#[test]
fn an_unreachable_card_at_start_is_an_error_or_a_retrying_state() {
    block_on(async {
        let nowhere = "http://127.0.0.1:9/.well-known/agent-card.json";
        let error = Runtime::builder()
            .remote_with(
                "gone",
                RemoteOptions::new(nowhere).connect_timeout(Duration::from_millis(500)),
            )
            .build()
            .await
            .expect_err("the card is unreachable");
        let text = error.to_string();
        assert!(
            text.contains("remote agent `gone`") && text.contains(nowhere),
            "{text}"
        );

        let runtime = Runtime::builder()
            .remote_with(
                "gone",
                RemoteOptions::new(nowhere)
                    .connect_timeout(Duration::from_millis(500))
                    .start(agentyard::remote::StartMode::Retry),
            )
            .build()
            .await
            .expect("retrying instead");
        let done = runtime
            .send_and_wait("gone", Message::user_text("hi"))
            .await
            .expect("sent");
        assert_eq!(done.task.status.state, TaskState::Failed);
        let reason = reply_text(&done.task);
        assert!(
            reason.contains("remote agent `gone`") && reason.contains("unreachable"),
            "{reason}"
        );
    });
}
