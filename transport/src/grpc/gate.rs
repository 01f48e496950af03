//! What every gRPC call goes through before and around the service, whichever
//! version's service it came in by: which agent, who calls, which version, which
//! extensions, what the card demands, the call limit and the deadline.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt as _;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Status};

use super::status::to_status;
use crate::a2a::v1::{self, ProtocolVersion};
use crate::a2a::{AgentCard, StreamEvent};
use crate::bounded::Bounded;
use crate::jsonrpc::{A2aRequest, JsonRpcError, RequestId};
use crate::server::{EXTENSIONS_HEADER, ServerConfig, V1_EXTENSIONS_HEADER, auth, extensions};
use crate::service::{A2aResult, A2aService, CallContext, EventStream, Principal, Reply};

/// The metadata key that names the exposed agent a call is for, when the request
/// has no `tenant` (always on 0.3, whose requests have none): an agentyard
/// extension. Without either, the call goes to the server's default agent.
pub const AGENT_METADATA: &str = "a2a-agent";

/// What the services of both versions share: the A2A service, the server's config,
/// the cap on calls at once, and the shutdown signal that ends open streams.
pub(crate) struct Shared<S> {
    pub(crate) service: Arc<S>,
    pub(crate) config: Arc<ServerConfig>,
    /// `Some` when [`ServerConfig::max_calls`] caps the calls let in at once; the
    /// rest wait for a permit.
    pub(crate) permits: Option<Arc<Semaphore>>,
    pub(crate) shutdown: CancellationToken,
}

/// A call let in: the agent, its card, and the context the service gets.
pub(crate) struct Admitted {
    pub(crate) card: std::sync::Arc<AgentCard>,
    pub(crate) context: CallContext,
    /// The metadata key the activated extensions are echoed under.
    echo_key: &'static str,
    started: Instant,
    method: &'static str,
}

impl Admitted {
    /// The agent the call is for.
    pub(crate) fn agent(&self) -> &str {
        &self.context.agent
    }

    /// Puts the activated extensions in `metadata` (a response's or an error's), as
    /// every JSON-RPC answer carries them in its header.
    pub(crate) fn echo(&self, metadata: &mut MetadataMap) {
        let echo = self.context.extensions.join(", ");
        if !echo.is_empty()
            && let Ok(value) = MetadataValue::try_from(echo.as_str())
        {
            metadata.insert(self.echo_key, value);
        }
    }

    /// The call's log line, at info (one per call, as on the HTTP server).
    pub(crate) fn log(&self, code: Code) {
        tracing::info!(
            agent = %self.context.agent,
            rpc_method = self.method,
            version = self.context.version.as_str(),
            grpc_status = ?code,
            duration_ms = self.started.elapsed().as_secs_f64() * 1000.0,
            "grpc request"
        );
    }

    /// `status` with the echo, logged.
    pub(crate) fn fail(&self, mut status: Status) -> Status {
        self.echo(status.metadata_mut());
        self.log(status.code());
        tracing::debug!(message = status.message(), "grpc call rejected");
        status
    }
}

impl<S> Clone for Shared<S> {
    fn clone(&self) -> Self {
        Self {
            service: Arc::clone(&self.service),
            config: Arc::clone(&self.config),
            permits: self.permits.clone(),
            shutdown: self.shutdown.clone(),
        }
    }
}

/// The text of a metadata value, when it is visible ASCII.
fn text<'a>(metadata: &'a MetadataMap, key: &str) -> Option<&'a str> {
    metadata.get(key).and_then(|value| value.to_str().ok())
}

impl<S: A2aService> Shared<S> {
    /// Lets a call in, or says why not: the agent (the request's `tenant`, else the
    /// `a2a-agent` metadata, else the default agent: NOT_FOUND when there is none),
    /// the version (`a2a-version` naming another than `served`:
    /// FAILED_PRECONDITION with VERSION_NOT_SUPPORTED), the caller when
    /// `authenticate` (UNAUTHENTICATED with the card's challenges in
    /// `www-authenticate`), and the extensions it activates.
    pub(crate) fn admit(
        &self,
        served: ProtocolVersion,
        method: &'static str,
        metadata: &MetadataMap,
        tenant: &str,
        authenticate: bool,
    ) -> Result<Admitted, Status> {
        let started = Instant::now();
        let agent = if tenant.is_empty() {
            match text(metadata, AGENT_METADATA).filter(|name| !name.is_empty()) {
                Some(agent) => agent.to_owned(),
                None => self.service.default_agent().ok_or_else(|| {
                    Status::not_found(
                        "this server has no default agent: name one in the request's `tenant` \
                         (1.0) or the `a2a-agent` metadata",
                    )
                })?,
            }
        } else {
            tenant.to_owned()
        };
        let card = self
            .service
            .card(&agent)
            .ok_or_else(|| Status::not_found(format!("no exposed agent `{agent}`")))?;
        check_version(served, metadata)?;
        let headers = metadata.clone().into_headers();
        let principal = if authenticate {
            authenticated(&agent, &card, self.config.auth(), &headers)?
        } else {
            None
        };
        let (names, echo_key): (&[&str], &'static str) = match served {
            ProtocolVersion::V1_0 => (&[V1_EXTENSIONS_HEADER], "a2a-extensions"),
            // 0.3 calls may name extensions under either spelling; the echo uses
            // the one the call used, as on JSON-RPC.
            ProtocolVersion::V0_3 => (
                &[EXTENSIONS_HEADER, V1_EXTENSIONS_HEADER],
                if headers.contains_key(V1_EXTENSIONS_HEADER)
                    && !headers.contains_key(EXTENSIONS_HEADER)
                {
                    "a2a-extensions"
                } else {
                    "x-a2a-extensions"
                },
            ),
        };
        let request_id = text(metadata, "x-request-id")
            .map_or_else(|| format!("grpc-{}", uuid::Uuid::new_v4()), str::to_owned);
        let mut context = CallContext::new(agent, RequestId::String(request_id));
        context.principal = principal;
        context.extensions = extensions::activate(&card, extensions::requested(&headers, names));
        context.version = served;
        context.idempotency_key = text(metadata, "idempotency-key").map(str::to_owned);
        context.traceparent = text(metadata, crate::trace::TRACEPARENT).map(str::to_owned);
        if let Some(value) = metadata.get("last-event-id") {
            let after = value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| {
                    to_status(
                        JsonRpcError::invalid_params().with_message(
                            "Invalid params: the last-event-id metadata must be the number of a \
                             task event",
                        ),
                        Some("last-event-id"),
                    )
                })?;
            context.last_event_id = Some(after);
        }
        Ok(Admitted {
            card,
            context,
            echo_key,
            started,
            method,
        })
    }

    /// What the card demands of a call: the extensions it requires, streaming for
    /// the streaming RPCs, push notifications for the push-config RPCs.
    pub(crate) fn check(admitted: &Admitted, request: &A2aRequest) -> Result<(), Status> {
        let card = &admitted.card;
        let agent = admitted.agent();
        let method = admitted.method;
        let missing = extensions::missing_required(card, &admitted.context.extensions);
        if !missing.is_empty() {
            let list = missing
                .iter()
                .map(|uri| format!("`{uri}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let error = v1::extension_support_required(&missing);
            let message = format!(
                "{}: agent `{agent}` requires extension {list}; activate it with the {} metadata",
                error.message, admitted.echo_key
            );
            return Err(to_status(error.with_message(message), None));
        }
        crate::server::rpc::check_capabilities(agent, card, request, method)
            .map_err(|error| to_status(error, None))
    }

    /// Calls the service within the cap on calls at once and the request timeout.
    async fn call(&self, admitted: &Admitted, request: A2aRequest) -> Result<Reply, Status> {
        let _permit = match &self.permits {
            // The semaphore is never closed, so acquiring only waits.
            Some(permits) => Arc::clone(permits).acquire_owned().await.ok(),
            None => None,
        };
        let timeout = self.config.request_timeout();
        let call = self.service.call(admitted.context.clone(), request);
        match tokio::time::timeout(timeout, call).await {
            Err(_elapsed) => {
                tracing::warn!(?timeout, "the agent did not answer in time");
                Err(to_status(
                    JsonRpcError::internal_error().with_message(format!(
                        "agent `{}` did not answer `{}` within {timeout:?}",
                        admitted.agent(),
                        admitted.method
                    )),
                    None,
                ))
            }
            Ok(Err(error)) => Err(to_status(error, None)),
            Ok(Ok(reply)) => Ok(reply),
        }
    }

    /// A unary call: its result, or the status to end it with.
    pub(crate) async fn unary(
        &self,
        admitted: &Admitted,
        request: A2aRequest,
    ) -> Result<A2aResult, Status> {
        match self.call(admitted, request).await? {
            Reply::Result(result) => Ok(result),
            reply => Err(wrong_reply(admitted, &reply, "a single result")),
        }
    }

    /// A streaming call: its events, ending when the service's stream does, after
    /// an error, after a final status update (or, for `settles_on_task`, a task in a
    /// terminal or interrupted state: 1.0 has no `final`), or at shutdown.
    pub(crate) async fn stream(
        &self,
        admitted: &Admitted,
        request: A2aRequest,
        settles_on_task: bool,
    ) -> Result<EventStream, Status> {
        let events: EventStream = match self.call(admitted, request).await? {
            Reply::Stream(events) => events,
            Reply::NumberedStream(events) => {
                Box::pin(events.map(|event| event.map(|(_, event)| event)))
            }
            reply => return Err(wrong_reply(admitted, &reply, "a stream")),
        };
        let step = move |item: Result<StreamEvent, JsonRpcError>| {
            let last = match &item {
                Ok(event) => crate::server::rpc::ends_stream(event, settles_on_task),
                Err(_) => true,
            };
            (item, last)
        };
        let shutdown = Some(self.shutdown.clone());
        Ok(Box::pin(Bounded::new(
            events,
            tracing::Span::none(),
            shutdown,
            step,
        )))
    }
}

/// INTERNAL: the service answered a unary call with a stream, or the reverse.
fn wrong_reply(admitted: &Admitted, reply: &Reply, expected: &str) -> Status {
    tracing::error!(?reply, "the service answered with the wrong kind of reply");
    to_status(
        JsonRpcError::internal_error().with_message(format!(
            "agent `{}` answered `{}` with the wrong kind of reply (expected {expected})",
            admitted.agent(),
            admitted.method
        )),
        None,
    )
}

/// The `a2a-version` metadata against the version of the service called. Missing
/// or empty: the service's version (on gRPC the service name already says which
/// version a client speaks; the JSON-RPC rule "missing means 0.3" exists because one
/// URL serves both). Another version served, or one not served: VERSION_NOT_SUPPORTED.
fn check_version(served: ProtocolVersion, metadata: &MetadataMap) -> Result<(), Status> {
    let Some(asked) = metadata.get(v1::VERSION_HEADER.to_ascii_lowercase().as_str()) else {
        return Ok(());
    };
    let asked = String::from_utf8_lossy(asked.as_encoded_bytes())
        .trim()
        .to_owned();
    if asked.is_empty() {
        return Ok(());
    }
    let supported = ProtocolVersion::ALL.map(ProtocolVersion::as_str);
    match ProtocolVersion::from_header(Some(&asked)) {
        Ok(version) if version == served => Ok(()),
        Ok(version) => {
            let error = v1::version_not_supported(&asked, &[served.as_str()]);
            let message = format!(
                "{}: this is the A2A {} service ({}); A2A {} is {}",
                error.message,
                served.as_str(),
                service_name(served),
                version.as_str(),
                service_name(version),
            );
            Err(to_status(error.with_message(message), None))
        }
        Err(unsupported) => {
            let error = v1::version_not_supported(unsupported.requested(), &supported);
            let message = format!("{} (supported: {})", error.message, supported.join(", "));
            Err(to_status(error.with_message(message), None))
        }
    }
}

/// The gRPC service that speaks `version`.
fn service_name(version: ProtocolVersion) -> &'static str {
    match version {
        ProtocolVersion::V1_0 => crate::proto::v1::SERVICE_NAME,
        ProtocolVersion::V0_3 => crate::proto::v0_3::SERVICE_NAME,
    }
}

/// The caller, checked against the card: UNAUTHENTICATED with a `www-authenticate`
/// entry per acceptable scheme when it is not let in.
fn authenticated(
    agent: &str,
    card: &AgentCard,
    config: &crate::server::AuthConfig,
    headers: &axum::http::HeaderMap,
) -> Result<Option<Principal>, Status> {
    auth::authenticate(card, config, headers).map_err(|rejected| unauthenticated(agent, &rejected))
}

/// UNAUTHENTICATED for `rejected`, with its challenges.
pub(crate) fn unauthenticated(agent: &str, rejected: &auth::Unauthorized) -> Status {
    tracing::debug!(bad_credential = rejected.bad_credential, "unauthenticated");
    let mut status = Status::unauthenticated(rejected.detail(agent));
    for challenge in &rejected.challenges {
        if let Ok(value) = MetadataValue::try_from(challenge.header_value(agent).as_str()) {
            status.metadata_mut().append("www-authenticate", value);
        }
    }
    status
}
