//! What the two services do alike: admit a call, convert it, hand it to the service,
//! and convert the answer back. A [`Wire`] names the version's messages and
//! conversions; [`Door`] is one service over one wire.

use std::marker::PhantomData;
use std::pin::Pin;

use futures::{Stream, StreamExt as _};
use tonic::metadata::MetadataMap;
use tonic::{Response, Status};

use super::gate::{Admitted, Shared};
use super::status::{conversion_status, to_status};
use crate::a2a::StreamEvent;
use crate::a2a::v1::ProtocolVersion;
use crate::jsonrpc::{A2aRequest, JsonRpcError};
use crate::proto::ConversionError;
use crate::service::{A2aResult, A2aService};

/// A protocol version's gRPC messages and their conversions to the internal model.
pub(crate) trait Wire: Send + Sync + 'static {
    /// The version the service speaks.
    const VERSION: ProtocolVersion;
    /// Whether a stream settles on the task (1.0: it closes at an interrupted state
    /// too), or ends after the status update marked `final` (0.3).
    const SETTLES_ON_TASK: bool;
    /// Any request message of the service.
    type Request: Send;
    /// Any unary response message of the service.
    type Response;
    /// One message of a streaming RPC.
    type Event: Send + 'static;

    /// The agent the request names (`""`: none, as every 0.3 request).
    fn tenant(request: &Self::Request) -> &str;
    /// The request in the internal model.
    fn request(request: Self::Request) -> Result<A2aRequest, ConversionError>;
    /// A unary result in the version's messages.
    fn result(result: A2aResult) -> Result<Self::Response, ConversionError>;
    /// A stream event in the version's messages.
    fn event(event: StreamEvent) -> Result<Self::Event, ConversionError>;
}

/// The stream of a streaming RPC.
pub(crate) type EventStream<E> = Pin<Box<dyn Stream<Item = Result<E, Status>> + Send>>;

/// One version's service over an [`A2aService`].
pub(crate) struct Door<S, W> {
    pub(crate) shared: Shared<S>,
    wire: PhantomData<fn() -> W>,
}

impl<S, W> Door<S, W> {
    pub(crate) const fn new(shared: Shared<S>) -> Self {
        Self {
            shared,
            wire: PhantomData,
        }
    }
}

impl<S: A2aService, W: Wire> Door<S, W> {
    /// Lets the call in, converts it and checks it against the card.
    pub(crate) fn admit(
        &self,
        method: &'static str,
        metadata: &MetadataMap,
        request: W::Request,
    ) -> Result<(Admitted, A2aRequest), Status> {
        let admitted =
            self.shared
                .admit(W::VERSION, method, metadata, W::tenant(&request), true)?;
        let request =
            W::request(request).map_err(|error| admitted.fail(conversion_status(&error)))?;
        Shared::<S>::check(&admitted, &request).map_err(|status| admitted.fail(status))?;
        Ok((admitted, request))
    }

    /// A unary RPC: `pick` takes the response message out of the converted result.
    pub(crate) async fn unary<T>(
        &self,
        method: &'static str,
        metadata: &MetadataMap,
        request: W::Request,
        pick: impl FnOnce(W::Response) -> Option<T>,
    ) -> Result<Response<T>, Status> {
        let (admitted, request) = self.admit(method, metadata, request)?;
        let result =
            crate::trace::within(traceparent(metadata), self.shared.unary(&admitted, request))
                .await
                .map_err(|status| admitted.fail(status))?;
        let response = W::result(result).map_err(|error| {
            admitted.fail(internal(format!(
                "the answer to `{method}` cannot be sent: {error}"
            )))
        })?;
        let message = pick(response).ok_or_else(|| {
            admitted.fail(internal(format!(
                "agent `{}` answered `{method}` with the wrong kind of result",
                admitted.agent()
            )))
        })?;
        Ok(answered(&admitted, message))
    }

    /// A streaming RPC: the service's events as the version's stream messages; an
    /// error ends the stream as its status.
    pub(crate) async fn streaming(
        &self,
        method: &'static str,
        metadata: &MetadataMap,
        request: W::Request,
    ) -> Result<Response<EventStream<W::Event>>, Status> {
        let (admitted, request) = self.admit(method, metadata, request)?;
        let events = crate::trace::within(
            traceparent(metadata),
            self.shared.stream(&admitted, request, W::SETTLES_ON_TASK),
        )
        .await
        .map_err(|status| admitted.fail(status))?;
        let frames = events.map(|event| match event {
            Ok(event) => W::event(event)
                .map_err(|error| internal(format!("a stream event cannot be sent: {error}"))),
            Err(error) => Err(to_status(error, None)),
        });
        let frames: EventStream<W::Event> = Box::pin(super::end_after_error(frames));
        Ok(answered(&admitted, frames))
    }
}

/// The call's `traceparent`, for the head sampling decision (gRPC calls have no
/// request span of their own: the send's span is the first of the call).
fn traceparent(metadata: &MetadataMap) -> Option<&str> {
    metadata
        .get(crate::trace::TRACEPARENT)
        .and_then(|value| value.to_str().ok())
}

/// The response carrying `message`, with the activated extensions echoed; the call
/// logged as answered.
pub(crate) fn answered<T>(admitted: &Admitted, message: T) -> Response<T> {
    let mut response = Response::new(message);
    admitted.echo(response.metadata_mut());
    admitted.log(tonic::Code::Ok);
    response
}

/// An internal error's status: the server could not write what it had.
pub(crate) fn internal(message: String) -> Status {
    to_status(JsonRpcError::internal_error().with_message(message), None)
}
