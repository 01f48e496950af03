//! The agent card routes, the 405 for an agent's URL asked with anything but
//! `POST`, and the 404 fallback.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher as _};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::{Path, State};
use axum::http::header::{
    ALLOW, CACHE_CONTROL, CONTENT_TYPE, ETAG, HOST, IF_MODIFIED_SINCE, IF_NONE_MATCH,
    LAST_MODIFIED, VARY,
};
use axum::http::uri::Authority;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse as _, Response};
use serde_json::{Value, json};

use super::AppState;
use super::reply::{
    agent_not_found, http_error, http_problem, json_body, no_default_agent, not_found,
};
use crate::a2a::AgentCard;
use crate::a2a::v1::{self, ProtocolVersion, VERSION_HEADER};
use crate::jsonrpc::RequestId;
use crate::service::A2aService;

/// `GET /.well-known/agent-card.json` and `/.well-known/agent.json`.
pub(super) async fn default_card<S: A2aService>(
    State(state): State<AppState<S>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let Some(agent) = state.service.default_agent() else {
        return no_default_agent();
    };
    card_of(&state, &agent, &uri, &headers, None)
}

/// `GET {strict prefix}/.well-known/agent-card.json`: the default agent's strict 1.0
/// card.
pub(super) async fn strict_default_card<S: A2aService>(
    State(state): State<AppState<S>>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let Some(agent) = state.service.default_agent() else {
        return no_default_agent();
    };
    card_of(&state, &agent, &uri, &headers, Some(CardForm::V1))
}

/// `GET {strict prefix}/agents/{name}/.well-known/agent-card.json`.
pub(super) async fn strict_agent_card<S: A2aService>(
    State(state): State<AppState<S>>,
    Path(agent): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    card_of(&state, &agent, &uri, &headers, Some(CardForm::V1))
}

/// `GET /agents/{name}/.well-known/agent-card.json` and `.../agent.json`.
pub(super) async fn agent_card<S: A2aService>(
    State(state): State<AppState<S>>,
    Path(agent): Path<String>,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    card_of(&state, &agent, &uri, &headers, None)
}

/// `GET /agents`: the cards of every exposed agent, in the service's order.
pub(super) async fn list<S: A2aService>(
    State(state): State<AppState<S>>,
    headers: HeaderMap,
) -> Response {
    let origin = origin(&headers);
    let default = state.service.default_agent();
    let cards: Vec<AgentCard> = state
        .service
        .agents()
        .iter()
        .filter_map(|agent| {
            let card = served_card(&*state.service, agent, origin.as_deref())?;
            Some(legacy_card(card, default.as_deref() == Some(agent)))
        })
        .collect();
    json_body(StatusCode::OK, &cards)
}

/// Any method but `POST` on `/`: 405 for the default agent, 404 without one.
pub(super) async fn default_wrong_method<S: A2aService>(
    State(state): State<AppState<S>>,
    method: Method,
) -> Response {
    let Some(agent) = state.service.default_agent() else {
        return no_default_agent();
    };
    wrong_method(&*state.service, &agent, &method, "/")
}

/// Any method but `POST` on `/agents/{name}`: 405 for an exposed agent, 404 otherwise.
pub(super) async fn agent_wrong_method<S: A2aService>(
    State(state): State<AppState<S>>,
    Path(agent): Path<String>,
    method: Method,
) -> Response {
    let path = format!("/agents/{agent}");
    wrong_method(&*state.service, &agent, &method, &path)
}

/// 405 with `Allow: POST` and a body that says how the agent is called.
fn wrong_method<S: A2aService>(service: &S, agent: &str, method: &Method, path: &str) -> Response {
    if service.card(agent).is_none() {
        return agent_not_found(agent);
    }
    let card = format!("{}/.well-known/agent-card.json", path.trim_end_matches('/'));
    let error = http_problem(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "`{method} {path}` is agent `{agent}`'s JSON-RPC endpoint: POST a JSON-RPC 2.0 \
             request to it with `Content-Type: application/json`; its card is at `GET {card}`"
        ),
    )
    .with_data(json!({
        "allow": ["POST"],
        "card": card,
        "example": {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/send",
            "params": {"message": {
                "kind": "message",
                "messageId": "m-1",
                "role": "user",
                "parts": [{"kind": "text", "text": "hello"}],
            }},
        },
    }));
    let mut response = http_error(StatusCode::METHOD_NOT_ALLOWED, RequestId::Null, error);
    response
        .headers_mut()
        .insert(ALLOW, HeaderValue::from_static("POST"));
    response
}

/// Any other path.
pub(super) async fn no_route(uri: axum::http::Uri) -> Response {
    not_found(format!(
        "nothing is served at `{}`; agents are at /agents/{{name}}",
        uri.path()
    ))
}

/// How long a client may cache a card without asking again.
const CARD_MAX_AGE: &str = "public, max-age=300";

/// The two shapes a card is served in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum CardForm {
    /// The 1.0 card with the 0.3 fields beside it (`url`, `preferredTransport`,
    /// `protocolVersion`, `security`, scheme `type`s, ...), which 0.3 clients and
    /// SDK 1.x clients both read.
    Hybrid,
    /// The strict 1.0 card, for a client that asks with `A2A-Version: 1.0`.
    V1,
}

/// An agent's card in the form the request asks for, with the caching headers:
/// `Cache-Control`, an `ETag` and `Last-Modified` that change when the card does,
/// `Vary: A2A-Version` (the body depends on it), and 304 for a conditional GET
/// whose validator still holds.
///
/// Without a version header (what 0.3 clients and the 1.0 TCK send) the card is the
/// hybrid, as the Python and Go SDK servers always serve and the JS one serves then;
/// with `A2A-Version: 1.0` it is the pure 1.0 card (the JS SDK's choice). A version
/// not served gets the hybrid too: the card is how a client learns which versions
/// are, so refusing it would leave the client nothing to go on. `forced` (the strict
/// prefix's routes) overrides the header.
fn card_of<S: A2aService>(
    state: &AppState<S>,
    agent: &str,
    uri: &Uri,
    headers: &HeaderMap,
    forced: Option<CardForm>,
) -> Response {
    let Some(card) = served_card(&*state.service, agent, origin(headers).as_deref()) else {
        return agent_not_found(agent);
    };
    let default = state.service.default_agent().as_deref() == Some(agent);
    let form = forced.unwrap_or_else(|| match super::rpc::requested_version(headers, uri) {
        Ok(ProtocolVersion::V1_0) => CardForm::V1,
        Ok(ProtocolVersion::V0_3) | Err(_) => CardForm::Hybrid,
    });
    let body = match form {
        CardForm::Hybrid => serde_json::to_vec(&hybrid(card, default)),
        CardForm::V1 => serde_json::to_vec(&v1_card(card, default)),
    };
    let body = match body {
        Ok(body) => body,
        Err(error) => {
            tracing::error!(%error, "a card failed to serialize");
            return json_body(StatusCode::INTERNAL_SERVER_ERROR, &Value::Null);
        }
    };
    let etag = etag_of(&body);
    let modified = state.card_clock.modified(agent, form, &etag);
    let status = if not_modified(headers, &etag, modified) {
        StatusCode::NOT_MODIFIED
    } else {
        StatusCode::OK
    };
    let mut response = if status == StatusCode::NOT_MODIFIED {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            StatusCode::OK,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            body,
        )
            .into_response()
    };
    let response_headers = response.headers_mut();
    response_headers.insert(CACHE_CONTROL, HeaderValue::from_static(CARD_MAX_AGE));
    response_headers.insert(VARY, HeaderValue::from_static(VERSION_HEADER));
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response_headers.insert(ETAG, value);
    }
    if let Ok(value) = HeaderValue::from_str(&httpdate::fmt_http_date(modified)) {
        response_headers.insert(LAST_MODIFIED, value);
    }
    response
}

/// The hybrid card: the 1.0 card (interfaces 1.0 first, then 0.3) with every 0.3
/// field it lacks added beside it, recursively (scheme `type`/`scheme` next to the
/// 1.0 oneof member, `capabilities` merged, skills merged one by one), as the
/// Python SDK's `agent_card_to_dict` builds it.
fn hybrid(card: AgentCard, default: bool) -> Value {
    let legacy = serde_json::to_value(legacy_card(card.clone(), default)).unwrap_or(Value::Null);
    let mut merged = serde_json::to_value(v1_card(card, default)).unwrap_or(Value::Null);
    merge_missing(&mut merged, legacy);
    merged
}

/// The 1.0 card of an agent as served: each interface once per version, 1.0
/// first. A gRPC interface has no path to tell agents apart, so its 1.0 entry
/// names the agent as `tenant` (the card's name is the agent's, as services name
/// their cards), and it is listed for 0.3, whose requests carry no tenant and so
/// reach the default agent, only on the `default` agent's card.
pub(crate) fn v1_card(card: AgentCard, default: bool) -> v1::AgentCard {
    let name = card.name.clone();
    let mut card = v1::AgentCard::for_versions(card, &ProtocolVersion::ALL);
    let grpc = crate::a2a::TransportProtocol::Grpc;
    card.supported_interfaces.retain_mut(|interface| {
        if !interface
            .protocol_binding
            .eq_ignore_ascii_case(grpc.as_str())
        {
            return true;
        }
        if interface.protocol_version == ProtocolVersion::V1_0.as_str() {
            interface.tenant.clone_from(&name);
            return true;
        }
        default
    });
    card
}

/// The 0.3 card of an agent as served: without a gRPC interface unless it is the
/// `default` agent (0.3 gRPC calls reach the default agent; see [`v1_card`]).
pub(crate) fn legacy_card(mut card: AgentCard, default: bool) -> AgentCard {
    if !default && let Some(interfaces) = card.additional_interfaces.as_mut() {
        interfaces.retain(|interface| interface.transport != crate::a2a::TransportProtocol::Grpc);
    }
    card
}

/// Adds to `into` what `from` has and `into` lacks: members of objects, and the
/// items of lists of the same length pairwise. Where both have a value that is not
/// an object or such a list, `into` wins.
pub(super) fn merge_missing(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (key, value) in from {
                match into.get_mut(&key) {
                    Some(existing) => merge_missing(existing, value),
                    None => {
                        into.insert(key, value);
                    }
                }
            }
        }
        (Value::Array(into), Value::Array(from)) if into.len() == from.len() => {
            for (item, other) in into.iter_mut().zip(from) {
                merge_missing(item, other);
            }
        }
        _ => {}
    }
}

/// A strong `ETag` of a card's bytes. The hash only has to change when the bytes
/// do and be the same for every process running this build (`DefaultHasher::new`
/// uses fixed keys), not resist forgery: the card is public.
fn etag_of(body: &[u8]) -> String {
    let mut hasher = DefaultHasher::new();
    hasher.write(body);
    format!("\"{:016x}\"", hasher.finish())
}

/// Whether a conditional GET's validators still hold: `If-None-Match` naming the
/// current `ETag` (or `*`); else, without `If-None-Match` (RFC 9110 §13.1.3),
/// `If-Modified-Since` at or after `Last-Modified`.
pub(super) fn not_modified(headers: &HeaderMap, etag: &str, modified: SystemTime) -> bool {
    if let Some(value) = headers.get(IF_NONE_MATCH) {
        let value = value.to_str().unwrap_or_default();
        return value
            .split(',')
            .map(str::trim)
            .any(|tag| tag == "*" || tag == etag || tag.strip_prefix("W/") == Some(etag));
    }
    headers
        .get(IF_MODIFIED_SINCE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| httpdate::parse_http_date(value).ok())
        .is_some_and(|since| modified <= since)
}

/// When each variant of each agent's card was first served with its current
/// `ETag`, for `Last-Modified`. A card changes only with the configuration, so a
/// few `ETag`s per variant are remembered (a card served under several `Host`s has
/// one per host) and the oldest forgotten first.
#[derive(Debug, Default)]
pub(super) struct CardClock(Mutex<HashMap<(String, CardForm), Vec<Seen>>>);

/// An `ETag` and when it was first served.
type Seen = (String, SystemTime);

/// How many `ETag`s each variant remembers.
const ETAGS_REMEMBERED: usize = 8;

impl CardClock {
    /// When the card `agent` in `form` with `etag` was first served; now (to the
    /// second, as HTTP dates are) if it never was.
    fn modified(&self, agent: &str, form: CardForm, etag: &str) -> SystemTime {
        let mut seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let known = seen.entry((agent.to_owned(), form)).or_default();
        if let Some((_, at)) = known.iter().find(|(known, _)| known == etag) {
            return *at;
        }
        let seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs());
        let now = UNIX_EPOCH + Duration::from_secs(seconds);
        if known.len() >= ETAGS_REMEMBERED {
            known.remove(0);
        }
        known.push((etag.to_owned(), now));
        now
    }
}

/// An agent's card as served to a client that reached the server at `origin`.
fn served_card<S: A2aService>(service: &S, agent: &str, origin: Option<&str>) -> Option<AgentCard> {
    match origin {
        Some(origin) => service.card_at(agent, origin),
        None => service.card(agent).map(Arc::unwrap_or_clone),
    }
}

/// `http://{Host}` when the request's `Host` header is a well-formed host and port
/// (no user info, nothing else); the service decides whether to use it.
fn origin(headers: &HeaderMap) -> Option<String> {
    let host = headers.get(HOST)?.to_str().ok()?;
    let authority: Authority = host.parse().ok()?;
    if authority.as_str().contains('@') || authority.host().is_empty() {
        return None;
    }
    Some(format!("http://{authority}"))
}
