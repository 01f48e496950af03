//! Two agentyard runtimes, each behind its own HTTP edge on 127.0.0.1, calling each
//! other through remote agents: `a` (in the first) delegates to the remote `b`, `b`
//! (in the second) delegates back to the remote `a`. The loop is cut at the first
//! runtime's door, as a delegation loop is in one runtime; the trace id of the
//! first request is the one every hop sees; hops grow across the wire.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentyard::a2a::MessageSendParams;
use agentyard::client::{A2aClient, ClientOptions};
use agentyard::edge::{Edge, EdgeConfig};
use agentyard::remote::{RemoteOptions, RemotePeer, StartMode, TRACEPARENT};
use agentyard::{Agent, AgentDescriptor, AgentError, Message, Runtime, TaskContext, TaskState};

/// What an agent saw of the request it handled.
#[derive(Debug, Clone)]
struct Sight {
    agent: String,
    hops: u32,
    traceparent: Option<String>,
}

/// Records what it saw, then sends the text on to `next` and replies with the
/// answer, or with why the send did not get one.
struct Relay {
    next: &'static str,
    seen: Arc<Mutex<Vec<Sight>>>,
}

impl Agent for Relay {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.seen.lock().expect("lock").push(Sight {
            agent: ctx.agent().to_owned(),
            hops: ctx.hops(),
            traceparent: ctx
                .request_metadata()
                .and_then(|metadata| metadata.get(TRACEPARENT))
                .and_then(|value| value.as_str())
                .map(str::to_owned),
        });
        let settled = ctx
            .send_and_wait(self.next, Message::user_text(ctx.message().text()))
            .await?;
        let said = settled
            .task
            .status
            .message
            .map(|message| message.text())
            .unwrap_or_default();
        ctx.reply_text(format!(
            "{} via {}: {said}",
            settled.task.status.state, self.next
        ));
        Ok(())
    }
}

async fn edge(runtime: &Runtime, agent: &str, at: std::net::SocketAddr) -> Edge {
    let config = EdgeConfig::default().agents([agent.to_owned()]).bind(at);
    Edge::start(runtime.supervisor().clone(), config)
        .await
        .expect("an edge")
}

/// A free loopback port: each runtime must know the other's URL before either
/// serves (the registry is fixed at start), so the ports are chosen first.
fn free_port() -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("its address")
}

fn relay(name: &str, next: &'static str, seen: &Arc<Mutex<Vec<Sight>>>) -> agentyard::Registration {
    let seen = Arc::clone(seen);
    agentyard::Registration::new(AgentDescriptor::new(name).exposed(true), move |_| Relay {
        next,
        seen: Arc::clone(&seen),
    })
}

async fn runtime(
    local: agentyard::Registration,
    remote: &str,
    card_url: String,
    at: std::net::SocketAddr,
) -> (Runtime, Edge) {
    // The other runtime may not serve yet: its card is fetched on first use.
    let options = RemoteOptions::new(card_url).start(StartMode::Retry);
    let peer = RemotePeer::connect(remote, options).await.expect("a peer");
    let name = local.descriptor().name.clone();
    let runtime = Runtime::builder()
        .registration(local)
        .remote_peer(&peer)
        .build()
        .await
        .expect("a runtime");
    let edge = edge(&runtime, &name, at).await;
    (runtime, edge)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegation_loop_across_two_runtimes_is_cut_and_keeps_one_trace() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (first_at, second_at) = (free_port(), free_port());
    let card = |at: std::net::SocketAddr, agent: &str| {
        format!("http://{at}/agents/{agent}/.well-known/agent-card.json")
    };
    let (_first, first_edge) =
        runtime(relay("a", "b", &seen), "b", card(second_at, "b"), first_at).await;
    let (_second, _second_edge) =
        runtime(relay("b", "a", &seen), "a", card(first_at, "a"), second_at).await;

    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let incoming = format!("00-{trace}-00f067aa0ba902b7-01");
    let client = A2aClient::connect(
        &first_edge.card_url("a"),
        ClientOptions::new().header("traceparent", incoming.clone()),
    )
    .await
    .expect("a's card");
    let answer = client
        .send_message(MessageSendParams::new(Message::user_text("round")))
        .await
        .expect("answered");
    let agentyard::a2a::SendMessageResult::Task(task) = answer else {
        panic!("a task: {answer:?}");
    };
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    let said = task.status.message.map(|m| m.text()).unwrap_or_default();
    // a got b's answer; b's send back to a was refused at the first runtime's door.
    assert!(said.starts_with("completed via b: "), "{said}");
    assert!(said.contains("failed via a"), "{said}");
    assert!(
        said.contains("delegation cycle") || said.contains("cycle"),
        "{said}"
    );

    let seen = seen.lock().expect("lock").clone();
    let agents: Vec<&str> = seen.iter().map(|s| s.agent.as_str()).collect();
    assert_eq!(
        agents,
        ["a", "b"],
        "a ran once, b once, a never again: {seen:?}"
    );
    assert_eq!(seen[0].hops, 0);
    assert_eq!(seen[1].hops, 2, "a → proxy b → b across the wire: {seen:?}");
    for sight in &seen {
        let traceparent = sight.traceparent.as_deref().expect("a traceparent");
        assert!(
            traceparent.starts_with(&format!("00-{trace}-")),
            "{sight:?}"
        );
    }
    assert_eq!(seen[0].traceparent.as_deref(), Some(incoming.as_str()));
    assert_ne!(
        seen[1].traceparent.as_deref(),
        Some(incoming.as_str()),
        "a new span"
    );
}

/// Replies with the type of the payload it got, or `free text`.
struct Typed;

impl Agent for Typed {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let seen = ctx
            .payload()
            .map_or("free text", |payload| payload.payload_type().as_str());
        ctx.reply_text(format!("{seen}: {}", ctx.message().text()));
        Ok(())
    }
}

/// Delegates a task_delegation payload to `typed` and replies with the answer.
struct Delegator;

impl Agent for Delegator {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let payload = agentyard::handoff::TaskDelegation::builder()
            .task_id("job-1")
            .task_title("Count the stars")
            .task_description("All of them.")
            .build()?;
        let settled = ctx
            .delegate("typed", "count the stars", payload.into())
            .await?;
        let said = settled
            .task
            .status
            .message
            .map(|m| m.text())
            .unwrap_or_default();
        ctx.reply_text(said);
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_handoff_reaches_a_peer_declaring_the_extension() {
    // The peer starts after the caller: the caller's remote agent is in its
    // retrying state until its background retry fetches the card.
    let peer_at = free_port();
    let card_url = format!("http://{peer_at}/agents/typed/.well-known/agent-card.json");
    let remote = RemotePeer::connect(
        "typed",
        RemoteOptions::new(card_url)
            .start(StartMode::Retry)
            .concurrency(3),
    )
    .await
    .expect("retrying, not failing");
    assert!(remote.card().is_none(), "nothing serves the card yet");
    let caller = Runtime::builder()
        .agent(AgentDescriptor::new("delegator"), |_| Delegator)
        .remote_peer(&remote)
        .build()
        .await
        .expect("the caller starts while the peer is down");
    let descriptor = caller.supervisor().agent("typed").expect("registered");
    assert_eq!(descriptor.concurrency, Some(3), "the peer's own limit");

    let peer = Runtime::builder()
        .agent(AgentDescriptor::new("typed").exposed(true), |_| Typed)
        .build()
        .await
        .expect("the peer");
    let _edge = edge(&peer, "typed", peer_at).await;
    // The background retry fetches the card once the peer serves it.
    agentyard_tests::eventually(
        agentyard_tests::PATIENCE,
        "the card fetched in the background",
        || {
            let card = remote.card();
            async move { card }
        },
    )
    .await;

    let done = caller
        .send_and_wait("delegator", Message::user_text("go"))
        .await
        .expect("sent");
    assert_eq!(
        done.task.status.state,
        TaskState::Completed,
        "{:?}",
        done.task
    );
    let said = done
        .task
        .status
        .message
        .map(|m| m.text())
        .unwrap_or_default();
    assert_eq!(said, "task_delegation: count the stars");
    let card = remote.card().expect("fetched");
    assert!(
        card.capabilities
            .extensions
            .iter()
            .flatten()
            .any(|e| e.uri == agentyard::handoff::HANDOFF_EXTENSION_URI)
    );
}

/// Answers at once, or — the `slow` type — once its gate lets it through.
struct Answers {
    gate: Option<Arc<tokio::sync::Semaphore>>,
}

impl Agent for Answers {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        if let Some(gate) = &self.gate {
            let _through = gate.acquire().await?;
        }
        ctx.reply_text("answered");
        Ok(())
    }
}

/// Whether a stream event is a `working` status that names the remote task.
fn names_the_remote_task(event: &agentyard::StreamEvent) -> bool {
    matches!(event, agentyard::StreamEvent::StatusUpdate(update)
        if update.status.state == TaskState::Working && update.status.message.as_ref().is_some_and(|message| message
            .metadata
            .as_ref()
            .is_some_and(|metadata| metadata.contains_key(agentyard::remote::REMOTE_METADATA_KEY))))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_task_is_named_on_the_local_one_while_it_takes_time_and_a_quick_one_by_its_reply()
{
    use futures::StreamExt;

    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let slow_gate = Arc::clone(&gate);
    let peer = Runtime::builder()
        .agent(AgentDescriptor::new("quick").exposed(true), |_| Answers {
            gate: None,
        })
        .agent(AgentDescriptor::new("slow").exposed(true), move |_| {
            Answers {
                gate: Some(Arc::clone(&slow_gate)),
            }
        })
        .build()
        .await
        .expect("the peer");
    let config = EdgeConfig::default()
        .agents(["quick".to_owned(), "slow".to_owned()])
        .bind("127.0.0.1:0".parse().expect("an address"));
    let edge = Edge::start(peer.supervisor().clone(), config)
        .await
        .expect("the peer's edge");
    // Windows that no machine's timing can blur: the quick call is never announced
    // (`Duration::MAX`, which must not overflow the clock), the slow one surely
    // outlasts a millisecond (it waits for its gate).
    let caller = Runtime::builder()
        .remote_with(
            "quick",
            RemoteOptions::new(edge.card_url("quick")).announce_after(Duration::MAX),
        )
        .remote_with(
            "slow",
            RemoteOptions::new(edge.card_url("slow")).announce_after(Duration::from_millis(1)),
        )
        .build()
        .await
        .expect("the caller");

    // A call that completes at once: no status of its own names the remote task;
    // its reply does.
    let events: Vec<_> = caller
        .stream("quick", Message::user_text("hi"))
        .await
        .expect("streamed")
        .collect()
        .await;
    assert!(!events.iter().any(names_the_remote_task), "{events:?}");
    let Some(agentyard::StreamEvent::StatusUpdate(last)) = events.last() else {
        panic!("the stream ends with a status: {events:?}");
    };
    assert_eq!(last.status.state, TaskState::Completed);
    let reply = last.status.message.as_ref().expect("the reply");
    assert!(
        reply
            .metadata
            .as_ref()
            .is_some_and(|m| m.contains_key(agentyard::remote::REMOTE_METADATA_KEY)),
        "{reply:?}"
    );

    // A call still under way is named on the local task while it runs.
    let mut events = Box::pin(
        caller
            .stream("slow", Message::user_text("hi"))
            .await
            .expect("streamed"),
    );
    let named = tokio::time::timeout(agentyard_tests::PATIENCE, async {
        while let Some(event) = events.next().await {
            if names_the_remote_task(&event) {
                return true;
            }
        }
        false
    })
    .await
    .expect("named before the remote task ends");
    assert!(named, "the stream ended without naming the remote task");
    gate.add_permits(1);
    let rest: Vec<_> = events.collect().await;
    let Some(agentyard::StreamEvent::StatusUpdate(last)) = rest.last() else {
        panic!("the stream ends with a status: {rest:?}");
    };
    assert_eq!(last.status.state, TaskState::Completed);
}
