//! Fuzzes the handoff payload parser on both ways in: the untyped `payloadJson`
//! string ([`parse_payload_json`]) and a message's handoff data part
//! ([`payload_from_message`]).
//!
//! Beyond "never panics", it checks that a payload it accepts is written back in a
//! form it reads as the same payload, and that free text is handed back unchanged.

#![no_main]

use agentyard_transport::a2a::{Message, Role};
use agentyard_transport::handoff::{
    self, HandoffPayload, ParsedPayload, build_message_context, parse_payload_json,
};
use libfuzzer_sys::fuzz_target;

/// What every accepted payload must survive: its JSON and its message round trips,
/// and the summaries built from it.
fn check(payload: &HandoffPayload) {
    let written = payload.to_json_value();
    let read = HandoffPayload::from_json_value(&written)
        .unwrap_or_else(|invalid| panic!("its own JSON is refused: {invalid} in {written}"));
    assert_eq!(&read, payload, "the payload changed in a JSON round trip");

    let message = handoff::into_message(Role::User, payload.summary(), payload);
    match handoff::payload_from_message(&message) {
        Some(Ok(read)) => assert_eq!(&read, payload, "the payload changed in a message"),
        other => panic!("its own message does not carry it: {other:?}"),
    }
    let _ = build_message_context("fuzzer", "text", Some(payload));
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_payload_json(&text) {
        ParsedPayload::Structured(payload) => check(&payload),
        ParsedPayload::FreeText { text: kept, .. } => assert_eq!(kept, text),
    }
    if let Ok(message) = serde_json::from_slice::<Message>(data)
        && let Some(Ok(payload)) = handoff::payload_from_message(&message)
    {
        check(&payload);
    }
});
