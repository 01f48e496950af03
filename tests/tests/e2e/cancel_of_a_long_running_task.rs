//! Cancel: a canceled task ends `canceled` at once, whether its agent stops when told
//! or ignores the signal (it is then dropped after the grace period, freeing its
//! session); an ended task cannot be canceled and an unknown one is not found.
//!
//! Paused time: the grace period passes on tokio's clock, which the runtime advances
//! by itself once every task is waiting, so the test takes no real time.

use std::time::Duration;

use agentyard::{
    Agent, AgentDescriptor, AgentError, ContextId, Error, Message, Runtime, TaskContext, TaskId,
    TaskState,
};
use agentyard_tests::{Calls, Cancellable, Echo, EventLog, eventually, status_text, within};
use tokio::time::Instant;

const SOON: Duration = Duration::from_secs(5);
const GRACE: Duration = Duration::from_secs(2);

#[tokio::test(start_paused = true)]
async fn a_task_whose_agent_waits_for_cancel_ends_canceled() {
    let agent = Cancellable::default();
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("worker"), {
            let agent = agent.clone();
            move |_| agent.clone()
        })
        .build()
        .await
        .expect("runtime starts");

    let log = EventLog::start(&runtime);
    let waiter = tokio::spawn({
        let runtime = runtime.clone();
        async move {
            runtime
                .send_and_wait("worker", Message::user_text("work forever"))
                .await
        }
    });
    eventually(SOON, "the agent is working", async || {
        agent.started.count() == 1
    })
    .await;
    let task_id = log
        .wait_for(SOON, "the task's first event", |e| e.task_id.is_some())
        .await
        .task_id
        .clone()
        .expect("selected for its task id");

    let canceled = runtime
        .cancel_task(&task_id)
        .await
        .expect("a running task can be canceled");
    assert_eq!(canceled.status.state, TaskState::Canceled);
    eventually(SOON, "the agent noticed", async || {
        agent.noticed.count() == 1
    })
    .await;

    let done = within(SOON, "the waiting send", waiter)
        .await
        .expect("no panic")
        .expect("the send is answered");
    assert_eq!(done.task.status.state, TaskState::Canceled);
    let stored = runtime.get_task(&task_id, None).await.expect("kept");
    assert_eq!(
        stored.status.state,
        TaskState::Canceled,
        "the agent returning Ok afterwards does not complete a canceled task"
    );
}

/// Ignores cancellation on the text `hang` (waits forever); replies otherwise.
#[derive(Clone, Default)]
struct Stubborn {
    started: Calls,
}

impl Agent for Stubborn {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.started.hit();
        if ctx.message().text() == "hang" {
            std::future::pending::<()>().await;
        }
        ctx.reply_text("quick");
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn an_agent_that_ignores_cancel_still_ends_canceled_and_frees_its_session_after_the_grace() {
    let agent = Stubborn::default();
    let runtime = Runtime::builder()
        .cancel_grace(GRACE)
        .agent(AgentDescriptor::new("stubborn"), {
            let agent = agent.clone();
            move |_| agent.clone()
        })
        .build()
        .await
        .expect("runtime starts");
    let context = ContextId::new("stuck");

    let submitted = runtime
        .send(
            "stubborn",
            Message::user_text("hang").with_context_id(context.clone()),
        )
        .await
        .expect("sent");
    eventually(SOON, "the agent is hanging", async || {
        agent.started.count() == 1
    })
    .await;

    let canceled_at = Instant::now();
    let canceled = runtime
        .cancel_task(&submitted.task.id)
        .await
        .expect("a running task can be canceled");
    assert_eq!(canceled.status.state, TaskState::Canceled);
    assert_eq!(
        canceled_at.elapsed(),
        Duration::ZERO,
        "cancel does not wait for the agent"
    );

    // The session takes one message at a time: the next one runs only once the
    // stubborn handler has been dropped, at the end of the grace period.
    let next = within(
        SOON,
        "the next message to the session",
        runtime.send_and_wait(
            "stubborn",
            Message::user_text("hello").with_context_id(context.clone()),
        ),
    )
    .await
    .expect("the session takes messages again");
    assert_eq!(status_text(&next.task), "quick");
    assert!(
        canceled_at.elapsed() >= GRACE,
        "the handler got its grace period: {:?}",
        canceled_at.elapsed()
    );
    assert_eq!(
        runtime
            .get_task(&submitted.task.id, None)
            .await
            .expect("kept")
            .status
            .state,
        TaskState::Canceled
    );
}

#[tokio::test]
async fn a_completed_task_cannot_be_canceled() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("echo"), |_| Echo::default())
        .build()
        .await
        .expect("runtime starts");
    let done = runtime
        .send_and_wait("echo", Message::user_text("hi"))
        .await
        .expect("sent");

    let error = runtime
        .cancel_task(&done.task.id)
        .await
        .expect_err("it has ended");
    assert!(
        matches!(&error, Error::TaskNotCancelable { task_id, state: TaskState::Completed } if *task_id == done.task.id),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_canceled_task_cannot_be_canceled_again() {
    let agent = Cancellable::default();
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("worker"), {
            let agent = agent.clone();
            move |_| agent.clone()
        })
        .build()
        .await
        .expect("runtime starts");
    let submitted = runtime
        .send("worker", Message::user_text("work"))
        .await
        .expect("sent");
    runtime
        .cancel_task(&submitted.task.id)
        .await
        .expect("first cancel");

    let error = runtime
        .cancel_task(&submitted.task.id)
        .await
        .expect_err("already canceled");
    assert!(
        matches!(
            &error,
            Error::TaskNotCancelable {
                state: TaskState::Canceled,
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn cancel_of_an_unknown_task_is_task_not_found() {
    let runtime = Runtime::builder().build().await.expect("runtime starts");
    let error = runtime
        .cancel_task(&TaskId::new("no-such-task"))
        .await
        .expect_err("nothing to cancel");
    assert!(
        matches!(&error, Error::TaskNotFound(id) if id.as_str() == "no-such-task"),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_task_waiting_for_input_can_be_canceled_and_takes_no_more_messages() {
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("painter"), |_| {
            agentyard_tests::Asking::default()
        })
        .build()
        .await
        .expect("runtime starts");
    let asked = runtime
        .send_and_wait("painter", Message::user_text("paint the shed"))
        .await
        .expect("sent");
    assert_eq!(asked.task.status.state, TaskState::InputRequired);

    let canceled = runtime
        .cancel_task(&asked.task.id)
        .await
        .expect("a waiting task can be canceled");
    assert_eq!(canceled.status.state, TaskState::Canceled);

    let error = runtime
        .send(
            "painter",
            Message::user_text("blue").with_task_id(asked.task.id.clone()),
        )
        .await
        .expect_err("the task has ended");
    assert!(
        matches!(
            error,
            Error::TaskTerminal {
                state: TaskState::Canceled,
                ..
            }
        ),
        "{error:?}"
    );
}
