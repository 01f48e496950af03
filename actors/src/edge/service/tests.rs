use std::sync::Arc;
use std::time::Duration;

use agentyard_policy::AllowAll;
use agentyard_transport::a2a::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
};
use agentyard_transport::a2a::{
    FileContent, FilePart, FileWithUri, MessageSendConfiguration, StreamEvent, TaskIdParams,
    TaskPushNotificationConfig, TaskQueryParams,
};
use agentyard_transport::handoff::{HandoffPayload, TaskDelegation};
use agentyard_transport::jsonrpc::RequestId;

use super::*;
use crate::agent::{Agent, AgentError, TaskContext};
use crate::edge::{AgentSettings, PushConfig};
use crate::events::{EventKind, Received};
use crate::store::InMemoryTaskStore;
use crate::supervisor::DEDUPLICATED_METADATA_KEY;
use crate::supervisor::{Registration, SupervisorConfig};

/// Replies `echo: {text}`.
struct Echo;

impl Agent for Echo {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(format!("echo: {text}"));
        Ok(())
    }
}

/// Replies with the payload type it received, or `none`.
struct Probe;

impl Agent for Probe {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let seen = ctx
            .payload()
            .map_or("none", |payload| payload.payload_type().as_str());
        ctx.reply_text(seen);
        Ok(())
    }
}

/// Works until canceled.
struct Sleeper;

impl Agent for Sleeper {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        ctx.cancelled().await;
        Ok(())
    }
}

async fn supervisor() -> Supervisor {
    let text = || vec!["text/plain".to_owned()];
    Supervisor::start(
        SupervisorConfig::default(),
        vec![
            Registration::new(AgentDescriptor::new("echo").expose(), |_| Echo),
            Registration::new(
                AgentDescriptor::new("texty").modes(text(), text()).expose(),
                |_| Echo,
            ),
            Registration::new(AgentDescriptor::new("probe").expose(), |_| Probe),
            Registration::new(AgentDescriptor::new("sleeper").expose(), |_| Sleeper),
            Registration::new(AgentDescriptor::new("internal"), |_| Echo),
        ],
        Arc::new(AllowAll),
        Arc::new(InMemoryTaskStore::new()),
    )
    .await
    .expect("supervisor")
}

async fn service_with(config: EdgeConfig) -> SupervisorService {
    let supervisor = supervisor().await;
    let push = config
        .push
        .enabled
        .then(|| PushNotifier::start(supervisor.clone(), config.push.clone()).expect("push"));
    SupervisorService::new(supervisor, &config, "http://edge.test", push).expect("service")
}

async fn service() -> SupervisorService {
    service_with(EdgeConfig::default().push(PushConfig::default().allow_loopback(true))).await
}

fn ctx(agent: &str) -> CallContext {
    CallContext::new(agent, RequestId::from(1))
}

fn send(text: &str) -> MessageSendParams {
    MessageSendParams::new(Message::user_text(text))
}

fn configured(
    params: MessageSendParams,
    configuration: MessageSendConfiguration,
) -> MessageSendParams {
    MessageSendParams {
        configuration: Some(configuration),
        ..params
    }
}

async fn result(service: &SupervisorService, context: CallContext, request: A2aRequest) -> Value {
    match service.call(context, request).await {
        Ok(Reply::Result(result)) => serde_json::to_value(result).expect("serializable"),
        Ok(other) => panic!("expected a result, got {other:?}"),
        Err(error) => panic!("expected a result, got {error:?}"),
    }
}

async fn error(
    service: &SupervisorService,
    context: CallContext,
    request: A2aRequest,
) -> JsonRpcError {
    match service.call(context, request).await {
        Ok(reply) => panic!("expected an error, got {reply:?}"),
        Err(error) => error,
    }
}

async fn events(
    service: &SupervisorService,
    context: CallContext,
    request: A2aRequest,
) -> Vec<StreamEvent> {
    match service.call(context, request).await {
        Ok(Reply::NumberedStream(stream)) => {
            stream
                .map(|item| item.expect("stream item").1)
                .collect()
                .await
        }
        Ok(other) => panic!("expected a stream, got {other:?}"),
        Err(error) => panic!("expected a stream, got {error:?}"),
    }
}

fn task_of(value: Value) -> Task {
    serde_json::from_value(value).expect("a task")
}

#[tokio::test]
async fn a_blocking_send_answers_with_the_completed_task() {
    let service = service().await;
    let task = task_of(result(&service, ctx("echo"), A2aRequest::SendMessage(send("hi"))).await);
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(
        task.status.message.map(|m| m.text()).as_deref(),
        Some("echo: hi")
    );
    assert_eq!(task.history.map(|h| h.len()), Some(2));
}

#[tokio::test]
async fn history_length_keeps_the_most_recent_messages() {
    let service = service().await;
    for (length, expected) in [(1, vec!["echo: hi"]), (0, vec![])] {
        let params = configured(
            send("hi"),
            MessageSendConfiguration {
                history_length: Some(length),
                ..MessageSendConfiguration::default()
            },
        );
        let task = task_of(result(&service, ctx("echo"), A2aRequest::SendMessage(params)).await);
        let texts: Vec<String> = task
            .history
            .unwrap_or_default()
            .iter()
            .map(|message| message.text())
            .collect();
        assert_eq!(texts, expected, "historyLength {length}");
    }
}

#[tokio::test]
async fn a_non_blocking_send_answers_with_the_submitted_task() {
    let service = service().await;
    let params = configured(
        send("hi"),
        MessageSendConfiguration {
            blocking: Some(false),
            ..MessageSendConfiguration::default()
        },
    );
    let task = task_of(result(&service, ctx("sleeper"), A2aRequest::SendMessage(params)).await);
    assert_eq!(task.status.state, TaskState::Submitted);
    let canceled = task_of(
        result(
            &service,
            ctx("sleeper"),
            A2aRequest::CancelTask(TaskIdParams::new(task.id.clone())),
        )
        .await,
    );
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let again = error(
        &service,
        ctx("sleeper"),
        A2aRequest::CancelTask(TaskIdParams::new(task.id)),
    )
    .await;
    assert_eq!(again.code, -32002);
}

#[tokio::test]
async fn an_agent_marked_so_answers_with_its_reply_message() {
    let config = EdgeConfig::default()
        .agent_settings("echo", AgentSettings::default().answer_with_message(true));
    let service = service_with(config).await;
    let value = result(&service, ctx("echo"), A2aRequest::SendMessage(send("hi"))).await;
    assert_eq!(value["kind"], "message");
    assert_eq!(value["role"], "agent");
    assert_eq!(value["parts"][0]["text"], "echo: hi");
    assert!(value["taskId"].is_string() && value["contextId"].is_string());
}

#[tokio::test]
async fn output_modes_the_agent_cannot_produce_are_refused() {
    let service = service().await;
    let refuse = configured(
        send("hi"),
        MessageSendConfiguration {
            accepted_output_modes: Some(vec!["image/png".to_owned()]),
            ..MessageSendConfiguration::default()
        },
    );
    let refused = error(&service, ctx("texty"), A2aRequest::SendMessage(refuse)).await;
    assert_eq!(refused.code, -32005);
    assert!(refused.message.contains("image/png"), "{}", refused.message);
    let accept = configured(
        send("hi"),
        MessageSendConfiguration {
            accepted_output_modes: Some(vec!["image/png".to_owned(), "text/*".to_owned()]),
            ..MessageSendConfiguration::default()
        },
    );
    result(&service, ctx("texty"), A2aRequest::SendMessage(accept)).await;
}

#[tokio::test]
async fn output_modes_are_read_as_clients_write_them() {
    let service = service().await;
    let accepting = |modes: &[&str]| {
        configured(
            send("hi"),
            MessageSendConfiguration {
                accepted_output_modes: Some(modes.iter().map(|&m| m.to_owned()).collect()),
                ..MessageSendConfiguration::default()
            },
        )
    };
    // The official samples' CLI client sends `["text"]`; entries that are not media
    // types are ignored, the rest still count.
    for modes in [
        &["text"][..],
        &["TEXT"],
        &["not a media type", "text/plain"],
        &["image/png", "text"],
        &["a/b/c", ""],
        &["*"],
    ] {
        result(
            &service,
            ctx("texty"),
            A2aRequest::SendMessage(accepting(modes)),
        )
        .await;
    }
    for modes in [&["json"][..], &["image", "bad type"], &["application/json"]] {
        let refused = error(
            &service,
            ctx("texty"),
            A2aRequest::SendMessage(accepting(modes)),
        )
        .await;
        assert_eq!(refused.code, -32005, "{modes:?}: {refused}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_blocking_send_past_the_request_timeout_answers_with_the_running_task() {
    let service = service_with(EdgeConfig::default().request_timeout(Duration::from_secs(2))).await;
    let started = tokio::time::Instant::now();
    let value = result(
        &service,
        ctx("sleeper"),
        A2aRequest::SendMessage(send("zz")),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered within the timeout"
    );
    assert_eq!(value["kind"], "task", "{value}");
    assert_eq!(value["status"]["state"], "working", "{value}");
    let id = TaskId::new(value["id"].as_str().expect("an id"));
    // The task goes on and can be followed.
    let task = service
        .supervisor()
        .get_task(&id, Some(0))
        .await
        .expect("kept");
    assert_eq!(task.status.state, TaskState::Working);
    service.supervisor().cancel_task(&id).await.expect("cancel");
}

#[test]
fn accepted_output_modes_become_media_ranges() {
    assert_eq!(accepted_range("text").as_deref(), Some("text/*"));
    assert_eq!(accepted_range("json").as_deref(), Some("application/json"));
    assert_eq!(accepted_range("*").as_deref(), Some("*/*"));
    assert_eq!(
        accepted_range(" Text/Plain; charset=utf-8").as_deref(),
        Some("text/plain")
    );
    for malformed in ["", " ", "text plain", "a/b/c", "/plain", "text/", "tëxt"] {
        assert_eq!(accepted_range(malformed), None, "{malformed:?}");
    }
}

#[tokio::test]
async fn parts_the_agent_does_not_accept_are_refused() {
    let service = service().await;
    let mut message = Message::user_text("look");
    message.parts.push(Part::File(FilePart {
        file: FileContent::Uri(FileWithUri {
            uri: "https://example.com/cat.png".to_owned(),
            name: None,
            mime_type: Some("image/png".to_owned()),
        }),
        metadata: None,
    }));
    let refused = error(
        &service,
        ctx("texty"),
        A2aRequest::SendMessage(MessageSendParams::new(message)),
    )
    .await;
    assert_eq!(refused.code, -32005);
    assert!(refused.message.contains("parts[1]"), "{}", refused.message);
}

#[tokio::test]
async fn a_message_without_parts_is_invalid_params() {
    let service = service().await;
    let refused = error(
        &service,
        ctx("echo"),
        A2aRequest::SendMessage(MessageSendParams::new(Message::new(Role::User, Vec::new()))),
    )
    .await;
    assert_eq!(refused.code, -32602);
    assert!(refused.message.contains("parts"), "{}", refused.message);
}

#[tokio::test]
async fn a_send_comes_from_the_principal_through_the_http_entry_point() {
    let service = service().await;
    let mut events = service.supervisor().subscribe();
    let mut context = ctx("echo");
    context.principal = Some(Principal::new("alice", "apiKey"));
    result(&service, context, A2aRequest::SendMessage(send("hi"))).await;
    let initiated = loop {
        match events.recv().await {
            Some(Received::Event(event)) if event.kind == EventKind::SendInitiated => break event,
            Some(_) => {}
            None => panic!("the bus closed"),
        }
    };
    assert_eq!(initiated.entry_point, EntryPoint::Http);
    assert_eq!(initiated.from.as_deref(), Some("alice"));
    assert_eq!(&*initiated.to, "echo");
}

fn delegation() -> Message {
    let payload = HandoffPayload::from(
        TaskDelegation::builder()
            .task_id("job-1")
            .task_title("Review")
            .task_description("Review PR #42")
            .build()
            .expect("valid"),
    );
    handoff::into_message(Role::User, "please review PR #42", &payload)
}

#[tokio::test]
async fn an_activated_handoff_reaches_the_agent_typed_and_marks_the_task() {
    let service = service().await;
    let mut context = ctx("probe");
    context.extensions.push(HANDOFF_EXTENSION_URI.to_owned());
    let task = task_of(
        result(
            &service,
            context,
            A2aRequest::SendMessage(MessageSendParams::new(delegation())),
        )
        .await,
    );
    assert_eq!(
        task.status.message.map(|m| m.text()).as_deref(),
        Some("task_delegation")
    );
    let marker = task
        .metadata
        .as_ref()
        .and_then(|m| m.get(HANDOFF_EXTENSION_URI))
        .cloned();
    assert_eq!(marker, Some(json!({"payloadType": "task_delegation"})));
}

#[tokio::test]
async fn without_activation_a_handoff_part_is_plain_data() {
    let service = service().await;
    let task = task_of(
        result(
            &service,
            ctx("probe"),
            A2aRequest::SendMessage(MessageSendParams::new(delegation())),
        )
        .await,
    );
    assert_eq!(
        task.status.message.map(|m| m.text()).as_deref(),
        Some("none")
    );
    assert!(task.metadata.is_none());
    let sent = &task.history.unwrap_or_default()[0];
    assert_eq!(sent.text(), "please review PR #42");
    assert!(matches!(&sent.parts[1], Part::Data(data) if data.metadata.is_none()));
}

#[tokio::test]
async fn an_invalid_activated_handoff_names_the_field() {
    let service = service().await;
    let mut message = delegation();
    if let Part::Data(data) = &mut message.parts[1] {
        data.data.insert("priority".to_owned(), json!("whenever"));
    }
    let mut context = ctx("probe");
    context.extensions.push(HANDOFF_EXTENSION_URI.to_owned());
    let refused = error(
        &service,
        context,
        A2aRequest::SendMessage(MessageSendParams::new(message)),
    )
    .await;
    assert_eq!(refused.code, -32602);
    assert!(refused.message.contains("priority"), "{}", refused.message);
}

#[tokio::test]
async fn a_stream_starts_with_the_task_and_ends_with_the_final_update() {
    let service = service().await;
    let mut context = ctx("probe");
    context.extensions.push(HANDOFF_EXTENSION_URI.to_owned());
    let events = events(
        &service,
        context,
        A2aRequest::SendStreamingMessage(MessageSendParams::new(delegation())),
    )
    .await;
    assert!(
        matches!(events.first(), Some(StreamEvent::Task(_))),
        "{events:?}"
    );
    let Some(StreamEvent::StatusUpdate(last)) = events.last() else {
        panic!("no final status update: {events:?}");
    };
    assert!(last.is_final);
    assert_eq!(last.status.state, TaskState::Completed);
    for event in &events[1..] {
        let StreamEvent::StatusUpdate(update) = event else {
            continue;
        };
        let marker = update
            .metadata
            .as_ref()
            .and_then(|m| m.get(HANDOFF_EXTENSION_URI));
        assert_eq!(marker, Some(&json!({"payloadType": "task_delegation"})));
    }
}

#[tokio::test]
async fn resubscribing_to_an_ended_task_yields_only_the_task() {
    let service = service().await;
    let task = task_of(result(&service, ctx("echo"), A2aRequest::SendMessage(send("hi"))).await);
    let events = events(
        &service,
        ctx("echo"),
        A2aRequest::TaskResubscription(TaskIdParams::new(task.id.clone())),
    )
    .await;
    assert_eq!(events.len(), 1);
    assert!(matches!(&events[0], StreamEvent::Task(t) if t.id == task.id));
}

#[tokio::test]
async fn an_unknown_task_is_32001_for_every_task_method() {
    let service = service().await;
    let id = TaskId::new("no-such-task");
    let requests = [
        A2aRequest::GetTask(TaskQueryParams::new(id.clone())),
        A2aRequest::CancelTask(TaskIdParams::new(id.clone())),
        A2aRequest::TaskResubscription(TaskIdParams::new(id.clone())),
        A2aRequest::SetTaskPushNotificationConfig(TaskPushNotificationConfig {
            task_id: id.clone(),
            push_notification_config: PushNotificationConfig::new("http://127.0.0.1:9/"),
        }),
        A2aRequest::ListTaskPushNotificationConfig(ListTaskPushNotificationConfigParams {
            id: id.clone(),
            metadata: None,
        }),
    ];
    for request in requests {
        let method = request.method();
        let refused = error(&service, ctx("echo"), request).await;
        assert_eq!(refused.code, -32001, "{method}");
        assert!(
            refused.message.contains("no-such-task"),
            "{method}: {}",
            refused.message
        );
    }
}

#[tokio::test]
async fn push_configs_round_trip_and_delete_answers_null() {
    let service = service().await;
    let task = task_of(result(&service, ctx("echo"), A2aRequest::SendMessage(send("hi"))).await);
    let set = result(
        &service,
        ctx("echo"),
        A2aRequest::SetTaskPushNotificationConfig(TaskPushNotificationConfig {
            task_id: task.id.clone(),
            push_notification_config: PushNotificationConfig::new("http://127.0.0.1:9/hook"),
        }),
    )
    .await;
    let id = set["pushNotificationConfig"]["id"]
        .as_str()
        .expect("minted id")
        .to_owned();
    let got = result(
        &service,
        ctx("echo"),
        A2aRequest::GetTaskPushNotificationConfig(GetTaskPushNotificationConfigParams {
            id: task.id.clone(),
            push_notification_config_id: Some(id.clone()),
            metadata: None,
        }),
    )
    .await;
    assert_eq!(got, set);
    let deleted = result(
        &service,
        ctx("echo"),
        A2aRequest::DeleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigParams {
            id: task.id.clone(),
            push_notification_config_id: id,
            metadata: None,
        }),
    )
    .await;
    assert_eq!(deleted, Value::Null);
    let listed = result(
        &service,
        ctx("echo"),
        A2aRequest::ListTaskPushNotificationConfig(ListTaskPushNotificationConfigParams {
            id: task.id,
            metadata: None,
        }),
    )
    .await;
    assert_eq!(listed, json!([]));
}

#[tokio::test]
async fn push_methods_are_32003_when_push_is_off() {
    let service = service_with(EdgeConfig::default().push(PushConfig::disabled())).await;
    let task = task_of(result(&service, ctx("echo"), A2aRequest::SendMessage(send("hi"))).await);
    let refused = error(
        &service,
        ctx("echo"),
        A2aRequest::ListTaskPushNotificationConfig(ListTaskPushNotificationConfigParams {
            id: task.id,
            metadata: None,
        }),
    )
    .await;
    assert_eq!(refused.code, -32003);
    let with_webhook = configured(
        send("hi"),
        MessageSendConfiguration {
            push_notification_config: Some(PushNotificationConfig::new("https://example.com/h")),
            ..MessageSendConfiguration::default()
        },
    );
    let refused = error(&service, ctx("echo"), A2aRequest::SendMessage(with_webhook)).await;
    assert_eq!(refused.code, -32003);
}

#[tokio::test]
async fn a_send_with_a_refused_webhook_does_not_run() {
    let service = service().await;
    let mut events = service.supervisor().subscribe();
    let params = configured(
        send("hi"),
        MessageSendConfiguration {
            push_notification_config: Some(PushNotificationConfig::new("http://10.1.2.3/hook")),
            ..MessageSendConfiguration::default()
        },
    );
    let refused = error(&service, ctx("echo"), A2aRequest::SendMessage(params)).await;
    assert_eq!(refused.code, -32602);
    assert!(
        refused.message.contains("http://10.1.2.3/hook"),
        "{}",
        refused.message
    );
    // Another send: if the refused one had started, its events would come first.
    result(&service, ctx("echo"), A2aRequest::SendMessage(send("ok"))).await;
    let mut initiated = 0;
    loop {
        match events.recv().await {
            Some(Received::Event(event)) if event.kind == EventKind::SendInitiated => {
                initiated += 1
            }
            Some(Received::Event(event)) if event.kind == EventKind::SendCompleted => break,
            Some(_) => {}
            None => panic!("the bus closed"),
        }
    }
    assert_eq!(initiated, 1);
}

#[tokio::test]
async fn the_extended_card_is_only_for_authenticated_callers() {
    let config = EdgeConfig::default().agent_settings(
        "echo",
        AgentSettings::default().extended_skills(vec![a2a::AgentSkill::new(
            "admin",
            "Admin",
            "Operator tools",
        )]),
    );
    let service = service_with(config).await;
    let anonymous = error(
        &service,
        ctx("echo"),
        A2aRequest::GetAuthenticatedExtendedCard,
    )
    .await;
    assert_eq!(anonymous.code, -32007);
    let mut context = ctx("echo");
    context.principal = Some(Principal::new("alice", "bearer"));
    let card = result(
        &service,
        context.clone(),
        A2aRequest::GetAuthenticatedExtendedCard,
    )
    .await;
    assert_eq!(card["skills"][0]["id"], "admin");
    context.agent = "probe".into();
    let none = error(&service, context, A2aRequest::GetAuthenticatedExtendedCard).await;
    assert_eq!(none.code, -32007);
}

#[tokio::test]
async fn only_exposed_agents_have_cards() {
    let service = service().await;
    assert_eq!(service.agents(), ["echo", "probe", "sleeper", "texty"]);
    assert!(service.card("internal").is_none());
    assert_eq!(
        service.card("echo").map(|c| c.url.clone()).as_deref(),
        Some("http://edge.test/agents/echo")
    );
    assert_eq!(service.default_agent(), None);
    let refused = error(
        &service,
        ctx("internal"),
        A2aRequest::SendMessage(send("hi")),
    )
    .await;
    assert_eq!(refused.code, -32602);
}

#[tokio::test]
async fn the_configuration_must_name_served_agents() {
    let supervisor = supervisor().await;
    let build = |config: EdgeConfig| {
        SupervisorService::new(supervisor.clone(), &config, "http://h", None)
            .map(|s| s.default_agent())
    };
    assert!(matches!(
        build(EdgeConfig::default().agents(["ghost"])),
        Err(EdgeError::UnknownAgent { key: "agents", .. })
    ));
    assert!(matches!(
        build(EdgeConfig::default().agents(["internal"])),
        Err(EdgeError::NotExposed { key: "agents", .. })
    ));
    assert!(matches!(
        build(
            EdgeConfig::default()
                .agents(["echo"])
                .default_agent("probe")
        ),
        Err(EdgeError::NotExposed {
            key: "default_agent",
            ..
        })
    ));
    assert!(matches!(
        build(EdgeConfig::default().agent_settings("ghost", AgentSettings::default())),
        Err(EdgeError::UnknownAgent {
            key: "agent_settings",
            ..
        })
    ));
    assert_eq!(
        build(EdgeConfig::default().agents(["echo"]))
            .ok()
            .flatten()
            .as_deref(),
        Some("echo")
    );
}

#[test]
fn media_ranges_match_like_accept_headers() {
    assert!(media_matches("text/plain", "text/plain; charset=utf-8"));
    assert!(media_matches("text/*", "text/markdown"));
    assert!(media_matches("*/*", "image/png"));
    assert!(media_matches("TEXT/PLAIN", "text/plain"));
    assert!(media_matches("Text/*", "text/Markdown ; charset=utf-8"));
    assert!(!media_matches("text/plain", "text/plainer"));
    assert!(!media_matches("text/plain", "application/json"));
    assert!(!media_matches("image/*", "text/plain"));
}

fn as_principal(agent: &str, name: &str) -> CallContext {
    let mut context = ctx(agent);
    context.principal = Some(Principal::new(name, "bearer"));
    context
}

/// Every task method of the edge, for one task id.
fn task_methods(id: &TaskId) -> Vec<A2aRequest> {
    vec![
        A2aRequest::GetTask(TaskQueryParams::new(id.clone())),
        A2aRequest::CancelTask(TaskIdParams::new(id.clone())),
        A2aRequest::TaskResubscription(TaskIdParams::new(id.clone())),
        A2aRequest::SetTaskPushNotificationConfig(TaskPushNotificationConfig {
            task_id: id.clone(),
            push_notification_config: PushNotificationConfig::new("http://127.0.0.1:9/"),
        }),
        A2aRequest::GetTaskPushNotificationConfig(GetTaskPushNotificationConfigParams {
            id: id.clone(),
            push_notification_config_id: None,
            metadata: None,
        }),
        A2aRequest::ListTaskPushNotificationConfig(ListTaskPushNotificationConfigParams {
            id: id.clone(),
            metadata: None,
        }),
        A2aRequest::DeleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigParams {
            id: id.clone(),
            push_notification_config_id: String::from("c"),
            metadata: None,
        }),
    ]
}

#[tokio::test]
async fn a_task_is_not_found_at_another_agent_or_by_another_principal() {
    let service = service().await;
    let task = task_of(
        result(
            &service,
            as_principal("echo", "alice"),
            A2aRequest::SendMessage(send("mine")),
        )
        .await,
    );
    let unknown = error(
        &service,
        ctx("echo"),
        A2aRequest::GetTask(TaskQueryParams::new(TaskId::new("x"))),
    )
    .await;
    for (who, context) in [
        ("another agent", as_principal("texty", "alice")),
        ("another principal", as_principal("echo", "bob")),
        ("no principal", ctx("echo")),
    ] {
        for request in task_methods(&task.id) {
            let method = request.method();
            let refused = error(&service, context.clone(), request).await;
            assert_eq!(refused.code, -32001, "{who}: {method}");
            // Word for word what an unknown id gets: nothing tells the task exists.
            assert_eq!(
                refused.message,
                unknown.message.replace("`x`", &format!("`{}`", task.id)),
                "{who}: {method}"
            );
        }
    }
    // Its owner still finds it.
    let found = task_of(
        result(
            &service,
            as_principal("echo", "alice"),
            A2aRequest::GetTask(TaskQueryParams::new(task.id.clone())),
        )
        .await,
    );
    assert_eq!(found.id, task.id);
}

#[tokio::test]
async fn a_task_made_in_process_is_not_found_by_an_authenticated_caller() {
    let service = service().await;
    let submitted = service
        .supervisor()
        .send_and_wait(SendRequest::new("echo", Message::user_text("inside")))
        .await
        .expect("sent");
    let refused = error(
        &service,
        as_principal("echo", "alice"),
        A2aRequest::GetTask(TaskQueryParams::new(submitted.task.id.clone())),
    )
    .await;
    assert_eq!(refused.code, -32001);
}

#[tokio::test]
async fn another_principals_conversation_is_never_joined() {
    let service = service().await;
    let alices = task_of(
        result(
            &service,
            as_principal("echo", "alice"),
            A2aRequest::SendMessage(send("secret")),
        )
        .await,
    );
    let mut message = Message::user_text("let me in");
    message.context_id = Some(alices.context_id.clone());
    let bobs = task_of(
        result(
            &service,
            as_principal("echo", "bob"),
            A2aRequest::SendMessage(MessageSendParams::new(message.clone())),
        )
        .await,
    );
    assert_ne!(
        bobs.context_id, alices.context_id,
        "bob got his own conversation"
    );
    // Alice continues hers.
    let again = task_of(
        result(
            &service,
            as_principal("echo", "alice"),
            A2aRequest::SendMessage(MessageSendParams::new(message)),
        )
        .await,
    );
    assert_eq!(again.context_id, alices.context_id);
}

#[tokio::test]
async fn a_bad_idempotency_key_header_is_invalid_params() {
    let service = service().await;
    for (key, says) in [
        ("", "is empty"),
        ("  ", "is empty"),
        ("tab\there", "printable ASCII"),
        ("caf\u{e9}", "printable ASCII"),
    ] {
        let mut context = ctx("echo");
        context.idempotency_key = Some(key.to_owned());
        let refused = error(&service, context, A2aRequest::SendMessage(send("hi"))).await;
        assert_eq!(refused.code, -32602, "{key:?}");
        assert!(
            refused.message.contains(says),
            "{key:?}: {}",
            refused.message
        );
    }
    let mut context = ctx("echo");
    context.idempotency_key = Some("k".repeat(256));
    let refused = error(&service, context, A2aRequest::SendMessage(send("hi"))).await;
    assert!(refused.message.contains("255"), "{}", refused.message);
}

#[tokio::test]
async fn a_repeated_idempotency_key_returns_the_first_task_marked() {
    let service = service().await;
    let keyed = |name: &str| {
        let mut context = as_principal("echo", name);
        context.idempotency_key = Some(String::from("order-1"));
        context
    };
    let first = task_of(result(&service, keyed("alice"), A2aRequest::SendMessage(send("a"))).await);
    let again = task_of(result(&service, keyed("alice"), A2aRequest::SendMessage(send("b"))).await);
    let bobs = task_of(result(&service, keyed("bob"), A2aRequest::SendMessage(send("c"))).await);
    assert_eq!(again.id, first.id);
    let mark = |task: &Task| {
        task.metadata
            .as_ref()
            .and_then(|m| m.get(DEDUPLICATED_METADATA_KEY))
            .cloned()
    };
    assert_eq!(mark(&again), Some(Value::Bool(true)));
    assert_eq!(mark(&first), None);
    assert_ne!(bobs.id, first.id, "another principal's key is another key");
    assert_eq!(mark(&bobs), None);
}

#[tokio::test]
async fn cards_follow_the_host_only_when_bound_to_an_unspecified_address() {
    let origin = "http://10.0.0.5:8080";
    let wildcard =
        service_with(EdgeConfig::default().bind("0.0.0.0:8080".parse().expect("addr"))).await;
    assert_eq!(
        wildcard.card_at("echo", origin).expect("exposed").url,
        "http://10.0.0.5:8080/agents/echo"
    );
    assert!(wildcard.card_at("internal", origin).is_none());
    let v6 = service_with(EdgeConfig::default().bind("[::]:8080".parse().expect("addr"))).await;
    assert_eq!(
        v6.card_at("echo", origin).expect("exposed").url,
        "http://10.0.0.5:8080/agents/echo"
    );
    // A public URL, or an address clients can reach, is what cards say.
    let public = service_with(
        EdgeConfig::default()
            .bind("0.0.0.0:8080".parse().expect("addr"))
            .public_url("https://agents.example.com"),
    )
    .await;
    assert_eq!(
        public.card_at("echo", origin).expect("exposed").url,
        "http://edge.test/agents/echo"
    );
    let loopback = service().await;
    assert_eq!(
        loopback.card_at("echo", origin).expect("exposed").url,
        "http://edge.test/agents/echo"
    );
}

/// A log sink for one test: every formatted line, in order.
#[derive(Clone, Default)]
struct Lines(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_refused_send_is_logged_once_at_info_with_its_reason() {
    let service = service().await;
    let refuse = || {
        configured(
            send("hi"),
            MessageSendConfiguration {
                accepted_output_modes: Some(vec!["image/png".to_owned()]),
                ..MessageSendConfiguration::default()
            },
        )
    };
    // Other tests on other threads reach the same call site with no subscriber. If
    // one of them is still registering it while this subscriber is set, the site's
    // cached interest ends up "never" and the line is lost (CI saw it once). So the
    // refusal runs once unobserved first: the site is registered by this thread,
    // and setting the subscriber then rebuilds its interest with the subscriber in.
    error(&service, ctx("texty"), A2aRequest::SendMessage(refuse())).await;
    let lines = Lines::default();
    let sink = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    tracing::callsite::rebuild_interest_cache();
    error(&service, ctx("texty"), A2aRequest::SendMessage(refuse())).await;
    result(&service, ctx("echo"), A2aRequest::SendMessage(send("fine"))).await;
    let text = String::from_utf8_lossy(&lines.0.lock().expect("not poisoned")).into_owned();
    let refused: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("send refused"))
        .collect();
    assert_eq!(refused.len(), 1, "{text}");
    assert!(refused[0].contains("INFO"), "{}", refused[0]);
    assert!(
        refused[0].contains("reason=\"output_mode_not_accepted\""),
        "{}",
        refused[0]
    );
    assert!(refused[0].contains("agent=texty"), "{}", refused[0]);
}

#[tokio::test]
async fn cards_list_the_grpc_interface_and_follow_the_host_when_nothing_else_is_reachable() {
    use agentyard_transport::a2a::TransportProtocol;

    let grpc_of = |card: AgentCard| {
        card.additional_interfaces
            .into_iter()
            .flatten()
            .find(|interface| interface.transport == TransportProtocol::Grpc)
            .map(|interface| interface.url)
    };
    let supervisor = supervisor().await;
    let config = EdgeConfig::default().bind("127.0.0.1:8080".parse().expect("an address"));
    let service = SupervisorService::with_grpc(
        supervisor.clone(),
        &config,
        "http://127.0.0.1:8080",
        None,
        Some("127.0.0.1:50051".parse().expect("an address")),
    )
    .expect("service");
    let card = service.card_at("echo", "http://elsewhere:1").expect("card");
    assert_eq!(grpc_of(card).as_deref(), Some("127.0.0.1:50051"));

    let open = EdgeConfig::default().bind("0.0.0.0:8080".parse().expect("an address"));
    let service = SupervisorService::with_grpc(
        supervisor.clone(),
        &open,
        "http://0.0.0.0:8080",
        None,
        Some("0.0.0.0:50051".parse().expect("an address")),
    )
    .expect("service");
    let card = service
        .card_at("echo", "http://agents.lan:8080")
        .expect("card");
    assert_eq!(
        grpc_of(card).as_deref(),
        Some("agents.lan:50051"),
        "the host the client reached, with the gRPC port"
    );
    let no_grpc = SupervisorService::new(supervisor, &EdgeConfig::default(), "http://h", None)
        .expect("service");
    assert_eq!(
        grpc_of(Arc::unwrap_or_clone(no_grpc.card("echo").expect("card"))),
        None
    );
}
