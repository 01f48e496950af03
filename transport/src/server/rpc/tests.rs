//! The send fast path: it types exactly what the full decoder types, and leaves
//! every other body to it.

use serde_json::{Value, json};

use super::{decode_send, decode_v1, wire_form};
use crate::a2a::v1::ProtocolVersion;
use crate::jsonrpc::A2aCall;

/// What the full decoder makes of a body it accepts.
fn decoded_in_full(body: &Value) -> A2aCall {
    let version = if body["method"].as_str().is_some_and(|m| m.contains('/')) {
        ProtocolVersion::V0_3
    } else {
        ProtocolVersion::V1_0
    };
    match version {
        ProtocolVersion::V0_3 => A2aCall::from_value(body.clone()).expect("a valid 0.3 call"),
        ProtocolVersion::V1_0 => decode_v1(body.clone()).expect("a valid 1.0 call"),
    }
}

fn decoded_fast(body: &Value) -> Option<(ProtocolVersion, Option<&'static str>, A2aCall)> {
    decode_send(&serde_json::to_vec(body).expect("json"))
}

#[test]
fn a_valid_send_types_as_the_full_decoder_types_it() {
    let message_03 = json!({
        "kind": "message", "role": "user", "messageId": "m-1",
        "contextId": "c-1", "taskId": "t-1",
        "parts": [
            {"kind": "text", "text": "héllo \"quoted\" \u{1F600}"},
            {"kind": "data", "data": {"n": 1.5e300, "big": 18446744073709551615u64, "neg": -3, "list": [null, true]}},
            {"kind": "file", "file": {"uri": "https://example.com/a.pdf", "mimeType": "application/pdf"}}
        ],
        "metadata": {"agentyard.dev/hops": 1, "agentyard.dev/chain": ["a/b"]},
        "extensions": ["https://example.com/ext"]
    });
    let message_10 = json!({
        "role": "ROLE_USER", "messageId": "m-1", "contextId": "c-1",
        "parts": [{"text": "hello"}, {"data": {"k": [1, 2.25]}}],
        "metadata": {"k": "v"}
    });
    let bodies = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
               "params": {"message": message_03.clone()}}),
        json!({"jsonrpc": "2.0", "id": "abc", "method": "message/stream",
               "params": {"message": message_03.clone(),
                          "configuration": {"blocking": true, "historyLength": 3,
                                            "acceptedOutputModes": ["text/plain"]},
                          "metadata": {"x": 1}}}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage",
               "params": {"message": message_10.clone(),
                          "configuration": {"returnImmediately": true}}}),
        json!({"jsonrpc": "2.0", "id": 8, "method": "SendStreamingMessage",
               "params": {"message": message_10}, "unknown": "ignored by both"}),
    ];
    for body in bodies {
        let (version, named, call) = decoded_fast(&body).expect("the fast path takes it");
        assert_eq!(call, decoded_in_full(&body), "{body}");
        // The version and method the full path reads from the body's `method`.
        assert_eq!(
            (version, named),
            wire_form(body["method"].as_str(), ProtocolVersion::V0_3)
        );
    }
}

#[test]
fn anything_but_a_plain_valid_send_is_left_to_the_full_decoder() {
    let message = json!({"kind": "message", "role": "user", "messageId": "m",
                         "parts": [{"kind": "text", "text": "hi"}]});
    let params = json!({"message": message});
    let declined = [
        json!({"jsonrpc": "1.0", "id": 1, "method": "message/send", "params": params}),
        json!({"jsonrpc": "2.0", "id": null, "method": "message/send", "params": params}),
        json!({"jsonrpc": "2.0", "method": "message/send", "params": params}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": [params]}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "message/send"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
               "params": {"message": {"kind": "message", "role": "robot", "messageId": "m",
                                      "parts": []}}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t"}}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "nope", "params": params}),
        json!({"jsonrpc": "2.0", "id": 1.5, "method": "message/send", "params": params}),
        json!([{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": params}]),
    ];
    for body in declined {
        assert!(decoded_fast(&body).is_none(), "{body}");
    }
    // A member named twice: the full decoder keeps the last, as serde_json's Value
    // does; the fast path does not guess.
    let twice = br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[]}}}"#;
    assert!(decode_send(twice).is_none());
    assert!(decode_send(b"{not json").is_none());
}

#[test]
fn params_before_the_method_are_typed_once_the_method_is_known() {
    let first = br#"{"params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}},"id":3,"jsonrpc":"2.0","method":"message/send"}"#;
    let last = br#"{"jsonrpc":"2.0","id":3,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}}"#;
    let (version, named, call) = decode_send(first).expect("the fast path takes it");
    assert_eq!(
        (version, named),
        (ProtocolVersion::V0_3, Some("message/send"))
    );
    assert_eq!(Some(call), decode_send(last).map(|(_, _, call)| call));
    let value: Value = serde_json::from_slice(first).expect("json");
    assert_eq!(
        decode_send(first).map(|(_, _, call)| call),
        Some(decoded_in_full(&value))
    );
    // An array, an escaped method name and trailing text are left to the full decoder
    // whichever member comes first.
    for declined in [
        &br#"{"params":[{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}],"id":3,"jsonrpc":"2.0","method":"message/send"}"#[..],
        br#"{"jsonrpc":"2.0","id":3,"method":"message\/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}}"#,
        br#"{"jsonrpc":"2.0","id":3,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}} x"#,
        br#"{"jsonrpc":"2.0","id":3,"params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"hi"}]}},"params":{}, "method":"message/send"}"#,
    ] {
        assert!(decode_send(declined).is_none(), "{}", String::from_utf8_lossy(declined));
    }
}

#[tokio::test]
async fn a_body_is_read_whole_whatever_its_frames() {
    use axum::body::Bytes;
    use hyper::body::Frame;

    let frames = |chunks: Vec<Frame<Bytes>>| {
        http_body_util::StreamBody::new(futures::stream::iter(
            chunks.into_iter().map(Ok::<_, std::convert::Infallible>),
        ))
    };
    let one = Bytes::from_static(b"{\"id\":1}");
    let read = super::whole(frames(vec![Frame::data(one.clone())]))
        .await
        .expect("read");
    // One frame is the buffer it came in, not a copy.
    assert_eq!(read.as_ptr(), one.as_ptr());
    let read = super::whole(frames(vec![
        Frame::data(Bytes::new()),
        Frame::data(Bytes::from_static(b"{\"id\"")),
        Frame::trailers(axum::http::HeaderMap::new()),
        Frame::data(Bytes::from_static(b":1")),
        Frame::data(Bytes::from_static(b"}")),
    ]))
    .await
    .expect("read");
    assert_eq!(read, Bytes::from_static(b"{\"id\":1}"));
    let read = super::whole(frames(Vec::new())).await.expect("read");
    assert!(read.is_empty());
}

#[test]
fn a_json_content_type_is_known_in_any_case_and_with_parameters() {
    use axum::http::{HeaderMap, HeaderValue, header::CONTENT_TYPE};

    use super::super::reply::Binding;

    let check = |value: &str| {
        let mut headers = HeaderMap::new();
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_str(value).expect("a header"),
        );
        super::check_content_type(&headers, Binding::JsonRpc)
    };
    for accepted in [
        "application/json",
        "Application/JSON; charset=utf-8",
        " application/json ;charset=UTF-8",
        "application/a2a+json",
        "APPLICATION/VND.API+JSON",
    ] {
        assert_eq!(check(accepted), Ok(()), "{accepted}");
    }
    for refused in [
        "text/plain",
        "application/jsonx",
        "application+json",
        "json",
        "",
    ] {
        let error = check(refused).expect_err(refused);
        assert!(error.contains("is not supported"), "{refused}: {error}");
    }
    let error = super::check_content_type(&HeaderMap::new(), Binding::JsonRpc).expect_err("none");
    assert!(error.contains("no Content-Type"), "{error}");
}

#[test]
fn the_json_rpc_routes_are_told_from_every_other_path() {
    use super::RpcRoute;
    let of = |path| RpcRoute::of(path).map(|(route, name)| (route.0, name));
    assert_eq!(of("/"), Some(("/", None)));
    assert_eq!(of("/agents/echo"), Some(("/agents/{name}", Some("echo"))));
    assert_eq!(of("/agents/echo/"), Some(("/agents/{name}/", Some("echo"))));
    assert_eq!(of("/agents/a%20b"), Some(("/agents/{name}", Some("a%20b"))));
    for other in [
        "",
        "/agents",
        "/agents/",
        "/agents//",
        "/agents/echo/x",
        "/agents/echo//",
        "/agent/echo",
        "//",
        "/x",
    ] {
        assert_eq!(of(other), None, "{other:?}");
    }
}

/// The frames of an SSE response (`framing` over `Bounded`, as `sse` makes them), fed
/// from a channel: where the stream ends for each protocol version, and what `write`
/// is given. (How it ends at a shutdown is
/// `crate::bounded`'s, tested there.)
mod frames {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use axum::body::Bytes;
    use futures::StreamExt as _;
    use tokio::sync::mpsc;

    use super::super::{Bounded, Numbered, framing};
    use crate::a2a::v1::ProtocolVersion;
    use crate::a2a::{StreamEvent, TaskState, TaskStatus, TaskStatusUpdateEvent};
    use crate::ids::{ContextId, TaskId};
    use crate::jsonrpc::JsonRpcError;
    use crate::service::NumberedEventStream;

    type Framing = Box<dyn FnMut(Numbered) -> (Bytes, bool) + Send>;

    /// Sets its flag when dropped: the service's stream let go.
    struct Held(Arc<AtomicBool>);

    impl Drop for Held {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    /// A status update of one task, final when `state` is terminal.
    fn update(state: TaskState) -> StreamEvent {
        let (task, context) = (TaskId::new("t-1"), ContextId::new("c-1"));
        let is_final = state.is_terminal();
        let update = TaskStatusUpdateEvent::new(task, context, TaskStatus::new(state), is_final);
        StreamEvent::StatusUpdate(update)
    }

    fn write(seq: Option<u64>, event: Result<StreamEvent, JsonRpcError>) -> Bytes {
        Bytes::from(match event {
            Ok(StreamEvent::StatusUpdate(update)) => format!("{seq:?} {}", update.status.state),
            Ok(_) => String::from("other"),
            Err(error) => format!("error {}", error.code),
        })
    }

    /// Frames of what is sent on the returned channel, and the flag [`Held`] sets.
    fn fed(
        version: ProtocolVersion,
    ) -> (
        mpsc::UnboundedSender<Numbered>,
        Arc<AtomicBool>,
        Bounded<NumberedEventStream, Framing>,
    ) {
        let (tx, rx) = mpsc::unbounded_channel::<Numbered>();
        let dropped = Arc::new(AtomicBool::new(false));
        let held = Held(Arc::clone(&dropped));
        let events: NumberedEventStream = Box::pin(futures::stream::unfold(
            (rx, held),
            |(mut rx, held)| async move { rx.recv().await.map(|item| (item, (rx, held))) },
        ));
        let framing: Framing = Box::new(framing(version, write));
        let frames = Bounded::new(events, tracing::Span::none(), None, framing);
        (tx, dropped, frames)
    }

    #[tokio::test]
    async fn a_final_event_ends_the_stream_and_lets_the_service_stream_go() {
        let (tx, dropped, mut frames) = fed(ProtocolVersion::V0_3);
        tx.send(Ok((Some(1), update(TaskState::Working))))
            .expect("open");
        tx.send(Ok((Some(2), update(TaskState::Completed))))
            .expect("open");
        tx.send(Ok((Some(3), update(TaskState::Completed))))
            .expect("open");
        assert_eq!(
            frames.next().await.as_deref(),
            Some(&b"Some(1) working"[..])
        );
        assert!(!dropped.load(Ordering::SeqCst));
        assert_eq!(
            frames.next().await.as_deref(),
            Some(&b"Some(2) completed"[..])
        );
        assert!(
            dropped.load(Ordering::SeqCst),
            "released at the final event"
        );
        assert_eq!(frames.next().await, None, "nothing after the final event");
    }

    #[tokio::test]
    async fn a_1_0_stream_ends_at_a_settled_task_and_an_error_ends_any() {
        let task = crate::a2a::Task::new(
            TaskId::new("t-1"),
            ContextId::new("c-1"),
            TaskStatus::new(TaskState::InputRequired),
        );
        let (tx, _, mut frames) = fed(ProtocolVersion::V1_0);
        tx.send(Ok((Some(4), StreamEvent::Task(task.clone()))))
            .expect("open");
        assert_eq!(frames.next().await.as_deref(), Some(&b"other"[..]));
        assert_eq!(frames.next().await, None, "1.0 has no final flag");

        // The same task in 0.3 does not end the stream: its updates follow.
        let (tx, _, mut frames) = fed(ProtocolVersion::V0_3);
        tx.send(Ok((Some(4), StreamEvent::Task(task))))
            .expect("open");
        tx.send(Ok((Some(5), update(TaskState::Working))))
            .expect("open");
        assert_eq!(frames.next().await.as_deref(), Some(&b"other"[..]));
        assert_eq!(
            frames.next().await.as_deref(),
            Some(&b"Some(5) working"[..])
        );

        let (tx, dropped, mut frames) = fed(ProtocolVersion::V0_3);
        tx.send(Err(JsonRpcError::internal_error())).expect("open");
        assert_eq!(frames.next().await.as_deref(), Some(&b"error -32603"[..]));
        assert!(dropped.load(Ordering::SeqCst));
        assert_eq!(frames.next().await, None);
    }
}
