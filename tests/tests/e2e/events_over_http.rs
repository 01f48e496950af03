//! `GET /events`: the runtime's events as SSE, filtered by agent (`to` or `from`),
//! context and kind (exact names, or a prefix ending in `*`), behind the A2A
//! credentials; an unknown kind is 400 naming it; a reader that stops reading is told
//! how many events it missed (`event: lagged`) while the agents go on at full speed.

use std::time::Duration;

use agentyard::{AgentDescriptor, ContextId, EdgeAuth, HttpConfig, HttpServer, Message, Runtime};
use agentyard_tests::{Echo, PATIENCE, within};
use futures::StreamExt as _;
use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// One SSE event: its `event:` name and its `data:` as JSON.
#[derive(Debug)]
struct Sse {
    name: String,
    data: Value,
}

/// Reads SSE events from `response` until `done` says the last one read is enough.
async fn read_until(response: reqwest::Response, done: impl Fn(&Sse) -> bool) -> Vec<Sse> {
    let mut body = response.bytes_stream();
    let mut buffer = String::new();
    let mut events = Vec::new();
    let read = async {
        while let Some(chunk) = body.next().await {
            buffer.push_str(&String::from_utf8_lossy(&chunk.expect("the stream reads")));
            while let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                if let Some(event) = parse(&block) {
                    let enough = done(&event);
                    events.push(event);
                    if enough {
                        return;
                    }
                }
            }
        }
        panic!("the stream ended early");
    };
    within(PATIENCE, "the events awaited", read).await;
    events
}

/// An SSE block as an event; `None` for a keep-alive comment.
fn parse(block: &str) -> Option<Sse> {
    let mut name = None;
    let mut data = String::new();
    for line in block.lines() {
        if let Some(value) = line.strip_prefix("event:") {
            name = Some(value.trim().to_owned());
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push_str(value.trim_start());
        }
    }
    Some(Sse {
        name: name?,
        data: serde_json::from_str(&data).expect("data is JSON"),
    })
}

async fn start(auth: EdgeAuth, event_capacity: usize) -> (Runtime, HttpServer) {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("echo").expose(), |_| Echo::default())
        .agent(AgentDescriptor::new("other").expose(), |_| Echo::default())
        .event_capacity(event_capacity)
        .build()
        .await
        .expect("the runtime starts");
    let server = runtime
        .serve(HttpConfig::default().auth(auth))
        .await
        .expect("the server starts");
    (runtime, server)
}

async fn open(server: &HttpServer, query: &str) -> reqwest::Response {
    let response = reqwest::get(format!("{}/events{query}", server.base_url()))
        .await
        .expect("the events answer");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    response
}

#[tokio::test]
async fn events_are_filtered_by_agent_and_kind() {
    let (runtime, server) = start(EdgeAuth::default(), 1024).await;
    // Subscribed once the answer's head is here.
    let stream = open(&server, "?agent=echo&kind=a2a.send.*").await;
    runtime
        .send_and_wait("other", Message::user_text("not this one"))
        .await
        .expect("a send");
    runtime
        .send_and_wait("echo", Message::user_text("this one"))
        .await
        .expect("a send");
    let events = read_until(stream, |event| event.name == "a2a.send.completed").await;
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["a2a.send.initiated", "a2a.send.completed"]);
    for event in &events {
        assert_eq!(event.data["to"], "echo");
        assert_eq!(event.data["type"], event.name);
        assert_eq!(event.data["entryPoint"], "api");
    }
    server.stop().await;
    runtime.shutdown(PATIENCE).await;
}

#[tokio::test]
async fn events_are_filtered_by_context() {
    let (runtime, server) = start(EdgeAuth::default(), 1024).await;
    let context = ContextId::new("c-watched");
    let stream = open(
        &server,
        "?context=c-watched&kind=a2a.send.completed,a2a.task.status",
    )
    .await;
    runtime
        .send_and_wait("echo", Message::user_text("elsewhere"))
        .await
        .expect("a send");
    let mut watched = Message::user_text("here");
    watched.context_id = Some(context.clone());
    runtime
        .send_and_wait("echo", watched)
        .await
        .expect("a send");
    let events = read_until(stream, |event| event.name == "a2a.send.completed").await;
    assert!(
        events.iter().any(|e| e.name == "a2a.task.status"),
        "{events:?}"
    );
    for event in &events {
        assert_eq!(event.data["contextId"], context.as_str(), "{event:?}");
    }
    server.stop().await;
    runtime.shutdown(PATIENCE).await;
}

#[tokio::test]
async fn events_take_the_a2a_credentials_and_refuse_an_unknown_kind() {
    let (runtime, server) = start(EdgeAuth::default().bearer_token("t-1", "ops"), 1024).await;
    let url = format!("{}/events", server.base_url());
    let http = reqwest::Client::new();
    let refused = http.get(&url).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let wrong = http.get(&url).bearer_auth("t-2").send().await.unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let accepted = http.get(&url).bearer_auth("t-1").send().await.unwrap();
    assert_eq!(accepted.status(), StatusCode::OK);
    drop(accepted);
    let bad = http
        .get(format!("{url}?kind=a2a.send.completed,a2a.send.done"))
        .bearer_auth("t-1")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    let text = bad.text().await.unwrap();
    assert!(text.contains("`a2a.send.done`"), "{text}");
    server.stop().await;
    runtime.shutdown(PATIENCE).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_stops_reading_is_told_what_it_missed_and_never_slows_the_agents() {
    const SENDS: usize = 3_000;
    // A small bus, so that a reader stuck for a few hundred events lags.
    let (runtime, server) = start(EdgeAuth::default(), 8).await;
    // A reader with a tiny receive window that reads nothing while the sends go on.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut reader = socket.connect(server.local_addr()).await.unwrap();
    reader
        .write_all(b"GET /events HTTP/1.1\r\nHost: agentyard\r\n\r\n")
        .await
        .unwrap();
    let mut head = [0_u8; 256];
    let n = within(PATIENCE, "the stream's head", reader.read(&mut head))
        .await
        .unwrap();
    assert!(String::from_utf8_lossy(&head[..n]).starts_with("HTTP/1.1 200"));

    // The agents go on at full speed: every send completes while nobody reads.
    let sends = async {
        for n in 0..SENDS {
            runtime
                .send_and_wait("echo", Message::user_text(format!("m{n}")))
                .await
                .expect("a send");
        }
    };
    within(
        Duration::from_secs(60),
        "every send while the reader is stuck",
        sends,
    )
    .await;

    // Reading again, the reader learns how many events went by without it.
    let mut text = String::new();
    let mut buffer = vec![0_u8; 64 * 1024];
    let missed = within(PATIENCE, "a lagged event", async {
        loop {
            let n = reader.read(&mut buffer).await.unwrap();
            assert!(n > 0, "the stream ended without a lagged event");
            text.push_str(&String::from_utf8_lossy(&buffer[..n]));
            if let Some(at) = text.find("event: lagged\ndata: ") {
                let rest = &text[at + "event: lagged\ndata: ".len()..];
                if let Some(end) = rest.find('\n') {
                    let data: Value = serde_json::from_str(&rest[..end]).unwrap();
                    return data["missed"].as_u64().expect("a count");
                }
            }
        }
    })
    .await;
    assert!(missed > 0);
    server.stop().await;
    runtime.shutdown(PATIENCE).await;
}

#[tokio::test]
async fn workflow_node_events_reach_the_stream() {
    use agentyard::workflow::runner::{RunControl, RunOutcome};
    use agentyard::workflow::{Tools, Workflow, Workflows};

    let exposed: Vec<String> = agentyard::builtin::EXPOSED
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let runtime = agentyard::builtin::register(Runtime::builder(), &exposed)
        .build()
        .await
        .expect("the runtime starts");
    let server = runtime
        .serve(HttpConfig::default())
        .await
        .expect("the server starts");
    let workflows = Workflows::new(Tools::builtin());
    workflows.bind(runtime.supervisor().clone());
    let workflow = Workflow::builder("review")
        .input("topic")
        .agent("draft", "echo", "a note on {{topic}}")
        .tool("shout", "upper", Some("{{draft}}"))
        .output("out", ["shout"])
        .build(&workflows.catalog())
        .expect("valid");

    let stream = open(&server, "?agent=review&kind=workflow.node.*").await;
    let report = workflows
        .runner()
        .expect("bound")
        .run(
            std::sync::Arc::new(workflow),
            "actors".into(),
            RunControl::new(),
        )
        .await;
    assert!(
        matches!(report.outcome, RunOutcome::Completed(_)),
        "{:?}",
        report.outcome
    );
    let events = read_until(stream, |event| {
        event.name == "workflow.node.completed" && event.data["node"] == "out"
    })
    .await;
    let seen: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            (
                e.name.clone(),
                e.data["node"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for node in ["draft", "shout", "out"] {
        let started = seen
            .iter()
            .position(|s| *s == ("workflow.node.started".into(), node.into()));
        let completed = seen
            .iter()
            .position(|s| *s == ("workflow.node.completed".into(), node.into()));
        assert!(started.is_some() && started < completed, "{node}: {seen:?}");
    }
    let draft = events
        .iter()
        .find(|e| e.data["node"] == "draft")
        .expect("the agent node's events");
    assert_eq!(draft.data["from"], "review");
    assert_eq!(draft.data["to"], "echo");
    assert_eq!(draft.data["workflow"], "review");
    assert_eq!(draft.data["entryPoint"], "workflow");
    assert_eq!(draft.data["detail"], "workflowNode");
    server.stop().await;
    runtime.shutdown(PATIENCE).await;
}
