//! The client's HTTP+JSON (REST) path: each call as the resource the protos'
//! `google.api.http` annotations give it, under the chosen interface's URL, and
//! its answer (or its `google.rpc.Status` error) read back into what the JSON-RPC
//! path returns, so callers see the same results and the same
//! [`ClientError::JsonRpc`] whichever binding carried the call.
//!
//! 1.0 answers are the same JSON a JSON-RPC 1.0 call's `result` holds and are
//! handed on as they are; 0.3 answers are the 0.3 proto's messages as ProtoJSON,
//! converted through [`crate::proto::v0_3`] into the internal model and handed on
//! in its (0.3 JSON-RPC) form.

use eventsource_stream::{EventStreamError, Eventsource as _};
use futures::stream::StreamExt as _;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::Method;
use reqwest::header::ACCEPT;
use serde_json::{Map, Value};

use super::limit::{self, Limited};
use super::{A2aClient, A2aStream, ClientError, IDEMPOTENCY_HEADER, echoed, media_type, retry};
use crate::a2a::v1::{self, ERROR_INFO_TYPE, ProtocolVersion, error_reason};
use crate::a2a::{StreamEvent, v1::ConversionError};
use crate::jsonrpc::{A2aRequest, JsonRpcError};
use crate::proto::v0_3::{self as p, pb};
use crate::service::A2aResult;

/// What a path segment may hold unescaped: RFC 3986's unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// One HTTP+JSON request: its method, its path under the interface URL, its query
/// and its body.
#[derive(Debug)]
struct RestCall {
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    body: Option<Value>,
    /// What the answer is, to read a 0.3 answer back.
    kind: Kind,
}

/// The kind of answer a call gets.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Send,
    Task,
    PushConfig,
    PushConfigs,
    Deleted,
    Card,
    /// `ListTasks` (1.0 only) and the streams: handed on as sent.
    AsSent,
}

impl A2aClient {
    /// A unary call over HTTP+JSON: the answer in the form [`A2aClient::call`]
    /// expects of the client's version, and the activated extensions.
    pub(super) async fn rest_exchange(
        &self,
        request: A2aRequest,
        key: Option<String>,
        safe: bool,
    ) -> Result<(Value, Vec<String>), ClientError> {
        let call = self.rest_call(request)?;
        let (headers, bytes) = self
            .retrying(safe, || async {
                let mut builder = self.rest_request(&call).header(ACCEPT, "application/json");
                if let Some(key) = &key {
                    builder = builder.header(IDEMPOTENCY_HEADER, key);
                }
                builder = self.extra_headers(builder);
                if let Some(timeout) = self.options.timeout {
                    builder = builder.timeout(timeout);
                }
                let response = self.rest_checked(builder.send().await?).await?;
                let headers = response.headers().clone();
                let bytes = limit::read(response, self.options.response_limit_or_default()).await?;
                Ok((headers, bytes))
            })
            .await?;
        let extensions = echoed(&headers, self.version);
        let what = format!("HTTP+JSON answer to `{} {}`", call.method, call.path);
        let value: Value = if bytes.is_empty() {
            Value::Object(Map::new())
        } else {
            serde_json::from_slice(&bytes).map_err(|source| ClientError::Decode {
                what: what.clone(),
                source,
            })?
        };
        let value = match self.version {
            ProtocolVersion::V1_0 => value,
            ProtocolVersion::V0_3 => from_v0_3(call.kind, value, &what)?,
        };
        Ok((value, extensions))
    }

    /// A streaming call over HTTP+JSON: SSE whose every `data:` is a bare
    /// `StreamResponse`; the stream ends after a final event or an error event.
    pub(super) async fn rest_stream(
        &self,
        request: A2aRequest,
        key: Option<String>,
        safe: bool,
    ) -> Result<A2aStream, ClientError> {
        let call = self.rest_call(request)?;
        let response = self
            .retrying(safe, || async {
                let mut builder = self.rest_request(&call).header(ACCEPT, "text/event-stream");
                if let Some(key) = &key {
                    builder = builder.header(IDEMPOTENCY_HEADER, key);
                }
                builder = self.extra_headers(builder);
                self.rest_checked(builder.send().await?).await
            })
            .await?;
        let extensions = echoed(response.headers(), self.version);
        let content_type = media_type(response.headers());
        if content_type != "text/event-stream" {
            return Err(ClientError::Protocol(format!(
                "`{} {}` was answered with content type `{content_type}`, not text/event-stream",
                call.method, call.path
            )));
        }
        let version = self.version;
        let url = response.url().to_string();
        let limit = self.options.response_limit_or_default();
        let sse = limit::events(response.bytes_stream(), limit)
            .eventsource()
            .boxed();
        let events = futures::stream::unfold(Some((sse, url)), move |state| async move {
            let (mut sse, url) = state?;
            loop {
                let event = match sse.next().await? {
                    Ok(event) => event,
                    Err(EventStreamError::Transport(Limited::Inner(error))) => {
                        return Some((Err(ClientError::Transport(error)), None));
                    }
                    Err(EventStreamError::Transport(Limited::Over(limit))) => {
                        return Some((Err(ClientError::TooLarge { url, limit }), None));
                    }
                    Err(error) => {
                        let error = ClientError::Protocol(format!("malformed SSE stream: {error}"));
                        return Some((Err(error), None));
                    }
                };
                if event.data.is_empty() {
                    continue;
                }
                return Some(match stream_event(version, &event.event, &event.data) {
                    Ok(event) if event.is_final() => (Ok(event), None),
                    Ok(event) => (Ok(event), Some((sse, url))),
                    Err(error) => (Err(error), None),
                });
            }
        })
        .boxed();
        Ok(A2aStream { events, extensions })
    }

    /// A request for `call` under the interface URL, with the version header,
    /// extensions and credentials every call carries.
    fn rest_request(&self, call: &RestCall) -> reqwest::RequestBuilder {
        let mut url = self.endpoint.clone();
        let path = format!("{}/{}", url.path().trim_end_matches('/'), call.path);
        url.set_path(&path);
        url.set_query(None);
        if !call.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&call.query);
        }
        let mut builder = self.http.request(call.method.clone(), url);
        if let Some(body) = &call.body {
            let bytes = serde_json::to_vec(body).unwrap_or_default();
            let media = match self.version {
                ProtocolVersion::V1_0 => crate::server::A2A_JSON,
                ProtocolVersion::V0_3 => "application/json",
            };
            builder = builder
                .header(reqwest::header::CONTENT_TYPE, media)
                .body(bytes);
        }
        self.decorate(builder)
    }

    /// The response if its status is a success; otherwise the error its body
    /// carries: [`ClientError::JsonRpc`] for an A2A error (its code recovered from
    /// the `ErrorInfo` reason in 1.0, read directly in 0.3), [`ClientError::Http`]
    /// for a refusal before the call (401, an agent not served, 413, ...), as the
    /// JSON-RPC path reports them.
    async fn rest_checked(
        &self,
        response: reqwest::Response,
    ) -> Result<reqwest::Response, ClientError> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let url = response.url().to_string();
        let retry_after_secs = retry::retry_after(response.headers());
        let body = limit::error_body(response).await;
        Err(error_of(self.version, status, url, retry_after_secs, &body))
    }

    /// The resource, query and body of `request` in the client's version.
    fn rest_call(&self, request: A2aRequest) -> Result<RestCall, ClientError> {
        match self.version {
            ProtocolVersion::V1_0 => Ok(v1_call(request, &self.tenant)),
            ProtocolVersion::V0_3 => v0_3_call(request),
        }
    }
}

/// A path segment, escaped.
fn segment(text: &str) -> String {
    utf8_percent_encode(text, SEGMENT).to_string()
}

/// The 1.0 resource of a call: the path from its ids (and the interface's tenant),
/// the rest of its params as the body of a `POST` or the query of a `GET`.
fn v1_call(request: A2aRequest, tenant: &str) -> RestCall {
    let kind = match &request {
        A2aRequest::SendMessage(_) => Kind::Send,
        A2aRequest::GetTask(_) | A2aRequest::CancelTask(_) => Kind::Task,
        A2aRequest::SetTaskPushNotificationConfig(_)
        | A2aRequest::GetTaskPushNotificationConfig(_) => Kind::PushConfig,
        A2aRequest::ListTaskPushNotificationConfig(_) => Kind::PushConfigs,
        A2aRequest::DeleteTaskPushNotificationConfig(_) => Kind::Deleted,
        A2aRequest::GetAuthenticatedExtendedCard => Kind::Card,
        A2aRequest::SendStreamingMessage(_)
        | A2aRequest::TaskResubscription(_)
        | A2aRequest::ListTasks(_) => Kind::AsSent,
    };
    let request = v1::Request::from(request);
    let mut params = match serde_json::to_value(&request) {
        Ok(Value::Object(members)) => members,
        _ => Map::new(),
    };
    params.remove("tenant");
    let mut take = |key: &str| match params.remove(key) {
        Some(Value::String(text)) => segment(&text),
        _ => String::new(),
    };
    let (method, path) = match &request {
        v1::Request::SendMessage(_) => (Method::POST, "message:send".to_owned()),
        v1::Request::SendStreamingMessage(_) => (Method::POST, "message:stream".to_owned()),
        v1::Request::GetTask(_) => (Method::GET, format!("tasks/{}", take("id"))),
        v1::Request::ListTasks(_) => (Method::GET, "tasks".to_owned()),
        v1::Request::CancelTask(_) => (Method::POST, format!("tasks/{}:cancel", take("id"))),
        v1::Request::SubscribeToTask(_) => (Method::GET, format!("tasks/{}:subscribe", take("id"))),
        v1::Request::CreateTaskPushNotificationConfig(_) => (
            Method::POST,
            format!("tasks/{}/pushNotificationConfigs", take("taskId")),
        ),
        v1::Request::GetTaskPushNotificationConfig(_) => {
            let task = take("taskId");
            (
                Method::GET,
                format!("tasks/{task}/pushNotificationConfigs/{}", take("id")),
            )
        }
        v1::Request::ListTaskPushNotificationConfigs(_) => (
            Method::GET,
            format!("tasks/{}/pushNotificationConfigs", take("taskId")),
        ),
        v1::Request::DeleteTaskPushNotificationConfig(_) => {
            let task = take("taskId");
            (
                Method::DELETE,
                format!("tasks/{task}/pushNotificationConfigs/{}", take("id")),
            )
        }
        v1::Request::GetExtendedAgentCard(_) => (Method::GET, "extendedAgentCard".to_owned()),
    };
    let path = if tenant.is_empty() {
        path
    } else {
        format!("{}/{path}", segment(tenant))
    };
    let (query, body) = if method == Method::POST {
        (Vec::new(), Some(Value::Object(params)))
    } else {
        let query = params
            .into_iter()
            .filter_map(|(key, value)| match value {
                Value::String(text) => Some((key, text)),
                Value::Number(number) => Some((key, number.to_string())),
                Value::Bool(flag) => Some((key, flag.to_string())),
                _ => None,
            })
            .collect();
        (query, None)
    };
    RestCall {
        method,
        path,
        query,
        body,
        kind,
    }
}

/// The 0.3 resource of a call, under `v1/`, its body the 0.3 proto's request
/// message (for creating a push config, the whole
/// `CreateTaskPushNotificationConfigRequest`, as the 0.3 SDK clients send it).
fn v0_3_call(request: A2aRequest) -> Result<RestCall, ClientError> {
    let unsupported =
        |what: &str| ClientError::Protocol(format!("{what} has no A2A 0.3 HTTP+JSON resource"));
    let history = match &request {
        A2aRequest::GetTask(params) => params.history_length,
        _ => None,
    };
    if matches!(request, A2aRequest::ListTasks(_)) {
        return Err(unsupported("`ListTasks`"));
    }
    if matches!(request, A2aRequest::GetAuthenticatedExtendedCard) {
        return Ok(RestCall {
            method: Method::GET,
            path: "v1/card".to_owned(),
            query: Vec::new(),
            body: None,
            kind: Kind::Card,
        });
    }
    let converted = p::to_request(request).map_err(|error| {
        ClientError::Protocol(format!("the request has no A2A 0.3 proto form: {error}"))
    })?;
    let task = |name: &str| -> Result<String, ClientError> {
        p::parse_task_name("name", name)
            .map(|id| segment(id.as_str()))
            .map_err(|error| ClientError::Protocol(error.to_string()))
    };
    let config = |name: &str| -> Result<String, ClientError> {
        match p::parse_push_config_name("name", name) {
            Ok((task, Some(config))) => Ok(format!(
                "{}/pushNotificationConfigs/{}",
                segment(task.as_str()),
                segment(&config)
            )),
            Ok((_, None)) => Err(ClientError::Protocol(
                "A2A 0.3 over HTTP+JSON names a push config by its id; give one".to_owned(),
            )),
            Err(error) => Err(ClientError::Protocol(error.to_string())),
        }
    };
    let json = |value: Result<Value, serde_json::Error>| {
        value.map_err(|source| ClientError::Decode {
            what: "0.3 request message".to_owned(),
            source,
        })
    };
    let (method, path, body, kind) = match converted {
        p::Request::SendMessage(r) => (
            Method::POST,
            "v1/message:send".to_owned(),
            Some(json(serde_json::to_value(r))?),
            Kind::Send,
        ),
        p::Request::SendStreamingMessage(r) => (
            Method::POST,
            "v1/message:stream".to_owned(),
            Some(json(serde_json::to_value(r))?),
            Kind::AsSent,
        ),
        p::Request::GetTask(r) => (
            Method::GET,
            format!("v1/tasks/{}", task(&r.name)?),
            None,
            Kind::Task,
        ),
        p::Request::CancelTask(r) => (
            Method::POST,
            format!("v1/tasks/{}:cancel", task(&r.name)?),
            Some(json(serde_json::to_value(r))?),
            Kind::Task,
        ),
        p::Request::TaskSubscription(r) => (
            Method::GET,
            format!("v1/tasks/{}:subscribe", task(&r.name)?),
            None,
            Kind::AsSent,
        ),
        p::Request::CreateTaskPushNotificationConfig(r) => (
            Method::POST,
            format!("v1/tasks/{}/pushNotificationConfigs", task(&r.parent)?),
            Some(json(serde_json::to_value(r))?),
            Kind::PushConfig,
        ),
        p::Request::GetTaskPushNotificationConfig(r) => (
            Method::GET,
            format!("v1/tasks/{}", config(&r.name)?),
            None,
            Kind::PushConfig,
        ),
        p::Request::ListTaskPushNotificationConfig(r) => (
            Method::GET,
            format!("v1/tasks/{}/pushNotificationConfigs", task(&r.parent)?),
            None,
            Kind::PushConfigs,
        ),
        p::Request::DeleteTaskPushNotificationConfig(r) => (
            Method::DELETE,
            format!("v1/tasks/{}", config(&r.name)?),
            None,
            Kind::Deleted,
        ),
    };
    let query = history
        .map(|n| vec![("historyLength".to_owned(), n.to_string())])
        .unwrap_or_default();
    Ok(RestCall {
        method,
        path,
        query,
        body,
        kind,
    })
}

/// A 0.3 answer (a proto message as ProtoJSON) in the internal model's JSON, which
/// a 0.3 JSON-RPC call's `result` holds.
fn from_v0_3(kind: Kind, value: Value, what: &str) -> Result<Value, ClientError> {
    fn read<T: serde::de::DeserializeOwned>(value: Value, what: &str) -> Result<T, ClientError> {
        serde_json::from_value(value).map_err(|source| ClientError::Decode {
            what: what.to_owned(),
            source,
        })
    }
    let response = match kind {
        Kind::Send => p::Response::Send(read::<pb::SendMessageResponse>(value, what)?),
        Kind::Task => p::Response::Task(read::<pb::Task>(value, what)?),
        Kind::PushConfig => {
            p::Response::PushConfig(read::<pb::TaskPushNotificationConfig>(value, what)?)
        }
        Kind::PushConfigs => p::Response::PushConfigs(read::<
            pb::ListTaskPushNotificationConfigResponse,
        >(value, what)?),
        Kind::Deleted => return Ok(Value::Null),
        // A card is read by the caller from whatever shape it has.
        Kind::Card | Kind::AsSent => return Ok(value),
    };
    let result: A2aResult = p::from_response(response).map_err(|error| unfit(what, &error))?;
    serde_json::to_value(result).map_err(|source| ClientError::Decode {
        what: what.to_owned(),
        source,
    })
}

fn unfit(what: &str, error: &ConversionError) -> ClientError {
    ClientError::Protocol(format!(
        "the {what} does not fit the internal model: {error}"
    ))
}

/// One SSE event of an HTTP+JSON stream: a `StreamResponse` of the version, or the
/// error that ends the stream (1.0: a `data:` holding `{"error": {...}}`; 0.3: an
/// `error` event).
fn stream_event(
    version: ProtocolVersion,
    name: &str,
    data: &str,
) -> Result<StreamEvent, ClientError> {
    let decode = |source| ClientError::Decode {
        what: "HTTP+JSON stream event".to_owned(),
        source,
    };
    let value: Value = serde_json::from_str(data).map_err(decode)?;
    if name == "error" || value.get("error").is_some() {
        return Err(match error_from_body(version, &value) {
            Some(error) => ClientError::JsonRpc(error.0),
            None => ClientError::Protocol(format!("the stream ended with an error: {data}")),
        });
    }
    match version {
        ProtocolVersion::V1_0 => {
            let event: v1::StreamResponse = serde_json::from_value(value).map_err(decode)?;
            StreamEvent::try_from(event).map_err(|error| unfit("stream event", &error))
        }
        ProtocolVersion::V0_3 => {
            let event: pb::StreamResponse = serde_json::from_value(value).map_err(decode)?;
            p::from_stream_response(event).map_err(|error| unfit("stream event", &error))
        }
    }
}

/// The A2A error of an HTTP+JSON error body, and whether its code was recovered
/// (1.0: from the `ErrorInfo` reason; 0.3: the body's own `code`).
fn error_from_body(version: ProtocolVersion, body: &Value) -> Option<(JsonRpcError, bool)> {
    match version {
        ProtocolVersion::V0_3 => {
            let error: JsonRpcError = serde_json::from_value(body.clone()).ok()?;
            Some((error, true))
        }
        ProtocolVersion::V1_0 => {
            let status = body.get("error")?;
            let message = status
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let details = status.get("details").cloned();
            let info = details
                .as_ref()
                .and_then(Value::as_array)
                .and_then(|details| {
                    details.iter().find(|detail| {
                        detail.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE)
                    })
                });
            // The code itself when the server wrote it (agentyard does, as on gRPC:
            // its own codes have no A2A reason), else the one the reason names.
            let written = info
                .and_then(|info| info.get("metadata"))
                .and_then(|metadata| metadata.get("code"))
                .and_then(Value::as_str)
                .and_then(|code| code.parse::<i64>().ok());
            let reason = info
                .and_then(|info| info.get("reason"))
                .and_then(Value::as_str);
            let code = written.or_else(|| reason.and_then(code_of_reason));
            let mut error = JsonRpcError::new(code.unwrap_or(-32600), message);
            error.data = details;
            Some((error, code.is_some()))
        }
    }
}

/// The A2A (JSON-RPC) code an `ErrorInfo` reason names: the inverse of
/// [`error_reason`] over the codes A2A defines.
fn code_of_reason(reason: &str) -> Option<i64> {
    [-32700, -32600, -32601, -32602, -32603]
        .into_iter()
        .chain(-32009..=-32001)
        .find(|code| error_reason(*code) == Some(reason))
}

/// The client error for an HTTP+JSON error answer.
fn error_of(
    version: ProtocolVersion,
    status: reqwest::StatusCode,
    url: String,
    retry_after_secs: Option<u32>,
    body: &[u8],
) -> ClientError {
    let parsed = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|value| error_from_body(version, &value));
    // A refusal before the call (401, an agent not served, a body too large, ...)
    // is an HTTP error on JSON-RPC too; an A2A error is the agent's answer.
    // A 429 or 503 asks the client to come back later: an HTTP error the retry
    // policy acts on, its A2A error inside, as gRPC's RESOURCE_EXHAUSTED and
    // UNAVAILABLE are.
    let refusal = |error: &JsonRpcError, recovered: bool| {
        status == reqwest::StatusCode::UNAUTHORIZED
            || status == reqwest::StatusCode::TOO_MANY_REQUESTS
            || status == reqwest::StatusCode::SERVICE_UNAVAILABLE
            || !recovered
            || (error.code == -32600 && status != reqwest::StatusCode::BAD_REQUEST)
    };
    match parsed {
        Some((error, recovered)) if !refusal(&error, recovered) => ClientError::JsonRpc(error),
        Some((error, _)) => ClientError::Http {
            status,
            url,
            message: error.message.clone(),
            error: Some(error),
            retry_after_secs,
        },
        None => ClientError::Http {
            status,
            url,
            error: None,
            message: String::from_utf8_lossy(body).chars().take(200).collect(),
            retry_after_secs,
        },
    }
}

#[cfg(test)]
mod tests;
