//! Passivation: a session idle for the idle timeout is stopped (its actor goes away)
//! and the next message to its conversation starts it again, with the conversation's
//! history intact. A session with work running is never passivated. The history an
//! agent sees is its own conversation's, up to the configured depth.
//!
//! Paused time: the idle timeout passes on tokio's clock, which the runtime advances
//! by itself whenever every task is waiting.

use std::time::Duration;

use agentyard::{AgentDescriptor, ContextId, Message, Runtime, TaskState};
use agentyard_tests::{Gated, Recorder, eventually};

const IDLE: Duration = Duration::from_secs(1);
const SOON: Duration = Duration::from_secs(30);

#[tokio::test(start_paused = true)]
async fn an_idle_session_is_passivated_and_reactivated_with_its_history() {
    let recorder = Recorder::default();
    let runtime = Runtime::builder()
        .idle_timeout(IDLE)
        .agent(AgentDescriptor::new("notes"), {
            let recorder = recorder.clone();
            move |_| recorder.clone()
        })
        .build()
        .await
        .expect("runtime starts");
    let context = ContextId::new("diary");
    let say = |text: &str| Message::user_text(text).with_context_id(context.clone());

    runtime
        .send_and_wait("notes", say("first"))
        .await
        .expect("sent");
    runtime
        .send_and_wait("notes", say("second"))
        .await
        .expect("sent");
    assert_eq!(runtime.supervisor().session_count(), 1);

    eventually(SOON, "the idle session is passivated", async || {
        runtime.supervisor().session_count() == 0
    })
    .await;

    let third = runtime
        .send_and_wait("notes", say("third"))
        .await
        .expect("the conversation goes on");
    assert_eq!(third.task.status.state, TaskState::Completed);
    assert_eq!(
        runtime.supervisor().session_count(),
        1,
        "the message re-activated the session"
    );
    let seen = recorder.seen();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[2].text, "third");
    assert_eq!(
        seen[2].history,
        ["first", "noted: first", "second", "noted: second"],
        "the re-activated session sees the conversation so far"
    );
}

#[tokio::test(start_paused = true)]
async fn a_session_with_running_work_is_not_passivated() {
    let gated = Gated::default();
    let runtime = Runtime::builder()
        .idle_timeout(IDLE)
        .agent(AgentDescriptor::new("slow"), {
            let gated = gated.clone();
            move |_| gated.clone()
        })
        .build()
        .await
        .expect("runtime starts");

    let submitted = runtime
        .send("slow", Message::user_text("take your time"))
        .await
        .expect("sent");
    eventually(SOON, "the agent is working", async || {
        gated.started.count() == 1
    })
    .await;

    // Let ten idle timeouts pass on the paused clock (no real time): the sweeps
    // that run meanwhile must leave the busy session alone.
    tokio::time::sleep(IDLE * 10).await;
    assert_eq!(
        runtime.supervisor().session_count(),
        1,
        "ten idle timeouts later the busy session is still live"
    );

    gated.gate.open();
    eventually(SOON, "the task completes", async || {
        runtime
            .get_task(&submitted.task.id, None)
            .await
            .is_ok_and(|t| t.status.state == TaskState::Completed)
    })
    .await;
    eventually(
        SOON,
        "the session, idle at last, is passivated",
        async || runtime.supervisor().session_count() == 0,
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_task_waiting_for_input_survives_the_passivation_of_its_session() {
    let asking = agentyard_tests::Asking::default();
    let runtime = Runtime::builder()
        .idle_timeout(IDLE)
        .agent(AgentDescriptor::new("painter"), {
            let asking = asking.clone();
            move |_| asking.clone()
        })
        .build()
        .await
        .expect("runtime starts");

    let asked = runtime
        .send_and_wait("painter", Message::user_text("paint the shed"))
        .await
        .expect("sent");
    assert_eq!(asked.task.status.state, TaskState::InputRequired);
    eventually(SOON, "the waiting session is passivated", async || {
        runtime.supervisor().session_count() == 0
    })
    .await;

    let answered = runtime
        .send_and_wait(
            "painter",
            Message::user_text("green").with_task_id(asked.task.id.clone()),
        )
        .await
        .expect("the answer reaches a fresh session");
    assert_eq!(answered.task.status.state, TaskState::Completed);
    assert_eq!(
        agentyard_tests::status_text(&answered.task),
        "painting it green",
        "the fresh session saw its own question in the history"
    );
}

#[tokio::test]
async fn an_agent_sees_the_conversation_up_to_the_configured_depth() {
    let recorder = Recorder::default();
    let runtime = Runtime::builder()
        .history_depth(3)
        .agent(AgentDescriptor::new("notes"), {
            let recorder = recorder.clone();
            move |_| recorder.clone()
        })
        .build()
        .await
        .expect("runtime starts");
    let context = ContextId::new("long-talk");

    for text in ["one", "two", "three"] {
        runtime
            .send_and_wait(
                "notes",
                Message::user_text(text).with_context_id(context.clone()),
            )
            .await
            .expect("sent");
    }
    runtime
        .send_and_wait("notes", Message::user_text("elsewhere"))
        .await
        .expect("sent");

    let seen = recorder.seen();
    assert_eq!(seen[0].history, Vec::<String>::new());
    assert_eq!(seen[1].history, ["one", "noted: one"]);
    assert_eq!(
        seen[2].history,
        ["noted: one", "two", "noted: two"],
        "the three most recent messages, oldest first"
    );
    assert_eq!(
        seen[3].history,
        Vec::<String>::new(),
        "another conversation's history is its own"
    );
}
