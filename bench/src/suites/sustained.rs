//! Suite 5: sustained load against the real server: a new conversation per request, for minutes, with the server's memory sampled.
//!
//! **Server.** `agentyard serve` with its embedded defaults (no config file), bound to
//! 127.0.0.1 on a free port, in a child process of its own (this program started
//! again with a hidden subcommand, which runs the same [`Server`] the `agentyard`
//! program runs). Its resident memory is read from `/proc/<pid>/status`, so the load
//! generator's own memory never counts.
//!
//! **Load.** [`CONNECTIONS`] keep-alive connections sending `message/send` to the
//! default agent (echo) at full speed, each request a new conversation (no
//! `contextId`, as ordinary A2A clients send a first message), for five minutes
//! (`--sustained-secs`; seconds with `--quick`). Resident memory and the number of
//! answered requests are sampled every 10 s.
//!
//! **Figures.** Throughput in the last fifth of the run (minute 5) against the first
//! (minute 1); resident memory at the end of minute 5 against the end of minute 1;
//! peak resident memory (`VmHWM`) against the idle server's. The issue's targets: peak
//! ≤ 100 MiB, no growth from minute 1 to minute 5, minute-5 throughput within 10% of
//! minute 1.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use agentyard::config::Config;
use agentyard::serve::Server;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::child::ChildServer;
use crate::error::{Error, Result};
use crate::memory;
use crate::options::{Options, progress};
use crate::report::{Better, Figure, Report, Target, Unit};

const SUITE: &str = "sustained";

/// Concurrent connections, as in the issue's wrk run.
const CONNECTIONS: usize = 16;

/// The issue's ceiling on the server's peak resident memory.
const PEAK_TARGET: u64 = 100 * 1024 * 1024;

/// Past this much resident memory the run stops: the machine is shared, and a server
/// that grows without bound would take everyone's memory before the run ends.
const RSS_ABORT: u64 = 4 * 1024 * 1024 * 1024;

/// The hidden child: `agentyard serve` with the embedded defaults (tasks in memory) on
/// a free loopback port. Prints the address it listens on, serves until its standard input closes,
/// then stops as the program does on Ctrl-C.
///
/// # Errors
/// The server cannot start, or its address cannot be printed.
pub(crate) async fn serve() -> Result<()> {
    let mut config = Config::default();
    config.server.bind = SocketAddr::from(([127, 0, 0, 1], 0));
    // Tasks in memory, as the figures in docs/benchmarks.md were taken; the durable
    // stores are measured by the http and supervisor suites (`--store`).
    config.store.kind = Some(agentyard::config::StoreKind::Memory);
    let server = Server::from_config(config)
        .await
        .map_err(|error| Error::Unexpected(format!("agentyard serve did not start: {error}")))?;
    println!("{}", server.local_addr());
    crate::child::until_stdin_closes().await;
    server.stop().await;
    Ok(())
}

/// One reading of the server.
#[derive(Debug, Clone, Copy)]
struct Sample {
    /// Seconds since the load started.
    at: f64,
    /// Resident memory, bytes.
    rss: u64,
    /// Requests answered so far.
    answered: u64,
}

/// What one sustained run measured.
#[derive(Debug)]
struct Run {
    samples: Vec<Sample>,
    idle_rss: u64,
    peak_rss: u64,
}

impl Run {
    /// How many samples make a fifth of the run (a minute of five): at least one.
    fn fifth(&self) -> usize {
        ((self.samples.len() - 1) as f64 / 5.0).round().max(1.0) as usize
    }

    /// Answered requests per second between samples `from` and `to`.
    fn rate(&self, from: usize, to: usize) -> f64 {
        let (a, b) = (self.samples[from], self.samples[to]);
        (b.answered - a.answered) as f64 / (b.at - a.at).max(f64::MIN_POSITIVE)
    }

    /// Throughput in the first fifth ("minute 1") and the last ("minute 5").
    fn first_and_last_rate(&self) -> (f64, f64) {
        let last = self.samples.len() - 1;
        let fifth = self.fifth().min(last);
        (self.rate(0, fifth), self.rate(last - fifth, last))
    }

    /// Resident memory at the end of the first fifth and at the end of the run.
    fn first_and_last_rss(&self) -> (u64, u64) {
        let last = self.samples.len() - 1;
        (
            self.samples[self.fifth().min(last)].rss,
            self.samples[last].rss,
        )
    }
}

/// Runs the suite once (five minutes is long enough to show growth; a repeat would
/// only add time) and adds its rows and targets.
///
/// # Errors
/// The server cannot start, a request fails, or the server grows past [`RSS_ABORT`].
pub(crate) async fn run(options: &Options, report: &mut Report) -> Result<()> {
    let total = Duration::from_secs_f64(options.sustained_secs);
    let every = Duration::from_secs_f64(options.sample_secs.min(options.sustained_secs));
    progress(format!(
        "{SUITE}: {} s of message/send over {CONNECTIONS} connections, a new \
         conversation per request, memory sampled every {} s",
        total.as_secs_f64(),
        every.as_secs_f64()
    ));
    let server = ServerProcess::start()?;
    let result = measure(&server, total, every).await;
    server.stop().await;
    let run = result?;

    let (rate1, rate5) = run.first_and_last_rate();
    let (rss1, rss5) = run.first_and_last_rss();
    let rows: [(&str, &str, Unit, Better, &str, f64, f64); 3] = [
        (
            "throughput",
            "message/send, new conversation each, last fifth (minute 5)",
            Unit::PerSecond,
            Better::Higher,
            "first fifth (minute 1)",
            rate5,
            rate1,
        ),
        (
            "rss",
            "server resident memory at the end (minute 5)",
            Unit::Bytes,
            Better::Lower,
            "at the end of the first fifth (minute 1)",
            rss5 as f64,
            rss1 as f64,
        ),
        (
            "peak_rss",
            "server peak resident memory under load",
            Unit::Bytes,
            Better::Lower,
            "the idle server's",
            run.peak_rss as f64,
            run.idle_rss as f64,
        ),
    ];
    for (id, case, unit, better, floor_is, runtime, floor) in rows {
        report.rows.push(
            Figure::new(SUITE, id, case, unit, better)
                .against(floor_is)
                .row(&[runtime], &[floor])?,
        );
    }
    let answered = run.samples.last().map_or(0, |s| s.answered);
    report.notes.push(format!(
        "{SUITE}: {answered} requests in {} s over {CONNECTIONS} connections; resident \
         memory every {} s (MiB): {}",
        total.as_secs_f64(),
        every.as_secs_f64(),
        run.samples
            .iter()
            .map(|s| format!("{:.0}", mib(s.rss)))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    report.check(
        SUITE,
        format!("the server answered every request ({answered} answered)"),
        answered > 0,
    );
    report.targets.push(Target::new(
        "sustained: the default server's peak resident memory <= 100 MiB",
        format!("peak {:.1} MiB", mib(run.peak_rss)),
        run.peak_rss <= PEAK_TARGET,
    ));
    // "No growth": what minute 5 holds beyond minute 1 is within 5% (allocator noise),
    // or within 2 MiB for a small server.
    let growth = rss5.saturating_sub(rss1);
    report.targets.push(Target::new(
        "sustained: no growth of resident memory from minute 1 to minute 5",
        format!(
            "{:.1} MiB at minute 1, {:.1} MiB at minute 5",
            mib(rss1),
            mib(rss5)
        ),
        growth <= (rss1 / 20).max(2 * 1024 * 1024),
    ));
    report.targets.push(Target::new(
        "sustained: minute-5 throughput within 10% of minute 1",
        format!("{rate1:.0}/s in minute 1, {rate5:.0}/s in minute 5"),
        rate5 >= 0.9 * rate1,
    ));
    Ok(())
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Offers the load for `total`, sampling every `every`.
async fn measure(server: &ServerProcess, total: Duration, every: Duration) -> Result<Run> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(CONNECTIONS)
        .build()?;
    let answered = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let idle_rss = server.rss()?;
    let start = Instant::now();
    let deadline = start + total;
    let mut senders = JoinSet::new();
    for connection in 0..CONNECTIONS {
        let sender = Sender {
            client: client.clone(),
            url: format!("http://{}/", server.address),
            connection,
            answered: Arc::clone(&answered),
            stop: Arc::clone(&stop),
        };
        senders.spawn(sender.run(deadline));
    }

    let mut samples = vec![Sample {
        at: 0.0,
        rss: idle_rss,
        answered: 0,
    }];
    let mut next = start;
    let mut failure = None;
    while next < deadline {
        next = (next + every).min(deadline);
        tokio::time::sleep_until(next).await;
        let rss = server.rss()?;
        let sample = Sample {
            at: next.duration_since(start).as_secs_f64(),
            rss,
            answered: answered.load(Ordering::Relaxed),
        };
        let previous = samples[samples.len() - 1];
        progress(format!(
            "{SUITE}: {:>5.1} s  {:>7.1} MiB resident  {:>8.0} requests/s",
            sample.at,
            mib(rss),
            (sample.answered - previous.answered) as f64 / (sample.at - previous.at)
        ));
        samples.push(sample);
        if rss > RSS_ABORT {
            failure = Some(Error::Unexpected(format!(
                "the server grew past {:.0} MiB after {:.0} s; stopped to spare the machine",
                mib(RSS_ABORT),
                sample.at
            )));
            break;
        }
        if stop.load(Ordering::Relaxed) {
            // A sender failed; its error is collected below.
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let peak_rss = server.peak_rss()?;
    while let Some(joined) = senders.join_next().await {
        if let Err(error) = joined? {
            failure.get_or_insert(error);
        }
    }
    if let Some(error) = failure {
        return Err(error);
    }
    Ok(Run {
        samples,
        idle_rss,
        peak_rss,
    })
}

/// One connection's closed loop.
struct Sender {
    client: reqwest::Client,
    url: String,
    connection: usize,
    answered: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Sender {
    async fn run(self, deadline: Instant) -> Result<()> {
        let result = self.send_until(deadline).await;
        if result.is_err() {
            // The others stop too: a run with a failure has no figures.
            self.stop.store(true, Ordering::Relaxed);
        }
        result
    }

    async fn send_until(&self, deadline: Instant) -> Result<()> {
        let mut seq = 0u64;
        while Instant::now() < deadline && !self.stop.load(Ordering::Relaxed) {
            let response = self
                .client
                .post(&self.url)
                .header(CONTENT_TYPE, "application/json")
                .body(request_body(self.connection, seq))
                .send()
                .await?;
            let status = response.status();
            let body = response.bytes().await?;
            if status != StatusCode::OK || !contains(&body, b"\"result\"") {
                return Err(Error::Unexpected(format!(
                    "{} answered HTTP {status}: {}",
                    self.url,
                    String::from_utf8_lossy(&body)
                )));
            }
            self.answered.fetch_add(1, Ordering::Relaxed);
            seq += 1;
        }
        Ok(())
    }
}

/// Request `seq` of `connection`: a first message, with no `contextId`, so the server
/// opens a new conversation for each.
fn request_body(connection: usize, seq: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{seq},"method":"message/send","params":{{"message":{{"kind":"message","role":"user","messageId":"sustained-{connection}-{seq}","parts":[{{"kind":"text","text":"ping"}}]}}}}}}"#
    )
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The server in its child process, with the address it printed.
struct ServerProcess {
    child: ChildServer,
    address: SocketAddr,
}

impl ServerProcess {
    /// Starts the child and reads the address it listens on.
    fn start() -> Result<Self> {
        let child = ChildServer::start("child-serve", SUITE)?;
        match child.announced().parse() {
            Ok(address) => Ok(Self { child, address }),
            Err(_) => {
                let detail = format!(
                    "the server printed {:?}, not its address",
                    child.announced()
                );
                child.kill();
                Err(Error::Child {
                    what: String::from(SUITE),
                    detail,
                })
            }
        }
    }

    fn rss(&self) -> Result<u64> {
        memory::process_rss_bytes(self.child.pid())
    }

    fn peak_rss(&self) -> Result<u64> {
        memory::process_peak_rss_bytes(self.child.pid())
    }

    /// Stops the server as on Ctrl-C (see [`ChildServer::stop`]).
    async fn stop(self) {
        self.child.stop().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(answered_and_rss: &[(u64, u64)]) -> Run {
        Run {
            samples: answered_and_rss
                .iter()
                .enumerate()
                .map(|(i, &(answered, rss))| Sample {
                    at: i as f64 * 10.0,
                    rss,
                    answered,
                })
                .collect(),
            idle_rss: 1,
            peak_rss: 2,
        }
    }

    #[test]
    fn minute_one_and_minute_five_are_the_first_and_last_fifth() {
        // 30 samples after the start: 5 minutes at one per 10 s; 100 requests/s in the
        // first minute, 50/s in the last.
        let mut points = vec![(0, 10)];
        let mut answered = 0;
        for i in 1..=30u64 {
            answered += if i <= 6 { 1000 } else { 500 };
            points.push((answered, 10 + i));
        }
        let run = run(&points);
        assert_eq!(run.fifth(), 6);
        assert_eq!(run.first_and_last_rate(), (100.0, 50.0));
        assert_eq!(run.first_and_last_rss(), (16, 40));
    }

    #[test]
    fn a_short_run_still_has_a_first_and_a_last_window() {
        let run = run(&[(0, 5), (10, 6), (30, 7)]);
        assert_eq!(run.fifth(), 1);
        assert_eq!(run.first_and_last_rate(), (1.0, 2.0));
        assert_eq!(run.first_and_last_rss(), (6, 7));
    }

    #[test]
    fn a_request_opens_a_new_conversation() {
        let body: serde_json::Value =
            serde_json::from_str(&request_body(2, 9)).expect("the body is JSON");
        assert_eq!(body["method"], "message/send");
        assert_eq!(body["params"]["message"]["messageId"], "sustained-2-9");
        assert!(body["params"]["message"].get("contextId").is_none());
    }
}
