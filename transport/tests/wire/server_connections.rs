//! Connections over a real socket: the header-read timeout, the idle timeout, the
//! connection cap, and streams that live as long as their task and no longer than
//! their client reads.

use crate::mock;

use std::time::Duration;

use agentyard_transport::server::ServerConfig;
use futures::StreamExt as _;
use mock::{TestServer, within};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// Long enough that it never ends a test by itself.
const NEVER: Duration = Duration::from_secs(600);
/// Short enough to keep the tests quick.
const SHORT: Duration = Duration::from_millis(200);

fn address(server: &TestServer) -> String {
    server.base.trim_start_matches("http://").to_owned()
}

fn request(server: &TestServer, keep_alive: bool) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t-1"}})
        .to_string();
    let connection = if keep_alive { "keep-alive" } else { "close" };
    format!(
        "POST /agents/open HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: {connection}\r\n\r\n{body}",
        address(server),
        body.len()
    )
    .into_bytes()
}

/// Reads one whole response (headers and a `Content-Length` body) off `tcp`.
async fn read_response(tcp: &mut TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut buffer = [0_u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())
                        .flatten()
                })
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
        let read = within(tcp.read(&mut buffer))
            .await
            .expect("a readable socket");
        assert!(read > 0, "closed before a whole response: {text:?}");
        bytes.extend_from_slice(&buffer[..read]);
    }
}

/// Waits until the server closes `tcp` (end of file or a reset), draining anything
/// it sends first.
async fn closed_by_server(tcp: &mut TcpStream) {
    let mut buffer = [0_u8; 4096];
    loop {
        match within(tcp.read(&mut buffer)).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

#[tokio::test]
async fn half_a_request_head_is_cut_off_after_the_header_read_timeout() {
    let server = TestServer::start(
        ServerConfig::builder()
            .header_read_timeout(SHORT)
            .idle_timeout(NEVER),
    )
    .await;
    let mut tcp = TcpStream::connect(address(&server)).await.expect("connect");
    tcp.write_all(b"POST /agents/open HT").await.expect("write");
    closed_by_server(&mut tcp).await;
    // A whole request on a fresh connection is still served.
    let mut tcp = TcpStream::connect(address(&server)).await.expect("connect");
    tcp.write_all(&request(&server, false))
        .await
        .expect("write");
    assert!(read_response(&mut tcp).await.starts_with("HTTP/1.1 200"));
    server.shut_down().await.expect("a clean shutdown");
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_header_read_timeout() {
    let server = TestServer::start(
        ServerConfig::builder()
            .header_read_timeout(SHORT)
            .idle_timeout(NEVER),
    )
    .await;
    let mut tcp = TcpStream::connect(address(&server)).await.expect("connect");
    closed_by_server(&mut tcp).await;
    server.shut_down().await.expect("a clean shutdown");
}

#[tokio::test]
async fn a_unary_answer_says_its_length_and_is_not_chunked() {
    let server = TestServer::start(ServerConfig::builder()).await;
    let mut tcp = TcpStream::connect(address(&server)).await.expect("connect");
    tcp.write_all(&request(&server, true)).await.expect("write");
    let response = read_response(&mut tcp).await;
    let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
    assert!(head.starts_with("HTTP/1.1 200"), "{response}");
    let length = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().to_owned())
    });
    assert_eq!(length, Some(body.len().to_string()), "{response}");
    assert!(
        !head.to_ascii_lowercase().contains("transfer-encoding"),
        "{response}"
    );
    server.shut_down().await.expect("a clean shutdown");
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    let server = TestServer::start(
        ServerConfig::builder()
            .header_read_timeout(NEVER)
            .idle_timeout(SHORT),
    )
    .await;
    let mut tcp = TcpStream::connect(address(&server)).await.expect("connect");
    // Kept alive between requests that follow each other...
    for _ in 0..2 {
        tcp.write_all(&request(&server, true)).await.expect("write");
        let response = read_response(&mut tcp).await;
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    }
    // ...and closed once idle.
    closed_by_server(&mut tcp).await;
    server.shut_down().await.expect("a clean shutdown");
}

#[tokio::test]
async fn connections_over_the_cap_get_503_and_the_cap_frees_when_one_closes() {
    let server = TestServer::start(
        ServerConfig::builder()
            .max_connections(2)
            .header_read_timeout(NEVER)
            .idle_timeout(NEVER),
    )
    .await;
    // Two connections hold the cap; the first proves the server took it.
    let mut first = TcpStream::connect(address(&server)).await.expect("connect");
    first
        .write_all(&request(&server, true))
        .await
        .expect("write");
    assert!(read_response(&mut first).await.starts_with("HTTP/1.1 200"));
    let mut second = TcpStream::connect(address(&server)).await.expect("connect");
    second
        .write_all(&request(&server, true))
        .await
        .expect("write");
    assert!(read_response(&mut second).await.starts_with("HTTP/1.1 200"));
    // A third gets 503 with Retry-After and a JSON-RPC body, and is closed.
    let mut third = TcpStream::connect(address(&server)).await.expect("connect");
    third
        .write_all(&request(&server, true))
        .await
        .expect("write");
    let refused = read_response(&mut third).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(
        refused.to_ascii_lowercase().contains("retry-after: 1"),
        "{refused}"
    );
    assert!(refused.contains("max_connections"), "{refused}");
    closed_by_server(&mut third).await;
    // Once one of the two closes, a new connection is served.
    drop(first);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut tcp = TcpStream::connect(address(&server)).await.expect("connect");
        tcp.write_all(&request(&server, false))
            .await
            .expect("write");
        let response = read_response(&mut tcp).await;
        if response.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cap never freed: {response}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(second);
    server.shut_down().await.expect("a clean shutdown");
}

#[tokio::test]
async fn a_stream_outlives_the_connection_timeouts_while_its_task_runs() {
    let server = TestServer::start(
        ServerConfig::builder()
            .header_read_timeout(SHORT)
            .idle_timeout(SHORT)
            .sse_keep_alive(Duration::from_millis(10)),
    )
    .await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/stream",
        "params": {"message": {"kind": "message", "messageId": "m-1", "role": "user",
                               "parts": [{"kind": "text", "text": "forever"}]}}});
    let response = reqwest::Client::new()
        .post(format!("{}/agents/open", server.base))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("the server answers");
    let started = tokio::time::Instant::now();
    let mut body = Box::pin(response.bytes_stream());
    // Keep-alive comments keep coming well past both timeouts.
    while started.elapsed() < SHORT * 3 {
        let chunk = within(body.next())
            .await
            .expect("the stream stays open")
            .expect("a readable chunk");
        assert!(!chunk.is_empty());
    }
    drop(body);
    within(server.service.stream_dropped.notified()).await;
    server.shut_down().await.expect("a clean shutdown");
}

#[tokio::test]
async fn a_stream_whose_client_stops_reading_is_closed_after_the_idle_timeout() {
    let server = TestServer::start(
        ServerConfig::builder()
            .header_read_timeout(NEVER)
            .idle_timeout(SHORT),
    )
    .await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/stream",
        "params": {"message": {"kind": "message", "messageId": "m-1", "role": "user",
                               "parts": [{"kind": "text", "text": "flood"}]}}})
    .to_string();
    let mut tcp = TcpStream::connect(address(&server)).await.expect("connect");
    let head = format!(
        "POST /agents/open HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        address(&server),
        body.len()
    );
    tcp.write_all(head.as_bytes()).await.expect("write");
    // The client reads nothing: the socket buffers fill, the server's writes stall,
    // and the stream is dropped rather than held open for as long as the task runs.
    within(server.service.stream_dropped.notified()).await;
    drop(tcp);
    server.shut_down().await.expect("a clean shutdown");
}
