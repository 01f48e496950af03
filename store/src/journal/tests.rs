//! The journal's own tests: what the conformance suite cannot see (its files, what a
//! reopen finds, torn and corrupt files). The contract itself is the conformance
//! suite's (`store/tests/conformance.rs` runs it against the journal).

use std::sync::Arc;
use std::time::{Duration, Instant};

use agentyard_transport::a2a::{
    Artifact, Message, Part, PushNotificationConfig, Role, StreamEvent, Task,
    TaskArtifactUpdateEvent, TaskPushNotificationConfig, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use agentyard_transport::{ContextId, TaskId};

use super::*;

fn task(id: &str, context: &str) -> Task {
    Task::new(
        TaskId::new(id),
        ContextId::new(context),
        TaskStatus::new(TaskState::Submitted),
    )
}

fn text(text: &str) -> Arc<Message> {
    Arc::new(Message::new(Role::User, vec![Part::text(text)]))
}

fn update(id: &str, state: TaskState) -> TaskStatusUpdateEvent {
    TaskStatusUpdateEvent::new(
        TaskId::new(id),
        ContextId::new("c"),
        TaskStatus::new(state),
        state.is_terminal(),
    )
}

async fn open(dir: &Path, tuning: Tuning) -> JournalTaskStore {
    JournalTaskStore::open_tuned(dir, Retention::default(), tuning)
        .await
        .expect("open the journal")
}

/// Whatever a client can read of a task: the task, its owner, its log, its configs.
async fn view(store: &dyn TaskStore, id: &str) -> String {
    let id = TaskId::new(id);
    let task = store.get(&id, None).await.expect("get");
    let owner = store.owner(&id).await.expect("owner");
    let events = store.events_after(&id, 0).await.expect("events");
    let configs = store.push_configs(&id).await.expect("configs");
    format!(
        "{}|{owner:?}|{}|{}",
        serde_json::to_string(&task).expect("task"),
        serde_json::to_string(&events).expect("events"),
        serde_json::to_string(&configs).expect("configs"),
    )
}

/// The ids a store lists, newest change first.
async fn listed(store: &dyn TaskStore) -> Vec<String> {
    let all = |_: &Task, _: Option<&TaskOwner>| true;
    let page = store.list(&all, 100_000, None).await.expect("list");
    page.tasks
        .iter()
        .map(|t| t.id.as_str().to_owned())
        .collect()
}

/// Stores `artifact` of task `id` with the event that announces it.
async fn put_artifact(store: &JournalTaskStore, id: &TaskId, artifact: Artifact) {
    let artifact = Arc::new(artifact);
    let event = StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent::new(
        id.clone(),
        ContextId::new("c"),
        Arc::clone(&artifact),
    ));
    store
        .put_artifact_logged(id, artifact, false, &event)
        .await
        .expect("artifact");
}

/// A little of everything the store keeps, for `task-{n}`.
async fn write_some(store: &JournalTaskStore, n: usize) {
    let id = format!("task-{n}");
    let task_id = TaskId::new(&id);
    store
        .insert_owned(
            task(&id, &format!("c{}", n % 7)),
            TaskOwner::new("echo", n.is_multiple_of(3).then(|| Arc::from("alice"))),
        )
        .await
        .expect("insert");
    store
        .set_status_logged(&task_id, update(&id, TaskState::Working))
        .await
        .expect("working");
    store
        .append_history(&task_id, text(&format!("hello {n}")))
        .await
        .expect("history");
    put_artifact(
        store,
        &task_id,
        Artifact::new(format!("a{n}"), vec![Part::text(format!("part {n}"))]),
    )
    .await;
    if n.is_multiple_of(4) {
        let mut push = PushNotificationConfig::new(format!("http://127.0.0.1:9/{n}"));
        push.id = Some(format!("p{n}"));
        let config = TaskPushNotificationConfig {
            task_id: task_id.clone(),
            push_notification_config: push,
        };
        store.put_push_config(&config).await.expect("push config");
    }
    if n.is_multiple_of(5) {
        store
            .remember_key(&format!("key-{n}"), &task_id)
            .await
            .expect("key");
    }
    if n.is_multiple_of(2) {
        store
            .set_status_logged(&task_id, update(&id, TaskState::Completed))
            .await
            .expect("complete");
    } else if n.is_multiple_of(3) {
        store
            .set_status_logged(&task_id, update(&id, TaskState::InputRequired))
            .await
            .expect("input required");
    }
    store
        .put_record(
            "workflows",
            &format!("w{}", n % 5),
            &serde_json::json!({ "n": n }),
            None,
        )
        .await
        .ok();
}

/// Everything the test's writes can be read back as.
async fn everything(store: &JournalTaskStore, n: usize) -> Vec<String> {
    let mut seen = Vec::new();
    for i in 0..n {
        seen.push(view(store, &format!("task-{i}")).await);
    }
    seen.push(listed(store).await.join(","));
    for i in (0..n).step_by(5) {
        let key = store
            .recall_key(&format!("key-{i}"), std::time::UNIX_EPOCH)
            .await
            .expect("recall");
        seen.push(format!("{key:?}"));
    }
    let records = store.list_records("workflows").await.expect("records");
    seen.push(
        serde_json::to_string(
            &records
                .iter()
                .map(|r| (&r.key, r.version))
                .collect::<Vec<_>>(),
        )
        .expect("records"),
    );
    let mut unfinished = store.unfinished().await.expect("unfinished");
    unfinished.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    seen.push(format!("{unfinished:?}"));
    for context in 0..7 {
        let history = store
            .context_history(&ContextId::new(format!("c{context}")), None, 1000)
            .await
            .expect("history");
        seen.push(serde_json::to_string(&history).expect("history"));
        let principal = store
            .context_principal(&ContextId::new(format!("c{context}")))
            .await
            .expect("principal");
        seen.push(format!("{principal:?}"));
    }
    seen
}

/// Opens the journal in `dir`, makes `write_some` of each of `sends`, and closes it;
/// what a client could read of it then.
async fn written(dir: &Path, tuning: Tuning, sends: std::ops::Range<usize>) -> Vec<String> {
    let store = open(dir, tuning).await;
    for n in sends.clone() {
        write_some(&store, n).await;
    }
    let seen = everything(&store, sends.end).await;
    store.close().await;
    seen
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read the directory")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| file_number(name).is_some())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_reopen_reads_back_every_acknowledged_write() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let before = written(dir.path(), Tuning::default(), 0..40).await;

    let store = open(dir.path(), Tuning::default()).await;
    assert_eq!(everything(&store, 40).await, before);
    // Numbers go on past what was stored: a task changed now is listed first.
    store
        .insert(task("after", "c0"))
        .await
        .expect("insert after a reopen");
    assert_eq!(
        listed(&store).await.first().map(String::as_str),
        Some("after")
    );
    let seq = store
        .append_event(
            &TaskId::new("task-1"),
            &StreamEvent::StatusUpdate(update("task-1", TaskState::Working)),
        )
        .await
        .expect("event");
    let logged = store
        .events_after(&TaskId::new("task-1"), 0)
        .await
        .expect("log");
    assert_eq!(
        seq,
        Some(logged.len() as u64),
        "the log numbers on from where it was"
    );
    store.close().await;
}

#[tokio::test]
async fn segments_roll_into_snapshots_and_a_reopen_finds_the_same_tables() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let retention = Retention::new(25);
    let store = JournalTaskStore::open_tuned(dir.path(), retention, Tuning::tiny())
        .await
        .expect("open");
    for n in 0..300 {
        write_some(&store, n).await;
    }
    // The snapshot thread runs beside the writes: wait, with a deadline, for a
    // snapshot to have replaced the segments before it.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let numbers: Vec<(u64, bool)> = files(dir.path())
            .iter()
            .filter_map(|name| file_number(name))
            .collect();
        let snapshot = numbers.iter().filter(|(_, s)| *s).map(|(n, _)| *n).max();
        let oldest = numbers.iter().filter(|(_, s)| !*s).map(|(n, _)| *n).min();
        if snapshot.is_some_and(|s| oldest == Some(s)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no snapshot replaced the old segments: {:?}",
            files(dir.path())
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = everything(&store, 300).await;
    store.close().await;

    let store = JournalTaskStore::open_tuned(dir.path(), retention, Tuning::tiny())
        .await
        .expect("reopen");
    assert_eq!(everything(&store, 300).await, before);
    // Retention held through the snapshot: at most 25 ended tasks, besides those a
    // key keeps.
    let mut ended = 0;
    for n in (0..300).filter(|n| n % 2 == 0 && n % 5 != 0) {
        ended += usize::from(
            store
                .get(&TaskId::new(format!("task-{n}")), None)
                .await
                .expect("get")
                .is_some(),
        );
    }
    assert!(ended <= 25, "{ended} ended tasks kept");
    store.close().await;
}

/// The offset after the last whole frame of a segment.
fn end_of_frames(path: &Path) -> u64 {
    let bytes = std::fs::read(path).expect("read the segment");
    let (first, encoding) = read_header(path, &bytes, FileKind::Segment, 0).expect("a segment");
    match read_frames(&bytes, encoding, first, |_: Op| Ok(())).0 {
        Ending::Clean(end) => end,
        Ending::Bad(at, why) => panic!("a bad frame at {at}: {why}"),
    }
}

#[tokio::test]
async fn a_torn_last_write_is_dropped_and_what_came_before_is_kept() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let before = written(dir.path(), Tuning::default(), 0..10).await;

    // A crash in the middle of a write: a frame header that promises more than made
    // it to the disk, and part of a payload.
    let segment = segment_path(dir.path(), 0);
    let end = end_of_frames(&segment);
    let file = OpenOptions::new().write(true).open(&segment).expect("open");
    let mut torn = Vec::new();
    torn.extend_from_slice(&500u32.to_le_bytes());
    torn.extend_from_slice(&7u32.to_le_bytes());
    torn.extend_from_slice(&0u64.to_le_bytes());
    torn.extend_from_slice(br#"{"Insert":{"task":"#);
    file.write_all_at(&torn, end).expect("tear");
    drop(file);

    let store = open(dir.path(), Tuning::default()).await;
    assert_eq!(everything(&store, 10).await, before);
    // The torn bytes were zeroed: writes after them are read back by the next start.
    write_some(&store, 10).await;
    let after = everything(&store, 11).await;
    store.close().await;
    let store = open(dir.path(), Tuning::default()).await;
    assert_eq!(everything(&store, 11).await, after);
    store.close().await;
}

/// Tiny segments that roll, and snapshots that never come.
const ROLLING: Tuning = Tuning {
    segment_bytes: 16 << 10,
    compact_bytes: u64::MAX,
    zero_ahead: 8 << 10,
};

/// A closed journal of several segments and no snapshot.
async fn several_segments() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = open(dir.path(), ROLLING).await;
    for n in 0..60 {
        write_some(&store, n).await;
    }
    store.close().await;
    assert!(files(dir.path()).len() >= 3, "{:?}", files(dir.path()));
    dir
}

#[tokio::test]
async fn a_bad_frame_before_the_last_segment_is_corruption_named_at_open() {
    let dir = several_segments().await;
    let tuning = ROLLING;

    let segment = segment_path(dir.path(), 0);
    let mut bytes = std::fs::read(&segment).expect("read");
    bytes[FILE_HEADER + FRAME_HEADER + 3] ^= 0x20;
    std::fs::write(&segment, &bytes).expect("corrupt");
    let error = JournalTaskStore::open_tuned(dir.path(), Retention::default(), tuning)
        .await
        .expect_err("a corrupt journal is refused");
    let message = error.to_string();
    assert!(
        message.contains("is corrupt at byte 32")
            && message.contains("journal-00000000000000000000.log"),
        "{message}"
    );
}

#[tokio::test]
async fn a_file_that_is_not_a_journal_is_named_at_open() {
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::write(
        segment_path(dir.path(), 0),
        b"this is not a journal, just text!",
    )
    .expect("write");
    let error = JournalTaskStore::open(dir.path(), Retention::default())
        .await
        .expect_err("refused");
    let message = error.to_string();
    assert!(
        message.contains("is not an agentyard journal file") && message.contains("journal-0"),
        "{message}"
    );
}

/// A file in a format of a later version says so, rather than that it is no journal.
#[tokio::test]
async fn a_file_of_a_newer_format_is_named_as_such_at_open() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = open(dir.path(), Tuning::default()).await;
    write_some(&store, 0).await;
    store.close().await;
    let path = segment_path(dir.path(), 0);
    let mut bytes = std::fs::read(&path).expect("read");
    bytes[..8].copy_from_slice(b"AGYJRNL9");
    let crc = crc32fast::hash(&bytes[..24]);
    bytes[24..28].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, bytes).expect("write");
    let error = JournalTaskStore::open(dir.path(), Retention::default())
        .await
        .expect_err("refused");
    let message = error.to_string();
    assert!(
        message.contains("written by a newer version of agentyard")
            && message.contains("AGYJRNL9")
            && message.contains("journal-0"),
        "{message}"
    );
}

#[tokio::test]
async fn a_gap_in_the_segments_is_refused_rather_than_skipped() {
    let dir = several_segments().await;
    let tuning = ROLLING;
    std::fs::remove_file(segment_path(dir.path(), 1)).expect("lose a segment");
    let error = JournalTaskStore::open_tuned(dir.path(), Retention::default(), tuning)
        .await
        .expect_err("refused");
    assert!(error.to_string().contains("has no segment 1"), "{error}");
}

#[tokio::test]
async fn a_second_store_on_the_same_directory_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let first = open(dir.path(), Tuning::default()).await;
    let error = JournalTaskStore::open(dir.path(), Retention::default())
        .await
        .expect_err("the directory is taken");
    assert!(
        error
            .to_string()
            .contains("in use by another agentyard process"),
        "{error}"
    );
    first.close().await;
    // Released by the close.
    open(dir.path(), Tuning::default()).await.close().await;
}

#[tokio::test]
async fn a_write_that_breaks_the_rules_is_refused_now_and_after_a_replay() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = open(dir.path(), Tuning::default()).await;
    store.insert(task("t", "c")).await.expect("insert");
    store
        .set_status(&TaskId::new("t"), TaskStatus::new(TaskState::Canceled))
        .await
        .expect("cancel");
    let error = store
        .set_status(&TaskId::new("t"), TaskStatus::new(TaskState::Completed))
        .await
        .expect_err("a terminal task stays as it is");
    assert!(matches!(error, StoreError::Terminal { .. }), "{error:?}");
    store.close().await;
    // The refused write is in the log; replayed, it is refused again.
    let store = open(dir.path(), Tuning::default()).await;
    let task = store
        .get(&TaskId::new("t"), None)
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(task.status.state, TaskState::Canceled);
    store.close().await;
}

#[test]
fn file_names_parse_back_to_their_numbers() {
    let dir = Path::new("/d");
    let segment = segment_path(dir, 42);
    let snapshot = snapshot_path(dir, 7);
    let name = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .map(str::to_owned)
            .unwrap_or_default()
    };
    assert_eq!(file_number(&name(&segment)), Some((42, false)));
    assert_eq!(file_number(&name(&snapshot)), Some((7, true)));
    assert_eq!(file_number("snapshot-7.tmp"), None);
    assert_eq!(file_number("agentyard.db"), None);
}

/// Sends as the runtime makes them, from many tasks at once: an insert nobody waits
/// for, then the task's other writes, one of them answered. However the writes fall
/// into batches, a task's insert is in the log (and applied) before its next write,
/// and a write made after an answer is checked against what that answer applied. (A
/// build that flushed on two threads, each taking its batch before the log's lock,
/// failed this within a few thousand sends.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_task_s_writes_land_in_the_order_they_were_made() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = Arc::new(open(dir.path(), Tuning::default()).await);
    let mut senders = tokio::task::JoinSet::new();
    for sender in 0..16 {
        let store = Arc::clone(&store);
        senders.spawn(async move {
            for n in 0..1000 {
                let id = TaskId::mint();
                let mut task = task(id.as_str(), &format!("c{sender}"));
                task.status = TaskStatus::new(TaskState::Working);
                store
                    .insert_owned_unanswered(task, TaskOwner::new("echo", None))
                    .await
                    .expect("queued");
                store
                    .append_history_unanswered(&id, text(&format!("{sender}/{n}")))
                    .await
                    .expect("the insert is queued, so the task is there");
                let update = TaskStatusUpdateEvent::new(
                    id.clone(),
                    ContextId::new(format!("c{sender}")),
                    TaskStatus::new(TaskState::Completed),
                    true,
                );
                store
                    .set_status_logged(&id, update)
                    .await
                    .expect("the insert landed first");
                let stored = store.get(&id, None).await.expect("get").expect("stored");
                assert_eq!(stored.history.map(|h| h.len()), Some(1));
            }
        });
    }
    while let Some(done) = senders.join_next().await {
        done.expect("a sender");
    }
    store.close().await;
}

/// A write larger than a frame may be is refused with a clear error before it reaches
/// the log (written, it would read back as corruption and stop the next start), and
/// the journal goes on.
#[tokio::test]
async fn a_write_larger_than_a_frame_is_refused_and_the_journal_goes_on() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = open(dir.path(), Tuning::default()).await;
    let mut big = task("big", "c");
    big.history = Some(vec![text(&"x".repeat(MAX_FRAME + 1))]);
    let error = store.insert(big).await.expect_err("too large for a frame");
    let why = std::error::Error::source(&error).map(ToString::to_string);
    assert!(
        why.as_deref()
            .is_some_and(|why| why.contains("frame limit")),
        "{error:?}"
    );
    store
        .insert(task("small", "c"))
        .await
        .expect("the journal goes on");
    store.close().await;
    let store = open(dir.path(), Tuning::default()).await;
    assert!(
        store
            .get(&TaskId::new("small"), None)
            .await
            .expect("get")
            .is_some()
    );
    assert!(
        store
            .get(&TaskId::new("big"), None)
            .await
            .expect("get")
            .is_none()
    );
    store.close().await;
}

/// A snapshot cut short (its last frame, which counts the others, missing) is
/// corruption: a start refuses it, naming the file, rather than start on part of the
/// tables.
#[tokio::test]
async fn a_snapshot_cut_short_is_refused_at_open() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = open(dir.path(), Tuning::tiny()).await;
    for n in 0..300 {
        write_some(&store, n).await;
    }
    store.close().await;
    let snapshot = files(dir.path())
        .into_iter()
        .filter(|name| name.starts_with("snapshot-"))
        .max()
        .expect("the writes made a snapshot");
    let path = dir.path().join(&snapshot);
    let bytes = std::fs::read(&path).expect("read");
    // Whole frames only, the last one gone: every checksum holds, the count does not.
    let mut frames = Vec::new();
    let (ending, _) = read_frames(&bytes, Encoding::MessagePack, 0, |part: super::Part| {
        frames.push(matches!(part, super::Part::End { .. }));
        Ok(())
    });
    assert!(matches!(ending, Ending::Clean(_)), "a whole snapshot");
    assert_eq!(frames.last(), Some(&true), "it ends with its count");
    let mut at = FILE_HEADER;
    let mut starts = Vec::new();
    while at + FRAME_HEADER <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        if len == 0 {
            break;
        }
        starts.push(at);
        at += FRAME_HEADER + len;
    }
    let last = *starts.last().expect("frames");
    std::fs::write(&path, &bytes[..last]).expect("cut the snapshot short");
    let error = JournalTaskStore::open_tuned(dir.path(), Retention::default(), Tuning::tiny())
        .await
        .expect_err("refused");
    let message = error.to_string();
    assert!(
        message.contains("ends before its last frame") && message.contains(&snapshot),
        "{message}"
    );
}

/// Rewrites every file of a closed journal as a version before 2026-11-29 wrote it:
/// the same frames, each payload in JSON, under the JSON-era magic.
fn rewrite_as_json(dir: &Path) {
    fn json_frames<T: serde::de::DeserializeOwned + Serialize>(
        bytes: &[u8],
        first: u64,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let (ending, _) = read_frames(bytes, Encoding::MessagePack, first, |value: T| {
            let payload = serde_json::to_vec(&value).expect("JSON");
            let len = u32::try_from(payload.len()).expect("a small frame");
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
            out.extend_from_slice(&[0; 8]);
            out.extend_from_slice(&payload);
            Ok(())
        });
        assert!(matches!(ending, Ending::Clean(_)), "whole frames");
        out
    }
    for name in files(dir) {
        let path = dir.join(&name);
        let bytes = std::fs::read(&path).expect("read");
        let (number, snapshot) = file_number(&name).expect("a journal file");
        let kind = if snapshot {
            FileKind::Snapshot
        } else {
            FileKind::Segment
        };
        let (first, encoding) = read_header(&path, &bytes, kind, number).expect("a header");
        assert_eq!(
            encoding,
            Encoding::MessagePack,
            "{name} as this version writes it"
        );
        let mut frames = if snapshot {
            json_frames::<super::Part>(&bytes, 0)
        } else {
            json_frames::<Op>(&bytes, first)
        };
        // The sequence numbers, left out above: a snapshot's count from 0, a
        // segment's from its first write.
        let mut at = 0;
        let mut seq = if snapshot { 0 } else { first };
        while at < frames.len() {
            let len = u32::from_le_bytes(frames[at..at + 4].try_into().expect("4 bytes")) as usize;
            frames[at + 8..at + 16].copy_from_slice(&seq.to_le_bytes());
            seq += 1;
            at += FRAME_HEADER + len;
        }
        let magic = if snapshot {
            SNAPSHOT_MAGIC_JSON
        } else {
            SEGMENT_MAGIC_JSON
        };
        let mut file = file_header(magic, number, first).to_vec();
        file.extend_from_slice(&frames);
        file.extend_from_slice(&[0; FRAME_HEADER]);
        std::fs::write(&path, file).expect("write");
    }
}

/// A data directory written by a version whose frames were JSON opens with every
/// write in it; the writes after it go to a segment of their own, in MessagePack, and
/// both read back at the next start.
#[tokio::test]
async fn a_journal_of_an_earlier_version_is_replayed_and_written_on_beside() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let before = written(dir.path(), Tuning::tiny(), 0..120).await;
    let written = files(dir.path());
    assert!(
        written.iter().any(|name| name.starts_with("snapshot-")),
        "a snapshot among {written:?}"
    );
    rewrite_as_json(dir.path());

    let store = open(dir.path(), Tuning::default()).await;
    assert_eq!(everything(&store, 120).await, before);
    for n in 120..130 {
        write_some(&store, n).await;
    }
    let after = everything(&store, 130).await;
    store.close().await;
    let now = files(dir.path());
    assert_eq!(
        now.len(),
        written.len() + 1,
        "one new segment beside {written:?}: {now:?}"
    );
    let segments: Vec<&String> = now.iter().filter(|n| n.starts_with("journal-")).collect();
    let [.., previous, last] = segments[..] else {
        panic!("two segments or more in {now:?}");
    };
    let bytes = std::fs::read(dir.path().join(last)).expect("read");
    assert_eq!(&bytes[..8], SEGMENT_MAGIC, "{last} is of this version");
    let bytes = std::fs::read(dir.path().join(previous)).expect("read");
    assert_eq!(
        &bytes[..8],
        SEGMENT_MAGIC_JSON,
        "{previous} is left as it was"
    );

    let store = open(dir.path(), Tuning::default()).await;
    assert_eq!(everything(&store, 130).await, after);
    store.close().await;
}

/// What JSON can say that a binary encoding might not keep: every kind of part, a
/// data part's numbers, nulls and nesting, text that needs escaping in JSON,
/// metadata, extensions. A reopen reads each back as it was sent.
#[tokio::test]
async fn every_kind_of_content_reads_back_as_it_was_sent() {
    let message: Message = serde_json::from_value(serde_json::json!({
        "kind": "message",
        "role": "user",
        "messageId": "m-rich",
        "taskId": "rich",
        "contextId": "c",
        "extensions": ["https://example.com/ext/v1"],
        "referenceTaskIds": ["t-0"],
        "metadata": {"trace": {"depth": 2, "ok": true}},
        "parts": [
            {"kind": "text", "text": "é \"quoted\"\n\ttab \u{0001} 🦀", "metadata": {"lang": "fr"}},
            {"kind": "file", "file": {"bytes": "aGVsbG8=", "name": "a.txt", "mimeType": "text/plain"}},
            {"kind": "file", "file": {"uri": "https://example.com/b.pdf"}},
            {"kind": "data", "data": {
                "float": 0.1, "big": 1e300, "negative": -5, "max": u64::MAX, "min": i64::MIN,
                "null": null, "list": [1, "two", [3.5], {"four": false}], "empty": {}
            }}
        ]
    }))
    .expect("a message");
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = open(dir.path(), Tuning::default()).await;
    let id = TaskId::new("rich");
    store.insert(task("rich", "c")).await.expect("insert");
    store
        .append_history(&id, Arc::new(message.clone()))
        .await
        .expect("history");
    put_artifact(&store, &id, Artifact::new("out", message.parts.clone())).await;
    let before = view(&store, "rich").await;
    assert!(
        before.contains("1e+300") && before.contains("18446744073709551615"),
        "{before}"
    );
    store.close().await;

    let store = open(dir.path(), Tuning::default()).await;
    assert_eq!(view(&store, "rich").await, before);
    let read = store.get(&id, None).await.expect("get").expect("the task");
    let history = read.history.expect("a history");
    assert_eq!(history.last().map(|m| &**m), Some(&message));
    store.close().await;
}
