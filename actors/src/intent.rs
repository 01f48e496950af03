//! The pluggable intent classifier: what a free-text message means.
//!
//! A send with a handoff payload has the intent of its payload type
//! ([`PayloadType::intent`](agentyard_transport::handoff::PayloadType::intent)) and
//! is never classified. A send without one (plain free text, or text that claimed
//! to be a payload and fell back to free text) is what the seed's intent classifier
//! is for: the runtime asks the [`IntentClassifier`] it was built with, and its
//! answer is the `intent` of every event of the send and
//! [`TaskContext::intent`](crate::TaskContext::intent) for the agent. Without a
//! classifier (the default) a free-text send has no intent: the runtime does no
//! guesswork of its own.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;

use agentyard_transport::handoff::Intent;
use futures::FutureExt as _;

use crate::send::SendRequest;

/// Says what a free-text send means: delegation, report, question or answer.
///
/// Consulted once per free-text send, in the sender's task, before the send's first
/// event (`a2a.send.initiated`), so that every event of the send carries the
/// answer; a slow classifier (a model call) delays every free-text send by its
/// latency. `None` means "cannot tell". A classifier that panics counts as `None`
/// (and is logged); the send goes on.
///
/// ```
/// use agentyard_actors::{IntentClassifier, SendRequest};
/// use agentyard_transport::handoff::Intent;
///
/// /// A question ends with a question mark.
/// struct QuestionMark;
///
/// impl IntentClassifier for QuestionMark {
///     async fn classify(&self, request: &SendRequest) -> Option<Intent> {
///         request.message.text().trim_end().ends_with('?').then_some(Intent::Ask)
///     }
/// }
/// ```
pub trait IntentClassifier: Send + Sync + 'static {
    /// The intent of `request`, whose message carries no valid handoff payload.
    fn classify(&self, request: &SendRequest) -> impl Future<Output = Option<Intent>> + Send;
}

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// [`IntentClassifier`] with its future boxed, so that the configuration can hold
/// any classifier behind one pointer type.
trait DynIntentClassifier: Send + Sync + 'static {
    fn classify_dyn<'a>(&'a self, request: &'a SendRequest) -> BoxFuture<'a, Option<Intent>>;
}

impl<C: IntentClassifier> DynIntentClassifier for C {
    fn classify_dyn<'a>(&'a self, request: &'a SendRequest) -> BoxFuture<'a, Option<Intent>> {
        Box::pin(self.classify(request))
    }
}

/// A shared handle to an [`IntentClassifier`], as
/// [`SupervisorConfig::intent_classifier`](crate::SupervisorConfig::intent_classifier)
/// holds it. Cheap to clone.
#[derive(Clone)]
pub struct SharedIntentClassifier(Arc<dyn DynIntentClassifier>);

impl SharedIntentClassifier {
    /// Wraps a classifier.
    pub fn new(classifier: impl IntentClassifier) -> Self {
        Self(Arc::new(classifier))
    }

    /// Asks the classifier about a free-text send; a panic counts as "cannot tell".
    pub(crate) async fn classify(&self, request: &SendRequest) -> Option<Intent> {
        match AssertUnwindSafe(self.0.classify_dyn(request))
            .catch_unwind()
            .await
        {
            Ok(intent) => intent,
            Err(_) => {
                tracing::warn!(to = %request.to, "the intent classifier panicked; the send has no intent");
                None
            }
        }
    }
}

impl fmt::Debug for SharedIntentClassifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedIntentClassifier")
    }
}

#[cfg(test)]
mod tests;
