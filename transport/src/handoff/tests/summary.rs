//! The summary for a model's context, following the seed's `buildPayloadSummary`,
//! and the seed's `buildAgentToAgentMessageContext` cases (its section 7.1).

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::super::{
    Answer, HandoffPayload, Priority, Question, ReportStatus, StatusReport, TaskDelegation,
    Urgency, build_message_context,
};
use super::{minimal, valid};

#[test]
fn context_without_a_payload_keeps_the_old_format() {
    assert_eq!(
        build_message_context("agent-a", "안녕하세요", None),
        "[agent-a]: 안녕하세요"
    );
}

#[test]
fn context_with_a_task_delegation_is_structured() -> Result<(), Box<dyn std::error::Error>> {
    let payload = HandoffPayload::from(
        TaskDelegation::builder()
            .task_id("task-001")
            .task_title("코드 리뷰")
            .task_description("PR #42 리뷰 요청")
            .build()?,
    );
    let context = build_message_context("agent-a", "리뷰 부탁드려요", Some(&payload));
    assert!(context.contains("task_delegation"));
    assert!(context.contains("task-001"));
    assert!(context.contains("코드 리뷰"));
    assert_eq!(
        context,
        "[agent-a] (task_delegation): 리뷰 부탁드려요\n\n--- Structured payload ---\n\
         Task ID: task-001\nTitle: 코드 리뷰\nDescription: PR #42 리뷰 요청"
    );
    Ok(())
}

#[test]
fn task_delegation_summary_adds_priority_and_deadline_when_set()
-> Result<(), Box<dyn std::error::Error>> {
    let payload = HandoffPayload::from(
        TaskDelegation::builder()
            .task_id("task-001")
            .task_title("Code review")
            .task_description("Review PR #42")
            .context("left out of the summary")
            .priority(Priority::Critical)
            .deadline(OffsetDateTime::parse(
                "2026-03-06T18:00:00+09:00",
                &Rfc3339,
            )?)
            .acceptance_criteria(["left out too"])
            .build()?,
    );
    assert_eq!(
        payload.summary(),
        "Task ID: task-001\nTitle: Code review\nDescription: Review PR #42\n\
         Priority: critical\nDeadline: 2026-03-06T18:00:00+09:00"
    );
    Ok(())
}

#[test]
fn status_report_summary_adds_completed_work_and_blockers_when_set()
-> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(
        valid(minimal("status_report")).summary(),
        "Task ID: task-001\nStatus: in_progress"
    );
    let payload = HandoffPayload::from(
        StatusReport::builder()
            .task_id("task-001")
            .status(ReportStatus::Blocked)
            .completed_work("Read the diff")
            .blockers(["CI is down", "No access to staging"])
            .progress_percent(40)
            .build()?,
    );
    assert_eq!(
        payload.summary(),
        "Task ID: task-001\nStatus: blocked\nCompleted work: Read the diff\n\
         Blockers: CI is down, No access to staging"
    );
    Ok(())
}

#[test]
fn question_summary_adds_urgency_when_set() -> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(
        valid(minimal("question")).summary(),
        "Question ID: q-001\nQuestion: Which branch?"
    );
    let payload = HandoffPayload::from(
        Question::builder()
            .question_id("q-001")
            .question("Which branch?")
            .urgency(Urgency::Urgent)
            .build()?,
    );
    assert_eq!(
        payload.summary(),
        "Question ID: q-001\nQuestion: Which branch?\nUrgency: urgent"
    );
    Ok(())
}

#[test]
fn answer_summary_shows_confidence_as_a_rounded_percentage()
-> Result<(), Box<dyn std::error::Error>> {
    assert_eq!(
        valid(minimal("answer")).summary(),
        "Question ID: q-001\nAnswer: main"
    );
    let answer = |confidence| {
        Answer::builder()
            .question_id("q-001")
            .answer("main")
            .confidence(confidence)
            .build()
            .map(|answer| HandoffPayload::from(answer).summary())
    };
    assert_eq!(
        answer(0.855)?,
        "Question ID: q-001\nAnswer: main\nConfidence: 86%"
    );
    assert_eq!(
        answer(1.0)?,
        "Question ID: q-001\nAnswer: main\nConfidence: 100%"
    );
    assert_eq!(
        answer(0.0)?,
        "Question ID: q-001\nAnswer: main\nConfidence: 0%"
    );
    Ok(())
}
