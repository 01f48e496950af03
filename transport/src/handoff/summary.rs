//! The short text an agent's model sees for a payload (the seed's
//! `buildPayloadSummary` and `buildAgentToAgentMessageContext`).
//!
//! Kept to the fields the seed chose: the summary lengthens every prompt it goes
//! into, and the whole payload stays available to the agent as a typed value.

use std::fmt::Write as _;

use super::payload::HandoffPayload;

/// The heading between the free text and the payload summary in a message context.
pub const SUMMARY_HEADING: &str = "--- Structured payload ---";

impl HandoffPayload {
    /// A few `Label: value` lines for a model's context; optional fields appear
    /// only when set.
    ///
    /// | type | lines |
    /// |---|---|
    /// | task_delegation | Task ID, Title, Description, Priority?, Deadline? |
    /// | status_report | Task ID, Status, Completed work?, Blockers? (joined with ", ") |
    /// | question | Question ID, Question, Urgency? |
    /// | answer | Question ID, Answer, Confidence? (a rounded percentage) |
    ///
    /// ```
    /// use agentyard_transport::handoff::{Answer, HandoffPayload};
    ///
    /// let answer = Answer::builder().question_id("q-001").answer("80%").confidence(0.854);
    /// let payload = HandoffPayload::from(answer.build()?);
    /// assert_eq!(payload.summary(), "Question ID: q-001\nAnswer: 80%\nConfidence: 85%");
    /// # Ok::<(), agentyard_transport::handoff::InvalidPayload>(())
    /// ```
    pub fn summary(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let mut line = |label: &str, value: &dyn std::fmt::Display| {
            if !out.is_empty() {
                out.push('\n');
            }
            let _ = write!(out, "{label}: {value}");
        };
        match self {
            HandoffPayload::TaskDelegation(task) => {
                line("Task ID", &task.task_id());
                line("Title", &task.task_title());
                line("Description", &task.task_description());
                if let Some(priority) = task.priority() {
                    line("Priority", &priority);
                }
                if let Some(deadline) = task.deadline_rfc3339() {
                    line("Deadline", &deadline);
                }
            }
            HandoffPayload::StatusReport(report) => {
                line("Task ID", &report.task_id());
                line("Status", &report.status());
                if let Some(completed) = report.completed_work() {
                    line("Completed work", &completed);
                }
                if !report.blockers().is_empty() {
                    line("Blockers", &report.blockers().join(", "));
                }
            }
            HandoffPayload::Question(question) => {
                line("Question ID", &question.question_id());
                line("Question", &question.question());
                if let Some(urgency) = question.urgency() {
                    line("Urgency", &urgency);
                }
            }
            HandoffPayload::Answer(answer) => {
                line("Question ID", &answer.question_id());
                line("Answer", &answer.answer());
                if let Some(confidence) = answer.confidence() {
                    line("Confidence", &format!("{}%", (confidence * 100.0).round()));
                }
            }
        }
        out
    }
}

/// The text a receiving agent's model gets for a message from `from_agent`.
///
/// Without a payload it is `[from]: message`, exactly as before payloads
/// existed; with one, `[from] (payloadType): message`, a blank line,
/// [`SUMMARY_HEADING`] and [`HandoffPayload::summary`].
///
/// ```
/// use agentyard_transport::handoff::build_message_context;
///
/// assert_eq!(build_message_context("agent-a", "hello", None), "[agent-a]: hello");
/// ```
pub fn build_message_context(
    from_agent: &str,
    message: &str,
    payload: Option<&HandoffPayload>,
) -> String {
    match payload {
        None => format!("[{from_agent}]: {message}"),
        Some(payload) => format!(
            "[{from_agent}] ({}): {message}\n\n{SUMMARY_HEADING}\n{}",
            payload.payload_type(),
            payload.summary()
        ),
    }
}
