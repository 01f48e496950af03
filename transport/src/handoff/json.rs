//! Reading payloads from JSON: strictly (all problems as an error) or, for
//! untyped input, with a fallback to free text.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::payload::{
    AnswerBuilder, HandoffPayload, Intent, PayloadType, QuestionBuilder, StatusReportBuilder,
    TaskDelegationBuilder, WireEnum,
};
use super::validate::{
    CONFIDENCE_PROBLEM, FieldError, InvalidPayload, PERCENT_PROBLEM, Problems, ROOT,
};

/// The discriminator's key, as agentyard writes it.
pub(super) const PAYLOAD_TYPE: &str = "payloadType";

/// The discriminator's key as the seed writes it; accepted on input.
pub(super) const SEED_TYPE: &str = "type";

impl HandoffPayload {
    /// Reads a payload from its wire JSON object, checking every rule.
    ///
    /// `null` counts as absent for optional fields; unknown fields are ignored.
    ///
    /// # Errors
    ///
    /// [`InvalidPayload`] listing every missing or invalid field. When
    /// `payloadType` itself is missing or unknown it is the only error, since the
    /// type decides which other fields are required.
    pub fn from_json_value(value: &Value) -> Result<HandoffPayload, InvalidPayload> {
        let Some(object) = value.as_object() else {
            return Err(InvalidPayload::one(ROOT, "must be a JSON object"));
        };
        let payload_type = read_payload_type(object)?;
        let mut problems = Problems::default();
        let mut read = Reader {
            object,
            problems: &mut problems,
        };
        // Each arm reads the fields in wire order; that order is also the order in
        // which problems are reported.
        let (payload, order): (_, &[&str]) = match payload_type {
            PayloadType::TaskDelegation => (
                TaskDelegationBuilder {
                    task_id: read.string("taskId"),
                    task_title: read.string("taskTitle"),
                    task_description: read.string("taskDescription"),
                    context: read.string("context"),
                    deadline: read.deadline("deadline"),
                    priority: read.wire_enum("priority"),
                    acceptance_criteria: read.strings("acceptanceCriteria"),
                }
                .finish(&mut problems)
                .map(HandoffPayload::from),
                &[
                    "taskId",
                    "taskTitle",
                    "taskDescription",
                    "context",
                    "deadline",
                    "priority",
                    "acceptanceCriteria",
                ],
            ),
            PayloadType::StatusReport => (
                StatusReportBuilder {
                    task_id: read.string("taskId"),
                    status: read.wire_enum("status"),
                    completed_work: read.string("completedWork"),
                    remaining_work: read.string("remainingWork"),
                    blockers: read.strings("blockers"),
                    progress_percent: read.percent("progressPercent"),
                    artifacts: read.strings("artifacts"),
                }
                .finish(&mut problems)
                .map(HandoffPayload::from),
                &[
                    "taskId",
                    "status",
                    "completedWork",
                    "remainingWork",
                    "blockers",
                    "progressPercent",
                    "artifacts",
                ],
            ),
            PayloadType::Question => (
                QuestionBuilder {
                    question_id: read.string("questionId"),
                    question: read.string("question"),
                    context: read.string("context"),
                    urgency: read.wire_enum("urgency"),
                    options: read.strings("options"),
                }
                .finish(&mut problems)
                .map(HandoffPayload::from),
                &["questionId", "question", "context", "urgency", "options"],
            ),
            PayloadType::Answer => (
                AnswerBuilder {
                    question_id: read.string("questionId"),
                    answer: read.string("answer"),
                    confidence: read.confidence("confidence"),
                    references: read.strings("references"),
                }
                .finish(&mut problems)
                .map(HandoffPayload::from),
                &["questionId", "answer", "confidence", "references"],
            ),
        };
        problems.sort_by_field_order(order);
        problems.into_result(payload)
    }
}

impl HandoffPayload {
    /// The payload as its wire JSON object: `payloadType` first, then the set
    /// fields in camelCase; absent optional fields and empty lists are left out.
    pub fn to_json_object(&self) -> Map<String, Value> {
        let mut out = Writer(Map::new());
        out.string(PAYLOAD_TYPE, self.payload_type().as_str());
        match self {
            HandoffPayload::TaskDelegation(task) => {
                out.string("taskId", &task.task_id);
                out.string("taskTitle", &task.task_title);
                out.string("taskDescription", &task.task_description);
                out.optional("context", task.context.as_deref());
                out.optional("deadline", task.deadline_rfc3339());
                out.optional("priority", task.priority.map(|p| p.as_str()));
                out.strings("acceptanceCriteria", &task.acceptance_criteria);
            }
            HandoffPayload::StatusReport(report) => {
                out.string("taskId", &report.task_id);
                out.string("status", report.status.as_str());
                out.optional("completedWork", report.completed_work.as_deref());
                out.optional("remainingWork", report.remaining_work.as_deref());
                out.strings("blockers", &report.blockers);
                out.optional("progressPercent", report.progress_percent);
                out.strings("artifacts", &report.artifacts);
            }
            HandoffPayload::Question(question) => {
                out.string("questionId", &question.question_id);
                out.string("question", &question.question);
                out.optional("context", question.context.as_deref());
                out.optional("urgency", question.urgency.map(|u| u.as_str()));
                out.strings("options", &question.options);
            }
            HandoffPayload::Answer(answer) => {
                out.string("questionId", &answer.question_id);
                out.string("answer", &answer.answer);
                out.optional("confidence", answer.confidence);
                out.strings("references", &answer.references);
            }
        }
        out.0
    }

    /// [`to_json_object`](Self::to_json_object) as a [`Value`].
    pub fn to_json_value(&self) -> Value {
        Value::Object(self.to_json_object())
    }
}

impl Serialize for HandoffPayload {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json_object().serialize(serializer)
    }
}

/// Builds a wire object. Infallible: every value was checked when the payload
/// was built (the deadline even keeps its RFC 3339 text).
struct Writer(Map<String, Value>);

impl Writer {
    fn string(&mut self, key: &str, value: &str) {
        self.0.insert(key.to_owned(), Value::from(value));
    }

    fn optional(&mut self, key: &str, value: Option<impl Into<Value>>) {
        if let Some(value) = value {
            self.0.insert(key.to_owned(), value.into());
        }
    }

    fn strings(&mut self, key: &str, values: &[String]) {
        if !values.is_empty() {
            self.0.insert(key.to_owned(), Value::from(values.to_vec()));
        }
    }
}

impl TryFrom<Value> for HandoffPayload {
    type Error = InvalidPayload;

    fn try_from(value: Value) -> Result<Self, Self::Error> {
        HandoffPayload::from_json_value(&value)
    }
}

/// Reads the discriminator: `payloadType`, or `type` as the seed writes it. Both
/// may be given only if they say the same.
fn read_payload_type(object: &Map<String, Value>) -> Result<PayloadType, InvalidPayload> {
    match (object.get(PAYLOAD_TYPE), object.get(SEED_TYPE)) {
        (None, None) => Err(InvalidPayload::one(
            PAYLOAD_TYPE,
            "is required (the seed's `type` is accepted too)",
        )),
        (Some(value), None) => wire_payload_type(PAYLOAD_TYPE, value),
        (None, Some(value)) => wire_payload_type(SEED_TYPE, value),
        (Some(ours), Some(seeds)) if ours == seeds => wire_payload_type(PAYLOAD_TYPE, ours),
        (Some(ours), Some(seeds)) => Err(InvalidPayload::one(
            PAYLOAD_TYPE,
            format!(
                "`payloadType` is {ours} but `type` is {seeds}; give one of them, or both the same"
            ),
        )),
    }
}

/// The payload type a discriminator's value names; `key` is where it was read.
fn wire_payload_type(key: &str, value: &Value) -> Result<PayloadType, InvalidPayload> {
    let Value::String(wire) = value else {
        return Err(InvalidPayload::one(key, "must be a string"));
    };
    PayloadType::from_wire(wire).ok_or_else(|| {
        InvalidPayload::one(
            key,
            format!(
                "unknown payload type `{wire}`; expected one of {}",
                PayloadType::expected()
            ),
        )
    })
}

/// The payload type named by a `type` key, as in the seed. A `type` naming no
/// payload type is someone else's JSON, not a payload (unless `payloadType` says
/// it is one).
fn seed_style_type(object: &Map<String, Value>) -> Option<&str> {
    object
        .get(SEED_TYPE)
        .and_then(Value::as_str)
        .filter(|wire| PayloadType::from_wire(wire).is_some())
}

/// Reads fields of one JSON object, noting a problem for each field of the wrong
/// JSON type and leaving it out, so that the builder's rules see only what could
/// be read.
struct Reader<'a> {
    object: &'a Map<String, Value>,
    problems: &'a mut Problems,
}

impl<'a> Reader<'a> {
    /// The field's value; `null` counts as absent.
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.object.get(key).filter(|value| !value.is_null())
    }

    fn string(&mut self, key: &str) -> Option<String> {
        match self.get(key)? {
            Value::String(text) => Some(text.clone()),
            _ => {
                self.problems.push(key, "must be a string");
                None
            }
        }
    }

    fn strings(&mut self, key: &str) -> Vec<String> {
        let Some(value) = self.get(key) else {
            return Vec::new();
        };
        let Value::Array(items) = value else {
            self.problems.push(key, "must be an array of strings");
            return Vec::new();
        };
        let mut strings = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match item {
                Value::String(text) => strings.push(text.clone()),
                _ => self
                    .problems
                    .push(format!("{key}[{index}]"), "must be a string"),
            }
        }
        strings
    }

    fn wire_enum<T: WireEnum>(&mut self, key: &str) -> Option<T> {
        let value = self.get(key)?;
        let parsed = value.as_str().and_then(T::from_wire);
        if parsed.is_none() {
            self.problems
                .push(key, format!("must be one of {}", T::expected()));
        }
        parsed
    }

    fn deadline(&mut self, key: &str) -> Option<OffsetDateTime> {
        let value = self.get(key)?;
        let parsed = value
            .as_str()
            .and_then(|text| OffsetDateTime::parse(text, &Rfc3339).ok());
        if parsed.is_none() {
            self.problems.push(
                key,
                "must be an RFC 3339 time such as 2026-03-06T18:00:00+09:00",
            );
        }
        parsed
    }

    /// A whole number from 0 to 255 (the builder checks the upper bound of 100);
    /// `50.0` counts as whole.
    fn percent(&mut self, key: &str) -> Option<u8> {
        let value = self.get(key)?;
        let parsed = value.as_f64().and_then(|number| {
            let whole = number.fract() == 0.0 && (0.0..=f64::from(u8::MAX)).contains(&number);
            // In range and whole, so the cast is exact.
            whole.then_some(number as u8)
        });
        if parsed.is_none() {
            self.problems.push(key, PERCENT_PROBLEM);
        }
        parsed
    }

    fn confidence(&mut self, key: &str) -> Option<f64> {
        let value = self.get(key)?;
        let parsed = value.as_f64();
        if parsed.is_none() {
            self.problems.push(key, CONFIDENCE_PROBLEM);
        }
        parsed
    }
}

/// What [`parse_payload_json`] made of a piece of text.
#[derive(Debug, Clone, PartialEq)]
pub enum ParsedPayload {
    /// The text was a valid payload.
    Structured(HandoffPayload),
    /// The text is to be treated as free text (the seed's backward-compatible
    /// path): it was not JSON, was JSON but not meant as a payload (no
    /// `payloadType`), or was a payload that broke rules. In the last case
    /// `problems` lists them, so that the caller can raise a warning event.
    FreeText {
        /// The original text, unchanged.
        text: String,
        /// Why a payload was rejected; empty when the text never claimed to be one.
        problems: Vec<FieldError>,
    },
}

impl ParsedPayload {
    /// The payload, if the text was one.
    pub fn payload(&self) -> Option<&HandoffPayload> {
        match self {
            ParsedPayload::Structured(payload) => Some(payload),
            ParsedPayload::FreeText { .. } => None,
        }
    }

    /// The payload, by value.
    pub fn into_payload(self) -> Option<HandoffPayload> {
        match self {
            ParsedPayload::Structured(payload) => Some(payload),
            ParsedPayload::FreeText { .. } => None,
        }
    }

    /// The payload's type, for events (`payloadType` is absent for free text).
    pub fn payload_type(&self) -> Option<PayloadType> {
        self.payload().map(HandoffPayload::payload_type)
    }

    /// The intent taken from the payload; `None` for free text, which goes to
    /// the caller's free-text classifier as in the seed.
    pub fn intent(&self) -> Option<Intent> {
        self.payload().map(HandoffPayload::intent)
    }

    /// Why a payload was rejected (empty for a payload and for plain free text).
    pub fn problems(&self) -> &[FieldError] {
        match self {
            ParsedPayload::Structured(_) => &[],
            ParsedPayload::FreeText { problems, .. } => problems,
        }
    }
}

/// Reads an untyped payload string (the seed's `payloadJson`), never failing.
///
/// - not JSON, or JSON other than an object with a `payloadType` key or a
///   seed-style `type` key naming a payload type: free text with no problems;
/// - such an object that breaks rules (or whose `type` and `payloadType`
///   disagree): free text with every problem;
/// - otherwise the payload.
///
/// ```
/// use agentyard_transport::handoff::{ParsedPayload, PayloadType, parse_payload_json};
///
/// let parsed = parse_payload_json(r#"{"payloadType":"answer","questionId":"q-1","answer":"yes"}"#);
/// assert_eq!(parsed.payload_type(), Some(PayloadType::Answer));
///
/// // The seed's own discriminator works too.
/// let parsed = parse_payload_json(r#"{"type":"question","questionId":"q-2","question":"which?"}"#);
/// assert_eq!(parsed.payload_type(), Some(PayloadType::Question));
///
/// let parsed = parse_payload_json("please look at PR #42");
/// assert_eq!(parsed, ParsedPayload::FreeText { text: "please look at PR #42".into(), problems: vec![] });
///
/// let parsed = parse_payload_json(r#"{"payloadType":"answer","questionId":"q-1"}"#);
/// assert_eq!(parsed.problems()[0].to_string(), "answer: is required");
/// ```
pub fn parse_payload_json(text: &str) -> ParsedPayload {
    let free_text = |problems| ParsedPayload::FreeText {
        text: text.to_owned(),
        problems,
    };
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return free_text(Vec::new());
    };
    let claims_to_be_payload = value.as_object().is_some_and(|object| {
        object.contains_key(PAYLOAD_TYPE) || seed_style_type(object).is_some()
    });
    if !claims_to_be_payload {
        return free_text(Vec::new());
    }
    match HandoffPayload::from_json_value(&value) {
        Ok(payload) => ParsedPayload::Structured(payload),
        Err(invalid) => free_text(invalid.into_errors()),
    }
}
