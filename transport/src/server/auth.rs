//! Checks a request's credentials against what the agent's card requires.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

use super::config::{AuthConfig, Credential};
use crate::a2a::{AgentCard, ApiKeyLocation, SecurityScheme};
use crate::service::Principal;

/// Why a protected agent refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unauthorized {
    /// What the caller should present, for the message and the `WWW-Authenticate`
    /// header.
    pub(crate) challenges: Vec<Challenge>,
    /// True when the caller presented a credential for one of the schemes and it did
    /// not match, as opposed to presenting none.
    pub(crate) bad_credential: bool,
}

impl Unauthorized {
    /// What the caller is told: what it presented (nothing, or a credential that
    /// does not match) and what `agent` accepts. Every binding sends this text.
    pub(crate) fn detail(&self, agent: &str) -> String {
        let options = self
            .challenges
            .iter()
            .map(Challenge::describe)
            .collect::<Vec<_>>()
            .join(" or ");
        match (self.bad_credential, options.is_empty()) {
            (_, true) => format!(
                "agent `{agent}` requires authentication, but its card declares no scheme this \
                 server can check"
            ),
            (true, false) => {
                format!(
                    "the credential presented is not valid for agent `{agent}`; it accepts {options}"
                )
            }
            (false, false) => {
                format!("agent `{agent}` requires authentication: present {options}")
            }
        }
    }
}

/// A credential the server would accept for an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Challenge {
    /// An API key in the named header, for the scheme of that name.
    ApiKey { scheme: String, header: String },
    /// A bearer token, for the scheme of that name.
    Bearer { scheme: String },
}

impl Challenge {
    /// The `WWW-Authenticate` value for this challenge (RFC 9110 §11.6.1). API keys
    /// have no registered HTTP scheme, so `ApiKey` with a `header` parameter says where
    /// the key goes.
    pub(crate) fn header_value(&self, realm: &str) -> String {
        let realm = quote(realm);
        match self {
            Self::ApiKey { scheme, header } => format!(
                "ApiKey realm={realm}, header={}, scheme={}",
                quote(header),
                quote(scheme)
            ),
            Self::Bearer { scheme } => format!("Bearer realm={realm}, scheme={}", quote(scheme)),
        }
    }

    /// How the challenge reads in an error message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::ApiKey { scheme, header } => {
                format!("an API key in header `{header}` (scheme `{scheme}`)")
            }
            Self::Bearer { scheme } => {
                format!("a bearer token in `Authorization` (scheme `{scheme}`)")
            }
        }
    }

    /// The security scheme's name.
    pub(crate) fn scheme(&self) -> &str {
        match self {
            Self::ApiKey { scheme, .. } | Self::Bearer { scheme } => scheme,
        }
    }
}

/// An HTTP quoted-string.
pub(crate) fn quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            quoted.push('\\');
        }
        // Control characters cannot appear in a header value; drop them.
        if !c.is_control() {
            quoted.push(c);
        }
    }
    quoted.push('"');
    quoted
}

/// Who is calling an agent, as far as the card's schemes and the configured
/// credentials tell.
///
/// An agent whose card lists no `security` requirement (or lists an empty one, which
/// OpenAPI reads as "no authentication needed") is open: the result is the principal
/// of any declared scheme the request satisfies, or `None`. A protected agent needs
/// one requirement whose schemes the request all satisfies; the principal is that of
/// the requirement's first scheme.
///
/// # Errors
///
/// [`Unauthorized`] for a protected agent when no requirement is met.
pub(crate) fn authenticate(
    card: &AgentCard,
    auth: &AuthConfig,
    headers: &HeaderMap,
) -> Result<Option<Principal>, Unauthorized> {
    let requirements = card.security.as_deref().unwrap_or_default();
    let open = requirements.is_empty() || requirements.iter().any(|r| r.is_empty());
    if open {
        let declared = card
            .security_schemes
            .iter()
            .flat_map(|schemes| schemes.keys());
        return Ok(declared
            .filter_map(|scheme| check_scheme(card, auth, headers, scheme).principal)
            .next());
    }
    let mut bad_credential = false;
    for requirement in requirements {
        let mut principal = None;
        let mut met = true;
        for scheme in requirement.keys() {
            let check = check_scheme(card, auth, headers, scheme);
            bad_credential |= check.presented && check.principal.is_none();
            match check.principal {
                Some(found) => {
                    principal.get_or_insert(found);
                }
                None => met = false,
            }
        }
        if met {
            return Ok(principal);
        }
    }
    let mut challenges: Vec<Challenge> = Vec::new();
    for scheme in requirements.iter().flat_map(|r| r.keys()) {
        if let Some(challenge) = challenge(card, scheme)
            && !challenges.contains(&challenge)
        {
            challenges.push(challenge);
        }
    }
    Err(Unauthorized {
        challenges,
        bad_credential,
    })
}

/// The challenges for every scheme the card declares, for a call that needs a
/// principal on an open agent.
pub(crate) fn declared_challenges(card: &AgentCard) -> Vec<Challenge> {
    card.security_schemes
        .iter()
        .flat_map(|schemes| schemes.keys())
        .filter_map(|scheme| challenge(card, scheme))
        .collect()
}

fn challenge(card: &AgentCard, scheme: &str) -> Option<Challenge> {
    match card.security_schemes.as_ref()?.get(scheme)? {
        SecurityScheme::ApiKey(key) if key.location == ApiKeyLocation::Header => {
            Some(Challenge::ApiKey {
                scheme: scheme.to_owned(),
                header: key.name.clone(),
            })
        }
        SecurityScheme::Http(http) if http.scheme.eq_ignore_ascii_case("bearer") => {
            Some(Challenge::Bearer {
                scheme: scheme.to_owned(),
            })
        }
        _ => None,
    }
}

/// The outcome of checking one scheme.
struct SchemeCheck {
    /// Whether the request carried something where the scheme looks.
    presented: bool,
    /// Whom the credential authenticates, if it matched.
    principal: Option<Principal>,
}

fn check_scheme(
    card: &AgentCard,
    auth: &AuthConfig,
    headers: &HeaderMap,
    scheme: &str,
) -> SchemeCheck {
    let nothing = SchemeCheck {
        presented: false,
        principal: None,
    };
    let Some(challenge) = challenge(card, scheme) else {
        if card
            .security_schemes
            .as_ref()
            .is_none_or(|schemes| !schemes.contains_key(scheme))
        {
            tracing::warn!(
                agent = %card.name,
                scheme,
                "the card's security names a scheme it does not declare; no request can meet it"
            );
        }
        return nothing;
    };
    let (presented, credentials) = match &challenge {
        Challenge::ApiKey { header, .. } => (
            headers.get(header).and_then(|value| value.to_str().ok()),
            &auth.api_keys,
        ),
        Challenge::Bearer { .. } => (bearer_token(headers), &auth.bearer_tokens),
    };
    let Some(presented) = presented else {
        return nothing;
    };
    SchemeCheck {
        presented: true,
        principal: matching(credentials, scheme, presented)
            .map(|credential| Principal::new(credential.principal.clone(), scheme)),
    }
}

/// The token of an `Authorization: Bearer <token>` header (the scheme name is
/// case-insensitive, RFC 9110 §11.1).
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

fn matching<'a>(
    credentials: &'a [Credential],
    scheme: &str,
    presented: &str,
) -> Option<&'a Credential> {
    credentials
        .iter()
        .filter(|credential| credential.scheme == scheme)
        .find(|credential| constant_time_eq(credential.secret.as_bytes(), presented.as_bytes()))
}

/// Compares secrets in time that depends only on their lengths, so response timing
/// does not reveal how much of a guessed key was right. Hand-written because it is
/// five lines and the only constant-time operation the crate needs.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_compares_whole_secrets() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret!"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn bearer_scheme_name_is_case_insensitive_and_token_is_trimmed() {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, "bEaReR   tok-1 ".parse().unwrap());
        assert_eq!(bearer_token(&headers), Some("tok-1"));
        headers.insert(AUTHORIZATION, "Basic dXNlcjpwYXNz".parse().unwrap());
        assert_eq!(bearer_token(&headers), None);
        headers.insert(AUTHORIZATION, "Bearer ".parse().unwrap());
        assert_eq!(bearer_token(&headers), None);
    }

    #[test]
    fn challenge_values_escape_quotes() {
        let challenge = Challenge::Bearer {
            scheme: "be\"arer".to_owned(),
        };
        assert_eq!(
            challenge.header_value("a\\b"),
            r#"Bearer realm="a\\b", scheme="be\"arer""#
        );
    }
}
