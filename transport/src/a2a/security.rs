//! How a client authenticates to an agent: OpenAPI 3.0 style security
//! schemes, as declared in the agent card.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::tagged::{from_object, tagged, take_tag};

/// A security requirement: scheme names mapped to the scopes each needs. All
/// schemes in one requirement apply together; a list of requirements is a
/// choice between them.
pub type SecurityRequirement = BTreeMap<String, Vec<String>>;

/// One way to authenticate, told apart by its `type`.
///
/// Schema: `SecurityScheme` and, through its variants, `SecuritySchemeBase`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SecurityScheme {
    /// `"type": "apiKey"`.
    ApiKey(ApiKeySecurityScheme),
    /// `"type": "http"`.
    Http(HttpAuthSecurityScheme),
    /// `"type": "oauth2"`; boxed because its four optional flows make it
    /// several times larger than the other variants.
    OAuth2(Box<OAuth2SecurityScheme>),
    /// `"type": "openIdConnect"`.
    OpenIdConnect(OpenIdConnectSecurityScheme),
    /// `"type": "mutualTLS"`.
    MutualTls(MutualTlsSecurityScheme),
}

impl<'de> Deserialize<'de> for SecurityScheme {
    fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        let (tag, object) = take_tag(
            deserializer,
            "type",
            &["apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"],
        )?;
        match tag.as_str() {
            "apiKey" => from_object(object).map(Self::ApiKey),
            "http" => from_object(object).map(Self::Http),
            "oauth2" => from_object(object).map(|scheme| Self::OAuth2(Box::new(scheme))),
            "openIdConnect" => from_object(object).map(Self::OpenIdConnect),
            _ => from_object(object).map(Self::MutualTls),
        }
    }
}

/// Where an API key is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiKeyLocation {
    /// In a cookie.
    Cookie,
    /// In a request header.
    Header,
    /// In a query parameter.
    Query,
}

tagged! {
    "type" = "apiKey", wire = ApiKeySecuritySchemeWire,
    expecting = "an APIKeySecurityScheme object";
    /// An API key in a header, query parameter or cookie.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ApiKeySecurityScheme {
        /// Where the key goes.
        #[serde(rename = "in")]
        pub location: ApiKeyLocation,
        /// The header, query parameter or cookie name, e.g. `X-API-Key`.
        pub name: String,
        /// A description of the scheme.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
    }
}

tagged! {
    "type" = "http", wire = HttpAuthSecuritySchemeWire,
    expecting = "an HTTPAuthSecurityScheme object";
    /// HTTP authentication (RFC 7235), e.g. `Bearer`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct HttpAuthSecurityScheme {
        /// The scheme name in the `Authorization` header, e.g. `"bearer"`.
        pub scheme: String,
        /// How the bearer token is formatted, e.g. `"JWT"` (documentation only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub bearer_format: Option<String>,
        /// A description of the scheme.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
    }
}

tagged! {
    "type" = "oauth2", wire = OAuth2SecuritySchemeWire,
    expecting = "an OAuth2SecurityScheme object";
    /// OAuth 2.0 with one or more flows.
    #[derive(Clone, Debug, PartialEq)]
    pub struct OAuth2SecurityScheme {
        /// The flows the agent supports.
        pub flows: OAuthFlows,
        /// The authorization server's metadata URL (RFC 8414).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub oauth2_metadata_url: Option<String>,
        /// A description of the scheme.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
    }
}

tagged! {
    "type" = "openIdConnect", wire = OpenIdConnectSecuritySchemeWire,
    expecting = "an OpenIdConnectSecurityScheme object";
    /// OpenID Connect discovery.
    #[derive(Clone, Debug, PartialEq)]
    pub struct OpenIdConnectSecurityScheme {
        /// The provider's discovery document URL.
        pub open_id_connect_url: String,
        /// A description of the scheme.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
    }
}

tagged! {
    "type" = "mutualTLS", wire = MutualTlsSecuritySchemeWire,
    expecting = "a MutualTLSSecurityScheme object";
    /// Mutual TLS: the client presents a certificate.
    #[derive(Clone, Debug, PartialEq, Default)]
    pub struct MutualTlsSecurityScheme {
        /// A description of the scheme.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub description: Option<String>,
    }
}

/// The OAuth 2.0 flows an [`OAuth2SecurityScheme`] supports; at least one is
/// normally present.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthFlows {
    /// The authorization code flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_code: Option<AuthorizationCodeOAuthFlow>,
    /// The client credentials flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_credentials: Option<ClientCredentialsOAuthFlow>,
    /// The implicit flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implicit: Option<ImplicitOAuthFlow>,
    /// The resource owner password flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<PasswordOAuthFlow>,
}

/// OAuth scopes: scope name mapped to a short description.
pub type OAuthScopes = BTreeMap<String, String>;

/// The OAuth 2.0 authorization code flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationCodeOAuthFlow {
    /// The authorization endpoint.
    pub authorization_url: String,
    /// The token endpoint.
    pub token_url: String,
    /// The endpoint for refresh tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// The available scopes (may be empty).
    pub scopes: OAuthScopes,
}

/// The OAuth 2.0 client credentials flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCredentialsOAuthFlow {
    /// The token endpoint.
    pub token_url: String,
    /// The endpoint for refresh tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// The available scopes (may be empty).
    pub scopes: OAuthScopes,
}

/// The OAuth 2.0 implicit flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImplicitOAuthFlow {
    /// The authorization endpoint.
    pub authorization_url: String,
    /// The endpoint for refresh tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// The available scopes (may be empty).
    pub scopes: OAuthScopes,
}

/// The OAuth 2.0 resource owner password flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordOAuthFlow {
    /// The token endpoint.
    pub token_url: String,
    /// The endpoint for refresh tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_url: Option<String>,
    /// The available scopes (may be empty).
    pub scopes: OAuthScopes,
}
