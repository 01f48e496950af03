//! Messages and their parts: one turn of the conversation.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Metadata;
use super::tagged::{Tag, tagged, wrong_tag};
use crate::ids::{ContextId, MessageId, TaskId};

/// Who sent a [`Message`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The client side (`"user"`).
    User,
    /// The agent serving the request (`"agent"`).
    Agent,
}

// Hand-written so the error names the field, which serde's derived
// "unknown variant" message does not; read as the `kind` tags are, inline (a `Cow`
// would still have been read into a `String` of its own).
impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = Tag::deserialize(deserializer)?;
        match name.as_str() {
            Some("user") => Ok(Self::User),
            Some("agent") => Ok(Self::Agent),
            _ => Err(wrong_tag("role", &name.shown(), &["user", "agent"])),
        }
    }
}

tagged! {
    "kind" = "text", wire = TextPartWire, expecting = "a TextPart object";
    /// A segment of text (`"kind": "text"`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct TextPart {
        /// The text content.
        pub text: String,
        /// Optional metadata for this part.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<Metadata>,
    }
}

tagged! {
    "kind" = "file", wire = FilePartWire, expecting = "a FilePart object";
    /// A file, inline or by reference (`"kind": "file"`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct FilePart {
        /// The file's content or location.
        pub file: FileContent,
        /// Optional metadata for this part.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<Metadata>,
    }
}

tagged! {
    "kind" = "data", wire = DataPartWire, expecting = "a DataPart object";
    /// Structured JSON data (`"kind": "data"`), e.g. a form or a tool result.
    #[derive(Clone, Debug, PartialEq)]
    pub struct DataPart {
        /// The data: any JSON object.
        pub data: Map<String, Value>,
        /// Optional metadata for this part.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<Metadata>,
    }
}

/// The smallest unit of content in a [`Message`] or
/// [`Artifact`](super::Artifact), told apart by its `kind`.
///
/// Schema: `Part` (the union) and, through its variants, `PartBase`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Part {
    /// `"kind": "text"`.
    Text(TextPart),
    /// `"kind": "file"`.
    File(FilePart),
    /// `"kind": "data"`.
    Data(DataPart),
}

impl Part {
    /// A text part without metadata.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextPart {
            text: text.into(),
            metadata: None,
        })
    }

    /// A data part without metadata.
    #[must_use]
    pub fn data(data: Map<String, Value>) -> Self {
        Self::Data(DataPart {
            data,
            metadata: None,
        })
    }

    /// A file part referring to `uri`, without name or MIME type.
    pub fn file_uri(uri: impl Into<String>) -> Self {
        Self::File(FilePart {
            file: FileContent::Uri(FileWithUri {
                uri: uri.into(),
                name: None,
                mime_type: None,
            }),
            metadata: None,
        })
    }

    /// The text of a text part; `None` for file and data parts.
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(part) => Some(&part.text),
            Self::File(_) | Self::Data(_) => None,
        }
    }

    /// The part's metadata, whatever its kind.
    #[must_use]
    pub fn metadata(&self) -> Option<&Metadata> {
        match self {
            Self::Text(part) => part.metadata.as_ref(),
            Self::File(part) => part.metadata.as_ref(),
            Self::Data(part) => part.metadata.as_ref(),
        }
    }
}

// Read through one struct holding the members of every variant rather than by
// buffering the object (as `take_tag` does): a send reads a part or more, and the
// buffered object cost a map and a string per member. serde keeps tracking the
// path (`parts[0].file.bytes`) into a derived struct. Members of another kind are
// read and dropped.
impl<'de> Deserialize<'de> for Part {
    fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        use serde::de::Error as _;

        #[derive(Deserialize)]
        #[serde(expecting = "a Part object (TextPart, FilePart or DataPart)")]
        struct Wire {
            kind: Option<Tag>,
            text: Option<String>,
            file: Option<FileContent>,
            data: Option<Map<String, Value>>,
            metadata: Option<Metadata>,
        }

        const KINDS: [&str; 3] = ["text", "file", "data"];
        let wire = Wire::deserialize(deserializer)?;
        let kind = wire.kind.ok_or_else(|| D::Error::missing_field("kind"))?;
        let metadata = wire.metadata;
        match kind.as_str() {
            Some("text") => Ok(Self::Text(TextPart {
                text: wire.text.ok_or_else(|| D::Error::missing_field("text"))?,
                metadata,
            })),
            Some("file") => Ok(Self::File(FilePart {
                file: wire.file.ok_or_else(|| D::Error::missing_field("file"))?,
                metadata,
            })),
            Some("data") => Ok(Self::Data(DataPart {
                data: wire.data.ok_or_else(|| D::Error::missing_field("data"))?,
                metadata,
            })),
            _ => Err(wrong_tag("kind", &kind.shown(), &KINDS)),
        }
    }
}

impl From<TextPart> for Part {
    fn from(part: TextPart) -> Self {
        Self::Text(part)
    }
}

impl From<FilePart> for Part {
    fn from(part: FilePart) -> Self {
        Self::File(part)
    }
}

impl From<DataPart> for Part {
    fn from(part: DataPart) -> Self {
        Self::Data(part)
    }
}

/// The content of a [`FilePart`]: inline base64 bytes or a URI, never both.
///
/// Schema: `FileWithBytes` | `FileWithUri` and, through them, `FileBase`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum FileContent {
    /// The file travels inline.
    Bytes(FileWithBytes),
    /// The file is fetched from a URI.
    Uri(FileWithUri),
}

// Read through one struct holding the members of both variants rather than
// by buffering the object: the members are the same but for `bytes`/`uri`,
// and serde keeps tracking the path (`file.bytes`) into a derived struct.
impl<'de> Deserialize<'de> for FileContent {
    fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        use serde::de::Error as _;

        #[derive(Deserialize)]
        #[serde(
            rename_all = "camelCase",
            expecting = "a FileWithBytes or FileWithUri object"
        )]
        struct Wire {
            bytes: Option<String>,
            uri: Option<String>,
            name: Option<String>,
            mime_type: Option<String>,
        }

        let Wire {
            bytes,
            uri,
            name,
            mime_type,
        } = Wire::deserialize(deserializer)?;
        match (bytes, uri) {
            (Some(bytes), None) => Ok(Self::Bytes(FileWithBytes {
                bytes,
                name,
                mime_type,
            })),
            (None, Some(uri)) => Ok(Self::Uri(FileWithUri {
                uri,
                name,
                mime_type,
            })),
            (Some(_), Some(_)) => Err(D::Error::custom(
                "a file has either `bytes` or `uri`, not both",
            )),
            (None, None) => Err(D::Error::custom(
                "a file needs `bytes` or `uri`: neither is present",
            )),
        }
    }
}

/// A file whose content is carried inline, base64-encoded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileWithBytes {
    /// The base64-encoded content, kept encoded: agents decode it only if
    /// they need the bytes.
    pub bytes: String,
    /// An optional file name, e.g. `"document.pdf"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The MIME type, e.g. `"application/pdf"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// A file whose content lives at a URI.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileWithUri {
    /// Where to fetch the content.
    pub uri: String,
    /// An optional file name, e.g. `"document.pdf"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The MIME type, e.g. `"application/pdf"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

tagged! {
    "kind" = "message", wire = MessageWire, expecting = "a Message object";
    /// One turn of the conversation between a client and an agent
    /// (`"kind": "message"`).
    ///
    /// ```
    /// use agentyard_transport::a2a::{Message, Role};
    ///
    /// let json = serde_json::json!({
    ///     "kind": "message",
    ///     "messageId": "msg-123",
    ///     "role": "user",
    ///     "parts": [{"kind": "text", "text": "Hello"}]
    /// });
    /// let message: Message = serde_json::from_value(json.clone()).unwrap();
    /// assert_eq!(message.role, Role::User);
    /// assert_eq!(message.text(), "Hello");
    /// assert_eq!(serde_json::to_value(&message).unwrap(), json);
    /// ```
    #[derive(Clone, Debug, PartialEq)]
    pub struct Message {
        /// Who sent it.
        pub role: Role,
        /// The content, in order.
        pub parts: Vec<Part>,
        /// Chosen by the sender, typically a uuid.
        pub message_id: MessageId,
        /// The task this message belongs to; absent on the first message of a
        /// new task.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task_id: Option<TaskId>,
        /// The conversation this message belongs to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub context_id: Option<ContextId>,
        /// Other tasks this message refers to for context.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub reference_task_ids: Option<Vec<TaskId>>,
        /// URIs of the extensions relevant to this message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub extensions: Option<Vec<String>>,
        /// Optional metadata for extensions, keyed by extension.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub metadata: Option<Metadata>,
    }
}

impl Message {
    /// A message with a freshly minted id and no task, context or metadata.
    #[must_use]
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Self {
            role,
            parts,
            message_id: MessageId::mint(),
            task_id: None,
            context_id: None,
            reference_task_ids: None,
            extensions: None,
            metadata: None,
        }
    }

    /// A user message holding one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::new(Role::User, vec![Part::text(text)])
    }

    /// An agent message holding one text part.
    pub fn agent_text(text: impl Into<String>) -> Self {
        Self::new(Role::Agent, vec![Part::text(text)])
    }

    /// Sets the task this message continues.
    #[must_use]
    pub fn with_task_id(mut self, task_id: impl Into<TaskId>) -> Self {
        self.task_id = Some(task_id.into());
        self
    }

    /// Sets the conversation this message belongs to.
    #[must_use]
    pub fn with_context_id(mut self, context_id: impl Into<ContextId>) -> Self {
        self.context_id = Some(context_id.into());
        self
    }

    /// The text parts joined with `"\n"`; file and data parts are skipped.
    /// Empty when the message has no text part.
    #[must_use]
    pub fn text(&self) -> String {
        // Pushed into one string: `collect` then `join` made a vector of the pieces
        // first, two allocations for what is most often a single text part.
        let mut text = String::new();
        for (n, piece) in self.parts.iter().filter_map(Part::as_text).enumerate() {
            if n > 0 {
                text.push('\n');
            }
            text.push_str(piece);
        }
        text
    }
}
