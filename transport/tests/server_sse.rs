//! SSE over a real socket: framing, the final flag, errors, disconnects, keep-alive
//! and graceful shutdown.

#[path = "server_support/mock.rs"]
mod mock;

use std::time::Duration;

use agentyard_transport::server::{EXTENSIONS_HEADER, ServerConfig};
use axum::body::Bytes;
use futures::StreamExt as _;
use futures::stream::BoxStream;
use mock::{OPTIONAL_EXT, TestServer, within};
use serde_json::{Value, json};

fn stream_request(id: Value, method: &str, text: &str) -> String {
    let params = if method == "tasks/resubscribe" {
        json!({"id": text})
    } else {
        json!({"message": {"kind": "message", "messageId": "m-1", "role": "user",
                           "parts": [{"kind": "text", "text": text}]}})
    };
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

async fn open_stream(server: &TestServer, agent: &str, body: String) -> reqwest::Response {
    let response = reqwest::Client::new()
        .post(format!("{}/agents/{agent}", server.base))
        .header("content-type", "application/json")
        .header(EXTENSIONS_HEADER, OPTIONAL_EXT)
        .body(body)
        .send()
        .await
        .expect("the server answers");
    assert_eq!(response.status(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    response
}

/// The data of each event of a complete SSE body, asserting that every event has
/// exactly one `data:` line; comment lines (keep-alives) are skipped.
fn events(body: &str) -> Vec<Value> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .filter_map(|block| {
            let data: Vec<&str> = block
                .lines()
                .filter(|line| !line.starts_with(':'))
                .map(|line| {
                    line.strip_prefix("data: ")
                        .unwrap_or_else(|| panic!("not a data line: {line:?}"))
                })
                .collect();
            match data.as_slice() {
                [] => None,
                [one] => Some(serde_json::from_str(one).unwrap_or_else(|error| {
                    panic!("data is not one whole JSON document ({error}): {one}")
                })),
                more => panic!("an event with {} data lines: {block:?}", more.len()),
            }
        })
        .collect()
}

/// Reads the stream until `count` complete events and returns them with the rest
/// of the body, leaving the connection open until that is dropped.
async fn first_events(
    response: reqwest::Response,
    count: usize,
) -> (Vec<Value>, BoxStream<'static, reqwest::Result<Bytes>>) {
    let mut body = response.bytes_stream().boxed();
    let mut text = String::new();
    loop {
        let complete = text.matches("\n\n").count();
        if complete >= count {
            let end = text
                .match_indices("\n\n")
                .nth(count - 1)
                .map_or(0, |(at, _)| at);
            return (events(&text[..end]), body);
        }
        let chunk = within(body.next())
            .await
            .expect("the stream ended early")
            .expect("a readable chunk");
        text.push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
    }
}

#[tokio::test]
async fn every_data_line_is_a_whole_response_with_the_id_and_the_stream_closes_after_final() {
    let server = TestServer::start(ServerConfig::builder()).await;
    let response = open_stream(
        &server,
        "open",
        stream_request(json!("stream-1"), "message/stream", "go"),
    )
    .await;
    assert_eq!(
        response
            .headers()
            .get(EXTENSIONS_HEADER)
            .and_then(|value| value.to_str().ok()),
        Some(OPTIONAL_EXT)
    );
    // The body ends: the server closed the stream by itself.
    let body = within(response.text()).await.expect("a complete body");
    let events = events(&body);
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event["result"]["kind"].as_str().unwrap_or_default())
        .collect();
    // The mock sends one more event after the final one; it must not arrive.
    assert_eq!(
        kinds,
        ["task", "status-update", "artifact-update", "status-update"]
    );
    for event in &events {
        assert_eq!(event["jsonrpc"], "2.0", "{event}");
        assert_eq!(event["id"], "stream-1", "{event}");
        assert!(event.get("error").is_none(), "{event}");
    }
    assert_eq!(events[3]["result"]["final"], true);
    assert_eq!(events[3]["result"]["status"]["state"], "completed");
    assert_eq!(
        events[0]["result"]["metadata"]["extensions"],
        json!([OPTIONAL_EXT])
    );
    within(server.service.stream_dropped.notified()).await;
    server.shut_down().await.expect("a clean shutdown");
}

#[tokio::test]
async fn resubscribe_streams_with_a_numeric_id() {
    let server = TestServer::start(ServerConfig::builder()).await;
    let response = open_stream(
        &server,
        "open",
        stream_request(json!(42), "tasks/resubscribe", "t-9"),
    )
    .await;
    let events = events(&within(response.text()).await.expect("a complete body"));
    assert_eq!(events.len(), 2, "{events:#?}");
    assert!(events.iter().all(|event| event["id"] == 42));
    assert_eq!(events[0]["result"]["taskId"], "t-9");
    assert_eq!(events[1]["result"]["final"], true);
}

#[tokio::test]
async fn an_error_item_is_sent_as_an_error_response_and_ends_the_stream() {
    let server = TestServer::start(ServerConfig::builder()).await;
    let response = open_stream(
        &server,
        "open",
        stream_request(json!(7), "message/stream", "error"),
    )
    .await;
    let events = events(&within(response.text()).await.expect("a complete body"));
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0]["result"]["kind"], "task");
    assert_eq!(events[1]["id"], 7);
    assert_eq!(events[1]["error"]["code"], -32603);
    assert_eq!(events[1]["error"]["message"], "the agent crashed");
    assert!(events[1].get("result").is_none());
}

#[tokio::test]
async fn the_final_event_closes_the_stream_even_if_the_service_keeps_it_open() {
    let server = TestServer::start(ServerConfig::builder()).await;
    let response = open_stream(
        &server,
        "open",
        stream_request(json!(1), "message/stream", "final-then-hang"),
    )
    .await;
    let events = events(&within(response.text()).await.expect("a complete body"));
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[1]["result"]["final"], true);
    within(server.service.stream_dropped.notified()).await;
}

#[tokio::test]
async fn a_client_that_disconnects_drops_the_service_stream() {
    let server = TestServer::start(ServerConfig::builder()).await;
    let response = open_stream(
        &server,
        "open",
        stream_request(json!(1), "message/stream", "forever"),
    )
    .await;
    let (events, connection) = first_events(response, 1).await;
    assert_eq!(events[0]["result"]["kind"], "task");
    drop(connection);
    within(server.service.stream_dropped.notified()).await;
    server.shut_down().await.expect("a clean shutdown");
}

#[tokio::test]
async fn an_idle_stream_gets_keep_alive_comments() {
    let server =
        TestServer::start(ServerConfig::builder().sse_keep_alive(Duration::from_millis(20))).await;
    let response = open_stream(
        &server,
        "open",
        stream_request(json!(1), "message/stream", "forever"),
    )
    .await;
    let mut body = Box::pin(response.bytes_stream());
    let mut text = String::new();
    while !text.lines().any(|line| line.starts_with(':')) {
        let chunk = within(body.next())
            .await
            .expect("the stream stays open")
            .expect("a readable chunk");
        text.push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
    }
    assert_eq!(events(&text)[0]["result"]["kind"], "task");
}

#[tokio::test]
async fn shutdown_ends_open_streams_and_serve_returns() {
    let server = TestServer::start(ServerConfig::builder()).await;
    let response = open_stream(
        &server,
        "open",
        stream_request(json!(1), "message/stream", "forever"),
    )
    .await;
    let mut body = Box::pin(response.bytes_stream());
    let first = within(body.next()).await.expect("a first event");
    assert!(first.is_ok());
    let service = std::sync::Arc::clone(&server.service);
    server.shut_down().await.expect("a clean shutdown");
    // The rest of the body ends instead of hanging.
    while let Some(chunk) = within(body.next()).await {
        if chunk.is_err() {
            break;
        }
    }
    within(service.stream_dropped.notified()).await;
}
