//! The seam the supervisor calls: the [`Policy`] trait.

use std::time::Instant;

use crate::{Decision, SendRequest};

/// Whether a rate-limit check takes a token or only looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateMode {
    /// A real send: take a token when allowed.
    Consume,
    /// A dry run: give the answer `Consume` would give, changing nothing.
    Peek,
}

/// Decides whether a send may go ahead.
///
/// The supervisor calls [`check`](Policy::check) once for every send, from every
/// entry point, before any agent runs, and puts the reason of a
/// [`Decision::Deny`] into the `policy_rejected` event. [`dry_run`](Policy::dry_run)
/// is the seed's `checkPolicy`: the same answer without using anything up.
///
/// The checks are three hooks, run in this order by the provided `check` and
/// `dry_run`; the first denial wins and later hooks do not run:
///
/// 1. [`check_hops`](Policy::check_hops): the delegation depth, so that a loop
///    (A → B → A → …) is cut off before it costs anything;
/// 2. [`check_rules`](Policy::check_rules): allow and deny rules;
/// 3. [`check_rate`](Policy::check_rate): rate limits, last, so that a send refused
///    for another reason does not use up the sender's tokens.
///
/// Every hook defaults to [`Decision::Allow`]; an implementation overrides the ones it
/// needs. Hooks take `&self` and are called from many tasks at once, so any state
/// (such as token buckets) needs cheap interior mutability, and none of them may
/// block: they run on the supervisor's hot path. The current instant is passed in so
/// that nothing here reads a clock and tests can make time up.
///
/// ```
/// use std::time::Instant;
/// use agentyard_policy::{
///     Decision, EntryPoint, Policy, Rejection, RejectionKind, SendRequest,
/// };
///
/// /// Task delegations may only come from agents, never straight from outside.
/// struct DelegationsFromAgentsOnly;
///
/// impl Policy for DelegationsFromAgentsOnly {
///     fn check_rules(&self, req: &SendRequest<'_>) -> Decision {
///         if req.payload_type == Some("task_delegation") && req.entry_point != EntryPoint::Agent {
///             let kind = RejectionKind::Custom { code: "delegation_from_outside".into() };
///             return Decision::Deny(Rejection::for_request(kind, req));
///         }
///         Decision::Allow
///     }
/// }
///
/// let policy = DelegationsFromAgentsOnly;
/// let now = Instant::now();
/// let outside = SendRequest::new("worker", EntryPoint::Http).payload_type("task_delegation");
/// let inside = SendRequest::new("worker", EntryPoint::Agent)
///     .from("planner")
///     .payload_type("task_delegation")
///     .hops(1);
///
/// assert!(policy.check(&inside, now).is_allowed());
/// let decision = policy.check(&outside, now);
/// assert_eq!(
///     decision.rejection().map(|r| r.kind().code()),
///     Some("delegation_from_outside"),
/// );
/// // The hooks it did not override allow everything.
/// assert!(policy.check(&inside.hops(1_000), now).is_allowed());
/// ```
pub trait Policy: Send + Sync {
    /// Refuses sends that are too many delegations deep. Defaults to allow.
    fn check_hops(&self, _req: &SendRequest<'_>) -> Decision {
        Decision::Allow
    }

    /// Applies allow and deny rules. Defaults to allow.
    fn check_rules(&self, _req: &SendRequest<'_>) -> Decision {
        Decision::Allow
    }

    /// Applies rate limits at `now`, taking a token only in [`RateMode::Consume`].
    /// Defaults to allow.
    fn check_rate(&self, _req: &SendRequest<'_>, _now: Instant, _mode: RateMode) -> Decision {
        Decision::Allow
    }

    /// Decides a real send: hops, then rules, then rate limits (which may take a
    /// token). Override the hooks rather than this, so the order stays the same.
    fn check(&self, req: &SendRequest<'_>, now: Instant) -> Decision {
        self.check_hops(req)
            .and_then(|| self.check_rules(req))
            .and_then(|| self.check_rate(req, now, RateMode::Consume))
    }

    /// Answers as [`check`](Policy::check) would at `now`, but takes no rate-limit
    /// token, so asking leaves the sender's budget as it was.
    fn dry_run(&self, req: &SendRequest<'_>, now: Instant) -> Decision {
        self.check_hops(req)
            .and_then(|| self.check_rules(req))
            .and_then(|| self.check_rate(req, now, RateMode::Peek))
    }
}

/// The policy that allows every send: all hooks keep their defaults. Useful where a
/// policy is required but none is configured, and in tests.
///
/// ```
/// use std::time::Instant;
/// use agentyard_policy::{AllowAll, EntryPoint, Policy, SendRequest};
///
/// let req = SendRequest::new("anyone", EntryPoint::Http).hops(u32::MAX);
/// assert!(AllowAll.check(&req, Instant::now()).is_allowed());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllowAll;

impl Policy for AllowAll {}
