//! A user's own agent served over HTTP through the facade alone, as
//! `examples/serve_my_agent.rs` does it: `Runtime::serve(HttpConfig)`, then the typed
//! client finds the agent by its card (with the skill the descriptor gave it), sends,
//! and gets the agent's answer; stopping the server closes the port.

use agentyard::a2a::{MessageSendParams, SendMessageResult};
use agentyard::client::A2aClient;
use agentyard::{
    Agent, AgentDescriptor, AgentError, AgentProvider, AgentSkill, HttpConfig, Message, Runtime,
    TaskContext, TaskState,
};
use agentyard_tests::PATIENCE;

/// The user's agent: answers in capitals.
struct Shouter;

impl Agent for Shouter {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(text.to_uppercase());
        Ok(())
    }
}

#[tokio::test]
async fn a_users_agent_is_served_and_answers_the_typed_client() {
    let runtime = Runtime::builder()
        .agent(
            AgentDescriptor::new("shouter")
                .description("Says it louder")
                .skill(AgentSkill::new("shout", "Shout", "Repeats in capitals"))
                .expose(),
            |_| Shouter,
        )
        .agent(AgentDescriptor::new("private"), |_| Shouter)
        .build()
        .await
        .expect("the runtime starts");
    let server = runtime
        .serve(
            HttpConfig::default()
                .agents(["shouter"])
                .provider(AgentProvider {
                    organization: String::from("Example Org"),
                    url: String::from("https://example.org"),
                }),
        )
        .await
        .expect("the server starts");
    assert!(server.base_url().starts_with("http://127.0.0.1:"));

    let client = A2aClient::new(&server.card_url("shouter"))
        .await
        .expect("the card is served");
    let card = client.card().expect("the client read the card");
    assert_eq!(card.name, "shouter");
    assert_eq!(card.skills[0].id, "shout");
    assert_eq!(
        card.provider.as_ref().map(|p| p.organization.as_str()),
        Some("Example Org")
    );

    let answer = client
        .send_message(MessageSendParams::new(Message::user_text("hello")))
        .await
        .expect("the send is answered");
    let SendMessageResult::Task(task) = answer else {
        panic!("a task, not {answer:?}");
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(task.status.message.expect("a reply").text(), "HELLO");

    // An agent that is not exposed does not exist from outside.
    assert!(A2aClient::new(&server.card_url("private")).await.is_err());

    let addr = server.local_addr();
    server.stop().await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the port closed"
    );
    runtime.shutdown(PATIENCE).await;
}

#[tokio::test]
async fn serving_an_agent_that_is_not_exposed_fails_naming_it() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("private"), |_| Shouter)
        .build()
        .await
        .expect("the runtime starts");
    let error = runtime
        .serve(HttpConfig::default().agents(["private"]))
        .await
        .expect_err("a private agent cannot be served");
    assert!(error.to_string().contains("private"), "{error}");
    runtime.shutdown(PATIENCE).await;
}
