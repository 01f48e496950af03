//! The workflow HTTP API, beside the A2A routes of the edge:
//!
//! | route | answers |
//! |---|---|
//! | `GET /api/workflows` | `{"workflows": [names]}` |
//! | `GET /api/workflows/{name}` | the definition, as JSON |
//! | `PUT /api/workflows/{name}` | stores a definition (TOML, or JSON when the body starts with `{`), validated first: 201 new, 200 replaced, 400 `{"error", "node"}` naming the node |
//! | `DELETE /api/workflows/{name}` | 204, or 404 |
//! | `POST /api/workflows/{name}/run` | runs it on the body's input (`{"input": "..."}`, or the body as text) and streams its [`RunEvent`]s as SSE: `event:` the event's name, `data:` its JSON, ending with `run.completed`, `run.failed` or `run.canceled`; a client that disconnects cancels the run |
//! | `GET /api/workflows/{name}/nodes/{id}/.well-known/agent-card.json` | the card of an agent node: the node's skill, at the URL of its agent |
//! | `GET /api/agent-card` | the aggregate card: a skill per exposed agent and per workflow |
//!
//! A run through this API takes no answers: a node that asks for input fails it.
//! Human-in-the-loop runs go through the workflow's own A2A endpoint, where the
//! run's task goes `input-required` and the caller answers it.
//!
//! When the server authenticates callers, these routes need the same credentials
//! (an API key in the configured header, or a bearer token); cards included, since
//! they list what the server runs.

use std::convert::Infallible;
use std::sync::{Arc, OnceLock};

use agentyard_actors::edge::EdgeAuth;
use agentyard_transport::a2a::{AgentCapabilities, AgentCard, AgentSkill};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::Stream;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::definition::{NodeKind, WorkflowSpec};
use crate::host::{PutError, Workflows};
use crate::runner::{RunControl, RunEvent};

#[cfg(test)]
mod tests;

/// The API's settings.
#[derive(Debug, Clone, Default)]
pub struct ApiOptions {
    /// Who may call it: the edge's credentials, checked as for every route beside
    /// A2A ([`EdgeAuth::authenticate`]).
    pub auth: EdgeAuth,
    /// The server's base URL for cards, once known (set after the edge binds);
    /// until then the request's `Host` is used.
    pub base_url: Arc<OnceLock<String>>,
}

#[derive(Debug, Clone)]
struct Api {
    workflows: Workflows,
    options: Arc<ApiOptions>,
}

/// The routes above, for `workflows` (merge them into the edge's router).
pub fn router(workflows: Workflows, options: ApiOptions) -> Router {
    let api = Api {
        workflows,
        options: Arc::new(options),
    };
    Router::new()
        .route("/api/workflows", get(list))
        .route(
            "/api/workflows/{name}",
            get(get_one).put(put_one).delete(delete_one),
        )
        .route("/api/workflows/{name}/run", axum::routing::post(run))
        .route(
            "/api/workflows/{name}/nodes/{id}/.well-known/agent-card.json",
            get(node_card),
        )
        .route("/api/agent-card", get(aggregate_card))
        .with_state(api)
}

fn error(status: StatusCode, message: impl Into<String>, node: Option<&str>) -> Response {
    (
        status,
        axum::Json(json!({ "error": message.into(), "node": node })),
    )
        .into_response()
}

fn internal(problem: &dyn std::fmt::Display) -> Response {
    tracing::error!(error = %problem, "workflow API");
    error(StatusCode::INTERNAL_SERVER_ERROR, problem.to_string(), None)
}

async fn list(State(api): State<Api>, headers: HeaderMap) -> Response {
    if let Err(refused) = api.options.auth.authenticate(&headers) {
        return refused.into_response();
    }
    match api.workflows.names().await {
        Ok(names) => axum::Json(json!({ "workflows": names })).into_response(),
        Err(e) => internal(&e),
    }
}

async fn get_one(State(api): State<Api>, Path(name): Path<String>, headers: HeaderMap) -> Response {
    if let Err(refused) = api.options.auth.authenticate(&headers) {
        return refused.into_response();
    }
    match api.workflows.get(&name).await {
        Ok(Some(workflow)) => axum::Json(workflow.spec().clone()).into_response(),
        Ok(None) => not_found(&name),
        Err(e) => internal(&e),
    }
}

fn not_found(name: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!("no workflow named `{name}`"),
        None,
    )
}

async fn put_one(
    State(api): State<Api>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(refused) = api.options.auth.authenticate(&headers) {
        return refused.into_response();
    }
    let Ok(text) = std::str::from_utf8(&body) else {
        return error(StatusCode::BAD_REQUEST, "the body is not UTF-8", None);
    };
    let spec = match WorkflowSpec::parse(text) {
        Ok(spec) => spec,
        Err(e) => return error(StatusCode::BAD_REQUEST, e.to_string(), None),
    };
    if spec.name != name {
        return error(
            StatusCode::BAD_REQUEST,
            format!(
                "the definition is named `{}` but was put at `{name}`",
                spec.name
            ),
            None,
        );
    }
    match api.workflows.put(spec).await {
        Ok((workflow, created)) => {
            let status = if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            (status, axum::Json(workflow.spec().clone())).into_response()
        }
        Err(PutError::Invalid(e)) => error(StatusCode::BAD_REQUEST, e.to_string(), e.node()),
        Err(e) => internal(&e),
    }
}

async fn delete_one(
    State(api): State<Api>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(refused) = api.options.auth.authenticate(&headers) {
        return refused.into_response();
    }
    match api.workflows.delete(&name).await {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => not_found(&name),
        Err(e) => internal(&e),
    }
}

/// The run's input: `{"input": "..."}`, or the body itself as text.
fn run_input(body: &[u8]) -> Result<String, String> {
    let text = std::str::from_utf8(body).map_err(|_| String::from("the body is not UTF-8"))?;
    if text.trim_start().starts_with('{') {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("the body is not JSON: {e}"))?;
        return value
            .get("input")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| String::from("the body needs `input`: a string"));
    }
    Ok(text.to_owned())
}

async fn run(
    State(api): State<Api>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(refused) = api.options.auth.authenticate(&headers) {
        return refused.into_response();
    }
    let input = match run_input(&body) {
        Ok(input) => input,
        Err(problem) => return error(StatusCode::BAD_REQUEST, problem, None),
    };
    let workflow = match api.workflows.get(&name).await {
        Ok(Some(workflow)) => workflow,
        Ok(None) => return not_found(&name),
        Err(e) => return internal(&e),
    };
    let Some(runner) = api.workflows.runner() else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the workflows are not bound to a runtime yet",
            None,
        );
    };
    let (events, rx) = mpsc::unbounded_channel();
    let mut control = RunControl::new();
    control.events = Some(events);
    let cancel = control.cancel.clone();
    tokio::spawn(async move { runner.run(workflow, input, control).await });
    Sse::new(event_stream(rx, cancel))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// The run's events as SSE; dropping the stream (the client went away) cancels the
/// run.
fn event_stream(
    rx: mpsc::UnboundedReceiver<RunEvent>,
    cancel: CancellationToken,
) -> impl Stream<Item = Result<Event, Infallible>> {
    futures::stream::unfold(
        (rx, cancel.drop_guard()),
        |(mut rx, guard): (mpsc::UnboundedReceiver<RunEvent>, DropGuard)| async move {
            let event = rx.recv().await?;
            let sse = Event::default()
                .event(event.name())
                .json_data(&event)
                .unwrap_or_else(|_| Event::default().event(event.name()));
            let ended = matches!(
                event,
                RunEvent::RunCompleted { .. } | RunEvent::RunFailed { .. } | RunEvent::RunCanceled
            );
            if ended {
                // The run is over: nothing left to cancel.
                let _ = guard.disarm();
                let (_, closed) = mpsc::unbounded_channel();
                drop(rx);
                return Some((Ok(sse), (closed, CancellationToken::new().drop_guard())));
            }
            Some((Ok(sse), (rx, guard)))
        },
    )
}

fn base_url(api: &Api, headers: &HeaderMap) -> String {
    if let Some(url) = api.options.base_url.get() {
        return url.clone();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}")
}

async fn node_card(
    State(api): State<Api>,
    Path((name, id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Err(refused) = api.options.auth.authenticate(&headers) {
        return refused.into_response();
    }
    let workflow = match api.workflows.get(&name).await {
        Ok(Some(workflow)) => workflow,
        Ok(None) => return not_found(&name),
        Err(e) => return internal(&e),
    };
    let Some(node) = workflow.node(&id) else {
        return error(
            StatusCode::NOT_FOUND,
            format!("workflow `{name}` has no node `{id}`"),
            Some(&id),
        );
    };
    let NodeKind::Agent(agent) = &node.kind else {
        return error(
            StatusCode::NOT_FOUND,
            format!("node `{id}` of workflow `{name}` is not an agent node, and has no card"),
            Some(&id),
        );
    };
    let base = base_url(&api, &headers);
    let descriptor = api
        .workflows
        .supervisor()
        .and_then(|s| s.agent(&agent.agent).cloned());
    let mut card = AgentCard::new(
        format!("{name}.{id}"),
        node.description.clone().unwrap_or_else(|| {
            format!(
                "node `{id}` of workflow `{name}`: the agent `{}`",
                agent.agent
            )
        }),
        format!("{base}/agents/{}", agent.agent),
        workflow.version(),
    );
    card.capabilities = AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(false),
        ..AgentCapabilities::default()
    };
    let mut skill = AgentSkill::new(
        id.clone(),
        id.clone(),
        format!("sends `{}` to `{}`", agent.prompt.source(), agent.agent),
    );
    skill.tags = vec![String::from("workflow-node"), name.clone()];
    if let Some(descriptor) = &descriptor {
        card.default_input_modes.clone_from(&descriptor.input_modes);
        card.default_output_modes
            .clone_from(&descriptor.output_modes);
    }
    if !agent.accepted_output_modes.is_empty() {
        skill.output_modes = Some(agent.accepted_output_modes.clone());
    }
    card.skills = vec![skill];
    axum::Json(card).into_response()
}

async fn aggregate_card(State(api): State<Api>, headers: HeaderMap) -> Response {
    if let Err(refused) = api.options.auth.authenticate(&headers) {
        return refused.into_response();
    }
    let base = base_url(&api, &headers);
    let mut card = AgentCard::new(
        "agentyard",
        "Every agent and workflow this server exposes",
        base.clone(),
        env!("CARGO_PKG_VERSION"),
    );
    card.capabilities = AgentCapabilities {
        streaming: Some(true),
        ..AgentCapabilities::default()
    };
    let workflows = match api.workflows.names().await {
        Ok(names) => names,
        Err(e) => return internal(&e),
    };
    if let Some(supervisor) = api.workflows.supervisor() {
        let mut exposed: Vec<_> = supervisor.agents().filter(|d| d.exposed).collect();
        exposed.sort_by(|a, b| a.name.cmp(&b.name));
        for descriptor in exposed {
            if workflows.contains(&descriptor.name) {
                continue;
            }
            let mut skill = AgentSkill::new(
                descriptor.name.clone(),
                descriptor.name.clone(),
                format!(
                    "{} ({base}/agents/{})",
                    descriptor.description, descriptor.name
                ),
            );
            skill.tags = vec![String::from("agent")];
            card.skills.push(skill);
        }
    }
    for name in workflows {
        let description = match api.workflows.get(&name).await {
            Ok(Some(workflow)) => workflow.description().to_owned(),
            _ => String::new(),
        };
        let mut skill = AgentSkill::new(
            name.clone(),
            name.clone(),
            format!("{description} (workflow; run it at {base}/api/workflows/{name}/run)"),
        );
        skill.tags = vec![String::from("workflow")];
        card.skills.push(skill);
    }
    axum::Json(card).into_response()
}
