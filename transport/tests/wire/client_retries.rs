//! The client against a server that says "later": 503 and 429 with `Retry-After`
//! are retried with backoff where a repeat cannot run work twice, with the same
//! `messageId` and `Idempotency-Key` on every attempt of a send; other calls and
//! other failures are not retried.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentyard_transport::a2a::{Message, MessageSendParams, TaskQueryParams};
use agentyard_transport::client::{A2aClient, ClientError, ClientOptions, RetryPolicy};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde_json::{Value, json};

/// What the server saw of each request: the idempotency key and the body.
type Seen = Arc<Mutex<Vec<(Option<String>, Value)>>>;

/// A server answering the first `refusals` requests with `status` (and
/// `Retry-After: retry_after`), then a completed task.
async fn server(refusals: usize, status: StatusCode, retry_after: &'static str) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/",
        axum::routing::post(move |headers: HeaderMap, body: axum::Json<Value>| {
            let log = Arc::clone(&log);
            async move {
                let key = headers
                    .get("idempotency-key")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let count = {
                    let mut log = log.lock().expect("lock");
                    log.push((key, body.0.clone()));
                    log.len()
                };
                if count <= refusals {
                    return (status, [("retry-after", retry_after)], "later").into_response();
                }
                let task = json!({"kind": "task", "id": "t-1", "contextId": "c-1",
                                  "status": {"state": "completed"}});
                axum::Json(json!({"jsonrpc": "2.0", "id": body.0["id"], "result": task}))
                    .into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}/", listener.local_addr().expect("an address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

fn retrying(attempts: u32) -> ClientOptions {
    ClientOptions::new().retry(
        RetryPolicy::new(attempts)
            .base_delay(Duration::from_millis(1))
            .max_delay(Duration::from_secs(2)),
    )
}

#[tokio::test]
async fn a_busy_server_is_asked_again_until_it_answers() {
    let (url, seen) = server(2, StatusCode::SERVICE_UNAVAILABLE, "0").await;
    let client = A2aClient::connect(&url, retrying(3))
        .await
        .expect("a client");
    let task = client
        .get_task(TaskQueryParams::new("t-1"))
        .await
        .expect("answered on the third try");
    assert_eq!(task.id.as_str(), "t-1");
    assert_eq!(seen.lock().expect("lock").len(), 3);
}

#[tokio::test]
async fn every_attempt_of_a_send_has_the_same_message_id_and_idempotency_key() {
    let (url, seen) = server(2, StatusCode::TOO_MANY_REQUESTS, "0").await;
    let client = A2aClient::connect(&url, retrying(3))
        .await
        .expect("a client");
    client
        .send_message(MessageSendParams::new(Message::user_text("once")))
        .await
        .expect("sent");
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 3);
    let first_id = seen[0].1["params"]["message"]["messageId"].clone();
    for (key, body) in &seen {
        assert_eq!(body["params"]["message"]["messageId"], first_id);
        assert_eq!(
            key.as_deref(),
            first_id.as_str(),
            "the key is the messageId"
        );
    }
}

#[tokio::test]
async fn without_retries_a_send_is_tried_once_and_carries_no_key() {
    let (url, seen) = server(1, StatusCode::SERVICE_UNAVAILABLE, "0").await;
    let client = A2aClient::connect(&url, ClientOptions::new())
        .await
        .expect("a client");
    let error = client
        .send_message(MessageSendParams::new(Message::user_text("once")))
        .await
        .expect_err("refused");
    assert_eq!(
        error.status(),
        Some(reqwest::StatusCode::SERVICE_UNAVAILABLE)
    );
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, None);
}

#[tokio::test]
async fn a_retry_after_longer_than_the_cap_is_not_waited_for() {
    let (url, seen) = server(1, StatusCode::TOO_MANY_REQUESTS, "3600").await;
    let client = A2aClient::connect(&url, retrying(5))
        .await
        .expect("a client");
    let error = client
        .get_task(TaskQueryParams::new("t-1"))
        .await
        .expect_err("not retried");
    assert!(matches!(
        error,
        ClientError::Http {
            retry_after_secs: Some(3600),
            ..
        }
    ));
    assert_eq!(seen.lock().expect("lock").len(), 1);
}

#[tokio::test]
async fn other_errors_are_not_retried() {
    let (url, seen) = server(1, StatusCode::BAD_REQUEST, "0").await;
    let client = A2aClient::connect(&url, retrying(5))
        .await
        .expect("a client");
    client
        .get_task(TaskQueryParams::new("t-1"))
        .await
        .expect_err("a 400 stands");
    assert_eq!(seen.lock().expect("lock").len(), 1);
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported_as_a_sentence() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}/", listener.local_addr().expect("an address"));
    drop(listener);
    let client = A2aClient::connect(&url, retrying(2))
        .await
        .expect("a client");
    let error = client
        .get_task(TaskQueryParams::new("t-1"))
        .await
        .expect_err("nobody listens");
    let text = error.to_string();
    assert!(
        text.starts_with("could not connect to http://127.0.0.1:"),
        "{text}"
    );
}
