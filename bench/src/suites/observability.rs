//! Suite: what watching the runtime costs. HTTP `message/send` throughput with
//! observability on against the same server with it off, in the same rounds.
//!
//! **Sides.** Each round starts one runtime and HTTP server per [`Side`]: the same
//! echo agent (answering with a Message), the same policy and limits as the `http`
//! suite, push notifications off. [`Side::Off`] keeps no metrics (the runtime's
//! `metrics(false)`, the server's `metrics(false)`: no counting on the send path, no
//! HTTP request layer); [`Side::Metrics`] is the default, counting every send, refusal,
//! latency and HTTP request, and is scraped once per run as Prometheus would.
//!
//! **Order.** Within a round the sides run one after the other at each concurrency,
//! their order alternating between rounds, so drift on a shared machine falls on both.
//! The ratio is each side's throughput over the `Off` side's in the same round.
//!
//! [`Side::Traced`] is the metrics side with traces on as well, as configured by
//! default (`[tracing] otlp_endpoint` and nothing else): the head sampler records at
//! most 100 new traces a second, each with its spans (the HTTP request, the JSON-RPC
//! call, the send, the agent's turn), exported with OpenTelemetry over OTLP/HTTP to a
//! sink in this process that answers 200 (so the exporter's whole path runs, the
//! collector's does not). [`Side::EveryTrace`] is the same server called by a client
//! that samples every trace itself (a sampled `traceparent` on each request, which
//! agentyard follows whatever its own limit): what recording every trace costs. It
//! has no target; it shows what the sampler saves. After each traced run the export
//! is flushed and the bytes the sink received are counted: a traced side that
//! exported nothing in all its runs fails the suite.
//!
//! **Tracing is process-wide.** The OpenTelemetry layer is a global subscriber,
//! installed once ([`agentyard::telemetry::init`]) and then switched on only while the
//! traced side runs ([`agentyard::telemetry::Telemetry::set_recording`]), so the other
//! sides, and the suites that run after this one, record nothing. A process that
//! already has a global subscriber cannot measure the traced side: the suite says so
//! and fails.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agentyard::telemetry::{Telemetry, TracingConfig};
use agentyard::{AgentDescriptor, AgentSettings, HttpConfig, HttpServer, PushConfig, Runtime};
use reqwest::StatusCode;
use reqwest::header::CONTENT_TYPE;

use crate::error::{Error, Result};
use crate::fixtures::{ECHO, bench_builder, plain_echo};
use crate::load::{LoadResult, Requester, closed_loop};
use crate::options::{Options, progress};
use crate::report::{Better, Figure, Report, Target, Unit};

const SUITE: &str = "observability";

/// Concurrent senders (= connections).
const CONCURRENCY: [usize; 2] = [16, 64];

/// The most throughput watching may cost, as a share of the unwatched server's.
const MAX_COST: f64 = 0.05;

/// How a side's runtime and server are watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Nothing: the floor.
    Off,
    /// Metrics on (`GET /metrics`), as `agentyard serve` runs by default.
    Metrics,
    /// Metrics on and traces exported over OTLP, as with `[tracing] otlp_endpoint`.
    Traced,
    /// As `Traced`, every trace sampled by the caller.
    EveryTrace,
}

impl Side {
    /// Every side, the floor first.
    const ALL: [Self; 4] = [Self::Off, Self::Metrics, Self::Traced, Self::EveryTrace];

    fn id(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Metrics => "metrics",
            Self::Traced => "traced",
            Self::EveryTrace => "every_trace",
        }
    }

    /// Whether spans are recorded while the side runs.
    fn traced(self) -> bool {
        matches!(self, Self::Traced | Self::EveryTrace)
    }

    fn label(self) -> &'static str {
        match self {
            Self::Off => "observability off",
            Self::Metrics => "metrics on",
            Self::Traced => "metrics and OTLP traces on",
            Self::EveryTrace => "metrics and traces, every trace sampled",
        }
    }

    /// What the side must keep of the unwatched server's throughput (none for the
    /// floor and for every trace sampled, which is shown, not held to a target).
    fn target(self) -> Option<&'static str> {
        match self {
            Self::Off | Self::EveryTrace => None,
            Self::Metrics => Some(
                "HTTP message/send with metrics on >= 95% of the throughput with them off (16 and 64 conn)",
            ),
            Self::Traced => Some(
                "HTTP message/send with metrics and OTLP traces on (default sampling) >= 95% of the throughput with both off (16 and 64 conn)",
            ),
        }
    }

    /// The side's runtime and server.
    async fn start(self) -> Result<Watched> {
        let on = self != Self::Off;
        let runtime = bench_builder()?
            .metrics(on)
            .agent(AgentDescriptor::new(ECHO).expose(), plain_echo())
            .build()
            .await?;
        let config = HttpConfig::default()
            .agent_settings(ECHO, AgentSettings::default().answer_with_message(true))
            .push(PushConfig::disabled())
            .metrics(on);
        let server = runtime.serve(config).await.map_err(|error| {
            Error::Unexpected(format!("the HTTP server did not start: {error}"))
        })?;
        Ok(Watched {
            side: self,
            runtime,
            server,
        })
    }
}

/// One side's running runtime and server.
struct Watched {
    side: Side,
    runtime: Runtime,
    server: HttpServer,
}

impl Watched {
    /// Scrapes `/metrics` when the side keeps metrics, as a monitoring system would
    /// once per run, and checks the sends were counted.
    async fn scrape(&self, client: &reqwest::Client) -> Result<()> {
        if self.side == Side::Off {
            return Ok(());
        }
        let text = client
            .get(self.server.metrics_url())
            .send()
            .await?
            .text()
            .await?;
        if !text.contains(
            "agentyard_sends_total{agent=\"echo\",entry_point=\"http\",outcome=\"completed\"}",
        ) {
            return Err(Error::Unexpected(format!(
                "the scrape lacks the echo agent's sends: {}",
                text.lines().take(5).collect::<Vec<_>>().join(" / ")
            )));
        }
        Ok(())
    }

    async fn stop(self) {
        self.server.stop().await;
        self.runtime.shutdown(Duration::from_secs(5)).await;
    }
}

/// Blocking `message/send` to one side's echo agent, one conversation per sender.
struct Send {
    client: reqwest::Client,
    url: String,
    /// Sends a sampled `traceparent`, a new trace per request.
    sampled: bool,
}

impl Requester for Send {
    async fn request(&self, sender: usize, seq: u64) -> Result<()> {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{seq},"method":"message/send","params":{{"message":{{"kind":"message","role":"user","messageId":"m-{sender}-{seq}","contextId":"obs-{sender}","parts":[{{"kind":"text","text":"ping"}}]}}}}}}"#
        );
        let mut request = self
            .client
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json");
        if self.sampled {
            let trace = (u128::try_from(sender).unwrap_or(0) << 64) | u128::from(seq);
            request = request.header(
                "traceparent",
                format!("00-{:032x}-{:016x}-01", trace + 1, seq + 1),
            );
        }
        let response = request.body(body).send().await?;
        if response.status() != StatusCode::OK {
            return Err(Error::Unexpected(format!(
                "{} answered HTTP {}",
                self.url,
                response.status()
            )));
        }
        let body = response.bytes().await?;
        if !body.windows(8).any(|w| w == b"\"result\"") {
            return Err(Error::Unexpected(format!(
                "{} answered without a result: {}",
                self.url,
                String::from_utf8_lossy(&body)
            )));
        }
        Ok(())
    }
}

/// The process's OpenTelemetry export to a sink of its own, made the first time the
/// suite runs (a global subscriber can be installed once).
static TELEMETRY: OnceLock<Telemetry> = OnceLock::new();

/// The bytes of spans the sink has received.
static EXPORTED: AtomicU64 = AtomicU64::new(0);

/// Installs the export (recording off until the traced side runs).
async fn telemetry() -> Result<&'static Telemetry> {
    if let Some(telemetry) = TELEMETRY.get() {
        return Ok(telemetry);
    }
    let sink_failed = |error: std::io::Error| {
        Error::Unexpected(format!("the OTLP sink could not listen: {error}"))
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(sink_failed)?;
    let sink = listener.local_addr().map_err(sink_failed)?;
    // Accepts every export as a collector would and keeps nothing but its size.
    let app = axum::Router::new().fallback(|body: axum::body::Bytes| async move {
        EXPORTED.fetch_add(body.len() as u64, Ordering::Relaxed);
        axum::http::StatusCode::OK
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    let telemetry = agentyard::telemetry::init(&TracingConfig::otlp(format!("http://{sink}")))
        .map_err(|error| {
            Error::Unexpected(format!(
                "traces cannot be measured in this process (is a global subscriber installed?): {error}"
            ))
        })?;
    telemetry.set_recording(false);
    Ok(TELEMETRY.get_or_init(|| telemetry))
}

/// Runs the suite.
///
/// # Errors
/// A server that cannot start, a request that fails, or traces that cannot be
/// installed.
pub(crate) async fn run(options: &Options, report: &mut Report) -> Result<()> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(Error::from)?;
    let telemetry = telemetry().await?;
    // [side][concurrency] → throughput of each measured round.
    let mut runs = vec![vec![Vec::<f64>::new(); CONCURRENCY.len()]; Side::ALL.len()];
    // [side] → bytes of spans exported per measured run, and in all.
    let mut exported = vec![Vec::<u64>::new(); Side::ALL.len()];
    let mut exported_at_all = vec![0_u64; Side::ALL.len()];
    for round in 0..options.rounds() {
        progress(format!(
            "{SUITE}: {} sides, {}",
            Side::ALL.len(),
            options.round_label(round)
        ));
        let mut watched = Vec::new();
        for side in Side::ALL {
            watched.push(side.start().await?);
        }
        for (c, &concurrency) in CONCURRENCY.iter().enumerate() {
            let mut order: Vec<usize> = (0..watched.len()).collect();
            if (round + c) % 2 == 1 {
                order.reverse();
            }
            for s in order {
                let side = watched[s].side;
                let sender = Arc::new(Send {
                    client: client.clone(),
                    url: watched[s].server.agent_url(ECHO),
                    sampled: side == Side::EveryTrace,
                });
                let before = flushed(telemetry).await?;
                telemetry.set_recording(side.traced());
                let result = closed_loop(sender, concurrency, options.run_time()).await;
                telemetry.set_recording(false);
                let result: LoadResult = result?;
                let bytes = flushed(telemetry).await? - before;
                exported_at_all[s] += bytes;
                watched[s].scrape(&client).await?;
                if options.measured(round) {
                    runs[s][c].push(result.throughput());
                    exported[s].push(bytes);
                }
            }
        }
        for side in watched {
            side.stop().await;
        }
    }

    // Per side, not per run: a short run right after another in the same second
    // may rightly record no new trace (the sampler's per-second allowance is spent).
    for (s, side) in Side::ALL.iter().enumerate() {
        if side.traced() && exported_at_all[s] == 0 {
            return Err(Error::Unexpected(format!(
                "the {} side exported no spans",
                side.label()
            )));
        }
    }
    for (s, side) in Side::ALL.iter().enumerate().skip(1) {
        let mut costs = Vec::new();
        for (c, concurrency) in CONCURRENCY.iter().enumerate() {
            let row = Figure::new(
                SUITE,
                format!("{}.{concurrency}.throughput", side.id()),
                format!("HTTP message/send, {}, {concurrency} conn", side.label()),
                Unit::PerSecond,
                Better::Higher,
            )
            .against(Side::Off.label())
            .row(&runs[s][c], &runs[0][c])?;
            costs.push((format!("{}.{concurrency}", side.id()), row.ratio.median));
            report.rows.push(row);
        }
        let measured = costs
            .iter()
            .map(|(id, ratio)| {
                format!(
                    "{id}: {}",
                    crate::report::fmt_against(*ratio, 1.0 - MAX_COST)
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(target) = side.target() {
            let met = costs.iter().all(|(_, ratio)| *ratio >= 1.0 - MAX_COST);
            report.targets.push(Target::new(target, measured, met));
        }
    }
    let per_run = |side: Side| {
        let bytes = &exported[Side::ALL.iter().position(|s| *s == side).unwrap_or(0)];
        bytes.iter().sum::<u64>() / u64::try_from(bytes.len().max(1)).unwrap_or(1) / 1024
    };
    report.notes.push(format!(
        "{SUITE}: the same echo server without metrics, with metrics, with metrics and OTLP \
         traces (default sampling: at most 100 new traces/s), and with every trace sampled by \
         the caller, exported over OTLP/HTTP to an in-process sink ({} KiB and {} KiB per run); \
         loopback, reqwest with keep-alive, one contextId per connection; sides alternate \
         order each round; the metrics sides are scraped once per run",
        per_run(Side::Traced),
        per_run(Side::EveryTrace),
    ));
    Ok(())
}

/// Exports the spans ended so far and returns the bytes the sink has received.
async fn flushed(telemetry: &'static Telemetry) -> Result<u64> {
    tokio::task::spawn_blocking(|| telemetry.flush())
        .await
        .map_err(|error| Error::Unexpected(format!("the span flush failed: {error}")))?;
    Ok(EXPORTED.load(Ordering::Relaxed))
}
