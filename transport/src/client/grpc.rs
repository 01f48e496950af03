//! The client's gRPC path: every call of [`A2aClient`](super::A2aClient) over
//! `lf.a2a.v1.A2AService` (1.0) or `a2a.v1.A2AService` (0.3), chosen when the
//! agent's card prefers a `GRPC` interface or the options force that binding
//! ([`ClientOptions::transport`](super::ClientOptions::transport)).
//!
//! The interface URL is a gRPC target as the official clients dial it
//! (`127.0.0.1:50051`; `http://host:port` is taken too); the channel is opened
//! lazily, on the first call, and reused by clones. Calls carry as metadata what
//! the JSON-RPC path sends as headers: `a2a-version`, the extensions
//! (`a2a-extensions` in 1.0, `x-a2a-extensions` in 0.3), the credential
//! (`authorization` or the API key's header), `idempotency-key`, and the options'
//! extra headers (`traceparent`, ...), lowercased as gRPC metadata must be. 1.0
//! requests carry the interface's tenant. Answers are converted to the internal
//! model ([`crate::proto`]); an error status becomes the JSON-RPC error it carries
//! ([`ClientError::JsonRpc`]), or [`ClientError::Grpc`] for a status that is not an
//! A2A error (unreachable server, no credentials) or asks to come back later.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::StreamExt as _;
use tonic::metadata::{MetadataKey, MetadataValue};
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};
use tonic_types::StatusExt as _;

use super::{A2aStream, ClientAuth, ClientError, ClientOptions, IDEMPOTENCY_HEADER};
use crate::a2a::v1::{ERROR_DOMAIN, ProtocolVersion, VERSION_HEADER};
use crate::a2a::{AgentCard, StreamEvent};
use crate::jsonrpc::A2aRequest;
use crate::proto::{self, v0_3, v1};
use crate::service::A2aResult;

type V1Client = v1::pb::a2a_service_client::A2aServiceClient<Channel>;
type V03Client = v0_3::pb::a2a_service_client::A2aServiceClient<Channel>;

/// One agent's gRPC interface: the channel, the version spoken, the tenant.
#[derive(Clone, Debug)]
pub(super) struct GrpcPath {
    endpoint: Endpoint,
    /// Made on the first call (making it needs the runtime, which a client built
    /// outside one, from a card, does not have yet), then shared by clones.
    channel: Arc<OnceLock<Channel>>,
    /// The target as dialled, for errors.
    target: String,
    version: ProtocolVersion,
    tenant: String,
    /// The largest message sent or accepted.
    limit: usize,
}

/// 4 MiB, tonic's default for received messages, for both directions: a card or a
/// task with inline files can exceed the server's 1 MiB request limit only when
/// sent, and then the server says so.
const MESSAGE_LIMIT: usize = 4 * 1024 * 1024;

/// The gRPC endpoint URI of an interface URL: `host:port` gets `http://`; an
/// `https://` one needs TLS, which this client does not speak.
pub(super) fn endpoint_uri(url: &str) -> Result<String, ClientError> {
    let invalid = |reason: &str| ClientError::InvalidUrl {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    if url.starts_with("https://") || url.starts_with("grpcs://") {
        return Err(invalid(
            "a TLS gRPC interface: this client speaks gRPC over plain HTTP/2 only",
        ));
    }
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("grpc://"))
        .unwrap_or(url)
        .trim_end_matches('/');
    if rest.is_empty() || rest.contains('/') || rest.contains("://") {
        return Err(invalid("a gRPC interface is `host:port`"));
    }
    Ok(format!("http://{rest}"))
}

impl GrpcPath {
    /// The path to the interface at `url`, connecting lazily.
    pub(super) fn new(
        url: &str,
        version: ProtocolVersion,
        tenant: String,
        connect_timeout: Duration,
    ) -> Result<Self, ClientError> {
        let uri = endpoint_uri(url)?;
        let endpoint = Endpoint::from_shared(uri.clone())
            .map_err(|error| ClientError::InvalidUrl {
                url: url.to_owned(),
                reason: error.to_string(),
            })?
            .connect_timeout(connect_timeout)
            .tcp_nodelay(true);
        Ok(Self {
            endpoint,
            channel: Arc::new(OnceLock::new()),
            target: uri,
            version,
            tenant,
            limit: MESSAGE_LIMIT,
        })
    }

    /// The target dialled (`http://host:port`).
    pub(super) fn target(&self) -> &str {
        &self.target
    }

    /// The channel, opened lazily (it connects on the first call and reconnects
    /// after a failure).
    fn channel(&self) -> Channel {
        self.channel
            .get_or_init(|| self.endpoint.connect_lazy())
            .clone()
    }

    fn v1(&self) -> V1Client {
        V1Client::new(self.channel())
            .max_decoding_message_size(self.limit)
            .max_encoding_message_size(self.limit)
    }

    fn v0_3(&self) -> V03Client {
        V03Client::new(self.channel())
            .max_decoding_message_size(self.limit)
            .max_encoding_message_size(self.limit)
    }

    /// `message` with the call's metadata.
    fn request<T>(
        &self,
        message: T,
        options: &ClientOptions,
        idempotency_key: Option<&str>,
    ) -> Result<tonic::Request<T>, ClientError> {
        let mut request = tonic::Request::new(message);
        let mut pairs: Vec<(String, String)> = vec![(
            VERSION_HEADER.to_ascii_lowercase(),
            self.version.as_str().to_owned(),
        )];
        if !options.extensions.is_empty() {
            let key = match self.version {
                ProtocolVersion::V1_0 => "a2a-extensions",
                ProtocolVersion::V0_3 => "x-a2a-extensions",
            };
            pairs.push((key.to_owned(), options.extensions.join(", ")));
        }
        match &options.auth {
            Some(ClientAuth::ApiKey { header, key }) => {
                pairs.push((header.to_ascii_lowercase(), key.clone()));
            }
            Some(ClientAuth::Bearer(token)) => {
                pairs.push(("authorization".to_owned(), format!("Bearer {token}")));
            }
            None => {}
        }
        if let Some(key) = idempotency_key {
            pairs.push((IDEMPOTENCY_HEADER.to_ascii_lowercase(), key.to_owned()));
        }
        for (name, value) in &options.headers {
            pairs.push((name.to_ascii_lowercase(), value.clone()));
        }
        let metadata = request.metadata_mut();
        for (name, value) in pairs {
            let bad = |what: &str| {
                ClientError::Protocol(format!("the {what} of metadata `{name}` cannot be sent"))
            };
            let key = MetadataKey::from_bytes(name.as_bytes()).map_err(|_| bad("name"))?;
            let value = MetadataValue::try_from(value.as_str()).map_err(|_| bad("value"))?;
            metadata.insert(key, value);
        }
        if let Some(timeout) = options.timeout {
            request.set_timeout(timeout);
        }
        Ok(request)
    }

    /// A unary call: the result and the extensions the agent activated.
    pub(super) async fn unary(
        &self,
        request: A2aRequest,
        options: &ClientOptions,
        idempotency_key: Option<&str>,
    ) -> Result<(A2aResult, Vec<String>), ClientError> {
        let call = async {
            match self.version {
                ProtocolVersion::V1_0 => self.unary_v1(request, options, idempotency_key).await,
                ProtocolVersion::V0_3 => self.unary_v0_3(request, options, idempotency_key).await,
            }
        };
        match options.timeout {
            // The deadline also travels as `grpc-timeout`; this bounds connecting.
            Some(timeout) => tokio::time::timeout(timeout, call).await.map_err(|_| {
                self.status_error(&Status::deadline_exceeded(format!(
                    "no answer within {timeout:?}"
                )))
            })?,
            None => call.await,
        }
    }

    async fn unary_v1(
        &self,
        request: A2aRequest,
        options: &ClientOptions,
        key: Option<&str>,
    ) -> Result<(A2aResult, Vec<String>), ClientError> {
        let wire = v1::to_request(request, &self.tenant).map_err(conversion)?;
        let mut client = self.v1();
        macro_rules! call {
            ($method:ident, $message:expr, $variant:path) => {{
                let response = client
                    .$method(self.request($message, options, key)?)
                    .await
                    .map_err(|status| self.status_error(&status))?;
                let echoed = echoed(response.metadata(), "a2a-extensions");
                ($variant(response.into_inner()), echoed)
            }};
        }
        let (response, echoed) = match wire {
            v1::Request::SendMessage(m) => call!(send_message, m, v1::Response::Send),
            v1::Request::GetTask(m) => call!(get_task, m, v1::Response::Task),
            v1::Request::ListTasks(m) => call!(list_tasks, m, v1::Response::TaskList),
            v1::Request::CancelTask(m) => call!(cancel_task, m, v1::Response::Task),
            v1::Request::CreateTaskPushNotificationConfig(m) => call!(
                create_task_push_notification_config,
                m,
                v1::Response::PushConfig
            ),
            v1::Request::GetTaskPushNotificationConfig(m) => call!(
                get_task_push_notification_config,
                m,
                v1::Response::PushConfig
            ),
            v1::Request::ListTaskPushNotificationConfigs(m) => call!(
                list_task_push_notification_configs,
                m,
                v1::Response::PushConfigs
            ),
            v1::Request::DeleteTaskPushNotificationConfig(m) => {
                let response = client
                    .delete_task_push_notification_config(self.request(m, options, key)?)
                    .await
                    .map_err(|status| self.status_error(&status))?;
                (
                    v1::Response::Deleted,
                    echoed(response.metadata(), "a2a-extensions"),
                )
            }
            v1::Request::GetExtendedAgentCard(m) => {
                let response = client
                    .get_extended_agent_card(self.request(m, options, key)?)
                    .await
                    .map_err(|status| self.status_error(&status))?;
                let echoed = echoed(response.metadata(), "a2a-extensions");
                (v1::Response::Card(Box::new(response.into_inner())), echoed)
            }
            v1::Request::SendStreamingMessage(_) | v1::Request::SubscribeToTask(_) => {
                return Err(ClientError::Protocol(
                    "a streaming call was made as a unary one".to_owned(),
                ));
            }
        };
        let result = v1::from_response(response).map_err(answer_error)?;
        Ok((result, echoed))
    }

    async fn unary_v0_3(
        &self,
        request: A2aRequest,
        options: &ClientOptions,
        key: Option<&str>,
    ) -> Result<(A2aResult, Vec<String>), ClientError> {
        let wire = v0_3::to_request(request).map_err(conversion)?;
        let mut client = self.v0_3();
        let echo_key = "x-a2a-extensions";
        macro_rules! call {
            ($method:ident, $message:expr, $variant:path) => {{
                let response = client
                    .$method(self.request($message, options, key)?)
                    .await
                    .map_err(|status| self.status_error(&status))?;
                let echoed = echoed(response.metadata(), echo_key);
                ($variant(response.into_inner()), echoed)
            }};
        }
        let (response, echoed) = match wire {
            v0_3::Request::SendMessage(m) => call!(send_message, m, v0_3::Response::Send),
            v0_3::Request::GetTask(m) => call!(get_task, m, v0_3::Response::Task),
            v0_3::Request::CancelTask(m) => call!(cancel_task, m, v0_3::Response::Task),
            v0_3::Request::CreateTaskPushNotificationConfig(m) => call!(
                create_task_push_notification_config,
                m,
                v0_3::Response::PushConfig
            ),
            v0_3::Request::GetTaskPushNotificationConfig(m) => call!(
                get_task_push_notification_config,
                m,
                v0_3::Response::PushConfig
            ),
            v0_3::Request::ListTaskPushNotificationConfig(m) => call!(
                list_task_push_notification_config,
                m,
                v0_3::Response::PushConfigs
            ),
            v0_3::Request::DeleteTaskPushNotificationConfig(m) => {
                let response = client
                    .delete_task_push_notification_config(self.request(m, options, key)?)
                    .await
                    .map_err(|status| self.status_error(&status))?;
                (
                    v0_3::Response::Deleted,
                    echoed(response.metadata(), echo_key),
                )
            }
            v0_3::Request::SendStreamingMessage(_) | v0_3::Request::TaskSubscription(_) => {
                return Err(ClientError::Protocol(
                    "a streaming call was made as a unary one".to_owned(),
                ));
            }
        };
        let result = v0_3::from_response(response).map_err(answer_error)?;
        Ok((result, echoed))
    }

    /// A streaming call (`SendStreamingMessage`, `SubscribeToTask` /
    /// `TaskSubscription`).
    pub(super) async fn stream(
        &self,
        request: A2aRequest,
        options: &ClientOptions,
        idempotency_key: Option<&str>,
    ) -> Result<A2aStream, ClientError> {
        let target = self.target.clone();
        let to_error = move |status: Status| status_error(&target, &status);
        match self.version {
            ProtocolVersion::V1_0 => {
                let wire = v1::to_request(request, &self.tenant).map_err(conversion)?;
                let mut client = self.v1();
                let response = match wire {
                    v1::Request::SendStreamingMessage(m) => {
                        client
                            .send_streaming_message(self.request(m, options, idempotency_key)?)
                            .await
                    }
                    v1::Request::SubscribeToTask(m) => {
                        client
                            .subscribe_to_task(self.request(m, options, idempotency_key)?)
                            .await
                    }
                    _ => {
                        return Err(ClientError::Protocol(
                            "a unary call was made as a streaming one".to_owned(),
                        ));
                    }
                }
                .map_err(|status| self.status_error(&status))?;
                Ok(opened(
                    response,
                    "a2a-extensions",
                    v1::from_stream_response,
                    to_error,
                ))
            }
            ProtocolVersion::V0_3 => {
                let wire = v0_3::to_request(request).map_err(conversion)?;
                let mut client = self.v0_3();
                let response = match wire {
                    v0_3::Request::SendStreamingMessage(m) => {
                        client
                            .send_streaming_message(self.request(m, options, idempotency_key)?)
                            .await
                    }
                    v0_3::Request::TaskSubscription(m) => {
                        client
                            .task_subscription(self.request(m, options, idempotency_key)?)
                            .await
                    }
                    _ => {
                        return Err(ClientError::Protocol(
                            "a unary call was made as a streaming one".to_owned(),
                        ));
                    }
                }
                .map_err(|status| self.status_error(&status))?;
                Ok(opened(
                    response,
                    "x-a2a-extensions",
                    v0_3::from_stream_response,
                    to_error,
                ))
            }
        }
    }

    /// The extended card (1.0 only: the 0.3 service has none).
    pub(super) async fn extended_card(
        &self,
        options: &ClientOptions,
    ) -> Result<AgentCard, ClientError> {
        match self
            .unary(A2aRequest::GetAuthenticatedExtendedCard, options, None)
            .await?
        {
            (A2aResult::Card(card), _) => Ok(*card),
            (other, _) => Err(unexpected("GetExtendedAgentCard", &other)),
        }
    }

    fn status_error(&self, status: &Status) -> ClientError {
        status_error(&self.target, status)
    }
}

/// An opened stream as the client's: the echoed extensions (in `header`), each
/// message converted to the internal model, the stream ending after its final
/// event.
fn opened<E: Send + 'static>(
    response: tonic::Response<tonic::Streaming<E>>,
    header: &str,
    convert: fn(E) -> Result<StreamEvent, proto::ConversionError>,
    to_error: impl Fn(Status) -> ClientError + Send + 'static,
) -> A2aStream {
    let extensions = echoed(response.metadata(), header);
    let events = response
        .into_inner()
        .map(move |item| match item {
            Ok(event) => convert(event).map_err(answer_error),
            Err(status) => Err(to_error(status)),
        })
        .boxed();
    A2aStream {
        events: ends_after_final(events),
        extensions,
    }
}

/// The stream, ending after an error or a final event, as an SSE stream does.
fn ends_after_final(
    events: futures::stream::BoxStream<'static, Result<StreamEvent, ClientError>>,
) -> futures::stream::BoxStream<'static, Result<StreamEvent, ClientError>> {
    futures::stream::unfold(Some(events), |events| async move {
        let mut events = events?;
        let item = events.next().await?;
        let more = matches!(&item, Ok(event) if !event.is_final());
        Some((item, more.then_some(events)))
    })
    .boxed()
}

/// The extension URIs echoed under `key`.
fn echoed(metadata: &tonic::metadata::MetadataMap, key: &str) -> Vec<String> {
    metadata
        .get_all(key)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|uri| !uri.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A request the protobuf form cannot carry.
fn conversion(error: proto::ConversionError) -> ClientError {
    ClientError::Protocol(format!("the request cannot be sent over gRPC: {error}"))
}

/// An answer that does not fit the internal model.
fn answer_error(error: proto::ConversionError) -> ClientError {
    ClientError::Protocol(format!(
        "the gRPC answer does not fit the internal model: {error}"
    ))
}

/// A result of the wrong kind for the call.
pub(super) fn unexpected(method: &str, result: &A2aResult) -> ClientError {
    ClientError::Protocol(format!(
        "`{method}` was answered with the wrong kind of result: {result:?}"
    ))
}

/// A status as the client's error: an A2A error (one with an `ErrorInfo` of the
/// A2A domain) is [`ClientError::JsonRpc`], unless it asks the client to come back
/// later or to authenticate, which, like any status that is not an A2A error, is
/// [`ClientError::Grpc`].
pub(super) fn status_error(target: &str, status: &Status) -> ClientError {
    let a2a = status
        .get_details_error_info()
        .is_some_and(|info| info.domain == ERROR_DOMAIN);
    let later_or_auth = matches!(
        status.code(),
        Code::Unavailable | Code::ResourceExhausted | Code::Unauthenticated
    );
    if a2a && !later_or_auth {
        return ClientError::JsonRpc(crate::grpc::status::from_status(status));
    }
    ClientError::Grpc {
        code: status.code(),
        target: target.to_owned(),
        error: a2a.then(|| crate::grpc::status::from_status(status)),
        message: status.message().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_urls_become_plain_http2_targets() {
        assert_eq!(
            endpoint_uri("127.0.0.1:50051").ok().as_deref(),
            Some("http://127.0.0.1:50051")
        );
        assert_eq!(
            endpoint_uri("http://localhost:9/").ok().as_deref(),
            Some("http://localhost:9")
        );
        assert!(matches!(
            endpoint_uri("https://example.com:443"),
            Err(ClientError::InvalidUrl { .. })
        ));
        assert!(endpoint_uri("http://host:1/agents/a").is_err());
        assert!(endpoint_uri("").is_err());
    }

    #[test]
    fn a2a_errors_are_json_rpc_errors_and_the_rest_grpc_ones() {
        let not_found =
            crate::grpc::status::to_status(crate::jsonrpc::JsonRpcError::task_not_found(), None);
        assert!(matches!(
            status_error("t", &not_found),
            ClientError::JsonRpc(error) if error.code == -32001
        ));
        let busy =
            crate::grpc::status::to_status(crate::jsonrpc::JsonRpcError::new(-32011, "busy"), None);
        let error = status_error("t", &busy);
        assert!(matches!(
            error,
            ClientError::Grpc {
                code: Code::Unavailable,
                ..
            }
        ));
        assert_eq!(error.json_rpc_error().map(|e| e.code), Some(-32011));
        let refused = status_error("t", &Status::unavailable("connection refused"));
        assert!(matches!(refused, ClientError::Grpc { error: None, .. }));
    }
}
