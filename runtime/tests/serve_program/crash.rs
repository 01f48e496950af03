//! The crash test: `agentyard serve` on a data directory acknowledges sends (some
//! done, some waiting for input, some running, one streamed), is killed with SIGKILL,
//! and starts again on the same data: every acknowledged task is there in the right
//! state (running ones `failed` because the server restarted), idempotency keys still
//! deduplicate, a waiting task takes its answer, and a resubscribe with
//! `Last-Event-ID` replays the rest of a stream to its final event.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{PATIENCE, Running, block_on, start, temp_config};

fn call(running: &Running, agent: &str, body: &Value, key: Option<&str>) -> Value {
    let url = format!("{}/agents/{agent}", running.base);
    let body = body.to_string();
    let key = key.map(str::to_owned);
    block_on(async move {
        let mut request = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .timeout(Duration::from_secs(10))
            .body(body);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        request
            .send()
            .await
            .expect("the server answers")
            .json()
            .await
            .expect("a JSON body")
    })
}

fn send(text: &str, blocking: bool, task_id: Option<&str>) -> Value {
    let mut message = json!({
        "kind": "message", "role": "user", "messageId": uuid(),
        "parts": [{"kind": "text", "text": text}],
    });
    if let Some(task_id) = task_id {
        message["taskId"] = json!(task_id);
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
        "params": {"message": message, "configuration": {"blocking": blocking}}})
}

fn uuid() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    format!(
        "m-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// The task id of a `message/send` answer (a task, or a message naming its task).
fn task_id_of(answer: &Value) -> String {
    let result = &answer["result"];
    result["taskId"]
        .as_str()
        .or_else(|| result["id"].as_str())
        .unwrap_or_else(|| panic!("no task in {answer}"))
        .to_owned()
}

fn get(running: &Running, agent: &str, task_id: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": task_id}});
    call(running, agent, &body, None)["result"].clone()
}

fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or("none")
}

fn until_state(running: &Running, agent: &str, task_id: &str, want: &str) {
    let deadline = Instant::now() + PATIENCE;
    while state(&get(running, agent, task_id)) != want {
        assert!(Instant::now() < deadline, "{task_id} never {want}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Opens an SSE call in a thread of its own and sends each event's `id:` and data
/// down the channel.
fn numbered_stream(
    url: String,
    body: Value,
    last_event_id: Option<u64>,
) -> mpsc::Receiver<(Option<u64>, Value)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        block_on(async move {
            let mut request = reqwest::Client::new()
                .post(url)
                .header("content-type", "application/json")
                .header("accept", "text/event-stream")
                .body(body.to_string());
            if let Some(id) = last_event_id {
                request = request.header("Last-Event-ID", id.to_string());
            }
            let Ok(mut response) = request.send().await else {
                return;
            };
            let mut pending = String::new();
            while let Ok(Some(chunk)) = response.chunk().await {
                pending.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = pending.find("\n\n") {
                    let event: String = pending.drain(..end + 2).collect();
                    let id = event
                        .lines()
                        .find_map(|line| line.strip_prefix("id:"))
                        .and_then(|id| id.trim().parse().ok());
                    let data = event
                        .lines()
                        .find_map(|line| line.strip_prefix("data:"))
                        .and_then(|data| serde_json::from_str(data.trim()).ok());
                    if let Some(data) = data
                        && tx.send((id, data)).is_err()
                    {
                        return;
                    }
                }
            }
        });
    });
    rx
}

/// The default store, the journal.
#[test]
fn after_kill_9_every_acknowledged_task_is_there_in_its_state() {
    crash_and_restart("journal", None);
}

#[test]
fn after_kill_9_the_embedded_sqlite_store_has_every_acknowledged_task_in_its_state() {
    let config = temp_config("embedded.toml", "[store]\nkind = \"embedded\"\n");
    crash_and_restart("embedded", Some(config.to_str().expect("utf-8")));
}

/// The crash test on the store `kind` (its config file, if the default is not it).
fn crash_and_restart(kind: &str, config: Option<&str>) {
    let data = std::env::temp_dir().join(format!("agentyard-crash-{kind}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let dir = data.to_str().expect("utf-8").to_owned();
    let mut args = vec!["--data-dir", &dir];
    if let Some(config) = config {
        args.extend(["--config", config]);
    }
    let mut first = start(&args, &[]);
    assert!(
        first
            .banner
            .join("\n")
            .contains(&format!("{kind}, in {dir}")),
        "{:?}",
        first.banner
    );

    // Done: three keyed echoes.
    let mut done = Vec::new();
    for n in 0..3 {
        let key = format!("key-{n}");
        let answer = call(
            &first,
            "echo",
            &send(&format!("hi {n}"), true, None),
            Some(&key),
        );
        done.push((key, task_id_of(&answer)));
    }
    // Waiting for input: two asks.
    let mut waiting = Vec::new();
    for _ in 0..2 {
        let answer = call(&first, "ask", &send("hello", true, None), None);
        assert_eq!(state(&answer["result"]), "input-required", "{answer}");
        waiting.push(task_id_of(&answer));
    }
    // Running: two long countdowns, not waited for.
    let mut running = Vec::new();
    for _ in 0..2 {
        let answer = call(&first, "countdown", &send("600", false, None), None);
        running.push(task_id_of(&answer));
    }
    for task_id in &running {
        until_state(&first, "countdown", task_id, "working");
    }
    // Streamed: a countdown followed over SSE until its first artifact chunk.
    let stream_body = json!({"jsonrpc": "2.0", "id": "s", "method": "message/stream",
        "params": {"message": {"kind": "message", "role": "user", "messageId": uuid(),
            "parts": [{"kind": "text", "text": "600"}]}}});
    let events = numbered_stream(
        format!("{}/agents/countdown", first.base),
        stream_body,
        None,
    );
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|(_, data): &(Option<u64>, Value)| data["result"]["kind"] == "artifact-update")
    {
        seen.push(events.recv_timeout(PATIENCE).expect("a stream event"));
    }
    drop(events);
    let streamed = seen[0].1["result"]["id"]
        .as_str()
        .expect("the stream starts with the task")
        .to_owned();
    let last_seen = seen.last().and_then(|(id, _)| *id).expect("numbered");
    assert!(seen.iter().all(|(id, _)| id.is_some()), "{seen:?}");

    // SIGKILL: no drain, no goodbye.
    first.child.kill().expect("kill -9");
    first.child.wait().expect("reaped");
    drop(first);

    let second = start(&args, &[]);
    let banner = second.banner.join("\n");
    assert!(
        banner.contains("3 task(s) cut off by the last stop (now failed) and 2 waiting"),
        "{banner}"
    );
    // Done tasks are there, and their keys still answer with them.
    for (n, (key, task_id)) in done.iter().enumerate() {
        let task = get(&second, "echo", task_id);
        assert_eq!(state(&task), "completed", "{task}");
        let again = call(
            &second,
            "echo",
            &send(&format!("hi {n}"), true, None),
            Some(key),
        );
        assert_eq!(
            &task_id_of(&again),
            task_id,
            "the key deduplicates after a restart"
        );
    }
    // Running tasks ended failed, saying why.
    for task_id in running.iter().chain([&streamed]) {
        let task = get(&second, "countdown", task_id);
        assert_eq!(state(&task), "failed", "{task}");
        let why = task["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(why.contains("server restarted"), "{task}");
    }
    // Waiting tasks are still waiting, and take their answer.
    for task_id in &waiting {
        assert_eq!(state(&get(&second, "ask", task_id)), "input-required");
        let answer = call(&second, "ask", &send("Ada", true, Some(task_id)), None);
        assert_eq!(state(&answer["result"]), "completed", "{answer}");
        assert_eq!(
            answer["result"]["status"]["message"]["parts"][0]["text"],
            "Nice to meet you, Ada."
        );
    }
    // The stream resumes after the last event it saw: the rest, to the final event.
    let resume = json!({"jsonrpc": "2.0", "id": "r", "method": "tasks/resubscribe",
        "params": {"id": streamed}});
    let rest: Vec<(Option<u64>, Value)> = numbered_stream(
        format!("{}/agents/countdown", second.base),
        resume,
        Some(last_seen),
    )
    .iter()
    .collect();
    let ids: Vec<u64> = rest.iter().map(|(id, _)| id.expect("numbered")).collect();
    assert_eq!(ids.first(), Some(&(last_seen + 1)), "no gap: {rest:?}");
    assert!(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "no gap, no duplicate: {ids:?}"
    );
    let last = &rest.last().expect("events").1["result"];
    assert_eq!(last["final"], true, "{last}");
    assert_eq!(last["status"]["state"], "failed", "{last}");

    drop(second);
    let _ = std::fs::remove_dir_all(&data);
}
