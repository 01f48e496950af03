//! How long the journal store takes to start on a long log: writes N sends (an insert,
//! the agent's reply and a final logged status each, from sixteen tasks at once) with
//! snapshots off, so that a reopen replays every one of them, then reopens it and
//! prints both times.
//!
//! ```sh
//! cargo run --release -p agentyard-store --example journal_replay -- 200000
//! ```
//!
//! The directory is a temporary one beside the system's others (`TMPDIR`), removed
//! at the end.

use std::sync::Arc;
use std::time::Instant;

use agentyard_store::journal::Tuning;
use agentyard_store::{JournalTaskStore, Retention, TaskOwner, TaskStore};
use agentyard_transport::a2a::{
    Message, Part, Role, Task, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use agentyard_transport::{ContextId, TaskId};

const SENDERS: usize = 16;

fn text(role: Role, text: String) -> Arc<Message> {
    Arc::new(Message::new(role, vec![Part::text(text)]))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sends: usize = match std::env::args().nth(1) {
        Some(n) => n
            .parse()
            .map_err(|e| format!("the number of sends, `{n}`: {e}"))?,
        None => 200_000,
    };
    let dir = tempfile::tempdir()?;
    // Snapshots off: the reopen replays the whole log, the longest start there is
    // short of the compaction threshold.
    let mut tuning = Tuning::default();
    tuning.compact_bytes = u64::MAX;
    let store =
        Arc::new(JournalTaskStore::open_tuned(dir.path(), Retention::default(), tuning).await?);

    let started = Instant::now();
    let mut senders = tokio::task::JoinSet::new();
    for sender in 0..SENDERS {
        let store = Arc::clone(&store);
        senders.spawn(async move {
            for n in 0..sends / SENDERS {
                let id = TaskId::mint();
                let context = ContextId::new(format!("c{sender}"));
                let mut task = Task::new(
                    id.clone(),
                    context.clone(),
                    TaskStatus::new(TaskState::Working),
                );
                task.history = Some(vec![text(Role::User, format!("hello {n}"))]);
                store
                    .insert_owned_unanswered(task, TaskOwner::new("echo", None))
                    .await?;
                store
                    .append_history_unanswered(&id, text(Role::Agent, format!("hello {n}")))
                    .await?;
                let mut status = TaskStatus::new(TaskState::Completed);
                status.message = Some(text(Role::Agent, format!("hello {n}")));
                let update = TaskStatusUpdateEvent::new(id.clone(), context, status, true);
                store.set_status_logged(&id, update).await?;
            }
            Ok::<_, agentyard_store::StoreError>(())
        });
    }
    while let Some(done) = senders.join_next().await {
        done??;
    }
    let written = started.elapsed();
    store.close().await;
    drop(store);

    let bytes: u64 = std::fs::read_dir(dir.path())?
        .flatten()
        .filter_map(|entry| entry.metadata().ok())
        .map(|metadata| metadata.len())
        .sum();
    let started = Instant::now();
    let store = JournalTaskStore::open_tuned(dir.path(), Retention::default(), tuning).await?;
    let reopened = started.elapsed();
    let all = |_: &Task, _: Option<&TaskOwner>| true;
    let kept = store.list(&all, 1, None).await?.total;
    store.close().await;
    println!(
        "{sends} sends written in {written:.2?} by {SENDERS} senders ({:.0}/s); {} MiB of \
         journal; reopened (the whole log replayed) in {reopened:.2?}; {kept} tasks kept",
        sends as f64 / written.as_secs_f64(),
        bytes >> 20,
    );
    Ok(())
}
