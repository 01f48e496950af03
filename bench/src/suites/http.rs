//! Suite 3: A2A over HTTP through the edge, against bare axum routes in the same
//! program.
//!
//! **Runtime side.** The runtime (with the supervisor suite's policy and raised
//! limits) behind the HTTP edge on 127.0.0.1: `message/send` (blocking) to an echo
//! agent that answers with a Message (`answer_with_message`), and to a task-mode agent
//! that publishes one artifact and completes (the answer is the Task); `message/stream`
//! to agents publishing 1 or 3 artifacts (so the stream carries the task, `working`,
//! the artifact updates and the final status).
//!
//! **Floor.** A bare axum server in the same process: its route parses the same
//! JSON-RPC body with serde_json into the same typed params, and answers with a fixed
//! result of the same shape — the very result (or the very stream events) the runtime
//! gave for the same request at the start of the round, serialized afresh per request
//! (and per SSE event, as one `data:` line each).
//!
//! **A2A 1.0 against 0.3.** The same four calls to the same runtime in their 1.0
//! form (`SendMessage`, `SendStreamingMessage`, with `A2A-Version: 1.0`) against
//! their 0.3 form, at 16 connections, in the same rounds: the ratio is what the 1.0
//! codec costs (target: at least 95% of the 0.3 path's throughput).
//!
//! **Load.** The closed-loop generator with a reqwest client (keep-alive, so each
//! sender reuses its connection), loopback only, one conversation (contextId) per
//! sender on both sides. The client runs on the same two cores as both servers and
//! costs the same on both sides, so it pulls every ratio toward 1: a ratio here is a
//! lower bound on how far apart the servers alone are.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use agentyard::{Agent, AgentDescriptor, AgentError, Artifact, Part, Runtime, TaskContext};
use agentyard_actors::edge::{AgentSettings, Edge, EdgeConfig};
use agentyard_transport::a2a::MessageSendParams;
use agentyard_transport::a2a::v1::VERSION_HEADER;
use agentyard_transport::jsonrpc::{JsonRpcResponse, RequestId, SendMessageResult, StreamEvent};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt as _;
use futures::StreamExt as _;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::error::{Error, Result};
use crate::fixtures::{ECHO, bench_builder, plain_echo};
use crate::load::{LoadResult, Pick, Requester, closed_loop, each};
use crate::options::{Options, progress};
use crate::report::{Better, Figure, Report, Target};

const SUITE: &str = "http";

/// The task-mode agent: one artifact, then completed. Also the 1-artifact stream.
const TASKER: &str = "tasker";
/// The 3-artifact stream.
const STREAMER: &str = "streamer";

/// Concurrent senders (= connections) of the `message/send` and `message/stream` cases.
const SEND_CONCURRENCY: [usize; 3] = [1, 16, 64];
const STREAM_CONCURRENCY: [usize; 2] = [1, 16];
/// Connections of the 1.0-against-0.3 comparison.
const VERSIONS_CONCURRENCY: usize = 16;

/// An agent that publishes `n` artifacts of one text part each, then replies.
#[derive(Debug)]
struct Artifacts(usize);

impl Agent for Artifacts {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        for n in 0..self.0 {
            ctx.artifact(Artifact::new(
                format!("result-{n}"),
                vec![Part::text(&text)],
            ))
            .await?;
        }
        ctx.reply_text(text);
        Ok(())
    }
}

/// One kind of request, on both sides.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Case {
    pub(crate) id: &'static str,
    pub(crate) label: &'static str,
    /// The runtime's agent.
    pub(crate) agent: &'static str,
    /// The bare server's route.
    route: &'static str,
    method: &'static str,
    pub(crate) streaming: bool,
    concurrency: &'static [usize],
}

pub(crate) const CASES: [Case; 4] = [
    Case {
        id: "send.message",
        label: "message/send → Message",
        agent: ECHO,
        route: "/message",
        method: "message/send",
        streaming: false,
        concurrency: &SEND_CONCURRENCY,
    },
    Case {
        id: "send.task",
        label: "message/send → Task + 1 artifact",
        agent: TASKER,
        route: "/task",
        method: "message/send",
        streaming: false,
        concurrency: &SEND_CONCURRENCY,
    },
    Case {
        id: "stream.1",
        label: "message/stream, 1 artifact",
        agent: TASKER,
        route: "/stream1",
        method: "message/stream",
        streaming: true,
        concurrency: &STREAM_CONCURRENCY,
    },
    Case {
        id: "stream.3",
        label: "message/stream, 3 artifacts",
        agent: STREAMER,
        route: "/stream3",
        method: "message/stream",
        streaming: true,
        concurrency: &STREAM_CONCURRENCY,
    },
];

/// Runs the suite: each round starts a fresh runtime, edge and bare server, then runs
/// every case and concurrency on both sides, in alternating order.
///
/// # Errors
/// A server that cannot start, or a request that fails.
pub(crate) async fn run(options: &Options, report: &mut Report) -> Result<()> {
    // (case index, concurrency) → runs of each side.
    let all: Vec<(usize, usize)> = CASES
        .iter()
        .enumerate()
        .flat_map(|(i, case)| case.concurrency.iter().map(move |&c| (i, c)))
        .collect();
    let slot_id = |&(i, c): &(usize, usize)| format!("{SUITE}.{}.{c}", CASES[i].id);
    let version_id = |case: &Case| format!("{SUITE}.v1.{}.{VERSIONS_CONCURRENCY}", case.id);
    let slots: Vec<(usize, usize)> = all
        .iter()
        .filter(|slot| options.wants(&slot_id(slot)))
        .copied()
        .collect();
    // The cases whose A2A 1.0 form is measured against their 0.3 form.
    let versions: Vec<usize> = (0..CASES.len())
        .filter(|&i| options.wants(&version_id(&CASES[i])))
        .collect();
    let cases: Vec<String> = all
        .iter()
        .map(slot_id)
        .chain(CASES.iter().map(version_id))
        .collect();
    options.wants_any(SUITE, &cases)?;
    let mut runtime_runs: Vec<Vec<LoadResult>> = vec![Vec::new(); slots.len()];
    let mut floor_runs: Vec<Vec<LoadResult>> = vec![Vec::new(); slots.len()];
    let mut events_per_stream = [0usize; CASES.len()];
    // Per case: runs of the 1.0 form and of the 0.3 form, side by side.
    let mut v1_runs: Vec<Vec<LoadResult>> = vec![Vec::new(); CASES.len()];
    let mut v03_runs: Vec<Vec<LoadResult>> = vec![Vec::new(); CASES.len()];
    for round in 0..options.rounds() {
        progress(format!(
            "{SUITE}: {} cases, {}",
            slots.len(),
            options.round_label(round)
        ));
        let servers = Servers::start().await?;
        for (i, case) in CASES.iter().enumerate() {
            events_per_stream[i] = servers.fixed.events(case).map_or(0, Vec::len);
        }
        for (slot, &(case, concurrency)) in slots.iter().enumerate() {
            let case = CASES[case];
            let (runtime, floor) = (servers.runtime_side(&case), servers.floor_side(&case));
            let run = options.run_time();
            let (r, f) = if (round + slot) % 2 == 0 {
                let r = closed_loop(Arc::clone(&runtime), concurrency, run).await?;
                (r, closed_loop(Arc::clone(&floor), concurrency, run).await?)
            } else {
                let f = closed_loop(Arc::clone(&floor), concurrency, run).await?;
                (
                    closed_loop(Arc::clone(&runtime), concurrency, run).await?,
                    f,
                )
            };
            if options.measured(round) {
                runtime_runs[slot].push(r);
                floor_runs[slot].push(f);
            }
        }
        for &i in &versions {
            let case = &CASES[i];
            let (v1, v03) = (servers.v1_side(case), servers.runtime_side(case));
            let (c, run) = (VERSIONS_CONCURRENCY, options.run_time());
            let (a, b) = if (round + i) % 2 == 0 {
                let a = closed_loop(Arc::clone(&v1), c, run).await?;
                (a, closed_loop(Arc::clone(&v03), c, run).await?)
            } else {
                let b = closed_loop(Arc::clone(&v03), c, run).await?;
                (closed_loop(Arc::clone(&v1), c, run).await?, b)
            };
            if options.measured(round) {
                v1_runs[i].push(a);
                v03_runs[i].push(b);
            }
        }
        servers.stop().await;
    }

    for (slot, &(case, concurrency)) in slots.iter().enumerate() {
        let case = CASES[case];
        let floor_is = if case.streaming {
            "bare axum SSE route"
        } else {
            "bare axum route"
        };
        let unit = if case.streaming {
            "streams"
        } else {
            "requests"
        };
        let figures: [(&str, String, crate::report::Unit, Better, Pick); 4] = [
            (
                "throughput",
                format!("{}, {concurrency} conn, {unit}", case.label),
                crate::report::Unit::PerSecond,
                Better::Higher,
                |r| Some(r.throughput()),
            ),
            (
                "p50",
                format!("{}, {concurrency} conn, p50 latency", case.label),
                crate::report::Unit::Nanos,
                Better::Lower,
                |r| Some(r.latencies.quantile_ns(0.5)),
            ),
            (
                "p99",
                format!("{}, {concurrency} conn, p99 latency", case.label),
                crate::report::Unit::Nanos,
                Better::Lower,
                |r| Some(r.latencies.quantile_ns(0.99)),
            ),
            // The whole process's CPU per request, the client's share included (the
            // same on both sides): against the ratio at one connection, it tells a
            // side that costs more per request with the cores busy together from
            // one whose throughput the machine held back.
            (
                "cpu",
                format!("{}, {concurrency} conn, CPU per request", case.label),
                crate::report::Unit::Nanos,
                Better::Lower,
                LoadResult::cpu_per_request_ns,
            ),
        ];
        for (id, label, unit, better, pick) in figures {
            let (Some(runtime), Some(floor)) = (
                each(&runtime_runs[slot], pick),
                each(&floor_runs[slot], pick),
            ) else {
                continue;
            };
            report.rows.push(
                Figure::new(
                    SUITE,
                    format!("{}.{concurrency}.{id}", case.id),
                    label,
                    unit,
                    better,
                )
                .against(floor_is)
                .row(&runtime, &floor)?,
            );
        }
    }
    for &i in &versions {
        let case = &CASES[i];
        let values =
            |runs: &[LoadResult]| runs.iter().map(LoadResult::throughput).collect::<Vec<_>>();
        report.rows.push(
            Figure::new(
                SUITE,
                format!("v1.{}.{VERSIONS_CONCURRENCY}.throughput", case.id),
                format!(
                    "A2A 1.0 {}, {VERSIONS_CONCURRENCY} conn",
                    case.label.replace(case.method, v1_method(case.method))
                ),
                crate::report::Unit::PerSecond,
                Better::Higher,
            )
            .against(format!("the same call in A2A 0.3 (`{}`)", case.method))
            .row(&values(&v1_runs[i]), &values(&v03_runs[i]))?,
        );
    }
    report.notes.push(format!(
        "{SUITE}: loopback, reqwest with keep-alive, one contextId per connection; SSE \
         events per stream: {} (1 artifact), {} (3 artifacts), the same on both sides; the \
         client shares the two cores with both servers",
        events_per_stream[2], events_per_stream[3]
    ));
    push_targets(report);
    Ok(())
}

/// The HTTP targets, from the throughput rows.
fn push_targets(report: &mut Report) {
    let ratio = |report: &Report, id: &str| {
        report
            .row(&format!("{SUITE}.{id}.throughput"))
            .map(|row| row.ratio.median)
    };
    // Message mode first, then task mode.
    const SENDS: &[&str] = &[
        "send.message.16",
        "send.message.64",
        "send.task.16",
        "send.task.64",
    ];
    const STREAMS: &[&str] = &["stream.1.1", "stream.1.16", "stream.3.1", "stream.3.16"];
    // The first wave's targets, then issue 13's (lower, with task mode in the send's).
    let targets: [(&'static str, &[&str], f64); 5] = [
        (
            "HTTP message/send >= 80% of the bare axum route's requests/s at 16 and 64",
            &SENDS[..2],
            0.8,
        ),
        (
            "HTTP message/send in task mode >= 70% of the bare route at 16 and 64",
            &SENDS[2..],
            0.7,
        ),
        (
            "SSE message/stream >= 70% of the bare SSE route (1 and 3 artifacts, 1 and 16)",
            STREAMS,
            0.7,
        ),
        (
            "HTTP message/send >= 70% of the bare route at 16 and 64, task mode too (issue 13)",
            SENDS,
            0.7,
        ),
        (
            "SSE message/stream >= 60% of the bare SSE route at 1 and 16 (1 and 3 artifacts; issue 13)",
            STREAMS,
            0.6,
        ),
    ];
    let versions = ["send.message", "send.task", "stream.1", "stream.3"]
        .map(|id| format!("v1.{id}.{VERSIONS_CONCURRENCY}"));
    let versions: Vec<&str> = versions.iter().map(String::as_str).collect();
    let targets = targets.into_iter().chain([(
        "A2A 1.0 >= 95% of the 0.3 path's throughput (send and stream, 16 conn)",
        versions.as_slice(),
        0.95,
    )]);
    for (target, ids, least) in targets {
        let ratios: Vec<(String, f64)> = ids
            .iter()
            .filter_map(|id| ratio(report, id).map(|r| ((*id).to_owned(), r)))
            .collect();
        report
            .targets
            .push(Target::from_ratios(target, &ratios, ids.len(), least));
    }
}

/// What the bare server answers with: what the runtime answered at the start of the
/// round.
#[derive(Debug)]
struct Fixed {
    message: SendMessageResult,
    task: SendMessageResult,
    stream1: Vec<StreamEvent>,
    stream3: Vec<StreamEvent>,
}

impl Fixed {
    fn events(&self, case: &Case) -> Option<&Vec<StreamEvent>> {
        match case.route {
            "/stream1" => Some(&self.stream1),
            "/stream3" => Some(&self.stream3),
            _ => None,
        }
    }
}

/// Both servers of one round.
pub(crate) struct Servers {
    runtime: Runtime,
    pub(crate) edge: Edge,
    bare_url: String,
    bare_stop: oneshot::Sender<()>,
    bare_task: tokio::task::JoinHandle<()>,
    fixed: Arc<Fixed>,
    /// SSE events of the 1.0 streams (1 and 3 artifacts), counted at the start.
    v1_events: [usize; 2],
    client: reqwest::Client,
}

impl Servers {
    async fn start() -> Result<Self> {
        Self::start_with(EdgeConfig::default()).await
    }

    /// The servers, with the edge configured from `base` (the echo agent answering
    /// with a message is added; push notifications stay on, as `agentyard serve`
    /// runs).
    pub(crate) async fn start_with(base: EdgeConfig) -> Result<Self> {
        let exposed = |name: &str| AgentDescriptor::new(name).exposed(true);
        let runtime = bench_builder()?
            .agent(exposed(ECHO), plain_echo())
            .agent(exposed(TASKER), |_| Artifacts(1))
            .agent(exposed(STREAMER), |_| Artifacts(3))
            .build()
            .await?;
        let config = base.agent_settings(ECHO, AgentSettings::default().answer_with_message(true));
        let edge = Edge::start(runtime.supervisor().clone(), config)
            .await
            .map_err(|error| Error::Unexpected(format!("the HTTP edge did not start: {error}")))?;
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(Error::from)?;

        let capture = Capture {
            client: &client,
            edge: &edge,
        };
        let fixed = Arc::new(Fixed {
            message: capture.send(ECHO).await?,
            task: capture.send(TASKER).await?,
            stream1: capture.stream(TASKER).await?,
            stream3: capture.stream(STREAMER).await?,
        });
        let v1_events = [
            capture.v1_stream_events(TASKER).await?,
            capture.v1_stream_events(STREAMER).await?,
        ];

        let app = Router::new()
            .route("/message", post(bare_message))
            .route("/task", post(bare_task))
            .route("/stream1", post(bare_stream1))
            .route("/stream3", post(bare_stream3))
            .with_state(Arc::clone(&fixed));
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|source| Error::Io {
                what: String::from("binding the bare axum server to 127.0.0.1"),
                source,
            })?;
        let address = listener.local_addr().map_err(|source| Error::Io {
            what: String::from("reading the bare server's address"),
            source,
        })?;
        let (bare_stop, stopped) = oneshot::channel::<()>();
        // TCP_NODELAY, as a well-configured server has it: without it a response
        // written in pieces (SSE events) waits for the client's delayed ACK.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let bare_task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(Self {
            runtime,
            edge,
            bare_url: format!("http://{address}"),
            bare_stop,
            bare_task,
            fixed,
            v1_events,
            client,
        })
    }

    /// How many SSE events a 1.0 stream of `case` carries (0 for a send).
    pub(crate) fn v1_events(&self, case: &Case) -> usize {
        match case.route {
            "/stream1" => self.v1_events[0],
            "/stream3" => self.v1_events[1],
            _ => 0,
        }
    }

    /// The runtime side of `case` in its 1.0 form.
    pub(crate) fn v1_side(&self, case: &Case) -> Arc<Http> {
        let events = self.v1_events(case);
        let mut http = Http::new(&self.client, self.edge.agent_url(case.agent), case, events);
        http.v1 = true;
        Arc::new(http)
    }

    fn runtime_side(&self, case: &Case) -> Arc<Http> {
        Arc::new(Http::new(
            &self.client,
            self.edge.agent_url(case.agent),
            case,
            self.fixed.events(case).map_or(0, Vec::len),
        ))
    }

    pub(crate) fn floor_side(&self, case: &Case) -> Arc<Http> {
        Arc::new(Http::new(
            &self.client,
            format!("{}{}", self.bare_url, case.route),
            case,
            self.fixed.events(case).map_or(0, Vec::len),
        ))
    }

    pub(crate) async fn stop(self) {
        let _ = self.bare_stop.send(());
        let _ = self.bare_task.await;
        self.edge.stop().await;
        self.runtime.shutdown(Duration::from_secs(5)).await;
    }
}

/// The first request of a round to each runtime endpoint, whose answer the bare server
/// then repeats.
struct Capture<'a> {
    client: &'a reqwest::Client,
    edge: &'a Edge,
}

impl Capture<'_> {
    async fn send(&self, agent: &str) -> Result<SendMessageResult> {
        let body = request_body("message/send", usize::MAX, 0);
        let bytes = self
            .client
            .post(self.edge.agent_url(agent))
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await?
            .bytes()
            .await?;
        let response: JsonRpcResponse<SendMessageResult> = serde_json::from_slice(&bytes)?;
        response
            .into_result()
            .map_err(|error| Error::Unexpected(format!("`{agent}` answered an error: {error:?}")))
    }

    /// How many SSE events a 1.0 `SendStreamingMessage` to `agent` carries.
    async fn v1_stream_events(&self, agent: &str) -> Result<usize> {
        let method = v1_method("message/stream");
        let bytes = self
            .client
            .post(self.edge.agent_url(agent))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .header(VERSION_HEADER, "1.0")
            .body(request_body_v1(method, usize::MAX, 0))
            .send()
            .await?
            .bytes()
            .await?;
        if contains(&bytes, b"\"error\"") {
            return Err(Error::Unexpected(format!(
                "`{agent}` streamed an error in 1.0: {}",
                String::from_utf8_lossy(&bytes)
            )));
        }
        Ok(bytes.windows(5).filter(|w| *w == b"data:").count())
    }

    async fn stream(&self, agent: &str) -> Result<Vec<StreamEvent>> {
        let body = request_body("message/stream", usize::MAX, 0);
        let bytes = self
            .client
            .post(self.edge.agent_url(agent))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body)
            .send()
            .await?
            .bytes()
            .await?;
        let text = String::from_utf8_lossy(&bytes);
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| {
                let response: JsonRpcResponse<StreamEvent> = serde_json::from_str(data.trim())?;
                response.into_result().map_err(|error| {
                    Error::Unexpected(format!("`{agent}` streamed an error: {error:?}"))
                })
            })
            .collect()
    }
}

/// The JSON-RPC body of request `seq` of `sender`: a user text message in the sender's
/// own conversation. Both sides get exactly these bytes.
fn request_body(method: &str, sender: usize, seq: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{seq},"method":"{method}","params":{{"message":{{"kind":"message","role":"user","messageId":"m-{sender}-{seq}","contextId":"http-{sender}","parts":[{{"kind":"text","text":"ping"}}]}}}}}}"#
    )
}

/// The 1.0 name of a 0.3 method of this suite.
fn v1_method(method: &str) -> &'static str {
    if method == "message/stream" {
        "SendStreamingMessage"
    } else {
        "SendMessage"
    }
}

/// [`request_body`] in its 1.0 form: the same message, as ProtoJSON.
fn request_body_v1(method: &str, sender: usize, seq: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{seq},"method":"{method}","params":{{"message":{{"role":"ROLE_USER","messageId":"m-{sender}-{seq}","contextId":"http-{sender}","parts":[{{"text":"ping"}}]}}}}}}"#
    )
}

/// A sender of one case to one side.
pub(crate) struct Http {
    client: reqwest::Client,
    url: String,
    method: &'static str,
    /// SSE events a stream must carry; 0 for `message/send`.
    events: usize,
    /// Sends the 1.0 form (method, body, `A2A-Version: 1.0`).
    v1: bool,
}

impl Http {
    fn new(client: &reqwest::Client, url: String, case: &Case, events: usize) -> Self {
        Self {
            client: client.clone(),
            url,
            method: case.method,
            events: if case.streaming { events.max(1) } else { 0 },
            v1: false,
        }
    }
}

impl Requester for Http {
    async fn request(&self, sender: usize, seq: u64) -> Result<()> {
        let body = if self.v1 {
            request_body_v1(v1_method(self.method), sender, seq)
        } else {
            request_body(self.method, sender, seq)
        };
        let mut request = self
            .client
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if self.v1 {
            request = request.header(VERSION_HEADER, "1.0");
        }
        if self.events > 0 {
            request = request.header(ACCEPT, "text/event-stream");
        }
        let response = request.send().await?;
        if response.status() != StatusCode::OK {
            return Err(Error::Unexpected(format!(
                "{} answered HTTP {}",
                self.url,
                response.status()
            )));
        }
        if self.events == 0 {
            let body = response.bytes().await?;
            if !contains(&body, b"\"result\"") {
                return Err(Error::Unexpected(format!(
                    "{} answered without a result: {}",
                    self.url,
                    String::from_utf8_lossy(&body)
                )));
            }
            return Ok(());
        }
        let (events, body) = read_sse(response).await?;
        if events != self.events || contains(&body, b"\"error\"") {
            return Err(Error::Unexpected(format!(
                "{} streamed {events} events, not {}: {}",
                self.url,
                self.events,
                String::from_utf8_lossy(&body)
            )));
        }
        Ok(())
    }
}

/// An SSE response read to its end: how many events (`data:` lines) it carried, and
/// its bytes.
pub(crate) async fn read_sse(response: reqwest::Response) -> Result<(usize, Vec<u8>)> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        body.extend_from_slice(&chunk?);
    }
    let events = body.windows(5).filter(|w| *w == b"data:").count();
    Ok((events, body))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A `message/send` or `message/stream` request, as the bare routes read it.
#[derive(Debug, serde::Deserialize)]
struct BareRequest {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: String,
    id: RequestId,
    #[serde(rename = "method")]
    _method: String,
    #[serde(rename = "params")]
    _params: MessageSendParams,
}

/// Parses the JSON-RPC body with serde_json into the same typed params the edge reads.
fn parse(body: &Bytes) -> std::result::Result<RequestId, String> {
    serde_json::from_slice::<BareRequest>(body)
        .map(|request| request.id)
        .map_err(|error| error.to_string())
}

fn bad_request(error: String) -> Response {
    (StatusCode::BAD_REQUEST, error).into_response()
}

fn json_reply(id: RequestId, result: &SendMessageResult) -> Response {
    match serde_json::to_vec(&JsonRpcResponse::success(id, result)) {
        Ok(body) => ([(CONTENT_TYPE, "application/json")], body).into_response(),
        Err(error) => (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()).into_response(),
    }
}

async fn bare_message(State(fixed): State<Arc<Fixed>>, body: Bytes) -> Response {
    match parse(&body) {
        Ok(id) => json_reply(id, &fixed.message),
        Err(error) => bad_request(error),
    }
}

async fn bare_task(State(fixed): State<Arc<Fixed>>, body: Bytes) -> Response {
    match parse(&body) {
        Ok(id) => json_reply(id, &fixed.task),
        Err(error) => bad_request(error),
    }
}

async fn bare_stream1(State(fixed): State<Arc<Fixed>>, body: Bytes) -> Response {
    bare_stream(fixed, &body, |fixed| &fixed.stream1)
}

async fn bare_stream3(State(fixed): State<Arc<Fixed>>, body: Bytes) -> Response {
    bare_stream(fixed, &body, |fixed| &fixed.stream3)
}

/// The fixed events as SSE, one JSON-RPC response per `data:` line, serialized as
/// each is sent.
fn bare_stream(
    fixed: Arc<Fixed>,
    body: &Bytes,
    events: fn(&Fixed) -> &Vec<StreamEvent>,
) -> Response {
    let id = match parse(body) {
        Ok(id) => id,
        Err(error) => return bad_request(error),
    };
    let count = events(&fixed).len();
    let frames = futures::stream::iter(0..count).map(move |i| {
        let response = JsonRpcResponse::success(id.clone(), &events(&fixed)[i]);
        let data = serde_json::to_string(&response).unwrap_or_else(|_| Value::Null.to_string());
        Ok::<_, Infallible>(Event::default().data(data))
    });
    Sse::new(frames).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_body_is_a_valid_message_send() {
        let body = Bytes::from(request_body("message/send", 3, 7));
        let request: BareRequest = serde_json::from_slice(&body).expect("valid JSON-RPC");
        assert_eq!(request.id, RequestId::Number(7));
        assert_eq!(request._method, "message/send");
        assert_eq!(request._params.message.text(), "ping");
        assert_eq!(
            request
                ._params
                .message
                .context_id
                .map(|c| c.to_string())
                .as_deref(),
            Some("http-3")
        );
        assert!(parse(&body).is_ok());
        assert!(parse(&Bytes::from_static(b"{}")).is_err());
    }

    #[test]
    fn the_1_0_request_body_is_the_same_message_in_its_1_0_form() {
        use agentyard_transport::a2a::v1;
        let value: Value =
            serde_json::from_str(&request_body_v1(v1_method("message/stream"), 3, 7))
                .expect("valid JSON");
        let request = v1::Request::from_jsonrpc(
            value["method"].as_str().expect("a method"),
            Some(value["params"].clone()),
        )
        .expect("a 1.0 request");
        assert!(request.is_streaming());
        let v1::Request::SendStreamingMessage(params) = request else {
            panic!("SendStreamingMessage");
        };
        let params = MessageSendParams::try_from(params).expect("fits the model");
        assert_eq!(params.message.text(), "ping");
        assert_eq!(v1_method("message/send"), "SendMessage");
    }

    #[test]
    fn issue_13s_http_targets_need_every_row_they_name() {
        let row = |id: &str, ratio: f64| {
            Figure::new(
                SUITE,
                format!("{id}.throughput"),
                id.to_owned(),
                crate::report::Unit::PerSecond,
                Better::Higher,
            )
            .against("bare axum route")
            .row(&[ratio * 100.0], &[100.0])
            .expect("one run")
        };
        let sends = ["send.message.16", "send.message.64", "send.task.16"];
        let mut report = Report {
            rows: sends.iter().map(|id| row(id, 0.75)).collect(),
            ..Report::default()
        };
        push_targets(&mut report);
        let send = |report: &Report| report.target("HTTP message/send >= 70%").met;
        // Task mode at 64 connections was not run: not decided.
        assert_eq!(send(&report), None);
        report.rows.push(row("send.task.64", 0.69));
        report.targets.clear();
        push_targets(&mut report);
        assert_eq!(send(&report), Some(false));
        report.rows.pop();
        report.rows.push(row("send.task.64", 0.71));
        report.targets.clear();
        push_targets(&mut report);
        assert_eq!(send(&report), Some(true));
        // The first wave's 80% is not met by the same rows.
        assert_eq!(report.target("HTTP message/send >= 80%").met, Some(false));
        let sse = report.target("SSE message/stream >= 60%");
        assert_eq!((sse.met, sse.measured.as_str()), (None, "not measured"));
    }

    #[test]
    fn finds_a_needle_in_bytes() {
        assert!(contains(b"{\"result\":1}", b"\"result\""));
        assert!(!contains(b"{\"error\":1}", b"\"result\""));
    }
}
