use agentyard_transport::a2a::Message;
use agentyard_transport::handoff::Intent;

use super::{IntentClassifier, SharedIntentClassifier};
use crate::send::SendRequest;

struct QuestionMark;

impl IntentClassifier for QuestionMark {
    async fn classify(&self, request: &SendRequest) -> Option<Intent> {
        request.message.text().ends_with('?').then_some(Intent::Ask)
    }
}

struct Panics;

impl IntentClassifier for Panics {
    async fn classify(&self, _request: &SendRequest) -> Option<Intent> {
        panic!("the classifier's own bug")
    }
}

#[tokio::test]
async fn the_classifiers_answer_is_passed_on() {
    let classifier = SharedIntentClassifier::new(QuestionMark);
    let asking = SendRequest::new("a", Message::user_text("which branch?"));
    let telling = SendRequest::new("a", Message::user_text("main"));
    assert_eq!(classifier.classify(&asking).await, Some(Intent::Ask));
    assert_eq!(classifier.classify(&telling).await, None);
}

#[tokio::test]
async fn a_panicking_classifier_counts_as_cannot_tell() {
    let classifier = SharedIntentClassifier::new(Panics);
    let request = SendRequest::new("a", Message::user_text("hi"));
    assert_eq!(classifier.classify(&request).await, None);
}
