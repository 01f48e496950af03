//! `parse_payload_json`: the seed's `parseA2APayload` cases (its section 7.1),
//! with both discriminators (`payloadType` and the seed's `type`), plus the
//! free-text fallback.

use serde_json::json;

use super::super::{FieldError, Intent, ParsedPayload, PayloadType, parse_payload_json};

fn free_text(text: &str, problems: Vec<FieldError>) -> ParsedPayload {
    ParsedPayload::FreeText {
        text: text.to_owned(),
        problems,
    }
}

#[test]
fn parses_a_valid_task_delegation() {
    let text = json!({
        "payloadType": "task_delegation",
        "taskId": "task-001",
        "taskTitle": "API 문서 작성",
        "taskDescription": "sessions_send 도구의 payloadJson 파라미터 문서화",
        "priority": "high",
    })
    .to_string();
    let parsed = parse_payload_json(&text);
    assert_eq!(parsed.payload_type(), Some(PayloadType::TaskDelegation));
    assert!(parsed.problems().is_empty());
}

#[test]
fn parses_a_valid_question() {
    let text = json!({
        "payloadType": "question",
        "questionId": "q-001",
        "question": "배포 전 테스트 커버리지 기준이 몇 퍼센트인가요?",
        "urgency": "normal",
    })
    .to_string();
    assert_eq!(
        parse_payload_json(&text).payload_type(),
        Some(PayloadType::Question)
    );
}

#[test]
fn text_that_is_not_json_is_free_text_without_problems() {
    assert_eq!(
        parse_payload_json("not-json"),
        free_text("not-json", vec![])
    );
    assert_eq!(parse_payload_json(""), free_text("", vec![]));
    assert_eq!(
        parse_payload_json("{\"payloadType\":"),
        free_text("{\"payloadType\":", vec![])
    );
}

#[test]
fn a_missing_required_field_falls_back_to_free_text_with_the_problem() {
    // taskId is missing (and, as in the seed's case, so is taskDescription).
    let text = json!({"payloadType": "task_delegation", "taskTitle": "제목만 있음"}).to_string();
    let parsed = parse_payload_json(&text);
    assert_eq!(
        parsed,
        free_text(
            &text,
            vec![
                FieldError::new("taskId", "is required"),
                FieldError::new("taskDescription", "is required"),
            ]
        )
    );
    assert_eq!(parsed.payload(), None);
}

#[test]
fn an_unknown_payload_type_falls_back_to_free_text_with_the_problem() {
    let text = json!({"payloadType": "unknown_type", "data": "..."}).to_string();
    let parsed = parse_payload_json(&text);
    assert_eq!(parsed.payload(), None);
    let fields: Vec<_> = parsed.problems().iter().map(|p| p.field.as_str()).collect();
    assert_eq!(fields, ["payloadType"]);
}

#[test]
fn a_confidence_out_of_range_falls_back_to_free_text_with_the_problem() {
    let text = json!({
        "payloadType": "answer",
        "questionId": "q-001",
        "answer": "네",
        "confidence": 1.5,
    })
    .to_string();
    assert_eq!(
        parse_payload_json(&text),
        free_text(
            &text,
            vec![FieldError::new(
                "confidence",
                "must be a number from 0.0 to 1.0"
            )]
        )
    );
}

#[test]
fn json_that_does_not_claim_to_be_a_payload_is_plain_free_text() {
    for text in [
        "42",
        "\"hello\"",
        "[1, 2]",
        "null",
        "{\"taskId\": \"task-001\"}",
        "{}",
    ] {
        assert_eq!(parse_payload_json(text), free_text(text, vec![]), "{text}");
    }
}

#[test]
fn a_payload_written_as_in_the_seed_with_type_is_typed() {
    let text = json!({
        "type": "task_delegation",
        "taskId": "task-001",
        "taskTitle": "API 문서 작성",
        "taskDescription": "sessions_send 도구의 payloadJson 파라미터 문서화",
        "priority": "high",
    })
    .to_string();
    let parsed = parse_payload_json(&text);
    assert_eq!(parsed.payload_type(), Some(PayloadType::TaskDelegation));
    assert_eq!(parsed.intent(), Some(Intent::Delegate));
    // Written back, it uses the one form agentyard writes.
    let written = parsed.payload().map(|p| p.to_json_value());
    assert_eq!(
        written.as_ref().and_then(|v| v.get("payloadType")),
        Some(&json!("task_delegation"))
    );
    assert_eq!(written.as_ref().and_then(|v| v.get("type")), None);
    // A `type` key that names no payload type is just someone's JSON.
    let text = json!({"type": "greeting"}).to_string();
    assert_eq!(parse_payload_json(&text), free_text(&text, vec![]));
}

#[test]
fn type_and_payload_type_together_must_agree() {
    let text = json!({
        "type": "question",
        "payloadType": "question",
        "questionId": "q-001",
        "question": "?",
    })
    .to_string();
    assert_eq!(
        parse_payload_json(&text).payload_type(),
        Some(PayloadType::Question)
    );

    let text = json!({
        "type": "question",
        "payloadType": "answer",
        "questionId": "q-001",
        "answer": "yes",
    })
    .to_string();
    let parsed = parse_payload_json(&text);
    assert_eq!(parsed.payload(), None);
    assert_eq!(
        parsed.problems(),
        [FieldError::new(
            "payloadType",
            "`payloadType` is \"answer\" but `type` is \"question\"; \
             give one of them, or both the same"
        )]
    );
    // Even a `type` that names no payload type disagrees with a `payloadType`.
    let text =
        json!({"type": "greeting", "payloadType": "answer", "questionId": "q", "answer": "a"})
            .to_string();
    assert_eq!(parse_payload_json(&text).problems().len(), 1);
}

#[test]
fn a_seed_style_type_is_checked_like_payload_type() {
    let parsed = parse_payload_json(&json!({"type": "question", "question": "?"}).to_string());
    assert_eq!(
        parsed.problems(),
        [FieldError::new("questionId", "is required")]
    );
}

#[test]
fn surrounding_whitespace_does_not_hide_a_payload() {
    let text = "\n  {\"payloadType\":\"answer\",\"questionId\":\"q-1\",\"answer\":\"yes\"}  \n";
    assert_eq!(
        parse_payload_json(text).payload_type(),
        Some(PayloadType::Answer)
    );
}

#[test]
fn each_payload_type_maps_to_its_intent() {
    assert_eq!(PayloadType::TaskDelegation.intent(), Intent::Delegate);
    assert_eq!(PayloadType::StatusReport.intent(), Intent::Report);
    assert_eq!(PayloadType::Question.intent(), Intent::Ask);
    assert_eq!(PayloadType::Answer.intent(), Intent::Respond);
    let intents: Vec<_> = Intent::ALL.iter().map(|i| i.to_string()).collect();
    assert_eq!(intents, ["delegate", "report", "ask", "respond"]);
}

#[test]
fn a_parsed_payload_carries_its_intent_and_free_text_carries_none() {
    let parsed =
        parse_payload_json(r#"{"payloadType":"status_report","taskId":"t","status":"blocked"}"#);
    assert_eq!(parsed.intent(), Some(Intent::Report));
    assert_eq!(parse_payload_json("please review").intent(), None);
}

#[test]
fn payload_type_names_are_the_wire_names() {
    let names: Vec<_> = PayloadType::ALL.iter().map(|t| t.to_string()).collect();
    assert_eq!(
        names,
        ["task_delegation", "status_report", "question", "answer"]
    );
    for payload_type in PayloadType::ALL {
        assert_eq!(
            PayloadType::from_wire(payload_type.as_str()),
            Some(*payload_type)
        );
        assert_eq!(
            serde_json::to_value(payload_type).ok(),
            Some(json!(payload_type.as_str()))
        );
    }
}
