//! The edge's operator routes beside A2A: `GET /metrics` (the runtime's metrics in the
//! Prometheus text format) and `GET /events` (the runtime's events as SSE), both
//! behind the same credentials as the A2A routes ([`EdgeAuth::authenticate`]), and the
//! layer that counts HTTP requests by method and status.
//!
//! # `GET /events`
//!
//! Query parameters, each optional, all of them applying at once:
//!
//! - `agent`: comma-separated agent names; an event matches when its `to` or its
//!   `from` is one of them.
//! - `context`: a contextId; an event matches when it is of that conversation.
//! - `kind`: comma-separated event kinds, each an exact name (`a2a.send.completed`)
//!   or a prefix ending in `*` (`a2a.send.*`). A name that is no kind, or a prefix no
//!   kind starts with, is HTTP 400 naming it.
//!
//! Each SSE event is `event: <kind name>` with `data: <the event as JSON>` (as
//! [`Event`](crate::events::Event) serializes). The runtime's bus is a bounded
//! broadcast: a reader that falls behind (a slow client fills its socket, the
//! stream stops being polled) loses the oldest events rather than slowing the agents,
//! and is told so by `event: lagged` with `data: {"missed": N}`; the stream goes on.
//! Comments keep a quiet stream alive through proxies. The stream ends when the edge
//! stops or the runtime shuts down.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use agentyard_transport::server::{OnAnswer, RpcRoute};
use axum::Router;
use axum::extract::{MatchedPath, Query, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::StreamExt as _;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::config::EdgeAuth;
use crate::events::{Event, EventKind, Received};
use crate::metrics::{CONTENT_TYPE, Metrics};
use crate::supervisor::Supervisor;

/// What the operator routes hold.
#[derive(Clone, Debug)]
pub(super) struct Observe {
    pub(super) supervisor: Supervisor,
    pub(super) auth: EdgeAuth,
    pub(super) keep_alive: Duration,
    /// Ends open event streams when the edge stops.
    pub(super) shutdown: CancellationToken,
}

/// `GET /events`, and `GET /metrics` when `metrics` says so.
pub(super) fn routes(observe: Observe, metrics: bool) -> Router {
    let mut router = Router::new().route("/events", get(events));
    if metrics {
        router = router.route("/metrics", get(scrape));
    }
    router.with_state(observe)
}

/// `GET /metrics` alone, for a listener of its own.
pub(super) fn metrics_only(observe: Observe) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .with_state(observe)
}

async fn scrape(State(observe): State<Observe>, headers: HeaderMap) -> Response {
    if let Err(refused) = observe.auth.authenticate(&headers) {
        return refused.into_response();
    }
    match observe.supervisor.scrape_metrics() {
        Some(text) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response(),
        None => (
            StatusCode::NOT_FOUND,
            "Not Found: metrics are off in this runtime (SupervisorConfig::metrics)",
        )
            .into_response(),
    }
}

/// The query of `GET /events`.
#[derive(Debug, Default, Deserialize)]
struct EventsQuery {
    agent: Option<String>,
    context: Option<String>,
    kind: Option<String>,
}

/// Which events a reader asked for.
#[derive(Debug, Default)]
struct Filter {
    agents: Vec<String>,
    context: Option<String>,
    /// `None`: every kind.
    kinds: Option<Vec<EventKind>>,
}

impl Filter {
    /// The filter `query` describes.
    ///
    /// # Errors
    /// A message naming the kind (or prefix) that matches no event kind.
    fn parse(query: EventsQuery) -> Result<Self, String> {
        let list = |value: Option<String>| -> Vec<String> {
            value
                .iter()
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let kinds = match query.kind {
            None => None,
            Some(kind) => {
                let mut kinds = Vec::new();
                for wanted in list(Some(kind)) {
                    let matched: Vec<EventKind> = match wanted.strip_suffix('*') {
                        Some(prefix) => EventKind::ALL
                            .into_iter()
                            .filter(|k| k.name().starts_with(prefix))
                            .collect(),
                        None => EventKind::from_name(&wanted).into_iter().collect(),
                    };
                    if matched.is_empty() {
                        let known: Vec<&str> = EventKind::ALL.iter().map(|k| k.name()).collect();
                        return Err(format!(
                            "Bad Request: `kind` names `{wanted}`, which matches no event kind; \
                             the kinds are {}",
                            known.join(", ")
                        ));
                    }
                    kinds.extend(matched);
                }
                Some(kinds)
            }
        };
        Ok(Self {
            agents: list(query.agent),
            context: query.context.filter(|c| !c.is_empty()),
            kinds,
        })
    }

    fn accepts(&self, event: &Event) -> bool {
        let agent = self.agents.is_empty()
            || self.agents.iter().any(|agent| {
                *agent == *event.to || event.from.as_deref().is_some_and(|from| from == agent)
            });
        let context = self.context.as_deref().is_none_or(|context| {
            event
                .context_id
                .as_ref()
                .is_some_and(|id| id.as_str() == context)
        });
        let kind = self
            .kinds
            .as_ref()
            .is_none_or(|kinds| kinds.contains(&event.kind));
        agent && context && kind
    }
}

async fn events(
    State(observe): State<Observe>,
    headers: HeaderMap,
    query: Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    if let Err(refused) = observe.auth.authenticate(&headers) {
        return refused.into_response();
    }
    let query = match query {
        Ok(Query(query)) => query,
        Err(rejection) => {
            return (
                StatusCode::BAD_REQUEST,
                format!("Bad Request: {}", rejection.body_text()),
            )
                .into_response();
        }
    };
    let filter = match Filter::parse(query) {
        Ok(filter) => filter,
        Err(problem) => return (StatusCode::BAD_REQUEST, problem).into_response(),
    };
    let stream = observe
        .supervisor
        .subscribe()
        .into_stream()
        .filter_map(move |received| {
            let sse = match received {
                Received::Event(event) => filter.accepts(&event).then(|| {
                    SseEvent::default()
                        .event(event.kind.name())
                        .json_data(&*event)
                        // An event always serializes; were it not to, its name still goes.
                        .unwrap_or_else(|_| SseEvent::default().event(event.kind.name()))
                }),
                Received::Lagged(missed) => Some(
                    SseEvent::default()
                        .event("lagged")
                        .data(format!("{{\"missed\":{missed}}}")),
                ),
            };
            std::future::ready(sse.map(Ok::<_, Infallible>))
        })
        .take_until(observe.shutdown.cancelled_owned());
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(observe.keep_alive))
        .into_response()
}

/// Counts every answer of the edge's listener (see [`count`]), told by the layer
/// that logs them: one layer for both.
pub(super) fn count_answers(metrics: Arc<Metrics>) -> OnAnswer {
    OnAnswer::new(move |http_method, response, took| {
        count(&metrics, http_method, response, took);
    })
}

/// Counts a request in `agentyard_http_requests_total{method,code}` and its latency
/// (for a stream, until it started): `method` is the JSON-RPC method when the call
/// named one, else the route (`GET /agents/{name}/.well-known/agent-card.json`), else
/// `unmatched`.
fn count(metrics: &Metrics, http_method: &Method, response: &Response, took: Duration) {
    let code = response.status().as_u16();
    let rpc = response
        .extensions()
        .get::<agentyard_transport::server::RequestLog>()
        .and_then(|log| log.method);
    // The routes name themselves on their answers: the layer counting them sees
    // their requests unrouted. JSON-RPC calls reach their service without the
    // router's matching, and name their route on their own.
    let route = response
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str)
        .or_else(|| response.extensions().get::<RpcRoute>().map(|route| route.0));
    match (rpc, route) {
        (Some(method), _) => metrics.http_request(method, code, took),
        (None, Some(route)) => {
            metrics.http_request(&format!("{http_method} {route}"), code, took);
        }
        (None, None) => metrics.http_request("unmatched", code, took),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(agent: Option<&str>, context: Option<&str>, kind: Option<&str>) -> EventsQuery {
        EventsQuery {
            agent: agent.map(str::to_owned),
            context: context.map(str::to_owned),
            kind: kind.map(str::to_owned),
        }
    }

    #[test]
    fn a_kind_prefix_takes_every_kind_it_starts() {
        let filter = Filter::parse(query(None, None, Some("a2a.send.*, a2a.response"))).unwrap();
        let kinds = filter.kinds.unwrap();
        assert!(kinds.contains(&EventKind::SendInitiated));
        assert!(kinds.contains(&EventKind::SendBusy));
        assert!(kinds.contains(&EventKind::Response));
        assert!(!kinds.contains(&EventKind::TaskStatus));
    }

    #[test]
    fn an_unknown_kind_is_named_in_the_refusal() {
        let problem = Filter::parse(query(None, None, Some("a2a.send.done"))).unwrap_err();
        assert!(problem.contains("`a2a.send.done`"), "{problem}");
        let problem = Filter::parse(query(None, None, Some("nothing.*"))).unwrap_err();
        assert!(problem.contains("`nothing.*`"), "{problem}");
    }
}
