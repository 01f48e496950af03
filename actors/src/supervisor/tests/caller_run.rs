//! A caller that waits for its own send's task runs the turn itself (`CallerRun`):
//! in its own tokio task, without the turn depending on the caller going on waiting.
//! A stream's caller runs it until it first waits, and no further.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentyard_policy::AllowAll;
use agentyard_transport::a2a::{Artifact, Message, Part, StreamEvent, TaskState};
use agentyard_transport::{ContextId, TaskId};
use futures::{FutureExt as _, StreamExt as _};
use tokio::sync::Semaphore;

use crate::agent::{Agent, AgentDescriptor, AgentError, Registration, TaskContext};
use agentyard_store::testing::RequiredOnly;

use crate::store::{InMemoryTaskStore, TaskStore};
use crate::supervisor::{NumberedEvent, SendRequest, Supervisor, SupervisorConfig};
use crate::testing::until;

/// What the agent saw of the turn it ran.
#[derive(Debug, Default)]
struct Seen {
    task: Option<TaskId>,
    ran_in: Option<tokio::task::Id>,
}

/// Waits for a permit of `gate` (ignoring cancellation), then answers; tells `seen`
/// which task it handles and which tokio task it runs in before it waits.
struct Gated {
    gate: Arc<Semaphore>,
    seen: Arc<Mutex<Seen>>,
}

impl Agent for Gated {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        {
            let mut seen = self.seen.lock().expect("not poisoned");
            seen.task = Some(ctx.task_id().clone());
            seen.ran_in = tokio::task::try_id();
        }
        let _permit = self.gate.acquire().await.expect("gate open");
        ctx.reply_text("through");
        Ok(())
    }
}

struct Fixture {
    supervisor: Supervisor,
    gate: Arc<Semaphore>,
    seen: Arc<Mutex<Seen>>,
}

async fn fixture(cancel_grace: Duration) -> Fixture {
    let gate = Arc::new(Semaphore::new(0));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (g, s) = (Arc::clone(&gate), Arc::clone(&seen));
    let supervisor = Supervisor::start(
        SupervisorConfig {
            cancel_grace,
            ..SupervisorConfig::default()
        },
        vec![Registration::new(
            AgentDescriptor::new("gated"),
            move |_| Gated {
                gate: Arc::clone(&g),
                seen: Arc::clone(&s),
            },
        )],
        Arc::new(AllowAll),
        Arc::new(InMemoryTaskStore::new()),
    )
    .await
    .expect("supervisor");
    Fixture {
        supervisor,
        gate,
        seen,
    }
}

fn request(context: &str) -> SendRequest {
    SendRequest::new(
        "gated",
        Message::user_text("go").with_context_id(ContextId::new(context)),
    )
}

/// The task the agent has started on, and the tokio task it runs in, once it has.
async fn started(seen: &Mutex<Seen>) -> (TaskId, Option<tokio::task::Id>) {
    until("the agent starts", || {
        let seen = seen.lock().expect("not poisoned");
        std::future::ready(seen.task.clone().map(|task| (task, seen.ran_in)))
    })
    .await
}

/// Waits until the task is in `state`.
async fn reaches(supervisor: &Supervisor, task: &TaskId, state: TaskState) {
    until(&format!("task {task} {state}"), move || async move {
        let now = supervisor.get_task(task, None).await.expect("stored");
        (now.status.state == state).then_some(())
    })
    .await;
}

/// Runs `call` in a tokio task of its own; returns what it gave and that task's id,
/// to compare with the task the agent's turn ran in.
async fn in_a_task_of_its_own<T: Send + 'static>(
    call: impl std::future::Future<Output = T> + Send + 'static,
) -> (T, tokio::task::Id) {
    tokio::spawn(async move { (call.await, tokio::task::id()) })
        .await
        .expect("the caller's task ran")
}

/// What a stream of the gated agent reports, update by update, when it goes through.
const THROUGH: [Option<TaskState>; 3] = [
    Some(TaskState::Submitted),
    Some(TaskState::Working),
    Some(TaskState::Completed),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_waits_runs_the_turn_in_its_own_task_and_a_send_does_not() {
    let f = fixture(Duration::from_secs(1)).await;
    f.gate.add_permits(1);
    let supervisor = f.supervisor.clone();
    let (settled, caller_task) =
        in_a_task_of_its_own(async move { supervisor.send_and_wait(request("waits")).await }).await;
    assert_eq!(
        settled.expect("answered").task.status.state,
        TaskState::Completed
    );
    let ran_in = f.seen.lock().expect("not poisoned").ran_in;
    assert_eq!(
        ran_in,
        Some(caller_task),
        "the turn ran in the caller's task"
    );

    // A send that does not wait leaves its turn to the session.
    *f.seen.lock().expect("not poisoned") = Seen::default();
    f.gate.add_permits(1);
    let supervisor = f.supervisor.clone();
    let (submitted, sender_task) =
        in_a_task_of_its_own(async move { supervisor.send(request("does-not-wait")).await }).await;
    let task = submitted.expect("submitted").task.id;
    let (_, ran_in) = started(&f.seen).await;
    assert_ne!(ran_in, Some(sender_task));
    reaches(&f.supervisor, &task, TaskState::Completed).await;
}

#[tokio::test]
async fn a_caller_that_stops_waiting_leaves_the_turn_to_run_to_its_end() {
    let f = fixture(Duration::from_secs(1)).await;
    // The caller gives up while the agent waits at its gate.
    let gave_up = tokio::select! {
        settled = f.supervisor.send_and_wait(request("gives-up")) => Some(settled),
        _ = started(&f.seen) => None,
    };
    assert!(gave_up.is_none(), "the agent waits at its gate");
    let (task, _) = started(&f.seen).await;
    reaches(&f.supervisor, &task, TaskState::Working).await;
    // The turn goes on without the caller: let the agent through.
    f.gate.add_permits(1);
    reaches(&f.supervisor, &task, TaskState::Completed).await;
    let done = f.supervisor.get_task(&task, None).await.expect("stored");
    let reply = done.status.message.as_deref().map(Message::text);
    assert_eq!(reply.as_deref(), Some("through"));
}

#[tokio::test]
async fn a_canceled_task_answers_its_caller_at_once_while_its_handler_winds_down() {
    // A handler that ignores the cancel is given the whole grace; the caller is not.
    let f = fixture(Duration::from_secs(3_600)).await;
    let supervisor = f.supervisor.clone();
    let caller = tokio::spawn(async move { supervisor.send_and_wait(request("canceled")).await });
    let (task, _) = started(&f.seen).await;
    f.supervisor.cancel_task(&task).await.expect("canceled");
    let settled = tokio::time::timeout(Duration::from_secs(10), caller)
        .await
        .expect("the caller is answered before the handler's grace runs out")
        .expect("caller ran")
        .expect("answered");
    assert_eq!(settled.task.status.state, TaskState::Canceled);
    f.gate.add_permits(1);
}

/// The state an update of a stream reports.
fn state_of(event: &StreamEvent) -> Option<TaskState> {
    match event {
        StreamEvent::Task(task) => Some(task.status.state),
        StreamEvent::StatusUpdate(update) => Some(update.status.state),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_turn_never_waits_has_every_update_ready_at_its_start() {
    let f = fixture(Duration::from_secs(1)).await;
    // The gate is open: the agent goes through without waiting.
    f.gate.add_permits(1);
    let supervisor = f.supervisor.clone();
    let ((states, ended), caller_task) = in_a_task_of_its_own(async move {
        let mut stream = Box::pin(
            supervisor
                .stream_numbered(request("streams"))
                .await
                .expect("streaming"),
        );
        // Every update is there before the first is read: none is waited for.
        let mut states = Vec::new();
        let ended = loop {
            match stream.next().now_or_never() {
                Some(Some((_, event))) => states.push(state_of(&event)),
                Some(None) => break true,
                None => break false,
            }
        };
        (states, ended)
    })
    .await;
    assert_eq!(states, THROUGH, "the whole stream, ready at once");
    assert!(ended, "the stream ended with its final update, unwaited");
    let ran_in = f.seen.lock().expect("not poisoned").ran_in;
    assert_eq!(
        ran_in,
        Some(caller_task),
        "the turn ran in the stream's caller's task"
    );
}

#[tokio::test]
async fn a_stream_whose_turn_waits_leaves_the_turn_to_go_on_without_its_reader() {
    let f = fixture(Duration::from_secs(1)).await;
    // The agent waits at its closed gate: the stream is returned while it waits.
    let mut stream = Box::pin(
        f.supervisor
            .stream_numbered(request("unread"))
            .await
            .expect("streaming"),
    );
    let (task, _) = started(&f.seen).await;
    // Nobody reads the stream, yet the turn goes on once the agent may.
    f.gate.add_permits(1);
    reaches(&f.supervisor, &task, TaskState::Completed).await;
    // Read late, the stream still has every update, in order, to the final one.
    let mut states = Vec::new();
    while let Some((_, event)) = stream.next().await {
        states.push(state_of(&event));
    }
    assert_eq!(states, THROUGH);
}

/// Publishes as many artifacts as it holds, one after another without waiting on
/// anything, then answers.
struct Many(usize);

impl Agent for Many {
    async fn handle(&self, ctx: &mut TaskContext) -> std::result::Result<(), AgentError> {
        for n in 0..self.0 {
            ctx.artifact(Artifact::new(format!("a-{n}"), vec![Part::text("x")]))
                .await?;
        }
        ctx.reply_text("done");
        Ok(())
    }
}

/// The whole stream of a turn that publishes three times what its stream's ring holds
/// (16 updates by default), on `store`, and how many artifacts the turn published.
/// The turn never waits, so it runs to its end before the stream's first read.
async fn overrun(store: Arc<dyn TaskStore>) -> (Vec<NumberedEvent>, usize) {
    let config = SupervisorConfig::default();
    let artifacts = config.stream_capacity * 3;
    let supervisor = Supervisor::start(
        config,
        vec![Registration::new(AgentDescriptor::new("many"), move |_| {
            Many(artifacts)
        })],
        Arc::new(AllowAll),
        store,
    )
    .await
    .expect("supervisor");
    let stream = supervisor
        .stream_numbered(SendRequest::new(
            "many",
            Message::user_text("go").with_context_id(ContextId::new("many")),
        ))
        .await
        .expect("streaming");
    let events = tokio::time::timeout(Duration::from_secs(10), stream.collect())
        .await
        .expect("the stream ends");
    (events, artifacts)
}

#[tokio::test]
async fn a_stream_whose_turn_publishes_more_than_its_ring_holds_still_has_every_update() {
    // The stream reads what the ring dropped back from the store's log.
    let (events, artifacts) = overrun(Arc::new(InMemoryTaskStore::new())).await;
    let ids: Vec<_> = events
        .iter()
        .filter_map(|(_, event)| match event {
            StreamEvent::ArtifactUpdate(update) => Some(update.artifact.artifact_id.clone()),
            _ => None,
        })
        .collect();
    let expected: Vec<_> = (0..artifacts).map(|n| format!("a-{n}")).collect();
    assert_eq!(ids, expected, "every artifact, once, in order");
    let numbers: Vec<_> = events.iter().filter_map(|(seq, _)| *seq).collect();
    assert!(
        numbers.windows(2).all(|pair| pair[0] < pair[1]),
        "numbered in order without repeats: {numbers:?}"
    );
    assert_eq!(
        events.last().and_then(|(_, event)| state_of(event)),
        Some(TaskState::Completed)
    );
}

#[tokio::test]
async fn a_stream_that_falls_behind_on_a_store_without_a_log_ends_at_the_tasks_final_status() {
    // As above, but this store keeps no log to read the dropped updates back from:
    // the stream takes up the task as it stands instead, which has ended, and so
    // ends with it.
    let (events, artifacts) = overrun(Arc::new(RequiredOnly::default())).await;
    let Some(((first, StreamEvent::Task(_)), rest)) = events.split_first() else {
        panic!("the stream starts with the task: {events:?}");
    };
    assert_eq!(*first, Some(0), "the task as submitted is number 0");
    assert!(
        rest.iter().all(|(seq, _)| seq.is_none()),
        "a store without a log numbers nothing: {rest:?}"
    );
    let finals: Vec<_> = rest
        .iter()
        .filter_map(|(_, event)| match event {
            StreamEvent::StatusUpdate(update) if update.is_final => Some(update.status.state),
            _ => None,
        })
        .collect();
    assert_eq!(finals, [TaskState::Completed], "one final status: {rest:?}");
    assert!(
        matches!(rest.last(), Some((_, StreamEvent::StatusUpdate(update))) if update.is_final),
        "nothing after the final status: {rest:?}"
    );
    let published = rest
        .iter()
        .filter(|(_, event)| matches!(event, StreamEvent::ArtifactUpdate(_)))
        .count();
    assert!(
        published < artifacts,
        "the ring dropped some of the {artifacts} artifacts (the stream fell behind)"
    );
}
