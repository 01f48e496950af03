//! The single send path (the seed's "correctness by construction"): whatever way a
//! message reaches an agent — `send`, `send_and_wait`, `stream`, a resumed task, an
//! agent sending to another — the policy is asked first, and a rule written for one
//! entry point applies to it wherever the send is made from.
//!
//! (That nothing outside the actors crate can reach a session's mailbox is a matter
//! of visibility: its message type is crate-private, so code that tried would not
//! compile.)

use std::sync::{Arc, Mutex};

use agentyard::policy::{
    Decision, EntryPoint, Pattern, Policy, RejectionKind, Rule, RulePolicy, SendRequest,
};
use agentyard::{
    Agent, AgentDescriptor, AgentError, Error, Message, Runtime, TaskContext, TaskState,
};
use agentyard_tests::{Asking, Calls, Echo, status_text};
use futures::StreamExt;

/// Allows everything and writes down every send it is asked about.
#[derive(Clone, Default)]
struct Witness {
    asked: Arc<Mutex<Vec<(String, String)>>>,
}

impl Witness {
    fn asked(&self) -> Vec<(String, String)> {
        self.asked.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Policy for Witness {
    fn check_rules(&self, req: &SendRequest<'_>) -> Decision {
        self.asked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((req.entry_point.as_str().to_owned(), req.to.to_owned()));
        Decision::Allow
    }
}

/// Asks `echo` and replies with its answer.
#[derive(Clone, Default)]
struct Relay {
    calls: Calls,
}

impl Agent for Relay {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.calls.hit();
        let answer = ctx
            .send_and_wait("echo", Message::user_text(ctx.message().text()))
            .await?;
        ctx.reply_text(status_text(&answer.task));
        Ok(())
    }
}

#[tokio::test]
async fn the_policy_is_asked_before_every_run_of_every_agent() {
    let witness = Witness::default();
    let echo = Echo::default();
    let relay = Relay::default();
    let asking = Asking::default();
    let runtime = Runtime::builder()
        .policy(witness.clone())
        .agent(AgentDescriptor::new("echo"), {
            let echo = echo.clone();
            move |_| echo.clone()
        })
        .agent(AgentDescriptor::new("relay"), {
            let relay = relay.clone();
            move |_| relay.clone()
        })
        .agent(AgentDescriptor::new("painter"), {
            let asking = asking.clone();
            move |_| asking.clone()
        })
        .build()
        .await
        .expect("runtime starts");

    runtime
        .send_and_wait("echo", Message::user_text("a"))
        .await
        .expect("sent");
    runtime
        .send("echo", Message::user_text("b"))
        .await
        .expect("sent");
    runtime
        .stream("echo", Message::user_text("c"))
        .await
        .expect("sent")
        .collect::<Vec<_>>()
        .await;
    runtime
        .send_and_wait("relay", Message::user_text("d"))
        .await
        .expect("sent");
    let asked = runtime
        .send_and_wait("painter", Message::user_text("paint"))
        .await
        .expect("sent");
    runtime
        .send_and_wait(
            "painter",
            Message::user_text("teal").with_task_id(asked.task.id.clone()),
        )
        .await
        .expect("sent");
    agentyard_tests::eventually(
        std::time::Duration::from_secs(5),
        "echo ran 4 times",
        async || echo.calls.count() == 4,
    )
    .await;

    let pair = |entry: &str, to: &str| (entry.to_owned(), to.to_owned());
    assert_eq!(
        witness.asked(),
        [
            pair("api", "echo"),
            pair("api", "echo"),
            pair("api", "echo"),
            pair("api", "relay"),
            pair("agent", "echo"),
            pair("api", "painter"),
            pair("api", "painter"),
        ],
        "one policy question per send, in order, naming its entry point"
    );
    let runs = echo.calls.count() + relay.calls.count() + asking.calls.count();
    assert_eq!(runs, witness.asked().len(), "no agent ran unasked");
}

#[tokio::test]
async fn a_rule_for_the_agent_entry_point_stops_sends_made_from_inside_agents() {
    let echo = Echo::default();
    let runtime = Runtime::builder()
        .policy(
            RulePolicy::builder()
                .rule(
                    Rule::deny()
                        .named("no delegation to echo")
                        .entry_point(EntryPoint::Agent)
                        .to(Pattern::exact("echo")),
                )
                .build(),
        )
        .agent(AgentDescriptor::new("echo"), {
            let echo = echo.clone();
            move |_| echo.clone()
        })
        .agent(AgentDescriptor::new("relay"), |_| Relay::default())
        .build()
        .await
        .expect("runtime starts");

    let relayed = runtime
        .send_and_wait("relay", Message::user_text("pass it on"))
        .await
        .expect("the outer send is allowed");
    assert_eq!(relayed.task.status.state, TaskState::Failed);
    let text = status_text(&relayed.task);
    assert!(text.contains("no delegation to echo"), "{text}");
    assert_eq!(echo.calls.count(), 0, "the inner send never ran echo");

    let direct = runtime
        .send_and_wait("echo", Message::user_text("straight in"))
        .await
        .expect("the rule is about agents, not the api");
    assert_eq!(direct.task.status.state, TaskState::Completed);
    assert_eq!(echo.calls.count(), 1);

    let error = runtime
        .supervisor()
        .send(
            agentyard::SendRequest::new("echo", Message::user_text("pretending"))
                .entry_point(EntryPoint::Agent)
                .from("relay"),
        )
        .await
        .expect_err("the same rule applies whoever builds the request");
    assert!(
        matches!(&error, Error::PolicyRejected { rejection, .. } if matches!(rejection.kind(), RejectionKind::RuleDenied { .. })),
        "{error:?}"
    );
}
