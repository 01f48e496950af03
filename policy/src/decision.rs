//! What a policy answers: allow, or deny with a reason.

use std::fmt;
use std::time::Duration;

use crate::SendRequest;

/// The answer to "may this send go ahead?".
///
/// A decision rather than a `bool` so that a refusal always carries its
/// [`Rejection`]: the supervisor puts the reason in the `policy_rejected` event and
/// hands it to the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a policy decision that is not looked at lets every send through"]
pub enum Decision {
    /// The send may go ahead.
    Allow,
    /// The send must not run.
    Deny(Rejection),
}

impl Decision {
    /// Whether the send may go ahead.
    #[must_use]
    pub const fn is_allowed(&self) -> bool {
        matches!(self, Self::Allow)
    }

    /// The rejection, if the send was denied.
    #[must_use]
    pub const fn rejection(&self) -> Option<&Rejection> {
        match self {
            Self::Allow => None,
            Self::Deny(rejection) => Some(rejection),
        }
    }

    /// Runs the next check only if this one allowed the send: the first denial wins
    /// and later checks (such as a rate limit that would consume a token) never run.
    pub fn and_then(self, next: impl FnOnce() -> Self) -> Self {
        match self {
            Self::Allow => next(),
            deny @ Self::Deny(_) => deny,
        }
    }

    /// `Ok(())` when allowed, so a caller can use `?`.
    ///
    /// # Errors
    ///
    /// The [`Rejection`] when the send was denied.
    pub fn into_result(self) -> Result<(), Rejection> {
        match self {
            Self::Allow => Ok(()),
            Self::Deny(rejection) => Err(rejection),
        }
    }
}

/// Why a send was refused, in a form a program can branch on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RejectionKind {
    /// A deny rule matched first.
    RuleDenied {
        /// The rule's position in the rule list (0-based, as in `rules[2]`).
        index: usize,
        /// The rule as written: its name if it has one, otherwise its matchers.
        rule: String,
    },
    /// No rule matched and the default is deny.
    DefaultDeny,
    /// The sender ran out of rate-limit tokens.
    RateLimited {
        /// How long until a token is available again (rounded up to the nanosecond,
        /// so a retry after exactly this long succeeds if nothing else was sent).
        retry_after: Duration,
    },
    /// The send is more delegations deep than the hop limit allows, which usually
    /// means agents are delegating in a loop (A → B → A → …).
    HopLimitExceeded {
        /// How deep the send was.
        hops: u32,
        /// The largest depth allowed.
        limit: u32,
    },
    /// Refused by a custom [`Policy`](crate::Policy) for its own reason.
    Custom {
        /// A short machine-readable code, e.g. `"outside_office_hours"`.
        code: String,
    },
}

impl RejectionKind {
    /// A short machine-readable code for events and metrics: `"rule_denied"`,
    /// `"default_deny"`, `"rate_limited"`, `"hop_limit_exceeded"`, or a custom code.
    #[must_use]
    pub fn code(&self) -> &str {
        match self {
            Self::RuleDenied { .. } => "rule_denied",
            Self::DefaultDeny => "default_deny",
            Self::RateLimited { .. } => "rate_limited",
            Self::HopLimitExceeded { .. } => "hop_limit_exceeded",
            Self::Custom { code } => code,
        }
    }
}

/// A refused send: what kind of refusal, and a reason a person can read.
///
/// `Display` writes the reason, which names the send and what was wrong with it.
///
/// ```
/// use agentyard_policy::{EntryPoint, Rejection, RejectionKind, SendRequest};
///
/// let req = SendRequest::new("billing", EntryPoint::Http).from("mallory");
/// let rejection = Rejection::for_request(RejectionKind::DefaultDeny, &req);
/// assert_eq!(
///     rejection.to_string(),
///     "send from `mallory` to `billing` via http denied: no rule allows it and the default is deny",
/// );
/// assert_eq!(rejection.kind().code(), "default_deny");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    kind: RejectionKind,
    reason: String,
}

impl Rejection {
    /// A rejection with a reason written by the caller.
    #[must_use]
    pub fn new(kind: RejectionKind, reason: impl Into<String>) -> Self {
        Self {
            kind,
            reason: reason.into(),
        }
    }

    /// A rejection of `req` whose reason is the request followed by the kind's
    /// explanation.
    #[must_use]
    pub fn for_request(kind: RejectionKind, req: &SendRequest<'_>) -> Self {
        let reason = format!("{req} denied: {}", Explain(&kind));
        Self { kind, reason }
    }

    /// What kind of refusal this is.
    #[must_use]
    pub const fn kind(&self) -> &RejectionKind {
        &self.kind
    }

    /// The reason a person can read.
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// How long to wait before retrying, for a rate-limited send.
    #[must_use]
    pub const fn retry_after(&self) -> Option<Duration> {
        match self.kind {
            RejectionKind::RateLimited { retry_after } => Some(retry_after),
            _ => None,
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// A rejection is what a caller gets back instead of a reply, so it can travel as an
/// error (`Box<dyn Error>`, `?`).
impl std::error::Error for Rejection {}

/// The kind's half of a reason, after "… denied: ".
struct Explain<'a>(&'a RejectionKind);

impl fmt::Display for Explain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            RejectionKind::RuleDenied { index, rule } => {
                write!(f, "matched deny rule rules[{index}] ({rule})")
            }
            RejectionKind::DefaultDeny => f.write_str("no rule allows it and the default is deny"),
            RejectionKind::RateLimited { retry_after } => write!(
                f,
                "rate limit exceeded for this sender; retry after {:.3}s",
                retry_after.as_secs_f64()
            ),
            RejectionKind::HopLimitExceeded { hops, limit } => write!(
                f,
                "{hops} delegations deep, past the hop limit of {limit} \
                 (are agents delegating in a loop?)"
            ),
            RejectionKind::Custom { code } => write!(f, "refused by policy ({code})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EntryPoint;

    fn req() -> SendRequest<'static> {
        SendRequest::new("b", EntryPoint::Agent).from("a")
    }

    #[test]
    fn and_then_skips_the_next_check_after_a_denial() {
        let denied = Decision::Deny(Rejection::new(RejectionKind::DefaultDeny, "no"));
        let mut ran = false;
        let out = denied.and_then(|| {
            ran = true;
            Decision::Allow
        });
        assert!(!ran);
        assert!(!out.is_allowed());
    }

    #[test]
    fn and_then_runs_the_next_check_after_an_allow() {
        let out = Decision::Allow
            .and_then(|| Decision::Deny(Rejection::new(RejectionKind::DefaultDeny, "second")));
        assert_eq!(out.rejection().map(Rejection::reason), Some("second"));
    }

    #[test]
    fn rule_denied_reason_names_the_rule_and_its_index() {
        let kind = RejectionKind::RuleDenied {
            index: 2,
            rule: "deny to=billing".to_owned(),
        };
        let rejection = Rejection::for_request(kind, &req());
        assert_eq!(
            rejection.reason(),
            "send from `a` to `b` via agent denied: matched deny rule rules[2] (deny to=billing)"
        );
        assert_eq!(rejection.kind().code(), "rule_denied");
    }

    #[test]
    fn rate_limited_reason_says_when_to_retry() {
        let kind = RejectionKind::RateLimited {
            retry_after: Duration::from_millis(1500),
        };
        let rejection = Rejection::for_request(kind, &req());
        assert!(rejection.reason().contains("rate limit exceeded"));
        assert!(rejection.reason().ends_with("retry after 1.500s"));
        assert_eq!(rejection.retry_after(), Some(Duration::from_millis(1500)));
    }

    #[test]
    fn hop_limit_reason_names_depth_and_limit() {
        let kind = RejectionKind::HopLimitExceeded { hops: 9, limit: 8 };
        let rejection = Rejection::for_request(kind, &req());
        assert!(
            rejection
                .reason()
                .contains("9 delegations deep, past the hop limit of 8")
        );
        assert_eq!(rejection.retry_after(), None);
    }

    #[test]
    fn into_result_turns_a_denial_into_an_error() {
        let err = Decision::Deny(Rejection::new(
            RejectionKind::Custom {
                code: "closed".to_owned(),
            },
            "we are closed",
        ))
        .into_result()
        .expect_err("a denial is an error");
        assert_eq!(err.to_string(), "we are closed");
        assert_eq!(err.kind().code(), "closed");
        assert_eq!(Decision::Allow.into_result(), Ok(()));
    }
}
