use std::net::SocketAddr;

use agentyard_transport::a2a::{AgentProvider, AgentSkill, SecurityScheme, TransportProtocol};
use serde_json::json;

use super::*;
use crate::edge::PushConfig;

fn descriptor() -> AgentDescriptor {
    AgentDescriptor::new("echo")
        .description("Repeats what you say")
        .version("1.2.3")
        .skill(AgentSkill::new("echo", "Echo", "Says it back"))
        .modes(vec!["text/plain".into()], vec!["text/plain".into()])
        .expose()
}

#[test]
fn the_card_comes_from_the_descriptor_and_the_config() {
    let config = EdgeConfig::default().provider(AgentProvider {
        organization: "Example".to_owned(),
        url: "https://example.com".to_owned(),
    });
    let card = public_card(
        &descriptor(),
        &AgentSettings::default(),
        &config,
        "https://agents.example.com/",
    );
    assert_eq!(card.protocol_version, "0.3.0");
    assert_eq!(card.preferred_transport, Some(TransportProtocol::JsonRpc));
    assert_eq!(card.url, "https://agents.example.com/agents/echo");
    assert_eq!(card.name, "echo");
    assert_eq!(card.description, "Repeats what you say");
    assert_eq!(card.version, "1.2.3");
    assert_eq!(card.skills.len(), 1);
    assert_eq!(card.default_input_modes, ["text/plain"]);
    assert_eq!(card.default_output_modes, ["text/plain"]);
    assert_eq!(
        card.provider.map(|p| p.organization).as_deref(),
        Some("Example")
    );
    assert_eq!(card.capabilities.streaming, Some(true));
    assert_eq!(card.capabilities.push_notifications, Some(true));
    assert!(card.security_schemes.is_none() && card.security.is_none());
    assert!(card.supports_authenticated_extended_card.is_none());
}

#[test]
fn every_card_declares_the_handoff_extension_once_and_not_required() {
    let settings = AgentSettings::default()
        .extension(handoff_extension())
        .extension(AgentExtension {
            uri: "https://example.com/ext/other/v1".to_owned(),
            description: None,
            required: Some(true),
            params: None,
        });
    let card = public_card(&descriptor(), &settings, &EdgeConfig::default(), "http://h");
    let extensions = card.capabilities.extensions.unwrap_or_default();
    let uris: Vec<&str> = extensions.iter().map(|e| e.uri.as_str()).collect();
    assert_eq!(
        uris,
        [HANDOFF_EXTENSION_URI, "https://example.com/ext/other/v1"]
    );
    assert_eq!(extensions[0].required, Some(false));
    assert_eq!(extensions[1].required, Some(true));
}

#[test]
fn push_off_shows_on_the_card() {
    let config = EdgeConfig::default().push(PushConfig::disabled());
    let card = public_card(
        &descriptor(),
        &AgentSettings::default(),
        &config,
        "http://h",
    );
    assert_eq!(card.capabilities.push_notifications, Some(false));
}

#[test]
fn an_empty_description_is_replaced_by_one_naming_the_agent() {
    let card = public_card(
        &AgentDescriptor::new("quiet").expose(),
        &AgentSettings::default(),
        &EdgeConfig::default(),
        "http://h",
    );
    assert_eq!(card.description, "agentyard agent `quiet`");
}

#[test]
fn configured_credentials_become_the_cards_security() {
    let auth = EdgeAuth::default()
        .api_key("k-1", "alice")
        .bearer_token("t-1", "bob")
        .api_key_header("X-Agent-Key");
    let config = EdgeConfig::default().auth(auth);
    let card = public_card(
        &descriptor(),
        &AgentSettings::default(),
        &config,
        "http://h",
    );
    let value = serde_json::to_value(&card).unwrap_or_default();
    assert_eq!(
        value["securitySchemes"],
        json!({
            "apiKey": {"type": "apiKey", "in": "header", "name": "X-Agent-Key",
                       "description": "An API key issued by the operator"},
            "bearer": {"type": "http", "scheme": "bearer",
                       "description": "A bearer token issued by the operator"},
        })
    );
    assert_eq!(value["security"], json!([{"apiKey": []}, {"bearer": []}]));
    assert!(matches!(
        card.security_schemes.as_ref().and_then(|s| s.get("apiKey")),
        Some(SecurityScheme::ApiKey(_))
    ));
}

#[test]
fn secrets_do_not_appear_in_debug_output() {
    let auth = EdgeAuth::default()
        .api_key("super-secret-key", "alice")
        .bearer_token("super-secret-token", "bob");
    let debug = format!("{auth:?}");
    assert!(!debug.contains("super-secret"), "{debug}");
    assert!(debug.contains("alice") && debug.contains("bob"), "{debug}");
}

#[test]
fn the_extended_card_adds_skills_and_is_announced() {
    let settings = AgentSettings::default().extended_skills(vec![AgentSkill::new(
        "admin",
        "Admin",
        "Operator tools",
    )]);
    let public = public_card(&descriptor(), &settings, &EdgeConfig::default(), "http://h");
    assert_eq!(public.supports_authenticated_extended_card, Some(true));
    let extended = extended_card(&public, &settings).expect("configured");
    let ids: Vec<&str> = extended.skills.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["echo", "admin"]);
    assert!(extended_card(&public, &AgentSettings::default()).is_none());
}

#[test]
fn the_card_lists_every_binding_served_in_the_configured_order_1_0_first() {
    use agentyard_transport::a2a::v1::{self, ProtocolVersion};
    let listed = |config: &EdgeConfig| {
        let card = public_card(&descriptor(), &AgentSettings::default(), config, "http://h");
        let wire = v1::AgentCard::for_versions(card.clone(), &ProtocolVersion::ALL);
        let interfaces: Vec<(String, String, String)> = wire
            .supported_interfaces
            .into_iter()
            .map(|i| (i.protocol_binding, i.protocol_version, i.url))
            .collect();
        (card, interfaces)
    };
    let url = "http://h/agents/echo".to_owned();
    let entry =
        |binding: &str, version: &str| (binding.to_owned(), version.to_owned(), url.clone());
    let (card, interfaces) = listed(&EdgeConfig::default());
    assert_eq!(card.preferred_transport, Some(TransportProtocol::JsonRpc));
    assert_eq!(
        interfaces,
        [
            entry("JSONRPC", "1.0"),
            entry("JSONRPC", "0.3"),
            entry("HTTP+JSON", "1.0"),
            entry("HTTP+JSON", "0.3"),
        ]
    );
    // REST preferred, JSON-RPC off: only HTTP+JSON, as the card's own url too.
    let config =
        EdgeConfig::default().bindings([TransportProtocol::HttpJson, TransportProtocol::Grpc]);
    let (card, interfaces) = listed(&config);
    assert_eq!(card.preferred_transport, Some(TransportProtocol::HttpJson));
    assert_eq!(card.url, url);
    assert_eq!(
        interfaces,
        [entry("HTTP+JSON", "1.0"), entry("HTTP+JSON", "0.3")]
    );
    // gRPC appears in its place once its URL is known.
    let with_grpc = interfaces_of(
        &[
            TransportProtocol::HttpJson,
            TransportProtocol::Grpc,
            TransportProtocol::JsonRpc,
        ],
        Some("http://h:50051"),
    );
    assert_eq!(with_grpc, ["HTTP+JSON", "GRPC", "JSONRPC"]);
}

fn interfaces_of(bindings: &[TransportProtocol], grpc: Option<&str>) -> Vec<String> {
    interfaces(bindings, "http://h/agents/echo", grpc)
        .into_iter()
        .map(|i| i.transport.as_str().to_owned())
        .collect()
}

#[test]
fn the_grpc_interface_is_named_as_clients_dial_it() {
    let addr = |text: &str| -> SocketAddr { text.parse().expect("an address") };
    let plain = EdgeConfig::default().bind(addr("127.0.0.1:8080"));
    assert_eq!(
        grpc_url(&plain, "http://127.0.0.1:8080", addr("127.0.0.1:50051")),
        "127.0.0.1:50051"
    );
    let public = EdgeConfig::default()
        .bind(addr("0.0.0.0:8080"))
        .public_url("https://agents.example.com");
    assert_eq!(
        grpc_url(&public, "https://agents.example.com", addr("0.0.0.0:50051")),
        "agents.example.com:50051",
        "the public URL's host"
    );
    assert_eq!(
        grpc_url(&plain, "http://127.0.0.1:8080", addr("0.0.0.0:7000")),
        "127.0.0.1:7000",
        "gRPC on every address, HTTP on one: that one"
    );
    let v6 = EdgeConfig::default().bind(addr("[::1]:8080"));
    assert_eq!(
        grpc_url(&v6, "http://[::1]:8080", addr("[::1]:50051")),
        "[::1]:50051"
    );
}
