use agentyard_transport::a2a::TaskState;
use tokio_util::task::TaskTracker;

use super::*;
use crate::port::tests::TestPort;
use crate::store::TaskStore;

/// Runs `agent` on one message `text` of conversation `c` and returns the task's
/// final state and status text.
async fn turn(agent: &Arc<dyn DynAgent>, text: &str) -> (TaskState, String) {
    let port = TestPort::new();
    let opened = port.open(text).await;
    let task_id = opened.events.task_id.clone();
    let tracker = TaskTracker::new();
    opened.work(&port, &tracker).run(Arc::clone(agent)).await;
    let task = port
        .store
        .get(&task_id, None)
        .await
        .expect("store")
        .expect("task");
    let text = task
        .status
        .message
        .as_deref()
        .map(Message::text)
        .unwrap_or_default();
    (task.status.state, text)
}

fn info(context: &str) -> SessionInfo {
    SessionInfo {
        agent: Arc::from("a"),
        context_id: ContextId::new(context),
    }
}

#[derive(Default)]
struct Counter {
    seen: u32,
}

impl SessionAgent for Counter {
    async fn handle(&mut self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.seen += 1;
        ctx.reply_text(self.seen.to_string());
        Ok(())
    }
}

#[tokio::test]
async fn a_session_agent_keeps_its_state_across_messages_without_a_lock_of_its_own() {
    let registration = Registration::session(AgentDescriptor::new("a"), |_| Counter::default());
    let one = (registration.factory)(&info("one"));
    let other = (registration.factory)(&info("other"));
    assert_eq!(turn(&one, "x").await.1, "1");
    assert_eq!(turn(&one, "x").await.1, "2");
    assert_eq!(
        turn(&other, "x").await.1,
        "1",
        "each session has its own state"
    );
}

#[tokio::test]
async fn a_closure_agent_sets_its_outcome_by_what_it_returns() {
    let registration = Registration::from_fn(AgentDescriptor::new("a"), |m: Message| async move {
        match m.text().as_str() {
            "ask" => Ok(Outcome::InputRequired(String::from("which?"))),
            "no" => Ok(Outcome::Rejected(String::from("not mine"))),
            "err" => Err(AgentError::from("broke")),
            text => Ok(Outcome::from(text.to_uppercase())),
        }
    });
    let agent = (registration.factory)(&info("c"));
    assert_eq!(
        turn(&agent, "hi").await,
        (TaskState::Completed, String::from("HI"))
    );
    assert_eq!(turn(&agent, "ask").await.0, TaskState::InputRequired);
    assert_eq!(turn(&agent, "no").await.0, TaskState::Rejected);
    assert_eq!(turn(&agent, "err").await.0, TaskState::Failed);
}

#[test]
fn a_descriptor_starts_at_its_documented_defaults() {
    let descriptor = AgentDescriptor::new("a");
    assert_eq!(descriptor.version, "0.1.0");
    assert!(!descriptor.exposed);
    assert_eq!(descriptor.concurrency, None);
    assert_eq!(descriptor.input_modes, ["text/plain", "application/json"]);
}
