//! The agent card routes, the 405 for an agent's URL asked with anything but
//! `POST`, and the 404 fallback.

use axum::extract::{Path, State};
use axum::http::header::{ALLOW, HOST};
use axum::http::uri::Authority;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use serde_json::json;

use super::AppState;
use super::reply::{
    agent_not_found, http_error, http_problem, json_body, no_default_agent, not_found,
};
use crate::a2a::AgentCard;
use crate::jsonrpc::RequestId;
use crate::service::A2aService;

/// `GET /.well-known/agent-card.json` and `/.well-known/agent.json`.
pub(super) async fn default_card<S: A2aService>(
    State(state): State<AppState<S>>,
    headers: HeaderMap,
) -> Response {
    let Some(agent) = state.service.default_agent() else {
        return no_default_agent();
    };
    card_of(&*state.service, &agent, &headers)
}

/// `GET /agents/{name}/.well-known/agent-card.json` and `.../agent.json`.
pub(super) async fn agent_card<S: A2aService>(
    State(state): State<AppState<S>>,
    Path(agent): Path<String>,
    headers: HeaderMap,
) -> Response {
    card_of(&*state.service, &agent, &headers)
}

/// `GET /agents`: the cards of every exposed agent, in the service's order.
pub(super) async fn list<S: A2aService>(
    State(state): State<AppState<S>>,
    headers: HeaderMap,
) -> Response {
    let origin = origin(&headers);
    let cards: Vec<AgentCard> = state
        .service
        .agents()
        .iter()
        .filter_map(|agent| served_card(&*state.service, agent, origin.as_deref()))
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

fn card_of<S: A2aService>(service: &S, agent: &str, headers: &HeaderMap) -> Response {
    match served_card(service, agent, origin(headers).as_deref()) {
        Some(card) => json_body(StatusCode::OK, &card),
        None => agent_not_found(agent),
    }
}

/// An agent's card as served to a client that reached the server at `origin`.
fn served_card<S: A2aService>(service: &S, agent: &str, origin: Option<&str>) -> Option<AgentCard> {
    match origin {
        Some(origin) => service.card_at(agent, origin),
        None => service.card(agent),
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
