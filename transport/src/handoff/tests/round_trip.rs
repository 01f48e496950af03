//! Payloads through JSON and back, the exact wire shape, and idempotency keys.

use serde_json::json;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::super::{
    Answer, HandoffPayload, Priority, Question, ReportStatus, StatusReport, TaskDelegation, Urgency,
};
use super::{minimal, valid, with};

/// One payload of each type with every field set.
pub(super) fn full_payloads() -> Result<Vec<HandoffPayload>, Box<dyn std::error::Error>> {
    Ok(vec![
        TaskDelegation::builder()
            .task_id("task-001")
            .task_title("Code review")
            .task_description("Review PR #42")
            .context("The PR changes the retry logic")
            .deadline(OffsetDateTime::parse(
                "2026-03-06T18:00:00.5+09:00",
                &Rfc3339,
            )?)
            .priority(Priority::High)
            .acceptance_criteria(["No open comments", "CI green"])
            .build()?
            .into(),
        StatusReport::builder()
            .task_id("task-001")
            .status(ReportStatus::InProgress)
            .completed_work("Read the diff")
            .remaining_work("Run the tests")
            .blockers(["CI is slow"])
            .progress_percent(60)
            .artifacts(["reviews/pr-42.md", "https://ci.example/run/7"])
            .build()?
            .into(),
        Question::builder()
            .question_id("q-001")
            .question("Which coverage do we require?")
            .context("Release checklist")
            .urgency(Urgency::Low)
            .options(["70%", "80%"])
            .build()?
            .into(),
        Answer::builder()
            .question_id("q-001")
            .answer("80%")
            .confidence(0.75)
            .references(["docs/release.md"])
            .build()?
            .into(),
    ])
}

#[test]
fn every_payload_type_survives_a_json_round_trip() -> Result<(), Box<dyn std::error::Error>> {
    for payload in full_payloads()? {
        let text = serde_json::to_string(&payload)?;
        let back: HandoffPayload = serde_json::from_str(&text)?;
        assert_eq!(back, payload, "{text}");
        assert_eq!(
            HandoffPayload::from_json_value(&payload.to_json_value())?,
            payload
        );
    }
    Ok(())
}

#[test]
fn payloads_are_written_in_camel_case_with_the_discriminator()
-> Result<(), Box<dyn std::error::Error>> {
    let written: Vec<_> = full_payloads()?
        .iter()
        .map(HandoffPayload::to_json_value)
        .collect();
    assert_eq!(
        written,
        [
            json!({
                "payloadType": "task_delegation",
                "taskId": "task-001",
                "taskTitle": "Code review",
                "taskDescription": "Review PR #42",
                "context": "The PR changes the retry logic",
                "deadline": "2026-03-06T18:00:00.5+09:00",
                "priority": "high",
                "acceptanceCriteria": ["No open comments", "CI green"],
            }),
            json!({
                "payloadType": "status_report",
                "taskId": "task-001",
                "status": "in_progress",
                "completedWork": "Read the diff",
                "remainingWork": "Run the tests",
                "blockers": ["CI is slow"],
                "progressPercent": 60,
                "artifacts": ["reviews/pr-42.md", "https://ci.example/run/7"],
            }),
            json!({
                "payloadType": "question",
                "questionId": "q-001",
                "question": "Which coverage do we require?",
                "context": "Release checklist",
                "urgency": "low",
                "options": ["70%", "80%"],
            }),
            json!({
                "payloadType": "answer",
                "questionId": "q-001",
                "answer": "80%",
                "confidence": 0.75,
                "references": ["docs/release.md"],
            }),
        ]
    );
    Ok(())
}

#[test]
fn absent_optional_fields_are_left_out_of_the_json() -> Result<(), Box<dyn std::error::Error>> {
    for payload_type in ["task_delegation", "status_report", "question", "answer"] {
        assert_eq!(
            valid(minimal(payload_type)).to_json_value(),
            minimal(payload_type)
        );
    }
    Ok(())
}

#[test]
fn idempotency_keys_name_the_type_and_the_subject() {
    let keys: Vec<_> = ["task_delegation", "status_report", "question", "answer"]
        .iter()
        .map(|payload_type| valid(minimal(payload_type)).idempotency_key())
        .collect();
    assert_eq!(
        keys,
        [
            "task_delegation:task-001",
            "status_report:task-001:in_progress",
            "question:q-001",
            "answer:q-001",
        ]
    );
}

#[test]
fn a_retried_payload_has_the_same_key_and_a_new_one_does_not()
-> Result<(), Box<dyn std::error::Error>> {
    let key = |value| valid(value).idempotency_key();
    // A delegation is keyed by its task: a resend with reworded text is the same task.
    assert_eq!(
        key(minimal("task_delegation")),
        key(with("task_delegation", "taskTitle", json!("Review, again")))
    );
    assert_ne!(
        key(minimal("task_delegation")),
        key(with("task_delegation", "taskId", json!("task-002")))
    );
    // A task has many reports: a change of status or progress is a new report.
    let report = |status: ReportStatus, percent: Option<u8>| {
        let builder = StatusReport::builder().task_id("task-001").status(status);
        let builder = match percent {
            Some(percent) => builder.progress_percent(percent),
            None => builder,
        };
        builder
            .build()
            .map(|r| HandoffPayload::from(r).idempotency_key())
    };
    assert_eq!(
        report(ReportStatus::InProgress, Some(30))?,
        report(ReportStatus::InProgress, Some(30))?
    );
    assert_eq!(
        report(ReportStatus::InProgress, Some(30))?,
        "status_report:task-001:in_progress:30"
    );
    assert_ne!(
        report(ReportStatus::InProgress, Some(30))?,
        report(ReportStatus::InProgress, Some(60))?
    );
    assert_ne!(
        report(ReportStatus::InProgress, None)?,
        report(ReportStatus::Completed, None)?
    );
    Ok(())
}

#[test]
fn subject_ids_tie_an_exchange_together() {
    assert_eq!(
        valid(minimal("task_delegation")).subject_id(),
        valid(minimal("status_report")).subject_id()
    );
    assert_eq!(
        valid(minimal("question")).subject_id(),
        valid(minimal("answer")).subject_id()
    );
}
