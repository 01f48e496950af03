use super::*;

fn request() -> SendRequest {
    SendRequest::new("echo", Message::user_text("hi"))
}

#[test]
fn a_new_request_comes_from_the_api_with_nothing_else_set() {
    let request = request();
    assert_eq!(request.to, "echo");
    assert_eq!(request.entry_point, EntryPoint::Api);
    assert_eq!(request.hops, 0);
    assert!(request.from.is_none() && request.principal.is_none());
    assert!(request.idempotency_key.is_none() && request.payload.is_none());
    assert!(request.metadata.is_none() && request.extensions.is_empty());
    assert!(request.chain.is_empty());
}

#[test]
fn the_builder_sets_what_it_names() {
    let request = request()
        .from("planner")
        .principal("alice")
        .entry_point(EntryPoint::Agent)
        .idempotency_key("k")
        .hops(3)
        .extensions(vec![String::from("urn:x")]);
    assert_eq!(request.from.as_deref(), Some("planner"));
    assert_eq!(request.principal.as_deref(), Some("alice"));
    assert_eq!(request.entry_point, EntryPoint::Agent);
    assert_eq!(request.idempotency_key.as_deref(), Some("k"));
    assert_eq!(request.hops, 3);
    assert_eq!(request.extensions, [String::from("urn:x")]);
}

#[test]
fn the_idempotency_caller_is_the_principal_before_the_sender() {
    assert!(matches!(caller(&request()), Caller::Anonymous));
    let from = request().from("planner");
    assert!(matches!(caller(&from), Caller::Sender("planner")));
    let both = from.principal("alice");
    assert!(matches!(caller(&both), Caller::Principal("alice")));
}

#[test]
fn a_deduplicated_task_is_marked_in_its_metadata() {
    let mut task = Task::new(
        agentyard_transport::TaskId::new("t"),
        ContextId::new("c"),
        agentyard_transport::a2a::TaskStatus::new(TaskState::Working),
    );
    mark_deduplicated(&mut task);
    let marked = task
        .metadata
        .as_ref()
        .and_then(|m| m.get(DEDUPLICATED_METADATA_KEY));
    assert_eq!(marked, Some(&serde_json::Value::Bool(true)));
}

#[test]
fn two_sessions_differ_by_agent_or_conversation() {
    let key = |agent: &str, context: &str| SessionKey {
        agent: Arc::from(agent),
        context_id: ContextId::new(context),
    };
    assert_eq!(key("a", "c"), key("a", "c"));
    assert_ne!(key("a", "c"), key("b", "c"));
    assert_ne!(key("a", "c"), key("a", "d"));
}
