//! The four payload types, their enumerated fields and their builders.
//!
//! Fields are private to the handoff module so that a value of any type here is
//! valid by construction: the only ways in are a builder's `build()` and
//! deserialization, and both run the same rules (see [`super::validate`]).

use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::validate::{InvalidPayload, Problems};

/// A closed set of wire strings, so that the JSON reader can read any of them.
pub(super) trait WireEnum: Sized {
    /// The value whose wire string is `wire`.
    fn from_wire(wire: &str) -> Option<Self>;
    /// The wire strings joined with ", ", for error messages.
    fn expected() -> String;
}

/// Declares a closed set of wire strings as an enum with `as_str`, `from_wire`,
/// `Display` and snake_case serde, so that the list of accepted strings exists once.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident => $wire:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $(
                $(#[$vmeta])*
                #[serde(rename = $wire)]
                $variant,
            )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The string this value has on the wire.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                }
            }

            /// The value whose wire string is `wire`, if there is one (exact match).
            pub fn from_wire(wire: &str) -> Option<Self> {
                match wire {
                    $($wire => Some($name::$variant),)+
                    _ => None,
                }
            }

        }

        impl WireEnum for $name {
            fn from_wire(wire: &str) -> Option<Self> {
                $name::from_wire(wire)
            }

            fn expected() -> String {
                Self::ALL
                    .iter()
                    .map(|value| value.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

wire_enum! {
    /// Which of the four payloads a value is: the `payloadType` discriminator.
    ///
    /// Deliberately not `#[non_exhaustive]`: a new payload type must break every
    /// `match` that handles payloads, so that no consumer silently ignores it
    /// (the seed's answer to "a new type is added and a parser is not updated").
    PayloadType {
        /// One agent hands a task to another.
        TaskDelegation => "task_delegation",
        /// An agent reports progress on a task it was handed.
        StatusReport => "status_report",
        /// An agent asks another for clarification.
        Question => "question",
        /// An agent answers a question.
        Answer => "answer",
    }
}

impl PayloadType {
    /// The intent this payload type carries; with a payload present, a receiver
    /// takes the intent from here and skips free-text classification.
    pub const fn intent(self) -> Intent {
        match self {
            PayloadType::TaskDelegation => Intent::Delegate,
            PayloadType::StatusReport => Intent::Report,
            PayloadType::Question => Intent::Ask,
            PayloadType::Answer => Intent::Respond,
        }
    }
}

wire_enum! {
    /// What a sender means by a message.
    ///
    /// A message with a handoff payload has the intent of its payload type
    /// ([`PayloadType::intent`]). A message without one has no intent here: the
    /// seed leaves free-text messages to the existing (model-based) classifier,
    /// so this crate offers no guesswork of its own.
    Intent {
        /// Hand work over (from `task_delegation`).
        Delegate => "delegate",
        /// Report on work (from `status_report`).
        Report => "report",
        /// Ask for clarification (from `question`).
        Ask => "ask",
        /// Answer a question (from `answer`).
        Respond => "respond",
    }
}

wire_enum! {
    /// How urgent a delegated task is (`priority` of a task delegation).
    Priority {
        /// Drop everything else.
        Critical => "critical",
        /// Before ordinary work.
        High => "high",
        /// Ordinary work.
        Medium => "medium",
        /// When nothing else is waiting.
        Low => "low",
    }
}

wire_enum! {
    /// Where a reported task stands (`status` of a status report).
    ReportStatus {
        /// Work goes on.
        InProgress => "in_progress",
        /// Work is done.
        Completed => "completed",
        /// Work cannot go on until the blockers are resolved.
        Blocked => "blocked",
        /// Work ended without the result.
        Failed => "failed",
    }
}

wire_enum! {
    /// How soon a question needs an answer (`urgency` of a question).
    Urgency {
        /// The asker is waiting on the answer.
        Urgent => "urgent",
        /// Answer in the ordinary course of work.
        Normal => "normal",
        /// Answer when convenient.
        Low => "low",
    }
}

/// A deadline with its RFC 3339 text, written once when the payload is built so
/// that writing the payload cannot fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Deadline {
    pub(super) at: OffsetDateTime,
    pub(super) text: String,
}

/// A task handed from one agent to another (`payloadType: "task_delegation"`).
///
/// Convert it into a [`HandoffPayload`] to write it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskDelegation {
    pub(super) task_id: String,
    pub(super) task_title: String,
    pub(super) task_description: String,
    pub(super) context: Option<String>,
    pub(super) deadline: Option<Deadline>,
    pub(super) priority: Option<Priority>,
    pub(super) acceptance_criteria: Vec<String>,
}

impl TaskDelegation {
    /// An empty builder; `taskId`, `taskTitle` and `taskDescription` are required.
    pub fn builder() -> TaskDelegationBuilder {
        TaskDelegationBuilder::default()
    }

    /// `taskId`: identifies the task; status reports on it carry the same id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// `taskTitle`: a one-line summary.
    pub fn task_title(&self) -> &str {
        &self.task_title
    }

    /// `taskDescription`: what is to be done.
    pub fn task_description(&self) -> &str {
        &self.task_description
    }

    /// `context`: background the receiver needs for the task.
    pub fn context(&self) -> Option<&str> {
        self.context.as_deref()
    }

    /// `deadline`: when the task is due.
    pub fn deadline(&self) -> Option<OffsetDateTime> {
        self.deadline.as_ref().map(|deadline| deadline.at)
    }

    /// `deadline` as written on the wire (RFC 3339).
    pub fn deadline_rfc3339(&self) -> Option<&str> {
        self.deadline
            .as_ref()
            .map(|deadline| deadline.text.as_str())
    }

    /// `priority`.
    pub fn priority(&self) -> Option<Priority> {
        self.priority
    }

    /// `acceptanceCriteria`: what "done" means (empty when absent).
    pub fn acceptance_criteria(&self) -> &[String] {
        &self.acceptance_criteria
    }
}

/// Builds a [`TaskDelegation`], reporting every invalid field at once.
///
/// ```
/// use agentyard_transport::handoff::{Priority, TaskDelegation};
///
/// let task = TaskDelegation::builder()
///     .task_id("task-001")
///     .task_title("Code review")
///     .task_description("Review PR #42")
///     .priority(Priority::High)
///     .build()?;
/// assert_eq!(task.task_id(), "task-001");
///
/// let err = TaskDelegation::builder().task_title("  ").build().unwrap_err();
/// let fields: Vec<_> = err.errors().iter().map(|e| e.field.as_str()).collect();
/// assert_eq!(fields, ["taskId", "taskTitle", "taskDescription"]);
/// # Ok::<(), agentyard_transport::handoff::InvalidPayload>(())
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct TaskDelegationBuilder {
    pub(super) task_id: Option<String>,
    pub(super) task_title: Option<String>,
    pub(super) task_description: Option<String>,
    pub(super) context: Option<String>,
    pub(super) deadline: Option<OffsetDateTime>,
    pub(super) priority: Option<Priority>,
    pub(super) acceptance_criteria: Vec<String>,
}

impl TaskDelegationBuilder {
    /// Sets `taskId` (required, not blank).
    pub fn task_id(mut self, task_id: impl Into<String>) -> Self {
        self.task_id = Some(task_id.into());
        self
    }

    /// Sets `taskTitle` (required, not blank).
    pub fn task_title(mut self, task_title: impl Into<String>) -> Self {
        self.task_title = Some(task_title.into());
        self
    }

    /// Sets `taskDescription` (required, not blank).
    pub fn task_description(mut self, task_description: impl Into<String>) -> Self {
        self.task_description = Some(task_description.into());
        self
    }

    /// Sets `context`.
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into());
        self
    }

    /// Sets `deadline` (must be writable as RFC 3339: years 0000 to 9999, an
    /// offset in whole minutes).
    pub fn deadline(mut self, deadline: OffsetDateTime) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Sets `priority`.
    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Sets `acceptanceCriteria`, replacing any set before.
    pub fn acceptance_criteria<I, S>(mut self, criteria: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.acceptance_criteria = criteria.into_iter().map(Into::into).collect();
        self
    }

    /// Checks every rule and returns the payload.
    ///
    /// # Errors
    ///
    /// [`InvalidPayload`] listing every missing or invalid field.
    pub fn build(self) -> Result<TaskDelegation, InvalidPayload> {
        Problems::run(|problems| self.finish(problems))
    }

    /// Checks the rules, adding to `problems`; `Some` only if `problems` is empty.
    pub(super) fn finish(self, problems: &mut Problems) -> Option<TaskDelegation> {
        let task_id = problems.required_text("taskId", self.task_id);
        let task_title = problems.required_text("taskTitle", self.task_title);
        let task_description = problems.required_text("taskDescription", self.task_description);
        let deadline = problems.deadline("deadline", self.deadline);
        let payload = TaskDelegation {
            task_id: task_id?,
            task_title: task_title?,
            task_description: task_description?,
            context: self.context,
            deadline,
            priority: self.priority,
            acceptance_criteria: self.acceptance_criteria,
        };
        problems.is_empty().then_some(payload)
    }
}

/// Progress on a delegated task (`payloadType: "status_report"`).
///
/// Convert it into a [`HandoffPayload`] to write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusReport {
    pub(super) task_id: String,
    pub(super) status: ReportStatus,
    pub(super) completed_work: Option<String>,
    pub(super) remaining_work: Option<String>,
    pub(super) blockers: Vec<String>,
    pub(super) progress_percent: Option<u8>,
    pub(super) artifacts: Vec<String>,
}

impl StatusReport {
    /// An empty builder; `taskId` and `status` are required.
    pub fn builder() -> StatusReportBuilder {
        StatusReportBuilder::default()
    }

    /// `taskId`: the delegated task this report is about.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// `status`.
    pub fn status(&self) -> ReportStatus {
        self.status
    }

    /// `completedWork`: what has been done.
    pub fn completed_work(&self) -> Option<&str> {
        self.completed_work.as_deref()
    }

    /// `remainingWork`: what is left.
    pub fn remaining_work(&self) -> Option<&str> {
        self.remaining_work.as_deref()
    }

    /// `blockers`: what stands in the way (empty when absent).
    pub fn blockers(&self) -> &[String] {
        &self.blockers
    }

    /// `progressPercent`: 0 to 100.
    pub fn progress_percent(&self) -> Option<u8> {
        self.progress_percent
    }

    /// `artifacts`: references to results such as file paths or URLs (empty when
    /// absent).
    pub fn artifacts(&self) -> &[String] {
        &self.artifacts
    }
}

/// Builds a [`StatusReport`], reporting every invalid field at once.
///
/// ```
/// use agentyard_transport::handoff::{ReportStatus, StatusReport};
///
/// let report = StatusReport::builder()
///     .task_id("task-001")
///     .status(ReportStatus::InProgress)
///     .progress_percent(60)
///     .build()?;
/// assert_eq!(report.progress_percent(), Some(60));
///
/// let err = StatusReport::builder().task_id("task-001").progress_percent(101).build();
/// assert_eq!(err.unwrap_err().errors().len(), 2); // status missing, percent too high
/// # Ok::<(), agentyard_transport::handoff::InvalidPayload>(())
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct StatusReportBuilder {
    pub(super) task_id: Option<String>,
    pub(super) status: Option<ReportStatus>,
    pub(super) completed_work: Option<String>,
    pub(super) remaining_work: Option<String>,
    pub(super) blockers: Vec<String>,
    pub(super) progress_percent: Option<u8>,
    pub(super) artifacts: Vec<String>,
}

impl StatusReportBuilder {
    /// Sets `taskId` (required, not blank).
    pub fn task_id(mut self, task_id: impl Into<String>) -> Self {
        self.task_id = Some(task_id.into());
        self
    }

    /// Sets `status` (required).
    pub fn status(mut self, status: ReportStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// Sets `completedWork`.
    pub fn completed_work(mut self, completed_work: impl Into<String>) -> Self {
        self.completed_work = Some(completed_work.into());
        self
    }

    /// Sets `remainingWork`.
    pub fn remaining_work(mut self, remaining_work: impl Into<String>) -> Self {
        self.remaining_work = Some(remaining_work.into());
        self
    }

    /// Sets `blockers`, replacing any set before.
    pub fn blockers<I, S>(mut self, blockers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.blockers = blockers.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `progressPercent` (0 to 100).
    pub fn progress_percent(mut self, percent: u8) -> Self {
        self.progress_percent = Some(percent);
        self
    }

    /// Sets `artifacts`, replacing any set before.
    pub fn artifacts<I, S>(mut self, artifacts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.artifacts = artifacts.into_iter().map(Into::into).collect();
        self
    }

    /// Checks every rule and returns the payload.
    ///
    /// # Errors
    ///
    /// [`InvalidPayload`] listing every missing or invalid field.
    pub fn build(self) -> Result<StatusReport, InvalidPayload> {
        Problems::run(|problems| self.finish(problems))
    }

    /// Checks the rules, adding to `problems`; `Some` only if `problems` is empty.
    pub(super) fn finish(self, problems: &mut Problems) -> Option<StatusReport> {
        let task_id = problems.required_text("taskId", self.task_id);
        let status = problems.required("status", self.status);
        problems.check_percent("progressPercent", self.progress_percent);
        let payload = StatusReport {
            task_id: task_id?,
            status: status?,
            completed_work: self.completed_work,
            remaining_work: self.remaining_work,
            blockers: self.blockers,
            progress_percent: self.progress_percent,
            artifacts: self.artifacts,
        };
        problems.is_empty().then_some(payload)
    }
}

/// A request for clarification (`payloadType: "question"`).
///
/// Convert it into a [`HandoffPayload`] to write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub(super) question_id: String,
    pub(super) question: String,
    pub(super) context: Option<String>,
    pub(super) urgency: Option<Urgency>,
    pub(super) options: Vec<String>,
}

impl Question {
    /// An empty builder; `questionId` and `question` are required.
    pub fn builder() -> QuestionBuilder {
        QuestionBuilder::default()
    }

    /// `questionId`: the answer carries the same id.
    pub fn question_id(&self) -> &str {
        &self.question_id
    }

    /// `question`.
    pub fn question(&self) -> &str {
        &self.question
    }

    /// `context`: background to the question.
    pub fn context(&self) -> Option<&str> {
        self.context.as_deref()
    }

    /// `urgency`.
    pub fn urgency(&self) -> Option<Urgency> {
        self.urgency
    }

    /// `options`: the choices of a multiple-choice question (empty when absent).
    pub fn options(&self) -> &[String] {
        &self.options
    }
}

/// Builds a [`Question`], reporting every invalid field at once.
///
/// ```
/// use agentyard_transport::handoff::{Question, Urgency};
///
/// let question = Question::builder()
///     .question_id("q-001")
///     .question("What test coverage do we require before a release?")
///     .urgency(Urgency::Normal)
///     .options(["70%", "80%", "90%"])
///     .build()?;
/// assert_eq!(question.options().len(), 3);
/// # Ok::<(), agentyard_transport::handoff::InvalidPayload>(())
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct QuestionBuilder {
    pub(super) question_id: Option<String>,
    pub(super) question: Option<String>,
    pub(super) context: Option<String>,
    pub(super) urgency: Option<Urgency>,
    pub(super) options: Vec<String>,
}

impl QuestionBuilder {
    /// Sets `questionId` (required, not blank).
    pub fn question_id(mut self, question_id: impl Into<String>) -> Self {
        self.question_id = Some(question_id.into());
        self
    }

    /// Sets `question` (required, not blank).
    pub fn question(mut self, question: impl Into<String>) -> Self {
        self.question = Some(question.into());
        self
    }

    /// Sets `context`.
    pub fn context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into());
        self
    }

    /// Sets `urgency`.
    pub fn urgency(mut self, urgency: Urgency) -> Self {
        self.urgency = Some(urgency);
        self
    }

    /// Sets `options`, replacing any set before.
    pub fn options<I, S>(mut self, options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options = options.into_iter().map(Into::into).collect();
        self
    }

    /// Checks every rule and returns the payload.
    ///
    /// # Errors
    ///
    /// [`InvalidPayload`] listing every missing or invalid field.
    pub fn build(self) -> Result<Question, InvalidPayload> {
        Problems::run(|problems| self.finish(problems))
    }

    /// Checks the rules, adding to `problems`; `Some` only if `problems` is empty.
    pub(super) fn finish(self, problems: &mut Problems) -> Option<Question> {
        let question_id = problems.required_text("questionId", self.question_id);
        let question = problems.required_text("question", self.question);
        let payload = Question {
            question_id: question_id?,
            question: question?,
            context: self.context,
            urgency: self.urgency,
            options: self.options,
        };
        problems.is_empty().then_some(payload)
    }
}

/// The answer to a question (`payloadType: "answer"`).
///
/// Convert it into a [`HandoffPayload`] to write it.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub(super) question_id: String,
    pub(super) answer: String,
    pub(super) confidence: Option<f64>,
    pub(super) references: Vec<String>,
}

impl Answer {
    /// An empty builder; `questionId` and `answer` are required.
    pub fn builder() -> AnswerBuilder {
        AnswerBuilder::default()
    }

    /// `questionId`: the question this answers.
    pub fn question_id(&self) -> &str {
        &self.question_id
    }

    /// `answer`.
    pub fn answer(&self) -> &str {
        &self.answer
    }

    /// `confidence`: 0.0 to 1.0.
    pub fn confidence(&self) -> Option<f64> {
        self.confidence
    }

    /// `references`: supporting material (empty when absent).
    pub fn references(&self) -> &[String] {
        &self.references
    }
}

/// Builds an [`Answer`], reporting every invalid field at once.
///
/// ```
/// use agentyard_transport::handoff::Answer;
///
/// let answer = Answer::builder().question_id("q-001").answer("80%").confidence(0.9).build()?;
/// assert_eq!(answer.confidence(), Some(0.9));
///
/// let err = Answer::builder().question_id("q-001").answer("80%").confidence(1.5).build();
/// assert_eq!(err.unwrap_err().errors()[0].field, "confidence");
/// # Ok::<(), agentyard_transport::handoff::InvalidPayload>(())
/// ```
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct AnswerBuilder {
    pub(super) question_id: Option<String>,
    pub(super) answer: Option<String>,
    pub(super) confidence: Option<f64>,
    pub(super) references: Vec<String>,
}

impl AnswerBuilder {
    /// Sets `questionId` (required, not blank).
    pub fn question_id(mut self, question_id: impl Into<String>) -> Self {
        self.question_id = Some(question_id.into());
        self
    }

    /// Sets `answer` (required, not blank).
    pub fn answer(mut self, answer: impl Into<String>) -> Self {
        self.answer = Some(answer.into());
        self
    }

    /// Sets `confidence` (0.0 to 1.0 inclusive; NaN is rejected).
    pub fn confidence(mut self, confidence: f64) -> Self {
        self.confidence = Some(confidence);
        self
    }

    /// Sets `references`, replacing any set before.
    pub fn references<I, S>(mut self, references: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.references = references.into_iter().map(Into::into).collect();
        self
    }

    /// Checks every rule and returns the payload.
    ///
    /// # Errors
    ///
    /// [`InvalidPayload`] listing every missing or invalid field.
    pub fn build(self) -> Result<Answer, InvalidPayload> {
        Problems::run(|problems| self.finish(problems))
    }

    /// Checks the rules, adding to `problems`; `Some` only if `problems` is empty.
    pub(super) fn finish(self, problems: &mut Problems) -> Option<Answer> {
        let question_id = problems.required_text("questionId", self.question_id);
        let answer = problems.required_text("answer", self.answer);
        problems.check_confidence("confidence", self.confidence);
        let payload = Answer {
            question_id: question_id?,
            answer: answer?,
            confidence: self.confidence,
            references: self.references,
        };
        problems.is_empty().then_some(payload)
    }
}

/// One handoff payload of any of the four types.
///
/// On the wire it is one JSON object: the payload's fields in camelCase plus
/// `payloadType`. Deserializing runs every rule and fails with all problems at
/// once (through [`HandoffPayload::from_json_value`]), so a value of this type is
/// always valid. Unknown fields are ignored, so that a later minor revision of
/// the extension can add optional fields without breaking older receivers.
///
/// ```
/// use agentyard_transport::handoff::{HandoffPayload, Intent, PayloadType};
///
/// let payload: HandoffPayload = serde_json::from_str(
///     r#"{"payloadType":"question","questionId":"q-001","question":"Which branch?"}"#,
/// )?;
/// assert_eq!(payload.payload_type(), PayloadType::Question);
/// assert_eq!(payload.intent(), Intent::Ask);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "serde_json::Value")]
pub enum HandoffPayload {
    /// `task_delegation`.
    TaskDelegation(TaskDelegation),
    /// `status_report`.
    StatusReport(StatusReport),
    /// `question`.
    Question(Question),
    /// `answer`.
    Answer(Answer),
}

impl HandoffPayload {
    /// The `payloadType` of this payload.
    pub const fn payload_type(&self) -> PayloadType {
        match self {
            HandoffPayload::TaskDelegation(_) => PayloadType::TaskDelegation,
            HandoffPayload::StatusReport(_) => PayloadType::StatusReport,
            HandoffPayload::Question(_) => PayloadType::Question,
            HandoffPayload::Answer(_) => PayloadType::Answer,
        }
    }

    /// The intent of this payload (that of its type).
    pub const fn intent(&self) -> Intent {
        self.payload_type().intent()
    }

    /// The id that ties this payload to the others of its exchange: the `taskId`
    /// of a delegation and of the status reports on it, the `questionId` of a
    /// question and of its answer.
    pub fn subject_id(&self) -> &str {
        match self {
            HandoffPayload::TaskDelegation(task) => task.task_id(),
            HandoffPayload::StatusReport(report) => report.task_id(),
            HandoffPayload::Question(question) => question.question_id(),
            HandoffPayload::Answer(answer) => answer.question_id(),
        }
    }

    /// The payload's natural idempotency key: a resend of the same handoff has
    /// the same key, so a receiver can drop the repeat.
    ///
    /// The key is `payloadType:subject` (the seed's `taskId` / `questionId`),
    /// with the payload type in front so that a question and its answer, or a
    /// delegation and its reports, never collide. A task has one delegation and a
    /// question one answer, but a task has many status reports; so a status
    /// report's key also holds its status and progress
    /// (`status_report:task-001:in_progress:60`). A retry repeats both; a new
    /// report moves at least one of them, or else tells the receiver nothing it
    /// would miss by the repeat being dropped.
    ///
    /// ```
    /// use agentyard_transport::handoff::{HandoffPayload, ReportStatus, StatusReport};
    ///
    /// let report = StatusReport::builder().task_id("task-001").status(ReportStatus::Completed);
    /// let payload = HandoffPayload::from(report.build()?);
    /// assert_eq!(payload.idempotency_key(), "status_report:task-001:completed");
    /// # Ok::<(), agentyard_transport::handoff::InvalidPayload>(())
    /// ```
    pub fn idempotency_key(&self) -> String {
        let mut key = format!("{}:{}", self.payload_type(), self.subject_id());
        if let HandoffPayload::StatusReport(report) = self {
            key.push(':');
            key.push_str(report.status().as_str());
            if let Some(percent) = report.progress_percent() {
                key.push_str(&format!(":{percent}"));
            }
        }
        key
    }
}

impl From<TaskDelegation> for HandoffPayload {
    fn from(payload: TaskDelegation) -> Self {
        HandoffPayload::TaskDelegation(payload)
    }
}

impl From<StatusReport> for HandoffPayload {
    fn from(payload: StatusReport) -> Self {
        HandoffPayload::StatusReport(payload)
    }
}

impl From<Question> for HandoffPayload {
    fn from(payload: Question) -> Self {
        HandoffPayload::Question(payload)
    }
}

impl From<Answer> for HandoffPayload {
    fn from(payload: Answer) -> Self {
        HandoffPayload::Answer(payload)
    }
}
