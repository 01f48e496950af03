//! Helpers for the A2A end-to-end tests: a runtime with small agents behind a real
//! HTTP edge on 127.0.0.1 (an ephemeral port), raw JSON-RPC and SSE over HTTP for what
//! the typed client cannot send (malformed input, odd headers), a local webhook
//! receiver for push notifications. Waiting is [`crate::eventually`]'s, as everywhere.
//!
//! The agents of [`TestEdge`] (every one exposed but `internal`), registered under
//! these names; their types are in [`crate::agents`]:
//!
//! | agent | type | does |
//! |---|---|---|
//! | `echo` | [`Echo`] | replies `echo: {text}` |
//! | `gated` | [`Turnstile`] | publishes `working`, then waits for [`TestEdge::open_gate`] (or a cancel), then replies `done: {text}` |
//! | `probe` | [`PayloadProbe`] | replies with what it received: `{payloadType}: {taskTitle}` for a typed delegation, `free: {text}` otherwise |
//! | `ask` | [`Interviewer`] | asks a question (input-required), then completes with `answer: {text}` |
//! | `chunks` | [`ChunkCounter`] | streams three `working` updates and three artifact chunks, then replies `counted` |
//! | `texty` | [`Echo`] | like `echo`, but accepts and produces only `text/plain` |
//! | `internal` | [`Echo`] | like `echo`, not exposed |

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentyard::client::{A2aClient, ClientOptions};
use agentyard::edge::{Edge, EdgeConfig};
use agentyard::{AgentDescriptor, Runtime, RuntimeBuilder};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::agents::{ChunkCounter, Echo, Interviewer, PayloadProbe, Turnstile};
use crate::wait::{PATIENCE, eventually};

/// A runtime with the test agents, served by an edge on 127.0.0.1.
#[derive(Debug)]
pub struct TestEdge {
    /// The runtime.
    pub runtime: Runtime,
    /// The edge.
    pub edge: Edge,
    gate: Turnstile,
    http: reqwest::Client,
}

fn descriptor(name: &str) -> AgentDescriptor {
    AgentDescriptor::new(name)
        .description(format!("the test agent `{name}`"))
        .expose()
}

impl TestEdge {
    /// The default edge: push notifications allowed to loopback webhooks, fast retries.
    pub async fn start() -> Self {
        Self::start_with(Self::config()).await
    }

    /// The configuration [`start`](Self::start) uses, to adjust.
    #[must_use]
    pub fn config() -> EdgeConfig {
        EdgeConfig::default().push(
            agentyard::edge::PushConfig::default()
                .allow_loopback(true)
                .retries(4, Duration::from_millis(20), Duration::from_millis(200))
                .request_timeout(Duration::from_secs(5)),
        )
    }

    /// An edge with this configuration.
    ///
    /// # Panics
    /// If the runtime or the edge cannot start.
    pub async fn start_with(config: EdgeConfig) -> Self {
        Self::start_custom(config, |builder| builder).await
    }

    /// An edge with this configuration, over a runtime whose builder `customize`
    /// adjusts (policy, limits) after the test agents are registered.
    ///
    /// # Panics
    /// If the runtime or the edge cannot start.
    pub async fn start_custom(
        config: EdgeConfig,
        customize: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder,
    ) -> Self {
        let gate = Turnstile::default();
        let text = || vec!["text/plain".to_owned()];
        let gated = gate.clone();
        let runtime = Runtime::builder()
            .agent(descriptor("echo"), |_| Echo::default())
            .agent(descriptor("gated"), move |_| gated.clone())
            .agent(descriptor("probe"), |_| PayloadProbe)
            .agent(descriptor("ask"), |_| Interviewer)
            .agent(descriptor("chunks"), |_| ChunkCounter)
            .agent(descriptor("texty").modes(text(), text()), |_| {
                Echo::default()
            })
            .agent(AgentDescriptor::new("internal"), |_| Echo::default());
        let runtime = customize(runtime)
            .build()
            .await
            .expect("the runtime starts");
        let edge = Edge::start(runtime.supervisor().clone(), config)
            .await
            .expect("the edge starts");
        Self {
            runtime,
            edge,
            gate,
            http: reqwest::Client::new(),
        }
    }

    /// Lets `n` waiting `gated` tasks finish.
    pub fn open_gate(&self, n: usize) {
        self.gate.let_through(n);
    }

    /// `http://127.0.0.1:{port}`: where the edge listens (cards may name a public
    /// URL instead, which a test never connects to).
    #[must_use]
    pub fn base_url(&self) -> String {
        format!("http://{}", self.edge.local_addr())
    }

    /// The JSON-RPC endpoint of an agent, on the listening address.
    #[must_use]
    pub fn agent_url(&self, agent: &str) -> String {
        format!("{}/agents/{agent}", self.base_url())
    }

    /// Where an agent's card is served, on the listening address.
    #[must_use]
    pub fn card_url(&self, agent: &str) -> String {
        format!("{}/.well-known/agent-card.json", self.agent_url(agent))
    }

    /// A typed A2A client for an agent, made from its card.
    ///
    /// # Panics
    /// If the card cannot be fetched.
    pub async fn client(&self, agent: &str) -> A2aClient {
        self.client_with(agent, ClientOptions::new()).await
    }

    /// A typed A2A client for an agent with these options (extensions, credentials).
    /// It speaks A2A 0.3 unless the options force a version: these suites check the
    /// 0.3 wire, and the card would otherwise pick 1.0.
    ///
    /// # Panics
    /// If the card cannot be fetched.
    pub async fn client_with(&self, agent: &str, options: ClientOptions) -> A2aClient {
        let options = match options.forced_version() {
            Some(_) => options,
            None => options.protocol_version(agentyard::a2a::v1::ProtocolVersion::V0_3),
        };
        A2aClient::connect(&self.card_url(agent), options)
            .await
            .expect("the agent's card is served")
    }

    /// A plain HTTP client.
    #[must_use]
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// POSTs `body` as-is to `path` with `content-type: application/json` and the
    /// extra `headers`, and returns the status, headers and the body as JSON
    /// (`Value::Null` when it is not JSON).
    pub async fn post_raw(
        &self,
        path: &str,
        body: impl Into<reqwest::Body>,
        headers: &[(&str, &str)],
    ) -> (StatusCode, HeaderMap, Value) {
        let mut request = self
            .http
            .post(format!("{}{path}", self.base_url()))
            .header("content-type", "application/json")
            .body(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.expect("a body");
        let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, headers, value)
    }

    /// Calls `method` on `agent` with `params` and returns the JSON-RPC response.
    pub async fn rpc(&self, agent: &str, method: &str, params: Value) -> Value {
        self.rpc_with(agent, method, params, &[]).await.2
    }

    /// [`rpc`](Self::rpc) with extra headers, returning status and headers too.
    pub async fn rpc_with(
        &self,
        agent: &str,
        method: &str,
        params: Value,
        headers: &[(&str, &str)],
    ) -> (StatusCode, HeaderMap, Value) {
        let body = json!({"jsonrpc": "2.0", "id": "t-1", "method": method, "params": params});
        self.post_raw(&format!("/agents/{agent}"), body.to_string(), headers)
            .await
    }

    /// Calls a streaming method and returns every SSE `data:` payload as JSON, in
    /// order, reading until the server closes the stream.
    pub async fn sse(&self, agent: &str, method: &str, params: Value) -> Vec<Value> {
        let body = json!({"jsonrpc": "2.0", "id": "s-1", "method": method, "params": params});
        let mut response = self
            .http
            .post(self.agent_url(agent))
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(body.to_string())
            .send()
            .await
            .expect("the server answers");
        let mut text = String::new();
        while let Some(chunk) = tokio::time::timeout(PATIENCE, response.chunk())
            .await
            .expect("the stream goes on or ends in time")
            .expect("a chunk")
        {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        sse_data(&text)
    }

    /// POSTs a JSON-RPC request to a streaming method and reads the whole answer:
    /// the status, the headers and the JSON of every SSE `data:` field (an
    /// `application/json` answer, which a streaming client cannot read, gives none).
    pub async fn sse_raw(
        &self,
        agent: &str,
        request: Value,
    ) -> (StatusCode, HeaderMap, Vec<Value>) {
        let mut response = self
            .http
            .post(self.agent_url(agent))
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(request.to_string())
            .send()
            .await
            .expect("the server answers");
        let status = response.status();
        let headers = response.headers().clone();
        let mut text = String::new();
        while let Some(chunk) = tokio::time::timeout(PATIENCE, response.chunk())
            .await
            .expect("the stream goes on or ends in time")
            .expect("a chunk")
        {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        (status, headers, sse_data(&text))
    }

    /// POSTs a JSON-RPC request to a streaming method with extra headers (such as
    /// `Last-Event-ID`) and reads every SSE event to the end: its `id:` (if any) and
    /// the JSON of its `data:`.
    pub async fn sse_numbered(
        &self,
        agent: &str,
        request: Value,
        headers: &[(&str, &str)],
    ) -> Vec<(Option<String>, Value)> {
        let mut post = self
            .http
            .post(self.agent_url(agent))
            .header("content-type", "application/json")
            .header("accept", "text/event-stream");
        for (name, value) in headers {
            post = post.header(*name, *value);
        }
        let mut response = post
            .body(request.to_string())
            .send()
            .await
            .expect("the server answers");
        let mut text = String::new();
        while let Some(chunk) = tokio::time::timeout(PATIENCE, response.chunk())
            .await
            .expect("the stream goes on or ends in time")
            .expect("a chunk")
        {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        sse_events(&text)
    }

    /// Stops the edge, then the runtime.
    pub async fn stop(self) {
        self.edge.stop().await;
        self.runtime.shutdown(Duration::from_secs(1)).await;
    }
}

/// The JSON of every `data:` field of an SSE body.
///
/// # Panics
/// If a `data:` field is not JSON.
#[must_use]
pub fn sse_data(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .map(|data| serde_json::from_str(&data).expect("every data line is JSON"))
        .collect()
}

/// Every SSE event of a body that has data: its `id:` field (if any) and the JSON of
/// its `data:`.
///
/// # Panics
/// If a `data:` field is not JSON.
#[must_use]
pub fn sse_events(body: &str) -> Vec<(Option<String>, Value)> {
    body.split("\n\n")
        .filter_map(|event| {
            let id = event
                .lines()
                .find_map(|line| line.strip_prefix("id:"))
                .map(|id| id.trim_start().to_owned());
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            (!data.is_empty()).then(|| (id, data.join("\n")))
        })
        .map(|(id, data)| {
            (
                id,
                serde_json::from_str(&data).expect("every data line is JSON"),
            )
        })
        .collect()
}

/// A user message as JSON with one text part.
#[must_use]
pub fn text_message(text: &str) -> Value {
    json!({
        "kind": "message",
        "messageId": format!("m-{}", uuid_like()),
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    })
}

/// A fresh id, unique in the process.
fn uuid_like() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// One request a [`WebhookReceiver`] got.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The request headers.
    pub headers: HeaderMap,
    /// The body, as JSON.
    pub body: Value,
    /// The status the receiver answered with.
    pub answered: u16,
}

#[derive(Debug, Default)]
struct ReceiverState {
    deliveries: Vec<Delivery>,
    /// Statuses to answer with, in order; 200 once they are used up.
    script: std::collections::VecDeque<u16>,
}

/// A webhook on 127.0.0.1 that records every POST and answers with a scripted
/// status (200 unless told otherwise).
#[derive(Debug)]
pub struct WebhookReceiver {
    addr: SocketAddr,
    state: Arc<Mutex<ReceiverState>>,
    server: tokio::task::JoinHandle<()>,
}

impl WebhookReceiver {
    /// Starts a receiver that answers the first requests with `script`, then 200.
    ///
    /// # Panics
    /// If it cannot bind 127.0.0.1.
    pub async fn start(script: &[u16]) -> Self {
        let state = Arc::new(Mutex::new(ReceiverState {
            deliveries: Vec::new(),
            script: script.iter().copied().collect(),
        }));
        let shared = Arc::clone(&state);
        let app = axum::Router::new().fallback(axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let shared = Arc::clone(&shared);
                async move {
                    let mut state = shared.lock().expect("receiver state");
                    let answered = state.script.pop_front().unwrap_or(200);
                    state.deliveries.push(Delivery {
                        headers: convert(&headers),
                        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                        answered,
                    });
                    axum::http::StatusCode::from_u16(answered).unwrap_or(axum::http::StatusCode::OK)
                }
            },
        ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("an address");
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            addr,
            state,
            server,
        }
    }

    /// The webhook's URL.
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// Every request so far.
    #[must_use]
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.state
            .lock()
            .expect("receiver state")
            .deliveries
            .clone()
    }

    /// Waits until a delivery matches `check` and returns the deliveries so far.
    pub async fn wait_for(&self, what: &str, check: impl Fn(&Delivery) -> bool) -> Vec<Delivery> {
        eventually(PATIENCE, what, || {
            let deliveries = self.deliveries();
            let found = deliveries.iter().any(&check);
            async move { found.then_some(deliveries) }
        })
        .await
    }
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// axum's and reqwest's header maps are the same `http` type only when their `http`
/// versions agree; copying keeps the helpers independent of that.
fn convert(headers: &axum::http::HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            reqwest::header::HeaderName::from_bytes(name.as_str().as_bytes()),
            reqwest::header::HeaderValue::from_bytes(value.as_bytes()),
        ) {
            out.append(name, value);
        }
    }
    out
}
