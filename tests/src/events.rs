//! Recording the runtime's events for later assertions.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentyard::{Event, EventKind, Received, Runtime, TaskId};
use tokio::task::JoinHandle;

use crate::wait::eventually;

/// Every event of a runtime from the moment it was started, in the order the bus
/// delivered them.
///
/// It subscribes at once (so nothing sent after [`EventLog::start`] is missed) and
/// reads in a task of its own, so a test's sends never wait for it. Events arrive a
/// moment after they are emitted: wait for the one you need with
/// [`EventLog::wait_for`] before asserting on the whole log.
#[derive(Debug)]
pub struct EventLog {
    events: Arc<Mutex<Vec<Arc<Event>>>>,
    lagged: Arc<AtomicU64>,
    reader: JoinHandle<()>,
}

impl EventLog {
    /// Subscribes to `runtime` and starts recording.
    #[must_use]
    pub fn start(runtime: &Runtime) -> Self {
        let mut subscription = runtime.subscribe();
        let events = Arc::new(Mutex::new(Vec::new()));
        let lagged = Arc::new(AtomicU64::new(0));
        let reader = tokio::spawn({
            let events = Arc::clone(&events);
            let lagged = Arc::clone(&lagged);
            async move {
                while let Some(received) = subscription.recv().await {
                    match received {
                        Received::Event(event) => {
                            events.lock().unwrap_or_else(|e| e.into_inner()).push(event);
                        }
                        Received::Lagged(n) => {
                            lagged.fetch_add(n, Ordering::SeqCst);
                        }
                    }
                }
            }
        });
        Self {
            events,
            lagged,
            reader,
        }
    }

    /// Every event recorded so far.
    #[must_use]
    pub fn events(&self) -> Vec<Arc<Event>> {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The events recorded so far that `keep` selects.
    #[must_use]
    pub fn matching(&self, keep: impl Fn(&Event) -> bool) -> Vec<Arc<Event>> {
        self.events().into_iter().filter(|e| keep(e)).collect()
    }

    /// The events of one task (those that carry its id).
    #[must_use]
    pub fn of_task(&self, task_id: &TaskId) -> Vec<Arc<Event>> {
        self.matching(|e| e.task_id.as_ref() == Some(task_id))
    }

    /// How many events of this kind were recorded.
    #[must_use]
    pub fn count(&self, kind: EventKind) -> usize {
        self.matching(|e| e.kind == kind).len()
    }

    /// How many events this log missed because it fell behind (should stay 0).
    #[must_use]
    pub fn lagged(&self) -> u64 {
        self.lagged.load(Ordering::SeqCst)
    }

    /// Waits until an event `keep` selects has been recorded and returns the first.
    ///
    /// # Panics
    /// If none arrives within `deadline`.
    pub async fn wait_for(
        &self,
        deadline: Duration,
        what: &str,
        keep: impl Fn(&Event) -> bool,
    ) -> Arc<Event> {
        eventually(deadline, what, async || {
            self.events().iter().any(|e| keep(e))
        })
        .await;
        self.matching(&keep)
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("{what}: the event was seen, then lost"))
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        self.reader.abort();
    }
}
