use agentyard_transport::a2a::{Message, Part};
use agentyard_transport::handoff::{HandoffPayload, Question};
use axum::response::IntoResponse as _;
use serde_json::json;

use super::*;
use crate::testing::eventually;

fn with_metadata(metadata: serde_json::Value) -> Message {
    let mut message = Message::user_text("hi");
    message.metadata = metadata.as_object().cloned();
    message
}

#[test]
fn hops_and_chain_are_read_from_the_message_and_a_loop_back_is_seen() {
    let own = format!("{}/planner", instance_id());
    let message = with_metadata(json!({
        HOPS_METADATA_KEY: 3,
        CHAIN_METADATA_KEY: ["elsewhere/a", own],
    }));
    let across = Across::read(&message, Some("not a traceparent"));
    assert_eq!(across.hops, 3);
    assert!(across.loops_back_to("planner"));
    assert!(!across.loops_back_to("a"), "`a` of another process");
    assert!(!across.loops_back_to("plan"), "a name is matched whole");
    let unslashed =
        with_metadata(json!({CHAIN_METADATA_KEY: [format!("{}planner", instance_id())]}));
    assert!(!Across::read(&unslashed, None).loops_back_to("planner"));
    let metadata = across.into_metadata(None).expect("the chain is kept");
    assert_eq!(
        metadata[CHAIN_METADATA_KEY].as_array().map(Vec::len),
        Some(2)
    );
    assert!(
        !metadata.contains_key(TRACEPARENT),
        "an invalid one is dropped"
    );

    let plain = Across::read(&Message::user_text("hi"), None);
    assert_eq!(plain.hops, 0);
    assert!(plain.into_metadata(None).is_none());

    let huge = Across::read(&with_metadata(json!({HOPS_METADATA_KEY: u64::MAX})), None);
    assert_eq!(huge.hops, u32::MAX);
}

#[test]
fn a_send_made_while_handling_carries_the_chain_and_trace_on() {
    let from = json!({
        CHAIN_METADATA_KEY: ["x/a"],
        TRACEPARENT: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "other": 1,
    });
    let mut to = None;
    carry(from.as_object(), &mut to);
    let to = to.expect("carried");
    assert_eq!(to.len(), 2, "only the chain and the trace: {to:?}");

    let mut own = json!({TRACEPARENT: "mine"}).as_object().cloned();
    carry(from.as_object(), &mut own);
    assert_eq!(own.expect("kept")[TRACEPARENT], "mine");
}

#[test]
fn a_peer_without_the_extension_gets_the_free_text_alone() {
    let mut message = Message::user_text("which one?");
    let payload = HandoffPayload::Question(
        Question::builder()
            .question_id("q-1")
            .question("which one?")
            .build()
            .expect("a question"),
    );
    agentyard_transport::handoff::attach_to_message(&mut message, &payload);
    assert_eq!(message.parts.len(), 2);
    strip_handoff(&mut message);
    assert_eq!(message.parts.len(), 1);
    assert!(matches!(&message.parts[0], Part::Text(_)));
    assert!(message.extensions.is_none());
}

/// A peer's card endpoint whose card can be changed (or taken away: 503) while it
/// serves, and that counts how often it was asked.
#[derive(Clone, Default)]
struct CardDesk {
    description: Arc<std::sync::Mutex<Option<String>>>,
    asked: Arc<std::sync::atomic::AtomicUsize>,
}

impl CardDesk {
    fn set(&self, description: Option<&str>) {
        *self.description.lock().expect("desk") = description.map(str::to_owned);
    }

    fn asked(&self) -> usize {
        self.asked.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Serves the card at `/.well-known/agent-card.json` on `listener`.
    fn serve(&self, listener: tokio::net::TcpListener) -> String {
        let addr = listener.local_addr().expect("bound");
        let desk = self.clone();
        let base = format!("http://{addr}/");
        let url = base.clone();
        let app = axum::Router::new().route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || {
                let desk = desk.clone();
                let base = base.clone();
                async move {
                    desk.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let description = desk.description.lock().expect("desk").clone();
                    match description {
                        Some(text) => {
                            let card =
                                agentyard_transport::a2a::AgentCard::new("peer", text, base, "1");
                            axum::Json(card).into_response()
                        }
                        None => axum::http::StatusCode::SERVICE_UNAVAILABLE.into_response(),
                    }
                }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("{url}.well-known/agent-card.json")
    }
}

fn description(peer: &RemotePeer) -> Option<String> {
    peer.card().map(|card| card.description)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_is_refreshed_on_its_schedule_and_a_failed_refresh_keeps_the_last_good_one() {
    let desk = CardDesk::default();
    desk.set(Some("first"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bound");
    let url = desk.serve(listener);
    let options = RemoteOptions::new(url).refresh(Duration::from_millis(50));
    let peer = RemotePeer::connect("peer", options)
        .await
        .expect("connected");
    assert_eq!(description(&peer).as_deref(), Some("first"));

    desk.set(Some("second"));
    eventually("the new card is fetched", || {
        description(&peer).as_deref() == Some("second")
    })
    .await;

    desk.set(None);
    let asked = desk.asked();
    eventually("two refreshes fail", || desk.asked() >= asked + 2).await;
    assert_eq!(
        description(&peer).as_deref(),
        Some("second"),
        "the last good card stays in use"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_card_at_start_fails_or_is_fetched_again_in_the_background() {
    // A port nobody listens on, for now.
    let addr = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bound")
        .local_addr()
        .expect("addr");
    let url = format!("http://{addr}/.well-known/agent-card.json");

    let error = RemotePeer::connect("peer", RemoteOptions::new(url.clone()))
        .await
        .expect_err("fails by default");
    let text = error.to_string();
    assert!(
        text.contains("remote agent `peer`") && text.contains(&url),
        "{text}"
    );

    let peer = RemotePeer::connect(
        "peer",
        RemoteOptions::new(url.clone()).start(StartMode::Retry),
    )
    .await
    .expect("registered anyway");
    assert_eq!(peer.card(), None);

    let desk = CardDesk::default();
    desk.set(Some("late"));
    let Ok(listener) = tokio::net::TcpListener::bind(addr).await else {
        // Someone took the port meanwhile; the retry cannot be shown on it.
        return;
    };
    desk.serve(listener);
    eventually("the card is fetched once it can be", || {
        description(&peer).as_deref() == Some("late")
    })
    .await;
}
