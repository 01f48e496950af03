//! The agent card: how an agent describes itself at
//! `/.well-known/agent-card.json`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Metadata, SecurityRequirement, SecurityScheme};

/// The A2A protocol version these types implement, as an agent card states it.
pub const PROTOCOL_VERSION: &str = "0.3.0";

/// A self-describing manifest for an agent: identity, endpoint, capabilities,
/// skills and security requirements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// The A2A version the agent supports, e.g. `"0.3.0"`.
    pub protocol_version: String,
    /// A human-readable name.
    pub name: String,
    /// What the agent does, for people and other agents.
    pub description: String,
    /// The preferred endpoint; it must serve `preferred_transport`.
    pub url: String,
    /// The transport at `url`; peers assume JSON-RPC when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_transport: Option<TransportProtocol>,
    /// Other transport and URL pairs the agent serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_interfaces: Option<Vec<AgentInterface>>,
    /// A URL of an icon for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon_url: Option<String>,
    /// Who provides the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version, in a format the provider chooses.
    pub version: String,
    /// A URL of the agent's documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documentation_url: Option<String>,
    /// Optional features the agent supports.
    pub capabilities: AgentCapabilities,
    /// Security schemes by name, referred to by `security`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_schemes: Option<BTreeMap<String, SecurityScheme>>,
    /// Requirements for every interaction: any one of them suffices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Vec<SecurityRequirement>>,
    /// MIME types accepted by default, for every skill.
    pub default_input_modes: Vec<String>,
    /// MIME types produced by default, for every skill.
    pub default_output_modes: Vec<String>,
    /// What the agent can do.
    pub skills: Vec<AgentSkill>,
    /// True if authenticated users can fetch an extended card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_authenticated_extended_card: Option<bool>,
    /// JSON Web Signatures over this card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signatures: Option<Vec<AgentCardSignature>>,
}

impl AgentCard {
    /// A card for protocol [`PROTOCOL_VERSION`] served over JSON-RPC at `url`,
    /// with no optional capability, text in and out, and no skills yet.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        url: impl Into<String>,
        version: impl Into<String>,
    ) -> Self {
        Self {
            protocol_version: PROTOCOL_VERSION.to_owned(),
            name: name.into(),
            description: description.into(),
            url: url.into(),
            preferred_transport: Some(TransportProtocol::JsonRpc),
            additional_interfaces: None,
            icon_url: None,
            provider: None,
            version: version.into(),
            documentation_url: None,
            capabilities: AgentCapabilities::default(),
            security_schemes: None,
            security: None,
            default_input_modes: vec!["text/plain".to_owned()],
            default_output_modes: vec!["text/plain".to_owned()],
            skills: Vec::new(),
            supports_authenticated_extended_card: None,
            signatures: None,
        }
    }
}

/// A transport protocol an agent serves. The schema's enum names three;
/// agent cards carry the transport as a free string, so other values are kept
/// as [`TransportProtocol::Other`] instead of rejecting the card.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TransportProtocol {
    /// `"JSONRPC"`: JSON-RPC 2.0 over HTTP.
    JsonRpc,
    /// `"GRPC"`.
    Grpc,
    /// `"HTTP+JSON"`: REST-style HTTP with JSON bodies.
    HttpJson,
    /// Any other transport name, kept as sent.
    Other(String),
}

impl TransportProtocol {
    /// The transport's wire name.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::JsonRpc => "JSONRPC",
            Self::Grpc => "GRPC",
            Self::HttpJson => "HTTP+JSON",
            Self::Other(name) => name,
        }
    }
}

impl From<&str> for TransportProtocol {
    fn from(name: &str) -> Self {
        match name {
            "JSONRPC" => Self::JsonRpc,
            "GRPC" => Self::Grpc,
            "HTTP+JSON" => Self::HttpJson,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl From<String> for TransportProtocol {
    fn from(name: String) -> Self {
        match Self::from(name.as_str()) {
            Self::Other(_) => Self::Other(name),
            known => known,
        }
    }
}

impl fmt::Display for TransportProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for TransportProtocol {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TransportProtocol {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

/// Optional features an agent supports; absent means not supported.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Streaming over Server-Sent Events (`message/stream`,
    /// `tasks/resubscribe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notifications to a client webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// A history of state transitions per task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_transition_history: Option<bool>,
    /// Protocol extensions the agent supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<AgentExtension>>,
}

/// A protocol extension an agent supports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// The URI identifying the extension.
    pub uri: String,
    /// How this agent uses the extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// True if clients must understand the extension to talk to the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Extension-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
}

/// A URL and the transport served there.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// The endpoint.
    pub url: String,
    /// The transport at `url`.
    pub transport: TransportProtocol,
}

/// The organization that provides an agent.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    /// The organization's name.
    pub organization: String,
    /// The organization's website.
    pub url: String,
}

/// Something an agent can do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Unique within the agent.
    pub id: String,
    /// A human-readable name.
    pub name: String,
    /// What the skill does.
    pub description: String,
    /// Keywords describing the skill.
    pub tags: Vec<String>,
    /// Example prompts the skill handles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<Vec<String>>,
    /// Accepted MIME types, overriding the card's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_modes: Option<Vec<String>>,
    /// Produced MIME types, overriding the card's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_modes: Option<Vec<String>>,
    /// Security requirements for this skill: any one of them suffices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<Vec<SecurityRequirement>>,
}

impl AgentSkill {
    /// A skill with no tags, examples, modes or security of its own.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            description: description.into(),
            tags: Vec::new(),
            examples: None,
            input_modes: None,
            output_modes: None,
            security: None,
        }
    }
}

/// A JSON Web Signature (RFC 7515) over an agent card.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCardSignature {
    /// The protected JWS header, base64url-encoded JSON.
    pub protected: String,
    /// The signature, base64url-encoded.
    pub signature: String,
    /// The unprotected JWS header values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
}
