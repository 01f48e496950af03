//! The agent card routes and the 404 fallback.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::AppState;
use super::reply::{agent_not_found, http_error, invalid_request, json_body, no_default_agent};
use crate::a2a::AgentCard;
use crate::jsonrpc::RequestId;
use crate::service::A2aService;

/// `GET /.well-known/agent-card.json` and `/.well-known/agent.json`.
pub(super) async fn default_card<S: A2aService>(State(state): State<AppState<S>>) -> Response {
    let Some(agent) = state.service.default_agent() else {
        return no_default_agent();
    };
    card_of(&*state.service, &agent)
}

/// `GET /agents/{name}/.well-known/agent-card.json` and `.../agent.json`.
pub(super) async fn agent_card<S: A2aService>(
    State(state): State<AppState<S>>,
    Path(agent): Path<String>,
) -> Response {
    card_of(&*state.service, &agent)
}

/// `GET /agents`: the cards of every exposed agent, in the service's order.
pub(super) async fn list<S: A2aService>(State(state): State<AppState<S>>) -> Response {
    let cards: Vec<AgentCard> = state
        .service
        .agents()
        .iter()
        .filter_map(|agent| state.service.card(agent))
        .collect();
    json_body(StatusCode::OK, &cards)
}

/// Any other path.
pub(super) async fn no_route(uri: axum::http::Uri) -> Response {
    http_error(
        StatusCode::NOT_FOUND,
        RequestId::Null,
        invalid_request(format!(
            "nothing is served at `{}`; agents are at /agents/{{name}}",
            uri.path()
        )),
    )
}

fn card_of<S: A2aService>(service: &S, agent: &str) -> Response {
    match service.card(agent) {
        Some(card) => json_body(StatusCode::OK, &card),
        None => agent_not_found(agent),
    }
}
