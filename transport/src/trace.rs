//! W3C trace context: the `traceparent` a call carries in and out, and where it meets
//! the spans of `tracing`.
//!
//! agentyard's spans are `tracing` spans. When the program installs an OpenTelemetry
//! layer (`tracing-opentelemetry`; `agentyard::telemetry` does, when traces are
//! configured) each span also has an OpenTelemetry trace id and span id, and the
//! functions here tie them to the wire:
//!
//! - [`adopt`] makes the trace of a received `traceparent` the parent of a span (the
//!   HTTP edge's request span, a push delivery): everything that span causes belongs
//!   to the caller's trace.
//! - [`Traceparent::outgoing`] is the `traceparent` of a call made inside a span: that
//!   span's own ids, so the callee's spans hang under it.
//!
//! Without an OpenTelemetry layer (the default) spans have no ids; the trace then
//! travels as the value itself: a call made on behalf of a request sends
//! [`Traceparent::continuing`] the request's, the same trace with a fresh parent id.
//! [`adopt`], [`Traceparent::of_span`] and [`Cause`] return at once for a span no
//! subscriber records: no parsing, no allocation.

use std::fmt;

use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// The header (and request metadata key) the trace context travels in.
pub const TRACEPARENT: &str = "traceparent";

/// A W3C trace context (version 00): the trace a call belongs to and the span that
/// makes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Traceparent {
    /// 32 lowercase hex digits, not all zero.
    pub trace_id: String,
    /// 16 lowercase hex digits, not all zero: the caller's span.
    pub parent_id: String,
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
}

impl Traceparent {
    /// Reads a `traceparent` value; `None` when it is not a valid version-00 one.
    #[must_use]
    pub fn parse(value: &str) -> Option<Self> {
        let (trace_id, parent_id, flags) = fields(value)?;
        Some(Self {
            trace_id: trace_id.to_owned(),
            parent_id: parent_id.to_owned(),
            flags,
        })
    }

    /// The context of a call made on behalf of `incoming` (a `traceparent` value):
    /// the same trace with a new span, or a new sampled trace when there is no
    /// valid incoming one.
    #[must_use]
    pub fn continuing(incoming: Option<&str>) -> Self {
        match incoming.and_then(Self::parse) {
            Some(parent) => parent.child(),
            None => Self {
                trace_id: uuid::Uuid::new_v4().simple().to_string(),
                parent_id: new_span_id(),
                flags: 1,
            },
        }
    }

    /// The same trace with a new parent id (and the same sampling decision): the
    /// context of a call made on behalf of this one.
    #[must_use]
    pub fn child(&self) -> Self {
        Self {
            trace_id: self.trace_id.clone(),
            parent_id: new_span_id(),
            flags: self.flags,
        }
    }

    /// The OpenTelemetry ids of `span`, as a `traceparent` whose parent id is the
    /// span's own: `None` when no OpenTelemetry layer records the span.
    #[must_use]
    pub fn of_span(span: &Span) -> Option<Self> {
        if span.is_disabled() {
            return None;
        }
        let context = span.context();
        let ids = context.span().span_context().clone();
        ids.is_valid().then(|| Self::of(&ids))
    }

    /// The `traceparent` a call made inside `span` sends: the span itself as the
    /// parent when OpenTelemetry records it (the callee's spans then hang under it),
    /// else [`continuing`](Self::continuing) `incoming`, the trace of the request the
    /// call is made for.
    #[must_use]
    pub fn outgoing(span: &Span, incoming: Option<&str>) -> Self {
        Self::of_span(span).unwrap_or_else(|| Self::continuing(incoming))
    }

    /// As [`outgoing`](Self::outgoing), for a call made on behalf of a context
    /// already read (`None`: a new trace).
    #[must_use]
    pub fn outgoing_from(span: &Span, cause: Option<&Self>) -> Self {
        Self::of_span(span).unwrap_or_else(|| match cause {
            Some(cause) => cause.child(),
            None => Self::continuing(None),
        })
    }

    /// Makes this context the OpenTelemetry parent of `span`, as [`adopt`] does with
    /// a header value.
    pub fn adopt_by(&self, span: &Span) {
        if span.is_disabled() {
            return;
        }
        if let Some(ids) = self.span_context() {
            let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(ids));
        }
    }

    fn of(ids: &SpanContext) -> Self {
        Self {
            trace_id: ids.trace_id().to_string(),
            parent_id: ids.span_id().to_string(),
            flags: ids.trace_flags().to_u8(),
        }
    }

    /// This context as OpenTelemetry's, marked remote (it came from elsewhere).
    fn span_context(&self) -> Option<SpanContext> {
        remote_context(&self.trace_id, &self.parent_id, self.flags)
    }
}

impl fmt::Display for Traceparent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "00-{}-{}-{:02x}",
            self.trace_id, self.parent_id, self.flags
        )
    }
}

/// Makes the trace of `traceparent` (a header value, unchecked) the OpenTelemetry
/// parent of `span`, which must not have been entered yet. Nothing happens when the
/// span is disabled, no OpenTelemetry layer records it, or the value is not a valid
/// `traceparent`: the span then starts a trace of its own (or none).
pub fn adopt(span: &Span, traceparent: Option<&str>) {
    let Some(value) = traceparent else { return };
    if span.is_disabled() {
        return;
    }
    // Read in place: a span only the log lines record (OpenTelemetry off) must not
    // pay for the strings of a `Traceparent`.
    if let Some(ids) = fields(value)
        .and_then(|(trace_id, parent_id, flags)| remote_context(trace_id, parent_id, flags))
    {
        let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(ids));
    }
}

/// The fields of a valid version-00 `traceparent`: trace id, parent id, flags.
fn fields(value: &str) -> Option<(&str, &str, u8)> {
    let mut fields = value.trim().split('-');
    let (version, trace_id, parent_id, flags) = (
        fields.next()?,
        fields.next()?,
        fields.next()?,
        fields.next()?,
    );
    let hex = |text: &str, len: usize| {
        text.len() == len
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            && text.bytes().any(|b| b != b'0')
    };
    if version != "00" || fields.next().is_some() || !hex(trace_id, 32) || !hex(parent_id, 16) {
        return None;
    }
    let flags = u8::from_str_radix(flags, 16)
        .ok()
        .filter(|_| flags.len() == 2)?;
    Some((trace_id, parent_id, flags))
}

/// Checked hex ids as an OpenTelemetry span context, marked remote.
fn remote_context(trace_id: &str, parent_id: &str, flags: u8) -> Option<SpanContext> {
    let ids = SpanContext::new(
        TraceId::from_hex(trace_id).ok()?,
        SpanId::from_hex(parent_id).ok()?,
        TraceFlags::new(flags),
        true,
        TraceState::default(),
    );
    ids.is_valid().then_some(ids)
}

/// A random span id: 16 hex digits, never all zero.
fn new_span_id() -> String {
    format!("{:016x}", uuid::Uuid::new_v4().as_u64_pair().0 | 1)
}

/// The OpenTelemetry context of the span current where a piece of work was caused
/// (a send accepted by the supervisor), for the span that later does the work in
/// another task: see [`Cause::adopt_by`]. Empty (and nothing is allocated) when no
/// OpenTelemetry layer records the current span.
#[derive(Clone, Debug, Default)]
pub struct Cause(Option<opentelemetry::Context>);

impl Cause {
    /// The current span's context.
    #[must_use]
    pub fn current() -> Self {
        let span = Span::current();
        if span.is_disabled() {
            return Self(None);
        }
        let context = span.context();
        Self(context.has_active_span().then_some(context))
    }

    /// Makes the cause the OpenTelemetry parent of `span` (not yet entered), so the
    /// work's span stays in the trace of what caused it even though it runs in
    /// another task, after the cause's own span may have ended.
    pub fn adopt_by(&self, span: &Span) {
        if let Some(context) = &self.0
            && !span.is_disabled()
        {
            let _ = span.set_parent(context.clone());
        }
    }
}

#[cfg(test)]
mod tests;
