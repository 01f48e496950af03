//! Every validation rule, each with a value that must fail and one that must pass,
//! through JSON and through the typed builders.

use serde_json::json;
use time::format_description::well_known::Rfc3339;
use time::{Date, Month, OffsetDateTime, Time, UtcOffset};

use super::super::{
    Answer, HandoffPayload, Priority, Question, ReportStatus, StatusReport, TaskDelegation, Urgency,
};
use super::{fields, invalid, minimal, valid, with, without};

const REQUIRED: &[(&str, &[&str])] = &[
    (
        "task_delegation",
        &["taskId", "taskTitle", "taskDescription"],
    ),
    ("status_report", &["taskId", "status"]),
    ("question", &["questionId", "question"]),
    ("answer", &["questionId", "answer"]),
];

#[test]
fn minimal_payloads_of_every_type_are_accepted() {
    for (payload_type, _) in REQUIRED {
        let payload = valid(minimal(payload_type));
        assert_eq!(payload.payload_type().as_str(), *payload_type);
    }
}

#[test]
fn every_required_field_is_required() {
    for (payload_type, required) in REQUIRED {
        for key in *required {
            let error = invalid(without(payload_type, key));
            assert_eq!(fields(&error), [*key], "{payload_type} without {key}");
            assert_eq!(error.errors()[0].problem, "is required");
        }
    }
}

#[test]
fn null_counts_as_missing_for_a_required_field() {
    let error = invalid(with("answer", "answer", json!(null)));
    assert_eq!(error.errors()[0].to_string(), "answer: is required");
}

#[test]
fn ids_and_required_strings_must_not_be_blank() {
    for (payload_type, required) in REQUIRED {
        for key in required.iter().filter(|key| **key != "status") {
            for blank in ["", "   "] {
                let error = invalid(with(payload_type, key, json!(blank)));
                assert_eq!(fields(&error), [*key], "{payload_type} with blank {key}");
                assert_eq!(error.errors()[0].problem, "must not be empty");
            }
            // One visible character is enough.
            valid(with(payload_type, key, json!("x")));
        }
    }
}

#[test]
fn required_strings_must_be_strings() {
    let error = invalid(with("task_delegation", "taskId", json!(17)));
    // Reported once, as the wrong type, not also as missing.
    assert_eq!(error.errors().len(), 1);
    assert_eq!(error.errors()[0].to_string(), "taskId: must be a string");
}

#[test]
fn optional_strings_must_be_strings_when_present() {
    let cases = [
        ("task_delegation", "context"),
        ("status_report", "completedWork"),
        ("status_report", "remainingWork"),
        ("question", "context"),
    ];
    for (payload_type, key) in cases {
        let error = invalid(with(payload_type, key, json!(["not", "a", "string"])));
        assert_eq!(fields(&error), [key]);
        valid(with(payload_type, key, json!("some text")));
        // An optional string may be empty: only required ones carry meaning.
        valid(with(payload_type, key, json!("")));
    }
}

#[test]
fn lists_must_be_arrays_of_strings_and_name_the_bad_item() {
    let cases = [
        ("task_delegation", "acceptanceCriteria"),
        ("status_report", "blockers"),
        ("status_report", "artifacts"),
        ("question", "options"),
        ("answer", "references"),
    ];
    for (payload_type, key) in cases {
        let error = invalid(with(payload_type, key, json!("one string")));
        assert_eq!(
            error.errors()[0].to_string(),
            format!("{key}: must be an array of strings")
        );

        let error = invalid(with(payload_type, key, json!(["a", "b", 3, "d", null])));
        assert_eq!(fields(&error), [format!("{key}[2]"), format!("{key}[4]")]);

        valid(with(payload_type, key, json!(["a", "b"])));
        valid(with(payload_type, key, json!([])));
    }
}

#[test]
fn null_counts_as_absent_for_optional_fields() {
    let payload = valid(json!({
        "payloadType": "task_delegation",
        "taskId": "task-001",
        "taskTitle": "Code review",
        "taskDescription": "Review PR #42",
        "context": null,
        "deadline": null,
        "priority": null,
        "acceptanceCriteria": null,
    }));
    assert_eq!(payload, valid(minimal("task_delegation")));
}

#[test]
fn unknown_fields_are_ignored() {
    let payload = valid(with("question", "audience", json!("reviewers")));
    assert_eq!(payload, valid(minimal("question")));
}

#[test]
fn priority_accepts_exactly_the_four_levels() {
    for level in ["critical", "high", "medium", "low"] {
        let HandoffPayload::TaskDelegation(task) =
            valid(with("task_delegation", "priority", json!(level)))
        else {
            panic!("not a task delegation");
        };
        assert_eq!(task.priority().map(Priority::as_str), Some(level));
    }
    for wrong in [json!("urgent"), json!("HIGH"), json!(1)] {
        let error = invalid(with("task_delegation", "priority", wrong));
        assert_eq!(
            error.errors()[0].to_string(),
            "priority: must be one of critical, high, medium, low"
        );
    }
}

#[test]
fn status_accepts_exactly_the_four_states() {
    for state in ["in_progress", "completed", "blocked", "failed"] {
        let HandoffPayload::StatusReport(report) =
            valid(with("status_report", "status", json!(state)))
        else {
            panic!("not a status report");
        };
        assert_eq!(report.status().as_str(), state);
    }
    for wrong in [json!("done"), json!("in-progress"), json!(true)] {
        let error = invalid(with("status_report", "status", wrong));
        assert_eq!(
            error.errors()[0].to_string(),
            "status: must be one of in_progress, completed, blocked, failed"
        );
    }
}

#[test]
fn urgency_accepts_exactly_the_three_levels() {
    for level in ["urgent", "normal", "low"] {
        let HandoffPayload::Question(question) = valid(with("question", "urgency", json!(level)))
        else {
            panic!("not a question");
        };
        assert_eq!(question.urgency().map(Urgency::as_str), Some(level));
    }
    for wrong in [json!("high"), json!("critical"), json!(0)] {
        let error = invalid(with("question", "urgency", wrong));
        assert_eq!(
            error.errors()[0].to_string(),
            "urgency: must be one of urgent, normal, low"
        );
    }
}

#[test]
fn confidence_must_be_within_zero_and_one() {
    for ok in [0.0, 0.5, 1.0] {
        valid(with("answer", "confidence", json!(ok)));
    }
    valid(with("answer", "confidence", json!(1)));
    for wrong in [
        json!(1.01),
        json!(-0.01),
        json!(1.5),
        json!(100),
        json!("0.5"),
    ] {
        let error = invalid(with("answer", "confidence", wrong));
        assert_eq!(
            error.errors()[0].to_string(),
            "confidence: must be a number from 0.0 to 1.0"
        );
    }
}

#[test]
fn builder_rejects_confidence_above_one_and_accepts_one() {
    let answer = || Answer::builder().question_id("q-001").answer("yes");
    assert_eq!(
        answer().confidence(1.0).build().map(|a| a.confidence()),
        Ok(Some(1.0))
    );
    assert_eq!(
        answer().confidence(0.0).build().map(|a| a.confidence()),
        Ok(Some(0.0))
    );
    for wrong in [1.01, -0.01, f64::NAN, f64::INFINITY] {
        let error = answer().confidence(wrong).build().unwrap_err();
        assert_eq!(fields(&error), ["confidence"], "confidence {wrong}");
    }
}

#[test]
fn progress_percent_must_be_an_integer_from_zero_to_one_hundred() {
    for ok in [json!(0), json!(100), json!(42), json!(50.0)] {
        valid(with("status_report", "progressPercent", ok));
    }
    for wrong in [
        json!(101),
        json!(-1),
        json!(50.5),
        json!(256),
        json!(1e9),
        json!("50"),
    ] {
        let error = invalid(with("status_report", "progressPercent", wrong.clone()));
        assert_eq!(
            error.errors()[0].to_string(),
            "progressPercent: must be an integer from 0 to 100",
            "{wrong}"
        );
    }
}

#[test]
fn builder_rejects_progress_above_one_hundred_and_accepts_one_hundred() {
    let report = || {
        StatusReport::builder()
            .task_id("task-001")
            .status(ReportStatus::Completed)
    };
    assert!(report().progress_percent(100).build().is_ok());
    let error = report().progress_percent(101).build().unwrap_err();
    assert_eq!(fields(&error), ["progressPercent"]);
}

#[test]
fn deadline_must_be_an_rfc_3339_time() {
    for ok in [
        "2026-03-06T18:00:00+09:00",
        "2026-03-06T09:00:00Z",
        "2026-03-06T09:00:00.250Z",
    ] {
        let HandoffPayload::TaskDelegation(task) =
            valid(with("task_delegation", "deadline", json!(ok)))
        else {
            panic!("not a task delegation");
        };
        assert!(task.deadline().is_some());
    }
    for wrong in [
        json!("2026-03-06"),
        json!("2026-03-06 18:00"),
        json!("2026-03-06T18:00:00"),
        json!("next friday"),
        json!("2026-02-30T18:00:00Z"),
        json!(1_772_787_600),
    ] {
        let error = invalid(with("task_delegation", "deadline", wrong.clone()));
        assert_eq!(fields(&error), ["deadline"], "{wrong}");
    }
}

#[test]
fn builder_rejects_a_deadline_rfc_3339_cannot_express() -> Result<(), Box<dyn std::error::Error>> {
    let task = || {
        TaskDelegation::builder()
            .task_id("task-001")
            .task_title("Code review")
            .task_description("Review PR #42")
    };
    let ok = OffsetDateTime::parse("2026-03-06T18:00:00+09:00", &Rfc3339)?;
    assert!(task().deadline(ok).build().is_ok());
    // RFC 3339 has years 0000 to 9999 and offsets in whole minutes.
    let before_year_zero = Date::from_calendar_date(-1, Month::January, 1)?
        .with_time(Time::MIDNIGHT)
        .assume_utc();
    let odd_offset = ok.to_offset(UtcOffset::from_hms(9, 0, 30)?);
    for wrong in [before_year_zero, odd_offset] {
        let error = task().deadline(wrong).build().unwrap_err();
        assert_eq!(fields(&error), ["deadline"], "{wrong}");
    }
    Ok(())
}

#[test]
fn builders_report_missing_and_blank_fields() {
    let error = TaskDelegation::builder().task_id(" ").build().unwrap_err();
    assert_eq!(fields(&error), ["taskId", "taskTitle", "taskDescription"]);
    let error = StatusReport::builder().build().unwrap_err();
    assert_eq!(fields(&error), ["taskId", "status"]);
    let error = Question::builder()
        .question("Which branch?")
        .build()
        .unwrap_err();
    assert_eq!(fields(&error), ["questionId"]);
    let error = Answer::builder()
        .question_id("q-001")
        .answer("")
        .build()
        .unwrap_err();
    assert_eq!(error.errors()[0].to_string(), "answer: must not be empty");
}

#[test]
fn every_invalid_field_is_reported_at_once() {
    let error = invalid(json!({
        "payloadType": "task_delegation",
        "taskId": "",
        "taskDescription": 42,
        "deadline": "tomorrow",
        "priority": "asap",
        "acceptanceCriteria": ["tests pass", false],
    }));
    assert_eq!(
        fields(&error),
        [
            "taskId",
            "taskTitle",
            "taskDescription",
            "deadline",
            "priority",
            "acceptanceCriteria[1]"
        ]
    );

    let error = invalid(json!({
        "payloadType": "status_report",
        "status": "done",
        "progressPercent": 120,
        "blockers": "everything",
    }));
    assert_eq!(
        fields(&error),
        ["taskId", "status", "blockers", "progressPercent"]
    );

    let error = invalid(json!({
        "payloadType": "answer",
        "questionId": " ",
        "answer": null,
        "confidence": 2,
        "references": [1],
    }));
    assert_eq!(
        fields(&error),
        ["questionId", "answer", "confidence", "references[0]"]
    );
    assert_eq!(
        error.to_string(),
        "invalid handoff payload: questionId: must not be empty; answer: is required; \
         confidence: must be a number from 0.0 to 1.0; references[0]: must be a string"
    );
}

#[test]
fn payload_type_is_required_and_must_be_known() {
    let error = invalid(json!({"taskId": "task-001"}));
    assert_eq!(
        error.errors()[0].to_string(),
        "payloadType: is required (the seed's `type` is accepted too)"
    );

    let error = invalid(json!({"type": 7, "taskId": "task-001"}));
    assert_eq!(error.errors()[0].to_string(), "type: must be a string");

    let error = invalid(json!({"payloadType": "handover", "taskId": "task-001"}));
    assert_eq!(
        error.errors()[0].to_string(),
        "payloadType: unknown payload type `handover`; \
         expected one of task_delegation, status_report, question, answer"
    );

    let error = invalid(json!({"payloadType": 1}));
    assert_eq!(
        error.errors()[0].to_string(),
        "payloadType: must be a string"
    );

    // Exact match only: the discriminator is case-sensitive.
    let error = invalid(with("question", "payloadType", json!("Question")));
    assert_eq!(fields(&error), ["payloadType"]);
}

#[test]
fn a_payload_must_be_a_json_object() {
    for wrong in [json!([]), json!("question"), json!(null)] {
        let error = invalid(wrong);
        assert_eq!(error.errors()[0].to_string(), "$: must be a JSON object");
    }
}

#[test]
fn deserializing_runs_the_rules() {
    let text = r#"{"payloadType":"answer","questionId":"q-001","answer":"yes","confidence":1.5}"#;
    let error = serde_json::from_str::<HandoffPayload>(text).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("confidence: must be a number from 0.0 to 1.0"),
        "{error}"
    );
}
