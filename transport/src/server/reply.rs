//! Building HTTP responses: JSON-RPC bodies, and the refusals every binding makes
//! before a call reaches its handler, in that binding's error form.

use axum::http::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Value, json};

use super::auth::{Challenge, Unauthorized, quote};
use super::rest;
use crate::a2a::v1::{ProtocolVersion, RpcCode};
use crate::jsonrpc::{JsonRpcError, JsonRpcResponse, RequestId};

/// The binding a request came in by, which decides how a refusal made before its
/// handler (401, 413, 415, ...) is written: a JSON-RPC error response, or an
/// HTTP+JSON error body of the path's protocol version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Binding {
    /// JSON-RPC: the version is known once the body names its method.
    JsonRpc,
    /// HTTP+JSON: the path names the version (`/v1/...` is 0.3).
    Rest(ProtocolVersion),
}

/// A refusal of `binding` with HTTP status `status`: the JSON-RPC error response
/// (id `null`), or the HTTP+JSON error body with gRPC code `code`.
pub(super) fn refusal(
    binding: Binding,
    status: StatusCode,
    code: RpcCode,
    error: JsonRpcError,
) -> Response {
    match binding {
        Binding::JsonRpc => http_error(status, RequestId::Null, error),
        Binding::Rest(version) => rest::refusal(version, status, code, error),
    }
}

/// Room for the body of most answers from the start: `serde_json::to_vec` starts at
/// 128 bytes and doubles, which took four allocations and three copies for a task.
const BODY_CAPACITY: usize = 1024;

/// A body serialized as JSON with status `status`.
pub(super) fn json_body(status: StatusCode, body: &impl Serialize) -> Response {
    let mut bytes = Vec::with_capacity(BODY_CAPACITY);
    match serde_json::to_writer(&mut bytes, body) {
        Ok(()) => (
            status,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            bytes,
        )
            .into_response(),
        Err(error) => {
            // Only a map with non-string keys fails to serialize, which no A2A type has.
            tracing::error!(%error, "a response body failed to serialize");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}"#,
            )
                .into_response()
        }
    }
}

/// A JSON-RPC success response, HTTP 200.
pub(super) fn success(id: RequestId, result: &impl Serialize) -> Response {
    json_body(StatusCode::OK, &JsonRpcResponse::success(id, result))
}

/// A JSON-RPC error response, HTTP 200 as JSON-RPC over HTTP expects.
pub(super) fn error(id: RequestId, error: JsonRpcError) -> Response {
    http_error(StatusCode::OK, id, error)
}

/// A JSON-RPC error response with an HTTP status of its own.
pub(super) fn http_error(status: StatusCode, id: RequestId, error: JsonRpcError) -> Response {
    let code = ErrorCodeSent(error.code);
    let mut response = json_body(status, &JsonRpcResponse::<Value>::error(id, error));
    response.extensions_mut().insert(code);
    response
}

/// The code of the JSON-RPC error a response carries, for the request's log line.
#[derive(Clone, Copy, Debug)]
pub(super) struct ErrorCodeSent(pub(super) i64);

/// -32600 with `detail` appended to the standard message.
pub(super) fn invalid_request(detail: impl std::fmt::Display) -> JsonRpcError {
    let error = JsonRpcError::invalid_request();
    let message = format!("{}: {detail}", error.message);
    error.with_message(message)
}

/// -32600 for a request refused at the HTTP level, its message led by the status's
/// own words (`Not Found: ...`, `Payload Too Large: ...`), so that each refusal
/// names its cause rather than reading as a payload validation error.
pub(super) fn http_problem(status: StatusCode, detail: impl std::fmt::Display) -> JsonRpcError {
    let reason = status.canonical_reason().unwrap_or("HTTP error");
    JsonRpcError::invalid_request().with_message(format!("{reason}: {detail}"))
}

/// HTTP 404 for an agent nobody may reach from outside.
pub(super) fn agent_not_found(agent: &str) -> Response {
    not_found(format!(
        "no agent `{agent}` is served here; GET /agents lists the agents"
    ))
}

/// HTTP 404 for the root routes when no default agent is configured.
pub(super) fn no_default_agent() -> Response {
    not_found("this server has no default agent; agents are at /agents/{name}")
}

/// HTTP 400 for a JSON-RPC path whose agent name is not UTF-8 once percent-decoded.
pub(super) fn agent_name_not_utf8() -> Response {
    http_error(
        StatusCode::BAD_REQUEST,
        RequestId::Null,
        http_problem(
            StatusCode::BAD_REQUEST,
            "the agent name in the path is not UTF-8 once percent-decoded",
        ),
    )
}

/// HTTP 404 with a JSON-RPC error body naming what was not found.
pub(super) fn not_found(detail: impl std::fmt::Display) -> Response {
    http_error(
        StatusCode::NOT_FOUND,
        RequestId::Null,
        http_problem(StatusCode::NOT_FOUND, detail),
    )
}

/// HTTP 401 with a `WWW-Authenticate` challenge for every acceptable scheme, its
/// body in `binding`'s error form.
pub(super) fn unauthorized(
    binding: Binding,
    agent: &str,
    id: RequestId,
    rejected: &Unauthorized,
) -> Response {
    let detail = rejected.detail(agent);
    let schemes: Vec<&str> = rejected.challenges.iter().map(Challenge::scheme).collect();
    let error =
        http_problem(StatusCode::UNAUTHORIZED, detail).with_data(json!({ "schemes": schemes }));
    let mut response = match binding {
        Binding::JsonRpc => http_error(StatusCode::UNAUTHORIZED, id, error),
        Binding::Rest(version) => rest::refusal(
            version,
            StatusCode::UNAUTHORIZED,
            RpcCode::Unauthenticated,
            error,
        ),
    };
    let headers = response.headers_mut();
    if rejected.challenges.is_empty() {
        // RFC 9110 requires at least one challenge on a 401.
        if let Ok(value) = HeaderValue::from_str(&format!("Bearer realm={}", quote(agent))) {
            headers.append(WWW_AUTHENTICATE, value);
        }
    }
    for challenge in &rejected.challenges {
        if let Ok(value) = HeaderValue::from_str(&challenge.header_value(agent)) {
            headers.append(WWW_AUTHENTICATE, value);
        }
    }
    response
}
