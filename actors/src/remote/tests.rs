use agentyard_transport::a2a::{Message, Part};
use agentyard_transport::handoff::{HandoffPayload, Question};
use serde_json::json;

use super::*;

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
