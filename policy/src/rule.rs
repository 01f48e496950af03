//! Allow/deny rules and the patterns they match with.

use std::fmt;
use std::str::FromStr;

use crate::{EntryPoint, PolicyError, SendRequest};

#[cfg(test)]
mod tests;

/// Matches one field of a send: the sender, the target, the entry point or the
/// payload type.
///
/// Kept deliberately small; as text (in configuration, and from
/// [`FromStr`](Pattern::from_str)):
///
/// | text | variant | matches |
/// |---|---|---|
/// | `*` | [`Any`](Pattern::Any) | every value, and also an absent one |
/// | `planner` | [`Exact`](Pattern::Exact) | exactly `planner` (case-sensitive) |
/// | `worker-*` | [`Prefix`](Pattern::Prefix) | every value starting with `worker-` |
/// | `<none>` | [`Absent`](Pattern::Absent) | an anonymous sender, or a free-text send (no payload type) |
///
/// A `*` anywhere but at the end is refused rather than guessed at, and so is an
/// empty pattern.
///
/// ```
/// use agentyard_policy::Pattern;
///
/// let workers: Pattern = "worker-*".parse()?;
/// assert!(workers.matches(Some("worker-7")));
/// assert!(!workers.matches(Some("planner")));
/// assert!(!workers.matches(None));
/// assert!("a*b".parse::<Pattern>().is_err());
/// # Ok::<(), agentyard_policy::PolicyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Pattern {
    /// Matches everything, present or absent.
    #[default]
    Any,
    /// Matches exactly this value.
    Exact(String),
    /// Matches every value that starts with this prefix.
    Prefix(String),
    /// Matches only an absent value: an anonymous sender or a free-text send. Never
    /// matches the target or the entry point, which are always present.
    Absent,
}

/// How [`Pattern::Absent`] is written.
const ABSENT: &str = "<none>";

impl Pattern {
    /// Matches exactly `value`.
    #[must_use]
    pub fn exact(value: impl Into<String>) -> Self {
        Self::Exact(value.into())
    }

    /// Matches every value starting with `prefix`.
    #[must_use]
    pub fn prefix(prefix: impl Into<String>) -> Self {
        Self::Prefix(prefix.into())
    }

    /// Whether `value` (`None` when the field is absent) matches.
    #[must_use]
    pub fn matches(&self, value: Option<&str>) -> bool {
        match (self, value) {
            (Self::Any, _) => true,
            (Self::Exact(want), Some(value)) => want == value,
            (Self::Prefix(prefix), Some(value)) => value.starts_with(prefix.as_str()),
            (Self::Absent, None) => true,
            (Self::Exact(_) | Self::Prefix(_) | Self::Absent, _) => false,
        }
    }

    /// Parses `text`, naming `field` in the error.
    pub(crate) fn parse_field(field: &str, text: &str) -> Result<Self, PolicyError> {
        let invalid = |reason| PolicyError::InvalidPattern {
            field: field.to_owned(),
            pattern: text.to_owned(),
            reason,
        };
        match text {
            "" => Err(invalid("empty; write \"*\" to match anything")),
            "*" => Ok(Self::Any),
            ABSENT => Ok(Self::Absent),
            _ => {
                let (body, is_prefix) = match text.strip_suffix('*') {
                    Some(body) => (body, true),
                    None => (text, false),
                };
                if body.contains('*') {
                    Err(invalid(
                        "`*` may only stand alone or end a prefix (as in \"worker-*\")",
                    ))
                } else if is_prefix {
                    Ok(Self::Prefix(body.to_owned()))
                } else {
                    Ok(Self::Exact(body.to_owned()))
                }
            }
        }
    }
}

impl FromStr for Pattern {
    type Err = PolicyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse_field("pattern", text)
    }
}

/// An exact match on the entry point's name.
impl From<EntryPoint> for Pattern {
    fn from(entry_point: EntryPoint) -> Self {
        Self::Exact(entry_point.as_str().to_owned())
    }
}

/// Writes the pattern as it would be parsed back.
impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Any => f.write_str("*"),
            Self::Exact(value) => f.write_str(value),
            Self::Prefix(prefix) => write!(f, "{prefix}*"),
            Self::Absent => f.write_str(ABSENT),
        }
    }
}

/// What a matching rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Let the send through (to the rate limit, which still applies).
    #[default]
    Allow,
    /// Refuse the send.
    Deny,
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
        })
    }
}

/// One allow or deny rule: an effect and a pattern for each field of a send.
///
/// A rule matches a send when all four patterns match; unset patterns are
/// [`Pattern::Any`]. In a [`RulePolicy`](crate::RulePolicy) the first matching rule
/// decides.
///
/// ```
/// use agentyard_policy::{EntryPoint, Pattern, Rule, SendRequest};
///
/// let rule = Rule::deny()
///     .named("no outside questions to billing")
///     .to(Pattern::exact("billing"))
///     .entry_point(EntryPoint::Http)
///     .payload_type(Pattern::exact("question"));
///
/// let outside = SendRequest::new("billing", EntryPoint::Http).payload_type("question");
/// let inside = SendRequest::new("billing", EntryPoint::Agent).payload_type("question");
/// assert!(rule.matches(&outside));
/// assert!(!rule.matches(&inside));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    effect: Effect,
    name: Option<String>,
    from: Pattern,
    to: Pattern,
    entry_point: Pattern,
    payload_type: Pattern,
}

impl Rule {
    /// A rule with this effect that matches every send until narrowed.
    #[must_use]
    pub const fn new(effect: Effect) -> Self {
        Self {
            effect,
            name: None,
            from: Pattern::Any,
            to: Pattern::Any,
            entry_point: Pattern::Any,
            payload_type: Pattern::Any,
        }
    }

    /// An allow rule that matches every send until narrowed.
    #[must_use]
    pub const fn allow() -> Self {
        Self::new(Effect::Allow)
    }

    /// A deny rule that matches every send until narrowed.
    #[must_use]
    pub const fn deny() -> Self {
        Self::new(Effect::Deny)
    }

    /// Gives the rule a name, used instead of its patterns in rejection reasons.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Matches on the sender ([`Pattern::Absent`] for anonymous callers).
    #[must_use]
    pub fn from(mut self, pattern: impl Into<Pattern>) -> Self {
        self.from = pattern.into();
        self
    }

    /// Matches on the target agent type.
    #[must_use]
    pub fn to(mut self, pattern: impl Into<Pattern>) -> Self {
        self.to = pattern.into();
        self
    }

    /// Matches on the entry point's name (an [`EntryPoint`] converts into an exact
    /// pattern).
    #[must_use]
    pub fn entry_point(mut self, pattern: impl Into<Pattern>) -> Self {
        self.entry_point = pattern.into();
        self
    }

    /// Matches on the payload type ([`Pattern::Absent`] for free text).
    #[must_use]
    pub fn payload_type(mut self, pattern: impl Into<Pattern>) -> Self {
        self.payload_type = pattern.into();
        self
    }

    /// What the rule does when it matches.
    #[must_use]
    pub const fn effect(&self) -> Effect {
        self.effect
    }

    /// The rule's name, if it was given one.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Whether every pattern of the rule matches `req`.
    #[must_use]
    pub fn matches(&self, req: &SendRequest<'_>) -> bool {
        self.from.matches(req.from)
            && self.to.matches(Some(req.to))
            && self.entry_point.matches(Some(req.entry_point.as_str()))
            && self.payload_type.matches(req.payload_type)
    }
}

/// The name in quotes if there is one, then the effect and every pattern that is not
/// `*`, e.g. `"no billing": deny to=billing entry_point=http` or `deny any send`.
impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.name {
            write!(f, "{name:?}: ")?;
        }
        write!(f, "{}", self.effect)?;
        let fields = [
            ("from", &self.from),
            ("to", &self.to),
            ("entry_point", &self.entry_point),
            ("payload_type", &self.payload_type),
        ];
        let mut narrowed = false;
        for (key, pattern) in fields {
            if *pattern != Pattern::Any {
                write!(f, " {key}={pattern}")?;
                narrowed = true;
            }
        }
        if !narrowed {
            f.write_str(" any send")?;
        }
        Ok(())
    }
}
