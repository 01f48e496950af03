//! Traces and logs out of the process: the `[tracing]` config section, and the
//! `tracing` subscriber that writes log lines and, when configured, exports spans
//! with OpenTelemetry over OTLP.
//!
//! agentyard's spans (see `docs/tracing.md`) are `tracing` spans: `request` (the HTTP
//! edge), `a2a.jsonrpc`, `a2a.send` (the supervisor's send path), `agent.handle` (the
//! agent's turn), `a2a.remote` (calls to a remote agent) and `a2a.push` (a webhook
//! delivery attempt). [`install`] (what `agentyard serve` calls) and [`init`] (for a
//! program or a benchmark that wants the traces without log lines) put an
//! OpenTelemetry layer under them when an OTLP endpoint is configured
//! ([`TracingConfig::otlp_endpoint`], or `OTEL_EXPORTER_OTLP_ENDPOINT` /
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` in the environment): each span then has
//! trace and span ids, the `traceparent` of an incoming request is its parent, calls
//! out carry the ids on, and the spans are batched to the collector from the SDK's own
//! thread. Without an endpoint nothing is exported, nothing is started and nothing
//! needs to be installed.
//!
//! Log lines in the JSON format carry `trace_id` and `span_id` when traces are on and
//! the line is written inside a span, to find a line's trace (and a trace's lines).

use std::sync::Arc;

use agentyard_transport::trace::{self, HeadSampler};

use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use serde::Deserialize;
use tracing::Subscriber;
use tracing::field::Field;
use tracing::subscriber::Interest;
use tracing_subscriber::field::{RecordFields, VisitOutput as _};
use tracing_subscriber::filter::EnvFilter;
use tracing_subscriber::fmt::format::{DefaultVisitor, JsonFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::layer::{self, Filter, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{Layer as _, fmt};

use crate::config::ConfigError;

/// The environment variables that turn the export on without a config file, as in
/// every OpenTelemetry SDK: the traces' own first.
const ENDPOINT_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// `[tracing]`: exporting spans with OpenTelemetry (OTLP over HTTP). Off unless an
/// endpoint is configured here or in the environment.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct TracingConfig {
    /// The collector's OTLP/HTTP base URL, e.g. `http://127.0.0.1:4318` (spans go to
    /// `<url>/v1/traces`; a URL already ending in `/v1/traces` is used as it is).
    /// Unset (the default): `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as it is) or
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL), and with neither, no export.
    pub otlp_endpoint: Option<String>,
    /// How spans are encoded: `"http/protobuf"` (the default) or `"http/json"`.
    pub protocol: OtlpProtocol,
    /// The `service.name` the spans are reported under (default `agentyard`); give
    /// each process its own to tell them apart in one trace.
    pub service_name: String,
    /// The share of new traces recorded, from 0.0 to 1.0 (default 1.0). A request
    /// whose `traceparent` says whether its trace is sampled follows that decision.
    pub sampling_ratio: f64,
    /// The most new traces recorded in any one second (default 100; 0: no limit), so
    /// that what tracing costs stays bounded under any load: at low traffic every
    /// trace is recorded, at thousands of requests a second a sample of them. Like
    /// the ratio, it decides only traces that start here: a request whose
    /// `traceparent` says its trace is sampled is recorded whatever the count.
    pub max_traces_per_second: u32,
}

impl Default for TracingConfig {
    fn default() -> Self {
        Self {
            otlp_endpoint: None,
            protocol: OtlpProtocol::HttpProtobuf,
            service_name: String::from("agentyard"),
            sampling_ratio: 1.0,
            max_traces_per_second: DEFAULT_MAX_TRACES_PER_SECOND,
        }
    }
}

/// New traces recorded per second at most, unless configured otherwise: enough to
/// see every trace of a person trying things out, and at ~4 spans a trace a small,
/// fixed share of one core however busy the server is.
const DEFAULT_MAX_TRACES_PER_SECOND: u32 = 100;

/// The OTLP encoding over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[non_exhaustive]
pub enum OtlpProtocol {
    /// Binary protobuf (`application/x-protobuf`), what collectors expect by default.
    #[default]
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    /// Protobuf's JSON mapping (`application/json`).
    #[serde(rename = "http/json")]
    HttpJson,
}

impl TracingConfig {
    /// Export to the OTLP/HTTP collector at `endpoint` (a base URL such as
    /// `http://127.0.0.1:4318`), the other settings at their defaults.
    #[must_use]
    pub fn otlp(endpoint: impl Into<String>) -> Self {
        Self {
            otlp_endpoint: Some(endpoint.into()),
            ..Self::default()
        }
    }

    /// The same, encoding spans as `protocol`.
    #[must_use]
    pub const fn protocol(mut self, protocol: OtlpProtocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// The same, reporting as `service_name`.
    #[must_use]
    pub fn service_name(mut self, service_name: impl Into<String>) -> Self {
        self.service_name = service_name.into();
        self
    }

    /// The same, recording `ratio` of new traces.
    #[must_use]
    pub const fn sampling_ratio(mut self, ratio: f64) -> Self {
        self.sampling_ratio = ratio;
        self
    }

    /// The same, recording at most `max` new traces a second (0: no limit).
    #[must_use]
    pub const fn max_traces_per_second(mut self, max: u32) -> Self {
        self.max_traces_per_second = max;
        self
    }

    /// Whether spans are exported: an endpoint is configured, here or in the
    /// environment.
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        self.otlp_endpoint.is_some()
            || ENDPOINT_VARS
                .iter()
                .any(|var| std::env::var_os(var).is_some_and(|value| !value.is_empty()))
    }

    /// Checks the values: an `http://` or `https://` endpoint with a host, a ratio
    /// between 0 and 1, a service name.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the key.
    pub fn check(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, problem: String| ConfigError::Invalid {
            key: format!("tracing.{key}"),
            problem,
        };
        if let Some(endpoint) = &self.otlp_endpoint {
            let rest = endpoint
                .strip_prefix("http://")
                .or_else(|| endpoint.strip_prefix("https://"));
            let host = rest.map(|rest| rest.split(['/', '?', '#']).next().unwrap_or(""));
            if host.is_none_or(str::is_empty) {
                return Err(invalid(
                    "otlp_endpoint",
                    format!(
                        "`{endpoint}` is not an http:// or https:// URL with a host, \
                         e.g. http://127.0.0.1:4318"
                    ),
                ));
            }
        }
        if !(0.0..=1.0).contains(&self.sampling_ratio) {
            return Err(invalid(
                "sampling_ratio",
                format!("must be between 0.0 and 1.0, not {}", self.sampling_ratio),
            ));
        }
        if self.service_name.trim().is_empty() {
            return Err(invalid("service_name", String::from("must not be empty")));
        }
        Ok(())
    }

    /// The span exporter's endpoint: the configured base URL with `/v1/traces`, or
    /// `None` to let the exporter read the environment.
    fn traces_url(&self) -> Option<String> {
        let endpoint = self.otlp_endpoint.as_deref()?.trim_end_matches('/');
        Some(if endpoint.ends_with("/v1/traces") {
            endpoint.to_owned()
        } else {
            format!("{endpoint}/v1/traces")
        })
    }

    /// The SDK's tracer provider exporting as configured; `None` when off.
    fn provider(&self) -> Result<Option<SdkTracerProvider>, TelemetryError> {
        if !self.is_enabled() {
            return Ok(None);
        }
        self.check().map_err(TelemetryError::Config)?;
        let protocol = match self.protocol {
            OtlpProtocol::HttpProtobuf => Protocol::HttpBinary,
            OtlpProtocol::HttpJson => Protocol::HttpJson,
        };
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(protocol);
        if let Some(url) = self.traces_url() {
            exporter = exporter.with_endpoint(url);
        }
        let exporter = exporter
            .build()
            .map_err(|error| TelemetryError::Exporter(error.to_string()))?;
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            // Sampling is decided before a span is built (`HeadSampler`, in the
            // layer's filter): whatever reaches the SDK is to be recorded.
            .with_sampler(Sampler::AlwaysOn)
            .with_resource(
                Resource::builder()
                    .with_service_name(self.service_name.clone())
                    .build(),
            )
            .build();
        Ok(Some(provider))
    }
}

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// A `[tracing]` value is wrong; the error names the key.
    #[error(transparent)]
    Config(ConfigError),
    /// The OTLP exporter could not be built (e.g. a malformed endpoint in the
    /// environment).
    #[error("cannot set up the OTLP span exporter: {0}")]
    Exporter(String),
    /// A global `tracing` subscriber was installed already (by this function or the
    /// program).
    #[error("a global tracing subscriber is already installed: {0}")]
    AlreadyInstalled(String),
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LogFormat {
    /// Human-readable text, one line per event with its spans' fields.
    #[default]
    Text,
    /// One JSON object per line, with `trace_id` and `span_id` when traces are on.
    Json,
}

/// The log lines of [`install`]: to stderr, in `format`, filtered by `filter`, in
/// colour when `ansi`.
#[derive(Debug)]
#[non_exhaustive]
pub struct Logs {
    /// Text or JSON.
    pub format: LogFormat,
    /// Which lines (e.g. from `RUST_LOG`).
    pub filter: EnvFilter,
    /// Colour (for a person at a terminal).
    pub ansi: bool,
}

impl Logs {
    /// Lines in `format` passing `filter`, without colour.
    #[must_use]
    pub fn new(format: LogFormat, filter: EnvFilter) -> Self {
        Self {
            format,
            filter,
            ansi: false,
        }
    }

    /// The same, in colour or not.
    #[must_use]
    pub const fn ansi(mut self, ansi: bool) -> Self {
        self.ansi = ansi;
        self
    }
}

/// What [`install`] and [`init`] set up; keep it until the program ends. Dropping it
/// (or [`shutdown`](Self::shutdown)) exports the spans still batched and stops the
/// exporter: a program that ends without it loses its last spans.
#[derive(Debug)]
#[must_use = "dropping the guard stops the span export"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
    /// Decides which traces are recorded, and whether any is now (see
    /// [`set_recording`](Self::set_recording)).
    sampler: Option<Arc<HeadSampler>>,
}

impl Telemetry {
    /// Whether spans are exported.
    #[must_use]
    pub const fn is_exporting(&self) -> bool {
        self.provider.is_some()
    }

    /// Pauses (`false`) or resumes (`true`, as installed) recording spans, without
    /// removing the layer: while paused, agentyard's spans cost what they cost with no
    /// exporter at all. For a benchmark comparing tracing on and off in one process;
    /// nothing happens when spans are not exported. Spans already open stay recorded.
    pub fn set_recording(&self, on: bool) {
        if let Some(sampler) = &self.sampler {
            sampler.set_recording(on);
            // Whether a span is recorded at all is cached per call site: ask again.
            tracing::callsite::rebuild_interest_cache();
        }
    }

    /// Exports the spans ended so far now, waiting for the collector's answer.
    /// Blocks the calling thread: inside a tokio runtime, call it from
    /// `spawn_blocking`.
    pub fn flush(&self) {
        if let Some(provider) = &self.provider
            && let Err(error) = provider.force_flush()
        {
            tracing::warn!(%error, "could not export the last spans");
        }
    }

    /// Exports the spans still batched and stops the exporter (also done on drop).
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            // The log lines still go out: say what was lost.
            tracing::warn!(%error, "could not export the last spans at shutdown");
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What the OpenTelemetry layer records: agentyard's spans at `info` and above, and
/// its warnings and errors as events of the span they happen in (the `info` lines,
/// one or more per request, would cost more than the spans and say less).
fn exported(meta: &tracing::Metadata<'_>) -> bool {
    let level = if meta.is_span() {
        tracing::Level::INFO
    } else {
        tracing::Level::WARN
    };
    meta.target().starts_with("agentyard") && *meta.level() <= level
}

/// Installs the global `tracing` subscriber: log lines as `logs` says (none when
/// `None`), and the span export `tracing` configures (none when `None` or not
/// enabled, see [`TracingConfig::is_enabled`]); with neither, installs nothing. What
/// `agentyard serve` runs with.
///
/// Exported spans are those of agentyard's crates at `info` and above, with their
/// warnings and errors as span events, whatever the log filter: `RUST_LOG=warn`
/// quiets the logs, not the traces.
///
/// # Errors
/// [`TelemetryError`]: a bad `[tracing]` value, an exporter that cannot be built, or
/// a subscriber installed already. Nothing is installed then.
pub fn install(
    tracing: Option<&TracingConfig>,
    logs: Option<Logs>,
) -> Result<Telemetry, TelemetryError> {
    let provider = match tracing {
        Some(config) => config.provider()?,
        None => None,
    };
    let sampler = tracing.filter(|_| provider.is_some()).map(|config| {
        Arc::new(HeadSampler::new(
            config.sampling_ratio,
            config.max_traces_per_second,
        ))
    });
    if provider.is_none() && logs.is_none() {
        // Nothing to record: no subscriber at all, so every span stays disabled.
        return Ok(Telemetry { provider, sampler });
    }
    let traces = provider
        .as_ref()
        .zip(sampler.as_ref())
        .map(|(provider, sampler)| {
            let otel = tracing_opentelemetry::layer()
                .with_tracer(provider.tracer("agentyard"))
                // Each of these costs on every span, or on every poll of an instrumented
                // future, and none is needed: the source location is three attributes per
                // span whose name already says where it is; a thread name per span is an
                // allocation that tells nothing of a request; busy/idle times are two
                // clock reads per poll; and agentyard parents its spans itself
                // (`transport::trace`), never through OpenTelemetry's current context.
                .with_location(false)
                .with_threads(false)
                .with_tracked_inactivity(false)
                .with_context_activation(false);
            let head = Head(Arc::clone(sampler));
            if logs.is_some() {
                // The log lines want every span: filter for the traces alone.
                otel.with_filter(head).boxed()
            } else {
                // Nothing else wants a span the traces turn away: not made at all.
                head.and_then(otel).boxed()
            }
        });
    let lines = logs.map(|logs| {
        let layer = fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(logs.ansi);
        match logs.format {
            LogFormat::Text => layer.fmt_fields(Readable).with_filter(logs.filter).boxed(),
            LogFormat::Json => layer
                .json()
                .event_format(WithTraceIds(fmt::format().json()))
                .fmt_fields(JsonFields::new())
                .with_filter(logs.filter)
                .boxed(),
        }
    });
    tracing_subscriber::registry()
        .with(traces)
        .with(lines)
        .try_init()
        .map_err(|error| TelemetryError::AlreadyInstalled(error.to_string()))?;
    if let Some(sampler) = &sampler {
        // The subscriber is this process's only one, so its sampler is too.
        trace::set_head_sampler(Arc::clone(sampler));
    }
    Ok(Telemetry { provider, sampler })
}

/// The OpenTelemetry layer's filter: agentyard's spans (see [`exported`]) of the
/// traces the head sampler records. A span is let through when the work it is made
/// in was decided sampled (the edge decides each request from its `traceparent` or
/// the sampler, and the decision travels with what the request causes); in work
/// nobody decided for (a program's own send) when it is made inside a recorded span,
/// or else when the sampler draws it. A span not let through never reaches the
/// OpenTelemetry layer: an unsampled request builds no OpenTelemetry span, attribute
/// or export.
struct Head(Arc<HeadSampler>);

impl Head {
    /// Whether the span or event `meta` describes, about to be made, is recorded.
    fn admits<S>(&self, meta: &tracing::Metadata<'_>, cx: &layer::Context<'_, S>) -> bool
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        if !self.0.is_recording() || !exported(meta) {
            return false;
        }
        trace::decision().unwrap_or_else(|| {
            // An event belongs to the span it is in; a span without a recorded
            // parent starts a trace.
            cx.lookup_current().is_some() || (meta.is_span() && self.0.sample())
        })
    }

    fn interest(&self, meta: &tracing::Metadata<'_>) -> Interest {
        if self.0.is_recording() && exported(meta) {
            // Decided per span: whether its trace is recorded.
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }
}

/// As a per-layer filter, when log lines are written too.
impl<S> Filter<S> for Head
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn enabled(&self, meta: &tracing::Metadata<'_>, cx: &layer::Context<'_, S>) -> bool {
        self.admits(meta, cx)
    }

    fn callsite_enabled(&self, meta: &'static tracing::Metadata<'static>) -> Interest {
        self.interest(meta)
    }
}

/// As the subscriber's own filter, when only traces are recorded: a span turned away
/// is then not made at all (a per-layer filter cannot stop `tracing`'s registry from
/// keeping it for the other layers there might be).
impl<S> tracing_subscriber::Layer<S> for Head
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn register_callsite(&self, meta: &'static tracing::Metadata<'static>) -> Interest {
        self.interest(meta)
    }

    fn enabled(&self, meta: &tracing::Metadata<'_>, cx: layer::Context<'_, S>) -> bool {
        self.admits(meta, &cx)
    }
}

/// Turns the span export on in this process, as `config` says, without log lines:
/// for a program or benchmark of its own (`agentyard serve` uses [`install`]). Keep
/// the guard until the end. With no endpoint configured (here or in the environment)
/// nothing is installed and nothing is exported.
///
/// # Errors
/// As [`install`].
pub fn init(config: &TracingConfig) -> Result<Telemetry, TelemetryError> {
    install(Some(config), None)
}

/// The fields of text log lines without the `otel.*` ones, which tell the
/// OpenTelemetry layer how to export a span (its kind, its status) and tell a person
/// reading the line nothing. Otherwise as `tracing-subscriber`'s default.
struct Readable;

impl<'writer> FormatFields<'writer> for Readable {
    fn format_fields<R: RecordFields>(
        &self,
        writer: Writer<'writer>,
        fields: R,
    ) -> std::fmt::Result {
        let mut visitor = WithoutOtel(DefaultVisitor::new(writer, true));
        fields.record(&mut visitor);
        visitor.0.finish()
    }

    fn add_fields(
        &self,
        current: &'writer mut FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> std::fmt::Result {
        let empty = current.fields.is_empty();
        let mut visitor = WithoutOtel(DefaultVisitor::new(current.as_writer(), empty));
        fields.record(&mut visitor);
        visitor.0.finish()
    }
}

/// Passes every field but the `otel.*` ones on.
struct WithoutOtel<'a>(DefaultVisitor<'a>);

impl tracing::field::Visit for WithoutOtel<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !field.name().starts_with("otel.") {
            self.0.record_str(field, value);
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        if !field.name().starts_with("otel.") {
            self.0.record_error(field, value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if !field.name().starts_with("otel.") {
            self.0.record_debug(field, value);
        }
    }
}

/// A JSON event format that adds the OpenTelemetry `trace_id` and `span_id` of the
/// span the event is in, when there is one, as the object's first keys.
struct WithTraceIds<F>(F);

impl<S, N, F> FormatEvent<S, N> for WithTraceIds<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let ids = ctx
            .event_scope()
            .and_then(|mut scope| scope.next().map(|span| span.id()))
            .and_then(|id| {
                tracing::dispatcher::get_default(|dispatch| {
                    tracing_opentelemetry::get_otel_context(&id, dispatch)
                })
            })
            .map(|context| context.span().span_context().clone())
            .filter(opentelemetry::trace::SpanContext::is_valid);
        let Some(ids) = ids else {
            return self.0.format_event(ctx, writer, event);
        };
        let mut line = String::new();
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        match line.strip_prefix('{') {
            Some(rest) => write!(
                writer,
                "{{\"trace_id\":\"{}\",\"span_id\":\"{}\",{rest}",
                ids.trace_id(),
                ids.span_id()
            ),
            None => writer.write_str(&line),
        }
    }
}

#[cfg(test)]
mod tests;
