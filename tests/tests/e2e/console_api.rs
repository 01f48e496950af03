//! The console's page and JSON API (`agentyard::console`) over a real socket: the
//! page loads without credentials and every data call needs them; a caller sees the
//! exposed agents with their cards and live sessions, and only its own tasks,
//! filtered and paged; another's task is the same 404 as an unknown one; a task opens
//! to its history and its event log; an operator sees every agent and task.

use agentyard::console::{self, ConsoleOptions};
use agentyard::edge::{Edge, EdgeAuth, EdgeConfig};
use std::time::Duration;

use agentyard::store::testing::RequiredOnly;
use agentyard::{AgentDescriptor, Message, Runtime, RuntimeBuilder};
use agentyard_tests::agents::{Echo, Interviewer};
use agentyard_tests::http::{sse_events, text_message};
use agentyard_tests::wait::PATIENCE;
use serde_json::{Value, json};

const ALICE: &str = "key-alice";
const BOB: &str = "key-bob";
const OPS: &str = "token-ops";

/// A runtime with `echo` and `ask` exposed and `internal` not, behind an edge that
/// wants a key (alice, bob) or a token (ops, the console's operator), with the
/// console mounted as a program would.
struct Served {
    runtime: Runtime,
    edge: Edge,
    http: reqwest::Client,
}

impl Served {
    async fn start() -> Self {
        Self::start_on(Runtime::builder()).await
    }

    /// As [`Served::start`], on a builder the test prepared (a store).
    async fn start_on(builder: RuntimeBuilder) -> Self {
        let runtime = builder
            .agent(AgentDescriptor::new("echo").expose(), |_| Echo::default())
            .agent(AgentDescriptor::new("ask").expose(), |_| Interviewer)
            .agent(AgentDescriptor::new("internal"), |_| Echo::default())
            .build()
            .await
            .expect("the runtime starts");
        let auth = EdgeAuth::default()
            .api_key(ALICE, "alice")
            .api_key(BOB, "bob")
            .bearer_token(OPS, "ops");
        let config = EdgeConfig::default().auth(auth);
        let routes = console::router(
            runtime.supervisor().clone(),
            &config,
            ConsoleOptions::default().operator("ops"),
        );
        let edge = Edge::start(runtime.supervisor().clone(), config.routes(routes))
            .await
            .expect("the edge starts");
        Self {
            runtime,
            edge,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(PATIENCE)
                .build()
                .expect("a client"),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.edge.local_addr())
    }

    /// GET with a credential: an API key, or the operator's bearer token.
    async fn get(&self, path: &str, key: Option<&str>) -> reqwest::Response {
        let mut request = self.http.get(self.url(path));
        match key {
            Some(OPS) => request = request.bearer_auth(OPS),
            Some(key) => request = request.header("X-API-Key", key),
            None => {}
        }
        request.send().await.expect("the server answers")
    }

    async fn json(&self, path: &str, key: &str) -> (u16, Value) {
        let response = self.get(path, Some(key)).await;
        let status = response.status().as_u16();
        (status, response.json().await.expect("a JSON answer"))
    }

    /// A blocking `message/send` as the key's principal; the answer's `result`.
    async fn send(&self, agent: &str, key: &str, text: &str) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send",
            "params": {"message": text_message(text)}});
        let answer: Value = self
            .http
            .post(self.url(&format!("/agents/{agent}")))
            .header("X-API-Key", key)
            .json(&body)
            .send()
            .await
            .expect("the server answers")
            .json()
            .await
            .expect("JSON-RPC");
        answer["result"].clone()
    }

    async fn stop(self) {
        self.edge.stop().await;
        self.runtime.shutdown(Duration::from_secs(1)).await;
    }
}

fn ids(page: &Value) -> Vec<String> {
    page["tasks"]
        .as_array()
        .expect("a task list")
        .iter()
        .map(|t| t["id"].as_str().expect("an id").to_owned())
        .collect()
}

#[tokio::test]
async fn the_page_loads_without_credentials_and_every_data_call_needs_them() {
    let served = Served::start().await;
    let redirect = served.get("/ui", None).await;
    assert_eq!(redirect.status(), 308);
    assert_eq!(redirect.headers()["location"], "/ui/");

    let page = served.get("/ui/", None).await;
    assert_eq!(page.status(), 200);
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(policy.contains("connect-src 'self'"), "{policy}");
    assert!(page.text().await.unwrap().contains("./app.js"));
    let script = served.get("/ui/app.js", None).await;
    assert_eq!(script.status(), 200);
    assert!(
        script.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    let missing = served.get("/ui/secrets.txt", None).await;
    assert_eq!(missing.status(), 404);

    for path in [
        "/api/console/whoami",
        "/api/console/agents",
        "/api/console/tasks",
        "/api/console/tasks/t-1",
        "/api/console/tasks/t-1/events",
    ] {
        for key in [None, Some("wrong")] {
            let refused = served.get(path, key).await;
            assert_eq!(refused.status(), 401, "{path} with {key:?}");
            let challenge = refused.headers()["www-authenticate"].to_str().unwrap();
            assert!(challenge.contains("X-API-Key"), "{challenge}");
        }
    }
    let (status, me) = served.json("/api/console/whoami", ALICE).await;
    assert_eq!(status, 200);
    assert_eq!(
        me,
        json!({"principal": "alice", "operator": false, "authRequired": true})
    );
    let (_, me) = served.json("/api/console/whoami", OPS).await;
    assert_eq!(me["operator"], true);
    served.stop().await;
}

#[tokio::test]
async fn a_caller_sees_the_exposed_agents_and_their_sessions_and_an_operator_sees_all() {
    let served = Served::start().await;
    served.send("echo", ALICE, "hello").await;
    let (status, agents) = served.json("/api/console/agents", ALICE).await;
    assert_eq!(status, 200);
    let names: Vec<&str> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ask", "echo"]);
    let echo = &agents["agents"][1];
    assert_eq!(echo["exposed"], true);
    // The conversation just served stays live (warm) until it idles out.
    assert_eq!(echo["sessions"], 1, "{echo}");
    assert_eq!(echo["endpoint"], "/agents/echo");
    assert_eq!(echo["card"]["name"], "echo");
    let card_url = format!("http://{}/agents/echo", served.edge.local_addr());
    assert_eq!(echo["card"]["url"], card_url);
    assert_eq!(agents["agents"][0]["sessions"], 0);

    let (_, all) = served.json("/api/console/agents", OPS).await;
    let internal = all["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "internal")
        .expect("the operator sees the agent that is not exposed");
    assert_eq!(internal["exposed"], false);
    assert!(internal.get("card").is_none(), "{internal}");
    served.stop().await;
}

#[tokio::test]
async fn a_caller_sees_only_its_own_tasks_filtered_and_paged() {
    let served = Served::start().await;
    let first = served.send("echo", ALICE, "one").await;
    served.send("echo", ALICE, "two").await;
    let asked = served.send("ask", ALICE, "hi").await;
    assert_eq!(asked["status"]["state"], "input-required", "{asked}");
    let bobs = served.send("echo", BOB, "bob's").await;
    // In-process, and on an agent with no endpoint: nobody's, outside.
    served
        .runtime
        .send_and_wait("internal", Message::user_text("in-process"))
        .await
        .expect("an in-process send");

    let (status, mine) = served.json("/api/console/tasks", ALICE).await;
    assert_eq!(status, 200);
    assert_eq!(mine["total"], 3, "{mine}");
    for task in mine["tasks"].as_array().unwrap() {
        assert_eq!(task["principal"], "alice", "{task}");
    }
    let bob_id = bobs["taskId"]
        .as_str()
        .unwrap_or_else(|| bobs["id"].as_str().unwrap());
    assert!(!ids(&mine).contains(&bob_id.to_owned()));

    let (_, asking) = served.json("/api/console/tasks?agent=ask", ALICE).await;
    assert_eq!(asking["total"], 1);
    assert_eq!(asking["tasks"][0]["agent"], "ask");
    assert_eq!(asking["tasks"][0]["status"]["state"], "input-required");
    let (_, done) = served
        .json("/api/console/tasks?state=completed,failed", ALICE)
        .await;
    assert_eq!(done["total"], 2);
    let context = first["contextId"].as_str().unwrap();
    let (_, one) = served
        .json(&format!("/api/console/tasks?context={context}"), ALICE)
        .await;
    assert_eq!(one["total"], 1, "{one}");

    let (_, page1) = served.json("/api/console/tasks?pageSize=2", ALICE).await;
    assert_eq!(ids(&page1).len(), 2);
    let token = page1["nextPageToken"].as_str().expect("a next page");
    let (_, page2) = served
        .json(
            &format!("/api/console/tasks?pageSize=2&pageToken={token}"),
            ALICE,
        )
        .await;
    assert_eq!(ids(&page2).len(), 1);
    assert!(page2["nextPageToken"].is_null());
    let mut paged = ids(&page1);
    paged.extend(ids(&page2));
    paged.sort();
    let mut all_mine = ids(&mine);
    all_mine.sort();
    assert_eq!(paged, all_mine);

    let (_, theirs) = served.json("/api/console/tasks", BOB).await;
    assert_eq!(theirs["total"], 1);
    let (_, everything) = served.json("/api/console/tasks", OPS).await;
    assert_eq!(everything["total"], 5, "{everything}");
    let (_, internal) = served.json("/api/console/tasks?agent=internal", OPS).await;
    assert_eq!(internal["tasks"][0]["principal"], Value::Null);

    for (query, named) in [
        ("state=done", "`state`"),
        ("pageSize=0", "`pageSize`"),
        ("pageSize=101", "`pageSize`"),
        ("pageToken=abc", "`pageToken`"),
        ("colour=red", "colour"),
    ] {
        let (status, body) = served
            .json(&format!("/api/console/tasks?{query}"), ALICE)
            .await;
        assert_eq!(status, 400, "{query}");
        let message = body["error"].as_str().unwrap();
        assert!(message.contains(named), "{query}: {message}");
    }
    served.stop().await;
}

#[tokio::test]
async fn a_task_opens_to_its_history_and_event_log_and_anothers_is_not_found() {
    let served = Served::start().await;
    let sent = served.send("echo", ALICE, "remember me").await;
    let (_, mine) = served.json("/api/console/tasks", ALICE).await;
    let id = mine["tasks"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        sent["taskId"].as_str().or(sent["id"].as_str()),
        Some(id.as_str())
    );

    let (status, opened) = served
        .json(&format!("/api/console/tasks/{id}"), ALICE)
        .await;
    assert_eq!(status, 200);
    assert_eq!(opened["agent"], "echo");
    assert_eq!(opened["principal"], "alice");
    let history = opened["task"]["history"].as_array().expect("a history");
    assert_eq!(history[0]["parts"][0]["text"], "remember me");
    assert_eq!(opened["task"]["status"]["state"], "completed");

    let response = served
        .get(&format!("/api/console/tasks/{id}/events"), Some(ALICE))
        .await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    // The task has ended: the log is replayed and the stream closes.
    let events = sse_events(&response.text().await.expect("the stream ends"));
    assert!(!events.is_empty());
    let numbers: Vec<u64> = events
        .iter()
        .map(|(seq, _)| seq.as_deref().expect("an id").parse().unwrap())
        .collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    let (_, last) = events.last().unwrap();
    assert_eq!(last["kind"], "status-update");
    assert_eq!(last["status"]["state"], "completed");
    assert_eq!(last["final"], true);

    let (_, unknown) = served.json("/api/console/tasks/no-such-task", BOB).await;
    for path in [
        format!("/api/console/tasks/{id}"),
        format!("/api/console/tasks/{id}/events"),
    ] {
        let response = served.get(&path, Some(BOB)).await;
        assert_eq!(response.status(), 404, "{path}");
        let body: Value = response.json().await.unwrap();
        // Word for word as an unknown id, but for the id itself.
        assert_eq!(
            body["error"].as_str().unwrap().replace(&id, "no-such-task"),
            unknown["error"]
        );
    }
    let (status, _) = served.json(&format!("/api/console/tasks/{id}"), OPS).await;
    assert_eq!(status, 200, "the operator opens anyone's task");
    served.stop().await;
}

/// `agentyard serve` from a config file: `[console]` on by default, off when asked;
/// its operators are named principals of `[auth]`.
#[tokio::test]
async fn serve_mounts_the_console_unless_the_config_turns_it_off() {
    use agentyard::config::{Config, StoreKind};
    use agentyard::serve::Server;

    let keyed = "[server]\nbind = \"127.0.0.1:0\"\n\n\
                 [[auth.api_keys]]\nname = \"ops\"\nkey = \"key-ops\"\n";
    for (section, served) in [
        ("", true),
        ("\n[console]\nenabled = true\noperators = [\"ops\"]\n", true),
        ("\n[console]\nenabled = false\n", false),
    ] {
        let mut config = Config::from_toml(&format!("{keyed}{section}")).expect("valid config");
        config.store.kind = Some(StoreKind::Memory);
        let server = Server::from_config(config)
            .await
            .expect("the server starts");
        let base = format!("http://{}", server.local_addr());
        let page = reqwest::get(format!("{base}/ui/"))
            .await
            .expect("an answer");
        assert_eq!(page.status() == 200, served, "{section}: {}", page.status());
        let agents = reqwest::Client::new()
            .get(format!("{base}/api/console/agents"))
            .header("X-API-Key", "key-ops")
            .send()
            .await
            .expect("an answer");
        assert_eq!(agents.status() == 200, served, "{section}");
        server.stop().await;
    }

    // Checked as the file is read, before anything starts.
    let error = Config::from_toml(&format!("{keyed}\n[console]\noperators = [\"mallory\"]\n"))
        .expect_err("an operator nobody can sign in as is refused");
    let message = error.to_string();
    assert!(
        message.contains("console.operators") && message.contains("mallory"),
        "{message}"
    );
}

/// A store without `list` (the contract's default refuses it, as a store without a
/// status-time index would).
#[tokio::test]
async fn a_store_that_cannot_list_is_a_short_500_and_the_console_goes_on() {
    let served = Served::start_on(Runtime::builder().store(RequiredOnly::default())).await;
    let sent = served.send("echo", ALICE, "hi").await;
    let (status, body) = served.json("/api/console/tasks", ALICE).await;
    assert_eq!(status, 500);
    assert_eq!(
        body["error"], "listing tasks failed; the server log says why",
        "the store's own words stay in the log"
    );
    // One task still opens, and the rest of the console works.
    let id = sent["id"].as_str().expect("the send answers with its task");
    let (status, task) = served
        .json(&format!("/api/console/tasks/{id}"), ALICE)
        .await;
    assert_eq!(status, 200, "{task}");
    let (status, agents) = served.json("/api/console/agents", ALICE).await;
    assert_eq!(status, 200, "{agents}");
    served.stop().await;
}
