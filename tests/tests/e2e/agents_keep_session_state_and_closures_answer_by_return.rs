//! The two lighter ways to write an agent, through the runtime builder: a
//! `SessionAgent` keeps per-conversation state in `&mut self` (no lock in its code),
//! and a closure agent's return value is its outcome.

use agentyard::{
    AgentDescriptor, AgentError, ContextId, Message, Outcome, Runtime, SessionAgent, TaskContext,
    TaskState,
};
use agentyard_tests::status_text;

/// Counts the messages of its conversation.
#[derive(Default)]
struct Tally {
    seen: usize,
}

impl SessionAgent for Tally {
    async fn handle(&mut self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.seen += 1;
        ctx.reply_text(format!("message {} here", self.seen));
        Ok(())
    }
}

async fn runtime() -> Runtime {
    Runtime::builder()
        .session_agent(AgentDescriptor::new("tally"), |_| Tally::default())
        .agent_fn(
            AgentDescriptor::new("shout"),
            |message: Message| async move {
                match message.text().as_str() {
                    "" => Ok(Outcome::InputRequired(String::from("say something"))),
                    text => Ok::<_, AgentError>(Outcome::from(text.to_uppercase())),
                }
            },
        )
        .build()
        .await
        .expect("runtime starts")
}

fn in_conversation(text: &str, context: &str) -> Message {
    Message::user_text(text).with_context_id(ContextId::new(context))
}

#[tokio::test]
async fn a_session_agent_counts_each_conversation_on_its_own() {
    let runtime = runtime().await;
    let mut replies = Vec::new();
    for context in ["a", "a", "b", "a"] {
        let done = runtime
            .send_and_wait("tally", in_conversation("hi", context))
            .await
            .expect("answered");
        replies.push(status_text(&done.task));
    }
    assert_eq!(
        replies,
        [
            "message 1 here",
            "message 2 here",
            "message 1 here",
            "message 3 here"
        ]
    );
}

#[tokio::test]
async fn a_closure_agent_answers_with_what_it_returns() {
    let runtime = runtime().await;
    let done = runtime
        .send_and_wait("shout", Message::user_text("quiet please"))
        .await
        .expect("answered");
    assert_eq!(
        (done.task.status.state, status_text(&done.task)),
        (TaskState::Completed, String::from("QUIET PLEASE"))
    );
    let asked = runtime
        .send_and_wait("shout", Message::user_text(""))
        .await
        .expect("answered");
    assert_eq!(asked.task.status.state, TaskState::InputRequired);
    assert_eq!(status_text(&asked.task), "say something");
}
