//! One behaviour, six doors: the same scenarios through JSON-RPC, HTTP+JSON and gRPC,
//! each in A2A 1.0 and 0.3.0, with our client against one edge. Each scenario's
//! outcome is reduced to what a caller sees (states, texts, counts, error codes, the
//! extensions echoed; not the ids a call mints) and must be the same through every
//! door: send, stream, get with a history length, list (1.0 only: the same through
//! the three 1.0 doors, refused by the client on 0.3), cancel, subscribe, push-config
//! CRUD and delivery, the input-required round trip, each error, auth and extensions.
//!
//! 0.3 has no tenant, so the 0.3 gRPC door reaches a non-default agent through the
//! `a2a-agent` metadata, as docs/grpc.md tells 0.3 clients to.

use std::future::Future;

use agentyard::a2a::v1::{ListTasksRequest, ProtocolVersion};
use agentyard::a2a::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, Message, MessageSendConfiguration, MessageSendParams,
    PushNotificationConfig, SendMessageResult, StreamEvent, Task, TaskIdParams,
    TaskPushNotificationConfig, TaskQueryParams, TransportProtocol,
};
use agentyard::client::{A2aClient, ClientError, ClientOptions};
use agentyard::edge::{EdgeAuth, EdgeConfig};
use agentyard::handoff::HANDOFF_EXTENSION_URI;
use agentyard::jsonrpc::A2aRequest;
use agentyard_tests::http::{TestEdge, WebhookReceiver};
use agentyard_tests::status_text;
use futures::StreamExt as _;
use serde_json::{Value, json};

const TOKEN: &str = "t-six-doors";

/// A binding and a version.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Door {
    binding: TransportProtocol,
    version: ProtocolVersion,
}

impl std::fmt::Display for Door {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.binding.as_str(), self.version.as_str())
    }
}

fn doors() -> Vec<Door> {
    let mut doors = Vec::new();
    for binding in [
        TransportProtocol::JsonRpc,
        TransportProtocol::HttpJson,
        TransportProtocol::Grpc,
    ] {
        for version in [ProtocolVersion::V1_0, ProtocolVersion::V0_3] {
            doors.push(Door {
                binding: binding.clone(),
                version,
            });
        }
    }
    doors
}

fn config() -> EdgeConfig {
    let any_port = "127.0.0.1:0".parse().expect("an address");
    TestEdge::config().grpc_bind(any_port)
}

/// A client of `agent` through `door`: from the agent's card, or, for 0.3 over
/// gRPC, at the gRPC target with the agent named in the metadata.
async fn client(edge: &TestEdge, door: &Door, agent: &str, options: ClientOptions) -> A2aClient {
    let options = options
        .transport(door.binding.clone())
        .protocol_version(door.version);
    let client = if door.binding == TransportProtocol::Grpc && door.version == ProtocolVersion::V0_3
    {
        let target = edge.edge.grpc_addr().expect("gRPC is on").to_string();
        A2aClient::connect(&target, options.header("a2a-agent", agent))
            .await
            .expect("a 0.3 gRPC client")
    } else {
        edge.client_with(agent, options).await
    };
    assert_eq!(client.transport(), door.binding, "{door}");
    assert_eq!(client.protocol_version(), door.version, "{door}");
    client
}

/// Runs `scenario` through every door and checks that the outcomes are equal among
/// the doors `group` puts together (every door, unless a scenario's meaning
/// differs by version).
async fn same_through<'a, F, Fut>(
    name: &str,
    edge: &'a TestEdge,
    group: impl Fn(&Door) -> ProtocolVersion,
    scenario: F,
) where
    F: Fn(&'a TestEdge, Door) -> Fut,
    Fut: Future<Output = Value> + 'a,
{
    let mut seen: Vec<(Door, Value)> = Vec::new();
    for door in doors() {
        let outcome = scenario(edge, door.clone()).await;
        seen.push((door, outcome));
    }
    for (door, outcome) in &seen {
        let (first, expected) = seen
            .iter()
            .find(|(other, _)| group(other) == group(door))
            .expect("the door itself at least");
        assert_eq!(
            outcome, expected,
            "{name}: through {door} the outcome differs from {first}"
        );
    }
}

const fn everywhere(_: &Door) -> ProtocolVersion {
    // One group: every door.
    ProtocolVersion::V1_0
}

fn task_of(result: SendMessageResult) -> Task {
    match result {
        SendMessageResult::Task(task) => task,
        SendMessageResult::Message(message) => panic!("expected a task, got {message:?}"),
    }
}

fn in_background(text: &str) -> MessageSendParams {
    MessageSendParams {
        configuration: Some(MessageSendConfiguration {
            blocking: Some(false),
            ..MessageSendConfiguration::default()
        }),
        ..MessageSendParams::new(Message::user_text(text))
    }
}

/// What a caller sees of a task.
fn task_seen(task: &Task) -> Value {
    let artifacts: Vec<String> = task
        .artifacts
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|artifact| {
            artifact
                .parts
                .iter()
                .filter_map(|part| part.as_text().map(str::to_owned))
                .collect::<String>()
        })
        .collect();
    json!({
        "state": task.status.state.as_str(),
        "status": status_text(task),
        "history": task.history.as_ref().map(Vec::len),
        "artifacts": artifacts,
    })
}

fn result_seen(result: &SendMessageResult) -> Value {
    match result {
        SendMessageResult::Task(task) => json!({"task": task_seen(task)}),
        SendMessageResult::Message(message) => json!({"message": message.text()}),
    }
}

fn event_seen(event: &StreamEvent) -> Value {
    match event {
        StreamEvent::Task(task) => json!({"task": task.status.state.as_str()}),
        StreamEvent::Message(message) => json!({"message": message.text()}),
        StreamEvent::StatusUpdate(update) => json!({
            "status": update.status.state.as_str(),
            "final": update.is_final,
        }),
        StreamEvent::ArtifactUpdate(update) => json!({
            "artifact": update.artifact.parts.iter()
                .filter_map(|part| part.as_text().map(str::to_owned))
                .collect::<String>(),
            // Unset is false: 1.0 (proto3) does not write a false flag.
            "append": update.append.unwrap_or(false),
            "last": update.last_chunk.unwrap_or(false),
        }),
    }
}

/// What a caller sees of a failed call: the A2A code wherever the binding put it,
/// else what kind of refusal.
/// A refusal of the caller's credentials is the binding's own (HTTP 401 with its
/// challenge, gRPC UNAUTHENTICATED), whatever body an HTTP binding adds to it.
fn error_seen(error: &ClientError) -> Value {
    match error {
        ClientError::Http { status, .. } if status.as_u16() == 401 => {
            return json!("unauthenticated");
        }
        ClientError::Grpc { code, .. } if *code == tonic::Code::Unauthenticated => {
            return json!("unauthenticated");
        }
        ClientError::Protocol(_) => return json!("refused by the client"),
        _ => {}
    }
    match error.json_rpc_error() {
        Some(rpc) => json!({"a2a": rpc.code}),
        None => panic!("an unexpected failure: {error:?}"),
    }
}

fn outcome<T>(result: Result<T, ClientError>, seen: impl FnOnce(&T) -> Value) -> Value {
    match result {
        Ok(value) => seen(&value),
        Err(error) => json!({"error": error_seen(&error)}),
    }
}

async fn collect(stream: agentyard::client::A2aStream) -> Vec<Value> {
    stream
        .map(|event| outcome(event, event_seen))
        .collect()
        .await
}

#[tokio::test]
async fn send_stream_get_and_list_are_the_same_through_every_door() {
    let edge = TestEdge::start_with(config()).await;
    same_through("send", &edge, everywhere, |edge, door| async move {
        let client = client(edge, &door, "echo", ClientOptions::new()).await;
        let sent = client
            .send_message(MessageSendParams::new(Message::user_text("hi")))
            .await;
        outcome(sent, result_seen)
    })
    .await;
    same_through("stream", &edge, everywhere, |edge, door| async move {
        let client = client(edge, &door, "chunks", ClientOptions::new()).await;
        let stream = client
            .send_message_stream(MessageSendParams::new(Message::user_text("go")))
            .await
            .expect("a stream");
        json!(collect(stream).await)
    })
    .await;
    same_through("get", &edge, everywhere, |edge, door| async move {
        let client = client(edge, &door, "chunks", ClientOptions::new()).await;
        let task = task_of(
            client
                .send_message(MessageSendParams::new(Message::user_text("go")))
                .await
                .expect("sent"),
        );
        let mut whole = TaskQueryParams::new(task.id.clone());
        whole.history_length = None;
        let mut last = TaskQueryParams::new(task.id.clone());
        last.history_length = Some(1);
        json!({
            "whole": outcome(client.get_task(whole).await, task_seen),
            "last": outcome(client.get_task(last).await, task_seen),
        })
    })
    .await;
    same_through(
        "list",
        &edge,
        |door| door.version,
        |edge, door| async move {
            let client = client(edge, &door, "echo", ClientOptions::new()).await;
            let first = task_of(
                client
                    .send_message(in_context("one", None))
                    .await
                    .expect("sent"),
            );
            client
                .send_message(in_context("two", Some(&first)))
                .await
                .expect("sent");
            let listed = client
                .list_tasks(ListTasksRequest {
                    context_id: first.context_id.to_string(),
                    ..ListTasksRequest::default()
                })
                .await;
            outcome(listed, |page| {
                let tasks: Vec<Value> = page
                    .tasks
                    .iter()
                    .map(|task| json!(format!("{:?}", task.status.state)))
                    .collect();
                json!({"tasks": tasks, "total": page.total_size, "next": page.next_page_token})
            })
        },
    )
    .await;
    edge.stop().await;
}

/// A message in the conversation of `after` (a new conversation without it).
fn in_context(text: &str, after: Option<&Task>) -> MessageSendParams {
    let mut message = Message::user_text(text);
    message.context_id = after.map(|task| task.context_id.clone());
    MessageSendParams::new(message)
}

#[tokio::test]
async fn cancel_subscribe_and_input_required_are_the_same_through_every_door() {
    let edge = TestEdge::start_with(config()).await;
    same_through("cancel", &edge, everywhere, |edge, door| async move {
        let client = client(edge, &door, "gated", ClientOptions::new()).await;
        let running = task_of(
            client
                .send_message(in_background("stay"))
                .await
                .expect("sent"),
        );
        let first = client
            .cancel_task(TaskIdParams::new(running.id.clone()))
            .await;
        let again = client
            .cancel_task(TaskIdParams::new(running.id.clone()))
            .await;
        json!({
            "first": outcome(first, task_seen),
            "again": outcome(again, task_seen),
        })
    })
    .await;
    same_through("subscribe", &edge, everywhere, |edge, door| async move {
        let client = client(edge, &door, "gated", ClientOptions::new()).await;
        let running = task_of(
            client
                .send_message(in_background("go on"))
                .await
                .expect("sent"),
        );
        // Subscribed once `gated` is waiting at its gate (it published `working`), so
        // every door sees the same events: the task as it stands, then the rest.
        agentyard_tests::eventually(agentyard_tests::PATIENCE, "the task working", || {
            let client = client.clone();
            let id = running.id.clone();
            async move {
                let task = client.get_task(TaskQueryParams::new(id)).await.ok()?;
                (task.status.state == agentyard::TaskState::Working).then_some(())
            }
        })
        .await;
        let stream = client
            .resubscribe(TaskIdParams::new(running.id.clone()))
            .await
            .expect("subscribed");
        edge.open_gate(1);
        json!(collect(stream).await)
    })
    .await;
    same_through(
        "input-required",
        &edge,
        everywhere,
        |edge, door| async move {
            let client = client(edge, &door, "ask", ClientOptions::new()).await;
            let asked = task_of(
                client
                    .send_message(MessageSendParams::new(Message::user_text("start")))
                    .await
                    .expect("sent"),
            );
            let mut answer = Message::user_text("blue");
            answer.task_id = Some(asked.id.clone());
            answer.context_id = Some(asked.context_id.clone());
            let answered = client.send_message(MessageSendParams::new(answer)).await;
            json!({
                "asked": task_seen(&asked),
                "answered": outcome(answered, result_seen),
            })
        },
    )
    .await;
    edge.stop().await;
}

#[tokio::test]
async fn push_configs_and_their_delivery_are_the_same_through_every_door() {
    let edge = TestEdge::start_with(config()).await;
    same_through("push configs", &edge, everywhere, |edge, door| async move {
        let webhook = WebhookReceiver::start(&[]).await;
        let client = client(edge, &door, "gated", ClientOptions::new()).await;
        let task = task_of(
            client
                .send_message(in_background("job"))
                .await
                .expect("sent"),
        );
        let mut config = PushNotificationConfig::new(webhook.url());
        config.id = Some("w-1".to_owned());
        let set = client
            .set_push_config(TaskPushNotificationConfig {
                task_id: task.id.clone(),
                push_notification_config: config,
            })
            .await;
        let config_seen = |config: &TaskPushNotificationConfig| {
            json!({
                "id": config.push_notification_config.id,
                "same url": config.push_notification_config.url == webhook.url(),
                "same task": config.task_id == task.id,
            })
        };
        let set = outcome(set, config_seen);
        let got = client
            .get_push_config(GetTaskPushNotificationConfigParams {
                id: task.id.clone(),
                push_notification_config_id: Some("w-1".to_owned()),
                metadata: None,
            })
            .await;
        let got = outcome(got, config_seen);
        let list = || {
            client.list_push_configs(ListTaskPushNotificationConfigParams {
                id: task.id.clone(),
                metadata: None,
            })
        };
        let listed = outcome(list().await, |configs| json!(configs.len()));
        edge.open_gate(1);
        // The webhook hears the task end, in the body its version gives it.
        let deliveries = webhook
            .wait_for("the completion delivered", |delivery| {
                delivery
                    .body
                    .to_string()
                    .to_ascii_lowercase()
                    .contains("completed")
            })
            .await;
        let deleted = client
            .delete_push_config(DeleteTaskPushNotificationConfigParams {
                id: task.id.clone(),
                push_notification_config_id: "w-1".to_owned(),
                metadata: None,
            })
            .await;
        let missing = client
            .get_push_config(GetTaskPushNotificationConfigParams {
                id: task.id.clone(),
                push_notification_config_id: Some("w-1".to_owned()),
                metadata: None,
            })
            .await;
        json!({
            "set": set,
            "got": got,
            "listed": listed,
            "delivered": !deliveries.is_empty(),
            "deleted": outcome(deleted, |()| json!("deleted")),
            "after delete": outcome(list().await, |configs| json!(configs.len())),
            "get after delete": outcome(missing, config_seen),
        })
    })
    .await;
    edge.stop().await;
}

#[tokio::test]
async fn errors_are_the_same_through_every_door() {
    let edge = TestEdge::start_with(config()).await;
    same_through("errors", &edge, everywhere, |edge, door| async move {
        let client = client(edge, &door, "chunks", ClientOptions::new()).await;
        let done = task_of(
            client
                .send_message(MessageSendParams::new(Message::user_text("go")))
                .await
                .expect("sent"),
        );
        let mut late = Message::user_text("more");
        late.task_id = Some(done.id.clone());
        late.context_id = Some(done.context_id.clone());
        let resubscribed = client.resubscribe(TaskIdParams::new("no-such-task")).await;
        json!({
            "get unknown": outcome(client.get_task(TaskQueryParams::new("no-such-task")).await, task_seen),
            "cancel unknown": outcome(client.cancel_task(TaskIdParams::new("no-such-task")).await, task_seen),
            "cancel ended": outcome(client.cancel_task(TaskIdParams::new(done.id.clone())).await, task_seen),
            "send to ended": outcome(client.send_message(MessageSendParams::new(late)).await, result_seen),
            "subscribe unknown": match resubscribed {
                Ok(stream) => json!(collect(stream).await),
                Err(error) => json!({"error": error_seen(&error)}),
            },
            "push list unknown": outcome(
                client.list_push_configs(ListTaskPushNotificationConfigParams {
                    id: "no-such-task".into(),
                    metadata: None,
                }).await,
                |configs| json!(configs.len()),
            ),
        })
    })
    .await;
    edge.stop().await;
}

#[tokio::test]
async fn auth_and_extensions_are_the_same_through_every_door() {
    let edge =
        TestEdge::start_with(config().auth(EdgeAuth::default().bearer_token(TOKEN, "alice"))).await;
    same_through(
        "auth and extensions",
        &edge,
        everywhere,
        |edge, door| async move {
            let anonymous = client(edge, &door, "probe", ClientOptions::new()).await;
            let refused = anonymous
                .send_message(MessageSendParams::new(Message::user_text("hi")))
                .await;
            let wrong = client(
                edge,
                &door,
                "probe",
                ClientOptions::new().bearer_token("wrong"),
            )
            .await;
            let wrong = wrong
                .send_message(MessageSendParams::new(Message::user_text("hi")))
                .await;
            let options = ClientOptions::new()
                .bearer_token(TOKEN)
                .extension(HANDOFF_EXTENSION_URI)
                .extension("https://example.com/ext/unknown/v1");
            let client = client(edge, &door, "probe", options).await;
            let answered = client
                .call::<SendMessageResult>(A2aRequest::SendMessage(MessageSendParams::new(
                    Message::user_text("hi"),
                )))
                .await;
            json!({
                "anonymous": outcome(refused, result_seen),
                "wrong credentials": outcome(wrong, result_seen),
                "let in": outcome(answered, |answer| json!({
                    "result": result_seen(&answer.value),
                    // Only the extension the agent supports is activated and echoed.
                    "extensions": answer.extensions,
                })),
            })
        },
    )
    .await;
    edge.stop().await;
}

#[tokio::test]
async fn policy_idempotency_and_isolation_are_the_same_through_every_door() {
    use agentyard::policy::{EntryPoint, Pattern, Rule, RulePolicy};
    let config = config().auth(
        EdgeAuth::default()
            .bearer_token(TOKEN, "alice")
            .bearer_token("t-bob", "bob"),
    );
    let edge = TestEdge::start_custom(config, |builder| {
        builder.policy(
            RulePolicy::builder()
                .rule(
                    Rule::deny()
                        .named("texty is not for the public")
                        .entry_point(EntryPoint::Http)
                        .to(Pattern::exact("texty")),
                )
                .build(),
        )
    })
    .await;
    same_through(
        "policy, idempotency, isolation",
        &edge,
        everywhere,
        |edge, door| async move {
            let alice = || ClientOptions::new().bearer_token(TOKEN);
            let denied = client(edge, &door, "texty", alice()).await;
            let denied = denied
                .send_message(MessageSendParams::new(Message::user_text("hi")))
                .await;
            // The same key twice from one caller: one task, the agent run once.
            let key = format!("key-{door}").replace(' ', "-");
            let keyed = client(edge, &door, "echo", alice().header("Idempotency-Key", key)).await;
            let first = keyed
                .send_message(MessageSendParams::new(Message::user_text("once")))
                .await
                .map(task_of)
                .expect("sent");
            let again = keyed
                .send_message(MessageSendParams::new(Message::user_text("once more")))
                .await
                .map(task_of)
                .expect("sent again");
            // Another caller cannot see alice's task.
            let bob = client(
                edge,
                &door,
                "echo",
                ClientOptions::new().bearer_token("t-bob"),
            )
            .await;
            let seen_by_bob = bob.get_task(TaskQueryParams::new(first.id.clone())).await;
            json!({
                "denied": outcome(denied, result_seen),
                "same task for the same key": first.id == again.id,
                "repeat": task_seen(&again),
                "bob reads alice's task": outcome(seen_by_bob, task_seen),
            })
        },
    )
    .await;
    edge.stop().await;
}
