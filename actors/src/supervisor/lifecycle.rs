//! Starting the supervisor, and shutting it down: the drain, the tasks failed at the
//! deadline, and the sessions stopped.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agentyard_policy::Policy;
use agentyard_transport::ContextId;
use agentyard_transport::a2a::{Message, TaskState};
use ractor::Actor;
use tokio_util::task::TaskTracker;

use super::actor::SupervisorActor;
use super::sessions::Sessions;
use super::{Core, Registered, Supervisor, SupervisorConfig};
use crate::agent::Registration;
use crate::channel::status;
use crate::error::{Error, Result};
use crate::events::EventBus;
use crate::idempotency::IdempotencyCache;
use crate::limits::{LimitScope, ScopedLimiter};
use crate::live::LiveTasks;
use crate::metrics::Metrics;
use crate::port::finish_task;
use crate::store::TaskStore;

impl Supervisor {
    /// Starts a supervisor with these agent types, policy and store.
    ///
    /// # Errors
    /// [`Error::SessionUnavailable`] if the supervisor actor cannot be spawned (only
    /// outside a tokio runtime); [`Error::InvalidMessage`] never.
    pub async fn start(
        config: SupervisorConfig,
        registrations: Vec<Registration>,
        policy: Arc<dyn Policy>,
        store: Arc<dyn TaskStore>,
    ) -> Result<Self> {
        let mut agents = registrations
            .into_iter()
            .map(|r| {
                let limiter = Arc::new(ScopedLimiter::new(
                    LimitScope::Agent,
                    r.descriptor.concurrency.unwrap_or(config.agent_limit),
                    config.agent_queue,
                ));
                let name: Arc<str> = Arc::from(r.descriptor.name.as_str());
                (
                    name,
                    Registered {
                        descriptor: r.descriptor,
                        factory: r.factory,
                        limiter,
                        metrics: None,
                    },
                )
            })
            .collect::<std::collections::HashMap<_, _, foldhash::quality::RandomState>>();
        let metrics = config
            .metrics
            .then(|| Arc::new(Metrics::new(agents.keys())));
        if let Some(metrics) = &metrics {
            for (name, registered) in &mut agents {
                registered.metrics = metrics.agent(name).cloned();
            }
        }
        let core = Arc::new_cyclic(|me| Core {
            me: me.clone(),
            global: Arc::new(ScopedLimiter::new(
                LimitScope::Global,
                config.global_limit,
                config.global_queue,
            )),
            idempotency: IdempotencyCache::new(config.idempotency_ttl, config.idempotency_capacity)
                .keeping(Arc::clone(&store)),
            events: EventBus::new(config.event_capacity),
            sessions: Sessions::new(
                config.warm_sessions,
                config.session_limit,
                config.session_queue,
            )
            .counting(metrics.clone()),
            metrics,
            config,
            agents,
            policy,
            store,
            live: LiveTasks::default(),
            actor: OnceLock::new(),
            tracker: TaskTracker::new(),
            shutting_down: AtomicBool::new(false),
            restarts: AtomicU64::new(0),
        });
        let (actor, _) = SupervisorActor::spawn(None, SupervisorActor, Arc::clone(&core))
            .await
            .map_err(|e| Error::SessionUnavailable {
                agent: String::from("<supervisor>"),
                context_id: ContextId::new("-"),
                reason: e.to_string(),
            })?;
        let _ = core.actor.set(actor);
        Ok(Self { core })
    }

    /// Stops taking new sends, waits up to `deadline` for running tasks to finish, then
    /// fails the rest, accepted-but-not-started ones included (visibly: status
    /// `failed`, a message saying why; their streams get that final event), and stops
    /// every session. Tasks waiting for input are left as they are.
    pub async fn shutdown(&self, deadline: Duration) {
        self.core.shutting_down.store(true, Ordering::SeqCst);
        self.core.tracker.close();
        // Whether or not the handlers finished in time, what is still live and not
        // waiting for input is failed: a handler cut short, or a send still queued.
        let _ = tokio::time::timeout(deadline, self.core.tracker.wait()).await;
        {
            let running = self.core.live.snapshot();
            let mut followed = Vec::new();
            for (task_id, cancel, channel) in running {
                let Ok(Some(task)) = self.core.store.get(&task_id, Some(0)).await else {
                    continue;
                };
                if task.status.state.is_interrupted() {
                    // Waiting for a human, not running: nothing to cut short.
                    continue;
                }
                let text = "the runtime shut down before this task finished";
                let message = Message::new(
                    agentyard_transport::a2a::Role::Agent,
                    vec![agentyard_transport::a2a::Part::text(text)],
                );
                let _ = finish_task(
                    &*self.core,
                    &task_id,
                    status(TaskState::Failed, Some(message.into())),
                )
                .await;
                cancel.cancel();
                followed.push(channel);
            }
            // Give the streams of the tasks just failed a moment to take that final
            // event before the caller closes the connections (bounded: a stalled
            // client must not hold the shutdown).
            let streams_done = async {
                while followed.iter().any(|channel| channel.stream_count() > 0) {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(1), streams_done).await;
        }
        if let Some(actor) = self.core.actor.get() {
            actor.stop_children(Some(String::from("shutdown")));
            actor.stop(Some(String::from("shutdown")));
        }
        self.core.sessions.clear();
    }
}
