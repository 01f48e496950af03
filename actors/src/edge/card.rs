//! Agent cards, made from an agent's descriptor and the edge's configuration.

use std::collections::BTreeMap;

use std::net::{IpAddr, SocketAddr};

use agentyard_transport::a2a::{
    AgentCapabilities, AgentCard, AgentExtension, AgentInterface, ApiKeyLocation,
    ApiKeySecurityScheme, HttpAuthSecurityScheme, SecurityRequirement, SecurityScheme,
    TransportProtocol,
};
use agentyard_transport::handoff::HANDOFF_EXTENSION_URI;

use super::config::{AgentSettings, EdgeAuth, EdgeConfig};
use crate::agent::AgentDescriptor;

/// The handoff extension as every card declares it: optional, so that clients that
/// only speak free text keep working.
#[must_use]
pub fn handoff_extension() -> AgentExtension {
    AgentExtension {
        uri: HANDOFF_EXTENSION_URI.to_owned(),
        description: Some(
            "Typed handoff payloads (task_delegation, status_report, question, answer) in a \
             DataPart beside the free text; activate with X-A2A-Extensions"
                .to_owned(),
        ),
        required: Some(false),
        params: None,
    }
}

/// The JSON-RPC endpoint of an agent under a base URL.
#[must_use]
pub fn agent_url(base_url: &str, agent: &str) -> String {
    format!("{}/agents/{agent}", base_url.trim_end_matches('/'))
}

/// The interfaces an agent is served at, in the order of `bindings`: JSON-RPC and
/// HTTP+JSON at `url` (the agent's base URL), gRPC at `grpc_url` when it is given
/// (the gRPC listener's; without it gRPC is not listed). Bindings A2A does not
/// define are skipped.
#[must_use]
pub fn interfaces(
    bindings: &[TransportProtocol],
    url: &str,
    grpc_url: Option<&str>,
) -> Vec<AgentInterface> {
    bindings
        .iter()
        .filter_map(|binding| {
            let url = match binding {
                TransportProtocol::JsonRpc | TransportProtocol::HttpJson => url,
                TransportProtocol::Grpc => grpc_url?,
                TransportProtocol::Other(_) => return None,
            };
            Some(AgentInterface {
                url: url.to_owned(),
                transport: binding.clone(),
            })
        })
        .collect()
}

/// Puts `interfaces` on `card`: the first is its `url` and `preferredTransport`,
/// and all of them (the first too, as 0.3 clients expect) its
/// `additionalInterfaces`. The 1.0 card lists each once per protocol version, 1.0
/// first ([`v1::AgentCard::for_versions`](agentyard_transport::a2a::v1::AgentCard::for_versions)).
/// Nothing changes when `interfaces` is empty.
pub fn set_interfaces(card: &mut AgentCard, interfaces: Vec<AgentInterface>) {
    let Some(first) = interfaces.first() else {
        return;
    };
    card.url.clone_from(&first.url);
    card.preferred_transport = Some(first.transport.clone());
    card.additional_interfaces = Some(interfaces);
}

/// The gRPC interface of an edge bound at `addr`, as gRPC clients dial it:
/// `host:port`, the host being the public URL's (`base_url` is it when one is
/// configured), else the bound address's, else (bound to an unspecified address)
/// the HTTP listener's; an unspecified address stays as it is until a request's
/// `Host` replaces it ([`SupervisorService::card_at`](super::SupervisorService)).
#[must_use]
pub(super) fn grpc_url(config: &EdgeConfig, base_url: &str, addr: SocketAddr) -> String {
    let public_host = config
        .public_url
        .as_ref()
        .and_then(|_| reqwest::Url::parse(base_url).ok())
        .and_then(|url| url.host_str().map(str::to_owned));
    let host = match public_host {
        Some(host) => host,
        None if addr.ip().is_unspecified() && !config.bind.ip().is_unspecified() => {
            host_of(config.bind.ip())
        }
        None => host_of(addr.ip()),
    };
    format!("{host}:{}", addr.port())
}

/// An IP address as the host of a URL (IPv6 in brackets).
fn host_of(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    }
}

/// The `securitySchemes` and `security` of every card: one scheme per kind of
/// credential the operator configured, any one of them sufficing. `None` when calls
/// need no credentials.
#[must_use]
pub fn security(
    auth: &EdgeAuth,
) -> Option<(BTreeMap<String, SecurityScheme>, Vec<SecurityRequirement>)> {
    if !auth.is_required() {
        return None;
    }
    let mut schemes = BTreeMap::new();
    let mut requirements = Vec::new();
    if !auth.api_keys.is_empty() {
        schemes.insert(
            EdgeAuth::API_KEY_SCHEME.to_owned(),
            SecurityScheme::ApiKey(ApiKeySecurityScheme {
                location: ApiKeyLocation::Header,
                name: auth.header().to_owned(),
                description: Some("An API key issued by the operator".to_owned()),
            }),
        );
        requirements.push(BTreeMap::from([(
            EdgeAuth::API_KEY_SCHEME.to_owned(),
            Vec::new(),
        )]));
    }
    if !auth.bearer_tokens.is_empty() {
        schemes.insert(
            EdgeAuth::BEARER_SCHEME.to_owned(),
            SecurityScheme::Http(HttpAuthSecurityScheme {
                scheme: "bearer".to_owned(),
                bearer_format: None,
                description: Some("A bearer token issued by the operator".to_owned()),
            }),
        );
        requirements.push(BTreeMap::from([(
            EdgeAuth::BEARER_SCHEME.to_owned(),
            Vec::new(),
        )]));
    }
    Some((schemes, requirements))
}

/// An exposed agent's public card.
#[must_use]
pub fn public_card(
    descriptor: &AgentDescriptor,
    settings: &AgentSettings,
    config: &EdgeConfig,
    base_url: &str,
) -> AgentCard {
    let description = if descriptor.description.trim().is_empty() {
        format!("agentyard agent `{}`", descriptor.name)
    } else {
        descriptor.description.clone()
    };
    let url = agent_url(base_url, &descriptor.name);
    let mut card = AgentCard::new(
        descriptor.name.clone(),
        description,
        url.clone(),
        descriptor.version.clone(),
    );
    // gRPC is listed once the edge serves it and knows its listener's URL.
    set_interfaces(&mut card, interfaces(&config.bindings, &url, None));
    card.provider = settings
        .provider
        .clone()
        .or_else(|| config.provider.clone());
    card.documentation_url
        .clone_from(&settings.documentation_url);
    card.icon_url.clone_from(&settings.icon_url);
    card.skills.clone_from(&descriptor.skills);
    card.default_input_modes.clone_from(&descriptor.input_modes);
    card.default_output_modes
        .clone_from(&descriptor.output_modes);
    let mut extensions = vec![handoff_extension()];
    extensions.extend(
        settings
            .extensions
            .iter()
            .filter(|extension| extension.uri != HANDOFF_EXTENSION_URI)
            .cloned(),
    );
    card.capabilities = AgentCapabilities {
        streaming: Some(true),
        push_notifications: Some(config.push.enabled),
        state_transition_history: Some(false),
        extensions: Some(extensions),
    };
    if let Some((schemes, requirements)) = security(&config.auth) {
        card.security_schemes = Some(schemes);
        card.security = Some(requirements);
    }
    if settings.extended_skills.is_some() {
        card.supports_authenticated_extended_card = Some(true);
    }
    card
}

/// The authenticated extended card: the public card with the extra skills, or `None`
/// when the agent offers none.
#[must_use]
pub fn extended_card(public: &AgentCard, settings: &AgentSettings) -> Option<AgentCard> {
    let extra = settings.extended_skills.as_ref()?;
    let mut card = public.clone();
    card.skills.extend(extra.iter().cloned());
    Some(card)
}

#[cfg(test)]
mod tests;
