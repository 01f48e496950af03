//! What can go wrong starting the edge or handling a push notification config.

use std::net::SocketAddr;

use agentyard_transport::TaskId;

/// An error of the HTTP edge: a configuration that cannot work, a failed start, or a
/// push notification config the edge refuses.
///
/// Kept apart from the runtime's [`crate::Error`] because none of it concerns a send:
/// these are refusals of the edge's own configuration and of webhooks.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EdgeError {
    /// The configuration names an agent that is not registered.
    #[error("`{key}` names agent `{agent}`, which is not registered")]
    UnknownAgent {
        /// The configuration key, e.g. `default_agent`.
        key: &'static str,
        /// The agent name.
        agent: String,
    },
    /// The configuration names an agent whose descriptor is not `exposed`.
    #[error("`{key}` names agent `{agent}`, which is registered but not exposed")]
    NotExposed {
        /// The configuration key.
        key: &'static str,
        /// The agent name.
        agent: String,
    },
    /// The bindings leave no HTTP binding on (or name one A2A does not define).
    #[error("`bindings` {0}")]
    Bindings(String),
    /// The public URL is not an absolute http(s) URL.
    #[error("`public_url` {url:?} is not an absolute http or https URL")]
    PublicUrl {
        /// The URL as configured.
        url: String,
    },
    /// The listening socket could not be bound.
    #[error("could not listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The edge actor could not start.
    #[error("the edge actor could not start: {0}")]
    Start(String),
    /// The task store refused to keep a push-notification config.
    #[error("the task store could not keep the push notification config: {0}")]
    Store(#[source] crate::store::StoreError),
    /// The HTTP client for push notifications could not be built.
    #[error("the push notification client could not be built")]
    PushClient(#[source] reqwest::Error),
    /// A webhook URL that is not usable (not http(s), no host, credentials in it).
    #[error("webhook URL {url:?} is invalid: {reason}")]
    InvalidWebhookUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A webhook URL whose IP-literal host is an address the operator does not allow
    /// (loopback, private, link-local, metadata): server-side request forgery guard.
    #[error("webhook URL {url:?} is refused: {reason}")]
    WebhookRefused {
        /// The URL as given.
        url: String,
        /// Which address was refused and why.
        reason: String,
    },
    /// The webhook asks for an authentication scheme the sender cannot use.
    #[error(
        "push notification authentication schemes {schemes:?} are not supported (supported: Bearer, Basic)"
    )]
    UnsupportedAuthentication {
        /// The schemes the config listed.
        schemes: Vec<String>,
    },
    /// The task already has as many webhooks as allowed.
    #[error("task `{task_id}` already has {limit} push notification configs, the most allowed")]
    TooManyConfigs {
        /// The task.
        task_id: TaskId,
        /// The limit.
        limit: usize,
    },
    /// No webhook of the task has that id.
    #[error("task `{task_id}` has no push notification config {id}")]
    ConfigNotFound {
        /// The task.
        task_id: TaskId,
        /// The config id asked for, or a note that the task has none.
        id: String,
    },
}
