//! One trace across two `agentyard serve` processes: a request with a `traceparent`
//! reaches a remote agent in a second process and sets a push webhook. Both processes
//! export their spans with OTLP (HTTP, JSON) to a fake collector on 127.0.0.1; the
//! test checks that every span of the request is in the caller's trace, that they
//! hang together (edge → send → agent → remote call → the other process's edge →
//! its send → its agent), that the webhook got the trace, and that the JSON log lines
//! written inside a span name it. And a server stopped by SIGTERM exports the spans it
//! still held before it exits.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_agentyard");

/// How long the test waits for something the programs do promptly.
const PATIENCE: Duration = Duration::from_secs(30);

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// One span as the collector received it.
#[derive(Debug, Clone)]
struct Span {
    service: String,
    name: String,
    trace_id: String,
    span_id: String,
    parent: String,
}

/// A running `agentyard serve`, killed when dropped so that no server outlives a
/// failed test.
struct Serving {
    child: Child,
    base: String,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `agentyard serve --log-format json` with `config` on a free port in a
/// scratch directory, and returns it once it says where it listens.
fn serve(name: &str, config: &str, scratch: &std::path::Path) -> Serving {
    // Export every 50 ms rather than every 5 s: the test waits for the spans.
    serve_exporting_every(name, config, scratch, "50")
}

/// As [`serve`], the batched spans exported every `delay_ms`.
fn serve_exporting_every(
    name: &str,
    config: &str,
    scratch: &std::path::Path,
    delay_ms: &str,
) -> Serving {
    let dir = scratch.join(name);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join("agentyard.toml");
    std::fs::write(&path, config).expect("write the config");
    let mut child = Command::new(BIN)
        .current_dir(&dir)
        .args([
            "--log-format",
            "json",
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--config",
        ])
        .arg(&path)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env("RUST_LOG", "info")
        .env("OTEL_BSP_SCHEDULE_DELAY", delay_ms)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut err = child.stderr.take().expect("piped stderr");
    let sink = Arc::clone(&stderr);
    std::thread::spawn(move || {
        let mut buf = [0_u8; 4096];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .expect("lock")
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    let Some(Ok(first)) = lines.next() else {
        panic!(
            "{name} printed no address; stderr:\n{}",
            stderr.lock().expect("lock")
        );
    };
    let base = first.rsplit(' ').next().expect("a URL").to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{first}");
    // Keep reading stdout so the program never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Serving {
        child,
        base,
        stderr,
    }
}

/// A fake OTLP/HTTP collector (JSON encoding) and a webhook, on one loopback port.
#[derive(Clone, Default)]
struct Receiver {
    spans: Arc<Mutex<Vec<Span>>>,
    webhooks: Arc<Mutex<Vec<String>>>,
}

impl Receiver {
    async fn start(self) -> String {
        let spans = Arc::clone(&self.spans);
        let webhooks = Arc::clone(&self.webhooks);
        let app = axum::Router::new()
            .route(
                "/v1/traces",
                axum::routing::post(move |body: axum::body::Bytes| {
                    let spans = Arc::clone(&spans);
                    async move {
                        let Ok(export) = serde_json::from_slice::<Value>(&body) else {
                            return axum::http::StatusCode::BAD_REQUEST;
                        };
                        spans.lock().expect("spans").extend(read_spans(&export));
                        axum::http::StatusCode::OK
                    }
                }),
            )
            .route(
                "/hook",
                axum::routing::post(move |headers: HeaderMap| {
                    let webhooks = Arc::clone(&webhooks);
                    async move {
                        let traceparent = headers
                            .get("traceparent")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("(none)")
                            .to_owned();
                        webhooks.lock().expect("webhooks").push(traceparent);
                        axum::http::StatusCode::OK
                    }
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("an address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}")
    }

    fn spans(&self) -> Vec<Span> {
        self.spans.lock().expect("spans").clone()
    }
}

/// The spans of an OTLP `ExportTraceServiceRequest` in its JSON encoding (ids in hex).
fn read_spans(export: &Value) -> Vec<Span> {
    let mut spans = Vec::new();
    for resource in export["resourceSpans"].as_array().into_iter().flatten() {
        let service = resource["resource"]["attributes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|attribute| attribute["key"] == "service.name")
            .and_then(|attribute| attribute["value"]["stringValue"].as_str())
            .unwrap_or_default()
            .to_owned();
        for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
            for span in scope["spans"].as_array().into_iter().flatten() {
                let text = |key: &str| span[key].as_str().unwrap_or_default().to_owned();
                spans.push(Span {
                    service: service.clone(),
                    name: text("name"),
                    trace_id: text("traceId"),
                    span_id: text("spanId"),
                    parent: text("parentSpanId"),
                });
            }
        }
    }
    spans
}

/// Polls `check` until it gives a value, failing with `what` and `context()` after
/// [`PATIENCE`].
async fn eventually<T>(
    what: &str,
    mut check: impl FnMut() -> Option<T>,
    context: impl Fn() -> String,
) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(found) = check() {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "{what} never happened:\n{}",
            context()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn tracing_section(collector: &str, service: &str) -> String {
    format!(
        "[tracing]\notlp_endpoint = \"{collector}\"\nprotocol = \"http/json\"\n\
         service_name = \"{service}\"\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_traceparent_sent_in_spans_both_processes_and_the_webhook() {
    let receiver = Receiver::default();
    let at = receiver.clone().start().await;
    let scratch = tempfile::tempdir().expect("a scratch directory");

    let far = serve(
        "far",
        &format!(
            "[agents]\nexposed = [\"echo\"]\n\n{}",
            tracing_section(&at, "far")
        ),
        scratch.path(),
    );
    let near = serve(
        "near",
        &format!(
            "[agents]\nexposed = []\n\n[push]\nallow_private_addresses = true\n\n\
             [[remote]]\nname = \"faraway\"\nexpose = true\n\
             card_url = \"{}/agents/echo/.well-known/agent-card.json\"\n\n{}",
            far.base,
            tracing_section(&at, "near")
        ),
        scratch.path(),
    );

    let incoming = format!("00-{TRACE}-{CALLER_SPAN}-01");
    let answer: Value = reqwest::Client::new()
        .post(format!("{}/agents/faraway", near.base))
        .header("traceparent", &incoming)
        .json(&json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/send",
            "params": {
                "message": {
                    "kind": "message",
                    "role": "user",
                    "messageId": "m-1",
                    "parts": [{"kind": "text", "text": "across"}],
                },
                "configuration": {
                    "blocking": true,
                    "pushNotificationConfig": {"url": format!("{at}/hook")},
                },
            },
        }))
        .timeout(PATIENCE)
        .send()
        .await
        .expect("near answers")
        .json()
        .await
        .expect("a JSON-RPC response");
    assert_eq!(
        answer["result"]["status"]["state"],
        "completed",
        "{answer:#}\nnear:\n{}\nfar:\n{}",
        near.stderr.lock().expect("lock"),
        far.stderr.lock().expect("lock"),
    );

    // The webhook: the caller's trace, a parent of near's own.
    let delivered = eventually(
        "a webhook delivery of the completed task",
        || {
            let webhooks = receiver.webhooks.lock().expect("webhooks").clone();
            (webhooks.len() >= 2).then_some(webhooks)
        },
        || format!("{:?}", receiver.webhooks.lock().expect("webhooks")),
    )
    .await;
    for traceparent in &delivered {
        assert!(
            traceparent.starts_with(&format!("00-{TRACE}-")),
            "{traceparent}"
        );
        assert!(!traceparent.contains(CALLER_SPAN), "{traceparent}");
    }

    // Every span both processes made for the request, in the caller's trace.
    let wanted = [
        ("near", "request"),
        ("near", "a2a.jsonrpc"),
        ("near", "a2a.send"),
        ("near", "agent.handle"),
        ("near", "a2a.remote"),
        ("near", "a2a.push"),
        ("far", "request"),
        ("far", "a2a.jsonrpc"),
        ("far", "a2a.send"),
        ("far", "agent.handle"),
    ];
    let spans = eventually(
        "every span of the request at the collector",
        || {
            let spans: Vec<Span> = receiver
                .spans()
                .into_iter()
                .filter(|span| span.trace_id == TRACE)
                .collect();
            wanted
                .iter()
                .all(|(service, name)| {
                    spans
                        .iter()
                        .any(|span| span.service == *service && span.name == *name)
                })
                .then_some(spans)
        },
        || format!("{:#?}", receiver.spans()),
    )
    .await;
    let by_id: HashMap<&str, &Span> = spans.iter().map(|s| (s.span_id.as_str(), s)).collect();
    let one = |service: &str, name: &str| -> &Span {
        spans
            .iter()
            .find(|s| s.service == service && s.name == name)
            .unwrap_or_else(|| panic!("{service} {name} in {spans:#?}"))
    };
    let parent_of = |span: &Span| -> String {
        by_id.get(span.parent.as_str()).map_or_else(
            || format!("(outside: {})", span.parent),
            |p| format!("{} {}", p.service, p.name),
        )
    };

    // near: the caller's span is the parent of near's edge, and each step is the
    // child of the one before.
    assert_eq!(one("near", "request").parent, CALLER_SPAN);
    for (child, parent) in [
        ("a2a.jsonrpc", "request"),
        ("a2a.send", "a2a.jsonrpc"),
        ("agent.handle", "a2a.send"),
        ("a2a.remote", "agent.handle"),
        ("a2a.push", "a2a.jsonrpc"),
    ] {
        let span = one("near", child);
        assert_eq!(
            span.parent,
            one("near", parent).span_id,
            "near {child}'s parent is {}",
            parent_of(span)
        );
    }
    // far: its edge hangs under near's remote call, the rest under its edge.
    let remote = &one("near", "a2a.remote").span_id;
    let far_requests: Vec<&Span> = spans
        .iter()
        .filter(|s| s.service == "far" && s.name == "request")
        .collect();
    assert!(
        far_requests.iter().all(|s| &s.parent == remote),
        "every call far got is a child of near's remote call: {far_requests:#?}"
    );
    let far_send = one("far", "a2a.send");
    let far_jsonrpc = by_id
        .get(far_send.parent.as_str())
        .expect("far's send has its parent in the trace");
    assert_eq!(far_jsonrpc.name, "a2a.jsonrpc");
    assert!(
        far_requests.iter().any(|r| r.span_id == far_jsonrpc.parent),
        "far's JSON-RPC span is under one of its requests"
    );
    assert_eq!(one("far", "agent.handle").parent, far_send.span_id);
    // The webhook's parent is near's delivery span.
    let pushes: Vec<&str> = spans
        .iter()
        .filter(|s| s.name == "a2a.push")
        .map(|s| s.span_id.as_str())
        .collect();
    assert!(
        delivered
            .iter()
            .any(|tp| pushes.iter().any(|id| tp.contains(&format!("-{id}-")))),
        "a webhook's traceparent names a delivery span: {delivered:?} {pushes:?}"
    );

    // JSON log lines written inside the request's spans name its trace.
    let logs = near.stderr.lock().expect("lock").clone();
    let in_trace = logs
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["trace_id"] == TRACE);
    let line = in_trace.unwrap_or_else(|| panic!("no log line names the trace:\n{logs}"));
    assert_eq!(line["span_id"].as_str().map(str::len), Some(16), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_still_batched_are_exported_when_the_server_stops() {
    let receiver = Receiver::default();
    let at = receiver.clone().start().await;
    let scratch = tempfile::tempdir().expect("a scratch directory");
    // A batch would wait ten minutes: only the flush at shutdown sends it.
    let mut serving = serve_exporting_every(
        "stopping",
        &tracing_section(&at, "stopping"),
        scratch.path(),
        "600000",
    );
    let incoming = format!("00-{TRACE}-{CALLER_SPAN}-01");
    let answer: Value = reqwest::Client::new()
        .post(format!("{}/agents/echo", serving.base))
        .header("traceparent", &incoming)
        .json(&json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/send",
            "params": {"message": {
                "kind": "message",
                "role": "user",
                "messageId": "m-1",
                "parts": [{"kind": "text", "text": "before stopping"}],
            }},
        }))
        .timeout(PATIENCE)
        .send()
        .await
        .expect("it answers")
        .json()
        .await
        .expect("a JSON-RPC response");
    assert!(answer.get("result").is_some(), "{answer:#}");
    assert!(
        receiver.spans().is_empty(),
        "nothing is exported before the batch is due"
    );

    let status = Command::new("kill")
        .args(["-TERM", &serving.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let exit = eventually(
        "the server's exit",
        || serving.child.try_wait().expect("wait"),
        || serving.stderr.lock().expect("lock").clone(),
    )
    .await;
    assert!(exit.success(), "{exit}");
    // Exported before the process exited: already at the collector.
    let spans = receiver.spans();
    for name in ["request", "a2a.jsonrpc", "a2a.send", "agent.handle"] {
        assert!(
            spans
                .iter()
                .any(|span| span.name == name && span.trace_id == TRACE),
            "{name} was exported at shutdown: {spans:#?}"
        );
    }
}
