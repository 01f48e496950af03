//! The client against a server whose answers do not end, or end too late: it reads
//! at most its response limit of an answer (and of each stream event), and only the
//! start of an error's body, so another party's server cannot fill this process's
//! memory.

use std::convert::Infallible;
use std::time::Duration;

use agentyard_transport::a2a::{Message, MessageSendParams, TaskQueryParams};
use agentyard_transport::client::{A2aClient, ClientError, ClientOptions};
use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use serde_json::{Value, json};

/// Long enough for any of these exchanges on loopback; a client that kept reading
/// an endless answer would never finish.
const PATIENCE: Duration = Duration::from_secs(20);

/// The limit most tests set.
const LIMIT: usize = 4096;

fn task_answer(id: &Value, padding: usize) -> Vec<u8> {
    let task = json!({"kind": "task", "id": "t-1", "contextId": "c-1",
                      "status": {"state": "completed"},
                      "metadata": {"padding": "x".repeat(padding)}});
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": task})).expect("JSON")
}

/// Bytes that never end, in chunks of `chunk`.
fn endless(chunk: &'static str) -> Body {
    Body::from_stream(futures::stream::repeat(Ok::<_, Infallible>(
        Bytes::from_static(chunk.as_bytes()),
    )))
}

/// A server answering `POST /{case}`:
/// - `declared`: a task padded past [`LIMIT`], with its length declared;
/// - `chunked`: the same, in small chunks without a length;
/// - `small`: a task well within the limit;
/// - `endless`: a body that never ends;
/// - `error`: a 500 whose body never ends;
/// - `stream`: an SSE stream whose second event never ends;
///
/// and `GET /big.json`: a card padded past [`LIMIT`], whose endpoint is `small`.
async fn server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    let card = json!({
        "name": "big", "description": "x".repeat(LIMIT), "url": format!("{url}/small"),
        "version": "1", "protocolVersion": "0.3.0", "capabilities": {},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": []
    });
    let app = axum::Router::new()
        .route(
            "/big.json",
            axum::routing::get(move || async move { axum::Json(card) }),
        )
        .route(
            "/{case}",
            axum::routing::post(
                |axum::extract::Path(case): axum::extract::Path<String>,
                 body: axum::Json<Value>| async move {
                    let id = body.0["id"].clone();
                    match case.as_str() {
                        "declared" => {
                            let bytes = task_answer(&id, LIMIT);
                            ([(header::CONTENT_TYPE, "application/json")], bytes).into_response()
                        }
                        "chunked" => {
                            let bytes = task_answer(&id, LIMIT);
                            let chunks: Vec<Result<Vec<u8>, Infallible>> =
                                bytes.chunks(100).map(|c| Ok(c.to_vec())).collect();
                            Response::builder()
                                .header(header::CONTENT_TYPE, "application/json")
                                .body(Body::from_stream(futures::stream::iter(chunks)))
                                .expect("a response")
                        }
                        "small" => {
                            let bytes = task_answer(&id, 100);
                            ([(header::CONTENT_TYPE, "application/json")], bytes).into_response()
                        }
                        "endless" => Response::builder()
                            .header(header::CONTENT_TYPE, "application/json")
                            .body(endless(
                                "{\"padding\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\", ",
                            ))
                            .expect("a response"),
                        "error" => Response::builder()
                            .status(StatusCode::INTERNAL_SERVER_ERROR)
                            .header(header::CONTENT_TYPE, "text/plain")
                            .body(endless("the server broke, "))
                            .expect("a response"),
                        "stream" => {
                            let working = json!({"jsonrpc": "2.0", "id": id, "result": {
                            "kind": "status-update", "taskId": "t-1", "contextId": "c-1",
                            "status": {"state": "working"}, "final": false}});
                            let first = Bytes::from(format!("data: {working}\n\n"));
                            let rest = futures::stream::repeat(Bytes::from_static(
                                b"data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
                            ));
                            let body = futures::stream::once(async { first })
                                .chain(rest)
                                .map(Ok::<_, Infallible>);
                            Response::builder()
                                .header(header::CONTENT_TYPE, "text/event-stream")
                                .body(Body::from_stream(body))
                                .expect("a response")
                        }
                        _ => StatusCode::NOT_FOUND.into_response(),
                    }
                },
            ),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

async fn client(base: &str, case: &str, options: ClientOptions) -> A2aClient {
    A2aClient::connect(&format!("{base}/{case}"), options)
        .await
        .expect("a client")
}

async fn get_task(client: &A2aClient) -> Result<agentyard_transport::a2a::Task, ClientError> {
    tokio::time::timeout(PATIENCE, client.get_task(TaskQueryParams::new("t-1")))
        .await
        .expect("the call ends")
}

#[tokio::test]
async fn an_answer_past_the_limit_is_refused_whether_its_length_is_declared_or_not() {
    let base = server().await;
    for case in ["declared", "chunked"] {
        let limited = ClientOptions::new().response_limit(LIMIT);
        let error = get_task(&client(&base, case, limited).await)
            .await
            .expect_err("too large");
        match &error {
            ClientError::TooLarge { url, limit } => {
                assert_eq!(*limit, LIMIT);
                assert!(url.ends_with(case), "{url}");
            }
            other => panic!("{case}: {other:?}"),
        }
        assert!(error.to_string().contains("4096 bytes"), "{error}");
        // The same answer is read whole by a client with the default limit.
        let task = get_task(&client(&base, case, ClientOptions::new()).await)
            .await
            .expect("within 16 MiB");
        assert_eq!(task.id.as_str(), "t-1");
    }
    let small = client(&base, "small", ClientOptions::new().response_limit(LIMIT)).await;
    assert_eq!(get_task(&small).await.expect("small").id.as_str(), "t-1");
}

#[tokio::test]
async fn a_card_past_the_limit_is_refused_too() {
    let base = server().await;
    let card = format!("{base}/big.json");
    let limited = ClientOptions::new().response_limit(LIMIT);
    let error = tokio::time::timeout(PATIENCE, A2aClient::connect(&card, limited))
        .await
        .expect("the fetch ends")
        .expect_err("too large");
    match &error {
        ClientError::TooLarge { url, limit } => {
            assert_eq!(*limit, LIMIT);
            assert!(url.ends_with("/big.json"), "{url}");
        }
        other => panic!("{other:?}"),
    }
    // Within the default limit the card is read, and its endpoint answers.
    let client = A2aClient::connect(&card, ClientOptions::new())
        .await
        .expect("a client from the card");
    assert_eq!(get_task(&client).await.expect("small").id.as_str(), "t-1");
}

#[tokio::test]
async fn an_answer_that_never_ends_is_cut_at_the_default_limit() {
    let base = server().await;
    let error = get_task(&client(&base, "endless", ClientOptions::new()).await)
        .await
        .expect_err("never ends");
    assert!(
        matches!(error, ClientError::TooLarge { limit, .. }
            if limit == agentyard_transport::client::DEFAULT_RESPONSE_LIMIT),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_error_answer_that_never_ends_is_read_only_for_its_message() {
    let base = server().await;
    let error = get_task(&client(&base, "error", ClientOptions::new()).await)
        .await
        .expect_err("a 500");
    match error {
        ClientError::Http {
            status, message, ..
        } => {
            assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
            assert!(message.starts_with("the server broke"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_stream_event_past_the_limit_ends_the_stream() {
    let base = server().await;
    let client = client(&base, "stream", ClientOptions::new().response_limit(LIMIT)).await;
    let events: Vec<_> = tokio::time::timeout(PATIENCE, async {
        client
            .send_message_stream(MessageSendParams::new(Message::user_text("hi")))
            .await
            .expect("the stream opens")
            .collect()
            .await
    })
    .await
    .expect("the stream ends");
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events[0].is_ok(), "{:?}", events[0]);
    assert!(
        matches!(&events[1], Err(ClientError::TooLarge { limit, .. }) if *limit == LIMIT),
        "{:?}",
        events[1]
    );
}
