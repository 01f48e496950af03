//! Streams that resume: every SSE event of `message/stream` and `tasks/resubscribe`
//! carries an `id:` (its number in the task's event log), and a `tasks/resubscribe`
//! with `Last-Event-ID` gets every event after it, then the live ones: no gap, no
//! duplicate; a task that ended meanwhile replays to its final event.

use agentyard_tests::http::{TestEdge, text_message};
use agentyard_tests::{PATIENCE, eventually};
use serde_json::{Value, json};

fn stream_request(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": "r-1", "method": method, "params": params})
}

fn number(id: Option<&String>) -> u64 {
    id.expect("every event has an id")
        .parse()
        .expect("the id is a number")
}

#[tokio::test]
async fn every_stream_event_has_an_id_and_a_resubscribe_replays_after_any_of_them() {
    let edge = TestEdge::start().await;
    let streamed = edge
        .sse_numbered(
            "chunks",
            stream_request("message/stream", json!({"message": text_message("count")})),
            &[],
        )
        .await;
    assert!(
        streamed.len() >= 8,
        "task, 3 working, 3 chunks, final: {streamed:?}"
    );
    let ids: Vec<u64> = streamed.iter().map(|(id, _)| number(id.as_ref())).collect();
    assert_eq!(
        ids[0], 0,
        "the task as submitted comes before every logged event"
    );
    assert!(
        ids.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "ids count up one by one, with no gap: {ids:?}"
    );
    let task_id = streamed[0].1["result"]["id"]
        .as_str()
        .expect("the first event is the task")
        .to_owned();
    let results = |events: &[(Option<String>, Value)]| -> Vec<Value> {
        events
            .iter()
            .map(|(_, data)| data["result"].clone())
            .collect()
    };
    for after in [0_u64, 1, 4, ids[ids.len() - 2]] {
        let resumed = edge
            .sse_numbered(
                "chunks",
                stream_request("tasks/resubscribe", json!({"id": task_id})),
                &[("Last-Event-ID", &after.to_string())],
            )
            .await;
        let expected: Vec<(Option<String>, Value)> = streamed
            .iter()
            .filter(|(id, _)| number(id.as_ref()) > after)
            .cloned()
            .collect();
        assert_eq!(
            resumed.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
            expected
                .iter()
                .map(|(id, _)| id.clone())
                .collect::<Vec<_>>(),
            "after {after}: every later event, once, in order"
        );
        assert_eq!(results(&resumed), results(&expected), "after {after}");
        assert_eq!(
            resumed
                .last()
                .map(|(_, data)| data["result"]["final"].clone()),
            Some(json!(true)),
            "an ended task replays to its final event"
        );
    }
    // After the last event there is nothing more to send.
    let last = ids[ids.len() - 1].to_string();
    let nothing = edge
        .sse_numbered(
            "chunks",
            stream_request("tasks/resubscribe", json!({"id": task_id})),
            &[("Last-Event-ID", &last)],
        )
        .await;
    assert!(nothing.is_empty(), "{nothing:?}");
    edge.stop().await;
}

#[tokio::test]
async fn a_client_that_reconnects_gets_what_happened_while_it_was_away_then_the_rest() {
    let edge = TestEdge::start().await;
    let sent = edge
        .rpc(
            "gated",
            "message/send",
            json!({"message": text_message("job"), "configuration": {"blocking": false}}),
        )
        .await;
    let task_id = sent["result"]["id"].as_str().expect("a task").to_owned();
    // The task is working (past `submitted`) before the client looks.
    eventually(PATIENCE, "the task works", || {
        let edge = &edge;
        let task_id = task_id.clone();
        async move {
            let got = edge.rpc("gated", "tasks/get", json!({"id": task_id})).await;
            (got["result"]["status"]["state"] == "working").then_some(())
        }
    })
    .await;
    // A resubscribe without the header starts with the task, numbered with the last
    // event it reflects; the client goes away after reading it.
    let request = stream_request("tasks/resubscribe", json!({"id": task_id}));
    let http = edge.http().clone();
    let mut response = http
        .post(edge.agent_url("gated"))
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(request.to_string())
        .send()
        .await
        .expect("the stream opens");
    let mut head = String::new();
    while !head.contains("\n\n") {
        let chunk = response.chunk().await.expect("a chunk").expect("more");
        head.push_str(&String::from_utf8_lossy(&chunk));
    }
    drop(response);
    let first = agentyard_tests::http::sse_events(&head);
    let seen = number(first[0].0.as_ref());
    assert!(seen >= 1, "the working update is logged: {first:?}");
    assert_eq!(first[0].1["result"]["kind"], "task");

    // Meanwhile the task finishes.
    edge.open_gate(1);
    eventually(PATIENCE, "the task ends", || {
        let edge = &edge;
        let task_id = task_id.clone();
        async move {
            let got = edge.rpc("gated", "tasks/get", json!({"id": task_id})).await;
            (got["result"]["status"]["state"] == "completed").then_some(())
        }
    })
    .await;
    let resumed = edge
        .sse_numbered("gated", request, &[("Last-Event-ID", &seen.to_string())])
        .await;
    let ids: Vec<u64> = resumed.iter().map(|(id, _)| number(id.as_ref())).collect();
    assert_eq!(ids.first(), Some(&(seen + 1)), "no gap: {resumed:?}");
    let last = &resumed.last().expect("the final event").1["result"];
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], "completed");
    assert_eq!(last["status"]["message"]["parts"][0]["text"], "done: job");
    edge.stop().await;
}

#[tokio::test]
async fn a_last_event_id_that_is_not_a_number_is_invalid_params() {
    let edge = TestEdge::start().await;
    let answer = edge
        .sse_numbered(
            "echo",
            stream_request("tasks/resubscribe", json!({"id": "whatever"})),
            &[("Last-Event-ID", "yesterday")],
        )
        .await;
    let error = &answer.first().expect("one error event").1["error"];
    assert_eq!(error["code"], -32602, "{answer:?}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("Last-Event-ID")),
        "{error}"
    );
    edge.stop().await;
}
