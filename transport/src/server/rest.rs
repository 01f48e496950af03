//! The HTTP+JSON (REST) binding: the resources of the protos' `google.api.http`
//! annotations under each agent's base URL, decoded into the same
//! [`A2aRequest`]s the JSON-RPC endpoint makes and handed to the same
//! [`A2aService::call`].
//!
//! The layers in front of the handler are the JSON-RPC routes' own (authentication,
//! the call limit, the body), behind this binding's outermost one, [`resolve`],
//! which reads the path: which agent, which tenant, which protocol version, which
//! resource, and whether the HTTP method fits it.

use std::sync::Arc;

use axum::Extension;
use axum::body::Bytes;
use axum::extract::{Query, Request, State};
use axum::http::header::{ALLOW, CONTENT_TYPE};
use axum::http::{HeaderValue, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use serde::Serialize;
use serde_json::{Map, Value, json};
use tracing::Instrument as _;

use super::reply::{self, Binding, ErrorCodeSent};
use super::rpc::{Answer, Call, Resolved, V1Result};
use super::{AppState, cards, sse};
use crate::a2a::StreamEvent;
use crate::a2a::v1::{self, ProtocolVersion, RpcCode, binding_status};
use crate::jsonrpc::{A2aRequest, JsonRpcError, RequestId};
use crate::service::{A2aResult, A2aService};

pub(super) mod path;

pub(super) use path::{Resource, parse};

/// The media type of HTTP+JSON bodies (requests may also use `application/json`).
pub const A2A_JSON: &str = "application/a2a+json";

/// The resource and the A2A method a request was routed to, for the handler.
#[derive(Clone, Debug)]
pub(super) struct Routed {
    resource: Resource,
    method: &'static str,
}

/// Layer 1 (outermost) of the HTTP+JSON routes: reads the path into its agent,
/// tenant, version and resource — 404 for a path that names none, an agent not
/// served, or a tenant other than the agent the URL serves; 405 with `Allow` for a
/// method the resource does not take — and, on the way out, echoes the activated
/// extensions and names the call for the log line.
pub(super) async fn resolve<S: A2aService>(
    State(state): State<AppState<S>>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(target) = parse(request.uri().path()) else {
        // A path under an agent's base URL or `/v1/` is a caller of this binding
        // asking for a resource there is none of: answered in its form. Anything
        // else could be any caller's mistake, and gets the server's plain 404.
        let path = request.uri().path();
        let under_agent = path
            .strip_prefix("/agents/")
            .is_some_and(|rest| rest.trim_end_matches('/').contains('/'));
        if under_agent || path.starts_with("/v1/") || path.contains("/v1/") {
            let version = if path.starts_with("/v1/") || path.contains("/v1/") {
                ProtocolVersion::V0_3
            } else {
                ProtocolVersion::V1_0
            };
            return not_found(
                version,
                format!("no A2A resource is at `{path}`; see the A2A HTTP+JSON paths"),
            );
        }
        return cards::no_route(request.uri().clone()).await;
    };
    let version = target.version;
    let agent = match target.agent {
        Some(agent) => agent,
        None => match state.service.default_agent() {
            Some(agent) => agent,
            None => {
                return not_found(
                    version,
                    "this server has no default agent; agents are at /agents/{name}",
                );
            }
        },
    };
    let Some(card) = state.service.card(&agent) else {
        return not_found(
            version,
            format!("no agent `{agent}` is served here; GET /agents lists the agents"),
        );
    };
    if let Some(tenant) = &target.tenant
        && *tenant != agent
    {
        return not_found(
            version,
            format!(
                "tenant `{tenant}` is not served at this URL: it serves agent `{agent}`, \
                 whose tenant is `{agent}` (or none); agents are at /agents/{{name}}"
            ),
        );
    }
    let Some(method) = target.resource.method(request.method()) else {
        return wrong_method(
            version,
            &target.resource,
            request.method(),
            request.uri().path(),
        );
    };
    let span = tracing::info_span!(
        "a2a.rest",
        agent = %agent,
        method,
        version = version.as_str(),
    );
    let resolved = Resolved::new(
        agent.into(),
        card,
        request.headers(),
        request.uri(),
        Binding::Rest(version),
        span.clone(),
    );
    // Shared, not copied: the layers and the handler inside each extract it.
    let resolved = Arc::new(resolved);
    request.extensions_mut().insert(Arc::clone(&resolved));
    request.extensions_mut().insert(Routed {
        resource: target.resource,
        method,
    });
    let response = next.run(request).instrument(span).await;
    resolved.finish(response, version, Some(method))
}

/// The HTTP+JSON handler, inside the layers: decodes the call from the path, the
/// query and the body, checks what the card demands, and hands it to the service.
pub(super) async fn call<S: A2aService>(
    State(state): State<AppState<S>>,
    Extension(resolved): Extension<Arc<Resolved>>,
    Extension(routed): Extension<Routed>,
    request: Request,
) -> Response {
    // Set by the authentication layer outside; a route without it is a bug here.
    let Some(principal) = resolved.authenticated.get().cloned() else {
        return super::rpc::unresolved();
    };
    let (parts, body) = request.into_parts();
    // Read whole by the body layer already: this only takes the buffer.
    let body = super::rpc::whole(body).await.unwrap_or_default();
    let version = resolved.header_form();
    let asked = resolved.asked.clone();
    let call = Call::new(state, &resolved);
    let span = call.span.clone();
    async move {
        if let Err(unsupported) = asked {
            let supported = ProtocolVersion::ALL.map(ProtocolVersion::as_str);
            let error = v1::version_not_supported(unsupported.requested(), &supported);
            let message = format!("{} (supported: {})", error.message, supported.join(", "));
            return self::error(version, error.with_message(message));
        }
        let request = match decode(version, &routed, &parts.uri, &body) {
            Ok(request) => request,
            Err(error) => {
                tracing::debug!(code = error.code, message = %error.message, "request rejected");
                return self::error(version, error);
            }
        };
        if let Err(error) = call.check_call(version, routed.method, &request) {
            tracing::debug!(code = error.code, message = %error.message, "request rejected");
            return self::error(version, error);
        }
        if matches!(request, A2aRequest::GetAuthenticatedExtendedCard) {
            return match call.extended(principal.as_ref()) {
                // The card as the other bindings serve it (a gRPC interface's
                // tenant, the 0.3 gRPC entry on the default agent's card only).
                Ok(card) => {
                    let default = call.is_default();
                    match version {
                        ProtocolVersion::V1_0 => {
                            json(StatusCode::OK, A2A_JSON, &cards::v1_card(card, default))
                        }
                        ProtocolVersion::V0_3 => {
                            success(version, cards::legacy_card(card, default).into())
                        }
                    }
                }
                Err(None) => call.unauthenticated(Binding::Rest(version), RequestId::Null),
                Err(Some(error)) => self::error(version, error),
            };
        }
        // HTTP+JSON has no request id; the service gets one of its own per call.
        let id = RequestId::String(format!("rest-{}", uuid::Uuid::new_v4()));
        let context = match call.context(&parts.headers, version, principal, id) {
            Ok(context) => context,
            Err(error) => return self::error(version, error),
        };
        match call.invoke(routed.method, context, request).await {
            Err(error) => self::error(version, error),
            Ok(Answer::Unary(result)) => success(version, result),
            Ok(Answer::Stream(events)) => {
                let keep_alive = call.state.config.sse_keep_alive();
                let span = call.span.clone();
                super::rpc::sse(
                    version,
                    events,
                    span,
                    keep_alive,
                    call.shutdown,
                    move |seq, event| stream_frame(version, seq, event),
                )
            }
        }
    }
    .instrument(span)
    .await
}

/// The call a request makes, from the path, the query and the body (a JSON object;
/// none is `{}`): in 1.0 the params of the same JSON-RPC method
/// ([`decode_v1`]), in 0.3 the 0.3 proto's request message ([`decode_v0_3`]).
fn decode(
    version: ProtocolVersion,
    routed: &Routed,
    uri: &Uri,
    body: &Bytes,
) -> Result<A2aRequest, JsonRpcError> {
    let body = if body.is_empty() {
        Map::new()
    } else {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(members)) => members,
            Ok(_) => {
                return Err(JsonRpcError::invalid_params()
                    .with_message("Invalid params: the request body must be a JSON object"));
            }
            Err(error) => {
                return Err(JsonRpcError::parse_error()
                    .with_message(format!("Invalid JSON payload: {error}")));
            }
        }
    };
    let Query(query) = Query::<Vec<(String, String)>>::try_from_uri(uri).map_err(|error| {
        JsonRpcError::invalid_params().with_message(format!(
            "Invalid params: the query string could not be read: {error}"
        ))
    })?;
    // `A2A-Version` may ride in the query; it is no param.
    let query = query
        .into_iter()
        .filter(|(key, _)| !key.eq_ignore_ascii_case(v1::VERSION_HEADER));
    match version {
        ProtocolVersion::V1_0 => decode_v1(routed, query, body),
        ProtocolVersion::V0_3 => decode_v0_3(routed, query.collect(), body),
    }
}

/// A 1.0 call: its params from the body, the query (`historyLength`, the
/// `ListTasks` filters, ...) and the path (`id`, `taskId`), which wins over both,
/// typed as the JSON-RPC params of the same method are.
fn decode_v1(
    routed: &Routed,
    query: impl Iterator<Item = (String, String)>,
    mut params: Map<String, Value>,
) -> Result<A2aRequest, JsonRpcError> {
    for (key, value) in query {
        // The one boolean a query carries; ProtoJSON reads every other scalar
        // from a string.
        let value = match (key.as_str(), value.as_str()) {
            ("includeArtifacts" | "include_artifacts", "true") => Value::Bool(true),
            ("includeArtifacts" | "include_artifacts", "false") => Value::Bool(false),
            _ => Value::String(value),
        };
        params.insert(key, value);
    }
    routed.resource.path_params(&mut params);
    let typed = v1::Request::from_jsonrpc(routed.method, Some(Value::Object(params)))?;
    Ok(A2aRequest::try_from(typed)?)
}

/// A 0.3 call: the 0.3 proto's request message, read as ProtoJSON from the body
/// where the annotations give it one, its resource name (`tasks/{id}`, ...) from the
/// path and `historyLength` (`GetTask`) or `pageSize`/`pageToken` (list configs)
/// from the query, then converted as the gRPC binding converts it.
///
/// Creating a push config takes the annotation's body (the
/// `TaskPushNotificationConfig` alone) or the whole
/// `CreateTaskPushNotificationConfigRequest`, which the 0.3 Python client sends.
fn decode_v0_3(
    routed: &Routed,
    query: Vec<(String, String)>,
    body: Map<String, Value>,
) -> Result<A2aRequest, JsonRpcError> {
    use crate::proto::v0_3::{self as p, Request, pb};
    let int = |key: &str| -> Result<i32, JsonRpcError> {
        query
            .iter()
            .find(|(name, _)| name == key)
            .map_or(Ok(0), |(_, value)| {
                value.parse::<i32>().map_err(|_| {
                    JsonRpcError::invalid_params().with_message(format!(
                        "Invalid params: the query parameter `{key}` must be an integer, not `{value}`"
                    ))
                })
            })
    };
    let task = |id: &str| p::task_name(&id.into());
    let listing = routed.method == v1::method::LIST_TASK_PUSH_NOTIFICATION_CONFIGS;
    let deleting = routed.method == v1::method::DELETE_TASK_PUSH_NOTIFICATION_CONFIG;
    let request = match &routed.resource {
        Resource::Send => Request::SendMessage(from_body(body, "SendMessageRequest")?),
        Resource::Stream => Request::SendStreamingMessage(from_body(body, "SendMessageRequest")?),
        Resource::Task(id) => Request::GetTask(pb::GetTaskRequest {
            name: task(id),
            history_length: int("historyLength")?,
        }),
        Resource::Cancel(id) => Request::CancelTask(pb::CancelTaskRequest { name: task(id) }),
        Resource::Subscribe(id) => {
            Request::TaskSubscription(pb::TaskSubscriptionRequest { name: task(id) })
        }
        Resource::Configs(id) if listing => {
            let page_token = query
                .iter()
                .find(|(name, _)| name == "pageToken")
                .map(|(_, value)| value.clone())
                .unwrap_or_default();
            Request::ListTaskPushNotificationConfig(pb::ListTaskPushNotificationConfigRequest {
                parent: task(id),
                page_size: int("pageSize")?,
                page_token,
            })
        }
        Resource::Configs(id) => {
            let mut create: pb::CreateTaskPushNotificationConfigRequest =
                if body.contains_key("config") {
                    from_body(body, "CreateTaskPushNotificationConfigRequest")?
                } else {
                    pb::CreateTaskPushNotificationConfigRequest {
                        config: Some(from_body(body, "TaskPushNotificationConfig")?),
                        ..Default::default()
                    }
                };
            create.parent = task(id);
            Request::CreateTaskPushNotificationConfig(create)
        }
        Resource::Config(task_id, id) => {
            let name = p::push_config_name(&task_id.as_str().into(), id);
            if deleting {
                Request::DeleteTaskPushNotificationConfig(
                    pb::DeleteTaskPushNotificationConfigRequest { name },
                )
            } else {
                Request::GetTaskPushNotificationConfig(pb::GetTaskPushNotificationConfigRequest {
                    name,
                })
            }
        }
        Resource::ExtendedCard => return Ok(A2aRequest::GetAuthenticatedExtendedCard),
        Resource::Tasks => {
            return Err(JsonRpcError::unsupported_operation()
                .with_message("A2A 0.3 has no ListTasks; call GET /tasks in 1.0"));
        }
    };
    Ok(p::request(request)?)
}

/// A body read as the ProtoJSON of the 0.3 message `what`.
fn from_body<T: serde::de::DeserializeOwned>(
    body: Map<String, Value>,
    what: &str,
) -> Result<T, JsonRpcError> {
    serde_path_to_error::deserialize(Value::Object(body)).map_err(|error| {
        let path = error.path().to_string();
        JsonRpcError::invalid_params().with_message(format!(
            "Invalid params: the body is not a {what}: {} (at `{path}`)",
            error.inner()
        ))
    })
}

/// A unary result as the body of a 200 answer: in 1.0 its 1.0 form as
/// `application/a2a+json`; in 0.3 the 0.3 proto's response message as ProtoJSON
/// (`{}` for a delete), as `application/json` as the 0.3 SDK servers send it.
fn success(version: ProtocolVersion, result: A2aResult) -> Response {
    use crate::proto::v0_3::{self as p, Response as R};
    match version {
        ProtocolVersion::V1_0 => json(StatusCode::OK, A2A_JSON, &V1Result::from(result)),
        ProtocolVersion::V0_3 => match p::result(result) {
            Ok(R::Send(body)) => json(StatusCode::OK, "application/json", &body),
            Ok(R::Task(body)) => json(StatusCode::OK, "application/json", &body),
            Ok(R::PushConfig(body)) => json(StatusCode::OK, "application/json", &body),
            Ok(R::PushConfigs(body)) => json(StatusCode::OK, "application/json", &body),
            Ok(R::Card(body)) => json(StatusCode::OK, "application/json", &body),
            Ok(R::Deleted) => json(StatusCode::OK, "application/json", &v1::Empty {}),
            Err(conversion) => {
                tracing::error!(%conversion, "a result has no 0.3 proto form");
                error(
                    version,
                    JsonRpcError::invalid_agent_response().with_message(format!(
                        "the agent's answer cannot be written in A2A 0.3: {conversion}"
                    )),
                )
            }
        },
    }
}

/// One stream item as an SSE event numbered `seq`: each event's `data:` is its
/// `StreamResponse` (1.0's, or the 0.3 proto's as ProtoJSON); an error is the error
/// body the binding gives, after which the stream ends: in 1.0 a `data:` of
/// `{"error": {...}}`, in 0.3 an `error` event of `{code, message, data}` (what the
/// 0.3 JS SDK sends).
fn stream_frame(
    version: ProtocolVersion,
    seq: Option<u64>,
    event: Result<StreamEvent, JsonRpcError>,
) -> Bytes {
    let item = match (version, event) {
        (ProtocolVersion::V1_0, Ok(event)) => {
            sse::json_event(None, &v1::StreamResponse::from(event), seq).map_err(|e| e.to_string())
        }
        (ProtocolVersion::V0_3, Ok(event)) => crate::proto::v0_3::stream_response(event)
            .map_err(|e| e.to_string())
            .and_then(|event| sse::json_event(None, &event, seq).map_err(|e| e.to_string())),
        (_, Err(error)) => sse::json_event(
            error_event(version),
            &error_body(version, None, error).1,
            None,
        )
        .map_err(|e| e.to_string()),
    };
    item.unwrap_or_else(|problem| internal_event(version, &problem))
}

/// The name of an error's event in `version`: 0.3's `error`, 1.0's none.
fn error_event(version: ProtocolVersion) -> Option<&'static str> {
    match version {
        ProtocolVersion::V0_3 => Some("error"),
        ProtocolVersion::V1_0 => None,
    }
}

/// The last event of a stream whose event could not be written.
fn internal_event(version: ProtocolVersion, problem: &str) -> Bytes {
    tracing::error!(problem, "a stream event could not be written");
    let error = JsonRpcError::internal_error()
        .with_message(format!("a stream event could not be written: {problem}"));
    let body = serde_json::to_string(&error_body(version, None, error).1).unwrap_or_default();
    sse::text_event(error_event(version), &body)
}

/// An A2A error as an HTTP+JSON answer, under the status the binding maps its code
/// to ([`binding_status`]).
pub(super) fn error(version: ProtocolVersion, error: JsonRpcError) -> Response {
    let (status, body) = error_body(version, None, error);
    let code = ErrorCodeSent(body.code());
    let mut response = json(status, "application/json", &body);
    response.extensions_mut().insert(code);
    response
}

/// A refusal made before the handler (401, 404, 405, 408, 413) as an HTTP+JSON
/// answer with `status` and the gRPC `code` given, its `ErrorInfo` reason the
/// code's name.
pub(super) fn refusal(
    version: ProtocolVersion,
    status: StatusCode,
    code: RpcCode,
    error: JsonRpcError,
) -> Response {
    let (status, body) = error_body(version, Some((status, code)), error);
    let sent = ErrorCodeSent(body.code());
    let mut response = json(status, "application/json", &body);
    response.extensions_mut().insert(sent);
    response
}

/// HTTP 404 naming what was not found.
fn not_found(version: ProtocolVersion, detail: impl std::fmt::Display) -> Response {
    refusal(
        version,
        StatusCode::NOT_FOUND,
        RpcCode::NotFound,
        reply::http_problem(StatusCode::NOT_FOUND, detail),
    )
}

/// HTTP 405 with `Allow` naming the methods the resource takes.
fn wrong_method(
    version: ProtocolVersion,
    resource: &Resource,
    method: &Method,
    path: &str,
) -> Response {
    let allowed: Vec<&str> = resource.allowed().iter().map(Method::as_str).collect();
    let error = reply::http_problem(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "`{method} {path}` is not served: this resource takes {}",
            allowed.join(", ")
        ),
    )
    .with_data(json!({ "allow": allowed.join(", ") }));
    let mut response = refusal(
        version,
        StatusCode::METHOD_NOT_ALLOWED,
        RpcCode::Unimplemented,
        error,
    );
    if let Ok(value) = HeaderValue::from_str(&allowed.join(", ")) {
        response.headers_mut().insert(ALLOW, value);
    }
    response
}

/// The body of an HTTP+JSON error, with its status.
#[derive(Serialize)]
#[serde(untagged)]
enum ErrorBody {
    /// 1.0: a `google.rpc.Status` under `error`.
    V1 { error: Status },
    /// 0.3: the JSON-RPC error object itself (code, message, data), as the 0.3
    /// JS SDK's REST server writes it; the Python one writes `message` alone, which
    /// this carries too.
    V0_3(JsonRpcError),
}

impl ErrorBody {
    /// The A2A (JSON-RPC) code, for the log line: for a 1.0 body the one its
    /// `ErrorInfo` reason names is not kept, so the HTTP status stands in.
    fn code(&self) -> i64 {
        match self {
            Self::V1 { error } => i64::from(error.code),
            Self::V0_3(error) => error.code,
        }
    }
}

/// `google.rpc.Status` as JSON.
#[derive(Serialize)]
struct Status {
    /// The HTTP status (grpc-gateway writes the HTTP status here, and the A2A
    /// SDKs' HTTP+JSON servers do the same).
    code: u16,
    /// The gRPC code's name (`"NOT_FOUND"`).
    status: &'static str,
    message: String,
    /// `google.rpc` details: the `ErrorInfo` (and for bad params a `BadRequest`).
    details: Value,
}

/// `error` as the body of its version, with the HTTP status: `given` for a
/// refusal, else the one [`binding_status`] maps its code to.
fn error_body(
    version: ProtocolVersion,
    given: Option<(StatusCode, RpcCode)>,
    error: JsonRpcError,
) -> (StatusCode, ErrorBody) {
    let (status, code) = given.unwrap_or_else(|| {
        let mapped = binding_status(&error);
        (
            StatusCode::from_u16(mapped.http).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            mapped.code,
        )
    });
    match version {
        ProtocolVersion::V0_3 => (status, ErrorBody::V0_3(error)),
        ProtocolVersion::V1_0 => {
            let error = match given {
                // A refusal's reason is its gRPC code's name, with its data beside it.
                Some(_) => {
                    let mut data = match error.data {
                        Some(Value::Object(members)) => members,
                        Some(other) => Map::from_iter([("data".to_owned(), other)]),
                        None => Map::new(),
                    };
                    data.insert("reason".to_owned(), Value::String(code.name().to_owned()));
                    // Code 0 is no A2A error: the reason comes from the data.
                    v1::to_v1_error(
                        JsonRpcError::new(0, error.message).with_data(Value::Object(data)),
                    )
                }
                None => with_code(error),
            };
            let body = ErrorBody::V1 {
                error: Status {
                    code: status.as_u16(),
                    status: code.name(),
                    message: error.message,
                    details: error.data.unwrap_or_else(|| Value::Array(Vec::new())),
                },
            };
            (status, body)
        }
    }
}

/// `error` in its 1.0 form with its JSON-RPC code in the `ErrorInfo` metadata
/// (`code`), as the gRPC binding carries it: agentyard's own codes (-32010 policy,
/// -32011 busy) have no A2A reason, and a client recovers them from it.
fn with_code(error: JsonRpcError) -> JsonRpcError {
    let code = error.code;
    let mut error = v1::to_v1_error(error);
    if let Some(Value::Array(details)) = error.data.as_mut()
        && let Some(Value::Object(info)) = details
            .iter_mut()
            .find(|detail| detail.get("@type").and_then(Value::as_str) == Some(v1::ERROR_INFO_TYPE))
    {
        let metadata = info
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(metadata) = metadata {
            metadata.insert("code".to_owned(), Value::String(code.to_string()));
        }
    }
    error
}

/// `body` as JSON with `status` and `content_type`.
fn json(status: StatusCode, content_type: &'static str, body: &impl Serialize) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => (
            status,
            [(CONTENT_TYPE, HeaderValue::from_static(content_type))],
            bytes,
        )
            .into_response(),
        Err(error) => {
            tracing::error!(%error, "a response body failed to serialize");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                r#"{"error":{"code":500,"status":"INTERNAL","message":"Internal error"}}"#,
            )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests;
