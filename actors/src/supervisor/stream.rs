//! Following a task: waiting for it to settle. (Streaming its updates, numbered, is
//! `resume`.)

use agentyard_transport::a2a::Task;

use super::Supervisor;
use crate::error::Result;
use crate::send::{Handover, Submitted, Watcher};
use crate::task::CallerRun;

impl Supervisor {
    /// Waits for a task to end or stop for input, then returns it.
    pub(super) async fn settle(&self, submitted: &Submitted, watcher: Watcher) -> Result<Task> {
        if let Watcher::State(mut state) = watcher {
            // Returns at once if the task has already settled (a repeat may find it
            // waiting for input); an error means the task left the live set, i.e. ended.
            let _ = state.wait_for(|s| s.is_settled()).await;
            let handover = state.with_attached(|attached| match attached {
                // Every waiter of an outcome the store refused must hear it (a
                // keyed repeat waits beside the first send): each copies the
                // status, which is small, and leaves it. A settled task goes
                // whole to one waiter; another reads the store, which has it: a
                // second waiter is a keyed repeat, and the store keeps a task
                // while its key is remembered.
                Some(Handover::Unstored(status)) => Some(Handover::Unstored(status.clone())),
                handover => handover.take(),
            });
            match handover {
                // The task as it settled, read back for its waiter; the store's copy
                // may be gone by now, past its retention.
                Some(Handover::Task(task)) => return Ok(*task),
                // Its streams were told it failed; so is its waiter.
                Some(Handover::Unstored(status)) => {
                    let mut task = self.get_task(&submitted.task.id, None).await?;
                    task.status = status;
                    return Ok(task);
                }
                None => {}
            }
        }
        self.get_task(&submitted.task.id, None).await
    }

    /// Runs the caller's own turn, if it has one, while waiting for the task to
    /// settle; returns as soon as it settles, even if the turn goes on (a task
    /// canceled while its handler winds down), leaving the rest of the turn to a
    /// task of its own.
    pub(super) async fn run_and_settle(
        &self,
        submitted: &Submitted,
        watcher: Watcher,
        run: Option<CallerRun>,
    ) -> Result<Task> {
        // Pinned once, for both ways below: awaited by value on the way without a
        // turn, it took a place of its own in this future beside the pinned one
        // (~300 bytes more to every move of every future that awaits a send).
        let settle = self.settle(submitted, watcher);
        tokio::pin!(settle);
        let Some(mut run) = run else {
            return settle.await;
        };
        let settled = {
            let turn = run.run();
            tokio::pin!(turn);
            tokio::select! {
                // The turn first: it is what the task waits on.
                biased;
                () = &mut turn => None,
                settled = &mut settle => Some(settled),
            }
        };
        match settled {
            Some(settled) => settled,
            // The turn is over; the task settled in it (or ended without it).
            None => settle.await,
        }
    }
}
