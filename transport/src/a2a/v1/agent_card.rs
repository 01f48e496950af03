//! The 1.0 agent card: interfaces declared with their protocol version,
//! security schemes as oneof wrappers, and requirements as string lists.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ProtocolVersion;
use super::convert::{ConversionError, is_empty, is_false, some_string, some_vec};
use crate::a2a::{self, Metadata, OAuthScopes};

/// A URL, the binding served there and the protocol version spoken (proto
/// `AgentInterface`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an AgentInterface object")]
pub struct AgentInterface {
    /// The endpoint.
    pub url: String,
    /// `"JSONRPC"`, `"GRPC"`, `"HTTP+JSON"` or another binding's name.
    #[serde(alias = "protocol_binding")]
    pub protocol_binding: String,
    /// The tenant a client must send on every request to this interface.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub tenant: String,
    /// Major.minor, e.g. `"1.0"` or `"0.3"`.
    #[serde(alias = "protocol_version")]
    pub protocol_version: String,
}

/// The organization that provides an agent (proto `AgentProvider`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an AgentProvider object")]
pub struct AgentProvider {
    /// The organization's website.
    pub url: String,
    /// The organization's name.
    pub organization: String,
}

/// Optional features an agent supports (proto `AgentCapabilities`).
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an AgentCapabilities object")]
pub struct AgentCapabilities {
    /// Streaming over SSE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notifications to a webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "push_notifications")]
    pub push_notifications: Option<bool>,
    /// Protocol extensions the agent supports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
    /// An extended card is served by `GetExtendedAgentCard` (0.3's top-level
    /// `supportsAuthenticatedExtendedCard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "extended_agent_card")]
    pub extended_agent_card: Option<bool>,
}

/// A protocol extension an agent supports (proto `AgentExtension`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an AgentExtension object")]
pub struct AgentExtension {
    /// The URI identifying the extension.
    #[serde(default)]
    pub uri: String,
    /// How this agent uses the extension.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub description: String,
    /// True if clients must understand the extension.
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
    /// Extension-specific configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Metadata>,
}

/// Something an agent can do (proto `AgentSkill`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an AgentSkill object")]
pub struct AgentSkill {
    /// Unique within the agent.
    pub id: String,
    /// A human-readable name.
    pub name: String,
    /// What the skill does.
    pub description: String,
    /// Keywords describing the skill.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Example prompts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Accepted MIME types, overriding the card's defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(alias = "input_modes")]
    pub input_modes: Vec<String>,
    /// Produced MIME types, overriding the card's defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(alias = "output_modes")]
    pub output_modes: Vec<String>,
    /// Security requirements for this skill: any one suffices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(alias = "security_requirements")]
    pub security_requirements: Vec<SecurityRequirement>,
}

/// A JSON Web Signature over a card (proto `AgentCardSignature`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an AgentCardSignature object")]
pub struct AgentCardSignature {
    /// The protected JWS header, base64url-encoded JSON.
    pub protected: String,
    /// The signature, base64url-encoded.
    pub signature: String,
    /// The unprotected JWS header values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<Metadata>,
}

/// A list of strings (proto `StringList`), the scopes of one scheme.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a StringList object")]
pub struct StringList {
    /// The strings.
    #[serde(default)]
    pub list: Vec<String>,
}

/// Scheme names mapped to the scopes each needs (proto
/// `SecurityRequirement`); all apply together.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a SecurityRequirement object")]
pub struct SecurityRequirement {
    /// Scheme name to scopes.
    #[serde(default)]
    pub schemes: BTreeMap<String, StringList>,
}

impl From<a2a::SecurityRequirement> for SecurityRequirement {
    fn from(requirement: a2a::SecurityRequirement) -> Self {
        Self {
            schemes: requirement
                .into_iter()
                .map(|(name, list)| (name, StringList { list }))
                .collect(),
        }
    }
}

impl From<SecurityRequirement> for a2a::SecurityRequirement {
    fn from(requirement: SecurityRequirement) -> Self {
        requirement
            .schemes
            .into_iter()
            .map(|(name, scopes)| (name, scopes.list))
            .collect()
    }
}

/// An API key in a header, query parameter or cookie.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an APIKeySecurityScheme object")]
pub struct ApiKeySecurityScheme {
    /// A description of the scheme.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub description: String,
    /// `"header"`, `"query"` or `"cookie"`.
    pub location: String,
    /// The header, parameter or cookie name.
    pub name: String,
}

/// HTTP authentication (RFC 7235), e.g. `Bearer`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "an HTTPAuthSecurityScheme object"
)]
pub struct HttpAuthSecurityScheme {
    /// A description of the scheme.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub description: String,
    /// The scheme name, e.g. `"Bearer"`.
    pub scheme: String,
    /// How the bearer token is formatted, e.g. `"JWT"`.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "bearer_format")]
    pub bearer_format: String,
}

/// OAuth 2.0 with one flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an OAuth2SecurityScheme object")]
pub struct OAuth2SecurityScheme {
    /// A description of the scheme.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub description: String,
    /// The flow.
    pub flows: OAuthFlows,
    /// The authorization server's metadata URL (RFC 8414).
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "oauth2_metadata_url")]
    pub oauth2_metadata_url: String,
}

/// OpenID Connect discovery.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "an OpenIdConnectSecurityScheme object"
)]
pub struct OpenIdConnectSecurityScheme {
    /// A description of the scheme.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub description: String,
    /// The discovery document URL.
    #[serde(alias = "open_id_connect_url")]
    pub open_id_connect_url: String,
}

/// Mutual TLS.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a MutualTlsSecurityScheme object"
)]
pub struct MutualTlsSecurityScheme {
    /// A description of the scheme.
    #[serde(default, skip_serializing_if = "is_empty")]
    pub description: String,
}

/// One way to authenticate (proto `SecurityScheme`, a oneof written as the
/// member present).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum SecurityScheme {
    /// `apiKeySecurityScheme`.
    #[serde(rename = "apiKeySecurityScheme")]
    ApiKey(ApiKeySecurityScheme),
    /// `httpAuthSecurityScheme`.
    #[serde(rename = "httpAuthSecurityScheme")]
    HttpAuth(HttpAuthSecurityScheme),
    /// `oauth2SecurityScheme`; boxed, being much the largest.
    #[serde(rename = "oauth2SecurityScheme")]
    OAuth2(Box<OAuth2SecurityScheme>),
    /// `openIdConnectSecurityScheme`.
    #[serde(rename = "openIdConnectSecurityScheme")]
    OpenIdConnect(OpenIdConnectSecurityScheme),
    /// `mtlsSecurityScheme`.
    #[serde(rename = "mtlsSecurityScheme")]
    MutualTls(MutualTlsSecurityScheme),
}

// Read through optional members, so a hybrid card's 0.3 `type`/`scheme`
// beside the member is ignored rather than refused.
impl<'de> Deserialize<'de> for SecurityScheme {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;

        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", expecting = "a SecurityScheme object")]
        struct Wire {
            #[serde(default)]
            #[serde(alias = "api_key_security_scheme")]
            api_key_security_scheme: Option<ApiKeySecurityScheme>,
            #[serde(default)]
            #[serde(alias = "http_auth_security_scheme")]
            http_auth_security_scheme: Option<HttpAuthSecurityScheme>,
            #[serde(default, rename = "oauth2SecurityScheme")]
            #[serde(alias = "oauth2_security_scheme")]
            oauth2_security_scheme: Option<OAuth2SecurityScheme>,
            #[serde(default)]
            #[serde(alias = "open_id_connect_security_scheme")]
            open_id_connect_security_scheme: Option<OpenIdConnectSecurityScheme>,
            #[serde(default)]
            #[serde(alias = "mtls_security_scheme")]
            mtls_security_scheme: Option<MutualTlsSecurityScheme>,
        }

        let wire = Wire::deserialize(deserializer)?;
        let mut found = [
            wire.api_key_security_scheme.map(Self::ApiKey),
            wire.http_auth_security_scheme.map(Self::HttpAuth),
            wire.oauth2_security_scheme
                .map(|scheme| Self::OAuth2(Box::new(scheme))),
            wire.open_id_connect_security_scheme
                .map(Self::OpenIdConnect),
            wire.mtls_security_scheme.map(Self::MutualTls),
        ]
        .into_iter()
        .flatten();
        let scheme = found.next().ok_or_else(|| {
            D::Error::custom(
                "a SecurityScheme needs one of `apiKeySecurityScheme`, `httpAuthSecurityScheme`, \
                 `oauth2SecurityScheme`, `openIdConnectSecurityScheme` or `mtlsSecurityScheme`",
            )
        })?;
        if found.next().is_some() {
            return Err(D::Error::custom(
                "a SecurityScheme holds one scheme, not several",
            ));
        }
        Ok(scheme)
    }
}

/// The OAuth 2.0 flow of an [`OAuth2SecurityScheme`] (proto `OAuthFlows`, a
/// oneof: exactly one flow, where 0.3 allows several).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum OAuthFlows {
    /// `authorizationCode`.
    AuthorizationCode(AuthorizationCodeOAuthFlow),
    /// `clientCredentials`.
    ClientCredentials(ClientCredentialsOAuthFlow),
    /// `implicit` (deprecated in 1.0).
    Implicit(ImplicitOAuthFlow),
    /// `password` (deprecated in 1.0).
    Password(PasswordOAuthFlow),
    /// `deviceCode` (new in 1.0).
    DeviceCode(DeviceCodeOAuthFlow),
}

impl<'de> Deserialize<'de> for OAuthFlows {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;

        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", expecting = "an OAuthFlows object")]
        struct Wire {
            #[serde(default)]
            #[serde(alias = "authorization_code")]
            authorization_code: Option<AuthorizationCodeOAuthFlow>,
            #[serde(default)]
            #[serde(alias = "client_credentials")]
            client_credentials: Option<ClientCredentialsOAuthFlow>,
            #[serde(default)]
            implicit: Option<ImplicitOAuthFlow>,
            #[serde(default)]
            password: Option<PasswordOAuthFlow>,
            #[serde(default)]
            #[serde(alias = "device_code")]
            device_code: Option<DeviceCodeOAuthFlow>,
        }

        let wire = Wire::deserialize(deserializer)?;
        let mut found = [
            wire.authorization_code.map(Self::AuthorizationCode),
            wire.client_credentials.map(Self::ClientCredentials),
            wire.implicit.map(Self::Implicit),
            wire.password.map(Self::Password),
            wire.device_code.map(Self::DeviceCode),
        ]
        .into_iter()
        .flatten();
        let flow = found.next().ok_or_else(|| {
            D::Error::custom(
                "OAuthFlows needs one of `authorizationCode`, `clientCredentials`, `implicit`, \
                 `password` or `deviceCode`",
            )
        })?;
        if found.next().is_some() {
            return Err(D::Error::custom("OAuthFlows holds one flow, not several"));
        }
        Ok(flow)
    }
}

/// The authorization code flow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "an AuthorizationCodeOAuthFlow object"
)]
pub struct AuthorizationCodeOAuthFlow {
    /// The authorization endpoint.
    #[serde(alias = "authorization_url")]
    pub authorization_url: String,
    /// The token endpoint.
    #[serde(alias = "token_url")]
    pub token_url: String,
    /// The refresh endpoint.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "refresh_url")]
    pub refresh_url: String,
    /// Scope name to description.
    #[serde(default)]
    pub scopes: OAuthScopes,
    /// PKCE (RFC 7636) is required (new in 1.0).
    #[serde(default, skip_serializing_if = "is_false")]
    #[serde(alias = "pkce_required")]
    pub pkce_required: bool,
}

/// The client credentials flow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "a ClientCredentialsOAuthFlow object"
)]
pub struct ClientCredentialsOAuthFlow {
    /// The token endpoint.
    #[serde(alias = "token_url")]
    pub token_url: String,
    /// The refresh endpoint.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "refresh_url")]
    pub refresh_url: String,
    /// Scope name to description.
    #[serde(default)]
    pub scopes: OAuthScopes,
}

/// The implicit flow (deprecated in 1.0).
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an ImplicitOAuthFlow object")]
pub struct ImplicitOAuthFlow {
    /// The authorization endpoint.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "authorization_url")]
    pub authorization_url: String,
    /// The refresh endpoint.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "refresh_url")]
    pub refresh_url: String,
    /// Scope name to description.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: OAuthScopes,
}

/// The resource owner password flow (deprecated in 1.0).
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a PasswordOAuthFlow object")]
pub struct PasswordOAuthFlow {
    /// The token endpoint.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "token_url")]
    pub token_url: String,
    /// The refresh endpoint.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "refresh_url")]
    pub refresh_url: String,
    /// Scope name to description.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub scopes: OAuthScopes,
}

/// The device authorization flow (RFC 8628, new in 1.0).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "a DeviceCodeOAuthFlow object")]
pub struct DeviceCodeOAuthFlow {
    /// The device authorization endpoint.
    #[serde(alias = "device_authorization_url")]
    pub device_authorization_url: String,
    /// The token endpoint.
    #[serde(alias = "token_url")]
    pub token_url: String,
    /// The refresh endpoint.
    #[serde(default, skip_serializing_if = "is_empty")]
    #[serde(alias = "refresh_url")]
    pub refresh_url: String,
    /// Scope name to description.
    #[serde(default)]
    pub scopes: OAuthScopes,
}

/// An agent's self-description (proto `AgentCard`), the strict 1.0 form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", expecting = "an AgentCard object")]
pub struct AgentCard {
    /// A human-readable name.
    pub name: String,
    /// What the agent does.
    pub description: String,
    /// The interfaces served, in preference order. Required by 1.0; read as
    /// empty from a 0.3 card (which has `url` instead), so a client can tell
    /// the shapes apart.
    #[serde(default)]
    #[serde(alias = "supported_interfaces")]
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who provides the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version.
    pub version: String,
    /// A URL of the agent's documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "documentation_url")]
    pub documentation_url: Option<String>,
    /// Optional features the agent supports.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// Security schemes by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[serde(alias = "security_schemes")]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Requirements for every interaction: any one suffices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(alias = "security_requirements")]
    pub security_requirements: Vec<SecurityRequirement>,
    /// MIME types accepted by default.
    #[serde(default)]
    #[serde(alias = "default_input_modes")]
    pub default_input_modes: Vec<String>,
    /// MIME types produced by default.
    #[serde(default)]
    #[serde(alias = "default_output_modes")]
    pub default_output_modes: Vec<String>,
    /// What the agent can do.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
    /// JSON Web Signatures over the card.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<AgentCardSignature>,
    /// A URL of an icon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "icon_url")]
    pub icon_url: Option<String>,
}

/// "0.3.0" → "0.3": card interfaces carry major.minor only.
fn major_minor(version: &str) -> String {
    let mut pieces = version.splitn(3, '.');
    match (pieces.next(), pieces.next()) {
        (Some(major), Some(minor)) => format!("{major}.{minor}"),
        _ => version.to_owned(),
    }
}

impl AgentCard {
    /// The 1.0 card of an internal card served in each of `versions`: every
    /// interface of the card (as [`From`] lists them) is declared once per
    /// version, in the order given, so with `[V1_0, V0_3]` each binding
    /// offers 1.0 first and clients that take the first entry per binding
    /// get 1.0.
    #[must_use]
    pub fn for_versions(card: a2a::AgentCard, versions: &[ProtocolVersion]) -> Self {
        let mut card = Self::from(card);
        let interfaces = std::mem::take(&mut card.supported_interfaces);
        card.supported_interfaces = interfaces
            .into_iter()
            .flat_map(|interface| {
                versions.iter().map(move |version| AgentInterface {
                    protocol_version: version.as_str().to_owned(),
                    ..interface.clone()
                })
            })
            .collect();
        card
    }
}

impl From<a2a::AgentCard> for AgentCard {
    /// Each interface (`url` first, then `additionalInterfaces` not repeating
    /// it) is stamped with the card's `protocolVersion`, major.minor; the
    /// server lists further versions itself. `stateTransitionHistory` is
    /// dropped.
    fn from(card: a2a::AgentCard) -> Self {
        let protocol_version = major_minor(&card.protocol_version);
        let binding = card
            .preferred_transport
            .unwrap_or(a2a::TransportProtocol::JsonRpc);
        let first = AgentInterface {
            url: card.url,
            protocol_binding: binding.as_str().to_owned(),
            tenant: String::new(),
            protocol_version: protocol_version.clone(),
        };
        let mut supported_interfaces = vec![first];
        for interface in card.additional_interfaces.unwrap_or_default() {
            if interface.url == supported_interfaces[0].url
                && interface.transport.as_str() == supported_interfaces[0].protocol_binding
            {
                continue;
            }
            supported_interfaces.push(AgentInterface {
                url: interface.url,
                protocol_binding: interface.transport.as_str().to_owned(),
                tenant: String::new(),
                protocol_version: protocol_version.clone(),
            });
        }
        let capabilities = AgentCapabilities {
            streaming: card.capabilities.streaming,
            push_notifications: card.capabilities.push_notifications,
            extensions: card
                .capabilities
                .extensions
                .unwrap_or_default()
                .into_iter()
                .map(AgentExtension::from)
                .collect(),
            extended_agent_card: card.supports_authenticated_extended_card,
        };
        Self {
            name: card.name,
            description: card.description,
            supported_interfaces,
            provider: card.provider.map(|provider| AgentProvider {
                url: provider.url,
                organization: provider.organization,
            }),
            version: card.version,
            documentation_url: card.documentation_url,
            capabilities,
            security_schemes: card
                .security_schemes
                .unwrap_or_default()
                .into_iter()
                .map(|(name, scheme)| (name, scheme.into()))
                .collect(),
            security_requirements: card
                .security
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            default_input_modes: card.default_input_modes,
            default_output_modes: card.default_output_modes,
            skills: card.skills.into_iter().map(AgentSkill::from).collect(),
            signatures: card
                .signatures
                .unwrap_or_default()
                .into_iter()
                .map(|signature| AgentCardSignature {
                    protected: signature.protected,
                    signature: signature.signature,
                    header: signature.header,
                })
                .collect(),
            icon_url: card.icon_url,
        }
    }
}

impl TryFrom<AgentCard> for a2a::AgentCard {
    type Error = ConversionError;

    /// The first interface becomes `url`, `preferredTransport` and
    /// `protocolVersion`; the others `additionalInterfaces`. Each interface's
    /// `tenant` and version are dropped.
    fn try_from(card: AgentCard) -> Result<Self, ConversionError> {
        let mut interfaces = card.supported_interfaces.into_iter();
        let first = interfaces.next().ok_or_else(|| {
            ConversionError::new("AgentCard.supportedInterfaces", "empty; 0.3 needs a `url`")
        })?;
        let additional: Vec<_> = interfaces
            .map(|interface| a2a::AgentInterface {
                url: interface.url,
                transport: interface.protocol_binding.into(),
            })
            .collect();
        let security_schemes = card
            .security_schemes
            .into_iter()
            .map(|(name, scheme)| Ok((name, scheme.try_into()?)))
            .collect::<Result<BTreeMap<_, _>, ConversionError>>()?;
        Ok(Self {
            protocol_version: first.protocol_version,
            name: card.name,
            description: card.description,
            url: first.url,
            preferred_transport: Some(first.protocol_binding.into()),
            additional_interfaces: some_vec(additional),
            icon_url: card.icon_url,
            provider: card.provider.map(|provider| a2a::AgentProvider {
                organization: provider.organization,
                url: provider.url,
            }),
            version: card.version,
            documentation_url: card.documentation_url,
            capabilities: a2a::AgentCapabilities {
                streaming: card.capabilities.streaming,
                push_notifications: card.capabilities.push_notifications,
                state_transition_history: None,
                extensions: some_vec(
                    card.capabilities
                        .extensions
                        .into_iter()
                        .map(Into::into)
                        .collect(),
                ),
            },
            security_schemes: (!security_schemes.is_empty()).then_some(security_schemes),
            security: some_vec(
                card.security_requirements
                    .into_iter()
                    .map(Into::into)
                    .collect(),
            ),
            default_input_modes: card.default_input_modes,
            default_output_modes: card.default_output_modes,
            skills: card.skills.into_iter().map(Into::into).collect(),
            supports_authenticated_extended_card: card.capabilities.extended_agent_card,
            signatures: some_vec(
                card.signatures
                    .into_iter()
                    .map(|signature| a2a::AgentCardSignature {
                        protected: signature.protected,
                        signature: signature.signature,
                        header: signature.header,
                    })
                    .collect(),
            ),
        })
    }
}

impl From<a2a::AgentExtension> for AgentExtension {
    fn from(extension: a2a::AgentExtension) -> Self {
        Self {
            uri: extension.uri,
            description: extension.description.unwrap_or_default(),
            required: extension.required.unwrap_or(false),
            params: extension.params,
        }
    }
}

impl From<AgentExtension> for a2a::AgentExtension {
    fn from(extension: AgentExtension) -> Self {
        Self {
            uri: extension.uri,
            description: some_string(extension.description),
            required: extension.required.then_some(true),
            params: extension.params,
        }
    }
}

impl From<a2a::AgentSkill> for AgentSkill {
    fn from(skill: a2a::AgentSkill) -> Self {
        Self {
            id: skill.id,
            name: skill.name,
            description: skill.description,
            tags: skill.tags,
            examples: skill.examples.unwrap_or_default(),
            input_modes: skill.input_modes.unwrap_or_default(),
            output_modes: skill.output_modes.unwrap_or_default(),
            security_requirements: skill
                .security
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
        }
    }
}

impl From<AgentSkill> for a2a::AgentSkill {
    fn from(skill: AgentSkill) -> Self {
        Self {
            id: skill.id,
            name: skill.name,
            description: skill.description,
            tags: skill.tags,
            examples: some_vec(skill.examples),
            input_modes: some_vec(skill.input_modes),
            output_modes: some_vec(skill.output_modes),
            security: some_vec(
                skill
                    .security_requirements
                    .into_iter()
                    .map(Into::into)
                    .collect(),
            ),
        }
    }
}

impl From<a2a::SecurityScheme> for SecurityScheme {
    /// Of a 0.3 OAuth scheme with several flows, only the first of
    /// authorizationCode, clientCredentials, implicit, password is kept.
    fn from(scheme: a2a::SecurityScheme) -> Self {
        match scheme {
            a2a::SecurityScheme::ApiKey(scheme) => Self::ApiKey(ApiKeySecurityScheme {
                description: scheme.description.unwrap_or_default(),
                location: match scheme.location {
                    a2a::ApiKeyLocation::Cookie => "cookie",
                    a2a::ApiKeyLocation::Header => "header",
                    a2a::ApiKeyLocation::Query => "query",
                }
                .to_owned(),
                name: scheme.name,
            }),
            a2a::SecurityScheme::Http(scheme) => Self::HttpAuth(HttpAuthSecurityScheme {
                description: scheme.description.unwrap_or_default(),
                scheme: scheme.scheme,
                bearer_format: scheme.bearer_format.unwrap_or_default(),
            }),
            a2a::SecurityScheme::OAuth2(scheme) => {
                let a2a::OAuth2SecurityScheme {
                    flows,
                    oauth2_metadata_url,
                    description,
                } = *scheme;
                let flows = if let Some(flow) = flows.authorization_code {
                    OAuthFlows::AuthorizationCode(AuthorizationCodeOAuthFlow {
                        authorization_url: flow.authorization_url,
                        token_url: flow.token_url,
                        refresh_url: flow.refresh_url.unwrap_or_default(),
                        scopes: flow.scopes,
                        pkce_required: false,
                    })
                } else if let Some(flow) = flows.client_credentials {
                    OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                        token_url: flow.token_url,
                        refresh_url: flow.refresh_url.unwrap_or_default(),
                        scopes: flow.scopes,
                    })
                } else if let Some(flow) = flows.implicit {
                    OAuthFlows::Implicit(ImplicitOAuthFlow {
                        authorization_url: flow.authorization_url,
                        refresh_url: flow.refresh_url.unwrap_or_default(),
                        scopes: flow.scopes,
                    })
                } else if let Some(flow) = flows.password {
                    OAuthFlows::Password(PasswordOAuthFlow {
                        token_url: flow.token_url,
                        refresh_url: flow.refresh_url.unwrap_or_default(),
                        scopes: flow.scopes,
                    })
                } else {
                    // A 0.3 scheme with no flow: the nearest 1.0 form is an
                    // empty (deprecated) implicit flow.
                    OAuthFlows::Implicit(ImplicitOAuthFlow::default())
                };
                Self::OAuth2(Box::new(OAuth2SecurityScheme {
                    description: description.unwrap_or_default(),
                    flows,
                    oauth2_metadata_url: oauth2_metadata_url.unwrap_or_default(),
                }))
            }
            a2a::SecurityScheme::OpenIdConnect(scheme) => {
                Self::OpenIdConnect(OpenIdConnectSecurityScheme {
                    description: scheme.description.unwrap_or_default(),
                    open_id_connect_url: scheme.open_id_connect_url,
                })
            }
            a2a::SecurityScheme::MutualTls(scheme) => Self::MutualTls(MutualTlsSecurityScheme {
                description: scheme.description.unwrap_or_default(),
            }),
        }
    }
}

impl TryFrom<SecurityScheme> for a2a::SecurityScheme {
    type Error = ConversionError;

    /// Refuses an apiKey `location` other than cookie, header or query and a
    /// `deviceCode` flow (0.3 has neither); drops `pkceRequired`.
    fn try_from(scheme: SecurityScheme) -> Result<Self, ConversionError> {
        Ok(match scheme {
            SecurityScheme::ApiKey(scheme) => Self::ApiKey(a2a::ApiKeySecurityScheme {
                location: match scheme.location.to_ascii_lowercase().as_str() {
                    "cookie" => a2a::ApiKeyLocation::Cookie,
                    "header" => a2a::ApiKeyLocation::Header,
                    "query" => a2a::ApiKeyLocation::Query,
                    other => {
                        return Err(ConversionError::new(
                            "APIKeySecurityScheme.location",
                            format!("\"{other}\": expected cookie, header or query"),
                        ));
                    }
                },
                name: scheme.name,
                description: some_string(scheme.description),
            }),
            SecurityScheme::HttpAuth(scheme) => Self::Http(a2a::HttpAuthSecurityScheme {
                scheme: scheme.scheme,
                bearer_format: some_string(scheme.bearer_format),
                description: some_string(scheme.description),
            }),
            SecurityScheme::OAuth2(scheme) => {
                let OAuth2SecurityScheme {
                    description,
                    flows,
                    oauth2_metadata_url,
                } = *scheme;
                let mut internal = a2a::OAuthFlows::default();
                match flows {
                    OAuthFlows::AuthorizationCode(flow) => {
                        internal.authorization_code = Some(a2a::AuthorizationCodeOAuthFlow {
                            authorization_url: flow.authorization_url,
                            token_url: flow.token_url,
                            refresh_url: some_string(flow.refresh_url),
                            scopes: flow.scopes,
                        });
                    }
                    OAuthFlows::ClientCredentials(flow) => {
                        internal.client_credentials = Some(a2a::ClientCredentialsOAuthFlow {
                            token_url: flow.token_url,
                            refresh_url: some_string(flow.refresh_url),
                            scopes: flow.scopes,
                        });
                    }
                    OAuthFlows::Implicit(flow) => {
                        internal.implicit = Some(a2a::ImplicitOAuthFlow {
                            authorization_url: flow.authorization_url,
                            refresh_url: some_string(flow.refresh_url),
                            scopes: flow.scopes,
                        });
                    }
                    OAuthFlows::Password(flow) => {
                        internal.password = Some(a2a::PasswordOAuthFlow {
                            token_url: flow.token_url,
                            refresh_url: some_string(flow.refresh_url),
                            scopes: flow.scopes,
                        });
                    }
                    OAuthFlows::DeviceCode(_) => {
                        return Err(ConversionError::new(
                            "OAuthFlows.deviceCode",
                            "the device code flow has no 0.3 form",
                        ));
                    }
                }
                Self::OAuth2(Box::new(a2a::OAuth2SecurityScheme {
                    flows: internal,
                    oauth2_metadata_url: some_string(oauth2_metadata_url),
                    description: some_string(description),
                }))
            }
            SecurityScheme::OpenIdConnect(scheme) => {
                Self::OpenIdConnect(a2a::OpenIdConnectSecurityScheme {
                    open_id_connect_url: scheme.open_id_connect_url,
                    description: some_string(scheme.description),
                })
            }
            SecurityScheme::MutualTls(scheme) => Self::MutualTls(a2a::MutualTlsSecurityScheme {
                description: some_string(scheme.description),
            }),
        })
    }
}
