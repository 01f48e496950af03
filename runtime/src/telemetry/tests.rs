use super::*;

#[test]
fn the_default_exports_nothing_and_checks() {
    let config = TracingConfig::default();
    assert_eq!(config.otlp_endpoint, None);
    assert_eq!(config.protocol, OtlpProtocol::HttpProtobuf);
    assert_eq!(config.service_name, "agentyard");
    config.check().expect("the default is valid");
    assert_eq!(config.traces_url(), None, "the environment decides");
}

#[test]
fn the_endpoint_is_a_base_url_unless_it_names_the_traces_path() {
    let config = TracingConfig::otlp("http://127.0.0.1:4318");
    assert!(config.is_enabled());
    assert_eq!(
        config.traces_url().as_deref(),
        Some("http://127.0.0.1:4318/v1/traces")
    );
    let config = TracingConfig::otlp("https://otel.example.com/v1/traces/");
    assert_eq!(
        config.traces_url().as_deref(),
        Some("https://otel.example.com/v1/traces")
    );
}

#[test]
fn bad_values_are_named() {
    for (config, key) in [
        (
            TracingConfig::otlp("127.0.0.1:4318"),
            "tracing.otlp_endpoint",
        ),
        (TracingConfig::otlp("http://"), "tracing.otlp_endpoint"),
        (
            TracingConfig::default().sampling_ratio(1.5),
            "tracing.sampling_ratio",
        ),
        (
            TracingConfig::default().sampling_ratio(f64::NAN),
            "tracing.sampling_ratio",
        ),
        (
            TracingConfig::default().service_name(" "),
            "tracing.service_name",
        ),
    ] {
        let error = config.check().expect_err("invalid");
        assert!(error.to_string().contains(key), "{error} names {key}");
    }
}

#[test]
fn the_section_reads_both_protocols_and_refuses_others() {
    let config: TracingConfig =
        toml::from_str("otlp_endpoint = \"http://collector:4318\"\nprotocol = \"http/json\"\n")
            .expect("valid");
    assert_eq!(config.protocol, OtlpProtocol::HttpJson);
    let error = toml::from_str::<TracingConfig>("protocol = \"grpc\"\n").expect_err("no gRPC");
    assert!(error.to_string().contains("http/protobuf"), "{error}");
}

/// A log destination the test reads back.
#[derive(Clone, Default)]
struct Lines(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lines").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn text_lines_leave_out_the_otel_fields_and_keep_the_rest() {
    let lines = Lines::default();
    let sink = lines.clone();
    let subscriber = tracing_subscriber::registry().with(
        fmt::layer()
            .with_ansi(false)
            .without_time()
            .fmt_fields(Readable)
            .with_writer(move || sink.clone()),
    );
    tracing::subscriber::with_default(subscriber, || {
        let span = tracing::info_span!(
            "request",
            method = "POST",
            "otel.kind" = "server",
            status = tracing::field::Empty,
            "otel.status_code" = tracing::field::Empty,
        );
        span.record("otel.status_code", "ERROR");
        span.record("status", 500_u16);
        span.in_scope(|| tracing::info!(agent = "echo", "answered"));
    });
    let text = String::from_utf8(lines.0.lock().expect("lines").clone()).expect("utf-8");
    assert!(
        text.contains("request{method=\"POST\" status=500}"),
        "{text}"
    );
    assert!(text.contains("answered agent=\"echo\""), "{text}");
    assert!(!text.contains("otel."), "{text}");
}

#[test]
fn without_an_endpoint_init_installs_nothing() {
    // (The test environment names no OTLP endpoint.)
    let telemetry = init(&TracingConfig::default()).expect("nothing can fail");
    assert!(!telemetry.is_exporting());
    // (Other tests set subscribers for their own thread only.)
    assert!(
        tracing::dispatcher::get_default(
            |dispatch| dispatch.is::<tracing::subscriber::NoSubscriber>()
        ),
        "no global subscriber: every span stays disabled"
    );
}

/// Keeps the spans it is given.
#[derive(Debug, Clone, Default)]
struct Kept(Arc<std::sync::Mutex<Vec<opentelemetry_sdk::trace::SpanData>>>);

impl opentelemetry_sdk::trace::SpanExporter for Kept {
    async fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.lock().expect("kept").extend(batch);
        Ok(())
    }
}

#[test]
fn spans_of_traces_not_recorded_are_never_made() {
    // Carries decisions in this process; records every trace, as no sampler would.
    let _ = trace::set_head_sampler(Arc::new(HeadSampler::new(1.0, 0)));
    let kept = Kept::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(kept.clone())
        .build();
    // This layer's own sampler starts no trace at all: what is recorded below was
    // decided by a caller, or is inside a recorded span.
    let subscriber = tracing_subscriber::registry().with(
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("test"))
            .with_filter(Head(Arc::new(HeadSampler::new(0.0, 0)))),
    );
    tracing::subscriber::with_default(subscriber, || {
        // A new trace the sampler does not draw.
        tracing::info_span!("root").in_scope(|| {});
        // A trace decided unsampled, and one decided sampled.
        trace::scoped(false, || tracing::info_span!("unsampled")).in_scope(|| {});
        let sampled = trace::scoped(true, || tracing::info_span!("sampled"));
        // Inside a recorded span, with no decision: part of its trace.
        sampled.in_scope(|| tracing::info_span!("child").in_scope(|| {}));
        drop(sampled);
        // Not one of agentyard's spans.
        trace::scoped(true, || tracing::info_span!(target: "elsewhere", "other")).in_scope(|| {});
    });
    provider.force_flush().expect("flushed");
    let mut names: Vec<_> = kept
        .0
        .lock()
        .expect("kept")
        .iter()
        .map(|span| span.name.to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["child", "sampled"]);
}

#[test]
fn without_log_lines_spans_turned_away_are_not_made_at_all() {
    let _ = trace::set_head_sampler(Arc::new(HeadSampler::new(1.0, 0)));
    let provider = SdkTracerProvider::builder().build();
    let subscriber = tracing_subscriber::registry().with(
        Head(Arc::new(HeadSampler::new(0.0, 0)))
            .and_then(tracing_opentelemetry::layer().with_tracer(provider.tracer("test"))),
    );
    tracing::subscriber::with_default(subscriber, || {
        assert!(tracing::info_span!("root").is_disabled());
        assert!(trace::scoped(false, || tracing::info_span!("unsampled")).is_disabled());
        let sampled = trace::scoped(true, || tracing::info_span!("sampled"));
        assert!(!sampled.is_disabled());
        assert!(
            !sampled
                .in_scope(|| tracing::info_span!("child"))
                .is_disabled()
        );
    });
}
