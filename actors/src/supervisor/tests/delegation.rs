//! Agent-to-agent sends through a real supervisor: the delegation chain a context
//! carries, and the stamp it puts on every request. (The old bypass,
//! `ctx.supervisor()`, is gone: see the compile-fail example on `TaskContext`.)

use std::sync::Arc;

use agentyard_policy::{AllowAll, EntryPoint};
use agentyard_transport::ContextId;
use agentyard_transport::a2a::{Message, TaskState};
use agentyard_transport::handoff::{HandoffPayload, TaskDelegation};

use crate::agent::{Agent, AgentDescriptor, AgentError, Registration, TaskContext};
use crate::error::Error;
use crate::store::InMemoryTaskStore;
use crate::supervisor::{SendRequest, Supervisor, SupervisorConfig};

/// Every way a [`TaskContext`] sends and waits to a conversation of the sender's
/// choosing. ([`TaskContext::delegate`] always starts a new conversation, and is
/// `send_request_and_wait` with a payload: `WithPayload` covers it.)
#[derive(Debug, Clone, Copy)]
enum Waiting {
    SendAndWait,
    SendRequestAndWait,
    WithPayload,
}

/// Relays what it is sent to `back` in the same conversation, so `back`'s answer
/// comes through this session while it waits.
struct Relay;

impl Agent for Relay {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        let message = Message::user_text("to back").with_context_id(ctx.context_id().clone());
        let answer = ctx.send_and_wait("back", message).await?;
        let text = answer
            .task
            .status
            .message
            .as_deref()
            .map(Message::text)
            .unwrap_or_default();
        ctx.reply_text(text);
        Ok(())
    }
}

/// Sends back into the relay's waiting session by one of the waiting methods and
/// replies with what it was told.
struct Back(Waiting);

impl Agent for Back {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        let message = Message::user_text("back").with_context_id(ctx.context_id().clone());
        let outcome = match self.0 {
            Waiting::SendAndWait => ctx.send_and_wait("relay", message).await,
            Waiting::WithPayload => {
                let payload = HandoffPayload::from(
                    TaskDelegation::builder()
                        .task_id("job-1")
                        .task_title("Loop")
                        .task_description("back into the relay")
                        .build()?,
                );
                let request = ctx.request_to("relay", message).payload(payload);
                ctx.send_request_and_wait(request).await
            }
            Waiting::SendRequestAndWait => {
                // Even a request that claims to come from outside is stamped as this
                // agent's, chain included.
                let request = SendRequest::new("relay", message)
                    .entry_point(EntryPoint::Api)
                    .hops(0);
                ctx.send_request_and_wait(request).await
            }
        };
        match outcome {
            Err(Error::DelegationCycle { agent, .. }) => {
                ctx.reply_text(format!("cycle at {agent}"));
            }
            Ok(_) => ctx.reply_text("not refused"),
            Err(other) => ctx.reply_text(format!("other error: {other}")),
        }
        Ok(())
    }
}

async fn supervisor(waiting: Waiting) -> Supervisor {
    Supervisor::start(
        SupervisorConfig::default(),
        vec![
            Registration::new(AgentDescriptor::new("relay"), |_| Relay),
            Registration::new(AgentDescriptor::new("back"), move |_| Back(waiting)),
        ],
        Arc::new(AllowAll),
        Arc::new(InMemoryTaskStore::new()),
    )
    .await
    .expect("supervisor")
}

#[tokio::test]
async fn a_send_back_into_a_waiting_session_is_refused_by_every_waiting_method() {
    for waiting in [
        Waiting::SendAndWait,
        Waiting::SendRequestAndWait,
        Waiting::WithPayload,
    ] {
        let supervisor = supervisor(waiting).await;
        let request = SendRequest::new(
            "relay",
            Message::user_text("start").with_context_id(ContextId::new("loop")),
        );
        let done = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            supervisor.send_and_wait(request),
        )
        .await
        .unwrap_or_else(|_| panic!("{waiting:?} deadlocked"))
        .expect("the relay's send is accepted");
        assert_eq!(done.task.status.state, TaskState::Completed, "{waiting:?}");
        let text = done.task.status.message.as_deref().map(Message::text);
        assert_eq!(text.as_deref(), Some("cycle at relay"), "{waiting:?}");
        supervisor.shutdown(std::time::Duration::from_secs(1)).await;
    }
}

/// Replies with what the supervisor saw of a request it stamped.
struct Inspect;

impl Agent for Inspect {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        let forged = SendRequest::new("other", Message::user_text("hi"))
            .from("someone-else")
            .principal("alice")
            .entry_point(EntryPoint::Http)
            .hops(0);
        let stamped = ctx.stamped(forged);
        assert_eq!(stamped.from.as_deref(), Some("inspect"));
        assert_eq!(stamped.principal, None);
        assert_eq!(stamped.entry_point, EntryPoint::Agent);
        assert_eq!(stamped.hops, ctx.hops() + 1);
        let deeper = ctx.stamped(SendRequest::new("other", Message::user_text("hi")).hops(7));
        assert_eq!(deeper.hops, 7, "a request may claim more hops, never fewer");
        // The task as the store has it: this turn's message is in its history.
        let task = ctx.task(None).await?;
        assert_eq!(&task.id, ctx.task_id());
        assert_eq!(task.history.map(|h| h.len()), Some(1));
        ctx.reply_text("stamped");
        Ok(())
    }
}

#[tokio::test]
async fn a_request_sent_through_the_context_is_stamped_as_the_agents() {
    let supervisor = Supervisor::start(
        SupervisorConfig::default(),
        vec![Registration::new(AgentDescriptor::new("inspect"), |_| {
            Inspect
        })],
        Arc::new(AllowAll),
        Arc::new(InMemoryTaskStore::new()),
    )
    .await
    .expect("supervisor");
    let done = supervisor
        .send_and_wait(SendRequest::new("inspect", Message::user_text("go")))
        .await
        .expect("accepted");
    let text = done.task.status.message.as_deref().map(Message::text);
    assert_eq!(
        (done.task.status.state, text.as_deref()),
        (TaskState::Completed, Some("stamped"))
    );
}

/// Delegates a task with a fixed id to the relay, so a second delegation repeats the
/// first's idempotency key (a handoff payload's taskId is its natural key), and logs
/// what it was told.
struct Delegator(Arc<std::sync::Mutex<Vec<String>>>);

impl Agent for Delegator {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        let payload = HandoffPayload::from(
            TaskDelegation::builder()
                .task_id("job-1")
                .task_title("Again")
                .task_description("the same job, delegated again")
                .build()?,
        );
        let outcome = match ctx.delegate("relay", "job-1", payload).await {
            Ok(_) => String::from("answered"),
            Err(Error::DelegationCycle { agent, .. }) => format!("cycle at {agent}"),
            Err(other) => format!("other error: {other}"),
        };
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(outcome);
        ctx.reply_text("delegated");
        Ok(())
    }
}

#[tokio::test]
async fn a_repeated_key_that_would_wait_on_a_waiting_session_is_a_cycle() {
    // relay(c) → delegator(c) → delegate job-1 → relay(c2) → delegator(c2) →
    // delegate job-1 again: a repeat of the send relay(c2) is handling, and relay(c2)
    // waits on this very delegator. Waiting on the repeat would never end.
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let shared = Arc::clone(&log);
    let supervisor = Supervisor::start(
        SupervisorConfig::default(),
        vec![
            Registration::new(AgentDescriptor::new("relay"), |_| Relay),
            Registration::new(AgentDescriptor::new("back"), move |_| {
                Delegator(Arc::clone(&shared))
            }),
        ],
        Arc::new(AllowAll),
        Arc::new(InMemoryTaskStore::new()),
    )
    .await
    .expect("supervisor");
    let request = SendRequest::new("relay", Message::user_text("start"));
    let done = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        supervisor.send_and_wait(request),
    )
    .await
    .expect("no deadlock")
    .expect("accepted");
    assert_eq!(done.task.status.state, TaskState::Completed);
    let log = log
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    assert_eq!(log, ["cycle at relay", "answered"]);
}
