//! Failure isolation: an agent that panics, or returns an error, fails the task it was
//! handling — state `failed`, the panic or error text in the status message — and
//! nothing else. Its siblings keep running, the process lives on, and the same agent
//! handles the next message to its session as usual.

use std::time::Duration;

use agentyard::{AgentDescriptor, ContextId, Error, Message, Runtime, TaskState};
use agentyard_tests::agents::{ERROR_TEXT, PANIC_TEXT};
use agentyard_tests::{Echo, Fragile, Gated, eventually, status_text};

const SOON: Duration = Duration::from_secs(5);

async fn runtime(fragile: &Fragile, steady: &Gated) -> Runtime {
    Runtime::builder()
        .agent(AgentDescriptor::new("fragile"), {
            let fragile = fragile.clone();
            move |_| fragile.clone()
        })
        .agent(AgentDescriptor::new("steady"), {
            let steady = steady.clone();
            move |_| steady.clone()
        })
        .build()
        .await
        .expect("runtime starts")
}

fn in_context(text: &str, context: &ContextId) -> Message {
    Message::user_text(text).with_context_id(context.clone())
}

#[tokio::test]
async fn a_panic_fails_its_task_with_the_panic_text_and_the_agent_answers_the_next_message() {
    let fragile = Fragile::default();
    let steady = Gated::default();
    let runtime = runtime(&fragile, &steady).await;
    let context = ContextId::new("shaky");

    let crashed = runtime
        .send_and_wait("fragile", in_context("panic", &context))
        .await
        .expect("the send goes through; the task fails");
    assert_eq!(crashed.task.status.state, TaskState::Failed);
    let text = status_text(&crashed.task);
    assert!(text.contains(PANIC_TEXT), "status message: {text}");
    assert!(text.contains("fragile"), "it names the agent: {text}");

    let next = runtime
        .send_and_wait("fragile", in_context("are you there?", &context))
        .await
        .expect("the session still takes messages");
    assert_eq!(next.task.status.state, TaskState::Completed);
    assert_eq!(status_text(&next.task), "fine: are you there?");
    assert_eq!(fragile.calls.count(), 2, "the same session handled both");
    assert_eq!(
        runtime.supervisor().restart_count(),
        0,
        "a panic in user code does not crash the session actor"
    );
    assert_eq!(
        runtime
            .get_task(&crashed.task.id, None)
            .await
            .expect("the failed task is kept")
            .status
            .state,
        TaskState::Failed
    );
}

#[tokio::test]
async fn a_panic_leaves_running_siblings_alone() {
    let fragile = Fragile::default();
    let steady = Gated::default();
    let runtime = runtime(&fragile, &steady).await;
    let shared = ContextId::new("shared");

    // Siblings: another agent in the same conversation, and another conversation of
    // the panicking agent type, both mid-task when the panic happens.
    let sibling_agent = runtime
        .send("steady", in_context("keep going", &shared))
        .await
        .expect("sent");
    let sibling_session = runtime
        .send("steady", Message::user_text("keep going too"))
        .await
        .expect("sent");
    eventually(SOON, "both siblings are working", async || {
        steady.started.count() == 2
    })
    .await;

    let crashed = runtime
        .send_and_wait("fragile", in_context("panic", &shared))
        .await
        .expect("sent");
    assert_eq!(crashed.task.status.state, TaskState::Failed);

    steady.gate.open();
    for sibling in [sibling_agent, sibling_session] {
        let id = &sibling.task.id;
        eventually(SOON, "the sibling completed", async || {
            runtime
                .get_task(id, None)
                .await
                .is_ok_and(|t| t.status.state == TaskState::Completed)
        })
        .await;
    }
    assert_eq!(steady.finished.count(), 2);
}

#[tokio::test]
async fn an_error_fails_its_task_with_the_error_text_and_the_agent_answers_the_next_message() {
    let fragile = Fragile::default();
    let steady = Gated::default();
    let runtime = runtime(&fragile, &steady).await;
    let context = ContextId::new("grumpy");

    let refused = runtime
        .send_and_wait("fragile", in_context("error", &context))
        .await
        .expect("sent");
    assert_eq!(refused.task.status.state, TaskState::Failed);
    let text = status_text(&refused.task);
    assert!(text.contains(ERROR_TEXT), "status message: {text}");

    let next = runtime
        .send_and_wait("fragile", in_context("again", &context))
        .await
        .expect("sent");
    assert_eq!(status_text(&next.task), "fine: again");
}

#[tokio::test]
async fn a_panicking_factory_fails_only_that_send() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("picky"), |info| {
            assert!(
                info.context_id.as_str() != "cursed",
                "this factory refuses the cursed conversation"
            );
            Echo::default()
        })
        .build()
        .await
        .expect("runtime starts");

    let error = runtime
        .send(
            "picky",
            Message::user_text("hi").with_context_id(ContextId::new("cursed")),
        )
        .await
        .expect_err("no agent can be made for this session");
    assert!(
        matches!(&error, Error::SessionUnavailable { agent, .. } if agent == "picky"),
        "{error:?}"
    );

    let fine = runtime
        .send_and_wait("picky", Message::user_text("hi"))
        .await
        .expect("other sessions of the same type work");
    assert_eq!(status_text(&fine.task), "echo: hi");
}
