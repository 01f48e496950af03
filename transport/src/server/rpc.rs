//! The JSON-RPC endpoint: from an HTTP request to a service call and back, unary
//! or as an SSE stream.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use serde_json::{Value, json};
use tracing::{Instrument as _, Span, field};

use super::reply::{self, invalid_request};
use super::{AppState, EXTENSIONS_HEADER, ShutdownSignal, auth, extensions};
use crate::a2a::AgentCard;
use crate::jsonrpc::{A2aCall, A2aRequest, JsonRpcError, JsonRpcResponse, RequestId, method};
use crate::service::{A2aService, CallContext, EventStream, Principal, Reply};

/// `POST /`: JSON-RPC for the default agent.
pub(super) async fn default_agent<S: A2aService>(
    State(state): State<AppState<S>>,
    request: Request,
) -> Response {
    match state.service.default_agent() {
        Some(agent) => handle(state, agent, request).await,
        None => reply::no_default_agent(),
    }
}

/// `POST /agents/{name}`: JSON-RPC for an exposed agent.
pub(super) async fn named_agent<S: A2aService>(
    State(state): State<AppState<S>>,
    Path(agent): Path<String>,
    request: Request,
) -> Response {
    handle(state, agent, request).await
}

async fn handle<S: A2aService>(state: AppState<S>, agent: String, request: Request) -> Response {
    let Some(card) = state.service.card(&agent) else {
        return reply::agent_not_found(&agent);
    };
    let (parts, body) = request.into_parts();
    let log_agent = agent.clone();
    let activated = extensions::activate(&card, extensions::requested(&parts.headers));
    let span = tracing::info_span!(
        "a2a.jsonrpc",
        agent = %agent,
        method = field::Empty,
        rpc_id = field::Empty,
    );
    let echo = activated.join(", ");
    let call = Call {
        shutdown: parts.extensions.get::<ShutdownSignal>().cloned(),
        state,
        agent,
        card,
        activated,
        span: span.clone(),
    };
    let (method, mut response) = call.run(parts, body).instrument(span).await;
    response.extensions_mut().insert(RequestLog {
        agent: log_agent,
        method,
    });
    if !echo.is_empty()
        && let Ok(value) = HeaderValue::from_str(&echo)
    {
        response.headers_mut().insert(EXTENSIONS_HEADER, value);
    }
    response
}

/// One JSON-RPC request to one agent, with what the server knows so far.
struct Call<S> {
    state: AppState<S>,
    agent: String,
    card: AgentCard,
    /// The extensions the request activated.
    activated: Vec<String>,
    /// The request's span; streams carry it past the handler's return.
    span: Span,
    /// Set when running under [`serve`](super::serve): ends streams at shutdown.
    shutdown: Option<ShutdownSignal>,
}

impl<S: A2aService> Call<S> {
    /// Runs the call; also returns its JSON-RPC method, once it is known, for the
    /// request's log line.
    async fn run(self, parts: Parts, body: Body) -> (Option<&'static str>, Response) {
        let config = &self.state.config;
        let principal = match auth::authenticate(&self.card, config.auth(), &parts.headers) {
            Ok(principal) => principal,
            Err(rejected) => {
                tracing::debug!(bad_credential = rejected.bad_credential, "unauthenticated");
                return (
                    None,
                    reply::unauthorized(&self.agent, RequestId::Null, &rejected),
                );
            }
        };
        if let Err(detail) = check_content_type(&parts.headers) {
            return (None, unsupported_media_type(&detail));
        }
        let (limit, timeout) = (config.body_limit(), config.request_timeout());
        let body = match read_body(body, &parts.headers, limit, timeout).await {
            Ok(body) => body,
            Err(error) => return (None, error.into_response(limit, timeout)),
        };
        let value: Value = match serde_json::from_slice(&body) {
            Ok(value) => value,
            Err(error) => {
                let error = JsonRpcError::parse_error()
                    .with_message(format!("Invalid JSON payload: {error}"));
                tracing::debug!(code = error.code, message = %error.message, "request rejected");
                return (None, reply::error(RequestId::Null, error));
            }
        };
        // The streaming methods answer every error as a stream, even one in the
        // request itself (bad params, a missing id): a client of `message/stream`
        // reads SSE, and the official Python client turns an `application/json`
        // answer into a content-type exception instead of the error.
        let named = named_method(&value);
        let streaming = named.is_some_and(is_streaming);
        let call = match A2aCall::from_value(value) {
            Ok(call) => call,
            Err(rejected) => {
                let error = &rejected.error;
                tracing::debug!(code = error.code, message = %error.message, "request rejected");
                return (named, answer_error(streaming, rejected.id, rejected.error));
            }
        };
        let method = call.request.method();
        self.span.record("method", method);
        self.span.record("rpc_id", field::display(&call.id));
        if let Err(error) = self.check_call(&call.request) {
            tracing::debug!(code = error.code, message = %error.message, "request rejected");
            return (
                Some(method),
                answer_error(call.request.is_streaming(), call.id, error),
            );
        }
        if matches!(call.request, A2aRequest::GetAuthenticatedExtendedCard) {
            return (
                Some(method),
                self.extended_card(call.id, principal.as_ref()),
            );
        }
        let mut context = CallContext::new(self.agent.clone(), call.id.clone());
        context.principal = principal;
        context.extensions = self.activated.clone();
        context.idempotency_key = parts
            .headers
            .get("idempotency-key")
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        (Some(method), self.dispatch(context, call).await)
    }

    /// What the card demands of every call: required extensions, and the optional
    /// capabilities a method needs.
    fn check_call(&self, request: &A2aRequest) -> Result<(), JsonRpcError> {
        let missing = extensions::missing_required(&self.card, &self.activated);
        if !missing.is_empty() {
            let list = missing
                .iter()
                .map(|uri| format!("`{uri}`"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(invalid_request(format!(
                "agent `{}` requires extension {list}; activate it with the {EXTENSIONS_HEADER} \
                 header",
                self.agent
            ))
            .with_data(json!({ "missingExtensions": missing })));
        }
        let capabilities = &self.card.capabilities;
        if request.is_streaming() && capabilities.streaming != Some(true) {
            return Err(JsonRpcError::unsupported_operation().with_message(format!(
                "agent `{}` does not support streaming (`{}`)",
                self.agent,
                request.method()
            )));
        }
        let push = matches!(
            request,
            A2aRequest::SetTaskPushNotificationConfig(_)
                | A2aRequest::GetTaskPushNotificationConfig(_)
                | A2aRequest::ListTaskPushNotificationConfig(_)
                | A2aRequest::DeleteTaskPushNotificationConfig(_)
        );
        if push && capabilities.push_notifications != Some(true) {
            return Err(
                JsonRpcError::push_notification_not_supported().with_message(format!(
                    "agent `{}` does not support push notifications (`{}`)",
                    self.agent,
                    request.method()
                )),
            );
        }
        Ok(())
    }

    /// `agent/getAuthenticatedExtendedCard`, answered by the server itself.
    fn extended_card(&self, id: RequestId, principal: Option<&Principal>) -> Response {
        let Some(principal) = principal else {
            let rejected = auth::Unauthorized {
                challenges: auth::declared_challenges(&self.card),
                bad_credential: false,
            };
            tracing::debug!("extended card asked for without credentials");
            return reply::unauthorized(&self.agent, id, &rejected);
        };
        match self.state.service.extended_card(&self.agent, principal) {
            Some(card) => match serde_json::to_value(card) {
                Ok(card) => reply::success(id, card),
                Err(error) => {
                    tracing::error!(%error, "extended card failed to serialize");
                    reply::error(id, JsonRpcError::internal_error())
                }
            },
            None => reply::error(
                id,
                JsonRpcError::authenticated_extended_card_not_configured().with_message(format!(
                    "agent `{}` has no authenticated extended card",
                    self.agent
                )),
            ),
        }
    }

    /// Hands the call to the service and frames its reply.
    async fn dispatch(self, context: CallContext, call: A2aCall) -> Response {
        let timeout = self.state.config.request_timeout();
        let streaming = call.request.is_streaming();
        let method = call.request.method();
        let id = call.id;
        let reply =
            tokio::time::timeout(timeout, self.state.service.call(context, call.request)).await;
        match reply {
            Err(_elapsed) => {
                tracing::warn!(?timeout, "the agent did not answer in time");
                answer_error(
                    streaming,
                    id,
                    JsonRpcError::internal_error().with_message(format!(
                        "agent `{}` did not answer `{method}` within {timeout:?}",
                        self.agent
                    )),
                )
            }
            Ok(Err(error)) => {
                tracing::debug!(
                    code = error.code,
                    message = %error.message,
                    "the service answered with an error"
                );
                answer_error(streaming, id, error)
            }
            Ok(Ok(Reply::Result(result))) if !streaming => reply::success(id, result),
            Ok(Ok(Reply::Stream(events))) if streaming => {
                let keep_alive = self.state.config.sse_keep_alive();
                sse(events, id, self.span, keep_alive, self.shutdown)
            }
            Ok(Ok(reply)) => {
                tracing::error!(
                    ?reply,
                    streaming,
                    "the service answered with the wrong kind of reply"
                );
                let expected = if streaming {
                    "a stream"
                } else {
                    "a single result"
                };
                answer_error(
                    streaming,
                    id,
                    JsonRpcError::internal_error().with_message(format!(
                        "agent `{}` answered `{method}` with the wrong kind of reply \
                         (expected {expected})",
                        self.agent
                    )),
                )
            }
        }
    }
}

/// What the request's log line says about a JSON-RPC call, handed to the trace
/// layer in the response's extensions.
#[derive(Clone, Debug)]
pub(super) struct RequestLog {
    pub(super) agent: String,
    pub(super) method: Option<&'static str>,
}

/// The A2A method a request body names, read before the request is checked, so
/// that the errors of a streaming method are answered as a stream too, and the log
/// line names the method of a request that was refused.
fn named_method(value: &Value) -> Option<&'static str> {
    let named = value.get("method").and_then(Value::as_str)?;
    method::ALL.into_iter().find(|known| *known == named)
}

fn is_streaming(name: &str) -> bool {
    matches!(
        name,
        method::SEND_STREAMING_MESSAGE | method::TASK_RESUBSCRIPTION
    )
}

/// A JSON-RPC error: as JSON, or for a streaming method as an SSE stream of that
/// one error, which then closes (what the official SDK servers send).
fn answer_error(streaming: bool, id: RequestId, error: JsonRpcError) -> Response {
    if !streaming {
        return reply::error(id, error);
    }
    let event = frame(&JsonRpcResponse::<Value>::error(id, error));
    Sse::new(futures::stream::once(std::future::ready(
        Ok::<_, Infallible>(event),
    )))
    .into_response()
}

/// Accepts `application/json` and `+json` media types, with any parameters.
///
/// # Errors
///
/// What is wrong with the content type, for the 415 response.
fn check_content_type(headers: &HeaderMap) -> Result<(), String> {
    let Some(value) = headers.get(CONTENT_TYPE) else {
        return Err(
            "the request has no Content-Type; send the JSON-RPC request as application/json"
                .to_owned(),
        );
    };
    let essence = value
        .to_str()
        .ok()
        .and_then(|value| value.split(';').next())
        .map(|essence| essence.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
    {
        Ok(())
    } else {
        Err(format!(
            "Content-Type `{}` is not supported; send the JSON-RPC request as application/json",
            String::from_utf8_lossy(value.as_bytes())
        ))
    }
}

fn unsupported_media_type(detail: &str) -> Response {
    tracing::debug!(detail, "unsupported media type");
    reply::http_error(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        RequestId::Null,
        reply::http_problem(StatusCode::UNSUPPORTED_MEDIA_TYPE, detail),
    )
}

/// Why a request body could not be read.
#[derive(Debug)]
enum BodyError {
    /// Longer than the limit.
    TooLarge,
    /// Did not arrive within the request timeout.
    TooSlow,
    /// The connection failed while reading.
    Read(axum::BoxError),
}

impl BodyError {
    fn into_response(self, limit: usize, timeout: Duration) -> Response {
        tracing::debug!(error = ?self, "the request body was not read");
        let (status, error) = match self {
            Self::TooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                reply::http_problem(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the request body exceeds the limit of {limit} bytes"),
                )
                .with_data(json!({ "limit": limit })),
            ),
            Self::TooSlow => (
                StatusCode::REQUEST_TIMEOUT,
                reply::http_problem(
                    StatusCode::REQUEST_TIMEOUT,
                    format!("the request body did not arrive within {timeout:?}"),
                ),
            ),
            Self::Read(error) => (
                StatusCode::BAD_REQUEST,
                reply::http_problem(
                    StatusCode::BAD_REQUEST,
                    format!("the request body could not be read: {error}"),
                ),
            ),
        };
        reply::http_error(status, RequestId::Null, error)
    }
}

/// Reads the whole body, at most `limit` bytes and within `timeout`.
async fn read_body(
    body: Body,
    headers: &HeaderMap,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, BodyError> {
    // A declared length over the limit is refused before reading anything.
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(BodyError::TooLarge);
    }
    match tokio::time::timeout(timeout, Limited::new(body, limit).collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) if error.downcast_ref::<LengthLimitError>().is_some() => {
            Err(BodyError::TooLarge)
        }
        Ok(Err(error)) => Err(BodyError::Read(error)),
        Err(_elapsed) => Err(BodyError::TooSlow),
    }
}

/// Frames a service's event stream as SSE: one whole JSON-RPC response per event,
/// ending after an error, after a final event, when the service's stream ends, or
/// when the server shuts down.
fn sse(
    events: EventStream,
    id: RequestId,
    span: Span,
    keep_alive: Duration,
    shutdown: Option<ShutdownSignal>,
) -> Response {
    let frames = futures::stream::unfold(Some(events), move |events| {
        let id = id.clone();
        let span = span.clone();
        async move {
            // `None` means the stream already ended; dropping the service's stream
            // there (rather than when the connection closes) releases it at once.
            let mut events = events?;
            let (response, more) = match events.next().await? {
                Ok(event) => {
                    let last = event.is_final();
                    (JsonRpcResponse::success(id, event), !last)
                }
                Err(error) => {
                    tracing::debug!(
                        code = error.code,
                        message = %error.message,
                        "stream ended by an error"
                    );
                    (JsonRpcResponse::error(id, error), false)
                }
            };
            if !more {
                tracing::debug!("stream closed");
            }
            Some((
                Ok::<_, Infallible>(frame(&response)),
                more.then_some(events),
            ))
        }
        .instrument(span)
    });
    let stop = async move {
        match shutdown {
            Some(ShutdownSignal(token)) => token.cancelled_owned().await,
            None => std::future::pending().await,
        }
    };
    Sse::new(frames.take_until(stop))
        .keep_alive(KeepAlive::new().interval(keep_alive))
        .into_response()
}

/// One SSE event whose data is `response` as one line of JSON.
fn frame<T: serde::Serialize>(response: &JsonRpcResponse<T>) -> Event {
    match serde_json::to_string(response) {
        Ok(json) => Event::default().data(json),
        Err(error) => {
            tracing::error!(%error, "a stream event failed to serialize");
            let fallback = JsonRpcResponse::<Value>::error(
                response.id().clone(),
                JsonRpcError::internal_error(),
            );
            Event::default().data(serde_json::to_string(&fallback).unwrap_or_default())
        }
    }
}
