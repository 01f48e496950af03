//! `message/send` over HTTP: blocking until the task settles unless asked not to,
//! `historyLength`, conversations and input-required turns, and a Message answer for
//! an agent configured to give one.

use agentyard::a2a::{
    Message, MessageSendConfiguration, MessageSendParams, SendMessageResult, Task, TaskQueryParams,
    TaskState,
};
use agentyard::client::{A2aClient, ClientError};
use agentyard::edge::AgentSettings;
use agentyard_tests::http::TestEdge;
use agentyard_tests::{PATIENCE, eventually};

fn params(message: Message, configuration: MessageSendConfiguration) -> MessageSendParams {
    MessageSendParams {
        configuration: Some(configuration),
        ..MessageSendParams::new(message)
    }
}

async fn task(client: &A2aClient, params: MessageSendParams) -> Task {
    match client
        .send_message(params)
        .await
        .expect("the send succeeds")
    {
        SendMessageResult::Task(task) => task,
        SendMessageResult::Message(message) => panic!("expected a task, got {message:?}"),
    }
}

fn reply(task: &Task) -> String {
    task.status
        .message
        .as_deref()
        .map(Message::text)
        .unwrap_or_default()
}

#[tokio::test]
async fn a_blocking_send_returns_the_completed_task_with_its_history() {
    let edge = TestEdge::start().await;
    let client = edge.client("echo").await;
    let done = task(&client, MessageSendParams::new(Message::user_text("hello"))).await;
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(reply(&done), "echo: hello");
    let history: Vec<String> = done
        .history
        .unwrap_or_default()
        .iter()
        .map(|message| message.text())
        .collect();
    assert_eq!(history, ["hello", "echo: hello"]);
    edge.stop().await;
}

#[tokio::test]
async fn history_length_returns_only_the_most_recent_messages() {
    let edge = TestEdge::start().await;
    let client = edge.client("echo").await;
    for (length, expected) in [(1_u32, vec!["echo: hi"]), (0, Vec::new())] {
        let configuration = MessageSendConfiguration {
            history_length: Some(length),
            ..MessageSendConfiguration::default()
        };
        let done = task(&client, params(Message::user_text("hi"), configuration)).await;
        let history: Vec<String> = done
            .history
            .unwrap_or_default()
            .iter()
            .map(|message| message.text())
            .collect();
        assert_eq!(history, expected, "historyLength {length}");
    }
    edge.stop().await;
}

#[tokio::test]
async fn a_non_blocking_send_returns_at_once_and_the_task_goes_on() {
    let edge = TestEdge::start().await;
    let client = edge.client("gated").await;
    let configuration = MessageSendConfiguration {
        blocking: Some(false),
        ..MessageSendConfiguration::default()
    };
    let submitted = task(&client, params(Message::user_text("job"), configuration)).await;
    assert!(
        matches!(
            submitted.status.state,
            TaskState::Submitted | TaskState::Working
        ),
        "{:?}",
        submitted.status.state
    );
    edge.open_gate(1);
    let done = eventually(PATIENCE, "the task to complete", || {
        let client = client.clone();
        let id = submitted.id.clone();
        async move {
            let task = client.get_task(TaskQueryParams::new(id)).await.ok()?;
            (task.status.state == TaskState::Completed).then_some(task)
        }
    })
    .await;
    assert_eq!(reply(&done), "done: job");
    edge.stop().await;
}

#[tokio::test]
async fn an_input_required_task_continues_with_the_next_message() {
    let edge = TestEdge::start().await;
    let client = edge.client("ask").await;
    let asked = task(
        &client,
        MessageSendParams::new(Message::user_text("paint it")),
    )
    .await;
    assert_eq!(asked.status.state, TaskState::InputRequired);
    assert_eq!(reply(&asked), "Which colour?");
    let answer = Message::user_text("blue")
        .with_task_id(asked.id.clone())
        .with_context_id(asked.context_id.clone());
    let done = task(&client, MessageSendParams::new(answer)).await;
    assert_eq!(done.id, asked.id);
    assert_eq!(done.context_id, asked.context_id);
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(reply(&done), "answer: blue");
    edge.stop().await;
}

#[tokio::test]
async fn the_server_mints_the_context_and_the_client_keeps_it() {
    let edge = TestEdge::start().await;
    let client = edge.client("echo").await;
    let first = task(&client, MessageSendParams::new(Message::user_text("one"))).await;
    let second = task(
        &client,
        MessageSendParams::new(Message::user_text("two").with_context_id(first.context_id.clone())),
    )
    .await;
    assert_eq!(second.context_id, first.context_id);
    assert_ne!(second.id, first.id);
    edge.stop().await;
}

#[tokio::test]
async fn a_message_to_an_ended_task_is_refused() {
    let edge = TestEdge::start().await;
    let client = edge.client("echo").await;
    let done = task(&client, MessageSendParams::new(Message::user_text("one"))).await;
    let late = Message::user_text("two").with_task_id(done.id.clone());
    let error = client
        .send_message(MessageSendParams::new(late))
        .await
        .expect_err("the task has ended");
    let rpc = error.json_rpc_error().expect("a JSON-RPC error");
    assert_eq!(rpc.code, -32602);
    assert!(rpc.message.contains(done.id.as_str()), "{}", rpc.message);
    edge.stop().await;
}

#[tokio::test]
async fn an_agent_configured_for_it_answers_with_a_message() {
    let config = TestEdge::config()
        .agent_settings("echo", AgentSettings::default().answer_with_message(true));
    let edge = TestEdge::start_with(config).await;
    let client = edge.client("echo").await;
    let answer = client
        .send_message(MessageSendParams::new(Message::user_text("hi")))
        .await
        .expect("the send succeeds");
    let SendMessageResult::Message(message) = answer else {
        panic!("expected a message, got {answer:?}");
    };
    assert_eq!(message.text(), "echo: hi");
    let task_id = message.task_id.clone().expect("the message names its task");
    let stored = client
        .get_task(TaskQueryParams::new(task_id))
        .await
        .expect("the task exists");
    assert_eq!(stored.status.state, TaskState::Completed);
    edge.stop().await;
}

#[tokio::test]
async fn a_send_without_parts_is_invalid_params() {
    let edge = TestEdge::start().await;
    let client = edge.client("echo").await;
    let empty = Message::new(agentyard::a2a::Role::User, Vec::new());
    let error: ClientError = client
        .send_message(MessageSendParams::new(empty))
        .await
        .expect_err("no parts");
    assert_eq!(error.json_rpc_error().map(|e| e.code), Some(-32602));
    edge.stop().await;
}
