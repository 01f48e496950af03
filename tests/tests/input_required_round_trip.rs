//! The input-required round trip: an agent that needs to know more ends its turn in
//! `input-required` with a question; the next message sent to that task resumes it,
//! and the task completes. A message to a task that has ended is refused.

use agentyard::{AgentDescriptor, ContextId, Error, Message, Role, Runtime, TaskId, TaskState};
use agentyard_tests::agents::QUESTION;
use agentyard_tests::{Asking, Echo, status_text};

async fn runtime(asking: &Asking) -> Runtime {
    Runtime::builder()
        .agent(AgentDescriptor::new("painter"), {
            let asking = asking.clone();
            move |_| asking.clone()
        })
        .agent(AgentDescriptor::new("echo"), |_| Echo::default())
        .build()
        .await
        .expect("runtime starts")
}

#[tokio::test]
async fn a_question_is_answered_by_a_message_to_the_task_and_the_task_completes() {
    let asking = Asking::default();
    let runtime = runtime(&asking).await;

    let asked = runtime
        .send_and_wait("painter", Message::user_text("paint the shed"))
        .await
        .expect("sent");
    assert_eq!(asked.task.status.state, TaskState::InputRequired);
    assert_eq!(status_text(&asked.task), QUESTION);
    let question = asked.task.status.message.as_ref().expect("a question");
    assert_eq!(question.role, Role::Agent);

    let answered = runtime
        .send_and_wait(
            "painter",
            Message::user_text("blue").with_task_id(asked.task.id.clone()),
        )
        .await
        .expect("the answer resumes the task");
    assert_eq!(answered.task.id, asked.task.id, "the same task continues");
    assert_eq!(answered.task.context_id, asked.task.context_id);
    assert_eq!(answered.task.status.state, TaskState::Completed);
    assert_eq!(status_text(&answered.task), "painting it blue");
    assert_eq!(asking.calls.count(), 2);

    let history: Vec<(Role, String)> = answered
        .task
        .history
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|m| (m.role, m.text()))
        .collect();
    assert_eq!(
        history,
        [
            (Role::User, "paint the shed".to_owned()),
            (Role::Agent, QUESTION.to_owned()),
            (Role::User, "blue".to_owned()),
            (Role::Agent, "painting it blue".to_owned()),
        ],
        "the whole exchange is the task's history"
    );
}

#[tokio::test]
async fn a_message_to_a_completed_task_is_refused() {
    let asking = Asking::default();
    let runtime = runtime(&asking).await;
    let asked = runtime
        .send_and_wait("painter", Message::user_text("paint the shed"))
        .await
        .expect("sent");
    runtime
        .send_and_wait(
            "painter",
            Message::user_text("blue").with_task_id(asked.task.id.clone()),
        )
        .await
        .expect("the answer resumes the task");

    let error = runtime
        .send_and_wait(
            "painter",
            Message::user_text("actually, red").with_task_id(asked.task.id.clone()),
        )
        .await
        .expect_err("the task has ended");
    assert!(
        matches!(&error, Error::TaskTerminal { task_id, state: TaskState::Completed } if *task_id == asked.task.id),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("without a taskId"),
        "the error says what to do instead: {error}"
    );
    assert_eq!(asking.calls.count(), 2, "the agent did not run again");
}

#[tokio::test]
async fn a_message_to_an_unknown_or_foreign_task_is_refused() {
    let asking = Asking::default();
    let runtime = runtime(&asking).await;

    let unknown = runtime
        .send(
            "painter",
            Message::user_text("blue").with_task_id(TaskId::new("no-such-task")),
        )
        .await
        .expect_err("no such task");
    assert!(matches!(unknown, Error::TaskNotFound(_)), "{unknown:?}");

    let asked = runtime
        .send_and_wait("painter", Message::user_text("paint the shed"))
        .await
        .expect("sent");
    let other_agent = runtime
        .send(
            "echo",
            Message::user_text("blue").with_task_id(asked.task.id.clone()),
        )
        .await
        .expect_err("the task belongs to the painter");
    assert!(
        matches!(other_agent, Error::TaskMismatch { .. }),
        "{other_agent:?}"
    );
    let other_context = runtime
        .send(
            "painter",
            Message::user_text("blue")
                .with_task_id(asked.task.id.clone())
                .with_context_id(ContextId::new("another-conversation")),
        )
        .await
        .expect_err("the task belongs to another conversation");
    assert!(
        matches!(other_context, Error::TaskMismatch { .. }),
        "{other_context:?}"
    );

    let still_waiting = runtime.get_task(&asked.task.id, None).await.expect("kept");
    assert_eq!(
        still_waiting.status.state,
        TaskState::InputRequired,
        "refused messages leave the task as it was"
    );
}
