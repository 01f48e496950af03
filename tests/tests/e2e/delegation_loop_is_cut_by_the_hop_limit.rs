//! Delegation loops: agents that keep handing a task to each other (A → B → A → …)
//! are stopped by the policy's hop limit, with a rejection that names it, instead of
//! running until memory or the concurrency limits run out.

use std::time::Duration;

use agentyard::policy::{DEFAULT_HOP_LIMIT, EntryPoint, RejectionKind, RulePolicy};
use agentyard::{
    Agent, AgentDescriptor, AgentError, EventDetail, EventKind, Message, Runtime, RuntimeBuilder,
    TaskContext, TaskState,
};
use agentyard_tests::{Calls, EventLog, status_text, within};

const SOON: Duration = Duration::from_secs(10);

/// Hands every message on to its partner and passes back what it gets: a failure
/// downstream fails this task too, with the same text.
#[derive(Clone)]
struct Ping {
    partner: &'static str,
    calls: Calls,
}

impl Agent for Ping {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.calls.hit();
        let answer = ctx
            .send_and_wait(self.partner, Message::user_text("over to you"))
            .await?;
        let text = status_text(&answer.task);
        match answer.task.status.state {
            TaskState::Completed => ctx.reply_text(text),
            _ => ctx.fail(text),
        }
        Ok(())
    }
}

async fn ping_pong(builder: RuntimeBuilder, calls: &Calls) -> Runtime {
    builder
        .agent(AgentDescriptor::new("ping"), {
            let calls = calls.clone();
            move |_| Ping {
                partner: "pong",
                calls: calls.clone(),
            }
        })
        .agent(AgentDescriptor::new("pong"), {
            let calls = calls.clone();
            move |_| Ping {
                partner: "ping",
                calls: calls.clone(),
            }
        })
        .build()
        .await
        .expect("runtime starts")
}

/// Starts the loop and checks it ends after `limit + 1` agents ran, with a hop-limit
/// rejection reported to the caller and on the event bus.
async fn loop_is_cut(runtime: &Runtime, calls: &Calls, limit: u32) {
    let log = EventLog::start(runtime);

    let done = within(
        SOON,
        "the delegation loop",
        runtime.send_and_wait("ping", Message::user_text("start")),
    )
    .await
    .expect("the first send is allowed");

    assert_eq!(done.task.status.state, TaskState::Failed);
    let text = status_text(&done.task);
    assert!(
        text.contains(&format!("past the hop limit of {limit}")),
        "the caller learns why: {text}"
    );
    // Sends at 0..=limit hops run an agent; the one at limit + 1 is refused.
    assert_eq!(calls.count(), usize::try_from(limit).expect("small") + 1);

    let rejected = log
        .wait_for(SOON, "the policy_rejected event", |e| {
            e.kind == EventKind::SendPolicyRejected
        })
        .await;
    assert_eq!(rejected.entry_point, EntryPoint::Agent);
    assert!(
        matches!(&rejected.detail, EventDetail::Reason { reason } if reason.contains("hop limit")),
        "{:?}",
        rejected.detail
    );
    assert_eq!(log.count(EventKind::SendPolicyRejected), 1);
}

#[tokio::test]
async fn a_ping_pong_loop_is_cut_by_the_default_hop_limit() {
    let calls = Calls::default();
    let runtime = ping_pong(Runtime::builder(), &calls).await;
    loop_is_cut(&runtime, &calls, DEFAULT_HOP_LIMIT).await;
}

#[tokio::test]
async fn a_ping_pong_loop_is_cut_by_a_configured_hop_limit() {
    let calls = Calls::default();
    let runtime = ping_pong(
        Runtime::builder().policy(RulePolicy::builder().hop_limit(3).build()),
        &calls,
    )
    .await;
    loop_is_cut(&runtime, &calls, 3).await;
}

#[tokio::test]
async fn the_refused_hop_is_reported_with_its_depth_to_the_agent_that_sent_it() {
    /// Sends one hop deeper than the limit allows and records what it was told.
    struct Deep;

    impl Agent for Deep {
        async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
            let request = ctx.request_to("deep", Message::user_text("deeper")).hops(2);
            match ctx.send_request(request).await {
                Err(agentyard::Error::PolicyRejected { rejection, .. }) => {
                    let RejectionKind::HopLimitExceeded { hops, limit } = rejection.kind() else {
                        return Err(format!("unexpected rejection {rejection:?}").into());
                    };
                    ctx.reply_text(format!("refused at {hops} hops, limit {limit}"));
                    Ok(())
                }
                other => Err(format!("expected a hop-limit rejection, got {other:?}").into()),
            }
        }
    }

    let runtime = Runtime::builder()
        .policy(RulePolicy::builder().hop_limit(1).build())
        .agent(AgentDescriptor::new("deep"), |_| Deep)
        .build()
        .await
        .expect("runtime starts");
    let done = runtime
        .send_and_wait("deep", Message::user_text("go"))
        .await
        .expect("the first send is allowed");
    assert_eq!(status_text(&done.task), "refused at 2 hops, limit 1");
}
