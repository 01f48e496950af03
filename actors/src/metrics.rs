//! The runtime's metrics, in the Prometheus text format.
//!
//! Each supervisor owns one [`Metrics`] (unless turned off with
//! [`SupervisorConfig::metrics`](crate::SupervisorConfig::metrics)): a
//! `prometheus-client` registry of its own, never a process-wide recorder, so two
//! runtimes in one process (tests, benchmarks) keep their own counts.
//!
//! # Cheap on the send path
//!
//! Every handle the send path touches is resolved once, when the agent types are
//! registered: per agent, a table of counters indexed by entry point and outcome, and
//! two histograms. A send then costs a few relaxed atomic increments and no lock and
//! no map lookup beyond the agent table the supervisor reads anyway. The histograms
//! are this module's own ([`AtomicHistogram`]): `prometheus-client`'s takes a mutex
//! per observation, which every send to one agent would contend on.
//!
//! What is a count of the runtime's state rather than of things that happened (live
//! sessions, live tasks by state, queue depths) is read from that state when the
//! metrics are scraped, so keeping it costs the send path nothing.
//!
//! # The metrics
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `agentyard_sends_total` | counter | `agent`, `entry_point` (api, agent, http, workflow, other), `outcome` (completed, failed, policy_rejected, deduplicated, busy) |
//! | `agentyard_refusals_total` | counter | `reason` (policy, rate, hop_limit, busy, cycle, shutting_down, invalid, unknown_agent) |
//! | `agentyard_send_duration_seconds` | histogram | `agent` |
//! | `agentyard_task_duration_seconds` | histogram | `agent` |
//! | `agentyard_sessions_live` | gauge | `agent` |
//! | `agentyard_passivations_total` | counter | `agent` |
//! | `agentyard_queue_depth` | gauge | `scope` (global, agent, session) |
//! | `agentyard_tasks` | gauge | `state` |
//! | `agentyard_push_deliveries_total` | counter | `outcome` (delivered, retried, failed) |
//! | `agentyard_http_requests_total` | counter | `method`, `code` |
//! | `agentyard_http_request_duration_seconds` | histogram | `method` |
//!
//! A send's `outcome` is its closing event (see [`crate::events`]): exactly one per
//! send, so the outcomes of an agent add up to the sends it was given. A send to an
//! agent that is not registered has no agent to count under; it is counted only as a
//! refusal (`unknown_agent`), so that a caller naming random agents cannot grow the
//! number of series.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agentyard_policy::{EntryPoint, RejectionKind};
use agentyard_transport::a2a::TaskState;
use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;

use crate::error::Error;

/// The `Content-Type` of a scrape (the Prometheus text format, version 0.0.4).
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Upper bounds (seconds) of the latency histograms' buckets: 1 ms to 1 minute, about
/// three per decade, which covers an in-process echo and a model call alike.
const LATENCY_BOUNDS: [f64; 15] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// How a send ended: its closing event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// `a2a.send.completed`.
    Completed,
    /// `a2a.send.failed`.
    Failed,
    /// `a2a.send.policy_rejected`.
    PolicyRejected,
    /// `a2a.send.deduplicated`.
    Deduplicated,
    /// `a2a.send.busy`.
    Busy,
}

impl Outcome {
    const ALL: [Self; 5] = [
        Self::Completed,
        Self::Failed,
        Self::PolicyRejected,
        Self::Deduplicated,
        Self::Busy,
    ];

    const fn label(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::PolicyRejected => "policy_rejected",
            Self::Deduplicated => "deduplicated",
            Self::Busy => "busy",
        }
    }
}

/// The entry points counted apart; every [`EntryPoint::Other`] counts as `other`, so
/// the table is fixed when the agent registers.
const ENTRY_POINTS: [&str; 5] = ["api", "agent", "http", "workflow", "other"];

const fn entry_index(entry_point: EntryPoint) -> usize {
    match entry_point {
        EntryPoint::Api => 0,
        EntryPoint::Agent => 1,
        EntryPoint::Http => 2,
        EntryPoint::Workflow => 3,
        _ => 4,
    }
}

/// Why a send was refused before its agent ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A deny rule, the default deny, or a custom policy.
    Policy,
    /// Out of rate-limit tokens.
    Rate,
    /// Delegated deeper than the hop limit.
    HopLimit,
    /// A concurrency limit and its line were full.
    Busy,
    /// The send would wait on its own chain of delegations.
    Cycle,
    /// The runtime is shutting down.
    ShuttingDown,
    /// The message or its payload is invalid.
    Invalid,
    /// No agent of that name.
    UnknownAgent,
}

impl Refusal {
    const ALL: [Self; 8] = [
        Self::Policy,
        Self::Rate,
        Self::HopLimit,
        Self::Busy,
        Self::Cycle,
        Self::ShuttingDown,
        Self::Invalid,
        Self::UnknownAgent,
    ];

    const fn label(self) -> &'static str {
        match self {
            Self::Policy => "policy",
            Self::Rate => "rate",
            Self::HopLimit => "hop_limit",
            Self::Busy => "busy",
            Self::Cycle => "cycle",
            Self::ShuttingDown => "shutting_down",
            Self::Invalid => "invalid",
            Self::UnknownAgent => "unknown_agent",
        }
    }

    /// The refusal an error of the send path is, if it is one (other errors — a bad
    /// task id, a store failure — are failures, not refusals).
    pub(crate) fn of(error: &Error) -> Option<Self> {
        Some(match error {
            Error::PolicyRejected { rejection, .. } => match rejection.kind() {
                RejectionKind::RateLimited { .. } => Self::Rate,
                RejectionKind::HopLimitExceeded { .. } => Self::HopLimit,
                _ => Self::Policy,
            },
            Error::Busy { .. } => Self::Busy,
            Error::DelegationCycle { .. } => Self::Cycle,
            Error::ShuttingDown => Self::ShuttingDown,
            Error::InvalidMessage(_) => Self::Invalid,
            Error::UnknownAgent(_) => Self::UnknownAgent,
            _ => return None,
        })
    }
}

/// Where push notifications ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PushOutcome {
    /// A webhook accepted it.
    Delivered,
    /// An attempt failed and is retried.
    Retried,
    /// Given up on.
    Failed,
}

impl PushOutcome {
    const ALL: [Self; 3] = [Self::Delivered, Self::Retried, Self::Failed];

    const fn label(self) -> &'static str {
        match self {
            Self::Delivered => "delivered",
            Self::Retried => "retried",
            Self::Failed => "failed",
        }
    }
}

/// A latency histogram whose observations are three relaxed atomic additions: the
/// count, the sum (in nanoseconds) and one bucket. Buckets are kept per interval and
/// made cumulative when encoded. Clones share the counts.
#[derive(Debug, Clone)]
pub struct AtomicHistogram {
    inner: Arc<HistogramInner>,
}

#[derive(Debug)]
struct HistogramInner {
    /// One per bound, plus the last for what lies above every bound.
    buckets: [AtomicU64; LATENCY_BOUNDS.len() + 1],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

impl Default for AtomicHistogram {
    fn default() -> Self {
        Self {
            inner: Arc::new(HistogramInner {
                buckets: std::array::from_fn(|_| AtomicU64::new(0)),
                count: AtomicU64::new(0),
                sum_nanos: AtomicU64::new(0),
            }),
        }
    }
}

impl AtomicHistogram {
    /// Records one observation.
    pub fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let bucket = LATENCY_BOUNDS.partition_point(|bound| *bound < seconds);
        let inner = &self.inner;
        inner.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        inner.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        inner.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// How many observations were recorded.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.inner.count.load(Ordering::Relaxed)
    }
}

impl TypedMetric for AtomicHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for AtomicHistogram {
    fn encode(&self, mut encoder: MetricEncoder<'_>) -> Result<(), fmt::Error> {
        let inner = &self.inner;
        let buckets: Vec<(f64, u64)> = LATENCY_BOUNDS
            .iter()
            .copied()
            .chain([f64::INFINITY])
            .zip(inner.buckets.iter().map(|b| b.load(Ordering::Relaxed)))
            .collect();
        // The count is the buckets' total, read from them, so that a scrape racing an
        // observation never shows a +Inf bucket that disagrees with `_count`.
        let count = buckets.iter().map(|(_, n)| n).sum();
        #[allow(clippy::cast_precision_loss, reason = "nanoseconds as seconds")]
        let sum = inner.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

/// The JSON-RPC methods whose successful requests (HTTP 200) are counted through
/// handles resolved at start, without a map lookup: the calls a busy server mostly
/// gets. Any other method, route or status goes through the families' maps.
const HOT_METHODS: [&str; 11] = [
    agentyard_transport::jsonrpc::method::SEND_MESSAGE,
    agentyard_transport::jsonrpc::method::SEND_STREAMING_MESSAGE,
    agentyard_transport::jsonrpc::method::GET_TASK,
    agentyard_transport::jsonrpc::method::CANCEL_TASK,
    agentyard_transport::jsonrpc::method::TASK_RESUBSCRIPTION,
    agentyard_transport::a2a::v1::method::SEND_MESSAGE,
    agentyard_transport::a2a::v1::method::SEND_STREAMING_MESSAGE,
    agentyard_transport::a2a::v1::method::GET_TASK,
    agentyard_transport::a2a::v1::method::CANCEL_TASK,
    agentyard_transport::a2a::v1::method::SUBSCRIBE_TO_TASK,
    agentyard_transport::a2a::v1::method::LIST_TASKS,
];

/// One agent type's handles, resolved when it registers.
#[derive(Debug)]
pub(crate) struct AgentMetrics {
    /// `[entry point][outcome]`.
    sends: [[Counter; Outcome::ALL.len()]; ENTRY_POINTS.len()],
    send_duration: AtomicHistogram,
    task_duration: AtomicHistogram,
    passivations: Counter,
}

impl AgentMetrics {
    /// Counts a send's closing `outcome` and, when it settled a task's turn, how long
    /// the send took from the supervisor's accept.
    pub(crate) fn send(&self, entry_point: EntryPoint, outcome: Outcome, took: Option<Duration>) {
        self.sends[entry_index(entry_point)][outcome as usize].inc();
        if let Some(took) = took {
            self.send_duration.observe(took);
        }
    }

    /// Records how long a task lived, from creation to its end.
    pub(crate) fn task_ended(&self, lived: Duration) {
        self.task_duration.observe(lived);
    }

    /// Counts a passivated session.
    pub(crate) fn passivated(&self) {
        self.passivations.inc();
    }
}

type Labels = Vec<(&'static str, String)>;

/// One runtime's metrics; see the [module docs](self).
pub struct Metrics {
    registry: Registry,
    agents: HashMap<Arc<str>, Arc<AgentMetrics>>,
    refusals: [Counter; Refusal::ALL.len()],
    push: [Counter; PushOutcome::ALL.len()],
    sessions_live: Family<Labels, Gauge>,
    queue_depth: Family<Labels, Gauge>,
    tasks: Family<Labels, Gauge>,
    http_requests: Family<Labels, Counter>,
    http_duration: Family<Labels, AtomicHistogram>,
    /// `[i]`: the HTTP 200 counter and the latency of [`HOT_METHODS`]`[i]`.
    http_hot: [(Counter, AtomicHistogram); HOT_METHODS.len()],
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics")
            .field("agents", &self.agents.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The task states counted by `agentyard_tasks` (those a live task can be in; each is
/// reported, zero or not, so a chart of one has no gaps).
const LIVE_STATES: [TaskState; 4] = [
    TaskState::Submitted,
    TaskState::Working,
    TaskState::InputRequired,
    TaskState::AuthRequired,
];

impl Metrics {
    /// The metrics of a runtime with these agent types: every per-agent series exists
    /// from the start, at zero.
    pub(crate) fn new<'a>(agents: impl IntoIterator<Item = &'a Arc<str>>) -> Self {
        let mut registry = Registry::default();
        let sends = Family::<Labels, Counter>::default();
        registry.register(
            "agentyard_sends",
            "Sends by target agent, entry point and outcome (the send's closing event)",
            sends.clone(),
        );
        let refusals = Family::<Labels, Counter>::default();
        registry.register(
            "agentyard_refusals",
            "Sends refused before their agent ran, by reason",
            refusals.clone(),
        );
        let send_duration = Family::<Labels, AtomicHistogram>::default();
        registry.register(
            "agentyard_send_duration_seconds",
            "From the supervisor accepting a send to its turn settling",
            send_duration.clone(),
        );
        let task_duration = Family::<Labels, AtomicHistogram>::default();
        registry.register(
            "agentyard_task_duration_seconds",
            "From a task's creation to its end",
            task_duration.clone(),
        );
        let sessions_live = Family::<Labels, Gauge>::default();
        registry.register(
            "agentyard_sessions_live",
            "Live sessions (spawned, not passivated) by agent",
            sessions_live.clone(),
        );
        let passivations = Family::<Labels, Counter>::default();
        registry.register(
            "agentyard_passivations",
            "Sessions passivated, by agent",
            passivations.clone(),
        );
        let queue_depth = Family::<Labels, Gauge>::default();
        registry.register(
            "agentyard_queue_depth",
            "Sends waiting for a concurrency limit, by limit scope",
            queue_depth.clone(),
        );
        let tasks = Family::<Labels, Gauge>::default();
        registry.register(
            "agentyard_tasks",
            "Tasks that have not ended, by state",
            tasks.clone(),
        );
        let push = Family::<Labels, Counter>::default();
        registry.register(
            "agentyard_push_deliveries",
            "Push notification deliveries by outcome",
            push.clone(),
        );
        let http_requests = Family::<Labels, Counter>::default();
        registry.register(
            "agentyard_http_requests",
            "HTTP requests by JSON-RPC method (or route) and HTTP status code",
            http_requests.clone(),
        );
        let http_duration = Family::<Labels, AtomicHistogram>::default();
        registry.register(
            "agentyard_http_request_duration_seconds",
            "HTTP request latency (for a stream, until it started) by JSON-RPC method or route",
            http_duration.clone(),
        );
        let agents = agents
            .into_iter()
            .map(|agent| {
                let label = || vec![("agent", agent.to_string())];
                let metrics = AgentMetrics {
                    sends: std::array::from_fn(|entry| {
                        std::array::from_fn(|outcome| {
                            sends
                                .get_or_create(&vec![
                                    ("agent", agent.to_string()),
                                    ("entry_point", ENTRY_POINTS[entry].to_owned()),
                                    ("outcome", Outcome::ALL[outcome].label().to_owned()),
                                ])
                                .clone()
                        })
                    }),
                    send_duration: send_duration.get_or_create(&label()).clone(),
                    task_duration: task_duration.get_or_create(&label()).clone(),
                    passivations: passivations.get_or_create(&label()).clone(),
                };
                sessions_live.get_or_create(&label()).set(0);
                (Arc::clone(agent), Arc::new(metrics))
            })
            .collect();
        let labelled = |family: &Family<Labels, Counter>, key: &'static str, value: &str| {
            family.get_or_create(&vec![(key, value.to_owned())]).clone()
        };
        let http_hot = HOT_METHODS.map(|method| {
            let requests = http_requests
                .get_or_create(&vec![
                    ("method", method.to_owned()),
                    ("code", String::from("200")),
                ])
                .clone();
            let latency = http_duration
                .get_or_create(&vec![("method", method.to_owned())])
                .clone();
            (requests, latency)
        });
        Self {
            http_hot,
            refusals: Refusal::ALL.map(|r| labelled(&refusals, "reason", r.label())),
            push: PushOutcome::ALL.map(|o| labelled(&push, "outcome", o.label())),
            registry,
            agents,
            sessions_live,
            queue_depth,
            tasks,
            http_requests,
            http_duration,
        }
    }

    /// The handles of a registered agent type.
    pub(crate) fn agent(&self, name: &str) -> Option<&Arc<AgentMetrics>> {
        self.agents.get(name)
    }

    /// Counts a refusal.
    pub(crate) fn refused(&self, reason: Refusal) {
        self.refusals[reason as usize].inc();
    }

    /// Counts a push notification delivery's outcome.
    pub fn push(&self, outcome: PushOutcome) {
        self.push[outcome as usize].inc();
    }

    /// Counts an HTTP request: `method` is the JSON-RPC method or the route, `code`
    /// the HTTP status. A successful call of a common JSON-RPC method costs two atomic
    /// additions and a histogram observation; anything else looks its series up in the
    /// families' maps (a read lock), as those labels are open-ended.
    pub fn http_request(&self, method: &str, code: u16, took: Duration) {
        if code == 200
            && let Some(hot) = HOT_METHODS.iter().position(|hot| *hot == method)
        {
            let (requests, latency) = &self.http_hot[hot];
            requests.inc();
            latency.observe(took);
            return;
        }
        self.http_requests
            .get_or_create(&vec![
                ("method", method.to_owned()),
                ("code", code.to_string()),
            ])
            .inc();
        self.http_duration
            .get_or_create(&vec![("method", method.to_owned())])
            .observe(took);
    }

    /// Sets the gauges read from the runtime's state at scrape time.
    pub(crate) fn set_state(
        &self,
        sessions: &HashMap<Arc<str>, usize>,
        tasks: &HashMap<TaskState, usize>,
        queues: [(&'static str, usize); 3],
    ) {
        for agent in self.agents.keys() {
            let live = sessions.get(agent).copied().unwrap_or(0);
            self.sessions_live
                .get_or_create(&vec![("agent", agent.to_string())])
                .set(i64::try_from(live).unwrap_or(i64::MAX));
        }
        for state in LIVE_STATES {
            let n = tasks.get(&state).copied().unwrap_or(0);
            self.tasks
                .get_or_create(&vec![("state", state.to_string())])
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        }
        for (scope, waiting) in queues {
            self.queue_depth
                .get_or_create(&vec![("scope", scope.to_owned())])
                .set(i64::try_from(waiting).unwrap_or(i64::MAX));
        }
    }

    /// The registry in the Prometheus text format.
    pub(crate) fn encode(&self) -> String {
        let mut out = String::with_capacity(16 * 1024);
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_counts_each_observation_in_its_bucket() {
        let histogram = AtomicHistogram::default();
        histogram.observe(Duration::from_micros(500));
        histogram.observe(Duration::from_millis(1));
        histogram.observe(Duration::from_millis(7));
        histogram.observe(Duration::from_secs(120));
        let mut registry = Registry::default();
        registry.register("h_seconds", "h", histogram.clone());
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains("h_seconds_bucket{le=\"0.001\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("h_seconds_bucket{le=\"0.005\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("h_seconds_bucket{le=\"0.01\"} 3\n"), "{text}");
        assert!(text.contains("h_seconds_bucket{le=\"60\"} 3\n"), "{text}");
        assert!(text.contains("h_seconds_bucket{le=\"+Inf\"} 4\n"), "{text}");
        assert!(text.contains("h_seconds_count 4\n"), "{text}");
        assert!(text.contains("h_seconds_sum 120.0085\n"), "{text}");
        assert_eq!(histogram.count(), 4);
    }

    #[test]
    fn every_agent_series_exists_from_the_start() {
        let agents = [Arc::<str>::from("echo")];
        let metrics = Metrics::new(&agents);
        let text = metrics.encode();
        assert!(
            text.contains(
                "agentyard_sends_total{agent=\"echo\",entry_point=\"http\",outcome=\"busy\"} 0"
            ),
            "{text}"
        );
        assert!(
            text.contains("agentyard_refusals_total{reason=\"hop_limit\"} 0"),
            "{text}"
        );
        metrics.agent("echo").unwrap().send(
            EntryPoint::Api,
            Outcome::Completed,
            Some(Duration::from_millis(2)),
        );
        let text = metrics.encode();
        assert!(
            text.contains(
                "agentyard_sends_total{agent=\"echo\",entry_point=\"api\",outcome=\"completed\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains("agentyard_send_duration_seconds_count{agent=\"echo\"} 1"),
            "{text}"
        );
    }
}
