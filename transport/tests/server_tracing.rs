//! The tracing span around each JSON-RPC request. Alone in its own test binary:
//! tracing caches per call site whether anyone listens, so a test on another thread
//! without a subscriber could hide the spans from this one.

// This binary uses a few of the mock's agents and helpers, not all.
#[allow(dead_code)]
#[path = "wire/mock.rs"]
mod mock;

use agentyard_transport::server::{EXTENSIONS_HEADER, ServerConfig, app};
use axum::body::Body;
use axum::http::Request;
use mock::{MockService, REQUIRED_EXT};
use serde_json::{Value, json};
use tower::ServiceExt as _;

/// Posts `body` to `path` on a fresh router and returns the JSON answer.
async fn call(path: &str, body: Value) -> Value {
    let router = app(
        MockService::new("http://agents.test"),
        ServerConfig::default(),
    );
    let request = Request::post(path)
        .header("content-type", "application/json")
        .header(EXTENSIONS_HEADER, REQUIRED_EXT)
        .body(Body::from(body.to_string()))
        .expect("a valid request");
    let response = router.oneshot(request).await.expect("infallible");
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a readable body");
    serde_json::from_slice(&bytes).expect("a JSON answer")
}

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;

type Fields = BTreeMap<String, String>;

/// Collects the fields of every closed `a2a.jsonrpc` span, of every info event
/// named `request` (the per-request log line), and counts the closed `request`
/// spans (one per HTTP request).
#[derive(Clone, Default)]
struct Capture(
    Arc<Mutex<Vec<Fields>>>,
    Arc<Mutex<Vec<Fields>>>,
    Arc<Mutex<usize>>,
);

struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S> Layer<S> for Capture
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != "a2a.jsonrpc" {
            return;
        }
        let mut fields = Fields::new();
        attrs.record(&mut Visitor(&mut fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(&mut Visitor(fields));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        event.record(&mut Visitor(&mut fields));
        if *event.metadata().level() == tracing::Level::INFO
            && fields.get("message").map(String::as_str) == Some("request")
        {
            self.1.lock().expect("not poisoned").push(fields);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if ctx.span(&id).is_some_and(|span| span.name() == "request") {
            *self.2.lock().expect("not poisoned") += 1;
        }
        if let Some(span) = ctx.span(&id)
            && let Some(fields) = span.extensions_mut().remove::<Fields>()
        {
            self.0.lock().expect("not poisoned").push(fields);
        }
    }
}

#[tokio::test]
async fn each_request_gets_a_span_with_method_rpc_id_and_agent() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);

    let send = json!({"jsonrpc": "2.0", "id": "s-1", "method": "message/send",
        "params": {"message": {"kind": "message", "messageId": "m", "role": "user",
                               "parts": [{"kind": "text", "text": "hi"}]}}});
    let answer = call("/agents/strict", send).await;
    assert_eq!(answer["result"]["kind"], "task", "{answer}");
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": "t"}});
    let answer = call("/agents/open", get).await;
    assert_eq!(answer["result"]["id"], "t", "{answer}");
    // A request rejected before its method is known still gets a span.
    let answer = call("/agents/open", json!([])).await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");

    let spans = capture.0.lock().expect("not poisoned").clone();
    let expected = [
        ("strict", Some("message/send"), Some("s-1")),
        ("open", Some("tasks/get"), Some("2")),
        ("open", None, None),
    ];
    assert_eq!(spans.len(), expected.len(), "{spans:#?}");
    for (fields, (agent, method, rpc_id)) in spans.iter().zip(expected) {
        assert_eq!(
            fields.get("agent").map(String::as_str),
            Some(agent),
            "{fields:?}"
        );
        assert_eq!(
            fields.get("method").map(String::as_str),
            method,
            "{fields:?}"
        );
        assert_eq!(
            fields.get("rpc_id").map(String::as_str),
            rpc_id,
            "{fields:?}"
        );
    }
}

#[tokio::test]
async fn each_request_gets_one_info_line_with_agent_method_status_and_duration() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);

    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": "t"}});
    call("/agents/open", get).await;
    let missing = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"id": "t"}});
    call("/agents/hidden", missing).await;

    let lines = capture.1.lock().expect("not poisoned").clone();
    assert_eq!(lines.len(), 2, "{lines:#?}");
    let field = |i: usize, name: &str| lines[i].get(name).cloned().unwrap_or_default();
    assert_eq!(field(0, "agent"), "open", "{lines:#?}");
    assert_eq!(field(0, "rpc_method"), "tasks/get", "{lines:#?}");
    assert_eq!(field(0, "status"), "200", "{lines:#?}");
    assert!(field(0, "duration_ms").parse::<f64>().is_ok(), "{lines:#?}");
    assert!(!lines[0].contains_key("rpc_error"), "{lines:#?}");
    assert_eq!(field(1, "status"), "404", "{lines:#?}");
    assert_eq!(field(1, "rpc_error"), "-32600", "{lines:#?}");
}

#[tokio::test]
async fn a_streamed_answer_keeps_its_request_span_open_until_the_body_is_gone() {
    use futures::StreamExt as _;

    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);

    let router = app(
        MockService::new("http://agents.test"),
        ServerConfig::default(),
    );
    let stream = json!({"jsonrpc": "2.0", "id": 1, "method": "message/stream",
        "params": {"message": {"kind": "message", "messageId": "m", "role": "user",
                               "parts": [{"kind": "text", "text": "forever"}]}}});
    let request = Request::post("/agents/open")
        .header("content-type", "application/json")
        .header(EXTENSIONS_HEADER, REQUIRED_EXT)
        .body(Body::from(stream.to_string()))
        .expect("a valid request");
    let response = router.oneshot(request).await.expect("infallible");
    let mut body = response.into_body().into_data_stream();
    let first = body.next().await.expect("an event").expect("readable");
    assert!(
        String::from_utf8_lossy(&first).contains("\"kind\":\"task\""),
        "{first:?}"
    );
    // The line is written when the stream starts; the span lasts as long as it.
    assert_eq!(capture.1.lock().expect("not poisoned").len(), 1);
    assert_eq!(*capture.2.lock().expect("not poisoned"), 0);
    drop(body);
    assert_eq!(*capture.2.lock().expect("not poisoned"), 1);
}
