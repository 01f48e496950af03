//! A → B → A in one conversation: A's session is busy waiting on B, so B's send back
//! into it could never run. The supervisor refuses it at once with
//! `Error::DelegationCycle` instead of letting both wait forever; a fire-and-forget
//! send back is not a cycle (nobody waits) and goes through.

use std::time::Duration;

use agentyard::{
    Agent, AgentDescriptor, AgentError, Error, Message, Runtime, TaskContext, TaskState,
};
use agentyard_tests::{status_text, within};

const SOON: Duration = Duration::from_secs(10);

/// Asks its partner in the same conversation and reports what came back.
struct SameConversation {
    partner: &'static str,
    wait: bool,
}

impl Agent for SameConversation {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        if ctx.hops() >= 2 {
            ctx.reply_text("reached");
            return Ok(());
        }
        let message = Message::user_text("back to you").with_context_id(ctx.context_id().clone());
        let outcome = if self.wait {
            ctx.send_and_wait(self.partner, message).await.map(|_| ())
        } else {
            ctx.send(self.partner, message).await.map(|_| ())
        };
        match outcome {
            Ok(()) => ctx.reply_text("sent"),
            Err(Error::DelegationCycle { agent, .. }) => {
                ctx.reply_text(format!("cycle at {agent}"))
            }
            Err(other) => return Err(other.into()),
        }
        Ok(())
    }
}

async fn runtime(wait: bool) -> Runtime {
    Runtime::builder()
        .agent(AgentDescriptor::new("a"), move |_| SameConversation {
            partner: "b",
            wait,
        })
        .agent(AgentDescriptor::new("b"), move |_| SameConversation {
            partner: "a",
            wait,
        })
        .build()
        .await
        .expect("runtime starts")
}

#[tokio::test]
async fn b_learns_that_its_send_back_would_deadlock() {
    /// Records B's outcome through its reply to A.
    struct Relay;

    impl Agent for Relay {
        async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
            let message = Message::user_text("to b").with_context_id(ctx.context_id().clone());
            let answer = ctx.send_and_wait("b", message).await?;
            ctx.reply_text(status_text(&answer.task));
            Ok(())
        }
    }

    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("a"), |_| Relay)
        .agent(AgentDescriptor::new("b"), |_| SameConversation {
            partner: "a",
            wait: true,
        })
        .build()
        .await
        .expect("runtime starts");
    let done = within(
        SOON,
        "a cycle that must not deadlock",
        runtime.send_and_wait("a", Message::user_text("start")),
    )
    .await
    .expect("sent");
    assert_eq!(status_text(&done.task), "cycle at a");
}

#[tokio::test]
async fn a_fire_and_forget_send_back_is_not_a_cycle() {
    let runtime = runtime(false).await;
    let done = within(
        SOON,
        "a send back that nobody waits on",
        runtime.send_and_wait("a", Message::user_text("start")),
    )
    .await
    .expect("sent");
    assert_eq!(done.task.status.state, TaskState::Completed);
    assert_eq!(status_text(&done.task), "sent");
}
