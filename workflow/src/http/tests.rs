use std::sync::Arc;

use agentyard_actors::{
    Agent, AgentDescriptor, AgentError, InMemoryTaskStore, Registration, Supervisor,
    SupervisorConfig, TaskContext,
};
use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt as _;
use tower::ServiceExt as _;

use super::*;
use crate::tools::Tools;

struct Echo;
impl Agent for Echo {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(text);
        Ok(())
    }
}

async fn api(auth: EdgeAuth) -> Router {
    let supervisor = Supervisor::start(
        SupervisorConfig::default(),
        vec![Registration::new(
            AgentDescriptor::new("echo")
                .exposed(true)
                .description("echoes"),
            |_| Echo,
        )],
        Arc::new(agentyard_policy::RulePolicy::default()),
        Arc::new(InMemoryTaskStore::new()),
    )
    .await
    .unwrap();
    let workflows = Workflows::new(Tools::builtin());
    workflows.bind(supervisor);
    router(
        workflows,
        ApiOptions {
            auth,
            ..ApiOptions::default()
        },
    )
}

async fn call(router: &Router, method: &str, uri: &str, body: &str) -> (StatusCode, String) {
    let response = router
        .clone()
        .oneshot(
            Request::builder()
                .method(method)
                .uri(uri)
                .header("host", "127.0.0.1:9")
                .body(Body::from(body.to_owned()))
                .unwrap(),
        )
        .await
        .unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

const HELLO: &str = r#"
name = "hello"
description = "greets"
[[nodes]]
id = "in"
kind = "input"
[[nodes]]
id = "greet"
kind = "agent"
agent = "echo"
prompt = "hello {{in}}"
[[nodes]]
id = "out"
kind = "output"
from = ["greet"]
"#;

#[tokio::test]
async fn definitions_are_validated_on_put_and_managed_by_name() {
    let router = api(EdgeAuth::default()).await;
    let bad = HELLO.replace("{{in}}", "{{nobody}}");
    let (status, body) = call(&router, "PUT", "/api/workflows/hello", &bad).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["node"], "greet");
    assert!(body["error"].as_str().unwrap().contains("`nobody`"));

    let (status, _) = call(&router, "PUT", "/api/workflows/other", HELLO).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, body) = call(
        &router,
        "PUT",
        "/api/workflows/echo",
        &HELLO.replace("name = \"hello\"", "name = \"echo\""),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body.contains("an agent of that name is registered"),
        "{body}"
    );
    assert_eq!(
        call(&router, "PUT", "/api/workflows/hello", HELLO).await.0,
        StatusCode::CREATED
    );
    assert_eq!(
        call(&router, "PUT", "/api/workflows/hello", HELLO).await.0,
        StatusCode::OK
    );
    let (status, body) = call(&router, "GET", "/api/workflows/hello", "").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&body).unwrap()["nodes"][1]["prompt"],
        "hello {{in}}"
    );
    let (_, body) = call(&router, "GET", "/api/workflows", "").await;
    assert_eq!(body, r#"{"workflows":["hello"]}"#);
    assert_eq!(
        call(&router, "DELETE", "/api/workflows/hello", "").await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        call(&router, "DELETE", "/api/workflows/hello", "").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        call(&router, "GET", "/api/workflows/hello", "").await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_run_streams_its_node_events_as_sse() {
    let router = api(EdgeAuth::default()).await;
    call(&router, "PUT", "/api/workflows/hello", HELLO).await;
    let (status, body) = call(
        &router,
        "POST",
        "/api/workflows/hello/run",
        r#"{"input": "you"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<&str> = body
        .lines()
        .filter_map(|line| line.strip_prefix("event: "))
        .collect();
    assert_eq!(
        names,
        [
            "run.started",
            "node.started",
            "node.completed",
            "node.started",
            "node.completed",
            "node.started",
            "node.completed",
            "run.completed"
        ]
    );
    let last = body
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .next_back()
        .unwrap();
    let last: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(last["event"], "run.completed");
    assert_eq!(last["artifacts"][0]["parts"][0]["text"], "hello you");
    let (status, _) = call(&router, "POST", "/api/workflows/nobody/run", "x").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn node_and_aggregate_cards_describe_what_runs() {
    let router = api(EdgeAuth::default()).await;
    call(&router, "PUT", "/api/workflows/hello", HELLO).await;
    let (status, body) = call(
        &router,
        "GET",
        "/api/workflows/hello/nodes/greet/.well-known/agent-card.json",
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let card: AgentCard = serde_json::from_str(&body).unwrap();
    assert_eq!(card.name, "hello.greet");
    assert_eq!(card.url, "http://127.0.0.1:9/agents/echo");
    assert_eq!(card.skills[0].id, "greet");
    let (status, _) = call(
        &router,
        "GET",
        "/api/workflows/hello/nodes/in/.well-known/agent-card.json",
        "",
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, body) = call(&router, "GET", "/api/agent-card", "").await;
    let card: AgentCard = serde_json::from_str(&body).unwrap();
    let skills: Vec<(&str, &str)> = card
        .skills
        .iter()
        .map(|s| (s.id.as_str(), s.tags[0].as_str()))
        .collect();
    assert_eq!(skills, [("echo", "agent"), ("hello", "workflow")]);
}

#[tokio::test]
async fn with_credentials_configured_the_api_refuses_anonymous_callers() {
    let router = api(EdgeAuth::default().api_key("k1", "alice")).await;
    assert_eq!(
        call(&router, "GET", "/api/workflows", "").await.0,
        StatusCode::UNAUTHORIZED
    );
    let response = router
        .clone()
        .oneshot(
            Request::builder()
                .uri("/api/workflows")
                .header("X-API-Key", "k1")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}
