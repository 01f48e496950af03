//! Push notifications: the webhooks of each task and the sender that calls them.
//!
//! # How a status change becomes a POST
//!
//! The notifier subscribes to the status changes of the tasks that have webhooks on
//! the runtime's event bus: the bus builds a status event only when someone wants it,
//! so a send to a task without webhooks costs the notifier nothing. Every
//! `a2a.task.status` event of a task that has webhooks becomes one delivery per
//! webhook, queued on that webhook's lane; the lane reads the task from the store,
//! sets the status of that event on it, and POSTs the task JSON to the webhook with
//! `X-A2A-Notification-Token` (when the config has a token) and an `Authorization`
//! header from `authentication` (`Bearer` or `Basic` with its `credentials`).
//!
//! - **Never blocking the runtime.** The bus never waits for the notifier: a notifier
//!   that falls behind is told how many events it missed, and then re-reads every task
//!   with webhooks and notifies those whose status moved on since their last
//!   notification. Queuing never waits either: when `queue_capacity` deliveries are
//!   already held (waiting their turn or being retried), a new one is dropped with a
//!   warning (counted in [`PushStats::dropped`]).
//! - **Order, and one webhook delaying only itself.** Each webhook of each task has
//!   its own lane: a tokio task, alive while the lane has deliveries, that sends them
//!   one after another, so one webhook gets a task's statuses in order (a later one
//!   never overtakes an earlier one still being retried; none is coalesced). Lanes
//!   run side by side, so a webhook that is slow or keeps failing holds up only its
//!   own later deliveries, never another webhook of the task nor another task. A
//!   semaphore of `workers` permits bounds the webhook calls open at once; a
//!   delivery holds a permit for one attempt (and for reading the task before it),
//!   never while it waits out its backoff. This replaced workers sharded by task,
//!   whose serial worker a failing webhook held for all its retries (head-of-line
//!   blocking); lanes were chosen over keeping the shards and moving only the
//!   retries out of them because a slow webhook (an attempt running to
//!   `request_timeout`) would still have held its shard. The cost: each webhook's
//!   delivery reads and serializes the task itself.
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
//!   Which webhooks were registered in A2A 1.0 (and so get 1.0 bodies) is kept
//!   beside them, as records of the store.

mod ssrf;

use crate::metrics::PushOutcome;

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use agentyard_transport::TaskId;
use agentyard_transport::a2a::v1::{self, ProtocolVersion};
use agentyard_transport::a2a::{
    PushNotificationConfig, Task, TaskPushNotificationConfig, TaskStatus, Timestamp,
};
use agentyard_transport::trace::{self, TRACEPARENT, Traceparent};
use dashmap::mapref::entry::Entry;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument as _;

use self::ssrf::{GuardedResolver, Refused, WebhookGuard};
use super::{EdgeError, PushConfig};
use crate::events::{Event, EventDetail, EventKind, Received, StatusInterest};
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
    /// Notifications (one status to one webhook) dropped because `queue_capacity`
    /// deliveries were already held.
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
    last: Option<(agentyard_transport::a2a::TaskState, Option<Timestamp>)>,
    /// When the task was seen to end; the webhooks are forgotten `retention` later.
    ended_at: Option<Instant>,
    /// The task's latest status event: whom a failed delivery's event is about (its
    /// agent, entry point, conversation).
    origin: Option<Arc<Event>>,
    /// The trace of the request that last set a webhook of the task: deliveries
    /// continue it.
    trace: Option<Arc<Traceparent>>,
}

/// A webhook's lane: its task and its name (see [`lane_name`]).
type LaneKey = (TaskId, String);

/// What names a webhook's lane: its id (every stored webhook has one, minted when it
/// is set), else its URL.
fn lane_name(webhook: &PushNotificationConfig) -> &str {
    webhook.id.as_deref().unwrap_or(&webhook.url)
}

/// One status change to send to one webhook.
#[derive(Debug)]
struct Delivery {
    task_id: TaskId,
    /// The webhook's [`lane_name`]: its config is looked up when the delivery starts,
    /// so a webhook deleted meanwhile is skipped and a replaced one gets its new config.
    webhook: String,
    status: TaskStatus,
    origin: Option<Arc<Event>>,
    trace: Option<Arc<Traceparent>>,
    /// Its place in `queue_capacity`, given back when the delivery is dropped.
    _slot: Slot,
}

/// One of the `queue_capacity` deliveries the notifier may hold; frees itself when
/// dropped, however the delivery ended (sent, given up on, skipped, shut down).
#[derive(Debug)]
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
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
    /// Shared with the event bus, which asks it whether a task's status changes are
    /// wanted before it builds their events.
    webhooks: Arc<Webhooks>,
    /// The deliveries waiting behind the one being sent, of every lane that has a
    /// running sender (a lane is here exactly while its sender runs).
    lanes: crate::Map<LaneKey, VecDeque<Delivery>>,
    /// Deliveries held: waiting in a lane, being sent, or being retried.
    held: Arc<AtomicUsize>,
    /// A permit per webhook call that may be open at once (`workers`).
    calls: Semaphore,
    counters: Counters,
    cancel: CancellationToken,
    tracker: TaskTracker,
}

/// Every task's webhooks, and the bus's count of the tasks that have any: the bus
/// asks on every status change of every task whether it is wanted, and while no task
/// has a webhook (the usual case) that count answers for the map, with no hashing and
/// no shard lock. Tasks come in and go out only through `entry` and the removals
/// below, which keep the count.
#[derive(Debug)]
struct Webhooks {
    tasks: crate::Map<TaskId, TaskWebhooks>,
    counted: StatusInterest,
}

impl Webhooks {
    /// Whether the task has webhooks: the status filter.
    fn wants(&self, task_id: &TaskId) -> bool {
        self.tasks.contains_key(task_id)
    }

    /// The task's webhooks, made empty (and counted) if it had none.
    fn entry(&self, task_id: TaskId) -> dashmap::mapref::one::RefMut<'_, TaskId, TaskWebhooks> {
        match self.tasks.entry(task_id) {
            Entry::Occupied(found) => found.into_ref(),
            Entry::Vacant(place) => {
                // Counted before the filter can find the task: the shard's lock is
                // held until the entry is in place.
                self.counted.add();
                place.insert(TaskWebhooks::default())
            }
        }
    }

    /// Forgets the task's webhooks if it has none left.
    fn remove_if_empty(&self, task_id: &TaskId) {
        if self
            .tasks
            .remove_if(task_id, |_, entry| entry.configs.is_empty())
            .is_some()
        {
            self.counted.remove();
        }
    }

    /// Keeps only the tasks whose webhooks `keep` says yes to.
    fn retain(&self, mut keep: impl FnMut(&TaskWebhooks) -> bool) {
        self.tasks.retain(|_, entry| {
            let kept = keep(entry);
            if !kept {
                self.counted.remove();
            }
            kept
        });
    }
}

/// Reads and changes in place, which leave the count as it is. No `Deref` to the
/// map: an insert or a removal through it would skip the count, and the bus would
/// then miss a task's statuses or ask the filters for nothing.
impl Webhooks {
    fn get(&self, task_id: &TaskId) -> Option<dashmap::mapref::one::Ref<'_, TaskId, TaskWebhooks>> {
        self.tasks.get(task_id)
    }

    fn get_mut(
        &self,
        task_id: &TaskId,
    ) -> Option<dashmap::mapref::one::RefMut<'_, TaskId, TaskWebhooks>> {
        self.tasks.get_mut(task_id)
    }

    fn iter(
        &self,
    ) -> dashmap::iter::Iter<'_, TaskId, TaskWebhooks, foldhash::quality::RandomState> {
        self.tasks.iter()
    }
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
    /// Starts the notifier: its event listener (lanes start as deliveries come). Must
    /// be called inside a tokio runtime.
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
        let calls = Semaphore::new(config.workers.max(1));
        let webhooks = Arc::new(Webhooks {
            tasks: crate::Map::default(),
            counted: supervisor.status_interest(),
        });
        let inner = Arc::new(Inner {
            supervisor,
            config,
            guard,
            client,
            webhooks,
            lanes: crate::Map::default(),
            held: Arc::new(AtomicUsize::new(0)),
            calls,
            counters: Counters::default(),
            cancel: CancellationToken::new(),
            tracker: TaskTracker::new(),
        });
        // Subscribed before returning, so no status change after `start` is missed:
        // to the status changes of the tasks that have webhooks, the only events the
        // notifier reads (every event was built and sent for it on every send).
        let webhooks = Arc::clone(&inner.webhooks);
        let subscription = inner
            .supervisor
            .subscribe_statuses(Arc::new(move |task_id: &TaskId| webhooks.wants(task_id)));
        inner
            .tracker
            .spawn(listen(Arc::clone(&inner), subscription));
        inner.tracker.spawn(restore(Arc::clone(&inner)));
        // Closed only so that `wait` can end: lanes are still spawned on it later.
        inner.tracker.close();
        Ok(Self { inner })
    }

    /// Stops listening and delivering; notifications not yet delivered are dropped.
    /// Returns once the listener and every lane have stopped.
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
        // The shard's lock is held by `entry` only inside this block, never across
        // the store write after it.
        let was_v1 = {
            let webhook = &config.push_notification_config;
            let mut entry = self.inner.webhooks.entry(config.task_id.clone());
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
            webhook.id.as_ref().is_some_and(|id| match version {
                ProtocolVersion::V1_0 => !entry.v1_ids.insert(id.clone()),
                ProtocolVersion::V0_3 => entry.v1_ids.remove(id),
            })
        };
        self.remember_version(&config, version, was_v1).await;
        Ok(config)
    }

    /// Keeps which webhooks want 1.0 bodies in the store beside their configs (a
    /// record under [`V1_WEBHOOKS`]), so that a restarted server still sends them 1.0
    /// bodies. The A2A config has no field for it, and a 0.3 webhook, the default,
    /// needs no record. A store that keeps no records (or fails) leaves the flag in
    /// memory only: logged, not refused, as the webhook itself is stored.
    async fn remember_version(
        &self,
        config: &TaskPushNotificationConfig,
        version: ProtocolVersion,
        was_v1: bool,
    ) {
        let Some(id) = config.push_notification_config.id.as_deref() else {
            return;
        };
        let key = v1_key(&config.task_id, id);
        let store = &self.inner.supervisor.core().store;
        let result = match version {
            ProtocolVersion::V1_0 if !was_v1 => store
                .put_record(V1_WEBHOOKS, &key, &serde_json::Value::Bool(true), None)
                .await
                .map(drop),
            ProtocolVersion::V0_3 if was_v1 => {
                store.delete_record(V1_WEBHOOKS, &key).await.map(drop)
            }
            _ => Ok(()),
        };
        if let Err(error) = result {
            tracing::warn!(task_id = %config.task_id, %error, "the task store did not keep a webhook's protocol version; after a restart it gets 0.3 bodies");
        }
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
                // A record left behind is dropped at the next start.
                let _ = store
                    .delete_record(V1_WEBHOOKS, &v1_key(&task_id, &id))
                    .await;
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
            self.inner.webhooks.remove_if_empty(task_id);
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
    /// Queues a delivery of this status change on the lane of each of the task's
    /// webhooks, unless the task has none or the status is the one queued last.
    fn offer(self: &Arc<Self>, task_id: &TaskId, status: &TaskStatus, origin: Option<&Arc<Event>>) {
        let (webhooks, origin, trace) = {
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
            let webhooks: Vec<String> = entry
                .configs
                .iter()
                .map(|c| lane_name(c).to_owned())
                .collect();
            (webhooks, entry.origin.clone(), entry.trace.clone())
        };
        for webhook in webhooks {
            let Some(slot) = self.reserve() else {
                self.counters.dropped.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    %task_id,
                    state = %status.state,
                    webhook,
                    "push notification queue full; notification dropped"
                );
                continue;
            };
            self.queue(Delivery {
                task_id: task_id.clone(),
                webhook,
                status: status.clone(),
                origin: origin.clone(),
                trace: trace.clone(),
                _slot: slot,
            });
        }
    }

    /// A place for one more delivery, unless `queue_capacity` are held.
    fn reserve(&self) -> Option<Slot> {
        let capacity = self.config.queue_capacity.max(1);
        self.held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                (held < capacity).then_some(held + 1)
            })
            .ok()
            .map(|_| Slot(Arc::clone(&self.held)))
    }

    /// Puts a delivery at the end of its webhook's lane, starting the lane's sender
    /// when it has none.
    fn queue(self: &Arc<Self>, delivery: Delivery) {
        if self.cancel.is_cancelled() {
            return;
        }
        let key = (delivery.task_id.clone(), delivery.webhook.clone());
        let first = match self.lanes.entry(key.clone()) {
            Entry::Occupied(mut lane) => {
                lane.get_mut().push_back(delivery);
                return;
            }
            Entry::Vacant(lane) => {
                lane.insert(VecDeque::new());
                delivery
            }
        };
        self.tracker.spawn(run_lane(Arc::clone(self), key, first));
    }

    /// After the listener lagged: notifies every task whose status moved on since its
    /// last notification.
    async fn resync(self: &Arc<Self>) {
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
        self.webhooks.retain(|entry| {
            entry
                .ended_at
                .is_none_or(|ended| ended.elapsed() < retention)
        });
    }

    /// Sends one status change to its webhook, as the webhook's config is now.
    async fn deliver(&self, delivery: &Delivery) {
        let found = self.webhooks.get(&delivery.task_id).and_then(|entry| {
            let webhook = entry
                .configs
                .iter()
                .find(|c| lane_name(c) == delivery.webhook)?;
            let v1 = webhook
                .id
                .as_ref()
                .is_some_and(|id| entry.v1_ids.contains(id));
            Some((webhook.clone(), v1))
        });
        // Deleted (or its task forgotten) since the delivery was queued.
        let Some((webhook, v1)) = found else {
            return;
        };
        let task_id = &delivery.task_id;
        let body = {
            // Reading the store counts as part of the call it prepares.
            let Ok(_permit) = self.calls.acquire().await else {
                return;
            };
            let mut task = match self.supervisor.get_task(task_id, None).await {
                Ok(task) => task,
                Err(error) => {
                    tracing::warn!(%task_id, %error, "cannot read the task to notify");
                    return;
                }
            };
            task.status = delivery.status.clone();
            let body = if v1 {
                serde_json::to_vec(&v1::StreamResponse::Task(task.into()))
            } else {
                serde_json::to_vec(&task)
            };
            match body {
                Ok(body) => body,
                Err(error) => {
                    tracing::error!(%task_id, %error, "cannot serialize the task to notify");
                    return;
                }
            }
        };
        let media = if v1 {
            V1_MEDIA_TYPE
        } else {
            "application/json"
        };
        self.deliver_to(
            task_id,
            delivery.origin.as_ref(),
            delivery.trace.as_deref(),
            &webhook,
            &body,
            media,
        )
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
            // Taken before the span starts, so that the span times the call alone.
            let Ok(permit) = self.calls.acquire().await else {
                return;
            };
            // The trace of the call that set the webhook decides whether the delivery
            // is recorded; without one, the delivery starts a trace of its own.
            let sampled = trace.map_or_else(|| trace::decide(None), Traceparent::is_sampled);
            let (span, traceparent) = trace::scoped(sampled, || {
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
                (span, traceparent)
            });
            let outcome = self
                .attempt(webhook, body, media, &traceparent, &span)
                .instrument(span.clone())
                .await;
            // Held for the attempt only: the backoff below waits without it.
            drop(permit);
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

/// Turns status events into deliveries until the notifier stops or the runtime goes away.
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
    // Which webhooks were registered in 1.0; a record whose webhook is gone (deleted,
    // or its task dropped by retention) is dropped here.
    let mut v1_keys: std::collections::HashSet<String> = match store.list_records(V1_WEBHOOKS).await
    {
        Ok(records) => records.into_iter().map(|record| record.key).collect(),
        Err(error) => {
            tracing::warn!(%error, "cannot read which webhooks want A2A 1.0 bodies; they get 0.3 bodies");
            std::collections::HashSet::new()
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
        // Deleted since the store listed it: no entry, which would count the task
        // into the bus's interest with nothing to deliver to.
        if configs.is_empty() {
            continue;
        }
        {
            let mut entry = inner.webhooks.entry(task_id.clone());
            for config in configs {
                let webhook = config.push_notification_config;
                if let Some(id) = &webhook.id
                    && v1_keys.remove(&v1_key(&task_id, id))
                {
                    entry.v1_ids.insert(id.clone());
                }
                if !entry.configs.iter().any(|c| c.id == webhook.id) {
                    entry.configs.push(webhook);
                }
            }
        }
        inner.offer(&task_id, &task.status, None);
    }
    for key in v1_keys {
        let _ = store.delete_record(V1_WEBHOOKS, &key).await;
    }
}

/// The store's record namespace of the webhooks registered in A2A 1.0, one record
/// per webhook keyed by [`v1_key`].
const V1_WEBHOOKS: &str = "push.v1_webhooks";

/// A webhook's key in [`V1_WEBHOOKS`]: its task and its id (task ids hold no
/// newline).
fn v1_key(task_id: &TaskId, id: &str) -> String {
    format!("{task_id}\n{id}")
}

/// Sends the deliveries of one lane one after another, from `first` until the lane
/// is empty (then the lane is removed, and the next delivery starts a new sender) or
/// the notifier stops.
async fn run_lane(inner: Arc<Inner>, key: LaneKey, first: Delivery) {
    let mut next = first;
    loop {
        tokio::select! {
            () = inner.cancel.cancelled() => {
                // Drops (and so frees) the deliveries still waiting.
                inner.lanes.remove(&key);
                return;
            }
            () = inner.deliver(&next) => {}
        }
        next = match inner.lanes.entry(key.clone()) {
            Entry::Occupied(mut lane) => match lane.get_mut().pop_front() {
                Some(delivery) => delivery,
                None => {
                    // Under the lane's lock: a delivery queued after this finds no
                    // lane and starts a new sender.
                    lane.remove();
                    return;
                }
            },
            Entry::Vacant(_) => return,
        };
    }
}

#[cfg(test)]
mod tests;
