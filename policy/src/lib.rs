//! Pure policy decisions for agentyard.
//!
//! Every send in agentyard, from every entry point (the in-process API, an agent
//! delegating, the HTTP edge, the workflow runner, any channel added later), passes
//! through the supervisor, and the supervisor asks this crate whether the send may go
//! ahead before any agent runs. The answer is a [`Decision`]: allow, or deny with a
//! [`Rejection`] whose reason goes into the `policy_rejected` event and back to the
//! caller. Because there is one place to ask, a new entry point gets every rule for
//! free.
//!
//! Nothing here touches an actor, a socket or a clock of its own: callers describe the
//! send in a [`SendRequest`] and pass the current [`Instant`](std::time::Instant), so
//! every rule is unit-tested without a runtime, with made-up time.
//!
//! ```
//! use std::time::Instant;
//! use agentyard_policy::{EntryPoint, Policy, RateLimit, RulePolicy, SendRequest};
//!
//! let policy = RulePolicy::builder()
//!     .rate_limit(RateLimit::per_second(1, 1.0)?)
//!     .build();
//! let req = SendRequest::new("worker", EntryPoint::Agent).from("planner").hops(1);
//! let now = Instant::now();
//!
//! assert!(policy.dry_run(&req, now).is_allowed()); // asking uses nothing up
//! assert!(policy.check(&req, now).is_allowed());
//! let again = policy.check(&req, now);
//! assert_eq!(
//!     again.rejection().map(ToString::to_string).as_deref(),
//!     Some("send from `planner` to `worker` via agent denied: \
//!           rate limit exceeded for this sender; retry after 1.000s"),
//! );
//! # Ok::<(), agentyard_policy::PolicyError>(())
//! ```
//!
//! # Layout
//!
//! - `request`: [`SendRequest`] and [`EntryPoint`], what the policy is asked about.
//! - `decision`: [`Decision`], [`Rejection`] and [`RejectionKind`], what it answers.
//! - `policy`: the [`Policy`] trait, whose hooks (hop limit, rules, rate limit) default
//!   to allow, and [`AllowAll`].
//! - `rule`: [`Rule`], [`Pattern`] and [`Effect`], the allow/deny rules.
//! - `bucket`: [`RateLimit`] and [`TokenBucket`], the rate limit of one sender.
//! - `limiter` (private): the concurrent, bounded map of per-sender buckets.
//! - `rule_policy`: [`RulePolicy`], the standard policy, and its builder.
//! - `config`: [`PolicyConfig`], the configuration-file form of a [`RulePolicy`].
//! - `error`: [`PolicyError`], for configuration that cannot work.
//!
//! # Neighbours
//!
//! `agentyard-actors` (the supervisor) calls [`Policy::check`] on every send and
//! [`Policy::dry_run`] for a pre-flight check; `agentyard` (the runtime) reads a
//! [`PolicyConfig`] from its configuration file. This crate depends on neither, nor on
//! `agentyard-transport`: it describes requests with its own small types.

mod bucket;
mod config;
mod decision;
mod error;
mod limiter;
mod policy;
mod request;
mod rule;
mod rule_policy;

pub use bucket::{RateLimit, TokenBucket};
pub use config::{PolicyConfig, RateLimitConfig, RuleConfig};
pub use decision::{Decision, Rejection, RejectionKind};
pub use error::{PolicyError, Result};
pub use policy::{AllowAll, Policy, RateMode};
pub use request::{EntryPoint, SendRequest};
pub use rule::{Effect, Pattern, Rule};
pub use rule_policy::{
    DEFAULT_HOP_LIMIT, DEFAULT_MAX_TRACKED_SENDERS, RulePolicy, RulePolicyBuilder,
};
