//! A task's cancellation: set once, seen by every copy, and awaited by whoever waits
//! for it.
//!
//! Why not `tokio_util`'s `CancellationToken`: it is a node of a tree (a token may
//! have children), so every clone and every drop takes the node's mutex to count its
//! handles, and a new token allocates the node with its mutex and a list of children.
//! A send makes one token, copies it two or three times (the live-task table, the work,
//! the handler's context) and drops every copy, none with a child: in `send_loop`'s
//! count that was ~650 instructions a send, about 2.5% of it. Here a copy is a
//! reference count, the check is one load, and the wait is a `Notify` that only a
//! cancel wakes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

#[cfg(test)]
mod tests;

/// A cancellation shared by a task's live-table entry, its work and its handler.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cancel(Arc<State>);

#[derive(Debug, Default)]
struct State {
    cancelled: AtomicBool,
    /// Wakes the waiters once, when the task is canceled.
    woken: Notify,
}

impl Cancel {
    /// A cancellation not yet set.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Sets it and wakes every waiter; later calls do nothing.
    pub(crate) fn cancel(&self) {
        if !self.0.cancelled.swap(true, Ordering::AcqRel) {
            self.0.woken.notify_waiters();
        }
    }

    /// Whether it is set.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Acquire)
    }

    /// Resolves once it is set (at once if it is already).
    pub(crate) async fn cancelled(&self) {
        // Made before the flag is read: `notify_waiters` wakes every `Notified` made
        // before it, polled yet or not, so a cancel between the read and the wait
        // is not missed.
        let woken = self.0.woken.notified();
        if self.is_cancelled() {
            return;
        }
        woken.await;
    }
}
