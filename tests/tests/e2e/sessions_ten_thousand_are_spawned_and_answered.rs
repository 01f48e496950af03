//! Many sessions in one process: ten thousand conversations with one agent type each
//! get a session actor of their own and every one is answered; sessions can also be
//! started and stopped from code.

use std::collections::HashSet;
use std::time::Duration;

use agentyard::{AgentDescriptor, ContextId, Message, Runtime, TaskState};
use agentyard_tests::{Echo, Recorder, status_text, within};

const SESSIONS: usize = 10_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_sessions_are_spawned_and_every_one_is_answered() {
    let echo = Echo::default();
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("echo"), {
            let echo = echo.clone();
            move |_| echo.clone()
        })
        // Every send is in flight at once: 1,000 run (the default per-agent limit) and
        // the rest wait in a line long enough to hold them.
        .agent_queue(SESSIONS)
        // Every session is kept warm, so each one can be counted at the end.
        .warm_sessions(SESSIONS)
        .build()
        .await
        .expect("runtime starts");

    let sends = (0..SESSIONS).map(|i| {
        let runtime = runtime.clone();
        tokio::spawn(async move {
            let context = ContextId::new(format!("conversation-{i}"));
            let message = Message::user_text(format!("hello {i}")).with_context_id(context.clone());
            let done = runtime
                .send_and_wait("echo", message)
                .await
                .unwrap_or_else(|e| panic!("send {i} failed: {e}"));
            (i, context, done.task)
        })
    });
    let answered = within(
        Duration::from_secs(60),
        "ten thousand sends",
        futures::future::join_all(sends),
    )
    .await;

    let mut contexts = HashSet::new();
    for joined in answered {
        let (i, context, task) = joined.expect("no send task panicked");
        assert_eq!(task.status.state, TaskState::Completed, "send {i}");
        assert_eq!(status_text(&task), format!("echo: hello {i}"));
        assert_eq!(
            task.context_id, context,
            "each send stays in its own conversation"
        );
        contexts.insert(task.context_id);
    }
    assert_eq!(contexts.len(), SESSIONS);
    assert_eq!(
        echo.calls.count(),
        SESSIONS,
        "each message was handled once"
    );
    assert_eq!(
        runtime.supervisor().session_count(),
        SESSIONS,
        "one live session per conversation"
    );
    assert_eq!(runtime.supervisor().restart_count(), 0);
    runtime.shutdown(Duration::from_secs(5)).await;
    assert_eq!(runtime.supervisor().session_count(), 0);
}

#[tokio::test]
async fn sessions_are_spawned_and_stopped_from_code_and_keep_their_history() {
    let recorder = Recorder::default();
    let runtime = Runtime::builder()
        .agent(AgentDescriptor::new("notes"), {
            let recorder = recorder.clone();
            move |_| recorder.clone()
        })
        .build()
        .await
        .expect("runtime starts");

    let minted = runtime
        .spawn_session("notes", None)
        .expect("a session with a fresh conversation");
    let named = runtime
        .spawn_session("notes", Some(ContextId::new("standup")))
        .expect("a session for a named conversation");
    assert_eq!(named, ContextId::new("standup"));
    assert_ne!(minted, named);
    assert_eq!(runtime.supervisor().session_count(), 2);
    assert!(
        runtime.spawn_session("nobody", None).is_err(),
        "unknown agent types cannot be spawned"
    );

    let done = runtime
        .send_and_wait(
            "notes",
            Message::user_text("first").with_context_id(named.clone()),
        )
        .await
        .expect("the spawned session answers");
    assert_eq!(done.task.context_id, named);
    assert_eq!(
        runtime.supervisor().session_count(),
        2,
        "the message went to the session spawned for it"
    );

    assert!(runtime.stop_session("notes", &named));
    assert!(!runtime.stop_session("notes", &named), "already stopped");
    assert_eq!(runtime.supervisor().session_count(), 1);

    runtime
        .send_and_wait(
            "notes",
            Message::user_text("second").with_context_id(named.clone()),
        )
        .await
        .expect("a stopped session starts again on its next message");
    assert_eq!(runtime.supervisor().session_count(), 2);
    let seen = recorder.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].history, ["first", "noted: first"]);
}
