//! Policy configuration as it appears in a configuration file.
//!
//! These types only hold what was written; [`PolicyConfig::build`] checks it and
//! turns it into a [`RulePolicy`]. Unknown keys are refused during deserialization
//! (`deny_unknown_fields`), so a misspelt key is an error naming the key rather than a
//! silently ignored rule, and every value error names its path, such as
//! `rules[2].to` or `sender_rate_limits.planner.per_second`.

use std::collections::BTreeMap;

use crate::{
    DEFAULT_HOP_LIMIT, DEFAULT_MAX_TRACKED_SENDERS, Effect, Pattern, PolicyError, RateLimit, Rule,
    RulePolicy, RulePolicyBuilder,
};

#[cfg(test)]
mod tests;

/// The `[policy]` section of a configuration file. Every key is optional; the
/// defaults are those of [`RulePolicyBuilder`].
///
/// In TOML:
///
/// ```toml
/// [policy]
/// default = "deny"          # "allow" (the default) or "deny"
/// hop_limit = 8
/// max_tracked_senders = 10000
/// rate_limit = { capacity = 20, per_second = 5.0 }     # every sender; omit for none
///
/// [policy.sender_rate_limits]
/// planner = { capacity = 100, per_second = 50.0 }
///
/// [[policy.rules]]
/// effect = "allow"
/// entry_point = "agent"
///
/// [[policy.rules]]
/// name = "outside questions to the front desk"
/// effect = "allow"
/// to = "front-desk"
/// entry_point = "http"
/// payload_type = "question"
/// ```
///
/// The same in JSON, built into a policy:
///
/// ```
/// use std::time::Instant;
/// use agentyard_policy::{EntryPoint, Policy, PolicyConfig, SendRequest};
///
/// let config: PolicyConfig = serde_json::from_str(r#"{
///     "default": "deny",
///     "rules": [{ "effect": "allow", "to": "front-desk", "entry_point": "http" }]
/// }"#)?;
/// let policy = config.build()?;
///
/// let now = Instant::now();
/// assert!(policy.check(&SendRequest::new("front-desk", EntryPoint::Http), now).is_allowed());
/// assert!(!policy.check(&SendRequest::new("billing", EntryPoint::Http), now).is_allowed());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct PolicyConfig {
    /// What happens to a send that no rule matches.
    pub default: Effect,
    /// Allow and deny rules, tried in order; the first match decides.
    pub rules: Vec<RuleConfig>,
    /// The deepest delegation allowed.
    pub hop_limit: u32,
    /// The rate limit of every sender not listed in `sender_rate_limits`, and of
    /// anonymous callers; `None` for no limit.
    pub rate_limit: Option<RateLimitConfig>,
    /// Rate limits of individual senders, by exact name.
    pub sender_rate_limits: BTreeMap<String, RateLimitConfig>,
    /// How many senders' rate-limit buckets to keep (see
    /// [`RulePolicyBuilder::max_tracked_senders`]).
    pub max_tracked_senders: usize,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        Self {
            default: Effect::Allow,
            rules: Vec::new(),
            hop_limit: DEFAULT_HOP_LIMIT,
            rate_limit: None,
            sender_rate_limits: BTreeMap::new(),
            max_tracked_senders: DEFAULT_MAX_TRACKED_SENDERS,
        }
    }
}

/// One rule in [`PolicyConfig::rules`]. Each pattern is written as described on
/// [`Pattern`] (`*`, `name`, `prefix-*`, `<none>`); a missing pattern means `*`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RuleConfig {
    /// `"allow"` or `"deny"`; required, since a rule without one would be a guess.
    pub effect: Effect,
    /// A name for rejection reasons.
    #[serde(default)]
    pub name: Option<String>,
    /// The sender: an agent name or external principal; `<none>` for anonymous callers.
    #[serde(default)]
    pub from: Option<String>,
    /// The target agent type.
    #[serde(default)]
    pub to: Option<String>,
    /// The entry point: `api`, `agent`, `http`, `workflow` or another channel's name.
    #[serde(default)]
    pub entry_point: Option<String>,
    /// The handoff payload type, e.g. `task_delegation`; `<none>` for free text.
    #[serde(default)]
    pub payload_type: Option<String>,
}

/// A token-bucket rate limit: bursts of up to `capacity` sends, refilled at
/// `per_second` sends per second (fractions allowed).
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RateLimitConfig {
    /// The largest burst; at least 1.
    pub capacity: u32,
    /// Tokens earned per second; above zero.
    pub per_second: f64,
}

impl RateLimitConfig {
    /// A limit of `capacity` tokens refilled at `per_second`.
    #[must_use]
    pub const fn new(capacity: u32, per_second: f64) -> Self {
        Self {
            capacity,
            per_second,
        }
    }

    /// Checks the limit, naming `path` (where it was found) in the error.
    fn to_limit(self, path: &str) -> Result<RateLimit, PolicyError> {
        RateLimit::per_second(self.capacity, self.per_second).map_err(|err| match err {
            PolicyError::InvalidRateLimit { field, reason } => PolicyError::InvalidRateLimit {
                field: format!("{path}.{field}"),
                reason,
            },
            other => other,
        })
    }
}

impl RuleConfig {
    /// A rule with this effect that matches every send.
    #[must_use]
    pub const fn new(effect: Effect) -> Self {
        Self {
            effect,
            name: None,
            from: None,
            to: None,
            entry_point: None,
            payload_type: None,
        }
    }

    /// Checks the patterns of the rule at `rules[index]`.
    fn to_rule(&self, index: usize) -> Result<Rule, PolicyError> {
        let pattern = |key, text: &Option<String>, absent_never_matches| {
            text.as_deref().map_or(Ok(Pattern::Any), |text| {
                rule_pattern(index, key, text, absent_never_matches)
            })
        };
        let mut rule = Rule::new(self.effect)
            .from(pattern("from", &self.from, None)?)
            .to(pattern(
                "to",
                &self.to,
                Some("`<none>` never matches here: every send has a target"),
            )?)
            .entry_point(pattern(
                "entry_point",
                &self.entry_point,
                Some("`<none>` never matches here: every send has an entry point"),
            )?)
            .payload_type(pattern("payload_type", &self.payload_type, None)?);
        if let Some(name) = &self.name {
            rule = rule.named(name.clone());
        }
        Ok(rule)
    }
}

/// Parses the pattern at `rules[index].key`. `absent_never_matches` is the reason to
/// refuse `<none>` for a field every send has.
fn rule_pattern(
    index: usize,
    key: &str,
    text: &str,
    absent_never_matches: Option<&'static str>,
) -> Result<Pattern, PolicyError> {
    let field = format!("rules[{index}].{key}");
    let pattern = Pattern::parse_field(&field, text)?;
    match (&pattern, absent_never_matches) {
        (Pattern::Absent, Some(reason)) => Err(PolicyError::InvalidPattern {
            field,
            pattern: text.to_owned(),
            reason,
        }),
        _ => Ok(pattern),
    }
}

impl PolicyConfig {
    /// Checks the configuration and builds the policy.
    ///
    /// # Errors
    ///
    /// [`PolicyError::InvalidPattern`] for a pattern that does not parse (or `<none>`
    /// where it can never match), and [`PolicyError::InvalidRateLimit`] for a zero
    /// capacity or a rate that is not above zero; each names the key at fault.
    pub fn build(&self) -> Result<RulePolicy, PolicyError> {
        self.builder().map(RulePolicyBuilder::build)
    }

    /// Checks the configuration and returns a builder holding it, for a program that
    /// adds settings of its own before building.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build).
    pub fn builder(&self) -> Result<RulePolicyBuilder, PolicyError> {
        let rules = self
            .rules
            .iter()
            .enumerate()
            .map(|(index, rule)| rule.to_rule(index))
            .collect::<Result<Vec<_>, _>>()?;
        let mut builder = RulePolicy::builder()
            .default_effect(self.default)
            .rules(rules)
            .hop_limit(self.hop_limit)
            .max_tracked_senders(self.max_tracked_senders);
        if let Some(limit) = self.rate_limit {
            builder = builder.rate_limit(limit.to_limit("rate_limit")?);
        }
        for (sender, limit) in &self.sender_rate_limits {
            let limit = limit.to_limit(&format!("sender_rate_limits.{sender}"))?;
            builder = builder.sender_rate_limit(sender.clone(), limit);
        }
        Ok(builder)
    }
}

impl TryFrom<&PolicyConfig> for RulePolicy {
    type Error = PolicyError;

    fn try_from(config: &PolicyConfig) -> Result<Self, Self::Error> {
        config.build()
    }
}

impl TryFrom<PolicyConfig> for RulePolicy {
    type Error = PolicyError;

    fn try_from(config: PolicyConfig) -> Result<Self, Self::Error> {
        config.build()
    }
}
