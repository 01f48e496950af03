use agentyard_policy::EntryPoint;
use agentyard_transport::ContextId;
use agentyard_transport::a2a::TaskState;

use super::*;
use crate::limits::Limiter;

fn session() -> Arc<SessionShared> {
    Arc::new(SessionShared::new(Limiter::new(1, 8), 0))
}

fn envelope(from: &str) -> Envelope {
    Envelope {
        entry_point: EntryPoint::Api,
        from: Some(Arc::from(from)),
        to: Arc::from("echo"),
        context_id: Some(ContextId::new("c")),
        task_id: Some(TaskId::new("t")),
        payload_type: None,
        payload_json: None,
        intent: None,
        idempotency_key: None,
        accepted: std::time::Instant::now(),
        metrics: None,
    }
}

/// Opens task `t` in `session` and returns the table.
fn open(session: &Arc<SessionShared>) -> LiveTasks {
    let live = LiveTasks::default();
    let events = TaskEvents::new(
        TaskId::new("t"),
        ContextId::new("c"),
        TaskChannel::new(TaskState::Submitted, 4),
        envelope("first"),
    );
    live.create(Arc::from("echo"), events, Cancel::new(), session);
    live
}

#[test]
fn a_created_task_is_live_and_pins_its_session() {
    let session = session();
    let live = open(&session);
    assert_eq!(live.len(), 1);
    assert_eq!(live.agent(&TaskId::new("t")).as_deref(), Some("echo"));
    assert!(!session.is_idle(), "a live task keeps its session busy");
    let publisher = live.publisher(&TaskId::new("t")).expect("live");
    assert_eq!(publisher.envelope.from.as_deref(), Some("first"));
}

#[test]
fn a_continued_task_takes_the_new_send_and_its_new_session() {
    let old = session();
    let live = open(&old);
    let fresh = session();
    let (events, _) = live
        .continue_with(&TaskId::new("t"), &envelope("second"), &fresh)
        .expect("live");
    assert_eq!(events.envelope.from.as_deref(), Some("second"));
    assert!(old.is_idle(), "the old session is let go");
    assert!(!fresh.is_idle(), "the new one is pinned");
    let publisher = live.publisher(&TaskId::new("t")).expect("live");
    assert_eq!(publisher.envelope.from.as_deref(), Some("second"));
    assert!(
        live.continue_with(&TaskId::new("other"), &envelope("x"), &fresh)
            .is_none()
    );
}

#[test]
fn an_ended_task_leaves_the_table_once_and_frees_its_session() {
    let session = session();
    let live = open(&session);
    let ended = live.end(&TaskId::new("t")).expect("it was live");
    assert_eq!(&*ended.key.agent, "echo");
    assert_eq!(ended.key.context_id, ContextId::new("c"));
    assert!(Arc::ptr_eq(&ended.session, &session));
    assert!(session.is_idle());
    assert_eq!(live.len(), 0);
    assert!(
        live.end(&TaskId::new("t")).is_none(),
        "a second end finds nothing"
    );
    assert!(live.publisher(&TaskId::new("t")).is_none());
}

#[test]
fn a_cancel_reaches_the_tasks_token() {
    let session = session();
    let live = open(&session);
    let token = live.cancel_token(&TaskId::new("t")).expect("live");
    let (_, theirs) = live
        .continue_with(&TaskId::new("t"), &envelope("second"), &session)
        .expect("live");
    token.cancel();
    assert!(theirs.is_cancelled());
    assert!(live.cancel_token(&TaskId::new("other")).is_none());
}

#[test]
fn followers_are_counted_while_they_follow() {
    let session = session();
    let live = open(&session);
    assert_eq!(live.stream_count(), 0);
    let rx = live.subscribe(&TaskId::new("t")).expect("live");
    assert_eq!(live.stream_count(), 1);
    assert!(matches!(
        live.follow(&TaskId::new("t"), Follow::State),
        Some(Watcher::State(_))
    ));
    drop(rx);
    let snapshot = live.snapshot();
    assert_eq!(snapshot.len(), 1);
    assert_eq!(snapshot[0].0, TaskId::new("t"));
}
