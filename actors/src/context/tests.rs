use agentyard_transport::a2a::TaskStatus;

use super::*;
use crate::port::tests::TestPort;

#[tokio::test]
async fn a_request_is_stamped_as_this_agents_however_it_was_built() {
    let port = TestPort::new();
    let ctx = port.open("hi").await.context(&port, 2);
    let forged = SendRequest::new("other", Message::user_text("hi"))
        .from("someone-else")
        .principal("alice")
        .entry_point(EntryPoint::Http)
        .hops(0);
    let stamped = ctx.stamped(forged);
    assert_eq!(stamped.from.as_deref(), Some("echo"));
    assert_eq!(stamped.principal, None);
    assert_eq!(stamped.entry_point, EntryPoint::Agent);
    assert_eq!(stamped.hops, 3);
    let deeper = ctx.stamped(SendRequest::new("other", Message::user_text("hi")).hops(7));
    assert_eq!(deeper.hops, 7, "a request may claim more hops, never fewer");
}

#[tokio::test]
async fn only_a_waiting_send_carries_the_chain_of_waiting_sessions() {
    let port = TestPort::new();
    let opened = port.open("hi").await;
    let key = opened.key.clone();
    let ctx = opened.context(&port, 0);
    let _ = ctx.send("other", Message::user_text("no wait")).await;
    let _ = ctx.send_and_wait("other", Message::user_text("wait")).await;
    let sent = port.sent();
    assert_eq!(sent.len(), 2, "both went through the port");
    assert!(
        sent[0].chain.is_empty(),
        "a send that does not wait holds nothing"
    );
    assert_eq!(
        &*sent[1].chain,
        [key],
        "a waiting send names the session it blocks"
    );
    assert!(sent.iter().all(|r| r.from.as_deref() == Some("echo")));
}

#[tokio::test]
async fn progress_and_artifacts_reach_the_store_and_the_followers() {
    let port = TestPort::new();
    let opened = port.open("hi").await;
    let mut updates = opened.events.channel.subscribe();
    let mut ctx = opened.context(&port, 0);
    ctx.working(Some("thinking")).await.expect("working");
    let artifact = agentyard_transport::a2a::Artifact::new("a-1", vec![Part::text("a")]);
    ctx.artifact(artifact).await.expect("artifact");
    let task = ctx.task(None).await.expect("stored");
    assert_eq!(task.status.state, TaskState::Working);
    assert_eq!(task.artifacts.map(|a| a.len()), Some(1));
    let (_, working) = updates.recv().await.expect("working");
    assert!(matches!(
        &*working,
        agentyard_transport::a2a::StreamEvent::StatusUpdate(u) if !u.is_final
    ));
    let (_, artifact) = updates.recv().await.expect("the artifact");
    assert!(matches!(
        &*artifact,
        agentyard_transport::a2a::StreamEvent::ArtifactUpdate(_)
    ));
}

#[tokio::test]
async fn the_history_is_the_conversation_before_this_message_up_to_the_depth() {
    let port = TestPort::new();
    let first = port.open("first").await;
    let _ = first; // the earlier task of the same conversation
    let ctx = port.open("second").await.context(&port, 0);
    let history: Vec<String> = ctx
        .history()
        .await
        .iter()
        .map(|message| message.text())
        .collect();
    assert_eq!(history, ["first"]);
}

#[tokio::test]
async fn the_outcome_is_what_the_context_was_last_told() {
    let port = TestPort::new();
    let mut ctx = port.open("hi").await.context(&port, 0);
    assert_eq!(ctx.finish.name(), None, "completed unless told otherwise");
    ctx.require_input("which one?");
    assert_eq!(ctx.finish.name(), Some("input-required"));
    ctx.reject("no");
    assert_eq!(ctx.finish.name(), Some("rejected"));
    ctx.complete();
    assert_eq!(ctx.finish.name(), None);
    let _ = TaskStatus::new(TaskState::Completed);
}
