//! Push notifications: the webhooks of each task and the sender that calls them.
//!
//! # How a status change becomes a POST
//!
//! The notifier subscribes to the runtime's event bus ([`Supervisor::subscribe`]).
//! Every `a2a.task.status` event of a task that has webhooks becomes a job on a
//! bounded queue; a worker reads the task from the store, sets the status of that
//! event on it, and POSTs the task JSON to each of the task's webhooks with
//! `X-A2A-Notification-Token` (when the config has a token) and an `Authorization`
//! header from `authentication` (`Bearer` or `Basic` with its `credentials`).
//!
//! - **Never blocking the runtime.** The bus never waits for the notifier: a notifier
//!   that falls behind is told how many events it missed, and then re-reads every task
//!   with webhooks and notifies those whose status moved on since their last
//!   notification. The queue never waits either: when it is full the notification is
//!   dropped with a warning (counted in [`PushStats::dropped`]).
//! - **Order.** Jobs are sharded by task over the workers, and a worker handles its
//!   jobs one after another, so one task's notifications arrive in order. The webhooks
//!   of one job are called concurrently. The price is head-of-line blocking: a webhook
//!   that keeps failing holds its worker for its retries (at most `attempts` ×
//!   `request_timeout` plus the backoff).
//! - **Retries.** A connection failure, a timeout, 408, 429 or a 5xx is retried with
//!   exponential backoff up to `attempts` in all; so is a host name that does not
//!   resolve (DNS may come back). Any other answer, or an address the guard refuses,
//!   ends the delivery at once. A delivery given up on is counted in
//!   [`PushStats::failed`] and reported as an `a2a.push.failed` event naming the
//!   webhook and the reason, so monitoring sees it.
//! - **SSRF.** See the guard in `ssrf`: a webhook's form and IP-literal address are
//!   checked when it is set, with no DNS lookup; a host name is resolved and checked
//!   at every delivery, by the client's resolver, which connects only to the
//!   addresses it checked.
//! - **Lifetime.** A task's webhooks are kept for `retention` after the task ends (so
//!   get and list still answer), then forgotten.
//! - **Traces.** Each delivery attempt runs in a span `a2a.push` and sends a W3C
//!   `traceparent` in the trace of the request that set the task's webhook (a send
//!   with a push config, or `tasks/pushNotificationConfig/set`): kept with the
//!   webhooks, so a status change long after that request still carries it. With
//!   OpenTelemetry on, the attempt's span is the parent id sent; without, a fresh
//!   one in the same trace. A webhook with no such request (reloaded after a
//!   restart, or set without a `traceparent` while OpenTelemetry is off) gets a new
//!   trace.
//! - **Durable.** Configs are written through to the task store (a set answers after
//!   the store has it), and reloaded from it when the notifier starts: after a
//!   restart, each task with webhooks is notified of its current status again, so a
//!   delivery that was pending when the process stopped is retried (at least once).

mod ssrf;

use crate::metrics::PushOutcome;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agentyard_transport::TaskId;
use agentyard_transport::a2a::v1::{self, ProtocolVersion};
use agentyard_transport::a2a::{
    PushNotificationConfig, Task, TaskPushNotificationConfig, TaskStatus,
};
use agentyard_transport::trace::{TRACEPARENT, Traceparent};
use dashmap::DashMap;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument as _;

use self::ssrf::{GuardedResolver, Refused, WebhookGuard};
use super::{EdgeError, PushConfig};
use crate::events::{Event, EventDetail, EventKind, Received};
use crate::supervisor::Supervisor;

/// The header a webhook finds the config's token in.
pub const NOTIFICATION_TOKEN_HEADER: &str = "X-A2A-Notification-Token";

/// Counters of the notifier's work since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PushStats {
    /// Notifications a webhook accepted (a 2xx answer).
    pub delivered: u64,
    /// Notifications given up on (attempts exhausted, or a permanent refusal).
    pub failed: u64,
    /// Notifications dropped because the queue was full.
    pub dropped: u64,
    /// Attempts that failed and were retried.
    pub retried: u64,
    /// Times the notifier fell behind the event bus and re-read the tasks with
    /// webhooks.
    pub resyncs: u64,
}

/// The media type of a 1.0 push body (spec §4.3.3).
const V1_MEDIA_TYPE: &str = "application/a2a+json";

/// The webhooks of one task.
#[derive(Debug, Default)]
struct TaskWebhooks {
    configs: Vec<PushNotificationConfig>,
    /// The ids of the webhooks registered over A2A 1.0: they get a 1.0
    /// `StreamResponse` body, the others the 0.3 task.
    v1_ids: std::collections::HashSet<String>,
    /// The status last queued for notification, to skip repeats after a resync.
    last: Option<(agentyard_transport::a2a::TaskState, Option<String>)>,
    /// When the task was seen to end; the webhooks are forgotten `retention` later.
    ended_at: Option<Instant>,
    /// The task's latest status event: whom a failed delivery's event is about (its
    /// agent, entry point, conversation).
    origin: Option<Arc<Event>>,
    /// The trace of the request that last set a webhook of the task: deliveries
    /// continue it.
    trace: Option<Arc<Traceparent>>,
}

/// One status change to notify.
#[derive(Debug)]
struct Job {
    task_id: TaskId,
    status: TaskStatus,
    origin: Option<Arc<Event>>,
    trace: Option<Arc<Traceparent>>,
}

#[derive(Debug, Default)]
struct Counters {
    delivered: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
    retried: AtomicU64,
    resyncs: AtomicU64,
}

impl Inner {
    /// Counts a delivery's outcome in the runtime's metrics, when they are on.
    fn count(&self, outcome: PushOutcome) {
        if let Some(metrics) = self.supervisor.metrics() {
            metrics.push(outcome);
        }
    }
}

#[derive(Debug)]
struct Inner {
    supervisor: Supervisor,
    config: PushConfig,
    guard: Arc<WebhookGuard>,
    client: reqwest::Client,
    webhooks: DashMap<TaskId, TaskWebhooks>,
    queues: Vec<mpsc::Sender<Job>>,
    counters: Counters,
    cancel: CancellationToken,
    tracker: TaskTracker,
}

/// The push notification sender and the store of every task's webhooks.
///
/// Cheap to clone; every clone is the same notifier. Started by the edge when push
/// notifications are enabled; [`shutdown`](Self::shutdown) stops it.
#[derive(Debug, Clone)]
pub struct PushNotifier {
    inner: Arc<Inner>,
}

/// Why one delivery attempt failed.
enum AttemptError {
    /// Worth another try (network failure, timeout, 408, 429, 5xx).
    Retryable(String),
    /// Not worth another try (another 4xx, a refused address, a bad request).
    Permanent(String),
}

impl PushNotifier {
    /// Starts the notifier: its event listener and its delivery workers. Must be called
    /// inside a tokio runtime.
    ///
    /// # Errors
    /// [`EdgeError::PushClient`] if the HTTP client cannot be built.
    pub fn start(supervisor: Supervisor, config: PushConfig) -> Result<Self, EdgeError> {
        let guard = Arc::new(WebhookGuard::new(&config));
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver::new(Arc::clone(&guard))))
            // A redirect or a proxy would connect somewhere the guard never checked.
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(config.request_timeout)
            .user_agent(concat!("agentyard/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(EdgeError::PushClient)?;
        let workers = config.workers.max(1);
        let per_worker = (config.queue_capacity / workers).max(1);
        let mut queues = Vec::with_capacity(workers);
        let mut receivers = Vec::with_capacity(workers);
        for _ in 0..workers {
            let (tx, rx) = mpsc::channel(per_worker);
            queues.push(tx);
            receivers.push(rx);
        }
        let inner = Arc::new(Inner {
            supervisor,
            config,
            guard,
            client,
            webhooks: DashMap::new(),
            queues,
            counters: Counters::default(),
            cancel: CancellationToken::new(),
            tracker: TaskTracker::new(),
        });
        // Subscribed before returning, so no status change after `start` is missed.
        let subscription = inner.supervisor.subscribe();
        inner
            .tracker
            .spawn(listen(Arc::clone(&inner), subscription));
        for rx in receivers {
            inner.tracker.spawn(work(Arc::clone(&inner), rx));
        }
        inner.tracker.spawn(restore(Arc::clone(&inner)));
        inner.tracker.close();
        Ok(Self { inner })
    }

    /// Stops listening and delivering; notifications not yet delivered are dropped.
    /// Returns once every worker has stopped.
    pub async fn shutdown(&self) {
        self.inner.cancel.cancel();
        self.inner.tracker.wait().await;
    }

    /// What the notifier has done so far.
    #[must_use]
    pub fn stats(&self) -> PushStats {
        let c = &self.inner.counters;
        PushStats {
            delivered: c.delivered.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
            retried: c.retried.load(Ordering::Relaxed),
            resyncs: c.resyncs.load(Ordering::Relaxed),
        }
    }

    /// Checks a webhook config without storing it: the URL (scheme, host, no
    /// credentials, an IP-literal host's address; a host name is not resolved here but
    /// at every delivery), the authentication scheme, and header-safe token and
    /// credentials.
    ///
    /// # Errors
    /// [`EdgeError::InvalidWebhookUrl`], [`EdgeError::WebhookRefused`],
    /// [`EdgeError::UnsupportedAuthentication`], each naming the problem.
    pub async fn validate(&self, config: &PushNotificationConfig) -> Result<(), EdgeError> {
        self.inner.guard.parse(&config.url)?;
        if let Some(token) = &config.token
            && HeaderValue::from_str(token).is_err()
        {
            return Err(EdgeError::InvalidWebhookUrl {
                url: config.url.clone(),
                reason: "the token cannot be sent in an HTTP header".to_owned(),
            });
        }
        authorization(config).map(|_| ())
    }

    /// Adds a webhook to a task, or replaces the task's webhook with the same id; mints
    /// an id when the config has none. `task_ended` starts the retention clock for a
    /// task that has already ended.
    ///
    /// # Errors
    /// As [`validate`](Self::validate); [`EdgeError::TooManyConfigs`].
    pub async fn set(
        &self,
        config: TaskPushNotificationConfig,
        task_ended: bool,
    ) -> Result<TaskPushNotificationConfig, EdgeError> {
        self.set_for(config, task_ended, ProtocolVersion::V0_3)
            .await
    }

    /// [`set`](Self::set) for a webhook registered in protocol `version`: each webhook
    /// remembers it and gets that version's body (0.3: the task as
    /// `application/json`; 1.0: a `StreamResponse` holding the task as
    /// `application/a2a+json`), as the JS SDK does.
    ///
    /// # Errors
    /// As [`set`](Self::set).
    pub async fn set_for(
        &self,
        config: TaskPushNotificationConfig,
        task_ended: bool,
        version: ProtocolVersion,
    ) -> Result<TaskPushNotificationConfig, EdgeError> {
        self.set_traced(config, task_ended, version, None).await
    }

    /// [`set_for`](Self::set_for) on behalf of a request in the trace `trace`: the
    /// task's deliveries from now on carry that trace (see the [module](self) docs).
    ///
    /// # Errors
    /// As [`set`](Self::set).
    pub async fn set_traced(
        &self,
        mut config: TaskPushNotificationConfig,
        task_ended: bool,
        version: ProtocolVersion,
        trace: Option<Traceparent>,
    ) -> Result<TaskPushNotificationConfig, EdgeError> {
        self.validate(&config.push_notification_config).await?;
        let webhook = &mut config.push_notification_config;
        if webhook.id.as_deref().is_none_or(str::is_empty) {
            webhook.id = Some(uuid::Uuid::new_v4().to_string());
        }
        let limit = self.inner.config.max_configs_per_task.max(1);
        let full = self
            .inner
            .webhooks
            .get(&config.task_id)
            .is_some_and(|entry| {
                entry.configs.len() >= limit && !entry.configs.iter().any(|c| c.id == webhook.id)
            });
        if full {
            return Err(EdgeError::TooManyConfigs {
                task_id: config.task_id.clone(),
                limit,
            });
        }
        // Durable before it is answered. A task the store does not know (a test's
        // made-up id) keeps its config in memory only.
        match self
            .inner
            .supervisor
            .core()
            .store
            .put_push_config(&config)
            .await
        {
            Ok(()) | Err(crate::store::StoreError::NotFound(_)) => {}
            Err(error) => return Err(EdgeError::Store(error)),
        }
        let webhook = &config.push_notification_config;
        let mut entry = self
            .inner
            .webhooks
            .entry(config.task_id.clone())
            .or_default();
        if task_ended && entry.ended_at.is_none() {
            entry.ended_at = Some(Instant::now());
        }
        if let Some(trace) = trace {
            entry.trace = Some(Arc::new(trace));
        }
        match entry.configs.iter().position(|c| c.id == webhook.id) {
            Some(index) => entry.configs[index] = webhook.clone(),
            None if entry.configs.len() >= limit => {
                return Err(EdgeError::TooManyConfigs {
                    task_id: config.task_id.clone(),
                    limit,
                });
            }
            None => entry.configs.push(webhook.clone()),
        }
        if let Some(id) = &webhook.id {
            match version {
                ProtocolVersion::V1_0 => entry.v1_ids.insert(id.clone()),
                ProtocolVersion::V0_3 => entry.v1_ids.remove(id),
            };
        }
        drop(entry);
        Ok(config)
    }

    /// One webhook of a task: the one with `id`, or the task's first when `id` is
    /// `None`.
    ///
    /// # Errors
    /// [`EdgeError::ConfigNotFound`].
    pub fn get(
        &self,
        task_id: &TaskId,
        id: Option<&str>,
    ) -> Result<TaskPushNotificationConfig, EdgeError> {
        let found = self.inner.webhooks.get(task_id).and_then(|entry| {
            entry
                .configs
                .iter()
                .find(|c| id.is_none_or(|id| c.id.as_deref() == Some(id)))
                .cloned()
        });
        found
            .map(|webhook| TaskPushNotificationConfig {
                task_id: task_id.clone(),
                push_notification_config: webhook,
            })
            .ok_or_else(|| EdgeError::ConfigNotFound {
                task_id: task_id.clone(),
                id: id.map_or_else(|| "(the task has none)".to_owned(), |id| format!("`{id}`")),
            })
    }

    /// Every webhook of a task, oldest first.
    #[must_use]
    pub fn list(&self, task_id: &TaskId) -> Vec<TaskPushNotificationConfig> {
        self.inner
            .webhooks
            .get(task_id)
            .map(|entry| {
                entry
                    .configs
                    .iter()
                    .map(|webhook| TaskPushNotificationConfig {
                        task_id: task_id.clone(),
                        push_notification_config: webhook.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Removes a webhook of a task; returns whether there was one.
    pub fn delete(&self, task_id: &TaskId, id: &str) -> bool {
        {
            // Off the caller's path: a config the store still has is only delivered
            // to again after a restart, and deleted again then.
            let store = std::sync::Arc::clone(&self.inner.supervisor.core().store);
            let (task_id, id) = (task_id.clone(), id.to_owned());
            tokio::spawn(async move {
                if let Err(error) = store.delete_push_config(&task_id, &id).await {
                    tracing::warn!(%task_id, %error, "the task store did not delete a push config");
                }
            });
        }
        let Some(mut entry) = self.inner.webhooks.get_mut(task_id) else {
            return false;
        };
        let before = entry.configs.len();
        entry.configs.retain(|c| c.id.as_deref() != Some(id));
        entry.v1_ids.remove(id);
        let removed = entry.configs.len() != before;
        let empty = entry.configs.is_empty();
        drop(entry);
        if empty {
            self.inner
                .webhooks
                .remove_if(task_id, |_, entry| entry.configs.is_empty());
        }
        removed
    }

    /// Queues a notification of the task's current status, unless that status was
    /// already queued. For a webhook set together with a send, so that status changes
    /// that happened before the webhook was stored are not lost.
    pub fn notify_current(&self, task: &Task) {
        self.inner.offer(&task.id, &task.status, None);
    }
}

impl Inner {
    /// Queues a job for this status change if the task has webhooks and the status is
    /// not the one queued last.
    fn offer(&self, task_id: &TaskId, status: &TaskStatus, origin: Option<&Arc<Event>>) {
        let (origin, trace) = {
            let Some(mut entry) = self.webhooks.get_mut(task_id) else {
                return;
            };
            if entry.configs.is_empty() {
                return;
            }
            let key = (status.state, status.timestamp.clone());
            if entry.last.as_ref() == Some(&key) {
                return;
            }
            entry.last = Some(key);
            if status.state.is_terminal() && entry.ended_at.is_none() {
                entry.ended_at = Some(Instant::now());
            }
            if let Some(origin) = origin {
                entry.origin = Some(Arc::clone(origin));
            }
            (entry.origin.clone(), entry.trace.clone())
        };
        let job = Job {
            task_id: task_id.clone(),
            status: status.clone(),
            origin,
            trace,
        };
        let queue = &self.queues[shard(task_id, self.queues.len())];
        if let Err(error) = queue.try_send(job) {
            self.counters.dropped.fetch_add(1, Ordering::Relaxed);
            let job = match error {
                mpsc::error::TrySendError::Full(job) | mpsc::error::TrySendError::Closed(job) => {
                    job
                }
            };
            tracing::warn!(
                task_id = %job.task_id,
                state = %job.status.state,
                "push notification queue full; notification dropped"
            );
        }
    }

    /// After the listener lagged: notifies every task whose status moved on since its
    /// last notification.
    async fn resync(&self) {
        self.counters.resyncs.fetch_add(1, Ordering::Relaxed);
        let tasks: Vec<TaskId> = self
            .webhooks
            .iter()
            .filter(|entry| entry.ended_at.is_none())
            .map(|entry| entry.key().clone())
            .collect();
        for task_id in tasks {
            match self.supervisor.get_task(&task_id, Some(0)).await {
                Ok(task) => self.offer(&task_id, &task.status, None),
                Err(error) => tracing::debug!(%task_id, %error, "task of a webhook is gone"),
            }
        }
    }

    /// Forgets the webhooks of tasks that ended more than `retention` ago.
    fn sweep(&self) {
        let retention = self.config.retention;
        self.webhooks.retain(|_, entry| {
            entry
                .ended_at
                .is_none_or(|ended| ended.elapsed() < retention)
        });
    }

    /// Delivers one status change to every webhook of its task.
    async fn deliver(&self, job: Job) {
        let (webhooks, v1_ids) = match self.webhooks.get(&job.task_id) {
            Some(entry) => (entry.configs.clone(), entry.v1_ids.clone()),
            None => return,
        };
        if webhooks.is_empty() {
            return;
        }
        let mut task = match self.supervisor.get_task(&job.task_id, None).await {
            Ok(task) => task,
            Err(error) => {
                tracing::warn!(task_id = %job.task_id, %error, "cannot read the task to notify");
                return;
            }
        };
        task.status = job.status;
        let task_id = task.id.clone();
        let v1_body = if v1_ids.is_empty() {
            Ok(Vec::new())
        } else {
            serde_json::to_vec(&v1::StreamResponse::Task(task.clone().into()))
        };
        let (body, v1_body) = match (serde_json::to_vec(&task), v1_body) {
            (Ok(body), Ok(v1_body)) => (body, v1_body),
            (Err(error), _) | (_, Err(error)) => {
                tracing::error!(%task_id, %error, "cannot serialize the task to notify");
                return;
            }
        };
        let origin = job.origin.as_ref();
        let trace = job.trace.as_deref();
        futures::future::join_all(webhooks.iter().map(|webhook| {
            let v1 = webhook.id.as_ref().is_some_and(|id| v1_ids.contains(id));
            let (body, media) = if v1 {
                (v1_body.as_slice(), V1_MEDIA_TYPE)
            } else {
                (body.as_slice(), "application/json")
            };
            self.deliver_to(&task_id, origin, trace, webhook, body, media)
        }))
        .await;
    }

    /// Counts a delivery given up on and reports it on the event bus.
    fn give_up(
        &self,
        task_id: &TaskId,
        origin: Option<&Arc<Event>>,
        webhook: &PushNotificationConfig,
        reason: String,
    ) {
        self.counters.failed.fetch_add(1, Ordering::Relaxed);
        self.count(PushOutcome::Failed);
        let reason = format!("push notification to {} failed: {reason}", webhook.url);
        self.supervisor.core().events.emit(|| {
            let detail = EventDetail::Reason { reason };
            match origin {
                Some(origin) => Event {
                    kind: EventKind::PushFailed,
                    task_id: Some(task_id.clone()),
                    timestamp: std::time::SystemTime::now(),
                    detail,
                    ..Event::clone(origin)
                },
                // A webhook set on a task that had already ended: no status event
                // went by to say whose task it is.
                None => Event {
                    kind: EventKind::PushFailed,
                    entry_point: agentyard_policy::EntryPoint::Http,
                    from: None,
                    to: Arc::from(""),
                    context_id: None,
                    task_id: Some(task_id.clone()),
                    payload_type: None,
                    payload_json: None,
                    in_response_to_payload_type: None,
                    intent: None,
                    idempotency_key: None,
                    timestamp: std::time::SystemTime::now(),
                    detail,
                },
            }
        });
    }

    /// Delivers to one webhook, retrying with exponential backoff.
    async fn deliver_to(
        &self,
        task_id: &TaskId,
        origin: Option<&Arc<Event>>,
        trace: Option<&Traceparent>,
        webhook: &PushNotificationConfig,
        body: &[u8],
        media: &'static str,
    ) {
        let attempts = self.config.attempts.max(1);
        let mut backoff = self.config.initial_backoff;
        for attempt in 1..=attempts {
            let span = tracing::info_span!(
                "a2a.push",
                %task_id,
                url = %webhook.url,
                attempt,
                status = tracing::field::Empty,
                "otel.kind" = "client",
                "otel.status_code" = tracing::field::Empty,
            );
            if let Some(trace) = trace {
                trace.adopt_by(&span);
            }
            let traceparent = Traceparent::outgoing_from(&span, trace);
            let outcome = self
                .attempt(webhook, body, media, &traceparent, &span)
                .instrument(span.clone())
                .await;
            if outcome.is_err() {
                span.record("otel.status_code", "ERROR");
            }
            drop(span);
            let reason = match outcome {
                Ok(()) => {
                    self.counters.delivered.fetch_add(1, Ordering::Relaxed);
                    self.count(PushOutcome::Delivered);
                    tracing::debug!(%task_id, url = %webhook.url, attempt, "push notification delivered");
                    return;
                }
                Err(AttemptError::Permanent(reason)) => {
                    tracing::warn!(%task_id, url = %webhook.url, attempt, %reason, "push notification refused; not retrying");
                    self.give_up(task_id, origin, webhook, reason);
                    return;
                }
                Err(AttemptError::Retryable(reason)) => reason,
            };
            if attempt == attempts {
                tracing::warn!(%task_id, url = %webhook.url, attempts, %reason, "push notification failed; giving up");
                self.give_up(
                    task_id,
                    origin,
                    webhook,
                    format!("{reason} (after {attempts} attempts)"),
                );
                return;
            }
            self.counters.retried.fetch_add(1, Ordering::Relaxed);
            self.count(PushOutcome::Retried);
            tracing::debug!(%task_id, url = %webhook.url, attempt, %reason, ?backoff, "push notification failed; retrying");
            tokio::time::sleep(backoff).await;
            backoff = backoff.saturating_mul(2).min(self.config.max_backoff);
        }
    }

    async fn attempt(
        &self,
        webhook: &PushNotificationConfig,
        body: &[u8],
        media: &'static str,
        traceparent: &Traceparent,
        span: &tracing::Span,
    ) -> Result<(), AttemptError> {
        // Checked again at every delivery: an IP-literal URL never reaches the guarded
        // resolver, and the operator's rules may have changed with a restart.
        let url = self
            .guard
            .parse(&webhook.url)
            .map_err(|error| AttemptError::Permanent(error.to_string()))?;
        let mut request = self
            .client
            .post(url)
            .header(CONTENT_TYPE, media)
            .header(TRACEPARENT, traceparent.to_string())
            .body(body.to_vec());
        if let Some(token) = &webhook.token {
            request = request.header(NOTIFICATION_TOKEN_HEADER, token);
        }
        match authorization(webhook) {
            Ok(Some(value)) => request = request.header(AUTHORIZATION, value),
            Ok(None) => {}
            Err(error) => return Err(AttemptError::Permanent(error.to_string())),
        }
        let response = request.send().await.map_err(|error| {
            if refused(&error) {
                AttemptError::Permanent(source_text(&error))
            } else {
                AttemptError::Retryable(source_text(&error))
            }
        })?;
        let status = response.status();
        span.record("status", status.as_u16());
        if status.is_success() {
            Ok(())
        } else if status.is_server_error() || status.as_u16() == 408 || status.as_u16() == 429 {
            Err(AttemptError::Retryable(format!(
                "the webhook answered {status}"
            )))
        } else {
            Err(AttemptError::Permanent(format!(
                "the webhook answered {status}"
            )))
        }
    }
}

/// The `Authorization` header a webhook config asks for: `Bearer` or `Basic` with its
/// credentials; nothing without credentials.
fn authorization(config: &PushNotificationConfig) -> Result<Option<HeaderValue>, EdgeError> {
    let Some(auth) = &config.authentication else {
        return Ok(None);
    };
    if auth.schemes.is_empty() {
        return Ok(None);
    }
    let scheme = auth.schemes.iter().find_map(|scheme| {
        if scheme.eq_ignore_ascii_case("bearer") {
            Some("Bearer")
        } else if scheme.eq_ignore_ascii_case("basic") {
            Some("Basic")
        } else {
            None
        }
    });
    let Some(scheme) = scheme else {
        return Err(EdgeError::UnsupportedAuthentication {
            schemes: auth.schemes.clone(),
        });
    };
    let Some(credentials) = &auth.credentials else {
        return Ok(None);
    };
    HeaderValue::from_str(&format!("{scheme} {credentials}"))
        .map(|mut value| {
            value.set_sensitive(true);
            Some(value)
        })
        .map_err(|_| EdgeError::InvalidWebhookUrl {
            url: config.url.clone(),
            reason: "the authentication credentials cannot be sent in an HTTP header".to_owned(),
        })
}

/// Whether a delivery failed because the guard refused every address of the host.
fn refused(error: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = source {
        if error.is::<Refused>() {
            return true;
        }
        source = error.source();
    }
    false
}

/// An error with its causes, for the log: reqwest's own text is only "error sending
/// request".
fn source_text(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn shard(task_id: &TaskId, shards: usize) -> usize {
    let mut hasher = DefaultHasher::new();
    task_id.as_str().hash(&mut hasher);
    // The remainder is below `shards`, so it fits in usize.
    usize::try_from(hasher.finish() % shards.max(1) as u64).unwrap_or(0)
}

/// Turns status events into jobs until the notifier stops or the runtime goes away.
async fn listen(inner: Arc<Inner>, mut subscription: crate::events::Subscription) {
    let every = (inner.config.retention / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
    let mut sweep = tokio::time::interval(every);
    loop {
        tokio::select! {
            () = inner.cancel.cancelled() => break,
            _ = sweep.tick() => inner.sweep(),
            received = subscription.recv() => match received {
                None => break,
                Some(Received::Event(event)) => {
                    if event.kind != EventKind::TaskStatus {
                        continue;
                    }
                    if let EventDetail::Status { update } = &event.detail {
                        inner.offer(&update.task_id, &update.status, Some(&event));
                    }
                }
                Some(Received::Lagged(missed)) => {
                    tracing::warn!(missed, "push notifier fell behind the event bus; re-reading tasks with webhooks");
                    inner.resync().await;
                }
            },
        }
    }
}

/// Reloads the webhooks the store keeps (after a restart) and notifies each of those
/// tasks of its current status once more: a delivery pending when the process
/// stopped is retried.
async fn restore(inner: Arc<Inner>) {
    let store = Arc::clone(&inner.supervisor.core().store);
    let tasks = match store.tasks_with_push_configs().await {
        Ok(tasks) => tasks,
        Err(error) => {
            tracing::warn!(%error, "cannot reload push notification configs from the task store");
            return;
        }
    };
    for task_id in tasks {
        if inner.cancel.is_cancelled() {
            return;
        }
        let (Ok(configs), Ok(task)) = (
            store.push_configs(&task_id).await,
            inner.supervisor.get_task(&task_id, Some(0)).await,
        ) else {
            continue;
        };
        {
            let mut entry = inner.webhooks.entry(task_id.clone()).or_default();
            for config in configs {
                let webhook = config.push_notification_config;
                if !entry.configs.iter().any(|c| c.id == webhook.id) {
                    entry.configs.push(webhook);
                }
            }
        }
        inner.offer(&task_id, &task.status, None);
    }
}

/// Delivers the jobs of one shard, one after another.
async fn work(inner: Arc<Inner>, mut rx: mpsc::Receiver<Job>) {
    loop {
        let job = tokio::select! {
            () = inner.cancel.cancelled() => break,
            job = rx.recv() => match job {
                Some(job) => job,
                None => break,
            },
        };
        tokio::select! {
            () = inner.cancel.cancelled() => break,
            () = inner.deliver(job) => {}
        }
    }
}

#[cfg(test)]
mod tests;
