//! Webhook host names are resolved when a notification is delivered, not when the
//! webhook is set: a set never fails on DNS, a host that does not resolve is retried
//! and then reported as an `a2a.push.failed` event, and a name that resolves to an
//! address the operator does not allow is refused at delivery (the client connects
//! only to checked addresses), with an event naming the key that allows it.

use std::time::Duration;

use agentyard::a2a::{
    Message, MessageSendConfiguration, MessageSendParams, PushNotificationConfig,
    SendMessageResult, Task, TaskPushNotificationConfig,
};
use agentyard::client::A2aClient;
use agentyard::edge::{EdgeConfig, PushConfig};
use agentyard::{EventDetail, EventKind};
use agentyard_tests::EventLog;
use agentyard_tests::http::{TestEdge, WebhookReceiver};

const PATIENCE: Duration = Duration::from_secs(20);

async fn start_gated(client: &A2aClient) -> Task {
    let params = MessageSendParams {
        configuration: Some(MessageSendConfiguration {
            blocking: Some(false),
            ..MessageSendConfiguration::default()
        }),
        ..MessageSendParams::new(Message::user_text("job"))
    };
    match client.send_message(params).await.expect("sent") {
        SendMessageResult::Task(task) => task,
        SendMessageResult::Message(message) => panic!("expected a task, got {message:?}"),
    }
}

async fn set(client: &A2aClient, task: &Task, url: &str) {
    client
        .set_push_config(TaskPushNotificationConfig {
            task_id: task.id.clone(),
            push_notification_config: PushNotificationConfig::new(url),
        })
        .await
        .unwrap_or_else(|error| panic!("{url} must be accepted without a DNS lookup: {error}"));
}

fn reason(detail: &EventDetail) -> String {
    match detail {
        EventDetail::Reason { reason } => reason.clone(),
        other => panic!("expected a reason, got {other:?}"),
    }
}

#[tokio::test]
async fn a_host_that_does_not_resolve_is_accepted_then_retried_and_reported() {
    // Fast retries, loopback allowed (the test edge's defaults).
    let edge = TestEdge::start().await;
    let log = EventLog::start(&edge.runtime);
    let client = edge.client("gated").await;
    let task = start_gated(&client).await;
    // `.invalid` never resolves (RFC 6761).
    let url = "http://webhook.agentyard-test.invalid/hook";
    set(&client, &task, url).await;

    edge.open_gate(1);
    let failed = log
        .wait_for(PATIENCE, "a2a.push.failed", |e| {
            e.kind == EventKind::PushFailed
        })
        .await;
    assert_eq!(failed.task_id.as_ref(), Some(&task.id));
    assert_eq!(&*failed.to, "gated");
    let reason = reason(&failed.detail);
    assert!(reason.contains(url), "{reason}");
    assert!(reason.contains("after 4 attempts"), "{reason}");
    edge.stop().await;
}

#[tokio::test]
async fn a_name_resolving_to_a_refused_address_is_refused_at_delivery() {
    let receiver = WebhookReceiver::start(&[]).await;
    // The default rules: loopback refused.
    let edge = TestEdge::start_with(EdgeConfig::default().push(PushConfig::default())).await;
    let log = EventLog::start(&edge.runtime);
    let client = edge.client("gated").await;
    let task = start_gated(&client).await;
    // The receiver listens on 127.0.0.1; `localhost` reaches it only through DNS.
    let url = receiver.url().replace("127.0.0.1", "localhost");
    set(&client, &task, &url).await;

    edge.open_gate(1);
    let failed = log
        .wait_for(PATIENCE, "a2a.push.failed", |e| {
            e.kind == EventKind::PushFailed
        })
        .await;
    let reason = reason(&failed.detail);
    assert!(reason.contains("loopback"), "{reason}");
    assert!(reason.contains("push.allow_private_addresses"), "{reason}");
    assert!(
        receiver.deliveries().is_empty(),
        "nothing may reach a refused address"
    );
    edge.stop().await;
}
