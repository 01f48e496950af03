//! The live console: a web page at `/ui` that shows what the agents are doing, and the
//! small JSON API under `/api/console` it reads what A2A does not give across agents.
//!
//! The page is plain HTML, CSS and JavaScript modules, compiled into the binary
//! (`runtime/console/`, [`include_bytes!`]): no separate server, no CDN, no build
//! step. It holds no data, so it loads without credentials; every data call needs
//! them, as the A2A routes do ([`EdgeAuth::authenticate`]). Mount it beside the A2A
//! routes with [`EdgeConfig::routes`]:
//!
//! ```no_run
//! # async fn run(runtime: agentyard::Runtime) -> Result<(), agentyard::edge::EdgeError> {
//! use agentyard::console::{self, ConsoleOptions};
//! use agentyard::edge::{Edge, EdgeConfig};
//!
//! let edge = EdgeConfig::default();
//! let console = console::router(runtime.supervisor().clone(), &edge, ConsoleOptions::default());
//! let edge = Edge::start(runtime.supervisor().clone(), edge.routes(console)).await?;
//! println!("console: {}/ui/", edge.base_url());
//! # Ok(())
//! # }
//! ```
//!
//! # The API
//!
//! | route | answers |
//! |---|---|
//! | `GET /api/console/whoami` | `{"principal", "operator", "authRequired"}` |
//! | `GET /api/console/agents` | `{"agents": [{name, description, version, exposed, sessions, endpoint, cardUrl, card}]}` |
//! | `GET /api/console/tasks?agent=&state=&context=&pageSize=&pageToken=` | `{"tasks": [{id, contextId, agent, principal, status}], "nextPageToken", "total"}`, most recently changed first |
//! | `GET /api/console/tasks/{id}` | `{"agent", "principal", "task"}`: the task with its whole history and artifacts |
//! | `GET /api/console/tasks/{id}/events` | SSE: the task's event log from its start (`id:` the event's number, `event:` its kind, `data:` the A2A 0.3 stream event), then its live updates until it ends or stops for input |
//!
//! `agent` and `state` take comma-separated lists (`state=working,input-required`);
//! `pageSize` is 1 to 100 (default 50); `pageToken` is the `nextPageToken` of the
//! page before. A bad parameter is HTTP 400 with `{"error"}` naming it.
//!
//! # Who sees what
//!
//! The console follows the edge's isolation rules (`docs/semantics.md`,
//! "Isolation"): a caller sees the exposed agents, and the tasks of exposed agents
//! that it created (an anonymous caller of a server without authentication: the
//! tasks of no principal, which A2A shows it too). An unknown task and another's
//! task are the same 404. The principals named in [`ConsoleOptions::operators`]
//! see everything: every registered agent (those not exposed with `exposed: false`
//! and no card) and every task, whoever created it.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};

use agentyard_actors::edge::{
    Access, AgentSettings, EdgeAuth, EdgeConfig, Unauthorized, public_card,
};
use agentyard_actors::{Supervisor, TaskOwner};
use agentyard_transport::TaskId;
use agentyard_transport::a2a::{StreamEvent, Task, TaskState};
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use futures::StreamExt as _;
use serde::Deserialize;
use serde_json::{Value, json};

/// What the console shows to whom, beyond the edge's own settings.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ConsoleOptions {
    /// Principals (names of API keys or bearer tokens) that see every agent and every
    /// task; everyone else sees only their own work. Empty by default.
    pub operators: Vec<String>,
}

impl ConsoleOptions {
    /// Lets `principal` see every agent and every task.
    #[must_use]
    pub fn operator(mut self, principal: impl Into<String>) -> Self {
        self.operators.push(principal.into());
        self
    }
}

/// The console's routes: the page under `/ui` and its API under `/api/console`, with
/// the credentials, exposed agents and card settings of `edge` (build it from the
/// same [`EdgeConfig`] the edge starts with, after its agent list is final).
pub fn router(supervisor: Supervisor, edge: &EdgeConfig, options: ConsoleOptions) -> Router {
    let mut card_config = edge.clone();
    // The card settings only; the routes are the edge's business.
    card_config.extra_routes = None;
    let console = Arc::new(Console {
        supervisor,
        auth: edge.auth.clone(),
        exposed: edge.agents.as_ref().map(|a| a.iter().cloned().collect()),
        operators: options.operators.into_iter().collect(),
        edge: card_config,
    });
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(|| async { asset("index.html") }))
        .route(
            "/ui/{file}",
            get(|Path(file): Path<String>| async move { asset(&file) }),
        )
        .route("/api/console/whoami", get(whoami))
        .route("/api/console/agents", get(agents))
        .route("/api/console/tasks", get(tasks))
        .route("/api/console/tasks/{id}", get(task))
        .route("/api/console/tasks/{id}/events", get(task_events))
        .with_state(console)
}

/// One file of the page, compiled in.
struct Asset {
    name: &'static str,
    mime: &'static str,
    body: &'static [u8],
}

/// The page: small hand-written files, each read once by the browser.
const ASSETS: &[Asset] = &[
    Asset {
        name: "index.html",
        mime: "text/html; charset=utf-8",
        body: include_bytes!("../console/index.html"),
    },
    Asset {
        name: "style.css",
        mime: "text/css; charset=utf-8",
        body: include_bytes!("../console/style.css"),
    },
    Asset {
        name: "app.js",
        mime: "text/javascript; charset=utf-8",
        body: include_bytes!("../console/app.js"),
    },
    Asset {
        name: "api.js",
        mime: "text/javascript; charset=utf-8",
        body: include_bytes!("../console/api.js"),
    },
    Asset {
        name: "metrics.js",
        mime: "text/javascript; charset=utf-8",
        body: include_bytes!("../console/metrics.js"),
    },
    Asset {
        name: "graph.js",
        mime: "text/javascript; charset=utf-8",
        body: include_bytes!("../console/graph.js"),
    },
    Asset {
        name: "favicon.svg",
        mime: "image/svg+xml",
        body: include_bytes!("../console/favicon.svg"),
    },
];

/// Serves one asset, with a policy that lets the page load only its own files and
/// talk only to its own origin (so an injected script could not send a key away).
fn asset(name: &str) -> Response {
    let Some(asset) = ASSETS.iter().find(|asset| asset.name == name) else {
        return (StatusCode::NOT_FOUND, format!("no console file `{name}`")).into_response();
    };
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(asset.mime)),
            // Compiled into the binary: a new binary may change them, so the browser
            // asks again (cheap: they are small) rather than run a stale mix.
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'self'; img-src 'self' data:; connect-src 'self'; \
                     frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
                ),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        asset.body,
    )
        .into_response()
}

/// The console's shared state.
#[derive(Debug)]
struct Console {
    supervisor: Supervisor,
    auth: EdgeAuth,
    /// The agents the edge serves; `None`: every agent whose descriptor is exposed.
    exposed: Option<HashSet<String>>,
    operators: HashSet<String>,
    /// The edge's settings, for the cards.
    edge: EdgeConfig,
}

/// Who is looking, as far as the console cares.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Viewer {
    /// Sees everything.
    Operator(String),
    /// Sees its own work: the principal, or `None` for an anonymous caller.
    Caller(Option<String>),
}

impl Viewer {
    fn principal(&self) -> Option<&str> {
        match self {
            Self::Operator(name) => Some(name),
            Self::Caller(name) => name.as_deref(),
        }
    }
}

impl Console {
    /// The viewer behind a request's credentials.
    fn viewer(&self, headers: &HeaderMap) -> Result<Viewer, ApiError> {
        Ok(match self.auth.authenticate(headers)? {
            Access::Public => Viewer::Caller(None),
            Access::Principal(name) if self.operators.contains(&name) => Viewer::Operator(name),
            Access::Principal(name) => Viewer::Caller(Some(name)),
        })
    }

    fn is_exposed(&self, agent: &str) -> bool {
        match &self.exposed {
            Some(agents) => agents.contains(agent),
            None => self.supervisor.agent(agent).is_some_and(|d| d.exposed),
        }
    }

    /// The rule of `docs/semantics.md`, "Isolation", for a task whose owner is
    /// `owner`: its agent's endpoint must exist and its principal must be the
    /// caller; operators see every task.
    fn sees(&self, viewer: &Viewer, owner: Option<&TaskOwner>) -> bool {
        match viewer {
            Viewer::Operator(_) => true,
            Viewer::Caller(principal) => owner.is_some_and(|owner| {
                self.is_exposed(&owner.agent) && owner.created_by(principal.as_deref())
            }),
        }
    }

    /// The base URL cards name: the configured public URL, else the origin the
    /// browser used (the console is reached there, so the cards' URLs work from it).
    fn base_url(&self, headers: &HeaderMap) -> String {
        if let Some(url) = &self.edge.public_url {
            return url.clone();
        }
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("localhost");
        format!("http://{host}")
    }
}

/// Why an API call is refused; as a response, its status and `{"error"}` (a 401
/// keeps the edge's challenge).
#[derive(Debug)]
enum ApiError {
    Unauthorized(Unauthorized),
    BadRequest(String),
    /// The one answer for an unknown task and one the viewer may not see.
    NoTask(TaskId),
    /// A failure of the runtime or the store, and what was being done.
    Internal(&'static str, agentyard_actors::Error),
}

impl From<Unauthorized> for ApiError {
    fn from(refused: Unauthorized) -> Self {
        Self::Unauthorized(refused)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            Self::Unauthorized(refused) => return refused.into_response(),
            Self::BadRequest(problem) => (StatusCode::BAD_REQUEST, problem),
            Self::NoTask(id) => (StatusCode::NOT_FOUND, format!("no task `{id}`")),
            Self::Internal(what, failure) => {
                // Logged here, once; the caller gets a short message, not the store's
                // internals.
                tracing::warn!(error = %failure, "console: {what} failed");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("{what} failed; the server log says why"),
                )
            }
        };
        (status, axum::Json(json!({ "error": message }))).into_response()
    }
}

async fn whoami(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let viewer = console.viewer(&headers)?;
    Ok(axum::Json(json!({
        "principal": viewer.principal(),
        "operator": matches!(viewer, Viewer::Operator(_)),
        "authRequired": console.auth.is_required(),
    }))
    .into_response())
}

async fn agents(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let viewer = console.viewer(&headers)?;
    let sessions = console.supervisor.session_counts();
    let base = console.base_url(&headers);
    let default_settings = AgentSettings::default();
    let mut agents: Vec<Value> = console
        .supervisor
        .agents()
        .filter_map(|descriptor| {
            let exposed = console.is_exposed(&descriptor.name);
            if !exposed && !matches!(viewer, Viewer::Operator(_)) {
                return None;
            }
            let live = sessions.get(descriptor.name.as_str()).copied().unwrap_or(0);
            let mut agent = json!({
                "name": descriptor.name,
                "description": descriptor.description,
                "version": descriptor.version,
                "exposed": exposed,
                "sessions": live,
            });
            if exposed {
                let settings = console
                    .edge
                    .agent_settings
                    .get(&descriptor.name)
                    .unwrap_or(&default_settings);
                let card = public_card(descriptor, settings, &console.edge, &base);
                agent["endpoint"] = json!(format!("/agents/{}", descriptor.name));
                agent["cardUrl"] = json!(format!(
                    "/agents/{}/.well-known/agent-card.json",
                    descriptor.name
                ));
                agent["card"] = serde_json::to_value(card).unwrap_or(Value::Null);
            }
            Some(agent)
        })
        .collect();
    agents.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Ok(axum::Json(json!({ "agents": agents })).into_response())
}

/// The task list's query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct TaskQuery {
    agent: Option<String>,
    state: Option<String>,
    context: Option<String>,
    page_size: Option<String>,
    page_token: Option<String>,
}

/// The default and largest page of the task list (as A2A 1.0 `ListTasks`).
const DEFAULT_PAGE_SIZE: usize = 50;
const MAX_PAGE_SIZE: usize = 100;

/// A comma-separated list, without empty items; `None` for a missing or empty one.
fn list(value: Option<&str>) -> Option<Vec<&str>> {
    let items: Vec<&str> = value?
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .collect();
    (!items.is_empty()).then_some(items)
}

fn parse_state(text: &str) -> Result<TaskState, String> {
    TaskState::ALL
        .into_iter()
        .find(|state| state.as_str().eq_ignore_ascii_case(text))
        .ok_or_else(|| {
            let names: Vec<&str> = TaskState::ALL.iter().map(|s| s.as_str()).collect();
            format!(
                "`state`: `{text}` is not a task state (one of {})",
                names.join(", ")
            )
        })
}

impl TaskQuery {
    fn page_size(&self) -> Result<usize, ApiError> {
        match self.page_size.as_deref() {
            None | Some("") => Ok(DEFAULT_PAGE_SIZE),
            Some(text) => match text.parse::<usize>() {
                Ok(size @ 1..=MAX_PAGE_SIZE) => Ok(size),
                _ => Err(ApiError::BadRequest(format!(
                    "`pageSize` must be a number from 1 to {MAX_PAGE_SIZE}, not `{text}`"
                ))),
            },
        }
    }

    fn cursor(&self) -> Result<Option<u64>, ApiError> {
        match self.page_token.as_deref() {
            None | Some("") => Ok(None),
            Some(text) => text.parse::<u64>().map(Some).map_err(|_| {
                ApiError::BadRequest(format!(
                    "`pageToken` `{text}` is not a token this server gave; start without one"
                ))
            }),
        }
    }

    fn states(&self) -> Result<Option<Vec<TaskState>>, ApiError> {
        list(self.state.as_deref())
            .map(|names| names.into_iter().map(parse_state).collect())
            .transpose()
            .map_err(ApiError::BadRequest)
    }
}

async fn tasks(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    query: Result<Query<TaskQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let viewer = console.viewer(&headers)?;
    let Query(query) = query.map_err(|rejection| ApiError::BadRequest(rejection.body_text()))?;
    let page_size = query.page_size()?;
    let before = query.cursor()?;
    let states = query.states()?;
    let agents = list(query.agent.as_deref());
    let context = query.context.as_deref().filter(|c| !c.is_empty());
    // The owners of the tasks the filter keeps: the page names each task's agent.
    let owners: Mutex<HashMap<TaskId, TaskOwner>> = Mutex::new(HashMap::new());
    let filter = |task: &Task, owner: Option<&TaskOwner>| {
        let keep = console.sees(&viewer, owner)
            && agents.as_ref().is_none_or(|agents| {
                owner.is_some_and(|owner| agents.iter().any(|a| *a == &*owner.agent))
            })
            && states
                .as_ref()
                .is_none_or(|states| states.contains(&task.status.state))
            && context.is_none_or(|context| task.context_id.as_str() == context);
        if keep && let Some(owner) = owner {
            owners
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(task.id.clone(), owner.clone());
        }
        keep
    };
    let page = console
        .supervisor
        .list_tasks(&filter, page_size, before)
        .await
        .map_err(|failure| ApiError::Internal("listing tasks", failure))?;
    let owners = owners.into_inner().unwrap_or_else(PoisonError::into_inner);
    let rows: Vec<Value> = page
        .tasks
        .iter()
        .map(|task| {
            let owner = owners.get(&task.id);
            json!({
                "id": task.id,
                "contextId": task.context_id,
                "agent": owner.map(|o| &*o.agent),
                "principal": owner.and_then(|o| o.principal.as_deref()),
                "status": task.status,
            })
        })
        .collect();
    Ok(axum::Json(json!({
        "tasks": rows,
        "nextPageToken": page.next.map(|n| n.to_string()),
        "total": page.total,
    }))
    .into_response())
}

/// The task's owner, if the viewer may see the task.
async fn visible_owner(
    console: &Console,
    viewer: &Viewer,
    id: &TaskId,
) -> Result<TaskOwner, ApiError> {
    match console.supervisor.task_owner(id).await {
        Ok(Some(owner)) if console.sees(viewer, Some(&owner)) => Ok(owner),
        Ok(_) => Err(ApiError::NoTask(id.clone())),
        Err(failure) => Err(ApiError::Internal("reading the task", failure)),
    }
}

/// A failure reading a task the viewer may see: gone meanwhile (retention) is not
/// found, anything else a failure of `what`.
fn read_failure(what: &'static str, id: TaskId, failure: agentyard_actors::Error) -> ApiError {
    match failure {
        agentyard_actors::Error::TaskNotFound(_) => ApiError::NoTask(id),
        failure => ApiError::Internal(what, failure),
    }
}

async fn task(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let viewer = console.viewer(&headers)?;
    let id = TaskId::from(id);
    let owner = visible_owner(&console, &viewer, &id).await?;
    let task = console
        .supervisor
        .get_task(&id, None)
        .await
        .map_err(|failure| read_failure("reading the task", id.clone(), failure))?;
    Ok(axum::Json(json!({
        "agent": &*owner.agent,
        "principal": owner.principal.as_deref(),
        "task": task,
    }))
    .into_response())
}

/// The SSE `event:` name of a stream event: its A2A 0.3 `kind`.
fn kind(event: &StreamEvent) -> &'static str {
    match event {
        StreamEvent::Task(_) => "task",
        StreamEvent::Message(_) => "message",
        StreamEvent::StatusUpdate(_) => "status-update",
        StreamEvent::ArtifactUpdate(_) => "artifact-update",
    }
}

async fn task_events(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let viewer = console.viewer(&headers)?;
    let id = TaskId::from(id);
    visible_owner(&console, &viewer, &id).await?;
    // From the log's start: the timeline is the task's whole story, then what comes.
    let events = console
        .supervisor
        .resubscribe_after(&id, Some(0))
        .await
        .map_err(|failure| read_failure("following the task", id.clone(), failure))?;
    let events = events.map(|(seq, event)| {
        let mut sse = Event::default().event(kind(&event));
        if let Some(seq) = seq {
            sse = sse.id(seq.to_string());
        }
        Ok::<_, Infallible>(
            sse.json_data(&event)
                .unwrap_or_else(|_| Event::default().event("error")),
        )
    });
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::{ASSETS, list, parse_state};
    use agentyard_transport::a2a::TaskState;

    #[test]
    fn lists_drop_empty_items_and_an_empty_list_is_none() {
        assert_eq!(list(Some(" echo, ,ask")), Some(vec!["echo", "ask"]));
        assert_eq!(list(Some(" , ")), None);
        assert_eq!(list(None), None);
    }

    #[test]
    fn states_are_read_by_their_a2a_names_and_a_bad_one_is_named() {
        assert_eq!(parse_state("input-required"), Ok(TaskState::InputRequired));
        assert_eq!(parse_state("COMPLETED"), Ok(TaskState::Completed));
        let problem = parse_state("done").unwrap_err();
        assert!(
            problem.contains("`done`") && problem.contains("completed"),
            "{problem}"
        );
    }

    #[test]
    fn every_module_the_page_imports_is_served() {
        let served: Vec<&str> = ASSETS.iter().map(|a| a.name).collect();
        for asset in ASSETS {
            let text = String::from_utf8_lossy(asset.body);
            // `from './x.js'` in modules, `href="./x"`/`src="./x"` in the page.
            for quote in ["'./", "\"./"] {
                for piece in text.split(quote).skip(1) {
                    let Some(end) = piece.find(['\'', '"']) else {
                        continue;
                    };
                    let name = &piece[..end];
                    if [".js", ".css", ".svg"]
                        .iter()
                        .any(|ext| name.ends_with(ext))
                    {
                        assert!(
                            served.contains(&name),
                            "{} refers to `{name}`, which is not served",
                            asset.name
                        );
                    }
                }
            }
        }
    }
}
