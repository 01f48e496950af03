//! The policy gate of the single send path (the seed's coordinator tests, §7.1): a send
//! the policy allows runs the agent once; a send it rejects never runs the agent, says
//! why, and emits `a2a.send.policy_rejected`; the `check_policy` dry run answers the
//! same without spending anything.

use std::time::Duration;

use agentyard::policy::{Effect, EntryPoint, Pattern, RateLimit, RejectionKind, Rule, RulePolicy};
use agentyard::{AgentDescriptor, Error, EventKind, Message, Runtime, SendRequest, TaskState};
use agentyard_tests::{Echo, EventLog, status_text};

const SOON: Duration = Duration::from_secs(5);

/// A rate limit of one send per sender that does not refill during a test.
fn one_send_only() -> RateLimit {
    RateLimit::new(1, Duration::from_secs(3600)).expect("a valid rate limit")
}

#[tokio::test]
async fn an_allowed_send_runs_the_agent_once() {
    let echo = Echo::default();
    let runtime = Runtime::builder()
        .policy(
            RulePolicy::builder()
                .default_effect(Effect::Deny)
                .rule(Rule::allow().to(Pattern::exact("echo")))
                .build(),
        )
        .agent(AgentDescriptor::new("echo"), {
            let echo = echo.clone();
            move |_| echo.clone()
        })
        .build()
        .await
        .expect("runtime starts");

    let done = runtime
        .send_and_wait("echo", Message::user_text("hello"))
        .await
        .expect("the policy allows the send");

    assert_eq!(done.task.status.state, TaskState::Completed);
    assert_eq!(status_text(&done.task), "echo: hello");
    assert!(!done.deduplicated);
    assert_eq!(echo.calls.count(), 1);
}

#[tokio::test]
async fn a_send_denied_by_a_rule_never_runs_the_agent() {
    let echo = Echo::default();
    let runtime = Runtime::builder()
        .policy(
            RulePolicy::builder()
                .rule(
                    Rule::deny()
                        .named("vault is closed")
                        .to(Pattern::exact("vault")),
                )
                .build(),
        )
        .agent(AgentDescriptor::new("vault"), {
            let echo = echo.clone();
            move |_| echo.clone()
        })
        .build()
        .await
        .expect("runtime starts");
    let log = EventLog::start(&runtime);

    let error = runtime
        .send_and_wait("vault", Message::user_text("open up"))
        .await
        .expect_err("the rule denies the send");

    let Error::PolicyRejected { reason, rejection } = &error else {
        panic!("expected a policy rejection, got {error:?}");
    };
    assert!(
        matches!(rejection.kind(), RejectionKind::RuleDenied { index: 0, .. }),
        "{rejection:?}"
    );
    assert!(reason.contains("vault is closed"), "reason: {reason}");
    assert_eq!(
        echo.calls.count(),
        0,
        "a rejected send must never run the agent"
    );
    assert_eq!(
        runtime.supervisor().session_count(),
        0,
        "no session is spawned"
    );

    let rejected = log
        .wait_for(SOON, "the policy_rejected event", |e| {
            e.kind == EventKind::SendPolicyRejected
        })
        .await;
    assert!(
        matches!(&rejected.detail, agentyard::EventDetail::Reason { reason: r } if r == reason),
        "the event carries the rejection's reason: {:?}",
        rejected.detail
    );
    let kinds: Vec<EventKind> = log.events().iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [EventKind::SendInitiated, EventKind::SendPolicyRejected],
        "nothing but the rejection follows the initiated event"
    );
}

#[tokio::test]
async fn a_send_no_rule_allows_is_rejected_under_default_deny() {
    let echo = Echo::default();
    let runtime = Runtime::builder()
        .policy(
            RulePolicy::builder()
                .default_effect(Effect::Deny)
                .rule(Rule::allow().entry_point(EntryPoint::Agent))
                .build(),
        )
        .agent(AgentDescriptor::new("echo"), {
            let echo = echo.clone();
            move |_| echo.clone()
        })
        .build()
        .await
        .expect("runtime starts");

    let error = runtime
        .send("echo", Message::user_text("from outside"))
        .await
        .expect_err("only agents may send");

    assert!(
        matches!(&error, Error::PolicyRejected { rejection, .. } if *rejection.kind() == RejectionKind::DefaultDeny),
        "{error:?}"
    );
    assert_eq!(echo.calls.count(), 0);
}

#[tokio::test]
async fn a_rate_limited_send_never_runs_the_agent() {
    let echo = Echo::default();
    let runtime = Runtime::builder()
        .policy(RulePolicy::builder().rate_limit(one_send_only()).build())
        .agent(AgentDescriptor::new("echo"), {
            let echo = echo.clone();
            move |_| echo.clone()
        })
        .build()
        .await
        .expect("runtime starts");
    let request = |text: &str| SendRequest::new("echo", Message::user_text(text)).from("alice");

    runtime
        .supervisor()
        .send_and_wait(request("first"))
        .await
        .expect("the first send has a token");
    let error = runtime
        .supervisor()
        .send_and_wait(request("second"))
        .await
        .expect_err("the bucket is empty");

    let Error::PolicyRejected { rejection, .. } = &error else {
        panic!("expected a rate-limit rejection, got {error:?}");
    };
    assert!(rejection.retry_after().is_some(), "{rejection:?}");
    assert_eq!(echo.calls.count(), 1, "only the allowed send ran");
}

#[tokio::test]
async fn the_check_policy_dry_run_spends_no_token() {
    let echo = Echo::default();
    let runtime = Runtime::builder()
        .policy(RulePolicy::builder().rate_limit(one_send_only()).build())
        .agent(AgentDescriptor::new("echo"), {
            let echo = echo.clone();
            move |_| echo.clone()
        })
        .build()
        .await
        .expect("runtime starts");
    let log = EventLog::start(&runtime);
    let request = SendRequest::new("echo", Message::user_text("hi")).from("bob");

    for _ in 0..3 {
        let decision = runtime.check_policy(&request).expect("echo is registered");
        assert!(
            decision.is_allowed(),
            "asking uses nothing up: {decision:?}"
        );
    }
    assert_eq!(echo.calls.count(), 0, "a dry run never runs the agent");

    runtime
        .supervisor()
        .send_and_wait(request.clone())
        .await
        .expect("the one token is still there after three dry runs");
    let decision = runtime.check_policy(&request).expect("echo is registered");
    assert!(
        matches!(
            decision.rejection().map(|r| r.kind()),
            Some(RejectionKind::RateLimited { .. })
        ),
        "the dry run now predicts the rejection: {decision:?}"
    );
    assert!(
        runtime.supervisor().send(request).await.is_err(),
        "and the real send is rejected"
    );
    assert_eq!(echo.calls.count(), 1);
    log.wait_for(SOON, "the policy_rejected event", |e| {
        e.kind == EventKind::SendPolicyRejected
    })
    .await;
    assert_eq!(
        log.count(EventKind::SendInitiated),
        2,
        "dry runs are not sends and emit no events"
    );
}

#[tokio::test]
async fn check_policy_on_an_unknown_agent_is_an_error() {
    let runtime = Runtime::builder().build().await.expect("runtime starts");
    let request = SendRequest::new("nobody", Message::user_text("hi"));
    assert!(matches!(
        runtime.check_policy(&request),
        Err(Error::UnknownAgent(name)) if name == "nobody"
    ));
}
