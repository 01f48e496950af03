//! Extension negotiation: which of the URIs a client asks for (`X-A2A-Extensions`
//! or `A2A-Extensions`) the agent activates, and which required ones it did not ask for.

use axum::http::header::AsHeaderName;
use axum::http::{HeaderMap, HeaderValue};

use crate::a2a::AgentCard;

/// The extension URIs a request asks for, in order, from every line of the headers
/// `names` (in that order): comma-separated, surrounding whitespace ignored, empty
/// items and values that are not visible ASCII skipped, duplicates dropped.
pub(crate) fn requested<K: AsHeaderName + Copy>(headers: &HeaderMap, names: &[K]) -> Vec<String> {
    requested_in(names.iter().flat_map(|name| headers.get_all(*name).iter()))
}

/// [`requested`] of header lines already looked up, in order.
pub(crate) fn requested_in<'a>(lines: impl Iterator<Item = &'a HeaderValue>) -> Vec<String> {
    let mut uris: Vec<String> = Vec::new();
    let values = lines.filter_map(|value| value.to_str().ok());
    for uri in values.flat_map(|value| value.split(',')).map(str::trim) {
        if !uri.is_empty() && !uris.iter().any(|known| known == uri) {
            uris.push(uri.to_owned());
        }
    }
    uris
}

/// The requested URIs the card declares in `capabilities.extensions`, in request
/// order. Matching is exact: a client asking for `/v2` of an extension the agent
/// has as `/v1` gets nothing, as the extensions spec requires (no fallback between
/// versions).
pub(crate) fn activate(card: &AgentCard, requested: Vec<String>) -> Vec<String> {
    let declared = card.capabilities.extensions.as_deref().unwrap_or_default();
    requested
        .into_iter()
        .filter(|uri| declared.iter().any(|extension| &extension.uri == uri))
        .collect()
}

/// The extensions the card marks `required` that are not in `activated`.
pub(crate) fn missing_required<'a>(card: &'a AgentCard, activated: &[String]) -> Vec<&'a str> {
    card.capabilities
        .extensions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .filter(|extension| extension.required == Some(true))
        .map(|extension| extension.uri.as_str())
        .filter(|uri| !activated.iter().any(|active| active == uri))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::AgentExtension;

    fn extension(uri: &str, required: bool) -> AgentExtension {
        AgentExtension {
            uri: uri.to_owned(),
            description: None,
            required: Some(required),
            params: None,
        }
    }

    fn card() -> AgentCard {
        let mut card = AgentCard::new("a", "test", "http://localhost/", "1");
        card.capabilities.extensions = Some(vec![
            extension("urn:ext:one", false),
            extension("urn:ext:two", true),
        ]);
        card
    }

    #[test]
    fn requested_reads_every_header_line_and_tolerates_whitespace() {
        let mut headers = HeaderMap::new();
        headers.append(
            super::super::EXTENSIONS_HEADER,
            " urn:a ,urn:b,, ".parse().unwrap(),
        );
        headers.append(
            super::super::EXTENSIONS_HEADER,
            "urn:c,urn:a".parse().unwrap(),
        );
        let names = [super::super::EXTENSIONS_HEADER];
        assert_eq!(requested(&headers, &names), ["urn:a", "urn:b", "urn:c"]);
        assert!(requested(&HeaderMap::new(), &names).is_empty());
    }

    #[test]
    fn requested_reads_both_spellings_in_the_order_given() {
        let mut headers = HeaderMap::new();
        headers.append(super::super::EXTENSIONS_HEADER, "urn:a".parse().unwrap());
        headers.append(
            super::super::V1_EXTENSIONS_HEADER,
            "urn:b, urn:a".parse().unwrap(),
        );
        let both = [
            super::super::EXTENSIONS_HEADER,
            super::super::V1_EXTENSIONS_HEADER,
        ];
        assert_eq!(requested(&headers, &both), ["urn:a", "urn:b"]);
        assert_eq!(
            requested(&headers, &[super::super::V1_EXTENSIONS_HEADER]),
            ["urn:b", "urn:a"]
        );
    }

    #[test]
    fn activate_keeps_only_declared_uris_in_request_order() {
        let requested = vec![
            "urn:ext:two".to_owned(),
            "urn:unknown".to_owned(),
            "urn:ext:one".to_owned(),
            "urn:ext:one/v2".to_owned(),
        ];
        assert_eq!(activate(&card(), requested), ["urn:ext:two", "urn:ext:one"]);
    }

    #[test]
    fn missing_required_names_required_extensions_not_activated() {
        let card = card();
        assert_eq!(missing_required(&card, &[]), ["urn:ext:two"]);
        assert!(missing_required(&card, &["urn:ext:two".to_owned()]).is_empty());
    }
}
