use std::time::{Duration, Instant};

use super::*;
use crate::{EntryPoint, Policy, SendRequest};

fn parse(json: &str) -> PolicyConfig {
    serde_json::from_str(json).unwrap_or_else(|err| panic!("config should parse: {err}"))
}

fn parse_err(json: &str) -> String {
    serde_json::from_str::<PolicyConfig>(json)
        .expect_err("config should be refused")
        .to_string()
}

fn build_err(json: &str) -> PolicyError {
    parse(json).build().expect_err("config should not build")
}

#[test]
fn empty_config_gives_the_builder_defaults() {
    let config = parse("{}");
    assert_eq!(config, PolicyConfig::default());
    let policy = config.build().expect("defaults build");
    assert_eq!(policy.default_effect(), Effect::Allow);
    assert_eq!(policy.hop_limit(), DEFAULT_HOP_LIMIT);
    assert!(policy.rules().is_empty());
}

#[test]
fn full_config_builds_a_policy_that_behaves_as_written() {
    let config = parse(
        r#"{
            "default": "deny",
            "hop_limit": 2,
            "max_tracked_senders": 50,
            "rate_limit": { "capacity": 1, "per_second": 1.0 },
            "sender_rate_limits": { "planner": { "capacity": 3, "per_second": 0.5 } },
            "rules": [
                { "name": "no billing from outside", "effect": "deny",
                  "to": "billing", "entry_point": "http" },
                { "effect": "allow", "entry_point": "agent" },
                { "effect": "allow", "from": "<none>", "to": "front-*",
                  "payload_type": "question" }
            ]
        }"#,
    );
    let policy = RulePolicy::try_from(&config).expect("valid config");
    assert_eq!(policy.rules().len(), 3);
    let now = Instant::now();

    let outside_billing = SendRequest::new("billing", EntryPoint::Http).from("alice");
    let denied = policy.check(&outside_billing, now);
    assert_eq!(
        denied.rejection().map(|r| r.reason()),
        Some(
            "send from `alice` to `billing` via http denied: matched deny rule rules[0] \
             (\"no billing from outside\": deny to=billing entry_point=http)"
        )
    );

    let question = SendRequest::new("front-desk", EntryPoint::Http).payload_type("question");
    assert!(policy.check(&question, now).is_allowed());
    assert!(!policy.check(&question.from("alice"), now).is_allowed());

    let planner = SendRequest::new("w", EntryPoint::Agent)
        .from("planner")
        .hops(2);
    let allowed = (0..10).filter(|_| policy.check(&planner, now).is_allowed());
    assert_eq!(allowed.count(), 3);
    assert_eq!(
        policy
            .check(&planner, now)
            .rejection()
            .and_then(|r| r.retry_after()),
        Some(Duration::from_secs(2))
    );
    assert!(!policy.check(&planner.hops(3), now).is_allowed());
}

#[test]
fn unknown_top_level_key_is_named() {
    let err = parse_err(r#"{ "hop_limits": 3 }"#);
    assert!(err.contains("unknown field `hop_limits`"), "{err}");
}

#[test]
fn unknown_rule_key_is_named() {
    let err = parse_err(r#"{ "rules": [{ "effect": "deny", "form": "a" }] }"#);
    assert!(err.contains("unknown field `form`"), "{err}");
}

#[test]
fn unknown_rate_limit_key_is_named() {
    let err = parse_err(r#"{ "rate_limit": { "capacity": 1, "per_second": 1, "burst": 2 } }"#);
    assert!(err.contains("unknown field `burst`"), "{err}");
}

#[test]
fn bad_effect_value_is_named() {
    let err = parse_err(r#"{ "default": "permit" }"#);
    assert!(err.contains("unknown variant `permit`"), "{err}");
    assert!(err.contains("`allow`"), "{err}");
}

#[test]
fn rule_without_an_effect_is_refused() {
    let err = parse_err(r#"{ "rules": [{ "to": "billing" }] }"#);
    assert!(err.contains("missing field `effect`"), "{err}");
}

#[test]
fn bad_pattern_is_named_with_its_rule_index_and_key() {
    let err =
        build_err(r#"{ "rules": [{ "effect": "allow" }, { "effect": "deny", "to": "bil*ing" }] }"#);
    assert_eq!(
        err,
        PolicyError::InvalidPattern {
            field: "rules[1].to".to_owned(),
            pattern: "bil*ing".to_owned(),
            reason: "`*` may only stand alone or end a prefix (as in \"worker-*\")",
        }
    );
}

#[test]
fn none_marker_is_refused_where_it_could_never_match() {
    let err = build_err(r#"{ "rules": [{ "effect": "deny", "entry_point": "<none>" }] }"#);
    let message = err.to_string();
    assert!(message.starts_with("rules[0].entry_point: invalid pattern \"<none>\""));
    assert!(message.contains("every send has an entry point"));
    let err = build_err(r#"{ "rules": [{ "effect": "deny", "to": "<none>" }] }"#);
    assert!(err.to_string().contains("every send has a target"));
}

#[test]
fn zero_capacity_is_named_with_its_path() {
    let err = build_err(r#"{ "rate_limit": { "capacity": 0, "per_second": 1.0 } }"#);
    assert!(
        matches!(&err, PolicyError::InvalidRateLimit { field, .. } if field == "rate_limit.capacity"),
        "{err:?}"
    );
}

#[test]
fn zero_rate_for_one_sender_is_named_with_its_path() {
    let err =
        build_err(r#"{ "sender_rate_limits": { "planner": { "capacity": 5, "per_second": 0 } } }"#);
    let message = err.to_string();
    assert!(
        message.starts_with("sender_rate_limits.planner.per_second: invalid rate limit"),
        "{message}"
    );
}

#[test]
fn config_built_in_code_matches_the_parsed_one() {
    let mut rule = RuleConfig::new(Effect::Allow);
    rule.to = Some("front-desk".to_owned());
    let config = PolicyConfig {
        default: Effect::Deny,
        rules: vec![rule],
        rate_limit: Some(RateLimitConfig::new(2, 1.0)),
        ..PolicyConfig::default()
    };
    assert_eq!(
        config,
        parse(
            r#"{ "default": "deny", "rules": [{ "effect": "allow", "to": "front-desk" }],
                 "rate_limit": { "capacity": 2, "per_second": 1.0 } }"#
        )
    );
    let policy = RulePolicy::try_from(config).expect("valid config");
    assert_eq!(
        policy.rules()[0],
        Rule::allow().to(Pattern::exact("front-desk"))
    );
}
