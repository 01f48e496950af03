//! Server-sent events written whole: each event's bytes made in one buffer, its JSON
//! serialized in place.
//!
//! axum's `Event` takes its data as a finished string and copies it into a buffer of
//! its own, scanning it for line breaks to split it into `data:` lines, and takes an
//! `id:` as a string of its own: per event an allocation and a copy of the JSON, a
//! scan of it, and a formatted id, a few thousand instructions of a stream's
//! per-event cost (`docs/benchmarks.md`, "2026-11-30 (fourteenth)"). The JSON here
//! comes from serde_json, which writes no line break outside a string and escapes
//! every one inside, so it is always one `data:` line. The bytes are those axum
//! writes: the `event:` line, the `data:` line, the `id:` line, then a blank line.

use std::convert::Infallible;
use std::io::Write as _;

use axum::body::{Body, Bytes};
use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt as _};
use serde::Serialize;

/// Room for most events from the start: serde_json's own buffer starts at 128 bytes
/// and doubles, three allocations and copies for a task event.
const EVENT_CAPACITY: usize = 512;

/// The keep-alive comment a waiting stream sends (what axum's `comment("")` writes).
pub(super) const KEEP_ALIVE: Bytes = Bytes::from_static(b": \n\n");

/// An event whose data is `value` as one line of JSON, named `name` (none: the
/// default `message` event), numbered `id` when it has a number.
///
/// # Errors
/// `value` failing to serialize (a map with keys that are not strings, which no A2A
/// type has).
pub(super) fn json_event(
    name: Option<&str>,
    value: &impl Serialize,
    id: Option<u64>,
) -> serde_json::Result<Bytes> {
    let mut event = data_line(name, EVENT_CAPACITY);
    serde_json::to_writer(&mut event, value)?;
    event.push(b'\n');
    if let Some(id) = id {
        // Writing to a `Vec` cannot fail.
        let _ = writeln!(event, "id: {id}");
    }
    event.push(b'\n');
    Ok(Bytes::from(event))
}

/// An event whose data is `text`, named `name`: `text` must be one line (serialized
/// JSON is), or the client reads only its first.
pub(super) fn text_event(name: Option<&str>, text: &str) -> Bytes {
    debug_assert!(
        !text.contains(['\n', '\r']),
        "an SSE data line with a line break"
    );
    let mut event = data_line(name, text.len() + 16);
    event.extend_from_slice(text.as_bytes());
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// An event's bytes up to its data: the `event:` line when it is named, then `data: `.
fn data_line(name: Option<&str>, capacity: usize) -> Vec<u8> {
    let mut event = Vec::with_capacity(capacity);
    if let Some(name) = name {
        event.extend_from_slice(b"event: ");
        event.extend_from_slice(name.as_bytes());
        event.push(b'\n');
    }
    event.extend_from_slice(b"data: ");
    event
}

/// An SSE response of `events`, with the headers axum's `Sse` sends.
pub(super) fn response<S>(events: S) -> Response
where
    S: Stream<Item = Bytes> + Send + 'static,
{
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static("text/event-stream")),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        Body::from_stream(events.map(Ok::<_, Infallible>)),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::response::sse::Event;

    /// What axum's `Sse` sends for `event`, to compare bytes with.
    async fn axum_bytes(event: Event) -> Bytes {
        let response = axum::response::sse::Sse::new(futures::stream::once(async move {
            Ok::<_, Infallible>(event)
        }))
        .into_response();
        axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body in memory")
    }

    #[tokio::test]
    async fn an_event_is_written_as_axum_writes_it() {
        let value = serde_json::json!({"text": "two\nlines", "n": 1});
        let json = serde_json::to_string(&value).expect("serializes");
        assert_eq!(
            json_event(None, &value, Some(42)).expect("serializes"),
            axum_bytes(Event::default().data(&json).id("42")).await
        );
        assert_eq!(
            json_event(Some("error"), &value, None).expect("serializes"),
            axum_bytes(Event::default().event("error").data(&json)).await
        );
        assert_eq!(
            text_event(Some("error"), &json),
            axum_bytes(Event::default().event("error").data(&json)).await
        );
        assert_eq!(
            text_event(None, &json),
            axum_bytes(Event::default().data(&json)).await
        );
        assert_eq!(KEEP_ALIVE, axum_bytes(Event::default().comment("")).await);
    }

    #[tokio::test]
    async fn a_response_carries_the_headers_and_the_events_in_order() {
        let events = futures::stream::iter([text_event(None, "1"), text_event(None, "2")]);
        let response = response(events);
        assert_eq!(response.headers()[CONTENT_TYPE], "text/event-stream");
        assert_eq!(response.headers()[CACHE_CONTROL], "no-cache");
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body in memory");
        assert_eq!(&body[..], b"data: 1\n\ndata: 2\n\n");
    }
}
