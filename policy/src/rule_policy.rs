//! The standard policy: ordered rules, a hop limit and per-sender rate limits.

use std::collections::HashMap;
use std::time::Instant;

use crate::limiter::SenderLimits;
use crate::{
    Decision, Effect, Policy, RateLimit, RateMode, Rejection, RejectionKind, Rule, SendRequest,
};

#[cfg(test)]
mod tests;

/// The hop limit when none is configured: a delegation chain may be this many sends
/// deep. Deep enough for a planner → worker → tool → … chain, shallow enough that a
/// loop (A → B → A → …) is cut off after a handful of rounds.
pub const DEFAULT_HOP_LIMIT: u32 = 8;

/// How many senders' rate-limit buckets are kept before new senders have to share
/// one (see [`RulePolicyBuilder::max_tracked_senders`]). A bucket is a few dozen
/// bytes, so this bounds the map at well under a megabyte.
pub const DEFAULT_MAX_TRACKED_SENDERS: usize = 10_000;

/// The standard [`Policy`]: a hop limit, ordered allow/deny rules with a default, and
/// per-sender token-bucket rate limits, checked in that order.
///
/// - **Hop limit.** A send more than `hop_limit` delegations deep
///   ([`SendRequest::hops`] greater than the limit) is refused with
///   [`RejectionKind::HopLimitExceeded`]; a send exactly at the limit passes.
/// - **Rules.** The first [`Rule`] that matches decides; when none matches, the
///   default effect decides ([`RejectionKind::RuleDenied`] or
///   [`RejectionKind::DefaultDeny`]).
/// - **Rate limits.** Each sender has a [`TokenBucket`](crate::TokenBucket): its own
///   limit if listed, otherwise the default limit, otherwise none. Anonymous callers
///   share one bucket under the default limit. A send that was refused by the hop
///   limit or a rule never reaches this step, so it uses up no token.
///
/// Build one with [`RulePolicy::builder`] or from a [`PolicyConfig`](crate::PolicyConfig).
///
/// ```
/// use std::time::Instant;
/// use agentyard_policy::{
///     Decision, EntryPoint, Pattern, Policy, RateLimit, Rule, RulePolicy, SendRequest,
/// };
///
/// let policy = RulePolicy::builder()
///     .rule(Rule::deny().to(Pattern::exact("billing")).entry_point(EntryPoint::Http))
///     .rate_limit(RateLimit::per_second(2, 1.0)?)
///     .hop_limit(4)
///     .build();
///
/// let now = Instant::now();
/// let from_outside = SendRequest::new("billing", EntryPoint::Http).from("alice");
/// assert!(matches!(policy.check(&from_outside, now), Decision::Deny(_)));
///
/// let from_agent = SendRequest::new("billing", EntryPoint::Agent).from("planner").hops(1);
/// assert!(policy.check(&from_agent, now).is_allowed());
/// assert!(policy.check(&from_agent, now).is_allowed());
/// let third = policy.check(&from_agent, now);
/// assert_eq!(third.rejection().map(|r| r.kind().code()), Some("rate_limited"));
/// # Ok::<(), agentyard_policy::PolicyError>(())
/// ```
#[derive(Debug)]
pub struct RulePolicy {
    rules: Vec<Rule>,
    default: Effect,
    hop_limit: u32,
    limits: SenderLimits,
}

impl RulePolicy {
    /// A builder with the defaults listed on [`RulePolicyBuilder`].
    pub fn builder() -> RulePolicyBuilder {
        RulePolicyBuilder::new()
    }

    /// The rules, in the order they are tried.
    #[must_use]
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// What happens to a send that no rule matches.
    #[must_use]
    pub const fn default_effect(&self) -> Effect {
        self.default
    }

    /// The deepest delegation allowed.
    #[must_use]
    pub const fn hop_limit(&self) -> u32 {
        self.hop_limit
    }
}

/// The builder's defaults: allow everything except sends past the hop limit.
impl Default for RulePolicy {
    fn default() -> Self {
        Self::builder().build()
    }
}

impl Policy for RulePolicy {
    fn check_hops(&self, req: &SendRequest<'_>) -> Decision {
        if req.hops > self.hop_limit {
            let kind = RejectionKind::HopLimitExceeded {
                hops: req.hops,
                limit: self.hop_limit,
            };
            return Decision::Deny(Rejection::for_request(kind, req));
        }
        Decision::Allow
    }

    fn check_rules(&self, req: &SendRequest<'_>) -> Decision {
        let matched = self
            .rules
            .iter()
            .enumerate()
            .find(|(_, rule)| rule.matches(req));
        match matched {
            Some((_, rule)) if rule.effect() == Effect::Allow => Decision::Allow,
            Some((index, rule)) => {
                let kind = RejectionKind::RuleDenied {
                    index,
                    rule: rule.to_string(),
                };
                Decision::Deny(Rejection::for_request(kind, req))
            }
            None if self.default == Effect::Allow => Decision::Allow,
            None => Decision::Deny(Rejection::for_request(RejectionKind::DefaultDeny, req)),
        }
    }

    fn check_rate(&self, req: &SendRequest<'_>, now: Instant, mode: RateMode) -> Decision {
        match self.limits.check(req.from, now, mode) {
            Ok(()) => Decision::Allow,
            Err(retry_after) => Decision::Deny(Rejection::for_request(
                RejectionKind::RateLimited { retry_after },
                req,
            )),
        }
    }
}

/// Builds a [`RulePolicy`].
///
/// | setting | default |
/// |---|---|
/// | [`default_effect`](Self::default_effect) | [`Effect::Allow`] |
/// | [`rule`](Self::rule) | no rules |
/// | [`hop_limit`](Self::hop_limit) | [`DEFAULT_HOP_LIMIT`] (8) |
/// | [`rate_limit`](Self::rate_limit) | none: senders are not rate limited |
/// | [`sender_rate_limit`](Self::sender_rate_limit) | none |
/// | [`max_tracked_senders`](Self::max_tracked_senders) | [`DEFAULT_MAX_TRACKED_SENDERS`] (10 000) |
///
/// The default effect is allow so that a runtime with no policy configured works out
/// of the box; a deployment exposed to the outside usually wants
/// `.default_effect(Effect::Deny)` and explicit allow rules.
///
/// ```
/// use agentyard_policy::{Effect, EntryPoint, Pattern, RateLimit, Rule, RulePolicy};
///
/// let policy = RulePolicy::builder()
///     .default_effect(Effect::Deny)
///     .rule(Rule::allow().entry_point(EntryPoint::Agent))
///     .rule(Rule::allow().to(Pattern::exact("front-desk")))
///     .rate_limit(RateLimit::per_second(20, 5.0)?)
///     .sender_rate_limit("planner", RateLimit::per_second(100, 50.0)?)
///     .hop_limit(6)
///     .build();
/// assert_eq!(policy.rules().len(), 2);
/// assert_eq!(policy.hop_limit(), 6);
/// # Ok::<(), agentyard_policy::PolicyError>(())
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct RulePolicyBuilder {
    rules: Vec<Rule>,
    default: Effect,
    hop_limit: u32,
    rate_limit: Option<RateLimit>,
    per_sender: HashMap<String, RateLimit>,
    max_tracked_senders: usize,
}

impl RulePolicyBuilder {
    /// A builder with the defaults in the table above.
    pub fn new() -> Self {
        Self {
            rules: Vec::new(),
            default: Effect::Allow,
            hop_limit: DEFAULT_HOP_LIMIT,
            rate_limit: None,
            per_sender: HashMap::new(),
            max_tracked_senders: DEFAULT_MAX_TRACKED_SENDERS,
        }
    }

    /// What happens to a send that no rule matches.
    pub const fn default_effect(mut self, effect: Effect) -> Self {
        self.default = effect;
        self
    }

    /// Appends a rule; rules are tried in the order they were added.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Appends several rules, in order.
    pub fn rules(mut self, rules: impl IntoIterator<Item = Rule>) -> Self {
        self.rules.extend(rules);
        self
    }

    /// The deepest delegation allowed: a send with `hops > limit` is refused. `0`
    /// means agents may not delegate at all.
    pub const fn hop_limit(mut self, limit: u32) -> Self {
        self.hop_limit = limit;
        self
    }

    /// The rate limit of every sender without one of its own, and of anonymous
    /// callers (who share a single bucket).
    pub const fn rate_limit(mut self, limit: RateLimit) -> Self {
        self.rate_limit = Some(limit);
        self
    }

    /// A rate limit for one sender, by exact name, overriding the default. Setting it
    /// twice for the same sender keeps the last.
    pub fn sender_rate_limit(mut self, sender: impl Into<String>, limit: RateLimit) -> Self {
        self.per_sender.insert(sender.into(), limit);
        self
    }

    /// How many senders' buckets to keep before new senders without a limit of their
    /// own share one overflow bucket. Full buckets are evicted first, which changes
    /// no decision; only a flood of senders that are all mid-burst makes newcomers
    /// share. Senders given their own limit always keep their own bucket.
    pub const fn max_tracked_senders(mut self, max: usize) -> Self {
        self.max_tracked_senders = max;
        self
    }

    /// The policy.
    #[must_use]
    pub fn build(self) -> RulePolicy {
        RulePolicy {
            rules: self.rules,
            default: self.default,
            hop_limit: self.hop_limit,
            limits: SenderLimits::new(self.rate_limit, self.per_sender, self.max_tracked_senders),
        }
    }
}

impl Default for RulePolicyBuilder {
    fn default() -> Self {
        Self::new()
    }
}
