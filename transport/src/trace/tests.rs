use std::sync::{Arc, Mutex};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tracing_subscriber::layer::SubscriberExt as _;

use super::*;

const INCOMING: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// Keeps the spans it is given.
#[derive(Debug, Clone, Default)]
struct Kept(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Kept {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.lock().expect("kept").extend(batch);
        Ok(())
    }
}

/// Runs `f` with an OpenTelemetry layer recording every span, and returns the spans
/// it ended.
fn recorded(f: impl FnOnce()) -> Vec<SpanData> {
    let kept = Kept::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(kept.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    tracing::subscriber::with_default(subscriber, f);
    provider.force_flush().expect("flushed");
    kept.0.lock().expect("kept").clone()
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    spans
        .iter()
        .find(|span| span.name == name)
        .unwrap_or_else(|| panic!("no span {name}"))
}

#[test]
fn a_traceparent_is_read_only_when_valid() {
    let parsed = Traceparent::parse(INCOMING).expect("valid");
    assert_eq!(parsed.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(parsed.to_string(), INCOMING);
    for invalid in [
        "",
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
    ] {
        assert!(Traceparent::parse(invalid).is_none(), "{invalid}");
    }
}

#[test]
fn a_call_continues_the_incoming_trace_with_a_new_span() {
    let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
    let next = Traceparent::continuing(Some(incoming));
    assert_eq!(next.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_ne!(next.parent_id, "00f067aa0ba902b7");
    assert_eq!(next.flags, 0, "the caller's sampling decision stands");
    assert!(Traceparent::parse(&next.to_string()).is_some());

    let fresh = Traceparent::continuing(Some("garbage"));
    assert!(Traceparent::parse(&fresh.to_string()).is_some());
    assert_ne!(fresh.trace_id, next.trace_id);
}

#[test]
fn without_opentelemetry_a_call_continues_the_trace_with_a_fresh_parent() {
    // No subscriber at all, then one without an OpenTelemetry layer: spans have no ids.
    let span = tracing::info_span!("call");
    assert_eq!(Traceparent::of_span(&span), None);
    let out = Traceparent::outgoing(&span, Some(INCOMING));
    assert_eq!(out.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_ne!(out.parent_id, "00f067aa0ba902b7");
    tracing::subscriber::with_default(tracing_subscriber::registry(), || {
        let span = tracing::info_span!("call");
        adopt(&span, Some(INCOMING));
        assert_eq!(Traceparent::of_span(&span), None);
        let cause = span.in_scope(Cause::current);
        assert!(
            cause.context.is_none(),
            "nothing captured without OpenTelemetry"
        );
    });
}

#[test]
fn an_adopted_traceparent_is_the_parent_and_calls_out_name_their_span() {
    let mut sent = None;
    let spans = recorded(|| {
        let edge = tracing::info_span!("edge");
        adopt(&edge, Some(INCOMING));
        let _entered = edge.enter();
        let call = tracing::info_span!("call");
        sent = Some(Traceparent::outgoing(
            &call,
            Some("ignored when the span has ids"),
        ));
    });
    let (edge, call) = (named(&spans, "edge"), named(&spans, "call"));
    let trace = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").expect("hex");
    assert_eq!(edge.span_context.trace_id(), trace);
    assert_eq!(
        edge.parent_span_id,
        SpanId::from_hex("00f067aa0ba902b7").expect("hex")
    );
    assert!(edge.parent_span_is_remote);
    assert_eq!(call.parent_span_id, edge.span_context.span_id());
    let sent = sent.expect("sent");
    assert_eq!(sent.trace_id, trace.to_string());
    assert_eq!(sent.parent_id, call.span_context.span_id().to_string());
    assert_eq!(sent.flags, 1);
}

#[test]
fn a_cause_carries_the_parent_to_a_span_made_elsewhere_later() {
    let spans = recorded(|| {
        let send = tracing::info_span!("send");
        adopt(&send, Some(INCOMING));
        let cause = send.in_scope(Cause::current);
        drop(send);
        // Made outside the send's span, after it ended.
        let turn = tracing::info_span!("turn");
        cause.adopt_by(&turn);
        turn.in_scope(|| {});
    });
    let (send, turn) = (named(&spans, "send"), named(&spans, "turn"));
    assert_eq!(turn.parent_span_id, send.span_context.span_id());
    assert_eq!(turn.span_context.trace_id(), send.span_context.trace_id());
}

#[test]
fn a_stored_context_is_adopted_and_continued() {
    let stored = Traceparent::parse(INCOMING).expect("valid");
    let child = stored.child();
    assert_eq!(child.trace_id, stored.trace_id);
    assert_ne!(child.parent_id, stored.parent_id);
    assert_eq!(child.flags, stored.flags);
    let mut sent = None;
    let spans = recorded(|| {
        let push = tracing::info_span!("push");
        stored.adopt_by(&push);
        sent = Some(Traceparent::outgoing_from(&push, Some(&stored)));
    });
    let push = named(&spans, "push");
    assert_eq!(push.parent_span_id.to_string(), stored.parent_id);
    assert_eq!(
        sent.expect("sent").parent_id,
        push.span_context.span_id().to_string()
    );
}

#[test]
fn the_head_sampler_keeps_its_ratio_and_its_limit_per_second() {
    let never = HeadSampler::new(0.0, 0);
    assert!((0..1000).all(|_| !never.sample()));
    let always = HeadSampler::new(1.0, 0);
    assert!((0..1000).all(|_| always.sample()));
    let half = HeadSampler::new(0.5, 0);
    let kept = (0..10_000).filter(|_| half.sample()).count();
    assert!((3_500..6_500).contains(&kept), "{kept} of 10,000 at 0.5");

    let limited = HeadSampler::new(1.0, 3);
    let second = |now| (0..10).filter(|_| limited.admit(now)).count();
    assert_eq!(second(7), 3, "three in the first second");
    assert_eq!(second(7), 0, "none more in the same second");
    assert_eq!(second(8), 3, "three again in the next");
}

#[test]
fn a_callers_flag_decides_before_the_sampler() {
    assert!(decide(Some(INCOMING)));
    assert!(!decide(Some(
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
    )));
    assert!(Traceparent::parse(INCOMING).expect("valid").is_sampled());
}

/// Installs a head sampler that records everything (what no sampler does too), so
/// that decisions are carried: the other tests of this process see no difference.
fn carrying() {
    let _ = set_head_sampler(Arc::new(HeadSampler::new(1.0, 0)));
}

#[test]
fn a_decision_travels_with_the_work_and_its_causes() {
    carrying();
    assert_eq!(decision(), None, "nothing decided outside");
    let (inside, fresh, cause) = scoped(false, || {
        (decision(), Traceparent::continuing(None), Cause::current())
    });
    assert_eq!(inside, Some(false));
    assert_eq!(fresh.flags, 0, "a new trace says it is not recorded");
    assert_eq!(
        cause.in_scope(decision),
        Some(false),
        "the cause carries it on"
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
        assert_eq!(
            within(Some(unsampled), async { decision() }).await,
            Some(false)
        );
        assert_eq!(
            within(Some(INCOMING), async { decision() }).await,
            Some(true)
        );
        // Work already decided keeps its decision.
        let kept = within(Some(INCOMING), async {
            within(Some(unsampled), async { decision() }).await
        });
        assert_eq!(kept.await, Some(true));
        assert_eq!(cause.within(async { decision() }).await, Some(false));
    });
}
