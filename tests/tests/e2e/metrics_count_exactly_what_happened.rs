//! `GET /metrics`: after a known sequence of sends — completed over the API and over
//! HTTP, failed, refused by a rule and by the hop limit, deduplicated, busy — the
//! scraped counters equal it exactly, series by series. The endpoint takes the A2A
//! credentials, moves to its own listener when told to, and is gone when metrics are
//! off.

use std::collections::BTreeMap;

use agentyard::a2a::MessageSendParams;
use agentyard::client::A2aClient;
use agentyard::policy::{Pattern, Rule, RulePolicy};
use agentyard::{
    AgentDescriptor, EdgeAuth, Error, HttpConfig, HttpServer, Message, Runtime, SendRequest,
    TaskState,
};
use agentyard_tests::{Echo, Fragile, Gated, PATIENCE, eventually, within};
use reqwest::StatusCode;

/// The scrape as `series → value`, e.g.
/// `agentyard_sends_total{agent="echo",entry_point="api",outcome="completed"} → 2`.
async fn scrape(url: &str) -> BTreeMap<String, f64> {
    let response = reqwest::get(url).await.expect("the scrape answers");
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let text = response.text().await.expect("a body");
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("`series value`");
            let value = value
                .parse()
                .unwrap_or_else(|_| panic!("a number in {line}"));
            (series.to_owned(), value)
        })
        .collect()
}

/// The series of one metric, by their labels.
fn series<'a>(scraped: &'a BTreeMap<String, f64>, name: &str) -> BTreeMap<&'a str, f64> {
    scraped
        .iter()
        .filter_map(|(series, value)| {
            let labels = series
                .strip_prefix(name)?
                .strip_prefix('{')?
                .strip_suffix('}')?;
            Some((labels, *value))
        })
        .collect()
}

/// A runtime with one exposed echo agent.
async fn echo_runtime() -> Runtime {
    Runtime::builder()
        .agent(AgentDescriptor::new("echo").expose(), |_| Echo::default())
        .build()
        .await
        .expect("the runtime starts")
}

async fn start() -> (Runtime, HttpServer, Gated) {
    let gated = Gated::default();
    let runtime = Runtime::builder()
        .policy(
            RulePolicy::builder()
                .rule(Rule::deny().named("closed").to(Pattern::exact("vault")))
                .build(),
        )
        .agent(AgentDescriptor::new("echo").expose(), |_| Echo::default())
        .agent(AgentDescriptor::new("fragile"), |_| Fragile::default())
        .agent(AgentDescriptor::new("vault"), |_| Echo::default())
        .agent(AgentDescriptor::new("gated").concurrency(1), {
            let gated = gated.clone();
            move |_| gated.clone()
        })
        .agent_queue(0)
        .build()
        .await
        .expect("the runtime starts");
    let server = runtime
        .serve(HttpConfig::default())
        .await
        .expect("the server starts");
    (runtime, server, gated)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scraped_counters_equal_the_sends_made() {
    let (runtime, server, gated) = start().await;

    // Three completed over HTTP.
    let client = A2aClient::new(&server.card_url("echo"))
        .await
        .expect("the card");
    for n in 0..3 {
        client
            .send_message(MessageSendParams::new(Message::user_text(format!("h{n}"))))
            .await
            .expect("an HTTP send");
    }
    // One completed over the API.
    runtime
        .send_and_wait("echo", Message::user_text("api"))
        .await
        .expect("an API send");
    // Two failed.
    for _ in 0..2 {
        let failed = runtime
            .send_and_wait("fragile", Message::user_text("error"))
            .await
            .expect("the send is made; its task fails");
        assert_eq!(failed.task.status.state, TaskState::Failed);
    }
    // Refused by a rule, and by the hop limit.
    let denied = runtime
        .send_and_wait("vault", Message::user_text("open"))
        .await;
    assert!(
        matches!(denied, Err(Error::PolicyRejected { .. })),
        "{denied:?}"
    );
    let too_deep = runtime
        .supervisor()
        .send_and_wait(SendRequest::new("echo", Message::user_text("deep")).hops(99))
        .await;
    assert!(
        matches!(too_deep, Err(Error::PolicyRejected { .. })),
        "{too_deep:?}"
    );
    // A key sent twice: completed once, then deduplicated.
    for _ in 0..2 {
        runtime
            .supervisor()
            .send_and_wait(
                SendRequest::new("echo", Message::user_text("once")).idempotency_key("k"),
            )
            .await
            .expect("a keyed send");
    }
    // One runs at the closed gate; the next finds the agent's limit full: busy.
    let first = tokio::spawn({
        let runtime = runtime.clone();
        async move {
            runtime
                .send_and_wait("gated", Message::user_text("a"))
                .await
        }
    });
    eventually(PATIENCE, "the first gated send runs", async || {
        gated.started.count() == 1
    })
    .await;
    let busy = runtime
        .send_and_wait("gated", Message::user_text("b"))
        .await;
    assert!(matches!(busy, Err(Error::Busy { .. })), "{busy:?}");
    gated.gate.open();
    within(PATIENCE, "the gated send", first)
        .await
        .expect("no panic")
        .expect("it completes");
    // And one to nobody.
    let nobody = runtime
        .send_and_wait("nobody", Message::user_text("?"))
        .await;
    assert!(matches!(nobody, Err(Error::UnknownAgent(_))), "{nobody:?}");

    let scraped = scrape(&server.metrics_url()).await;
    let sends: BTreeMap<&str, f64> = series(&scraped, "agentyard_sends_total")
        .into_iter()
        .filter(|(_, value)| *value != 0.0)
        .collect();
    let expected: BTreeMap<&str, f64> = [
        (r#"agent="echo",entry_point="api",outcome="completed""#, 2.0),
        (
            r#"agent="echo",entry_point="api",outcome="deduplicated""#,
            1.0,
        ),
        (
            r#"agent="echo",entry_point="api",outcome="policy_rejected""#,
            1.0,
        ),
        (
            r#"agent="echo",entry_point="http",outcome="completed""#,
            3.0,
        ),
        (r#"agent="fragile",entry_point="api",outcome="failed""#, 2.0),
        (r#"agent="gated",entry_point="api",outcome="busy""#, 1.0),
        (
            r#"agent="gated",entry_point="api",outcome="completed""#,
            1.0,
        ),
        (
            r#"agent="vault",entry_point="api",outcome="policy_rejected""#,
            1.0,
        ),
    ]
    .into_iter()
    .collect();
    assert_eq!(sends, expected);

    let refusals: BTreeMap<&str, f64> = series(&scraped, "agentyard_refusals_total")
        .into_iter()
        .filter(|(_, value)| *value != 0.0)
        .collect();
    let expected: BTreeMap<&str, f64> = [
        (r#"reason="busy""#, 1.0),
        (r#"reason="hop_limit""#, 1.0),
        (r#"reason="policy""#, 1.0),
        (r#"reason="unknown_agent""#, 1.0),
    ]
    .into_iter()
    .collect();
    assert_eq!(refusals, expected);

    // Every settled send of echo took some time; the repeat settled nothing. (The
    // typed client speaks A2A 1.0, whose method is `SendMessage`.)
    assert_eq!(
        scraped[r#"agentyard_send_duration_seconds_count{agent="echo"}"#],
        5.0
    );
    assert_eq!(
        scraped[r#"agentyard_task_duration_seconds_count{agent="fragile"}"#],
        2.0
    );
    let http = series(&scraped, "agentyard_http_requests_total");
    assert_eq!(
        http.get(r#"method="SendMessage",code="200""#).copied(),
        Some(3.0),
        "{http:?}"
    );
    // Nothing is left running.
    for (labels, value) in series(&scraped, "agentyard_tasks") {
        assert_eq!(value, 0.0, "agentyard_tasks{{{labels}}}");
    }
    assert!(scraped[r#"agentyard_sessions_live{agent="echo"}"#] >= 1.0);

    server.stop().await;
    runtime.shutdown(PATIENCE).await;
}

#[tokio::test]
async fn metrics_take_the_same_credentials_as_a2a() {
    let runtime = echo_runtime().await;
    let server = runtime
        .serve(HttpConfig::default().auth(EdgeAuth::default().api_key("k-1", "ops")))
        .await
        .expect("the server starts");
    let http = reqwest::Client::new();
    let refused = http.get(server.metrics_url()).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(refused.headers().contains_key("www-authenticate"));
    let wrong = http
        .get(server.metrics_url())
        .header("X-API-Key", "nope")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let scraped = http
        .get(server.metrics_url())
        .header("X-API-Key", "k-1")
        .send()
        .await
        .unwrap();
    assert_eq!(scraped.status(), StatusCode::OK);
    assert!(
        scraped
            .text()
            .await
            .unwrap()
            .contains("agentyard_sends_total")
    );
    server.stop().await;
    runtime.shutdown(PATIENCE).await;
}

#[tokio::test]
async fn metrics_on_their_own_address_leave_the_edge_and_off_they_are_gone() {
    let runtime = echo_runtime().await;
    let apart = runtime
        .serve(HttpConfig::default().metrics_bind("127.0.0.1:0".parse().unwrap()))
        .await
        .expect("the server starts");
    assert!(!apart.metrics_url().starts_with(apart.base_url()));
    let on_edge = reqwest::get(format!("{}/metrics", apart.base_url()))
        .await
        .unwrap();
    assert_eq!(on_edge.status(), StatusCode::NOT_FOUND);
    assert!(scrape(&apart.metrics_url()).await.contains_key(
        r#"agentyard_sends_total{agent="echo",entry_point="http",outcome="completed"}"#
    ));
    apart.stop().await;

    let off = runtime
        .serve(HttpConfig::default().metrics(false))
        .await
        .expect("the server starts");
    let gone = reqwest::get(off.metrics_url()).await.unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    off.stop().await;
    runtime.shutdown(PATIENCE).await;
}

#[tokio::test]
async fn a_runtime_without_metrics_counts_nothing() {
    let runtime = Runtime::builder()
        .metrics(false)
        .agent(AgentDescriptor::new("echo").expose(), |_| Echo::default())
        .build()
        .await
        .expect("the runtime starts");
    runtime
        .send_and_wait("echo", Message::user_text("hi"))
        .await
        .expect("a send");
    assert!(runtime.supervisor().scrape_metrics().is_none());
    let server = runtime.serve(HttpConfig::default()).await.expect("serves");
    let gone = reqwest::get(server.metrics_url()).await.unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    server.stop().await;
    runtime.shutdown(PATIENCE).await;
}

#[tokio::test]
async fn serve_reads_the_metrics_section() {
    use agentyard::config::{Config, StoreKind};
    use agentyard::serve::Server;

    let mut config = Config::from_toml(
        "[server]\nbind = \"127.0.0.1:0\"\n[metrics]\naddress = \"127.0.0.1:0\"\n",
    )
    .expect("a valid config");
    config.store.kind = Some(StoreKind::Memory);
    let server = Server::from_config(config)
        .await
        .expect("the server starts");
    let apart = server
        .metrics_addr()
        .expect("metrics on their own listener");
    assert_ne!(apart, server.local_addr());
    let scraped = scrape(&format!("http://{apart}/metrics")).await;
    assert!(scraped.contains_key(r#"agentyard_sessions_live{agent="echo"}"#));
    let on_edge = reqwest::get(format!("http://{}/metrics", server.local_addr()))
        .await
        .unwrap();
    assert_eq!(on_edge.status(), StatusCode::NOT_FOUND);
    assert!(server.observability_summary().contains(&apart.to_string()));
    server.stop().await;

    let mut off =
        Config::from_toml("[server]\nbind = \"127.0.0.1:0\"\n[metrics]\nenabled = false\n")
            .expect("a valid config");
    off.store.kind = Some(StoreKind::Memory);
    let server = Server::from_config(off).await.expect("the server starts");
    assert!(server.runtime().supervisor().scrape_metrics().is_none());
    let gone = reqwest::get(format!("http://{}/metrics", server.local_addr()))
        .await
        .unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
    server.stop().await;
}

#[tokio::test]
async fn a_request_that_is_not_a_call_is_counted_by_its_route() {
    let runtime = echo_runtime().await;
    let server = runtime
        .serve(HttpConfig::default())
        .await
        .expect("the server starts");
    let http = reqwest::Client::new();
    let echo = server.agent_url("echo");
    let card = http
        .get(format!("{echo}/.well-known/agent-card.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(card.status(), StatusCode::OK);
    let wrong_method = http.get(&echo).send().await.unwrap();
    assert_eq!(wrong_method.status(), StatusCode::METHOD_NOT_ALLOWED);
    let nobody = http
        .post(server.agent_url("nobody"))
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(nobody.status(), StatusCode::NOT_FOUND);
    let nowhere = http
        .get(format!("http://{}/nowhere/at/all", server.local_addr()))
        .send()
        .await
        .unwrap();
    assert_eq!(nowhere.status(), StatusCode::NOT_FOUND);

    let scraped = scrape(&server.metrics_url()).await;
    let http = series(&scraped, "agentyard_http_requests_total");
    for labels in [
        r#"method="GET /agents/{name}/.well-known/agent-card.json",code="200""#,
        r#"method="GET /agents/{name}",code="405""#,
        r#"method="POST /agents/{name}",code="404""#,
        // Every path is the HTTP+JSON binding's to read.
        r#"method="GET /{*resource}",code="404""#,
    ] {
        assert_eq!(http.get(labels).copied(), Some(1.0), "{labels} in {http:?}");
    }
    // The routes beside the A2A router are counted by a layer of their own: the
    // scrape above is in the next one.
    let scraped = scrape(&server.metrics_url()).await;
    let http = series(&scraped, "agentyard_http_requests_total");
    assert_eq!(
        http.get(r#"method="GET /metrics",code="200""#).copied(),
        Some(1.0),
        "{http:?}"
    );
    server.stop().await;
    runtime.shutdown(PATIENCE).await;
}
