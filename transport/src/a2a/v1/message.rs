//! 1.0 messages and parts, and their conversions to the internal model.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::convert::{ConversionError, is_empty, proto_enum, some_string, some_vec};
use crate::a2a::{self, Metadata};
use crate::ids::{ContextId, MessageId, TaskId};

/// The part-metadata key that marks a 0.3 data part as the wrapper of a
/// non-object 1.0 `data` value (`{"value": …}`); its value is `true`.
///
/// 0.3 data parts hold objects only, 1.0 ones any JSON value. The key is the
/// one the Python SDK's compat layer writes, so its peers unwrap our parts and
/// we unwrap theirs.
pub const DATA_VALUE_WRAPPED: &str = "data_part_compat";

proto_enum! {
    /// Who sent a [`Message`] (proto `Role`).
    pub enum Role ("Role") {
        /// `ROLE_UNSPECIFIED`: has no internal form.
        Unspecified = 0 => "ROLE_UNSPECIFIED",
        /// `ROLE_USER`: the client.
        User = 1 => "ROLE_USER",
        /// `ROLE_AGENT`: the agent.
        Agent = 2 => "ROLE_AGENT",
    }
}

impl From<a2a::Role> for Role {
    fn from(role: a2a::Role) -> Self {
        match role {
            a2a::Role::User => Self::User,
            a2a::Role::Agent => Self::Agent,
        }
    }
}

impl TryFrom<Role> for a2a::Role {
    type Error = ConversionError;

    fn try_from(role: Role) -> Result<Self, ConversionError> {
        match role {
            Role::User => Ok(Self::User),
            Role::Agent => Ok(Self::Agent),
            Role::Unspecified => Err(ConversionError::new(
                "Message.role",
                "ROLE_UNSPECIFIED names no sender; expected ROLE_USER or ROLE_AGENT",
            )),
        }
    }
}

/// The content of a [`Part`]: the proto's `content` oneof, written as
/// whichever member is present.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PartContent {
    /// `text`.
    Text(String),
    /// `raw`: the bytes, base64 as on the wire (not decoded here).
    Raw(String),
    /// `url`: where the file lives.
    Url(String),
    /// `data`: any JSON value (a `google.protobuf.Value`).
    Data(Value),
}

/// The smallest unit of content (proto `Part`): one of text, raw bytes, a
/// URL or structured data, with optional `mediaType`, `filename` and
/// `metadata` on every kind.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// The content.
    #[serde(flatten)]
    pub content: PartContent,
    /// Optional metadata for this part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// An optional file name, e.g. `"document.pdf"`.
    #[serde(skip_serializing_if = "is_empty")]
    pub filename: String,
    /// The MIME type, e.g. `"text/plain"`.
    #[serde(skip_serializing_if = "is_empty")]
    #[serde(alias = "media_type")]
    pub media_type: String,
}

impl Part {
    /// A part with `content` and nothing else.
    #[must_use]
    pub fn new(content: PartContent) -> Self {
        Self {
            content,
            metadata: None,
            filename: String::new(),
            media_type: String::new(),
        }
    }
}

// Read through one struct holding every member, then checked: exactly one
// member of the oneof must be present. `data: null` is a present null value
// (a `google.protobuf.Value`), not an absent member.
impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;

        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", expecting = "a Part object")]
        struct Wire {
            #[serde(default)]
            text: Option<String>,
            #[serde(default)]
            raw: Option<String>,
            #[serde(default)]
            url: Option<String>,
            #[serde(default, deserialize_with = "present")]
            data: Option<Value>,
            #[serde(default)]
            metadata: Option<Metadata>,
            #[serde(default)]
            filename: Option<String>,
            #[serde(default)]
            #[serde(alias = "media_type")]
            media_type: Option<String>,
        }

        let wire = Wire::deserialize(deserializer)?;
        let mut found = [
            wire.text.map(PartContent::Text),
            wire.raw.map(PartContent::Raw),
            wire.url.map(PartContent::Url),
            wire.data.map(PartContent::Data),
        ]
        .into_iter()
        .flatten();
        let content = found.next().ok_or_else(|| {
            D::Error::custom("a Part needs one of `text`, `raw`, `url` or `data`: none is present")
        })?;
        if found.next().is_some() {
            return Err(D::Error::custom(
                "a Part holds one of `text`, `raw`, `url` or `data`, not several",
            ));
        }
        Ok(Self {
            content,
            metadata: wire.metadata,
            filename: wire.filename.unwrap_or_default(),
            media_type: wire.media_type.unwrap_or_default(),
        })
    }
}

/// Reads a member that is present, even as `null`, as `Some`.
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

impl From<a2a::Part> for Part {
    fn from(part: a2a::Part) -> Self {
        match part {
            a2a::Part::Text(a2a::TextPart { text, metadata }) => Self {
                metadata,
                ..Self::new(PartContent::Text(text))
            },
            a2a::Part::File(a2a::FilePart { file, metadata }) => {
                let (content, name, mime_type) = match file {
                    a2a::FileContent::Bytes(a2a::FileWithBytes {
                        bytes,
                        name,
                        mime_type,
                    }) => (PartContent::Raw(bytes), name, mime_type),
                    a2a::FileContent::Uri(a2a::FileWithUri {
                        uri,
                        name,
                        mime_type,
                    }) => (PartContent::Url(uri), name, mime_type),
                };
                Self {
                    content,
                    metadata,
                    filename: name.unwrap_or_default(),
                    media_type: mime_type.unwrap_or_default(),
                }
            }
            a2a::Part::Data(a2a::DataPart { data, metadata }) => {
                let (data, metadata) = unwrap_data(data, metadata);
                Self {
                    metadata,
                    ..Self::new(PartContent::Data(data))
                }
            }
        }
    }
}

/// A 0.3 data part back to its 1.0 value: a `{"value": …}` wrapper marked
/// with [`DATA_VALUE_WRAPPED`] gives up its value and its mark.
fn unwrap_data(
    mut data: Map<String, Value>,
    metadata: Option<Metadata>,
) -> (Value, Option<Metadata>) {
    let Some(mut metadata) = metadata else {
        return (Value::Object(data), None);
    };
    let wrapped = metadata.get(DATA_VALUE_WRAPPED) == Some(&Value::Bool(true))
        && data.len() == 1
        && data.contains_key("value");
    if !wrapped {
        return (Value::Object(data), Some(metadata));
    }
    metadata.remove(DATA_VALUE_WRAPPED);
    let value = data.remove("value").unwrap_or(Value::Null);
    (value, (!metadata.is_empty()).then_some(metadata))
}

impl From<Part> for a2a::Part {
    /// Lossy where 0.3 has no room: `mediaType` and `filename` of a text or
    /// data part are dropped, and a non-object `data` value is wrapped (see
    /// the module table).
    fn from(part: Part) -> Self {
        let Part {
            content,
            metadata,
            filename,
            media_type,
        } = part;
        match content {
            PartContent::Text(text) => Self::Text(a2a::TextPart { text, metadata }),
            PartContent::Raw(bytes) => Self::File(a2a::FilePart {
                file: a2a::FileContent::Bytes(a2a::FileWithBytes {
                    bytes,
                    name: some_string(filename),
                    mime_type: some_string(media_type),
                }),
                metadata,
            }),
            PartContent::Url(uri) => Self::File(a2a::FilePart {
                file: a2a::FileContent::Uri(a2a::FileWithUri {
                    uri,
                    name: some_string(filename),
                    mime_type: some_string(media_type),
                }),
                metadata,
            }),
            PartContent::Data(Value::Object(data)) => Self::Data(a2a::DataPart { data, metadata }),
            PartContent::Data(value) => {
                let mut metadata = metadata.unwrap_or_default();
                metadata.insert(DATA_VALUE_WRAPPED.to_owned(), Value::Bool(true));
                let mut data = Map::new();
                data.insert("value".to_owned(), value);
                Self::Data(a2a::DataPart {
                    data,
                    metadata: Some(metadata),
                })
            }
        }
    }
}

/// One turn of the conversation (proto `Message`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a Message object")]
pub struct Message {
    /// Chosen by the sender, typically a uuid.
    #[serde(alias = "message_id")]
    pub message_id: MessageId,
    /// The conversation this message belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "context_id")]
    pub context_id: Option<ContextId>,
    /// The task this message belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "task_id")]
    pub task_id: Option<TaskId>,
    /// Who sent it.
    pub role: Role,
    /// The content, in order.
    pub parts: Vec<Part>,
    /// Optional metadata for extensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// URIs of the extensions relevant to this message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Other tasks this message refers to for context.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(alias = "reference_task_ids")]
    pub reference_task_ids: Vec<TaskId>,
}

/// A shared message: moved out when this was its last holder, else copied.
impl From<Arc<a2a::Message>> for Message {
    fn from(message: Arc<a2a::Message>) -> Self {
        Arc::unwrap_or_clone(message).into()
    }
}

impl From<a2a::Message> for Message {
    fn from(message: a2a::Message) -> Self {
        Self {
            message_id: message.message_id,
            context_id: message.context_id,
            task_id: message.task_id,
            role: message.role.into(),
            parts: message.parts.into_iter().map(Part::from).collect(),
            metadata: message.metadata,
            extensions: message.extensions.unwrap_or_default(),
            reference_task_ids: message.reference_task_ids.unwrap_or_default(),
        }
    }
}

impl TryFrom<Message> for a2a::Message {
    type Error = ConversionError;

    fn try_from(message: Message) -> Result<Self, ConversionError> {
        Ok(Self {
            role: message.role.try_into()?,
            parts: message.parts.into_iter().map(a2a::Part::from).collect(),
            message_id: message.message_id,
            task_id: message.task_id,
            context_id: message.context_id,
            reference_task_ids: some_vec(message.reference_task_ids),
            extensions: some_vec(message.extensions),
            metadata: message.metadata,
        })
    }
}
