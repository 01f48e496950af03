//! Following a task: waiting for it to settle, and streaming its updates.

use agentyard_transport::TaskId;
use agentyard_transport::a2a::{StreamEvent, Task, TaskStatusUpdateEvent};
use futures::Stream;
use tokio::sync::broadcast;

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

    pub(super) fn task_stream(
        &self,
        first: Task,
        rx: Option<broadcast::Receiver<StreamEvent>>,
    ) -> impl Stream<Item = StreamEvent> + Send + 'static {
        enum State {
            First(Box<Task>, Option<broadcast::Receiver<StreamEvent>>),
            Updates(TaskId, broadcast::Receiver<StreamEvent>),
            Done,
        }
        let supervisor = self.clone();
        futures::stream::unfold(State::First(Box::new(first), rx), move |state| {
            let supervisor = supervisor.clone();
            async move {
                match state {
                    State::Done => None,
                    State::First(task, None) => Some((StreamEvent::Task(*task), State::Done)),
                    State::First(task, Some(rx)) => {
                        let id = task.id.clone();
                        Some((StreamEvent::Task(*task), State::Updates(id, rx)))
                    }
                    State::Updates(id, mut rx) => match rx.recv().await {
                        Ok(StreamEvent::StatusUpdate(update)) if update.is_final => {
                            Some((StreamEvent::StatusUpdate(update), State::Done))
                        }
                        Ok(event) => Some((event, State::Updates(id, rx))),
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            // Fell behind: resynchronize with the task's current status
                            // rather than replay what was dropped.
                            let task = supervisor.get_task(&id, Some(0)).await.ok()?;
                            let is_final = is_settled(task.status.state);
                            let update = TaskStatusUpdateEvent::new(
                                task.id,
                                task.context_id,
                                task.status,
                                is_final,
                            );
                            let next = if is_final {
                                State::Done
                            } else {
                                State::Updates(id, rx)
                            };
                            Some((StreamEvent::StatusUpdate(update), next))
                        }
                        Err(broadcast::error::RecvError::Closed) => None,
                    },
                }
            }
        })
    }
}
