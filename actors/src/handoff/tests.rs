use agentyard_transport::handoff::{Question, Urgency};

use super::*;

fn question() -> HandoffPayload {
    HandoffPayload::from(
        Question::builder()
            .question_id("q-1")
            .question("Which branch?")
            .urgency(Urgency::Normal)
            .build()
            .expect("valid"),
    )
}

#[test]
fn a_typed_payload_is_attached_and_read_once() {
    let mut request = SendRequest::new("a", Message::user_text("which?")).payload(question());
    let handoff = Handoff::prepare(&mut request).expect("valid");
    assert!(request.payload.is_none(), "moved onto the message");
    assert_eq!(handoff.payload_type, Some(PayloadType::Question));
    assert!(!handoff.is_free_text());
    assert!(handoff.natural_key().is_some_and(|k| k.contains("q-1")));
    assert!(handoff.payload_json.is_some());
    // The message now carries the data part, and reads back as the same payload.
    let again = Handoff::inspect(&request.message, None);
    assert_eq!(again.payload_type, Some(PayloadType::Question));
}

#[test]
fn a_message_without_parts_is_refused_naming_the_field() {
    let mut request = SendRequest::new(
        "a",
        Message::new(agentyard_transport::a2a::Role::User, vec![]),
    );
    let error = Handoff::prepare(&mut request).expect_err("no parts");
    assert!(error.to_string().contains("message.parts"), "{error}");
}

#[test]
fn prose_is_free_text_without_a_fallback() {
    let mut request = SendRequest::new("a", Message::user_text("hello there"));
    let handoff = Handoff::prepare(&mut request).expect("valid");
    assert!(handoff.is_free_text());
    assert!(handoff.fallback.is_none());
    assert!(handoff.natural_key().is_none());
}

#[test]
fn a_json_text_that_is_not_a_valid_payload_travels_as_text_with_its_problems() {
    let text = r#"{"type": "question", "questionId": ""}"#;
    let mut request = SendRequest::new("a", Message::user_text(text));
    let handoff = Handoff::prepare(&mut request).expect("free text is not refused");
    assert!(handoff.is_free_text());
    let fallback = handoff.fallback.expect("the problems are kept");
    assert_eq!(&*fallback.text, text);
    assert!(!fallback.problems.is_empty());
}

#[test]
fn a_json_text_that_is_a_valid_payload_is_typed() {
    let json = serde_json::to_string(&question()).expect("json");
    let mut request = SendRequest::new("a", Message::user_text(json.clone()));
    let handoff = Handoff::prepare(&mut request).expect("valid");
    assert_eq!(handoff.payload_type, Some(PayloadType::Question));
    assert_eq!(handoff.payload_json.as_deref(), Some(json.as_str()));
}

#[test]
fn a_payload_the_edge_already_read_is_taken_as_read() {
    // The edge validated the data part; the send path does not decode it again.
    let mut request = SendRequest::new("a", Message::user_text("prose"));
    request.read_payload = Some(Box::new(question()));
    let handoff = Handoff::prepare(&mut request).expect("valid");
    assert_eq!(handoff.payload_type, Some(PayloadType::Question));
    assert!(
        request.read_payload.is_none(),
        "taken, not kept for a second use"
    );
}
