//! The layer around the whole router that every request passes: it decides the
//! request's trace sampling, makes its `request` span, writes its one line at info
//! and tells the server's owner of the answer ([`OnAnswer`]).
//!
//! One layer of our own instead of three (tower-http's `TraceLayer`, the head
//! sampling layer and the edge's request counter, each a future around the next, and
//! the trace layer's body wrapper boxed again by the router around it): four
//! allocations and ~2,400 instructions of a unary call fewer (`docs/benchmarks.md`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::Method;
use axum::response::Response;
use tracing::Span;

use super::reply::ErrorCodeSent;
use super::rpc::RequestLog;
use crate::trace;

/// Told of every request the A2A router answers, with the request's HTTP method
/// and how long the answer took (for a stream, until it started): what a metrics
/// recorder needs. The answer names its call ([`RequestLog`]) or, for the card
/// routes and the 405s, its route ([`axum::extract::MatchedPath`]).
#[derive(Clone)]
pub struct OnAnswer(Arc<Answered>);

/// What [`OnAnswer`] calls: the request's HTTP method, the answer, how long it took.
type Answered = dyn Fn(&Method, &Response, Duration) + Send + Sync;

impl OnAnswer {
    /// Calls `answered` for every answer.
    pub fn new(answered: impl Fn(&Method, &Response, Duration) + Send + Sync + 'static) -> Self {
        Self(Arc::new(answered))
    }
}

impl std::fmt::Debug for OnAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnAnswer(..)")
    }
}

/// The layer: see the [module docs](self).
#[derive(Clone, Debug, Default)]
pub(super) struct LogLayer {
    pub(super) on_answer: Option<OnAnswer>,
}

impl<S> tower::Layer<S> for LogLayer {
    type Service = Log<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Log {
            inner,
            on_answer: self.on_answer.clone(),
        }
    }
}

/// The service of [`LogLayer`].
#[derive(Clone, Debug)]
pub(super) struct Log<S> {
    inner: S,
    on_answer: Option<OnAnswer>,
}

impl<S, E> tower::Service<Request> for Log<S>
where
    S: tower::Service<Request, Response = Response, Error = E>,
{
    type Response = Response;
    type Error = E;
    type Future = Logged<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), E>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let started = Instant::now();
        let traceparent = request
            .headers()
            .get(&super::names::TRACEPARENT)
            .and_then(|value| value.to_str().ok());
        // Decided before the span is made: a trace not recorded makes no span.
        let sampled = trace::head_decision(traceparent);
        let span = trace::under(sampled, || {
            let span = tracing::info_span!(
                "request",
                method = %request.method(),
                path = %request.uri().path(),
                rpc_method = tracing::field::Empty,
                status = tracing::field::Empty,
                "otel.kind" = "server",
                "otel.status_code" = tracing::field::Empty,
            );
            // The caller's trace is the parent of everything this request causes (a
            // no-op unless OpenTelemetry records the span).
            trace::adopt(&span, traceparent);
            span
        });
        let http_method = self.on_answer.is_some().then(|| request.method().clone());
        // The services inside make their spans as they are called, before the
        // future is first polled: the decision and the span are in place for the
        // call too.
        let inner = trace::under(sampled, || span.in_scope(|| self.inner.call(request)));
        Logged {
            inner,
            span,
            sampled,
            started,
            answered: self.on_answer.clone().zip(http_method),
        }
    }
}

pin_project_lite::pin_project! {
    /// A request being answered, logged when its answer is ready.
    pub(super) struct Logged<F> {
        #[pin]
        inner: F,
        span: Span,
        sampled: Option<bool>,
        started: Instant,
        answered: Option<(OnAnswer, Method)>,
    }
}

impl<F, E> Future for Logged<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let span = &*this.span;
        let inner = this.inner;
        let result =
            std::task::ready!(trace::under(*this.sampled, || span.in_scope(|| inner.poll(cx))));
        let Ok(response) = result else {
            return Poll::Ready(result);
        };
        let took = this.started.elapsed();
        span.in_scope(|| log_response(&response, took, span));
        if let Some((on_answer, method)) = this.answered.as_ref() {
            (on_answer.0)(method, &response, took);
        }
        // The body is not wrapped to keep the span open while it is read (as
        // tower-http's layer does, a box a request): a stream is read inside its
        // call's span, a child of this one, which keeps it open until the stream ends.
        Poll::Ready(Ok(response))
    }
}

/// The one line per request, at info: the request span names the HTTP method and
/// path; this adds the agent and JSON-RPC method (for calls), the code of the
/// JSON-RPC error when the answer is one, the status and how long the answer took
/// (for a stream, until it started).
fn log_response(response: &Response, latency: Duration, span: &Span) {
    let call = response.extensions().get::<RequestLog>();
    let error = response.extensions().get::<ErrorCodeSent>();
    tracing::info!(
        agent = call.map(|c| &*c.agent),
        rpc_method = call.and_then(|c| c.method),
        rpc_error = error.map(|e| e.0),
        status = response.status().as_u16(),
        duration_ms = latency.as_secs_f64() * 1000.0,
        "request"
    );
    // Recorded for the trace after the line is written, which has them already: the
    // line would say them twice.
    if !span.is_disabled() {
        if let Some(method) = call.and_then(|c| c.method) {
            span.record("rpc_method", method);
        }
        span.record("status", response.status().as_u16());
        if response.status().is_server_error() {
            span.record("otel.status_code", "ERROR");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use axum::body::Body;
    use axum::http::StatusCode;
    use tower::{Layer as _, ServiceExt as _};

    use super::*;

    #[test]
    fn the_decision_is_made_before_the_services_inside_are_called_and_polled() {
        // Records everything, as no sampler does: other tests see no difference.
        let _ = trace::set_head_sampler(Arc::new(trace::HeadSampler::new(1.0, 0)));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let inner = {
            let seen = Arc::clone(&seen);
            tower::service_fn(move |_request: Request| {
                // What the request span and the spans inside see: made as the
                // service is called, and as its future runs.
                let at_call = trace::decision();
                let seen = Arc::clone(&seen);
                async move {
                    seen.lock()
                        .expect("seen")
                        .push((at_call, trace::decision()));
                    Ok::<_, std::convert::Infallible>(Response::new(Body::empty()))
                }
            })
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";
        let sampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        for (header, expected) in [
            (Some(unsampled), false),
            (Some(sampled), true),
            (None, true),
        ] {
            let mut request = Request::new(Body::empty());
            if let Some(value) = header {
                request
                    .headers_mut()
                    .insert(trace::TRACEPARENT, value.parse().expect("header"));
            }
            runtime
                .block_on(LogLayer::default().layer(inner.clone()).oneshot(request))
                .expect("answered");
            let last = seen.lock().expect("seen").pop();
            assert_eq!(last, Some((Some(expected), Some(expected))), "{header:?}");
        }
        assert_eq!(trace::decision(), None, "nothing is left decided outside");
    }

    #[tokio::test]
    async fn the_owner_is_told_of_each_answer_with_its_method() {
        let told = Arc::new(Mutex::new(Vec::new()));
        let on_answer = {
            let told = Arc::clone(&told);
            OnAnswer::new(move |method, response, _took| {
                told.lock()
                    .expect("told")
                    .push((method.clone(), response.status()));
            })
        };
        let inner = tower::service_fn(|request: Request| async move {
            let status = if request.method() == Method::GET {
                StatusCode::OK
            } else {
                StatusCode::METHOD_NOT_ALLOWED
            };
            let mut response = Response::new(Body::empty());
            *response.status_mut() = status;
            Ok::<_, std::convert::Infallible>(response)
        });
        let layer = LogLayer {
            on_answer: Some(on_answer),
        };
        for method in [Method::GET, Method::DELETE] {
            let request = Request::builder()
                .method(method)
                .body(Body::empty())
                .expect("request");
            layer.layer(inner).oneshot(request).await.expect("answered");
        }
        assert_eq!(
            *told.lock().expect("told"),
            [
                (Method::GET, StatusCode::OK),
                (Method::DELETE, StatusCode::METHOD_NOT_ALLOWED)
            ]
        );
    }
}
