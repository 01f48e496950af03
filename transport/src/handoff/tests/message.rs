//! Payloads in A2A messages: the documented wire format, round trips, and every
//! way a handoff part can be wrong.

use serde_json::{Value, json};

use super::super::{
    Answer, HANDOFF_EXTENSION_URI, HandoffPayload, PayloadType, attach_to_message, into_message,
    payload_from_message,
};
use super::round_trip::full_payloads;
use super::{fields, minimal, valid};
use crate::a2a::{DataPart, Message, Part, Role};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The JSON example in the module docs, read from the source so the docs cannot
/// drift from what the code does.
fn documented_message() -> Result<Value, serde_json::Error> {
    let source = include_str!("../../handoff.rs");
    let json: String = source
        .lines()
        .skip_while(|line| line.trim() != "//! ```json")
        .skip(1)
        .take_while(|line| line.trim() != "//! ```")
        .map(|line| line.trim_start_matches("//!").trim_start())
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&json)
}

/// Checks `message` against `Message` in the vendored A2A 0.3.0 schema.
fn assert_schema_valid(message: &Value) -> TestResult {
    let mut schema: Value =
        serde_json::from_str(include_str!("../../../schema/a2a-v0.3.0.schema.json"))?;
    schema["$ref"] = json!("#/definitions/Message");
    let validator = jsonschema::validator_for(&schema)?;
    let problems: Vec<_> = validator
        .iter_errors(message)
        .map(|e| e.to_string())
        .collect();
    assert!(problems.is_empty(), "{problems:?} in {message}");
    Ok(())
}

/// A message from JSON, as a receiver sees it.
fn message(value: Value) -> Result<Message, serde_json::Error> {
    serde_json::from_value(value)
}

/// A user message with `parts`.
fn message_with(parts: Value) -> Result<Message, serde_json::Error> {
    message(json!({"kind": "message", "messageId": "m-1", "role": "user", "parts": parts}))
}

fn marker(payload_type: Value) -> Value {
    json!({ HANDOFF_EXTENSION_URI: { "payloadType": payload_type } })
}

#[test]
fn the_documented_message_is_what_the_code_writes_and_reads() -> TestResult {
    let documented = documented_message()?;
    let received = message(documented.clone())?;
    let Some(Ok(payload)) = payload_from_message(&received) else {
        panic!("the documented message carries no valid payload");
    };
    assert_eq!(payload.payload_type(), PayloadType::TaskDelegation);
    assert_eq!(payload.subject_id(), "task-001");

    let mut written = into_message(Role::User, received.text(), &payload).with_context_id("ctx-42");
    written.message_id = received.message_id.clone();
    assert_eq!(serde_json::to_value(&written)?, documented);
    assert_schema_valid(&documented)
}

#[test]
fn every_payload_type_survives_a_round_trip_through_a_message() -> TestResult {
    for payload in full_payloads()? {
        let sent = into_message(Role::Agent, "see the payload", &payload);
        let wire = serde_json::to_string(&sent)?;
        let received: Message = serde_json::from_str(&wire)?;
        assert_eq!(received, sent);
        assert_eq!(payload_from_message(&received), Some(Ok(payload)), "{wire}");
        assert_eq!(received.text(), "see the payload");
        assert_schema_valid(&serde_json::to_value(&received)?)?;
    }
    Ok(())
}

#[test]
fn the_payload_type_is_readable_from_the_part_metadata_alone() -> TestResult {
    for payload in full_payloads()? {
        let part = payload.to_data_part();
        let metadata = part.metadata.unwrap_or_default();
        assert_eq!(
            metadata[HANDOFF_EXTENSION_URI],
            json!({"payloadType": payload.payload_type().as_str()})
        );
        assert_eq!(
            part.data.get("payloadType"),
            metadata[HANDOFF_EXTENSION_URI].get("payloadType")
        );
    }
    Ok(())
}

#[test]
fn a_message_without_a_handoff_part_has_no_payload() -> TestResult {
    assert_eq!(payload_from_message(&Message::user_text("just text")), None);
    // A data part without the marker is somebody else's data, even if it looks
    // like a payload.
    let plain_data = message_with(json!([
        {"kind": "text", "text": "hi"},
        {"kind": "data", "data": minimal("question")},
        {"kind": "data", "data": minimal("answer"), "metadata": {"other": true}},
    ]))?;
    assert_eq!(payload_from_message(&plain_data), None);
    Ok(())
}

#[test]
fn a_handoff_part_is_read_even_if_the_message_does_not_list_the_extension() -> TestResult {
    let received = message_with(json!([
        {"kind": "data", "data": minimal("answer"), "metadata": marker(json!("answer"))},
    ]))?;
    assert_eq!(received.extensions, None);
    assert_eq!(
        payload_from_message(&received),
        Some(Ok(valid(minimal("answer"))))
    );
    Ok(())
}

#[test]
fn an_invalid_payload_in_a_message_is_reported_with_message_paths() -> TestResult {
    let mut data = minimal("answer");
    data["confidence"] = json!(1.01);
    data["references"] = json!(["ok", 7]);
    let received = message_with(json!([
        {"kind": "text", "text": "answer attached"},
        {"kind": "data", "data": data, "metadata": marker(json!("answer"))},
    ]))?;
    let Some(Err(invalid)) = payload_from_message(&received) else {
        panic!("expected an invalid payload");
    };
    assert_eq!(
        fields(&invalid),
        ["parts[1].data.confidence", "parts[1].data.references[1]"]
    );
    Ok(())
}

#[test]
fn the_marker_must_agree_with_the_data() -> TestResult {
    let received = message_with(json!([
        {"kind": "data", "data": minimal("answer"), "metadata": marker(json!("question"))},
    ]))?;
    let Some(Err(invalid)) = payload_from_message(&received) else {
        panic!("expected a mismatch");
    };
    assert_eq!(
        invalid.errors()[0].to_string(),
        format!(
            "parts[0].metadata[\"{HANDOFF_EXTENSION_URI}\"].payloadType: \
             says `question` but the data is a `answer` payload"
        )
    );
    Ok(())
}

#[test]
fn the_marker_must_name_a_known_payload_type() -> TestResult {
    let type_path = format!("parts[0].metadata[\"{HANDOFF_EXTENSION_URI}\"].payloadType");
    let cases = [
        (json!({ HANDOFF_EXTENSION_URI: {} }), type_path.clone()),
        (marker(json!(3)), type_path.clone()),
        (marker(json!("handover")), type_path),
        (
            json!({ HANDOFF_EXTENSION_URI: "answer" }),
            format!("parts[0].metadata[\"{HANDOFF_EXTENSION_URI}\"]"),
        ),
    ];
    for (metadata, path) in cases {
        let received = message_with(json!([
            {"kind": "data", "data": minimal("answer"), "metadata": metadata},
        ]))?;
        let Some(Err(invalid)) = payload_from_message(&received) else {
            panic!("expected {metadata} to be rejected");
        };
        assert_eq!(fields(&invalid), [path.as_str()], "{metadata}");
    }
    Ok(())
}

#[test]
fn marker_and_data_problems_are_reported_together() -> TestResult {
    let received = message_with(json!([
        {"kind": "data", "data": {"payloadType": "answer"}, "metadata": marker(json!(false))},
    ]))?;
    let Some(Err(invalid)) = payload_from_message(&received) else {
        panic!("expected problems");
    };
    assert_eq!(
        fields(&invalid),
        [
            format!("parts[0].metadata[\"{HANDOFF_EXTENSION_URI}\"].payloadType"),
            "parts[0].data.questionId".to_owned(),
            "parts[0].data.answer".to_owned(),
        ]
    );
    Ok(())
}

#[test]
fn a_message_with_two_handoff_parts_is_rejected() -> TestResult {
    let part =
        json!({"kind": "data", "data": minimal("answer"), "metadata": marker(json!("answer"))});
    let received = message_with(json!([part.clone(), {"kind": "text", "text": "x"}, part]))?;
    let Some(Err(invalid)) = payload_from_message(&received) else {
        panic!("expected a rejection");
    };
    assert_eq!(
        invalid.errors()[0].to_string(),
        "parts: a message carries at most one handoff part; found parts[0], parts[2]"
    );
    Ok(())
}

#[test]
fn attaching_replaces_the_payload_and_keeps_other_parts() -> TestResult {
    let other_data = Part::Data(DataPart {
        data: serde_json::Map::new(),
        metadata: None,
    });
    let mut message = Message::new(Role::User, vec![Part::text("hello"), other_data.clone()]);
    attach_to_message(&mut message, &valid(minimal("question")));
    let answer: HandoffPayload = Answer::builder()
        .question_id("q-001")
        .answer("main")
        .build()?
        .into();
    attach_to_message(&mut message, &answer);

    assert_eq!(message.parts.len(), 3);
    assert_eq!(message.parts[..2], [Part::text("hello"), other_data]);
    assert_eq!(
        message.extensions,
        Some(vec![HANDOFF_EXTENSION_URI.to_owned()])
    );
    assert_eq!(payload_from_message(&message), Some(Ok(answer)));
    Ok(())
}

#[test]
fn attaching_leaves_a_single_handoff_part() -> TestResult {
    let part =
        json!({"kind": "data", "data": minimal("answer"), "metadata": marker(json!("answer"))});
    let mut message = message_with(json!([part.clone(), {"kind": "text", "text": "x"}, part]))?;
    message.extensions = Some(vec!["https://example.com/other/v1".to_owned()]);
    attach_to_message(&mut message, &valid(minimal("question")));

    assert_eq!(message.parts.len(), 2);
    assert_eq!(
        payload_from_message(&message),
        Some(Ok(valid(minimal("question"))))
    );
    assert_eq!(
        message.extensions,
        Some(vec![
            "https://example.com/other/v1".to_owned(),
            HANDOFF_EXTENSION_URI.to_owned()
        ])
    );
    Ok(())
}

#[test]
fn a_data_part_written_with_the_seeds_type_is_read() -> TestResult {
    let received = message_with(json!([
        {"kind": "text", "text": "which branch?"},
        {
            "kind": "data",
            "data": {"type": "question", "questionId": "q-9", "question": "Which branch?"},
            "metadata": marker(json!("question")),
        },
    ]))?;
    let payload = payload_from_message(&received).transpose()?;
    assert_eq!(
        payload.map(|p| p.payload_type()),
        Some(PayloadType::Question)
    );

    let disagreeing = message_with(json!([{
        "kind": "data",
        "data": {"type": "answer", "payloadType": "question", "questionId": "q-9", "question": "?"},
        "metadata": marker(json!("question")),
    }]))?;
    let Some(Err(invalid)) = payload_from_message(&disagreeing) else {
        panic!("a payload whose two discriminators disagree was read");
    };
    assert_eq!(fields(&invalid), ["parts[0].data.payloadType"]);
    assert!(
        invalid.to_string().contains("`type` is \"answer\""),
        "{invalid}"
    );
    Ok(())
}
