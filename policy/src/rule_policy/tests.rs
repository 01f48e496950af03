use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::*;
use crate::{EntryPoint, Pattern};

const SECOND: Duration = Duration::from_secs(1);

fn limit(capacity: u32, per_second: f64) -> RateLimit {
    RateLimit::per_second(capacity, per_second).expect("valid test limit")
}

fn send<'a>(from: &'a str, to: &'a str) -> SendRequest<'a> {
    SendRequest::new(to, EntryPoint::Agent).from(from)
}

fn code(decision: &Decision) -> Option<&str> {
    decision.rejection().map(|r| r.kind().code())
}

#[test]
fn default_policy_allows_any_send_within_the_hop_limit() {
    let policy = RulePolicy::default();
    let now = Instant::now();
    assert_eq!(policy.hop_limit(), DEFAULT_HOP_LIMIT);
    assert_eq!(policy.default_effect(), Effect::Allow);
    for _ in 0..1000 {
        assert!(policy.check(&send("a", "b"), now).is_allowed());
    }
    assert!(
        policy
            .check(&SendRequest::new("b", EntryPoint::Http), now)
            .is_allowed()
    );
}

#[test]
fn first_matching_rule_wins_over_later_ones() {
    let allow_then_deny = RulePolicy::builder()
        .rule(Rule::allow().from(Pattern::exact("planner")))
        .rule(Rule::deny().to(Pattern::exact("billing")))
        .build();
    let deny_then_allow = RulePolicy::builder()
        .rule(Rule::deny().to(Pattern::exact("billing")))
        .rule(Rule::allow().from(Pattern::exact("planner")))
        .build();
    let now = Instant::now();
    let req = send("planner", "billing");
    assert!(allow_then_deny.check(&req, now).is_allowed());
    let denied = deny_then_allow.check(&req, now);
    assert_eq!(
        denied.rejection().map(Rejection::kind),
        Some(&RejectionKind::RuleDenied {
            index: 0,
            rule: "deny to=billing".to_owned()
        })
    );
    // Sends the first rule does not match fall through to the second.
    assert_eq!(
        code(&allow_then_deny.check(&send("worker", "billing"), now)),
        Some("rule_denied")
    );
}

#[test]
fn default_deny_refuses_what_no_rule_allows() {
    let policy = RulePolicy::builder()
        .default_effect(Effect::Deny)
        .rule(Rule::allow().to(Pattern::exact("front-desk")))
        .build();
    let now = Instant::now();
    assert!(policy.check(&send("a", "front-desk"), now).is_allowed());
    let denied = policy.check(&send("a", "back-office"), now);
    assert_eq!(
        denied.rejection().map(Rejection::kind),
        Some(&RejectionKind::DefaultDeny)
    );
    assert_eq!(
        denied.rejection().map(Rejection::reason),
        Some(
            "send from `a` to `back-office` via agent denied: \
             no rule allows it and the default is deny"
        )
    );
}

#[test]
fn prefix_wildcard_rule_matches_a_family_of_agents() {
    let policy = RulePolicy::builder()
        .rule(Rule::deny().from(Pattern::prefix("sandbox-")))
        .build();
    let now = Instant::now();
    assert!(!policy.check(&send("sandbox-1", "b"), now).is_allowed());
    assert!(!policy.check(&send("sandbox-", "b"), now).is_allowed());
    assert!(policy.check(&send("sandbox", "b"), now).is_allowed());
    assert!(policy.check(&send("prod-1", "b"), now).is_allowed());
}

#[test]
fn payload_type_rule_applies_only_to_that_payload_type() {
    let policy = RulePolicy::builder()
        .rule(
            Rule::deny()
                .to(Pattern::exact("reviewer"))
                .payload_type(Pattern::exact("task_delegation")),
        )
        .build();
    let now = Instant::now();
    let base = send("planner", "reviewer");
    assert!(
        !policy
            .check(&base.payload_type("task_delegation"), now)
            .is_allowed()
    );
    assert!(
        policy
            .check(&base.payload_type("question"), now)
            .is_allowed()
    );
    assert!(policy.check(&base, now).is_allowed(), "free text passes");
}

#[test]
fn free_text_rule_leaves_typed_payloads_alone() {
    let policy = RulePolicy::builder()
        .rule(Rule::deny().payload_type(Pattern::Absent))
        .build();
    let now = Instant::now();
    assert!(!policy.check(&send("a", "b"), now).is_allowed());
    assert!(
        policy
            .check(&send("a", "b").payload_type("answer"), now)
            .is_allowed()
    );
}

#[test]
fn entry_point_rule_applies_only_to_that_entry_point() {
    let policy = RulePolicy::builder()
        .rule(
            Rule::deny()
                .to(Pattern::exact("admin"))
                .entry_point(EntryPoint::Http),
        )
        .build();
    let now = Instant::now();
    let http = SendRequest::new("admin", EntryPoint::Http).from("alice");
    let api = SendRequest::new("admin", EntryPoint::Api).from("alice");
    assert!(!policy.check(&http, now).is_allowed());
    assert!(policy.check(&api, now).is_allowed());
}

#[test]
fn anonymous_callers_can_be_refused_by_rule() {
    let policy = RulePolicy::builder()
        .rule(Rule::deny().from(Pattern::Absent))
        .build();
    let now = Instant::now();
    assert!(
        !policy
            .check(&SendRequest::new("b", EntryPoint::Http), now)
            .is_allowed()
    );
    assert!(
        policy
            .check(&SendRequest::new("b", EntryPoint::Http).from("alice"), now)
            .is_allowed()
    );
}

#[test]
fn send_exactly_at_the_hop_limit_passes_and_one_past_is_refused() {
    let policy = RulePolicy::builder().hop_limit(3).build();
    let now = Instant::now();
    assert!(policy.check(&send("a", "b").hops(3), now).is_allowed());
    let past = policy.check(&send("a", "b").hops(4), now);
    assert_eq!(
        past.rejection().map(Rejection::kind),
        Some(&RejectionKind::HopLimitExceeded { hops: 4, limit: 3 })
    );
    assert!(past.rejection().is_some_and(|r| {
        r.reason()
            .contains("4 delegations deep, past the hop limit of 3")
    }));
}

#[test]
fn zero_hop_limit_forbids_any_delegation() {
    let policy = RulePolicy::builder().hop_limit(0).build();
    let now = Instant::now();
    assert!(
        policy
            .check(&SendRequest::new("a", EntryPoint::Api), now)
            .is_allowed()
    );
    assert!(!policy.check(&send("a", "b").hops(1), now).is_allowed());
}

#[test]
fn delegation_loop_is_cut_off_at_the_hop_limit() {
    let policy = RulePolicy::default();
    let now = Instant::now();
    // A and B keep handing the task back to each other, one hop deeper each time.
    let mut hops = 0;
    let cut_off = loop {
        let (from, to) = if hops % 2 == 0 {
            ("a", "b")
        } else {
            ("b", "a")
        };
        let decision = policy.check(&send(from, to).hops(hops), now);
        if let Decision::Deny(rejection) = decision {
            break rejection;
        }
        hops += 1;
        assert!(hops < 1000, "the loop was never cut off");
    };
    assert_eq!(hops, DEFAULT_HOP_LIMIT + 1);
    assert_eq!(cut_off.kind().code(), "hop_limit_exceeded");
}

#[test]
fn hop_limit_is_checked_before_rules() {
    let policy = RulePolicy::builder()
        .hop_limit(1)
        .rule(Rule::deny())
        .build();
    let now = Instant::now();
    assert_eq!(
        code(&policy.check(&send("a", "b").hops(2), now)),
        Some("hop_limit_exceeded")
    );
    assert_eq!(
        code(&policy.check(&send("a", "b").hops(1), now)),
        Some("rule_denied")
    );
}

#[test]
fn send_refused_by_a_rule_uses_no_rate_limit_token() {
    let policy = RulePolicy::builder()
        .rule(Rule::deny().to(Pattern::exact("billing")))
        .rate_limit(limit(1, 1.0))
        .build();
    let now = Instant::now();
    for _ in 0..5 {
        assert_eq!(
            code(&policy.check(&send("a", "billing"), now)),
            Some("rule_denied")
        );
    }
    assert!(policy.check(&send("a", "other"), now).is_allowed());
    assert_eq!(
        code(&policy.check(&send("a", "other"), now)),
        Some("rate_limited")
    );
}

#[test]
fn send_refused_by_the_hop_limit_uses_no_rate_limit_token() {
    let policy = RulePolicy::builder()
        .hop_limit(2)
        .rate_limit(limit(1, 1.0))
        .build();
    let now = Instant::now();
    for _ in 0..5 {
        assert_eq!(
            code(&policy.check(&send("a", "b").hops(3), now)),
            Some("hop_limit_exceeded")
        );
    }
    assert!(policy.check(&send("a", "b").hops(2), now).is_allowed());
}

#[test]
fn rate_limited_rejection_says_when_to_retry_and_refills_after_that() {
    let policy = RulePolicy::builder().rate_limit(limit(2, 2.0)).build();
    let t0 = Instant::now();
    assert!(policy.check(&send("a", "b"), t0).is_allowed());
    assert!(policy.check(&send("a", "b"), t0).is_allowed());
    let later = t0 + Duration::from_millis(100);
    let denied = policy.check(&send("a", "b"), later);
    let rejection = denied.rejection().expect("out of tokens");
    assert_eq!(rejection.retry_after(), Some(Duration::from_millis(400)));
    assert!(rejection.reason().contains("rate limit exceeded"));
    assert!(
        policy
            .check(&send("a", "b"), later + Duration::from_millis(400))
            .is_allowed()
    );
    // One more token by 1s, and none to spare.
    assert!(policy.check(&send("a", "b"), t0 + SECOND).is_allowed());
    assert!(!policy.check(&send("a", "b"), t0 + SECOND).is_allowed());
    // After a long pause the bucket is full again, but no fuller.
    let much_later = t0 + 60 * SECOND;
    let burst = (0..10).filter(|_| policy.check(&send("a", "b"), much_later).is_allowed());
    assert_eq!(burst.count(), 2);
}

#[test]
fn per_sender_rate_limit_overrides_the_default() {
    let policy = RulePolicy::builder()
        .rate_limit(limit(1, 1.0))
        .sender_rate_limit("planner", limit(5, 1.0))
        .build();
    let now = Instant::now();
    let planner = (0..10).filter(|_| policy.check(&send("planner", "b"), now).is_allowed());
    assert_eq!(planner.count(), 5);
    let worker = (0..10).filter(|_| policy.check(&send("worker", "b"), now).is_allowed());
    assert_eq!(worker.count(), 1);
}

#[test]
fn dry_run_uses_no_tokens() {
    let policy = RulePolicy::builder().rate_limit(limit(2, 1.0)).build();
    let now = Instant::now();
    for _ in 0..100 {
        assert!(policy.dry_run(&send("a", "b"), now).is_allowed());
    }
    assert!(policy.check(&send("a", "b"), now).is_allowed());
    assert!(policy.check(&send("a", "b"), now).is_allowed());
    let dry = policy.dry_run(&send("a", "b"), now);
    assert_eq!(
        dry.rejection().and_then(Rejection::retry_after),
        Some(SECOND)
    );
}

#[test]
fn dry_run_gives_the_same_answer_as_the_check_that_follows() {
    let policy = RulePolicy::builder()
        .hop_limit(2)
        .default_effect(Effect::Deny)
        .rule(Rule::deny().to(Pattern::exact("billing")))
        .rule(Rule::allow().entry_point(EntryPoint::Agent))
        .rate_limit(limit(1, 1.0))
        .build();
    let now = Instant::now();
    let requests = [
        send("a", "b"),
        send("a", "b"),
        send("a", "b").hops(3),
        send("c", "billing"),
        SendRequest::new("b", EntryPoint::Http).from("c"),
        send("c", "b"),
        send("c", "b"),
    ];
    for req in &requests {
        let dry = policy.dry_run(req, now);
        assert_eq!(dry, policy.check(req, now), "{req}");
    }
}

#[test]
fn a_new_entry_point_gets_every_rule_for_free() {
    // The seed's "correctness by construction": a channel added later (here a Discord
    // relay) is held to the same default, hop limit and rate limit as the others.
    let policy = RulePolicy::builder()
        .default_effect(Effect::Deny)
        .rule(Rule::allow().from(Pattern::exact("sibling-bot")))
        .hop_limit(2)
        .rate_limit(limit(1, 1.0))
        .build();
    let now = Instant::now();
    let relay = EntryPoint::other("discord_dm_relay");
    let stranger = SendRequest::new("b", relay).from("stranger");
    let sibling = SendRequest::new("b", relay).from("sibling-bot");
    assert_eq!(code(&policy.check(&stranger, now)), Some("default_deny"));
    assert_eq!(
        code(&policy.check(&sibling.hops(3), now)),
        Some("hop_limit_exceeded")
    );
    assert!(policy.check(&sibling, now).is_allowed());
    assert_eq!(code(&policy.check(&sibling, now)), Some("rate_limited"));
}

#[test]
fn switching_entry_points_does_not_escape_the_rate_limit() {
    let policy = RulePolicy::builder().rate_limit(limit(2, 1.0)).build();
    let now = Instant::now();
    let via = |entry_point| SendRequest::new("b", entry_point).from("alice");
    assert!(policy.check(&via(EntryPoint::Http), now).is_allowed());
    assert!(policy.check(&via(EntryPoint::Api), now).is_allowed());
    assert!(!policy.check(&via(EntryPoint::Workflow), now).is_allowed());
}

#[test]
fn concurrent_checks_allow_exactly_capacity_sends() {
    const CAPACITY: u32 = 64;
    let policy = RulePolicy::builder()
        .rate_limit(limit(CAPACITY, 1.0))
        .build();
    let now = Instant::now();
    let allowed = AtomicU32::new(0);
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                for _ in 0..50 {
                    if policy.check(&send("shared", "b"), now).is_allowed() {
                        allowed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    assert_eq!(allowed.into_inner(), CAPACITY);
}

#[test]
fn concurrent_checks_of_many_senders_keep_each_sender_to_its_capacity() {
    let policy = RulePolicy::builder()
        .rate_limit(limit(3, 1.0))
        .max_tracked_senders(1_000)
        .build();
    let now = Instant::now();
    let allowed = AtomicU32::new(0);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for i in 0..100 {
                    let name = format!("sender-{i}");
                    for _ in 0..2 {
                        if policy.check(&send(&name, "b"), now).is_allowed() {
                            allowed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    // 100 senders, 8 attempts each, 3 tokens each.
    assert_eq!(allowed.into_inner(), 300);
}

#[test]
fn rule_policy_works_behind_a_shared_trait_object() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RulePolicy>();
    let policy: Arc<dyn Policy> = Arc::new(
        RulePolicy::builder()
            .rule(Rule::deny().to(Pattern::exact("x")))
            .build(),
    );
    let now = Instant::now();
    assert!(!policy.check(&send("a", "x"), now).is_allowed());
    assert!(policy.dry_run(&send("a", "y"), now).is_allowed());
}
