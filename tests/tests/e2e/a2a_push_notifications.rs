//! Push notifications to a local webhook: the task JSON on every status change with
//! the config's token and credentials, a retry after a failing attempt, several
//! webhooks per task, the trace of the request that set the webhook, and the SSRF
//! guard refusing addresses the operator did not allow (refused at set time: no
//! request is ever sent to them).

use agentyard::a2a::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, Message, MessageSendConfiguration, MessageSendParams,
    PushNotificationAuthenticationInfo, PushNotificationConfig, SendMessageResult, Task,
    TaskPushNotificationConfig,
};
use agentyard::client::{A2aClient, ClientOptions};
use agentyard::edge::{EdgeConfig, NOTIFICATION_TOKEN_HEADER, PushConfig};
use agentyard::remote::Traceparent;
use agentyard_tests::http::{Delivery, TestEdge, WebhookReceiver, text_message};
use serde_json::json;

fn webhook(url: &str, token: Option<&str>) -> PushNotificationConfig {
    let mut config = PushNotificationConfig::new(url);
    config.token = token.map(str::to_owned);
    config
}

async fn start_gated(client: &A2aClient, push: Option<PushNotificationConfig>) -> Task {
    let params = MessageSendParams {
        configuration: Some(MessageSendConfiguration {
            blocking: Some(false),
            push_notification_config: push,
            ..MessageSendConfiguration::default()
        }),
        ..MessageSendParams::new(Message::user_text("job"))
    };
    match client.send_message(params).await.expect("sent") {
        SendMessageResult::Task(task) => task,
        SendMessageResult::Message(message) => panic!("expected a task, got {message:?}"),
    }
}

fn state(delivery: &Delivery) -> &str {
    delivery.body["status"]["state"]
        .as_str()
        .unwrap_or_default()
}

fn header<'a>(delivery: &'a Delivery, name: &str) -> Option<&'a str> {
    delivery.headers.get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn every_status_change_is_posted_with_the_token() {
    let receiver = WebhookReceiver::start(&[]).await;
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let task = start_gated(
        &client,
        Some(webhook(&receiver.url(), Some("secret-token"))),
    )
    .await;
    receiver
        .wait_for("a working notification", |d| state(d) == "working")
        .await;
    edge.open_gate(1);
    let deliveries = receiver
        .wait_for("the completed notification", |d| state(d) == "completed")
        .await;
    for delivery in &deliveries {
        assert_eq!(delivery.body["kind"], "task");
        assert_eq!(delivery.body["id"], json!(task.id));
        assert_eq!(
            header(delivery, NOTIFICATION_TOKEN_HEADER),
            Some("secret-token")
        );
        assert_eq!(header(delivery, "content-type"), Some("application/json"));
    }
    let states: Vec<&str> = deliveries.iter().map(state).collect();
    let completed = states
        .iter()
        .position(|s| *s == "completed")
        .expect("completed");
    let working = states
        .iter()
        .position(|s| *s == "working")
        .expect("working");
    assert!(working < completed, "{states:?}");
    assert_eq!(
        deliveries[completed].body["status"]["message"]["parts"][0]["text"],
        "done: job"
    );
    edge.stop().await;
}

#[tokio::test]
async fn a_failing_first_attempt_is_retried() {
    let receiver = WebhookReceiver::start(&[503]).await;
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let task = start_gated(&client, None).await;
    let mut config = webhook(&receiver.url(), Some("t"));
    config.id = Some("retrying".to_owned());
    client
        .set_push_config(TaskPushNotificationConfig {
            task_id: task.id.clone(),
            push_notification_config: config,
        })
        .await
        .expect("set");
    edge.open_gate(1);
    let deliveries = receiver
        .wait_for("a completed notification that was accepted", |d| {
            state(d) == "completed" && d.answered == 200
        })
        .await;
    assert_eq!(
        deliveries[0].answered, 503,
        "the first attempt was answered 503"
    );
    assert_eq!(
        deliveries[1].body, deliveries[0].body,
        "the retry carries the same notification"
    );
    let stats = edge.edge.service().push().expect("push on").stats();
    assert!(stats.retried >= 1, "{stats:?}");
    edge.stop().await;
}

#[tokio::test]
async fn bearer_credentials_are_sent_to_the_webhook() {
    let receiver = WebhookReceiver::start(&[]).await;
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let mut config = webhook(&receiver.url(), None);
    config.authentication = Some(PushNotificationAuthenticationInfo {
        schemes: vec!["Bearer".to_owned()],
        credentials: Some("hook-credential".to_owned()),
    });
    start_gated(&client, Some(config)).await;
    edge.open_gate(1);
    let deliveries = receiver
        .wait_for("the completed notification", |d| state(d) == "completed")
        .await;
    assert!(deliveries.iter().all(|d| {
        header(d, "authorization") == Some("Bearer hook-credential")
            && header(d, NOTIFICATION_TOKEN_HEADER).is_none()
    }));
    edge.stop().await;
}

#[tokio::test]
async fn a_task_can_have_several_webhooks_and_delete_answers_null() {
    let first = WebhookReceiver::start(&[]).await;
    let second = WebhookReceiver::start(&[]).await;
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let task = start_gated(&client, None).await;
    for (id, receiver) in [("one", &first), ("two", &second)] {
        let mut config = webhook(&receiver.url(), None);
        config.id = Some(id.to_owned());
        client
            .set_push_config(TaskPushNotificationConfig {
                task_id: task.id.clone(),
                push_notification_config: config,
            })
            .await
            .expect("set");
    }
    let minted = client
        .set_push_config(TaskPushNotificationConfig {
            task_id: task.id.clone(),
            push_notification_config: webhook(&first.url(), None),
        })
        .await
        .expect("set without an id");
    let minted_id = minted
        .push_notification_config
        .id
        .clone()
        .expect("an id is minted");
    let listed = client
        .list_push_configs(ListTaskPushNotificationConfigParams {
            id: task.id.clone(),
            metadata: None,
        })
        .await
        .expect("list");
    let ids: Vec<Option<&str>> = listed
        .iter()
        .map(|c| c.push_notification_config.id.as_deref())
        .collect();
    assert_eq!(ids, [Some("one"), Some("two"), Some(minted_id.as_str())]);
    let got = client
        .get_push_config(GetTaskPushNotificationConfigParams {
            id: task.id.clone(),
            push_notification_config_id: Some("two".to_owned()),
            metadata: None,
        })
        .await
        .expect("get");
    assert_eq!(got.push_notification_config.url, second.url());

    let deleted = edge
        .rpc(
            "gated",
            "tasks/pushNotificationConfig/delete",
            json!({"id": task.id, "pushNotificationConfigId": minted_id}),
        )
        .await;
    assert_eq!(deleted["result"], serde_json::Value::Null, "{deleted}");
    assert!(deleted.get("error").is_none(), "{deleted}");
    client
        .delete_push_config(DeleteTaskPushNotificationConfigParams {
            id: task.id.clone(),
            push_notification_config_id: "one".to_owned(),
            metadata: None,
        })
        .await
        .expect("delete");

    edge.open_gate(1);
    second
        .wait_for("the completed notification", |d| state(d) == "completed")
        .await;
    assert!(
        first.deliveries().iter().all(|d| state(d) != "completed"),
        "a deleted webhook was notified"
    );
    edge.stop().await;
}

#[tokio::test]
async fn webhooks_on_addresses_the_operator_did_not_allow_are_refused() {
    let receiver = WebhookReceiver::start(&[]).await;
    // Push on, but with the default rules: loopback and private networks refused.
    let edge = TestEdge::start_with(EdgeConfig::default().push(PushConfig::default())).await;
    let client = edge.client("gated").await;
    let task = start_gated(&client, None).await;
    for url in [
        receiver.url(),
        "http://10.20.30.40/hook".to_owned(),
        "http://169.254.169.254/latest/meta-data".to_owned(),
        "http://[::1]:9/hook".to_owned(),
        "file:///etc/passwd".to_owned(),
    ] {
        let error = client
            .set_push_config(TaskPushNotificationConfig {
                task_id: task.id.clone(),
                push_notification_config: webhook(&url, None),
            })
            .await
            .expect_err("refused");
        let rpc = error.json_rpc_error().expect("a JSON-RPC error");
        assert_eq!(rpc.code, -32602, "{url}");
        assert!(rpc.message.contains(&url), "{url}: {}", rpc.message);
    }
    // The same refusal for a webhook given with the send; the send does not run.
    let params = json!({
        "message": text_message("job"),
        "configuration": {"pushNotificationConfig": {"url": receiver.url()}},
    });
    let refused = edge.rpc("gated", "message/send", params).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    edge.open_gate(1);
    assert!(receiver.deliveries().is_empty());
    edge.stop().await;
}

#[tokio::test]
async fn the_final_status_is_notified_even_when_the_event_bus_overflows() {
    let receiver = WebhookReceiver::start(&[]).await;
    // A bus of one event: the notifier falls behind at once and must re-read the task.
    let edge =
        TestEdge::start_custom(TestEdge::config(), |runtime| runtime.event_capacity(1)).await;
    let client = edge.client("chunks").await;
    let params = MessageSendParams {
        configuration: Some(MessageSendConfiguration {
            push_notification_config: Some(webhook(&receiver.url(), Some("t"))),
            ..MessageSendConfiguration::default()
        }),
        ..MessageSendParams::new(Message::user_text("count"))
    };
    let SendMessageResult::Task(task) = client.send_message(params).await.expect("sent") else {
        panic!("expected a task");
    };
    let deliveries = receiver
        .wait_for("the completed notification", |d| state(d) == "completed")
        .await;
    let completed = deliveries
        .iter()
        .find(|d| state(d) == "completed")
        .expect("found");
    assert_eq!(completed.body["id"], json!(task.id));
    assert_eq!(
        completed.body["artifacts"][0]["parts"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );
    edge.stop().await;
}

#[tokio::test]
async fn the_traceparent_of_the_send_comes_back_on_every_notification() {
    let receiver = WebhookReceiver::start(&[]).await;
    let edge = TestEdge::start().await;
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let incoming = format!("00-{trace}-00f067aa0ba902b7-01");
    let client = edge
        .client_with(
            "gated",
            ClientOptions::new().header("traceparent", incoming.clone()),
        )
        .await;
    start_gated(&client, Some(webhook(&receiver.url(), None))).await;
    receiver
        .wait_for("a working notification", |d| state(d) == "working")
        .await;
    // The send has been answered; the task goes on and ends later, and its
    // notification still belongs to the send's trace.
    edge.open_gate(1);
    let deliveries = receiver
        .wait_for("the completed notification", |d| state(d) == "completed")
        .await;
    let mut parents = Vec::new();
    for delivery in &deliveries {
        let sent = header(delivery, "traceparent").expect("a traceparent on every delivery");
        let sent = Traceparent::parse(sent).expect("a valid traceparent");
        assert_eq!(sent.trace_id, trace, "{sent}");
        assert_ne!(
            sent.parent_id, "00f067aa0ba902b7",
            "a span of our own: {sent}"
        );
        assert_eq!(sent.flags, 1, "the caller's sampling decision stands");
        parents.push(sent.parent_id);
    }
    parents.dedup();
    assert_eq!(
        parents.len(),
        deliveries.len(),
        "each delivery is its own span: {parents:?}"
    );
    edge.stop().await;
}

#[tokio::test]
async fn a_webhook_set_later_carries_the_trace_of_the_request_that_set_it() {
    let receiver = WebhookReceiver::start(&[]).await;
    let edge = TestEdge::start().await;
    let task = start_gated(&edge.client("gated").await, None).await;
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let setter = edge
        .client_with(
            "gated",
            ClientOptions::new().header("traceparent", format!("00-{trace}-b7ad6b7169203331-01")),
        )
        .await;
    setter
        .set_push_config(TaskPushNotificationConfig {
            task_id: task.id.clone(),
            push_notification_config: webhook(&receiver.url(), None),
        })
        .await
        .expect("set");
    edge.open_gate(1);
    let deliveries = receiver
        .wait_for("the completed notification", |d| state(d) == "completed")
        .await;
    for delivery in &deliveries {
        let sent = header(delivery, "traceparent").expect("a traceparent");
        assert!(sent.starts_with(&format!("00-{trace}-")), "{sent}");
    }
    edge.stop().await;
}
