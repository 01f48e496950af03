use futures::StreamExt as _;
use serde_json::json;

use super::*;
use crate::jsonrpc::ErrorCode;

/// An SSE body delivered in the given chunks, read as the client reads it.
async fn read(chunks: &[&str], id: RequestId) -> Vec<Result<StreamEvent, ClientError>> {
    read_within(chunks, id, DEFAULT_RESPONSE_LIMIT).await
}

/// [`read`] with `limit` bytes to an event.
async fn read_within(
    chunks: &[&str],
    id: RequestId,
    limit: usize,
) -> Vec<Result<StreamEvent, ClientError>> {
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = chunks
        .iter()
        .map(|chunk| Ok(chunk.as_bytes().to_vec()))
        .collect();
    sse::events(
        futures::stream::iter(chunks),
        id,
        ProtocolVersion::V0_3,
        |error| ClientError::Protocol(format!("test transport: {error}")),
        String::from("http://peer.test/"),
        limit,
    )
    .collect()
    .await
}

#[tokio::test]
async fn an_event_past_the_limit_ends_the_stream_and_smaller_ones_do_not() {
    let working = format!("data: {}\n\n", status_line(1, "working", false));
    let limit = working.len() + 16;
    // Twenty events, each under the limit, far more than it together.
    let many: Vec<&str> = std::iter::repeat_n(working.as_str(), 20).collect();
    let events = read_within(&many, RequestId::Number(1), limit).await;
    assert_eq!(events.len(), 20);
    assert!(events.iter().all(Result::is_ok), "{events:?}");

    // One event that never ends: data lines, no blank one, in small chunks.
    let endless = format!("data: {}\n", "x".repeat(64));
    let chunks: Vec<&str> = std::iter::once(working.as_str())
        .chain(std::iter::repeat_n(endless.as_str(), 1_000))
        .collect();
    let events = read_within(&chunks, RequestId::Number(1), limit).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events[0].is_ok());
    assert!(
        matches!(&events[1], Err(ClientError::TooLarge { url, limit: l })
            if url == "http://peer.test/" && *l == limit),
        "{:?}",
        events[1]
    );
}

fn status_line(id: i64, state: &str, last: bool) -> String {
    let result = json!({"kind": "status-update", "taskId": "t", "contextId": "c",
                        "status": {"state": state}, "final": last});
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

#[tokio::test]
async fn sse_events_split_anywhere_are_read_whole() {
    let body = format!(
        ": keep-alive\n\ndata: {}\n\ndata: {}\n\n",
        status_line(1, "working", false),
        status_line(1, "completed", true)
    );
    // Every split point, including inside a line and between the two newlines.
    for at in 1..body.len() {
        let events = read(&[&body[..at], &body[at..]], RequestId::Number(1)).await;
        let states: Vec<String> = events
            .iter()
            .map(|event| match event {
                Ok(StreamEvent::StatusUpdate(update)) => update.status.state.to_string(),
                other => panic!("split at {at}: {other:?}"),
            })
            .collect();
        assert_eq!(states, ["working", "completed"], "split at {at}");
    }
}

#[tokio::test]
async fn sse_with_crlf_line_endings_is_read() {
    let body = format!("data: {}\r\n\r\n", status_line(3, "completed", true));
    let events = read(&[&body], RequestId::Number(3)).await;
    assert!(
        matches!(events.as_slice(), [Ok(event)] if event.is_final()),
        "{events:?}"
    );
}

#[tokio::test]
async fn the_stream_ends_after_the_final_event_whatever_follows() {
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        status_line(1, "completed", true),
        status_line(1, "working", false)
    );
    let events = read(&[&body], RequestId::Number(1)).await;
    assert_eq!(events.len(), 1, "{events:?}");
}

#[tokio::test]
async fn an_error_response_ends_the_stream_as_a_json_rpc_error() {
    let error = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "gone"}});
    let body = format!(
        "data: {error}\n\ndata: {}\n\n",
        status_line(1, "working", false)
    );
    let events = read(&[&body], RequestId::Number(1)).await;
    match events.as_slice() {
        [Err(ClientError::JsonRpc(error))] => {
            assert_eq!(error.error_code(), Some(ErrorCode::TaskNotFound));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_event_for_another_request_is_a_protocol_violation() {
    let body = format!("data: {}\n\n", status_line(2, "working", false));
    let events = read(&[&body], RequestId::Number(1)).await;
    let [Err(ClientError::Protocol(message))] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert!(message.contains("id 2"), "{message}");
}

#[tokio::test]
async fn data_that_is_not_a_stream_event_is_a_decode_error() {
    let not_json = read(&["data: {oops\n\n"], RequestId::Number(1)).await;
    assert!(
        matches!(not_json.as_slice(), [Err(ClientError::Decode { .. })]),
        "{not_json:?}"
    );
    let wrong_kind = json!({"jsonrpc": "2.0", "id": 1, "result": {"kind": "nope"}});
    let events = read(&[&format!("data: {wrong_kind}\n\n")], RequestId::Number(1)).await;
    assert!(
        matches!(events.as_slice(), [Err(ClientError::Decode { .. })]),
        "{events:?}"
    );
}

#[test]
fn card_urls_are_told_apart_from_endpoints() {
    assert!(is_card_url("http://h/.well-known/agent-card.json"));
    assert!(is_card_url("http://h/agents/a/.well-known/agent.json?x=1"));
    assert!(!is_card_url("http://h/agents/a"));
    assert!(!is_card_url("http://h/"));
}

#[test]
fn echoed_extensions_are_split_and_trimmed() {
    let mut headers = HeaderMap::new();
    headers.append(EXTENSIONS_HEADER, " urn:a , urn:b,".parse().unwrap());
    headers.append(EXTENSIONS_HEADER, "urn:c".parse().unwrap());
    assert_eq!(
        echoed(&headers, ProtocolVersion::V0_3),
        ["urn:a", "urn:b", "urn:c"]
    );
}

#[test]
fn a_null_id_is_accepted_only_on_error_responses() {
    let sent = RequestId::Number(4);
    let error = JsonRpcResponse::<Value>::error(
        RequestId::Null,
        crate::jsonrpc::JsonRpcError::parse_error(),
    );
    assert!(check_id(&error, &sent).is_ok());
    let success = JsonRpcResponse::success(RequestId::Null, Value::Null);
    assert!(matches!(
        check_id(&success, &sent),
        Err(ClientError::Protocol(_))
    ));
    let success = JsonRpcResponse::success(RequestId::Number(4), Value::Null);
    assert!(check_id(&success, &sent).is_ok());
}

#[test]
fn client_auth_debug_hides_secrets() {
    let options = ClientOptions::new().api_key("X-API-Key", "k-secret");
    assert!(!format!("{options:?}").contains("k-secret"));
    let options = ClientOptions::new().bearer_token("t-secret");
    assert!(!format!("{options:?}").contains("t-secret"));
}
