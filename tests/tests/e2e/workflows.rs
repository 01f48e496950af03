//! Workflows end to end: the seed's pure-A2A mode gives the artifacts the in-process
//! runner gives; the runner's calls are well-formed A2A JSON-RPC; a served workflow is
//! an A2A agent any client can run; `serve` loads workflow files and serves the
//! workflow API on a real socket.

use std::sync::{Arc, Mutex};

use agentyard::client::ClientOptions;
use agentyard::edge::{Edge, EdgeConfig};
use agentyard::serve::Server;
use agentyard::workflow::client::OverHttp;
use agentyard::workflow::runner::{RunControl, RunOutcome};
use agentyard::workflow::template::render_part;
use agentyard::workflow::{Tools, Workflow, Workflows};
use agentyard::{Artifact, Runtime};
use axum::response::IntoResponse as _;
use serde_json::{Value, json};

fn exposed() -> Vec<String> {
    agentyard::builtin::EXPOSED
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

fn review(catalog: &dyn agentyard::workflow::definition::Catalog) -> Workflow {
    Workflow::builder("review")
        .input("topic")
        .agent("draft", "echo", "a note on {{topic}}")
        .agent("second", "echo", "second look at {{topic}}")
        .tool("shout", "upper", Some("{{draft}} / {{second}}"))
        .tool("count", "word_count", Some("{{draft}}"))
        .output("out", ["shout", "count", "second"])
        .build(catalog)
        .expect("valid")
}

fn contents(artifacts: &[Artifact]) -> Vec<(Option<String>, Vec<String>)> {
    artifacts
        .iter()
        .map(|a| (a.name.clone(), a.parts.iter().map(render_part).collect()))
        .collect()
}

async fn builtin_runtime() -> (Runtime, Edge) {
    let runtime = agentyard::builtin::register(Runtime::builder(), &exposed())
        .build()
        .await
        .expect("runtime");
    let edge = Edge::start(
        runtime.supervisor().clone(),
        EdgeConfig::default().agents(exposed()),
    )
    .await
    .expect("edge");
    (runtime, edge)
}

#[tokio::test]
async fn the_pure_a2a_mode_gives_the_same_artifacts_as_the_in_process_runner() {
    let (runtime, edge) = builtin_runtime().await;
    let in_process = Workflows::new(Tools::builtin());
    in_process.bind(runtime.supervisor().clone());
    let over_http = Workflows::new(Tools::builtin());
    over_http.use_client(Arc::new(OverHttp::new(
        format!("http://{}", edge.local_addr()),
        ClientOptions::new(),
    )));
    over_http.bind(runtime.supervisor().clone());
    let workflow = Arc::new(review(&in_process.catalog()));

    let mut results = Vec::new();
    for workflows in [&in_process, &over_http] {
        let report = workflows
            .runner()
            .expect("bound")
            .run(Arc::clone(&workflow), "actors".into(), RunControl::new())
            .await;
        let RunOutcome::Completed(artifacts) = report.outcome else {
            panic!("{:?}", report.outcome)
        };
        results.push(contents(&artifacts));
    }
    assert_eq!(results[0], results[1]);
    assert_eq!(
        results[0][0].1,
        ["A NOTE ON ACTORS / SECOND LOOK AT ACTORS"]
    );
    assert_eq!(results[0][1].1, [r#"{"words":4}"#]);
    edge.stop().await;
    runtime.shutdown(std::time::Duration::from_secs(1)).await;
}

/// A minimal A2A 0.3 agent that records every JSON-RPC request it gets.
async fn recording_agent(seen: Arc<Mutex<Vec<Value>>>) -> String {
    let card = |base: String| {
        json!({
            "protocolVersion": "0.3.0", "name": "recorder", "description": "records",
            "url": format!("{base}/rpc"), "preferredTransport": "JSONRPC", "version": "1",
            "capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": []
        })
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let task = json!({
        "kind": "task", "id": "t-1", "contextId": "c-1",
        "status": {"state": "completed"},
        "artifacts": [{"artifactId": "a-1", "parts": [{"kind": "text", "text": "recorded"}]}]
    });
    let card_base = base.clone();
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || {
                let card = card(card_base.clone());
                async move { axum::Json(card) }
            }),
        )
        .route(
            "/rpc",
            axum::routing::post(
                move |headers: axum::http::HeaderMap, axum::Json(request): axum::Json<Value>| {
                    let seen = Arc::clone(&seen);
                    let task = task.clone();
                    async move {
                        let mut recorded = request.clone();
                        if let Some(key) =
                            headers.get("idempotency-key").and_then(|v| v.to_str().ok())
                        {
                            recorded["idempotencyKeyHeader"] = json!(key);
                        }
                        seen.lock().expect("lock").push(recorded);
                        let id = request["id"].clone();
                        if request["method"] == "message/stream" {
                            let event = json!({"jsonrpc": "2.0", "id": id, "result": {
                            "kind": "status-update", "taskId": "t-1", "contextId": "c-1",
                            "status": {"state": "completed"}, "final": true}});
                            let first = json!({"jsonrpc": "2.0", "id": id, "result": task});
                            let body = format!("data: {first}\n\ndata: {event}\n\n");
                            return ([("content-type", "text/event-stream")], body).into_response();
                        }
                        axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": task}))
                            .into_response()
                    }
                },
            ),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    base
}

#[tokio::test]
async fn the_runners_calls_are_well_formed_a2a_json_rpc() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let base = recording_agent(Arc::clone(&seen)).await;
    // The recorder serves one agent at its root; OverHttp asks for
    // `{base}/agents/{agent}/.well-known/agent-card.json`, so point it at a prefix
    // the recorder ignores by routing the card path through a nested router.
    let router = axum::Router::new().nest_service("/agents/recorder", tower_forward(base.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let front = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });

    let workflows = Workflows::new(Tools::builtin());
    workflows.use_client(Arc::new(OverHttp::new(front, ClientOptions::new())));
    let (runtime, edge) = builtin_runtime().await;
    workflows.bind(runtime.supervisor().clone());
    let catalog = agentyard::workflow::definition::Names::new(["recorder"], ["upper"]);
    let workflow = Workflow::builder("rec")
        .input("in")
        .agent("node", "recorder", "hello {{in}}")
        .with_last(|n| n.accepted_output_modes = vec!["text/plain".into()])
        .output("out", ["node"])
        .build(&catalog)
        .expect("valid");
    let report = workflows
        .runner()
        .expect("bound")
        .run(Arc::new(workflow), "there".into(), RunControl::new())
        .await;
    let RunOutcome::Completed(artifacts) = report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert_eq!(contents(&artifacts)[0].1, ["recorded"]);

    let seen = seen.lock().expect("lock").clone();
    let methods: Vec<&str> = seen
        .iter()
        .map(|r| r["method"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(methods, ["message/stream", "tasks/get"]);
    for request in &seen {
        assert_eq!(request["jsonrpc"], "2.0");
        assert!(
            request["id"].is_string() || request["id"].is_number(),
            "{request}"
        );
    }
    let message = &seen[0]["params"]["message"];
    assert_eq!(message["kind"], "message");
    assert_eq!(message["role"], "user");
    // The message id is the node's run/node/attempt key, sent as Idempotency-Key.
    let key = format!("workflow:{}:node:1:0", report.run_id);
    assert_eq!(message["messageId"], key.as_str());
    assert_eq!(seen[0]["idempotencyKeyHeader"], key.as_str());
    assert!(
        message["contextId"]
            .as_str()
            .is_some_and(|id| !id.is_empty())
    );
    assert_eq!(
        message["parts"],
        json!([{"kind": "text", "text": "hello there"}])
    );
    assert_eq!(
        seen[0]["params"]["configuration"]["acceptedOutputModes"],
        json!(["text/plain"])
    );
    assert_eq!(seen[1]["params"]["id"], "t-1");
    edge.stop().await;
    runtime.shutdown(std::time::Duration::from_secs(1)).await;
}

/// Forwards every request under a prefix to `base` (the prefix stripped).
fn tower_forward(base: String) -> axum::Router {
    let client = reqwest::Client::new();
    axum::Router::new().fallback(move |request: axum::extract::Request| {
        let client = client.clone();
        let base = base.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, 1 << 20)
                .await
                .unwrap_or_default();
            let path = parts.uri.path().to_owned();
            let path = if path.ends_with("agent-card.json") {
                path
            } else {
                String::from("/rpc")
            };
            let mut upstream = client
                .request(parts.method, format!("{base}{path}"))
                .header("content-type", "application/json");
            if let Some(key) = parts.headers.get("idempotency-key") {
                upstream = upstream.header("idempotency-key", key.clone());
            }
            let upstream = upstream.body(body).send().await.expect("upstream");
            let status = upstream.status();
            let content_type = upstream
                .headers()
                .get("content-type")
                .cloned()
                .unwrap_or(axum::http::HeaderValue::from_static("application/json"));
            let bytes = upstream.bytes().await.unwrap_or_default();
            (status, [("content-type", content_type)], bytes).into_response()
        }
    })
}

fn write_workflow(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("agentyard-e2e-wf-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).expect("write");
    path
}

const SERVED: &str = r#"
name = "served"
description = "drafts, then shouts"
[[nodes]]
id = "in"
kind = "input"
[[nodes]]
id = "draft"
kind = "agent"
agent = "echo"
prompt = "draft: {{in}}"
[[nodes]]
id = "shout"
kind = "tool"
tool = "upper"
prompt = "{{draft}}"
[[nodes]]
id = "out"
kind = "output"
from = ["shout"]
"#;

const NESTING: &str = r#"
name = "nesting"
[[nodes]]
id = "in"
kind = "input"
[[nodes]]
id = "inner"
kind = "agent"
agent = "served"
prompt = "nested {{in}}"
[[nodes]]
id = "out"
kind = "output"
from = ["inner"]
"#;

async fn serve_workflows(files: &[(&str, &str)], pure_a2a: bool) -> Result<Server, String> {
    let mut text = String::from(
        "[server]\nbind = \"127.0.0.1:0\"\n[store]\nkind = \"memory\"\n[workflows]\nfiles = [",
    );
    for (name, body) in files {
        let path = write_workflow(name, body);
        text.push_str(&format!("{:?},", path.display().to_string()));
    }
    text.push_str(&format!("]\npure_a2a = {pure_a2a}\n"));
    let config = agentyard::config::Config::from_toml(&text).map_err(|e| e.to_string())?;
    Server::from_config(config).await.map_err(|e| {
        let mut text = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            text.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        text
    })
}

async fn rpc(base: &str, agent: &str, body: Value) -> Value {
    reqwest::Client::new()
        .post(format!("{base}/agents/{agent}"))
        .json(&body)
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json")
}

#[tokio::test]
async fn a_served_workflow_is_an_a2a_agent_and_can_be_a_node_of_another() {
    for pure_a2a in [false, true] {
        let server = serve_workflows(&[("served", SERVED), ("nesting", NESTING)], pure_a2a)
            .await
            .expect("serves");
        let base = format!("http://{}", server.local_addr());
        let card: Value = reqwest::get(format!("{base}/agents/served/.well-known/agent-card.json"))
            .await
            .expect("card")
            .json()
            .await
            .expect("json");
        assert_eq!(card["name"], "served");
        assert!(
            server
                .card_urls()
                .iter()
                .any(|(name, url)| name == "served (workflow)"
                    && url.ends_with("/agents/served/.well-known/agent-card.json")),
            "{:?}",
            server.card_urls()
        );
        let skills: Vec<&str> = card["skills"]
            .as_array()
            .expect("skills")
            .iter()
            .filter_map(|s| s["id"].as_str())
            .collect();
        assert_eq!(skills, ["served", "served.draft", "served.shout"]);

        let answer = rpc(
            &base,
            "nesting",
            json!({"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {
                "message": {"kind": "message", "role": "user", "messageId": "m-1",
                            "parts": [{"kind": "text", "text": "hi"}]}}}),
        )
        .await;
        assert_eq!(answer["jsonrpc"], "2.0");
        assert_eq!(answer["id"], 7);
        let task = &answer["result"];
        assert_eq!(task["kind"], "task", "{answer}");
        assert_eq!(task["status"]["state"], "completed", "{answer}");
        assert_eq!(
            task["artifacts"][0]["parts"][0]["text"], "DRAFT: NESTED HI",
            "pure_a2a = {pure_a2a}: {answer}"
        );

        let bad = rpc(
            &base,
            "served",
            json!({"jsonrpc": "2.0", "id": 8, "method": "message/send", "params": {}}),
        )
        .await;
        assert_eq!(bad["error"]["code"], -32602, "{bad}");
        server.stop().await;
    }
}

#[tokio::test]
async fn a_served_workflow_streams_its_node_progress_as_status_updates() {
    let server = serve_workflows(&[("served", SERVED)], false)
        .await
        .expect("serves");
    let base = format!("http://{}", server.local_addr());
    let body = reqwest::Client::new()
        .post(format!("{base}/agents/served"))
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": {
            "message": {"kind": "message", "role": "user", "messageId": "m-1",
                        "parts": [{"kind": "text", "text": "hi"}]}}}),
        )
        .send()
        .await
        .expect("send")
        .text()
        .await
        .expect("body");
    let events: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let notes: Vec<String> = events
        .iter()
        .filter(|e| e["result"]["kind"] == "status-update")
        .filter_map(|e| e["result"]["status"]["message"]["parts"][0]["text"].as_str())
        .map(str::to_owned)
        .collect();
    assert!(
        notes.contains(&String::from("node.started: draft (attempt 1)")),
        "{notes:?}"
    );
    assert!(
        notes.contains(&String::from("node.completed: shout (1 artifact(s))")),
        "{notes:?}"
    );
    let last = events.last().expect("events");
    assert_eq!(last["result"]["status"]["state"], "completed", "{last}");
    assert_eq!(last["result"]["final"], true);
    server.stop().await;
}

#[tokio::test]
async fn serve_loads_workflow_files_and_serves_the_workflow_api() {
    let server = serve_workflows(&[("served", SERVED)], false)
        .await
        .expect("serves");
    let base = format!("http://{}", server.local_addr());
    let http = reqwest::Client::new();
    let list: Value = http
        .get(format!("{base}/api/workflows"))
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(list, json!({"workflows": ["served"]}));

    let run = http
        .post(format!("{base}/api/workflows/served/run"))
        .json(&json!({"input": "over sse"}))
        .send()
        .await
        .expect("run");
    assert_eq!(
        run.headers()["content-type"].to_str().expect("type"),
        "text/event-stream"
    );
    let body = run.text().await.expect("body");
    assert!(body.contains("event: node.started"), "{body}");
    assert!(body.contains("DRAFT: OVER SSE"), "{body}");
    assert!(body.contains("event: run.completed"), "{body}");

    let bad = SERVED.replace("agent = \"echo\"", "agent = \"nobody\"");
    let refused = http
        .put(format!("{base}/api/workflows/served"))
        .body(bad)
        .send()
        .await
        .expect("put");
    assert_eq!(refused.status(), 400);
    let refused: Value = refused.json().await.expect("json");
    assert_eq!(refused["node"], "draft");

    let aggregate: Value = http
        .get(format!("{base}/api/agent-card"))
        .send()
        .await
        .expect("card")
        .json()
        .await
        .expect("json");
    let tagged: Vec<(String, String)> = aggregate["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap_or("").to_owned(),
                s["tags"][0].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert!(
        tagged.contains(&("echo".into(), "agent".into())),
        "{tagged:?}"
    );
    assert!(
        tagged.contains(&("served".into(), "workflow".into())),
        "{tagged:?}"
    );
    let node_card: Value = http
        .get(format!(
            "{base}/api/workflows/served/nodes/draft/.well-known/agent-card.json"
        ))
        .send()
        .await
        .expect("card")
        .json()
        .await
        .expect("json");
    assert_eq!(node_card["url"], format!("{base}/agents/echo"));
    server.stop().await;
}

#[tokio::test]
async fn serve_refuses_a_workflow_file_naming_an_unknown_agent() {
    let bad = SERVED.replace("agent = \"echo\"", "agent = \"nobody\"");
    let error = serve_workflows(&[("broken", &bad)], false)
        .await
        .expect_err("refused");
    assert!(error.contains("node `draft`"), "{error}");
    assert!(error.contains("unknown agent `nobody`"), "{error}");
}

#[tokio::test]
async fn over_http_a_node_past_its_timeout_has_its_task_canceled_with_tasks_cancel() {
    let (runtime, edge) = builtin_runtime().await;
    let workflows = Workflows::new(Tools::builtin());
    workflows.use_client(Arc::new(OverHttp::new(
        format!("http://{}", edge.local_addr()),
        ClientOptions::new(),
    )));
    workflows.bind(runtime.supervisor().clone());
    let workflow = Workflow::builder("slow")
        .input("in")
        .agent("count", "countdown", "60")
        .with_last(|n| n.timeout_ms = Some(300))
        .output("out", ["count"])
        .build(&workflows.catalog())
        .expect("valid");
    let report = workflows
        .runner()
        .expect("bound")
        .run(Arc::new(workflow), "x".into(), RunControl::new())
        .await;
    assert!(
        matches!(&report.outcome, RunOutcome::Failed { node, error } if node == "count" && error.contains("timed out")),
        "{:?}",
        report.outcome
    );
    let supervisor = runtime.supervisor().clone();
    agentyard_tests::eventually(
        agentyard_tests::PATIENCE,
        "the countdown's task to be canceled",
        || {
            let supervisor = supervisor.clone();
            async move {
                let page = supervisor
                    .list_tasks(
                        &|t: &agentyard::Task, _| t.status.state == agentyard::TaskState::Canceled,
                        10,
                        None,
                    )
                    .await
                    .ok()?;
                (page.total == 1).then_some(())
            }
        },
    )
    .await;
    edge.stop().await;
    runtime.shutdown(std::time::Duration::from_secs(1)).await;
}

#[tokio::test]
async fn serve_refuses_a_workflow_named_like_an_agent() {
    let named_echo = SERVED.replace("name = \"served\"", "name = \"echo\"");
    let error = serve_workflows(&[("named_echo", &named_echo)], false)
        .await
        .expect_err("refused");
    assert!(
        error.contains("workflow `echo`: the name is taken"),
        "{error}"
    );
}

/// A workflow put through the API is kept in the task store: after a restart on the
/// same embedded data it is listed, runs, and is an A2A agent again.
#[tokio::test]
async fn a_workflow_put_through_the_api_outlives_a_restart() {
    let data = tempfile::tempdir().expect("a data directory");
    let config = format!(
        "[server]\nbind = \"127.0.0.1:0\"\n[store]\nkind = \"embedded\"\npath = {:?}\n",
        data.path().display().to_string()
    );
    let start = || async {
        Server::from_config(agentyard::config::Config::from_toml(&config).expect("config"))
            .await
            .expect("serves")
    };
    let http = reqwest::Client::new();

    let first = start().await;
    let base = format!("http://{}", first.local_addr());
    let put = http
        .put(format!("{base}/api/workflows/kept"))
        .body(SERVED.replace("name = \"served\"", "name = \"kept\""))
        .send()
        .await
        .expect("put");
    assert_eq!(
        put.status(),
        201,
        "{}",
        put.text().await.unwrap_or_default()
    );
    first.stop().await;

    let second = start().await;
    let base = format!("http://{}", second.local_addr());
    let list: Value = http
        .get(format!("{base}/api/workflows"))
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(list, json!({"workflows": ["kept"]}));
    let reply = rpc(
        &base,
        "kept",
        json!({
            "jsonrpc": "2.0", "id": 1, "method": "message/send",
            "params": {"message": {
                "kind": "message", "role": "user", "messageId": "m-kept",
                "parts": [{"kind": "text", "text": "after a restart"}]
            }}
        }),
    )
    .await;
    assert_eq!(reply["result"]["status"]["state"], "completed", "{reply}");
    assert!(
        reply["result"]
            .to_string()
            .contains("DRAFT: AFTER A RESTART"),
        "{reply}"
    );
    second.stop().await;
}

#[tokio::test]
async fn the_workflow_api_takes_the_servers_credentials() {
    use agentyard::config::{Config, StoreKind};

    let mut config = Config::from_toml(
        "[server]\nbind = \"127.0.0.1:0\"\n\n\
         [[auth.api_keys]]\nname = \"ops\"\nkey = \"key-ops\"\n\n\
         [[auth.bearer_tokens]]\nname = \"ci\"\ntoken = \"token-ci\"\n",
    )
    .expect("valid config");
    config.store.kind = Some(StoreKind::Memory);
    let server = Server::from_config(config)
        .await
        .expect("the server starts");
    let url = format!("http://{}/api/workflows", server.local_addr());
    let client = reqwest::Client::new();

    let anonymous = client.get(&url).send().await.expect("an answer");
    assert_eq!(anonymous.status(), 401);
    assert!(anonymous.headers().contains_key("www-authenticate"));
    let wrong = client
        .get(&url)
        .header("X-API-Key", "key-nobody")
        .send()
        .await
        .expect("an answer");
    assert_eq!(wrong.status(), 401);
    for (header, value) in [
        ("X-API-Key", "key-ops"),
        ("Authorization", "Bearer token-ci"),
    ] {
        let allowed = client
            .get(&url)
            .header(header, value)
            .send()
            .await
            .expect("an answer");
        assert_eq!(allowed.status(), 200, "{header}");
    }
    server.stop().await;
}
