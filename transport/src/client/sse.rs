//! Turning an SSE body into A2A stream events, incrementally.

use eventsource_stream::{EventStreamError, Eventsource as _};
use futures::stream::{BoxStream, Stream, StreamExt as _};
use serde_json::Value;

use super::ClientError;
use super::limit::{self, Limited};
use crate::a2a::StreamEvent;
use crate::a2a::v1::{self, ProtocolVersion};
use crate::jsonrpc::{JsonRpcResponse, JsonRpcVersion, RequestId};

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
    url: String,
    limit: usize,
) -> BoxStream<'static, Result<StreamEvent, ClientError>>
where
    S: Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]> + Send + 'static,
    E: Send + 'static,
{
    let sse = limit::events(bytes, limit).eventsource().boxed();
    futures::stream::unfold(Some(sse), move |sse| {
        let id = id.clone();
        let url = url.clone();
        async move {
            let mut sse = sse?;
            loop {
                let event = match sse.next().await? {
                    Ok(event) => event,
                    Err(EventStreamError::Transport(Limited::Inner(error))) => {
                        return Some((Err(transport_error(error)), None));
                    }
                    Err(EventStreamError::Transport(Limited::Over(limit))) => {
                        return Some((Err(ClientError::TooLarge { url, limit }), None));
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
    match decode_success(data, id, version) {
        Some(event) => Ok(event),
        None => decode_in_full(data, id, version),
    }
}

/// [`decode`] with every check, for what the fast path leaves: the error it names.
fn decode_in_full(
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

/// A success response's event typed straight from the text, without building the
/// response as a `serde_json::Value` first: the hot path of every stream event.
/// `None` unless the text is a plain success answering `sent` (`jsonrpc` "2.0", no
/// `error` member) whose result types in `version`'s form; [`decode_in_full`] then
/// reads it, and names what is wrong.
fn decode_success(text: &str, sent: &RequestId, version: ProtocolVersion) -> Option<StreamEvent> {
    #[derive(serde::Deserialize)]
    struct Success<'a> {
        // Refuses anything but "2.0" itself; nothing else to read from it.
        #[serde(rename = "jsonrpc")]
        _jsonrpc: JsonRpcVersion,
        id: RequestId,
        #[serde(borrow)]
        result: &'a serde_json::value::RawValue,
        #[serde(default, deserialize_with = "present")]
        error: Option<()>,
    }
    /// Whether a member is there at all, whatever it holds (`null` included).
    fn present<'de, D: serde::Deserializer<'de>>(member: D) -> Result<Option<()>, D::Error> {
        use serde::Deserialize as _;
        serde::de::IgnoredAny::deserialize(member).map(|_| Some(()))
    }
    let success: Success<'_> = serde_json::from_str(text).ok()?;
    if success.error.is_some() || &success.id != sent {
        return None;
    }
    let result = success.result.get();
    match version {
        ProtocolVersion::V0_3 => serde_json::from_str(result).ok(),
        ProtocolVersion::V1_0 => serde_json::from_str::<v1::StreamResponse>(result)
            .ok()?
            .try_into()
            .ok(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fast(
        data: &serde_json::Value,
        id: &RequestId,
        version: ProtocolVersion,
    ) -> Option<StreamEvent> {
        decode_success(&data.to_string(), id, version)
    }

    #[test]
    fn a_success_event_types_as_the_full_decoder_types_it() {
        let id = RequestId::from(7);
        let status = json!({"state": "working", "timestamp": "2026-11-25T07:00:00Z",
            "message": {"kind": "message", "role": "agent", "messageId": "m",
                        "parts": [{"kind": "text", "text": "é \"q\""}], "metadata": {"n": 1.25}}});
        let events_03 = vec![
            json!({"kind": "task", "id": "t", "contextId": "c", "status": status,
                   "history": [], "metadata": {"k": [1, null]}}),
            json!({"kind": "status-update", "taskId": "t", "contextId": "c",
                   "status": {"state": "completed"}, "final": true}),
            json!({"kind": "artifact-update", "taskId": "t", "contextId": "c",
                   "artifact": {"artifactId": "a", "parts": [{"kind": "data", "data": {"x": 2}}]},
                   "append": false, "lastChunk": true}),
            json!({"kind": "message", "role": "agent", "messageId": "m2",
                   "parts": [{"kind": "text", "text": "hi"}]}),
        ];
        let events_10 = vec![
            json!({"statusUpdate": {"taskId": "t", "contextId": "c",
                                    "status": {"state": "TASK_STATE_COMPLETED"}}}),
            json!({"task": {"id": "t", "contextId": "c",
                            "status": {"state": "TASK_STATE_WORKING"}}}),
            json!({"artifactUpdate": {"taskId": "t", "contextId": "c",
                                      "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}}),
        ];
        for (version, events) in [
            (ProtocolVersion::V0_3, events_03),
            (ProtocolVersion::V1_0, events_10),
        ] {
            for result in events {
                let data = json!({"jsonrpc": "2.0", "id": 7, "result": result});
                let full = decode_in_full(&data.to_string(), &id, version).expect("valid");
                assert_eq!(fast(&data, &id, version), Some(full), "{data}");
            }
        }
    }

    #[test]
    fn anything_but_a_plain_success_for_this_request_is_left_to_the_full_decoder() {
        let id = RequestId::from(7);
        let result = json!({"kind": "status-update", "taskId": "t", "contextId": "c",
                            "status": {"state": "completed"}, "final": true});
        let declined = [
            json!({"jsonrpc": "2.0", "id": 8, "result": result}),
            json!({"jsonrpc": "2.0", "id": 7, "result": result, "error": null}),
            json!({"jsonrpc": "1.0", "id": 7, "result": result}),
            json!({"jsonrpc": "2.0", "id": 7, "result": {"kind": "nonsense"}}),
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32001, "message": "no"}}),
        ];
        for data in declined {
            assert!(fast(&data, &id, ProtocolVersion::V0_3).is_none(), "{data}");
        }
        // And the full decoder still answers them as it did.
        let wrong_id = json!({"jsonrpc": "2.0", "id": 8, "result": result}).to_string();
        assert!(matches!(
            decode(&wrong_id, &id, ProtocolVersion::V0_3),
            Err(ClientError::Protocol(_))
        ));
        let refused =
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32001, "message": "no"}})
                .to_string();
        assert!(matches!(
            decode(&refused, &id, ProtocolVersion::V0_3),
            Err(ClientError::JsonRpc(_))
        ));
    }
}
