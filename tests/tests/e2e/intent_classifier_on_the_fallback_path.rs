//! Intent without a payload, as the seed's fallback path describes it, over HTTP: a
//! free-text send (and text that claimed to be a payload but was not a valid one)
//! is classified by the runtime's intent classifier, whose answer is on every event
//! of the send and in the agent's `TaskContext`; the invalid payload raises the
//! `a2a.payload.fallback` warning with its problems and the rejected text. A send
//! with a payload is never classified, and without a classifier there is no intent.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agentyard::handoff::Intent;
use agentyard::{
    Agent, AgentDescriptor, AgentError, EventDetail, EventKind, IntentClassifier, SendRequest,
    TaskContext,
};
use agentyard_tests::events::EventLog;
use agentyard_tests::http::{TestEdge, text_message};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(10);

/// A stand-in for the seed's model-based classifier: a question mark means a
/// question, "please" a delegation; it counts its calls.
#[derive(Clone, Default)]
struct Keywords {
    calls: Arc<AtomicUsize>,
}

impl IntentClassifier for Keywords {
    async fn classify(&self, request: &SendRequest) -> Option<Intent> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let text = request.message.text();
        if text.trim_end().ends_with('?') || text.contains("\"question\"") {
            Some(Intent::Ask)
        } else if text.contains("please") {
            Some(Intent::Delegate)
        } else {
            None
        }
    }
}

/// Replies with the intent it was handed and the text it got.
struct Intents;

impl Agent for Intents {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let intent = ctx.intent().map_or("none", |i| i.as_str());
        let payload = ctx.payload().map_or("free", |p| p.payload_type().as_str());
        ctx.reply_text(format!("{intent} {payload}: {}", ctx.message().text()));
        Ok(())
    }
}

async fn edge(classifier: Option<Keywords>) -> TestEdge {
    TestEdge::start_custom(TestEdge::config(), move |builder| {
        let builder = builder.agent(AgentDescriptor::new("intents").exposed(true), |_| Intents);
        match classifier {
            Some(classifier) => builder.intent_classifier(classifier),
            None => builder,
        }
    })
    .await
}

async fn send(edge: &TestEdge, text: &str) -> String {
    let response = edge
        .rpc(
            "intents",
            "message/send",
            json!({"message": text_message(text)}),
        )
        .await;
    response["result"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no reply in {response}"))
        .to_owned()
}

#[tokio::test]
async fn an_invalid_payload_falls_back_to_classified_free_text_with_a_warning() {
    let classifier = Keywords::default();
    let edge = edge(Some(classifier.clone())).await;
    let log = EventLog::start(&edge.runtime);
    // A question without its questionId: the seed's "검증 실패" branch.
    let broken = json!({"type": "question", "question": "Which branch?"}).to_string();

    let reply = send(&edge, &broken).await;
    assert_eq!(
        reply,
        format!("ask free: {broken}"),
        "the agent got free text"
    );

    let completed = log
        .wait_for(WAIT, "the send's closing event", |e| {
            e.kind == EventKind::SendCompleted
        })
        .await;
    let kinds: Vec<EventKind> = log.events().iter().map(|e| e.kind).collect();
    assert_eq!(kinds[0], EventKind::SendInitiated, "{kinds:?}");
    assert_eq!(kinds[1], EventKind::PayloadFallback, "{kinds:?}");
    // Every event of the send carries the classifier's answer; the agent's answer
    // (`a2a.response`) has an intent of its own (none: it is free text).
    for event in log.events() {
        assert_eq!(event.payload_type, None, "{event:?}");
        let expected = (event.kind != EventKind::Response).then_some(Intent::Ask);
        assert_eq!(event.intent, expected, "{event:?}");
    }
    let fallback = &log.events()[1];
    let EventDetail::Reason { reason } = &fallback.detail else {
        panic!("the warning says why: {fallback:?}");
    };
    assert_eq!(reason, "questionId: is required");
    assert_eq!(fallback.payload_json.as_deref(), Some(broken.as_str()));
    assert_eq!(completed.payload_json, None);
    assert_eq!(classifier.calls.load(Ordering::SeqCst), 1);
    edge.stop().await;
}

#[tokio::test]
async fn free_text_is_classified_and_payloads_are_not() {
    let classifier = Keywords::default();
    let edge = edge(Some(classifier.clone())).await;
    let log = EventLog::start(&edge.runtime);

    assert_eq!(
        send(&edge, "please review PR #42").await,
        "delegate free: please review PR #42"
    );
    assert_eq!(send(&edge, "hello").await, "none free: hello");
    let initiated = log
        .wait_for(WAIT, "the first send's first event", |e| {
            e.kind == EventKind::SendInitiated
        })
        .await;
    assert_eq!(initiated.intent, Some(Intent::Delegate));
    assert_eq!(classifier.calls.load(Ordering::SeqCst), 2);

    // A valid payload has its own intent; the classifier is not asked.
    let answer = json!({"type": "answer", "questionId": "q-1", "answer": "main?"}).to_string();
    assert_eq!(
        send(&edge, &answer).await,
        format!("respond answer: {answer}")
    );
    assert_eq!(classifier.calls.load(Ordering::SeqCst), 2);
    assert_eq!(log.count(EventKind::PayloadFallback), 0);
    edge.stop().await;
}

#[tokio::test]
async fn without_a_classifier_free_text_has_no_intent() {
    let edge = edge(None).await;
    let log = EventLog::start(&edge.runtime);
    assert_eq!(
        send(&edge, "which branch?").await,
        "none free: which branch?"
    );
    let initiated = log
        .wait_for(WAIT, "the send's first event", |e| {
            e.kind == EventKind::SendInitiated
        })
        .await;
    assert_eq!(initiated.intent, None);
    edge.stop().await;
}
