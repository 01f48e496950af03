//! Suite: the same A2A 1.0 calls through each of the three bindings — JSON-RPC,
//! HTTP+JSON and gRPC — of one edge, against each other and against the bare axum
//! floor of the [`http`](super::http) suite, in the same rounds.
//!
//! **Calls.** `SendMessage` (blocking) to the task-mode agent (the answer is the Task
//! with one artifact) and `SendStreamingMessage` to the agent that publishes three
//! artifacts (the stream carries the task, `working`, the artifact updates and the
//! final status), each in its binding's own form: a JSON-RPC body on the agent's URL;
//! the request message as ProtoJSON on `{agent}/message:send` (`:stream` for SSE); a
//! protobuf message on the 1.0 gRPC service, the agent named by the request's
//! `tenant`.
//!
//! **Load.** The closed-loop generator; HTTP through reqwest with keep-alive (one
//! connection per sender), gRPC through tonic with one channel (one HTTP/2
//! connection) per sender, so each binding gets as many connections as senders. One
//! conversation per sender. Client and servers share the machine's cores, which pulls
//! every ratio toward 1.
//!
//! **Floor.** The http suite's bare axum route: it parses a JSON-RPC body and answers
//! with the runtime's own answer, serialized afresh per request.

use std::sync::Arc;
use std::time::Duration;

use agentyard_actors::edge::EdgeConfig;
use agentyard_transport::a2a::v1::VERSION_HEADER;
use agentyard_transport::proto::v1::pb;
use agentyard_transport::proto::v1::pb::a2a_service_client::A2aServiceClient;
use futures::StreamExt as _;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use tonic::transport::{Channel, Endpoint};

use super::http::{CASES, Case, Servers, read_sse};
use crate::error::{Error, Result};
use crate::load::{LoadResult, Requester, closed_loop};
use crate::options::{Options, progress};
use crate::report::{Better, Figure, Report, Unit};

const SUITE: &str = "bindings";

/// The http suite's cases measured here: the send answered with a Task and one
/// artifact, and the stream of three artifacts.
const MEASURED: [usize; 2] = [1, 3];

/// Concurrent senders.
const CONCURRENCY: [usize; 2] = [1, 16];

/// The sides of one case, in the order of the report.
const SIDES: [&str; 4] = ["jsonrpc", "rest", "grpc", "floor"];

/// Runs the suite.
///
/// # Errors
/// A server that cannot start, or a call that fails.
pub(crate) async fn run(options: &Options, report: &mut Report) -> Result<()> {
    let slots: Vec<(usize, usize)> = MEASURED
        .iter()
        .flat_map(|&case| CONCURRENCY.iter().map(move |&c| (case, c)))
        .collect();
    // runs[slot][side]
    let mut runs: Vec<[Vec<LoadResult>; 4]> = vec![Default::default(); slots.len()];
    for round in 0..options.rounds() {
        progress(format!(
            "{SUITE}: {} cases × {} bindings and the floor, {}",
            slots.len(),
            SIDES.len() - 1,
            options.round_label(round)
        ));
        let grpc_bind = "127.0.0.1:0"
            .parse()
            .map_err(|_| Error::Unexpected(String::from("127.0.0.1:0 is not a socket address")))?;
        let servers = Servers::start_with(EdgeConfig::default().grpc_bind(grpc_bind)).await?;
        let grpc = servers
            .edge
            .grpc_addr()
            .ok_or_else(|| Error::Unexpected(String::from("the edge started no gRPC listener")))?;
        for (slot, &(case, concurrency)) in slots.iter().enumerate() {
            let case = &CASES[case];
            let events = servers.v1_events(case);
            let run = options.run_time();
            // Each side first in turn across rounds and slots, so drift spreads evenly.
            let first = (round + slot) % SIDES.len();
            for turn in 0..SIDES.len() {
                let side = (first + turn) % SIDES.len();
                let result = match SIDES[side] {
                    "jsonrpc" => closed_loop(servers.v1_side(case), concurrency, run).await?,
                    "rest" => {
                        let rest = Rest::new(servers.edge.agent_url(case.agent), case, events)?;
                        closed_loop(Arc::new(rest), concurrency, run).await?
                    }
                    "grpc" => {
                        let grpc = Grpc::new(grpc, case, events, concurrency)?;
                        closed_loop(Arc::new(grpc), concurrency, run).await?
                    }
                    _ => closed_loop(servers.floor_side(case), concurrency, run).await?,
                };
                if options.measured(round) {
                    runs[slot][side].push(result);
                }
            }
        }
        servers.stop().await;
    }

    let throughput =
        |runs: &[LoadResult]| runs.iter().map(LoadResult::throughput).collect::<Vec<_>>();
    for (slot, &(case, concurrency)) in slots.iter().enumerate() {
        let case = &CASES[case];
        let unit = if case.streaming {
            "streams"
        } else {
            "requests"
        };
        let [jsonrpc, rest, grpc, floor] = &runs[slot];
        let rows: [Comparison<'_>; 5] = [
            (
                "rest.vs_jsonrpc",
                "HTTP+JSON",
                rest,
                "JSON-RPC, the same call",
                jsonrpc,
            ),
            (
                "grpc.vs_jsonrpc",
                "gRPC",
                grpc,
                "JSON-RPC, the same call",
                jsonrpc,
            ),
            (
                "jsonrpc.vs_floor",
                "JSON-RPC",
                jsonrpc,
                "bare axum route",
                floor,
            ),
            ("rest.vs_floor", "HTTP+JSON", rest, "bare axum route", floor),
            ("grpc.vs_floor", "gRPC", grpc, "bare axum route", floor),
        ];
        for (id, binding, side, against, baseline) in rows {
            report.rows.push(
                Figure::new(
                    SUITE,
                    format!("{}.{concurrency}.{id}", case.id),
                    format!(
                        "{binding} A2A 1.0 {}, {concurrency} conn, {unit}",
                        v1_label(case)
                    ),
                    Unit::PerSecond,
                    Better::Higher,
                )
                .against(against)
                .row(&throughput(side), &throughput(baseline))?,
            );
        }
        for (side, name) in [(jsonrpc, "JSON-RPC"), (rest, "HTTP+JSON"), (grpc, "gRPC")] {
            report.rows.push(
                Figure::new(
                    SUITE,
                    format!(
                        "{}.{concurrency}.{}.p50",
                        case.id,
                        name.to_ascii_lowercase()
                    ),
                    format!(
                        "{name} A2A 1.0 {}, {concurrency} conn, p50 latency",
                        v1_label(case)
                    ),
                    Unit::Nanos,
                    Better::Lower,
                )
                .against("bare axum route")
                .row(
                    &side
                        .iter()
                        .map(|r| r.latencies.quantile_ns(0.5))
                        .collect::<Vec<_>>(),
                    &floor
                        .iter()
                        .map(|r| r.latencies.quantile_ns(0.5))
                        .collect::<Vec<_>>(),
                )?,
            );
        }
    }
    report.notes.push(format!(
        "{SUITE}: A2A 1.0 through JSON-RPC, HTTP+JSON and gRPC of one edge, loopback; one \
         reqwest connection or one tonic channel per sender; the floor is the http suite's \
         bare axum route"
    ));
    Ok(())
}

/// The case's label with its 1.0 method name.
fn v1_label(case: &Case) -> String {
    case.label
        .replace("message/send", "SendMessage")
        .replace("message/stream", "SendStreamingMessage")
}

/// A row: its id, the binding measured and its runs, what it is measured against and
/// that side's runs.
type Comparison<'a> = (
    &'a str,
    &'a str,
    &'a [LoadResult],
    &'a str,
    &'a [LoadResult],
);

/// The 1.0 request message of sender `sender`'s call `seq`: a user text in the
/// sender's own conversation.
fn rest_body(sender: usize, seq: u64) -> String {
    format!(
        r#"{{"message":{{"role":"ROLE_USER","messageId":"m-{sender}-{seq}","contextId":"rest-{sender}","parts":[{{"text":"ping"}}]}}}}"#
    )
}

/// HTTP+JSON calls of one case.
struct Rest {
    client: reqwest::Client,
    url: String,
    /// SSE events a stream must carry; 0 for a send.
    events: usize,
}

impl Rest {
    fn new(agent_url: String, case: &Case, events: usize) -> Result<Self> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(Error::from)?;
        let (path, events) = if case.streaming {
            ("message:stream", events.max(1))
        } else {
            ("message:send", 0)
        };
        Ok(Self {
            client,
            url: format!("{agent_url}/{path}"),
            events,
        })
    }
}

impl Requester for Rest {
    async fn request(&self, sender: usize, seq: u64) -> Result<()> {
        let mut request = self
            .client
            .post(&self.url)
            .header(CONTENT_TYPE, "application/a2a+json")
            .header(VERSION_HEADER, "1.0")
            .body(rest_body(sender, seq));
        if self.events > 0 {
            request = request.header(ACCEPT, "text/event-stream");
        }
        let response = request.send().await?;
        if response.status() != StatusCode::OK {
            let status = response.status();
            let body = response.text().await.unwrap_or_default();
            return Err(Error::Unexpected(format!(
                "{} answered HTTP {status}: {body}",
                self.url
            )));
        }
        if self.events == 0 {
            let body = response.bytes().await?;
            if !body.starts_with(b"{\"task\"") {
                return Err(Error::Unexpected(format!(
                    "{} answered without a task: {}",
                    self.url,
                    String::from_utf8_lossy(&body)
                )));
            }
            return Ok(());
        }
        let (events, body) = read_sse(response).await?;
        if events != self.events {
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

/// gRPC calls of one case: one channel per sender.
struct Grpc {
    clients: Vec<A2aServiceClient<Channel>>,
    agent: &'static str,
    /// Stream messages a stream must carry; 0 for a send.
    events: usize,
}

impl Grpc {
    fn new(
        address: std::net::SocketAddr,
        case: &Case,
        events: usize,
        senders: usize,
    ) -> Result<Self> {
        let endpoint = Endpoint::from_shared(format!("http://{address}"))
            .map_err(|error| Error::Unexpected(format!("the gRPC endpoint: {error}")))?
            .tcp_nodelay(true)
            .connect_timeout(Duration::from_secs(5));
        let clients = (0..senders)
            .map(|_| A2aServiceClient::new(endpoint.connect_lazy()))
            .collect();
        Ok(Self {
            clients,
            agent: case.agent,
            events: if case.streaming { events.max(1) } else { 0 },
        })
    }

    fn request(&self, sender: usize, seq: u64) -> pb::SendMessageRequest {
        pb::SendMessageRequest {
            tenant: self.agent.to_owned(),
            message: Some(pb::Message {
                message_id: format!("m-{sender}-{seq}"),
                context_id: format!("grpc-{sender}"),
                role: pb::Role::User as i32,
                parts: vec![pb::Part {
                    content: Some(pb::part::Content::Text(String::from("ping"))),
                    ..pb::Part::default()
                }],
                ..pb::Message::default()
            }),
            ..pb::SendMessageRequest::default()
        }
    }
}

impl Requester for Grpc {
    async fn request(&self, sender: usize, seq: u64) -> Result<()> {
        let mut client = self.clients[sender % self.clients.len()].clone();
        let request = self.request(sender, seq);
        let failed =
            |status: tonic::Status| Error::Unexpected(format!("the gRPC call failed: {status}"));
        if self.events == 0 {
            let answer = client.send_message(request).await.map_err(failed)?;
            return match answer.into_inner().payload {
                Some(pb::send_message_response::Payload::Task(_)) => Ok(()),
                other => Err(Error::Unexpected(format!(
                    "SendMessage answered without a task: {other:?}"
                ))),
            };
        }
        let mut stream = client
            .send_streaming_message(request)
            .await
            .map_err(failed)?
            .into_inner();
        let mut events = 0;
        while let Some(event) = stream.next().await {
            event.map_err(failed)?;
            events += 1;
        }
        if events != self.events {
            return Err(Error::Unexpected(format!(
                "SendStreamingMessage streamed {events} messages, not {}",
                self.events
            )));
        }
        Ok(())
    }
}
