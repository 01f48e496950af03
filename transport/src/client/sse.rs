//! Turning an SSE body into A2A stream events, incrementally.

use eventsource_stream::{EventStreamError, Eventsource as _};
use futures::stream::{BoxStream, Stream, StreamExt as _};
use serde_json::Value;

use super::ClientError;
use crate::a2a::StreamEvent;
use crate::a2a::v1::{self, ProtocolVersion};
use crate::jsonrpc::{JsonRpcResponse, RequestId};

/// The events of a `message/stream` or `tasks/resubscribe` answer (or their 1.0
/// names). Each SSE event's data is one JSON-RPC response carrying `id`; a success
/// yields its [`StreamEvent`] (read in `version`'s form), an error response yields [`ClientError::JsonRpc`] and ends the
/// stream, as does the event marked final (the connection is dropped then, whatever
/// the server does next). Events are parsed as bytes arrive (lines may be split
/// anywhere, CRLF and LF both work, comments such as keep-alives are skipped).
pub(super) fn events<S, B, E>(
    bytes: S,
    id: RequestId,
    version: ProtocolVersion,
    transport_error: fn(E) -> ClientError,
) -> BoxStream<'static, Result<StreamEvent, ClientError>>
where
    S: Stream<Item = Result<B, E>> + Send + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: Send + 'static,
{
    let sse = bytes.eventsource().boxed();
    futures::stream::unfold(Some(sse), move |sse| {
        let id = id.clone();
        async move {
            let mut sse = sse?;
            loop {
                let event = match sse.next().await? {
                    Ok(event) => event,
                    Err(EventStreamError::Transport(error)) => {
                        return Some((Err(transport_error(error)), None));
                    }
                    Err(EventStreamError::Utf8(error)) => {
                        let error =
                            ClientError::Protocol(format!("the SSE stream is not UTF-8: {error}"));
                        return Some((Err(error), None));
                    }
                    Err(EventStreamError::Parser(error)) => {
                        let error = ClientError::Protocol(format!("malformed SSE stream: {error}"));
                        return Some((Err(error), None));
                    }
                };
                if event.data.is_empty() {
                    continue;
                }
                return Some(match decode(&event.data, &id, version) {
                    Ok(event) if event.is_final() => (Ok(event), None),
                    Ok(event) => (Ok(event), Some(sse)),
                    Err(error) => (Err(error), None),
                });
            }
        }
    })
    .boxed()
}

/// One `data:` payload: a JSON-RPC response answering `id`, its result in
/// `version`'s form. A 1.0 event has no `final`; the conversion marks a terminal or
/// interrupted status final, where a 1.0 server closes the stream.
pub(super) fn decode(
    data: &str,
    id: &RequestId,
    version: ProtocolVersion,
) -> Result<StreamEvent, ClientError> {
    let response: JsonRpcResponse<Value> =
        serde_json::from_str(data).map_err(|source| ClientError::Decode {
            what: "JSON-RPC response of a stream event".to_owned(),
            source,
        })?;
    super::check_id(&response, id)?;
    let result = response.into_result().map_err(ClientError::JsonRpc)?;
    super::decode_as::<StreamEvent, v1::StreamResponse>(result, version, "stream event")
}
