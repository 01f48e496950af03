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
//! **Tracing.** The hook for a third side is [`Side`]: add a variant (`Tracing`, with
//! OpenTelemetry export configured) to [`Side::ALL`] and say in [`Side::start`] how it
//! is configured; its rows and its target follow from the same loop.

use std::sync::Arc;
use std::time::Duration;

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
}

impl Side {
    /// Every side, the floor first. (The tracing helper's side goes here.)
    const ALL: [Self; 2] = [Self::Off, Self::Metrics];

    fn id(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Metrics => "metrics",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Off => "observability off",
            Self::Metrics => "metrics on",
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
}

impl Requester for Send {
    async fn request(&self, sender: usize, seq: u64) -> Result<()> {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{seq},"method":"message/send","params":{{"message":{{"kind":"message","role":"user","messageId":"m-{sender}-{seq}","contextId":"obs-{sender}","parts":[{{"kind":"text","text":"ping"}}]}}}}}}"#
        );
        let response = self
            .client
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await?;
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

/// Runs the suite.
///
/// # Errors
/// A server that cannot start, or a request that fails.
pub(crate) async fn run(options: &Options, report: &mut Report) -> Result<()> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(Error::from)?;
    // [side][concurrency] → throughput of each measured round.
    let mut runs = vec![vec![Vec::<f64>::new(); CONCURRENCY.len()]; Side::ALL.len()];
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
                let sender = Arc::new(Send {
                    client: client.clone(),
                    url: watched[s].server.agent_url(ECHO),
                });
                let result: LoadResult =
                    closed_loop(sender, concurrency, options.run_time()).await?;
                watched[s].scrape(&client).await?;
                if options.measured(round) {
                    runs[s][c].push(result.throughput());
                }
            }
        }
        for side in watched {
            side.stop().await;
        }
    }

    let mut costs = Vec::new();
    for (s, side) in Side::ALL.iter().enumerate().skip(1) {
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
    }
    report.notes.push(format!(
        "{SUITE}: the same echo server with and without metrics, loopback, reqwest with \
         keep-alive, one contextId per connection; sides alternate order each round; \
         the metrics side is scraped once per run"
    ));
    let measured = costs
        .iter()
        .map(|(id, ratio)| format!("{id}: {}", crate::report::fmt_ratio(*ratio)))
        .collect::<Vec<_>>()
        .join(", ");
    let met = costs.iter().all(|(_, ratio)| *ratio >= 1.0 - MAX_COST);
    report.targets.push(Target::new(
        "HTTP message/send with observability on >= 95% of the throughput with it off (16 and 64 conn)",
        measured,
        met,
    ));
    Ok(())
}
