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
//!
//! Whichever way it came, the payload as received is kept as `payloadJson` for the
//! send's events. A send without a valid payload is free text: the runtime's intent
//! classifier, if it has one, says what it means (see [`crate::intent`]).

use std::sync::Arc;

use agentyard_transport::a2a::{Message, Part};
use agentyard_transport::handoff::{
    self, HANDOFF_EXTENSION_URI, HandoffPayload, Intent, ParsedPayload, PayloadType,
};

use crate::error::{Error, Result};
use crate::send::SendRequest;

#[cfg(test)]
mod tests;

/// What the supervisor learned about a send's payload.
///
/// Its rare parts are boxed: a send's futures and its work hold it (some twice), and
/// every byte of them is copied as each future is moved into the one awaiting it.
#[derive(Debug, Default)]
pub(crate) struct Handoff {
    /// The typed payload, for the agent.
    pub(crate) payload: Option<Box<HandoffPayload>>,
    /// Its type, for policy and events (kept after `payload` is handed over).
    pub(crate) payload_type: Option<PayloadType>,
    /// The payload as received, for events (`payloadJson`).
    pub(crate) payload_json: Option<Arc<str>>,
    /// The intent: the payload type's, or the classifier's for free text.
    pub(crate) intent: Option<Intent>,
    /// Its natural idempotency key (taskId / questionId).
    key: Option<String>,
    /// What was wrong with a text part that looked like a payload, and that text.
    pub(crate) fallback: Option<Box<Fallback>>,
}

/// A text part that claimed to be a payload and was not a valid one.
#[derive(Debug)]
pub(crate) struct Fallback {
    /// The text, for the warning event's `payloadJson`.
    pub(crate) text: Arc<str>,
    /// Every problem, joined with "; ".
    pub(crate) problems: String,
}

impl Handoff {
    fn typed(payload: Box<HandoffPayload>, payload_json: Option<Arc<str>>) -> Self {
        Self {
            payload_type: Some(payload.payload_type()),
            intent: Some(payload.intent()),
            key: Some(payload.idempotency_key()),
            payload: Some(payload),
            payload_json,
            fallback: None,
        }
    }

    /// Whether the message is free text (no valid payload), the case the intent
    /// classifier is for.
    pub(crate) fn is_free_text(&self) -> bool {
        self.payload_type.is_none()
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
            let json = serde_json::to_string(&payload).ok().map(Arc::from);
            return Ok(Self::typed(Box::new(payload), json));
        }
        let read = match request.read_payload.take() {
            Some(payload) => Some(Ok(payload)),
            None => handoff::payload_from_message(&request.message).map(|read| read.map(Box::new)),
        };
        match read {
            Some(Ok(payload)) => {
                let json = raw_data_part(&request.message).map(Arc::from);
                Ok(Self::typed(payload, json))
            }
            Some(Err(invalid)) => Err(Error::InvalidMessage(format!(
                "the handoff payload in `message.parts` is invalid: {invalid}"
            ))),
            None => Ok(Self::from_text(&request.message)),
        }
    }

    /// Reads the payload without validating or changing anything (for dry runs).
    pub(crate) fn inspect(message: &Message, payload: Option<&HandoffPayload>) -> Self {
        if let Some(payload) = payload {
            return Self::typed(Box::new(payload.clone()), None);
        }
        match handoff::payload_from_message(message) {
            Some(Ok(payload)) => Self::typed(Box::new(payload), None),
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
            ParsedPayload::Structured(payload) => {
                Self::typed(Box::new(payload), Some(Arc::from(text.text.as_str())))
            }
            fallback => {
                let problems = fallback.problems();
                if problems.is_empty() {
                    Self::default()
                } else {
                    Self {
                        fallback: Some(Box::new(Fallback {
                            text: Arc::from(text.text.as_str()),
                            problems: problems
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join("; "),
                        })),
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

/// The JSON of a message's handoff data part (the part marked with the extension's
/// URI), as received; `None` without one.
pub(crate) fn raw_data_part(message: &Message) -> Option<String> {
    message.parts.iter().find_map(|part| match part {
        Part::Data(data)
            if data
                .metadata
                .as_ref()
                .is_some_and(|m| m.contains_key(HANDOFF_EXTENSION_URI)) =>
        {
            serde_json::to_string(&data.data).ok()
        }
        Part::Text(_) | Part::File(_) | Part::Data(_) => None,
    })
}
