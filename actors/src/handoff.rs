//! How the supervisor reads the typed handoff payload of a send.
//!
//! Three ways a payload can arrive, as DESIGN.md and the handoff seed require:
//!
//! - **typed API** (`SendRequest::payload`): attached to the message as the handoff
//!   data part; it was validated when it was built;
//! - **the handoff data part** on the message (an A2A client that activated the
//!   extension): decoded and validated; an invalid one refuses the send with an error
//!   naming every bad field;
//! - **an untyped JSON string** as the message's only text part: parsed; if it is not a
//!   valid payload the message travels as free text and a `a2a.payload.fallback`
//!   warning event lists the problems.

use agentyard_transport::a2a::{Message, Part};
use agentyard_transport::handoff::{self, HandoffPayload, ParsedPayload, PayloadType};

use crate::error::{Error, Result};
use crate::supervisor::SendRequest;

/// What the supervisor learned about a send's payload.
#[derive(Debug, Default)]
pub(crate) struct Handoff {
    /// The typed payload, for the agent.
    pub(crate) payload: Option<HandoffPayload>,
    /// Its type, for policy and events (kept after `payload` is handed over).
    pub(crate) payload_type: Option<PayloadType>,
    /// Its natural idempotency key (taskId / questionId).
    key: Option<String>,
    /// What was wrong with a text part that looked like a payload.
    pub(crate) fallback_problems: Option<String>,
}

impl Handoff {
    fn typed(payload: HandoffPayload) -> Self {
        Self {
            payload_type: Some(payload.payload_type()),
            key: Some(payload.idempotency_key()),
            payload: Some(payload),
            fallback_problems: None,
        }
    }

    /// Validates the message, attaches a typed payload, and reads the payload the
    /// message carries.
    pub(crate) fn prepare(request: &mut SendRequest) -> Result<Self> {
        if request.message.parts.is_empty() {
            return Err(Error::InvalidMessage(String::from(
                "`message.parts` is empty: a message needs at least one part",
            )));
        }
        if let Some(payload) = request.payload.take() {
            handoff::attach_to_message(&mut request.message, &payload);
            return Ok(Self::typed(payload));
        }
        match handoff::payload_from_message(&request.message) {
            Some(Ok(payload)) => Ok(Self::typed(payload)),
            Some(Err(invalid)) => Err(Error::InvalidMessage(format!(
                "the handoff payload in `message.parts` is invalid: {invalid}"
            ))),
            None => Ok(Self::from_text(&request.message)),
        }
    }

    /// Reads the payload without validating or changing anything (for dry runs).
    pub(crate) fn inspect(message: &Message, payload: Option<&HandoffPayload>) -> Self {
        if let Some(payload) = payload {
            return Self::typed(payload.clone());
        }
        match handoff::payload_from_message(message) {
            Some(Ok(payload)) => Self::typed(payload),
            Some(Err(_)) => Self::default(),
            None => Self::from_text(message),
        }
    }

    /// The untyped path: a lone text part holding a JSON payload.
    fn from_text(message: &Message) -> Self {
        let [Part::Text(text)] = message.parts.as_slice() else {
            return Self::default();
        };
        // Cheap pre-check so ordinary prose never reaches the JSON parser.
        if !text.text.trim_start().starts_with('{') {
            return Self::default();
        }
        match handoff::parse_payload_json(&text.text) {
            ParsedPayload::Structured(payload) => Self::typed(payload),
            fallback => {
                let problems = fallback.problems();
                if problems.is_empty() {
                    Self::default()
                } else {
                    Self {
                        fallback_problems: Some(
                            problems
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join("; "),
                        ),
                        ..Self::default()
                    }
                }
            }
        }
    }

    /// The payload's own id, used as the idempotency key when the send has none.
    pub(crate) fn natural_key(&self) -> Option<String> {
        self.key.clone()
    }
}
