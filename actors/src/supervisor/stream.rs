//! Following a task: waiting for it to settle. (Streaming its updates, numbered, is
//! `resume`.)

use agentyard_transport::a2a::Task;

use super::Supervisor;
use crate::error::Result;
use crate::send::{Submitted, Watcher, is_settled};

impl Supervisor {
    /// Waits for a task to end or stop for input, then returns it.
    pub(super) async fn settle(&self, submitted: &Submitted, watcher: Watcher) -> Result<Task> {
        if let Watcher::State(mut state) = watcher {
            // Returns at once if the task has already settled (a repeat may find it
            // waiting for input); an error means the task left the live set, i.e. ended.
            let _ = state.wait_for(|s| is_settled(*s)).await;
        }
        self.get_task(&submitted.task.id, None).await
    }
}
