//! Two agentyard runtimes, each behind its own HTTP edge on 127.0.0.1, calling each
//! other through remote agents: `a` (in the first) delegates to the remote `b`, `b`
//! (in the second) delegates back to the remote `a`. The loop is cut at the first
//! runtime's door, as a delegation loop is in one runtime; the trace id of the
//! first request is the one every hop sees; hops grow across the wire.

use std::sync::{Arc, Mutex};

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
