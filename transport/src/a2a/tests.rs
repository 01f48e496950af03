use serde_json::json;

use super::*;
use crate::{ContextId, TaskId};

fn error_text<T: serde::de::DeserializeOwned + std::fmt::Debug>(
    value: serde_json::Value,
) -> String {
    serde_json::from_value::<T>(value)
        .expect_err("the document must be rejected")
        .to_string()
}

#[test]
fn message_with_task_kind_is_rejected_naming_kind() {
    let text = error_text::<Message>(json!({
        "kind": "task", "messageId": "m-1", "role": "user", "parts": []
    }));
    assert!(text.contains("`kind`"), "{text}");
    assert!(text.contains("\"task\""), "{text}");
}

#[test]
fn message_without_kind_is_rejected() {
    let text = error_text::<Message>(json!({"messageId": "m-1", "role": "user", "parts": []}));
    assert!(text.contains("missing field `kind`"), "{text}");
}

#[test]
fn part_with_unknown_kind_is_rejected_naming_kind() {
    let text = error_text::<Part>(json!({"kind": "image", "text": "x"}));
    assert!(
        text.contains("`kind`") && text.contains("\"image\""),
        "{text}"
    );
}

#[test]
fn part_error_names_the_missing_field_inside_the_variant() {
    let text = error_text::<Part>(json!({"kind": "text"}));
    assert!(text.contains("missing field `text`"), "{text}");
}

#[test]
fn a_part_is_read_from_bytes_as_from_a_value_and_drops_other_kinds_members() {
    let bytes = br#"{"text":"hi","metadata":{"m":1},"kind":"text","uri":"x"}"#;
    let read: Part = serde_json::from_slice(bytes).expect("a text part");
    let Part::Text(text) = &read else {
        panic!("a text part, read {read:?}")
    };
    assert_eq!(text.text, "hi");
    assert_eq!(
        text.metadata.as_ref().and_then(|m| m.get("m")),
        Some(&json!(1))
    );
    let from_value: Part =
        serde_json::from_value(json!({"kind": "data", "data": {"a": [1]}, "text": "ignored"}))
            .expect("a data part");
    assert!(matches!(&from_value, Part::Data(data) if data.data["a"] == json!([1])));
}

#[test]
fn a_part_error_names_the_member_inside_the_part() {
    // Read as a request is read, tracking the path: it goes inside the part.
    let error = serde_path_to_error::deserialize::<_, Part>(json!({
        "kind": "file", "file": {"bytes": 12}
    }))
    .expect_err("bytes must be a string");
    assert_eq!(error.path().to_string(), "file.bytes");
    let text = error_text::<Part>(json!({"kind": 7, "text": "x"}));
    assert!(text.contains("expected a string"), "{text}");
    let text = error_text::<Part>(json!({"text": "x"}));
    assert!(text.contains("missing field `kind`"), "{text}");
}

#[test]
fn a_tag_too_long_to_hold_matches_nothing_and_is_shown_cut() {
    let long = format!("text{}", "é".repeat(40));
    let text = error_text::<Part>(json!({"kind": long, "text": "x"}));
    assert!(
        text.contains("`kind`") && text.contains("\"texté"),
        "{text}"
    );
    assert!(text.contains('…'), "{text}");
    // A tag that starts as a known one but runs on is not that one.
    let text = error_text::<Message>(json!({
        "kind": format!("message{}", "x".repeat(40)), "messageId": "m", "role": "user", "parts": []
    }));
    assert!(text.contains("`kind`") && text.contains('…'), "{text}");
}

#[test]
fn file_content_is_chosen_by_bytes_or_uri() {
    let part: Part = serde_json::from_value(json!({
        "kind": "file", "file": {"uri": "https://example.com/a.pdf", "mimeType": "application/pdf"}
    }))
    .expect("a file part");
    let Part::File(FilePart {
        file: FileContent::Uri(file),
        ..
    }) = part
    else {
        panic!("expected a file part by uri, got {part:?}");
    };
    assert_eq!(file.mime_type.as_deref(), Some("application/pdf"));
    let text = error_text::<FileContent>(json!({"bytes": "AA==", "uri": "https://x"}));
    assert!(text.contains("not both"), "{text}");
}

#[test]
fn task_round_trips_with_kind_first_and_absent_options_left_out() {
    let task = Task::new(
        TaskId::new("t-1"),
        ContextId::new("c-1"),
        TaskStatus {
            state: TaskState::InputRequired,
            message: Some(
                Message::agent_text("which file?")
                    .with_task_id("t-1")
                    .into(),
            ),
            timestamp: None,
        },
    );
    let text = serde_json::to_string(&task).expect("serializable");
    assert!(text.starts_with(r#"{"kind":"task","id":"t-1""#), "{text}");
    assert!(!text.contains("history"), "{text}");
    let back: Task = serde_json::from_str(&text).expect("round trip");
    assert_eq!(back, task);
}

#[test]
fn task_states_classify_terminal_and_interrupted() {
    let terminal = [
        TaskState::Completed,
        TaskState::Canceled,
        TaskState::Failed,
        TaskState::Rejected,
    ];
    for state in terminal {
        assert!(state.is_terminal() && !state.is_interrupted(), "{state}");
        assert!(state.is_settled(), "{state}");
    }
    for state in [TaskState::InputRequired, TaskState::AuthRequired] {
        assert!(state.is_interrupted() && !state.is_terminal(), "{state}");
        assert!(state.is_settled(), "{state}");
    }
    for state in [TaskState::Submitted, TaskState::Working, TaskState::Unknown] {
        assert!(!state.is_interrupted() && !state.is_terminal(), "{state}");
        assert!(!state.is_settled(), "{state}");
    }
    assert_eq!(
        serde_json::to_value(TaskState::AuthRequired).expect("serializable"),
        json!("auth-required")
    );
}

#[test]
fn status_update_uses_final_on_the_wire() {
    let event = TaskStatusUpdateEvent::new(
        TaskId::new("t"),
        ContextId::new("c"),
        TaskStatus::new(TaskState::Completed),
        true,
    );
    let value = serde_json::to_value(&event).expect("serializable");
    assert_eq!(value["final"], json!(true));
    assert_eq!(value["kind"], json!("status-update"));
    assert!(value["status"]["timestamp"].is_string());
}

#[test]
fn message_text_joins_text_parts_and_skips_others() {
    let mut message = Message::user_text("one");
    message.parts.push(Part::data(serde_json::Map::new()));
    message.parts.push(Part::text("two"));
    assert_eq!(message.text(), "one\ntwo");
    assert_eq!(Message::user_text("alone").text(), "alone");
    let mut no_text = Message::user_text("");
    no_text.parts = vec![Part::data(serde_json::Map::new())];
    assert_eq!(no_text.text(), "");
}

#[test]
fn a_role_is_read_by_its_name_and_a_wrong_one_is_named() {
    let body = r#"{"kind": "message", "messageId": "m", "role": "agent", "parts": []}"#;
    let message: Message = serde_json::from_str(body).expect("a message");
    assert_eq!(message.role, Role::Agent);
    let text = error_text::<Message>(json!({
        "kind": "message", "messageId": "m", "role": "robot", "parts": []
    }));
    assert!(
        text.contains(r#"invalid `role` "robot": expected "user", "agent""#),
        "{text}"
    );
    let text = error_text::<Message>(json!({
        "kind": "message", "messageId": "m", "role": 1, "parts": []
    }));
    assert!(text.contains("expected a string"), "{text}");
}

#[test]
fn a_media_type_s_essence_drops_its_parameters_and_space() {
    assert_eq!(media_essence("text/plain; charset=utf-8"), "text/plain");
    assert_eq!(media_essence("  Application/JSON  "), "Application/JSON");
    assert_eq!(media_essence("text/*;q=0.5;x=y"), "text/*");
    assert_eq!(media_essence(";charset=utf-8"), "");
    assert_eq!(media_essence(""), "");
}
