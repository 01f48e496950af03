//! How a payload rides in an A2A [`Message`]: a [`DataPart`] beside the
//! free-text [`TextPart`](crate::a2a::TextPart), marked in its metadata with the
//! extension URI (the wire format is described in the [module docs](super)).

use serde_json::{Map, Value};

use super::json::PAYLOAD_TYPE;
use super::payload::{HandoffPayload, PayloadType};
use super::validate::{FieldError, InvalidPayload};
use crate::a2a::{DataPart, Message, Metadata, Part, Role};

/// The handoff extension, version 1: declared in the agent card
/// (`capabilities.extensions`), activated with the `X-A2A-Extensions` header,
/// listed in a carrying message's `extensions`, and the metadata key that marks
/// the payload's data part.
///
/// The version is in the URI, as the A2A extension guide recommends: an
/// incompatible change gets a new URI (`.../v2`), so a v1 receiver never
/// misreads a v2 payload; compatible additions (new optional fields) stay v1,
/// which is why receivers ignore unknown fields.
pub const HANDOFF_EXTENSION_URI: &str = "https://agentyard.dev/extensions/handoff/v1";

impl HandoffPayload {
    /// The data part that carries this payload: `data` is the payload object
    /// (with `payloadType`), `metadata` is
    /// `{"https://agentyard.dev/extensions/handoff/v1": {"payloadType": "..."}}`.
    pub fn to_data_part(&self) -> DataPart {
        let mut marker = Map::new();
        marker.insert(
            PAYLOAD_TYPE.to_owned(),
            Value::from(self.payload_type().as_str()),
        );
        let mut metadata = Metadata::new();
        metadata.insert(HANDOFF_EXTENSION_URI.to_owned(), Value::Object(marker));
        DataPart {
            data: self.to_json_object(),
            metadata: Some(metadata),
        }
    }
}

/// A message from `role` with the free text `text` and `payload` beside it
/// (parts: the text, then the payload's data part), with a fresh message id.
///
/// The text is what a receiver that does not know the extension acts on; with
/// nothing else to say, [`HandoffPayload::summary`] is a fair choice.
///
/// ```
/// use agentyard_transport::a2a::Role;
/// use agentyard_transport::handoff::{self, HandoffPayload, Question};
///
/// let question = Question::builder().question_id("q-001").question("Which branch?").build()?;
/// let payload = HandoffPayload::from(question);
/// let message = handoff::into_message(Role::User, "Which branch should I use?", &payload);
/// assert_eq!(message.text(), "Which branch should I use?");
/// assert_eq!(handoff::payload_from_message(&message), Some(Ok(payload)));
/// # Ok::<(), handoff::InvalidPayload>(())
/// ```
pub fn into_message(role: Role, text: impl Into<String>, payload: &HandoffPayload) -> Message {
    let mut message = Message::new(role, vec![Part::text(text)]);
    attach_to_message(&mut message, payload);
    message
}

/// Puts `payload` into `message`: replaces the message's handoff part if it has
/// one (a message carries at most one payload), else appends one; and lists
/// [`HANDOFF_EXTENSION_URI`] in the message's `extensions`.
pub fn attach_to_message(message: &mut Message, payload: &HandoffPayload) {
    let part = Part::Data(payload.to_data_part());
    match message.parts.iter().position(is_handoff_part) {
        Some(index) => message.parts[index] = part,
        None => message.parts.push(part),
    }
    // Only one handoff part may remain; an earlier duplicate was the caller's
    // mistake, and keeping it would make the message unreadable.
    let mut seen = false;
    message.parts.retain(|part| {
        let keep = !(is_handoff_part(part) && seen);
        seen |= is_handoff_part(part);
        keep
    });
    let extensions = message.extensions.get_or_insert_with(Vec::new);
    if !extensions.iter().any(|uri| uri == HANDOFF_EXTENSION_URI) {
        extensions.push(HANDOFF_EXTENSION_URI.to_owned());
    }
}

/// The payload a message carries: `None` when it has no handoff part (a plain
/// free-text message), else the payload or every reason it cannot be read.
///
/// The handoff part is the data part whose metadata has the key
/// [`HANDOFF_EXTENSION_URI`]; the message's `extensions` list is not consulted,
/// so a sender that forgets it still gets through. Error fields are JSON paths
/// from the message: `parts[1].data.confidence`.
///
/// # Errors
///
/// Inside the `Some`: [`InvalidPayload`] when the message has more than one
/// handoff part, when the marker is not `{"payloadType": <string>}`, when it
/// names another type than the data, or when the data breaks any payload rule.
pub fn payload_from_message(message: &Message) -> Option<Result<HandoffPayload, InvalidPayload>> {
    let mut handoff_parts =
        message
            .parts
            .iter()
            .enumerate()
            .filter_map(|(index, part)| match part {
                Part::Data(data) => marker(data).map(|marker| (index, data, marker)),
                Part::Text(_) | Part::File(_) => None,
            });
    let (index, data, marker) = handoff_parts.next()?;
    let others: Vec<_> = handoff_parts
        .map(|(index, ..)| format!("parts[{index}]"))
        .collect();
    if !others.is_empty() {
        return Some(Err(InvalidPayload::one(
            "parts",
            format!(
                "a message carries at most one handoff part; found parts[{index}], {}",
                others.join(", ")
            ),
        )));
    }
    Some(read_part(index, data, marker))
}

/// Reads the handoff part at `parts[index]`, reporting problems of the marker
/// and of the data together.
fn read_part(
    index: usize,
    data: &DataPart,
    marker: &Value,
) -> Result<HandoffPayload, InvalidPayload> {
    let marker_path = format!("parts[{index}].metadata[\"{HANDOFF_EXTENSION_URI}\"]");
    let type_path = format!("{marker_path}.{PAYLOAD_TYPE}");
    let marked_type = match (marker.is_object(), marker.get(PAYLOAD_TYPE)) {
        (false, _) => Err(FieldError::new(
            &marker_path,
            "must be an object with `payloadType`",
        )),
        (true, None) => Err(FieldError::new(&type_path, "is required")),
        (true, Some(Value::String(wire))) => PayloadType::from_wire(wire)
            .ok_or_else(|| FieldError::new(&type_path, format!("unknown payload type `{wire}`"))),
        (true, Some(_)) => Err(FieldError::new(&type_path, "must be a string")),
    };
    let payload = HandoffPayload::from_json_value(&Value::Object(data.data.clone()))
        .map_err(|invalid| invalid.under(&format!("parts[{index}].data")));
    let mut errors = Vec::new();
    match (marked_type, payload) {
        (Ok(marked), Ok(payload)) if marked == payload.payload_type() => return Ok(payload),
        (Ok(marked), Ok(payload)) => errors.push(FieldError::new(
            &type_path,
            format!(
                "says `{marked}` but the data is a `{}` payload",
                payload.payload_type()
            ),
        )),
        (marked, payload) => {
            errors.extend(marked.err());
            errors.extend(
                payload
                    .err()
                    .map(InvalidPayload::into_errors)
                    .unwrap_or_default(),
            );
        }
    }
    Err(InvalidPayload::from_errors(errors))
}

/// The handoff marker of a data part, if it has one.
fn marker(part: &DataPart) -> Option<&Value> {
    part.metadata.as_ref()?.get(HANDOFF_EXTENSION_URI)
}

/// Whether `part` is a handoff part.
fn is_handoff_part(part: &Part) -> bool {
    matches!(part, Part::Data(data) if marker(data).is_some())
}
