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
//!
//! # Head sampling
//!
//! Whether a trace is recorded is decided once, where it enters the process, before
//! any span of it is built: [`decide`] reads the caller's sampling flag, or asks the
//! installed [`HeadSampler`] for a trace that starts here. The decision then travels
//! with the work ([`within`], and [`Cause`] into the tasks the work moves to), and
//! the OpenTelemetry layer's filter reads it ([`decision`]) when a span is about to be
//! created: a span of a trace not recorded is never created for it, so an unsampled
//! request costs a flag check per span, not a span. Without a sampler installed (no
//! traces exported) nothing is decided and nothing is carried.

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use futures::future::Either;
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
    /// the same trace with a new span, or a new trace when there is no valid
    /// incoming one.
    ///
    /// A new trace is marked sampled unless the head sampler decided the work this
    /// runs in is not recorded ([`decision`]).
    #[must_use]
    pub fn continuing(incoming: Option<&str>) -> Self {
        match incoming.and_then(Self::parse) {
            Some(parent) => parent.child(),
            None => Self {
                trace_id: uuid::Uuid::new_v4().simple().to_string(),
                parent_id: new_span_id(),
                flags: u8::from(decision().unwrap_or(true)),
            },
        }
    }

    /// Whether the caller recorded this trace (flag bit 0).
    #[must_use]
    pub const fn is_sampled(&self) -> bool {
        self.flags & 1 == 1
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
/// another task: see [`Cause::adopt_by`]; and the head sampling [`decision`] there,
/// which the work runs [`within`](Cause::within). Empty (and nothing is allocated)
/// when no OpenTelemetry layer records the current span.
#[derive(Clone, Debug, Default)]
pub struct Cause {
    context: Option<opentelemetry::Context>,
    sampled: Option<bool>,
}

impl Cause {
    /// The current span's context, and the decision of the work it is in.
    #[must_use]
    pub fn current() -> Self {
        let span = Span::current();
        let context = if span.is_disabled() {
            None
        } else {
            let context = span.context();
            context.has_active_span().then_some(context)
        };
        // Outside any decision (a program's own send), the trace is recorded exactly
        // when the cause's span was.
        let sampled = decision().or_else(|| head().map(|_| context.is_some()));
        Self { context, sampled }
    }

    /// Makes the cause the OpenTelemetry parent of `span` (not yet entered), so the
    /// work's span stays in the trace of what caused it even though it runs in
    /// another task, after the cause's own span may have ended.
    pub fn adopt_by(&self, span: &Span) {
        if let Some(context) = &self.context
            && !span.is_disabled()
        {
            let _ = span.set_parent(context.clone());
        }
    }

    /// Runs `make` (which makes the work's span) under the cause's sampling
    /// decision.
    pub fn in_scope<R>(&self, make: impl FnOnce() -> R) -> R {
        under(self.sampled, make)
    }

    /// Runs `work` (caused here, running elsewhere) under the cause's sampling
    /// decision, so that its spans are recorded exactly when the cause's were.
    pub fn within<F: Future>(&self, work: F) -> impl Future<Output = F::Output> + use<F> {
        under_async(self.sampled, work)
    }
}

/// Runs `make` under `sampled` when there is a decision to carry.
pub(crate) fn under<R>(sampled: Option<bool>, make: impl FnOnce() -> R) -> R {
    match sampled {
        Some(sampled) => SAMPLED.sync_scope(sampled, make),
        None => make(),
    }
}

/// `work` running under `sampled` when there is a decision to carry.
fn under_async<F: Future>(
    sampled: Option<bool>,
    work: F,
) -> Either<tokio::task::futures::TaskLocalFuture<bool, F>, F> {
    match sampled {
        Some(sampled) => Either::Left(SAMPLED.scope(sampled, work)),
        None => Either::Right(work),
    }
}

tokio::task_local! {
    /// The head sampling decision of the trace the running work belongs to.
    static SAMPLED: bool;
}

/// The process's head sampler, once traces are exported (see [`set_head_sampler`]).
static HEAD: OnceLock<Arc<HeadSampler>> = OnceLock::new();

/// Decides which new traces are recorded: a share of them (`ratio`), and of those at
/// most `per_second` in any second of the clock (0: no limit), so that what tracing
/// costs stays bounded however much traffic comes in. A trace whose caller already
/// decided (its `traceparent`'s sampled flag) is not asked about: see [`decide`].
#[derive(Debug)]
pub struct HeadSampler {
    /// Of `u64::MAX`: a random draw at or below it is recorded.
    threshold: u64,
    per_second: u32,
    /// The second the count is for (high 32 bits) and the count (low 32).
    window: AtomicU64,
    started: Instant,
    /// Off while the program pauses recording (a benchmark's untraced side).
    recording: AtomicBool,
}

impl HeadSampler {
    /// Records `ratio` (0.0 to 1.0, clamped) of new traces, at most `per_second` of
    /// them per second (0: no limit).
    #[must_use]
    pub fn new(ratio: f64, per_second: u32) -> Self {
        let ratio = if ratio.is_nan() {
            0.0
        } else {
            ratio.clamp(0.0, 1.0)
        };
        // `as` saturates: a ratio of 1.0 is u64::MAX, every draw.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let threshold = (ratio * u64::MAX as f64) as u64;
        Self {
            threshold,
            per_second,
            window: AtomicU64::new(0),
            started: Instant::now(),
            recording: AtomicBool::new(true),
        }
    }

    /// Whether a new trace is recorded: drawn within the ratio, and within this
    /// second's allowance. Lock-free; one clock read when a limit is set.
    pub fn sample(&self) -> bool {
        if self.threshold == 0 {
            return false;
        }
        if self.threshold != u64::MAX && uuid::Uuid::new_v4().as_u64_pair().0 > self.threshold {
            return false;
        }
        if self.per_second == 0 {
            return true;
        }
        self.admit(self.started.elapsed().as_secs())
    }

    /// Whether this second's allowance (`now`, seconds since the sampler started)
    /// has room for one more trace, taking it if so.
    fn admit(&self, now: u64) -> bool {
        let now = now & 0xffff_ffff;
        let mut window = self.window.load(Ordering::Relaxed);
        loop {
            let (second, count) = (window >> 32, window & 0xffff_ffff);
            let next = if second != now {
                (now << 32) | 1
            } else if count < u64::from(self.per_second) {
                window + 1
            } else {
                return false;
            };
            match self.window.compare_exchange_weak(
                window,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(seen) => window = seen,
            }
        }
    }

    /// Pauses (`false`) or resumes head sampling: while paused nothing is decided
    /// or carried, as with no sampler at all.
    pub fn set_recording(&self, on: bool) {
        self.recording.store(on, Ordering::Relaxed);
    }

    /// Whether recording is on.
    #[must_use]
    pub fn is_recording(&self) -> bool {
        self.recording.load(Ordering::Relaxed)
    }
}

/// Installs the process's head sampler: from now on traces entering the process
/// are decided by it. Done once, by whoever installs the OpenTelemetry layer (in
/// agentyard, `agentyard::telemetry`); `false` when one was installed already.
pub fn set_head_sampler(sampler: Arc<HeadSampler>) -> bool {
    HEAD.set(sampler).is_ok()
}

/// The installed head sampler, when it is recording.
fn head() -> Option<&'static HeadSampler> {
    HEAD.get()
        .map(Arc::as_ref)
        .filter(|head| head.is_recording())
}

/// Decides whether a trace entering the process here is recorded: the caller's
/// sampling flag when `traceparent` (a header value) is a valid one, else the head
/// sampler's draw. `true` when no sampler is installed.
#[must_use]
pub fn decide(traceparent: Option<&str>) -> bool {
    match traceparent.and_then(fields) {
        Some((_, _, flags)) => flags & 1 == 1,
        None => head().is_none_or(HeadSampler::sample),
    }
}

/// The decision for a request entering here with `traceparent` (a header value),
/// when a sampler records (see [`decide`]); `None` when there is nothing to decide.
pub(crate) fn head_decision(traceparent: Option<&str>) -> Option<bool> {
    head().map(|_| decide(traceparent))
}

/// The head sampling decision of the work running now, if one was made (a sampler
/// is installed and the work runs [`within`] one): what a span filter reads.
#[must_use]
pub fn decision() -> Option<bool> {
    SAMPLED.try_with(|sampled| *sampled).ok()
}

/// Runs `work` under the decision for `traceparent` (see [`decide`]), unless the work
/// already runs under one; nothing is decided or carried when no sampler records.
pub fn within<F: Future>(traceparent: Option<&str>, work: F) -> impl Future<Output = F::Output> {
    let undecided = head().is_some() && decision().is_none();
    under_async(undecided.then(|| decide(traceparent)), work)
}

/// Runs `make` under the decision `sampled` (see [`decide`]): for a span, and what
/// is done with it at once, in work that runs under no decision (a push delivery).
pub fn scoped<R>(sampled: bool, make: impl FnOnce() -> R) -> R {
    under(head().map(|_| sampled), make)
}

#[cfg(test)]
mod tests;
