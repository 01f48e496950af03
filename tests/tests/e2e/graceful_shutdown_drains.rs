//! Graceful shutdown: intake stops at once (`ShuttingDown`); running tasks that finish
//! within the deadline complete; those that do not are failed visibly, with a message
//! saying the runtime shut down; tasks waiting for input are left as they are; and
//! every session stops.
//!
//! Paused time: the deadline and the agents' work pass on tokio's clock, which the
//! runtime advances by itself whenever every task is waiting.

use std::time::Duration;

use agentyard::{
    Agent, AgentDescriptor, AgentError, ContextId, Error, EventKind, Message, Runtime, TaskContext,
    TaskId, TaskState,
};
use agentyard_tests::{Asking, Calls, EventLog, Gated, eventually, status_text, within};
use tokio::time::Instant;

const SOON: Duration = Duration::from_secs(60);
const DEADLINE: Duration = Duration::from_secs(1);

/// Works for half a second (of tokio time), then replies.
#[derive(Clone, Default)]
struct Quick {
    started: Calls,
}

impl Agent for Quick {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.started.hit();
        tokio::time::sleep(Duration::from_millis(500)).await;
        ctx.reply_text("done in time");
        Ok(())
    }
}

struct Agents {
    quick: Quick,
    stuck: Gated,
    asking: Asking,
}

async fn runtime() -> (Runtime, Agents) {
    let agents = Agents {
        quick: Quick::default(),
        stuck: Gated::default(),
        asking: Asking::default(),
    };
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("quick"), {
            let quick = agents.quick.clone();
            move |_| quick.clone()
        })
        .agent(AgentDescriptor::new("stuck"), {
            let stuck = agents.stuck.clone();
            move |_| stuck.clone()
        })
        .agent(AgentDescriptor::new("painter"), {
            let asking = agents.asking.clone();
            move |_| asking.clone()
        })
        .build()
        .await
        .expect("runtime starts");
    (runtime, agents)
}

async fn state(runtime: &Runtime, task_id: &TaskId) -> (TaskState, String) {
    let task = runtime.get_task(task_id, None).await.expect("kept");
    (task.status.state, status_text(&task))
}

#[tokio::test(start_paused = true)]
async fn shutdown_completes_what_finishes_in_time_and_fails_the_rest_visibly() {
    let (runtime, agents) = runtime().await;
    let waiting = runtime
        .send_and_wait("painter", Message::user_text("paint the shed"))
        .await
        .expect("sent");
    assert_eq!(waiting.task.status.state, TaskState::InputRequired);
    let quick = runtime
        .send("quick", Message::user_text("hurry"))
        .await
        .expect("sent");
    let stuck = runtime
        .send("stuck", Message::user_text("never ends"))
        .await
        .expect("sent");
    eventually(SOON, "both agents are working", async || {
        agents.quick.started.count() == 1 && agents.stuck.started.count() == 1
    })
    .await;

    let began = Instant::now();
    within(SOON, "shutdown", runtime.shutdown(DEADLINE)).await;
    assert!(
        began.elapsed() >= DEADLINE,
        "shutdown waited for the deadline: {:?}",
        began.elapsed()
    );

    assert_eq!(
        state(&runtime, &quick.task.id).await,
        (TaskState::Completed, "done in time".to_owned())
    );
    let (stuck_state, why) = state(&runtime, &stuck.task.id).await;
    assert_eq!(stuck_state, TaskState::Failed);
    assert!(why.contains("shut down"), "the failure says why: {why}");
    assert_eq!(
        state(&runtime, &waiting.task.id).await.0,
        TaskState::InputRequired,
        "a task waiting for input is left as it is"
    );
    assert_eq!(runtime.supervisor().session_count(), 0);
}

#[tokio::test(start_paused = true)]
async fn shutdown_returns_as_soon_as_the_running_work_is_done() {
    let (runtime, agents) = runtime().await;
    let quick = runtime
        .send("quick", Message::user_text("hurry"))
        .await
        .expect("sent");
    eventually(SOON, "the agent is working", async || {
        agents.quick.started.count() == 1
    })
    .await;

    let began = Instant::now();
    runtime.shutdown(Duration::from_secs(3600)).await;
    assert!(
        began.elapsed() < Duration::from_secs(1),
        "shutdown waited only for the work: {:?}",
        began.elapsed()
    );
    assert_eq!(
        state(&runtime, &quick.task.id).await.0,
        TaskState::Completed
    );
}

#[tokio::test(start_paused = true)]
async fn after_shutdown_new_sends_and_sessions_are_refused() {
    let (runtime, _agents) = runtime().await;
    runtime.shutdown(DEADLINE).await;

    let error = runtime
        .send("quick", Message::user_text("too late"))
        .await
        .expect_err("intake has stopped");
    assert!(matches!(error, Error::ShuttingDown), "{error:?}");
    let error = runtime
        .send_and_wait("quick", Message::user_text("too late"))
        .await
        .expect_err("intake has stopped");
    assert!(matches!(error, Error::ShuttingDown), "{error:?}");
    assert!(matches!(
        runtime.spawn_session("quick", None),
        Err(Error::ShuttingDown)
    ));
}

#[tokio::test(start_paused = true)]
async fn a_send_still_waiting_in_line_at_shutdown_is_refused_and_never_runs() {
    let (runtime, agents) = runtime().await;
    let log = EventLog::start(&runtime);
    let context = ContextId::new("busy");
    let say = |text: &str| Message::user_text(text).with_context_id(context.clone());

    let running = runtime.send("stuck", say("first")).await.expect("sent");
    eventually(SOON, "the first message is running", async || {
        agents.stuck.started.count() == 1
    })
    .await;
    // The session runs one message at a time: the second waits in its line.
    let queued = tokio::spawn({
        let runtime = runtime.clone();
        let message = say("second");
        async move { runtime.send_and_wait("stuck", message).await }
    });
    // On this single-threaded runtime the send runs on until it waits for the
    // session's permit before the log's reader gets to record its first event.
    eventually(SOON, "the second send is in line", async || {
        log.count(EventKind::SendInitiated) == 2
    })
    .await;

    runtime.shutdown(DEADLINE).await;
    let outcome = within(SOON, "the queued send", queued)
        .await
        .expect("no panic");

    assert_eq!(
        agents.stuck.started.count(),
        1,
        "the queued message never reached the agent"
    );
    assert!(
        matches!(outcome, Err(Error::ShuttingDown)),
        "a send that had no task yet is refused like a new one: {outcome:?}"
    );
    assert_eq!(state(&runtime, &running.task.id).await.0, TaskState::Failed);
    assert_eq!(runtime.supervisor().session_count(), 0);
}
