//! The journal store: the in-memory store's tables, rebuilt at start from an
//! append-only log of every write, each write on disk before it is applied or
//! answered.
//!
//! Why a log of its own beside the SQLite store: a durable send through SQLite writes
//! ~15 KiB of B-tree pages to its WAL (a task row, six index leaves, the event log's
//! table and key), so its commits flush far more than a send says, and its writer's
//! CPU per send is most of the runtime's (`docs/benchmarks.md`, §7). Here a send's
//! writes are a few hundred bytes each, appended to a file whose blocks were
//! written once before (an overwrite flushes without a metadata update), and every
//! read is the in-memory store's.
//!
//! # How a write goes
//!
//! A write is encoded on the caller's task and queued; one writer thread takes what is
//! queued, appends it to the current segment as checksummed frames, `fdatasync`s,
//! then applies the writes to the in-memory tables, in the log's order, and answers
//! each with what applying it returned. So concurrent writes share one flush (group
//! commit), a read never sees a write that is not on disk, and a write the disk
//! refused is answered with the error and applied nowhere. Replaying the log
//! applies the same writes in the same order, with the times they were made, so a
//! write that failed its rules (a terminal task, a stale version) fails again and
//! the tables come back as they were.
//!
//! # Files
//!
//! In the data directory: `journal-<n>.log` segments (a header, then frames:
//! length, CRC-32 of the payload, sequence number, payload: one write in
//! MessagePack, or JSON in the files of versions before 2026-11-29, which are
//! replayed and never appended to), a new one past
//! [`Tuning::segment_bytes`]; `snapshot-<n>.img`, the tables as they stood when
//! segment `n` began, written by a thread of its own once the segments since the last
//! snapshot outgrow [`Tuning::compact_bytes`] (and twice the snapshot), after which
//! the older files go. A segment is filled with zeros ahead of its writes, so a frame
//! of length 0 ends it; a torn last frame (a crash in a write) is cut off at start;
//! a bad frame anywhere else, or a bad snapshot, is corruption and refuses to open.

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _};
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::SystemTime;

use agentyard_transport::a2a::{
    Artifact, Message, StreamEvent, Task, TaskPushNotificationConfig, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use agentyard_transport::{ContextId, MessageId, TaskId};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::contract::{Record, Retention, StoreError, TaskFilter, TaskOwner, TaskPage, TaskStore};
use crate::memory::{EntryImage, InMemoryTaskStore, StoreImage};

#[cfg(test)]
mod tests;

/// A segment's first bytes: its frames in MessagePack.
const SEGMENT_MAGIC: &[u8; 8] = b"AGYJRNL2";
/// A snapshot's first bytes: its frames in MessagePack.
const SNAPSHOT_MAGIC: &[u8; 8] = b"AGYSNAP2";
/// The first bytes of a segment whose frames are JSON (written before 2026-11-29):
/// still replayed, never appended to.
const SEGMENT_MAGIC_JSON: &[u8; 8] = b"AGYJRNL1";
/// The first bytes of a snapshot whose frames are JSON (written before 2026-11-29).
const SNAPSHOT_MAGIC_JSON: &[u8; 8] = b"AGYSNAP1";
/// Magic, file number, first sequence number, CRC of the 24 bytes before it, padding.
const FILE_HEADER: usize = 32;
/// A frame's length, CRC and sequence number.
const FRAME_HEADER: usize = 16;
/// A frame larger than this is not one (a corrupt length), not a 256 MiB allocation;
/// a write that would make one is refused before it is queued.
#[cfg(not(test))]
const MAX_FRAME: usize = 256 << 20;
/// Small in tests, so that a test can make a write past it.
#[cfg(test)]
const MAX_FRAME: usize = 1 << 20;

/// The journal's file sizes.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Tuning {
    /// A segment past this size is closed and the next one begun (default 64 MiB).
    pub segment_bytes: u64,
    /// Segments past this many bytes since the last snapshot (and twice the snapshot's
    /// size) are folded into a new snapshot (default 256 MiB). What a start replays is
    /// at most about this much log.
    pub compact_bytes: u64,
    /// How far ahead of its writes a segment is filled with zeros (default 4 MiB).
    pub zero_ahead: u64,
}

impl Default for Tuning {
    fn default() -> Self {
        Self {
            segment_bytes: 64 << 20,
            compact_bytes: 256 << 20,
            zero_ahead: 4 << 20,
        }
    }
}

impl Tuning {
    /// Sizes small enough that a test rolls segments and snapshots within a few
    /// hundred writes.
    #[must_use]
    pub fn tiny() -> Self {
        Self {
            segment_bytes: 16 << 10,
            compact_bytes: 32 << 10,
            zero_ahead: 8 << 10,
        }
    }
}

/// The durable store whose tables live in memory and whose every write is appended to
/// a log first; see the module docs. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct JournalTaskStore {
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<()>>>,
    dir: PathBuf,
}

/// What the callers and the writer thread share.
#[derive(Debug)]
struct Shared {
    /// What is on disk, applied: every read's answer.
    tables: InMemoryTaskStore,
    queue: Mutex<Queue>,
    wake: Condvar,
}

/// A set of task ids, hashed as the tables' maps are (seeded per set, foldhash): the
/// ids are chosen by clients, and each send adds one and takes it out again.
type Ids = std::collections::HashSet<TaskId, foldhash::quality::RandomState>;

/// Writes waiting for the writer thread.
#[derive(Debug, Default)]
struct Queue {
    writes: Vec<Queued>,
    /// Tasks whose insert is queued or being written and not applied yet: an
    /// unanswered write of such a task is let through (its rules are checked against
    /// the tables once the insert is there).
    inserting: Ids,
    closed: bool,
    /// The writer sleeps on `wake` and the next write must wake it. While it appends,
    /// flushes or applies, a write needs no wake-up (it finds the write queued when it
    /// looks again), and a notify would cost a system call all the same.
    writer_sleeps: bool,
}

#[derive(Debug)]
struct Queued {
    payload: Vec<u8>,
    crc: u32,
    op: Op,
    answer: Option<oneshot::Sender<Result<Done, StoreError>>>,
}

/// What applying a write returned.
#[derive(Debug)]
enum Done {
    Nothing,
    Previous(TaskState, Option<u64>),
    Artifact(Arc<Artifact>, Option<u64>),
    Seq(u64),
    Deleted(bool),
    Dropped(usize),
    Version(u64),
}

/// A task's owner, as the log writes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Owner {
    agent: Arc<str>,
    principal: Option<Arc<str>>,
}

impl From<TaskOwner> for Owner {
    fn from(owner: TaskOwner) -> Self {
        Self {
            agent: owner.agent,
            principal: owner.principal,
        }
    }
}

impl From<Owner> for TaskOwner {
    fn from(owner: Owner) -> Self {
        TaskOwner::new(owner.agent, owner.principal)
    }
}

/// A segment frame's payload: one write.
#[derive(Debug, Serialize, Deserialize)]
enum Op {
    Insert {
        task: Task,
        owner: Option<Owner>,
        at: SystemTime,
    },
    Status {
        id: TaskId,
        status: TaskStatus,
        at: SystemTime,
    },
    StatusLogged {
        id: TaskId,
        update: TaskStatusUpdateEvent,
        at: SystemTime,
    },
    History {
        id: TaskId,
        message: Arc<Message>,
    },
    Artifact {
        id: TaskId,
        artifact: Arc<Artifact>,
        append: bool,
        event: Option<StreamEvent>,
    },
    Event {
        id: TaskId,
        event: StreamEvent,
    },
    Key {
        key: String,
        task: TaskId,
        at: SystemTime,
    },
    Unkey {
        key: String,
    },
    Push {
        config: TaskPushNotificationConfig,
    },
    Unpush {
        id: TaskId,
        config: String,
    },
    DropEnded {
        cutoff: SystemTime,
    },
    Record {
        namespace: String,
        key: String,
        value: serde_json::Value,
        expected: Option<u64>,
    },
    Unrecord {
        namespace: String,
        key: String,
    },
}

/// A snapshot frame's payload: a part of the tables. A type apart from [`Op`], so a
/// write in a snapshot, or a snapshot's part in a segment, does not decode: it is a
/// bad frame.
#[derive(Debug, Serialize, Deserialize)]
enum Part {
    /// A task, with what the store keeps beside it.
    Task {
        task: Task,
        change: u64,
        joined: u64,
        owner: Option<Owner>,
        events: Vec<(u64, StreamEvent)>,
        push_configs: Vec<TaskPushNotificationConfig>,
    },
    /// Ended tasks, in the order they ended.
    Finished { tasks: Vec<(TaskId, SystemTime)> },
    Conversation {
        context_id: ContextId,
        members: Vec<(u64, TaskId)>,
    },
    Key {
        key: String,
        task: TaskId,
        at: SystemTime,
    },
    Record {
        namespace: String,
        key: String,
        version: u64,
        value: serde_json::Value,
    },
    /// The last frame: without it the snapshot is incomplete.
    End {
        changes: u64,
        joined: u64,
        frames: u64,
    },
}

impl Op {
    /// Applies the write to `tables`, and returns what it answers.
    fn apply(self, tables: &InMemoryTaskStore) -> Result<Done, StoreError> {
        match self {
            Self::Insert { task, owner, at } => tables
                .insert_at(task, owner.map(Into::into), || at)
                .map(|()| Done::Nothing),
            Self::Status { id, status, at } => tables
                .change_status(&id, status, None, || at)
                .map(|(previous, seq)| Done::Previous(previous, seq)),
            Self::StatusLogged { id, update, at } => {
                let status = update.status.clone();
                tables
                    .change_status(&id, status, Some(StreamEvent::StatusUpdate(update)), || at)
                    .map(|(previous, seq)| Done::Previous(previous, seq))
            }
            Self::History { id, message } => {
                tables.push_history(&id, message).map(|()| Done::Nothing)
            }
            Self::Artifact {
                id,
                artifact,
                append,
                event,
            } => tables
                .store_artifact(&id, artifact, append)
                .and_then(|stored| {
                    let seq = match event {
                        Some(event) => Some(tables.log_event(&id, event)?),
                        None => None,
                    };
                    Ok(Done::Artifact(stored, seq))
                }),
            Self::Event { id, event } => tables.log_event(&id, event).map(Done::Seq),
            Self::Key { key, task, at } => {
                tables.remember_key_at(&key, &task, at);
                Ok(Done::Nothing)
            }
            Self::Unkey { key } => {
                tables.unkey(&key);
                Ok(Done::Nothing)
            }
            Self::Push { config } => tables.store_push_config(config).map(|()| Done::Nothing),
            Self::Unpush { id, config } => {
                Ok(Done::Deleted(tables.remove_push_config(&id, &config)))
            }
            Self::DropEnded { cutoff } => Ok(Done::Dropped(tables.drop_ended(cutoff))),
            Self::Record {
                namespace,
                key,
                value,
                expected,
            } => tables
                .store_record(&namespace, &key, value, expected)
                .map(Done::Version),
            Self::Unrecord { namespace, key } => {
                Ok(Done::Deleted(tables.remove_record(&namespace, &key)))
            }
        }
    }

    /// The task a write is of, if it is of one.
    fn task(&self) -> Option<&TaskId> {
        match self {
            Self::Insert { task, .. } => Some(&task.id),
            Self::Status { id, .. }
            | Self::StatusLogged { id, .. }
            | Self::History { id, .. }
            | Self::Artifact { id, .. }
            | Self::Event { id, .. }
            | Self::Unpush { id, .. } => Some(id),
            Self::Push { config } => Some(&config.task_id),
            Self::Key { .. }
            | Self::Unkey { .. }
            | Self::DropEnded { .. }
            | Self::Record { .. }
            | Self::Unrecord { .. } => None,
        }
    }

    /// The task a write inserts.
    fn inserts(&self) -> Option<&TaskId> {
        match self {
            Self::Insert { task, .. } => Some(&task.id),
            _ => None,
        }
    }
}

/// A snapshot being read back.
#[derive(Default)]
struct Image {
    image: StoreImage,
    frames: u64,
    ended: bool,
}

impl Image {
    /// Takes a snapshot's frame; an error for one after its end, or an end that
    /// miscounts.
    fn add(&mut self, part: Part) -> Result<(), String> {
        if self.ended {
            return Err("a frame after the snapshot's end".into());
        }
        self.frames += 1;
        match part {
            Part::Task {
                task,
                change,
                joined,
                owner,
                events,
                push_configs,
            } => self.image.entries.push(EntryImage {
                task,
                change,
                joined,
                owner: owner.map(Into::into),
                events,
                push_configs,
            }),
            Part::Finished { tasks } => self.image.finished.extend(tasks),
            Part::Conversation {
                context_id,
                members,
            } => self.image.conversations.push((context_id, members)),
            Part::Key { key, task, at } => self.image.keys.push((key, task, at)),
            Part::Record {
                namespace,
                key,
                version,
                value,
            } => self.image.records.push((namespace, key, version, value)),
            Part::End {
                changes,
                joined,
                frames,
            } => {
                if frames != self.frames {
                    return Err(format!(
                        "the snapshot says it has {frames} frames, {} were read",
                        self.frames
                    ));
                }
                self.image.changes = changes;
                self.image.joined = joined;
                self.ended = true;
            }
        }
        Ok(())
    }
}

/// The frames of a snapshot of `image`, in the order [`Image::add`] reads them, the
/// last ([`Part::End`]) counting them all.
fn snapshot_parts(image: StoreImage) -> impl Iterator<Item = Part> {
    let StoreImage {
        entries,
        finished,
        conversations,
        keys,
        records,
        changes,
        joined,
    } = image;
    let finished: Vec<Part> = finished
        .chunks(1024)
        .map(|chunk| Part::Finished {
            tasks: chunk.to_vec(),
        })
        .collect();
    let frames = (entries.len() + finished.len() + conversations.len() + keys.len() + records.len())
        as u64
        + 1;
    let tasks = entries.into_iter().map(|entry| Part::Task {
        task: entry.task,
        change: entry.change,
        joined: entry.joined,
        owner: entry.owner.map(Into::into),
        events: entry.events,
        push_configs: entry.push_configs,
    });
    let conversations = conversations
        .into_iter()
        .map(|(context_id, members)| Part::Conversation {
            context_id,
            members,
        });
    let keys = keys
        .into_iter()
        .map(|(key, task, at)| Part::Key { key, task, at });
    let records = records
        .into_iter()
        .map(|(namespace, key, version, value)| Part::Record {
            namespace,
            key,
            version,
            value,
        });
    tasks
        .chain(finished)
        .chain(conversations)
        .chain(keys)
        .chain(records)
        .chain(std::iter::once(Part::End {
            changes,
            joined,
            frames,
        }))
}

/// An error of the disk, as a store error that says what and where.
fn unavailable(what: &str, path: &Path, error: &io::Error) -> StoreError {
    let cause = if error.kind() == io::ErrorKind::StorageFull {
        "the disk is full".to_owned()
    } else {
        error.to_string()
    };
    StoreError::Unavailable(format!("cannot {what} {}: {cause}", path.display()))
}

/// A corrupt file: refused at open, named.
fn corrupt(path: &Path, at: u64, why: &str) -> StoreError {
    StoreError::Unavailable(format!(
        "the journal file {} is corrupt at byte {at}: {why} (move the data directory \
         aside to start empty, or restore it from a backup)",
        path.display()
    ))
}

fn segment_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("journal-{number:020}.log"))
}

fn snapshot_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("snapshot-{number:020}.img"))
}

/// Whether a file of this name is one of a journal's segments or snapshots.
pub(crate) fn is_journal_file(name: &str) -> bool {
    file_number(name).is_some()
}

/// The number in a journal file's name, and whether it is a snapshot.
fn file_number(name: &str) -> Option<(u64, bool)> {
    if let Some(number) = name
        .strip_prefix("journal-")
        .and_then(|rest| rest.strip_suffix(".log"))
    {
        return number.parse().ok().map(|n| (n, false));
    }
    name.strip_prefix("snapshot-")
        .and_then(|rest| rest.strip_suffix(".img"))
        .and_then(|number| number.parse().ok())
        .map(|n| (n, true))
}

fn file_header(magic: &[u8; 8], number: u64, first_seq: u64) -> [u8; FILE_HEADER] {
    let mut header = [0u8; FILE_HEADER];
    header[..8].copy_from_slice(magic);
    header[8..16].copy_from_slice(&number.to_le_bytes());
    header[16..24].copy_from_slice(&first_seq.to_le_bytes());
    let crc = crc32fast::hash(&header[..24]);
    header[24..28].copy_from_slice(&crc.to_le_bytes());
    header
}

/// What a file's frames are written in, told by its magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    /// Every file written since 2026-11-29: a write's strings are copied, not escaped
    /// byte by byte (JSON's escaping was most of the journal's own CPU per send).
    MessagePack,
    /// The files of earlier versions, read so that an upgraded server keeps its tasks.
    Json,
}

impl Encoding {
    /// Decodes one frame's payload.
    fn decode<T: serde::de::DeserializeOwned>(self, payload: &[u8]) -> Result<T, String> {
        match self {
            Self::MessagePack => rmp_serde::from_slice(payload).map_err(|e| e.to_string()),
            Self::Json => serde_json::from_slice(payload).map_err(|e| e.to_string()),
        }
    }
}

/// Appends `value` to `out` as a frame's payload (MessagePack, structs as maps, so that
/// a field left out when empty, or one added later, still reads back).
fn encode<T: Serialize>(value: &T, out: &mut Vec<u8>) -> Result<(), rmp_serde::encode::Error> {
    rmp_serde::encode::write_named(out, value)
}

/// `op` as a frame's payload, in a vector of its own size. Encoded into a buffer the
/// thread keeps, so that a write's few hundred bytes do not grow a vector a few times
/// over (growing was a fifth of what the encoding cost).
fn encode_payload(op: &Op) -> Result<Vec<u8>, rmp_serde::encode::Error> {
    /// Kept between writes up to this size; a larger write's buffer is let go.
    const KEPT: usize = 16 << 10;
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with_borrow_mut(|scratch| {
        scratch.clear();
        let encoded = encode(op, scratch).map(|()| scratch.as_slice().to_vec());
        if scratch.capacity() > KEPT {
            *scratch = Vec::new();
        }
        encoded
    })
}

/// A file of the journal, as its header names it.
#[derive(Debug, Clone, Copy)]
enum FileKind {
    Segment,
    Snapshot,
}

impl FileKind {
    fn encoding(self, magic: &[u8]) -> Option<Encoding> {
        let (current, json) = match self {
            Self::Segment => (SEGMENT_MAGIC, SEGMENT_MAGIC_JSON),
            Self::Snapshot => (SNAPSHOT_MAGIC, SNAPSHOT_MAGIC_JSON),
        };
        if magic == current {
            Some(Encoding::MessagePack)
        } else if magic == json {
            Some(Encoding::Json)
        } else {
            None
        }
    }
}

/// Reads a file header: its first sequence number, and what its frames are written in.
fn read_header(
    path: &Path,
    bytes: &[u8],
    kind: FileKind,
    number: u64,
) -> Result<(u64, Encoding), StoreError> {
    let not = |why: &str| corrupt(path, 0, why);
    let header = bytes
        .get(..FILE_HEADER)
        .ok_or_else(|| not("shorter than its header"))?;
    let crc = u32::from_le_bytes(header[24..28].try_into().unwrap_or_default());
    let whole = crc == crc32fast::hash(&header[..24]);
    let Some(encoding) = kind.encoding(&header[..8]) else {
        let family = match kind {
            FileKind::Segment => &SEGMENT_MAGIC[..7],
            FileKind::Snapshot => &SNAPSHOT_MAGIC[..7],
        };
        // A later format of our own is a version to upgrade to, not a stray file.
        if header.starts_with(family) && whole {
            return Err(StoreError::Unavailable(format!(
                "{} was written by a newer version of agentyard (its format {:?} is not \
                 one this version reads); run that version on this data directory",
                path.display(),
                String::from_utf8_lossy(&header[..8])
            )));
        }
        return Err(StoreError::Unavailable(format!(
            "{} is not an agentyard journal file (move it out of the data directory)",
            path.display()
        )));
    };
    if !whole {
        return Err(not("its header's checksum does not match"));
    }
    let named = u64::from_le_bytes(header[8..16].try_into().unwrap_or_default());
    if named != number {
        return Err(not(&format!("its header says file {named}")));
    }
    let first = u64::from_le_bytes(header[16..24].try_into().unwrap_or_default());
    Ok((first, encoding))
}

/// How reading a file's frames ended.
enum Ending {
    /// Zeros, or the end of the file: every frame was whole.
    Clean(u64),
    /// A frame that is not whole at this offset: the first bad byte.
    Bad(u64, String),
}

/// Reads the frames of a file after its header, calling `each` with every payload
/// decoded as a `T`; stops at the first zero length or bad frame.
fn read_frames<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    encoding: Encoding,
    mut seq: u64,
    mut each: impl FnMut(T) -> Result<(), String>,
) -> (Ending, u64) {
    let mut at = FILE_HEADER;
    loop {
        let Some(header) = bytes.get(at..at + FRAME_HEADER) else {
            return (Ending::Clean(at as u64), seq);
        };
        let len = u32::from_le_bytes(header[..4].try_into().unwrap_or_default()) as usize;
        if len == 0 {
            return (Ending::Clean(at as u64), seq);
        }
        let crc = u32::from_le_bytes(header[4..8].try_into().unwrap_or_default());
        let frame_seq = u64::from_le_bytes(header[8..16].try_into().unwrap_or_default());
        let bad = |why: String| (Ending::Bad(at as u64, why), seq);
        if len > MAX_FRAME {
            return bad(format!("a frame of {len} bytes"));
        }
        let Some(payload) = bytes.get(at + FRAME_HEADER..at + FRAME_HEADER + len) else {
            return bad("a frame that runs past the end of the file".into());
        };
        if crc32fast::hash(payload) != crc {
            return bad("a frame whose checksum does not match".into());
        }
        if frame_seq != seq {
            return bad(format!("frame {frame_seq} where {seq} was next"));
        }
        let decoded = match encoding.decode::<T>(payload) {
            Ok(decoded) => decoded,
            Err(e) => return bad(format!("a frame that does not decode: {e}")),
        };
        if let Err(why) = each(decoded) {
            return bad(why);
        }
        seq += 1;
        at += FRAME_HEADER + len;
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, StoreError> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut file| file.read_to_end(&mut bytes))
        .map_err(|e| unavailable("read", path, &e))?;
    Ok(bytes)
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The segment being written, owned by the writer thread.
#[derive(Debug)]
struct Log {
    dir: PathBuf,
    tuning: Tuning,
    file: File,
    path: PathBuf,
    number: u64,
    /// Where the next frame goes.
    end: u64,
    /// The file is zeros from `end` up to here.
    zeroed: u64,
    /// The next frame's sequence number.
    seq: u64,
    /// Bytes of segments written since the last snapshot's segment began.
    since_snapshot: u64,
    snapshot_bytes: u64,
    /// A region a failed write may have left bytes in, zeroed before the next write.
    dirty: Option<(u64, u64)>,
    compacting: Option<JoinHandle<Result<u64, String>>>,
    frame: Vec<u8>,
}

impl Log {
    /// Creates segment `number`, starting at `seq`, and makes its name durable.
    fn create(
        dir: &Path,
        tuning: Tuning,
        number: u64,
        seq: u64,
    ) -> io::Result<(File, PathBuf, u64)> {
        let path = segment_path(dir, number);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)?;
        file.write_all_at(&file_header(SEGMENT_MAGIC, number, seq), 0)?;
        let zeroed = grow(&file, FILE_HEADER as u64, tuning.zero_ahead, 4096)?;
        file.sync_all()?;
        sync_dir(dir)?;
        Ok((file, path, zeroed))
    }

    /// Appends `writes` as frames and flushes them.
    fn append(&mut self, writes: &[Queued]) -> Result<(), StoreError> {
        if let Some((from, to)) = self.dirty {
            self.scrub(from, to)
                .map_err(|e| unavailable("write", &self.path, &e))?;
            self.dirty = None;
        }
        self.frame.clear();
        let mut seq = self.seq;
        for write in writes {
            let len = u32::try_from(write.payload.len()).unwrap_or(u32::MAX);
            self.frame.extend_from_slice(&len.to_le_bytes());
            self.frame.extend_from_slice(&write.crc.to_le_bytes());
            self.frame.extend_from_slice(&seq.to_le_bytes());
            self.frame.extend_from_slice(&write.payload);
            seq += 1;
        }
        let end = self.end + self.frame.len() as u64;
        // The zeros ahead are written (and flushed) before the frames, so the frames'
        // own flush overwrites blocks the file already has.
        // Past the end, a frame of zeros must follow, so the file holds one more
        // frame header of zeros than the frames.
        let needed = end + FRAME_HEADER as u64;
        if needed > self.zeroed {
            let want = self.tuning.zero_ahead.max(needed - self.zeroed);
            let grown = grow(&self.file, self.zeroed, want, needed - self.zeroed)
                .and_then(|zeroed| self.file.sync_data().map(|()| zeroed));
            match grown {
                Ok(zeroed) => self.zeroed = zeroed,
                Err(e) => return Err(unavailable("write", &self.path, &e)),
            }
        }
        let written = self
            .file
            .write_all_at(&self.frame, self.end)
            .and_then(|()| self.file.sync_data());
        if let Err(e) = written {
            // What reached the file is not a write anyone was answered on: zeroed now
            // or before the next write, so no start replays it.
            self.dirty = Some((self.end, end));
            if self.scrub(self.end, end).is_ok() {
                self.dirty = None;
            }
            return Err(unavailable("write", &self.path, &e));
        }
        self.since_snapshot += end - self.end;
        self.end = end;
        self.seq = seq;
        Ok(())
    }

    fn scrub(&self, from: u64, to: u64) -> io::Result<()> {
        let zeros = vec![0u8; usize::try_from(to - from).unwrap_or(0)];
        self.file.write_all_at(&zeros, from)?;
        self.file.sync_data()
    }

    /// Past the segment's size, begins the next one, and past the compaction
    /// threshold, snapshots `tables` as they stand (everything written is applied).
    fn roll(&mut self, tables: &InMemoryTaskStore) -> Result<(), StoreError> {
        if let Some(compacting) = self.compacting.take_if(|handle| handle.is_finished()) {
            match compacting.join() {
                Ok(Ok(bytes)) => {
                    self.snapshot_bytes = bytes;
                }
                Ok(Err(why)) => {
                    tracing::warn!(%why, "the journal's snapshot failed; the next segment tries again");
                    self.since_snapshot = self.since_snapshot.max(self.tuning.compact_bytes);
                }
                Err(_) => {
                    tracing::warn!("the journal's snapshot thread panicked");
                }
            }
        }
        if self.end < self.tuning.segment_bytes {
            return Ok(());
        }
        let number = self.number + 1;
        let (file, path, zeroed) = Self::create(&self.dir, self.tuning, number, self.seq)
            .map_err(|e| unavailable("create", &segment_path(&self.dir, number), &e))?;
        self.file = file;
        self.path = path;
        self.number = number;
        self.end = FILE_HEADER as u64;
        self.zeroed = zeroed;
        self.dirty = None;
        let due = self.since_snapshot >= self.tuning.compact_bytes
            && self.since_snapshot >= 2 * self.snapshot_bytes;
        if due && self.compacting.is_none() {
            self.since_snapshot = 0;
            let image = tables.image();
            let dir = self.dir.clone();
            let seq = self.seq;
            let spawned = std::thread::Builder::new()
                .name("agentyard-snap".into())
                .spawn(move || write_snapshot(&dir, number, seq, image));
            match spawned {
                Ok(handle) => self.compacting = Some(handle),
                Err(e) => tracing::warn!(error = %e, "cannot start the journal's snapshot thread"),
            }
        }
        Ok(())
    }

    /// Waits for a snapshot under way, so that closing leaves no half-made file.
    fn finish(&mut self) {
        if let Some(compacting) = self.compacting.take() {
            let _ = compacting.join();
        }
    }
}

/// Fills `want` bytes after `from` with zeros, or only `need` when the disk has no room
/// for `want`; returns where the zeros end. A fill that fails gives back what it took.
fn grow(file: &File, from: u64, want: u64, need: u64) -> io::Result<u64> {
    zero_fill(file, from, want).or_else(|_| {
        let _ = file.set_len(from);
        zero_fill(file, from, need.next_multiple_of(4096)).inspect_err(|_| {
            let _ = file.set_len(from);
        })
    })
}

/// Writes `len` zeros at `from`; returns where the zeros end.
fn zero_fill(file: &File, from: u64, len: u64) -> io::Result<u64> {
    const CHUNK: usize = 256 << 10;
    let zeros = vec![0u8; CHUNK];
    let mut at = from;
    let end = from + len;
    while at < end {
        let n = usize::try_from(end - at).unwrap_or(CHUNK).min(CHUNK);
        file.write_all_at(&zeros[..n], at)?;
        at += n as u64;
    }
    Ok(end)
}

/// Writes snapshot `number` of `image` beside the segments, makes it durable, then
/// removes what it replaces. Returns its size.
fn write_snapshot(dir: &Path, number: u64, seq: u64, image: StoreImage) -> Result<u64, String> {
    let path = snapshot_path(dir, number);
    let temporary = path.with_extension("tmp");
    let failed = |e: io::Error| format!("cannot write {}: {e}", temporary.display());
    let file = File::create(&temporary).map_err(failed)?;
    let mut out = io::BufWriter::with_capacity(1 << 20, &file);
    use std::io::Write as _;
    out.write_all(&file_header(SNAPSHOT_MAGIC, number, seq))
        .map_err(failed)?;
    let mut size = FILE_HEADER as u64;
    let mut payload = Vec::new();
    for (frame_seq, part) in (0u64..).zip(snapshot_parts(image)) {
        payload.clear();
        encode(&part, &mut payload).map_err(|e| e.to_string())?;
        let len = u32::try_from(payload.len()).map_err(|e| e.to_string())?;
        out.write_all(&len.to_le_bytes()).map_err(failed)?;
        out.write_all(&crc32fast::hash(&payload).to_le_bytes())
            .map_err(failed)?;
        out.write_all(&frame_seq.to_le_bytes()).map_err(failed)?;
        out.write_all(&payload).map_err(failed)?;
        size += (FRAME_HEADER + payload.len()) as u64;
    }
    out.flush().map_err(failed)?;
    drop(out);
    file.sync_all().map_err(failed)?;
    std::fs::rename(&temporary, &path).map_err(failed)?;
    sync_dir(dir).map_err(failed)?;
    remove_older(dir, number);
    Ok(size)
}

/// Removes the segments and snapshots a snapshot numbered `number` replaces.
fn remove_older(dir: &Path, number: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if let Some((n, _)) = name.to_str().and_then(file_number)
            && n < number
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn lock_queue(shared: &Shared) -> MutexGuard<'_, Queue> {
    shared.queue.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Tasks whose insert the disk refused: their later writes say so rather than "not
/// found". At most [`Lost::KEPT`], the oldest forgotten first.
#[derive(Debug, Default)]
struct Lost {
    ids: Ids,
    order: std::collections::VecDeque<TaskId>,
}

impl Lost {
    const KEPT: usize = 10_000;

    fn remember(&mut self, id: &TaskId) {
        if self.ids.insert(id.clone()) {
            self.order.push_back(id.clone());
        }
        if self.order.len() > Self::KEPT
            && let Some(oldest) = self.order.pop_front()
        {
            self.ids.remove(&oldest);
        }
    }

    fn contains(&self, id: &TaskId) -> bool {
        self.ids.contains(id)
    }
}

/// The writer thread: append, flush, apply, answer, as long as the store is open.
fn write_loop(shared: &Shared, mut log: Log) {
    let mut batch = Vec::new();
    let mut inserted = Vec::new();
    let mut lost = Lost::default();
    // Sent once the inserts applied are off the `inserting` list: an unanswered write
    // its caller makes after an answer is checked against the tables alone (a task
    // that ended is refused then, not let through as if its insert were still queued).
    let mut answers = Vec::new();
    loop {
        {
            let mut queue = lock_queue(shared);
            while queue.writes.is_empty() && !queue.closed {
                queue.writer_sleeps = true;
                queue = shared
                    .wake
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
                queue.writer_sleeps = false;
            }
            if queue.writes.is_empty() {
                break;
            }
            std::mem::swap(&mut queue.writes, &mut batch);
        }
        let appended = log.append(&batch);
        if let Err(error) = &appended {
            tracing::warn!(%error, writes = batch.len(), "the journal refused a batch of writes");
        }
        for write in batch.drain(..) {
            if let Some(id) = write.op.inserts() {
                inserted.push(id.clone());
                if appended.is_err() {
                    lost.remember(id);
                }
            }
            let was_lost = write.op.task().filter(|id| lost.contains(id));
            let done = match (&appended, was_lost) {
                // In the log, and refused again by a replay, as the task is not there.
                (Ok(()), Some(id)) => Err(StoreError::Unavailable(format!(
                    "an earlier write of task `{id}` was not stored (the disk refused it); \
                     the task cannot be changed"
                ))),
                (Ok(()), None) => write.op.apply(&shared.tables),
                (Err(StoreError::Unavailable(why)), _) => Err(StoreError::Unavailable(why.clone())),
                (Err(other), _) => Err(StoreError::Unavailable(other.to_string())),
            };
            if let Some(answer) = write.answer {
                answers.push((answer, done));
            }
        }
        if !inserted.is_empty() {
            let mut queue = lock_queue(shared);
            for id in inserted.drain(..) {
                queue.inserting.remove(&id);
            }
        }
        for (answer, done) in answers.drain(..) {
            let _ = answer.send(done);
        }
        if let Err(error) = log.roll(&shared.tables) {
            tracing::warn!(%error, "the journal cannot begin its next segment; it writes on in this one");
        }
    }
    log.finish();
}

impl JournalTaskStore {
    /// Opens (or creates) the journal in `dir`, replaying it, with the default
    /// [`Tuning`].
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] naming the file when the directory cannot be made
    /// or locked (another process has it), or a file is corrupt or not a journal.
    pub async fn open(dir: impl Into<PathBuf>, retention: Retention) -> Result<Self, StoreError> {
        Self::open_tuned(dir, retention, Tuning::default()).await
    }

    /// [`JournalTaskStore::open`] with the given file sizes.
    ///
    /// # Errors
    /// As [`JournalTaskStore::open`].
    pub async fn open_tuned(
        dir: impl Into<PathBuf>,
        retention: Retention,
        tuning: Tuning,
    ) -> Result<Self, StoreError> {
        let dir = dir.into();
        let opened =
            tokio::task::spawn_blocking(move || Self::open_blocking(dir, retention, tuning))
                .await
                .map_err(|e| StoreError::Backend(Box::new(e)))??;
        Ok(opened)
    }

    fn open_blocking(
        dir: PathBuf,
        retention: Retention,
        tuning: Tuning,
    ) -> Result<Self, StoreError> {
        std::fs::create_dir_all(&dir).map_err(|e| unavailable("create", &dir, &e))?;
        let lock = crate::data_dir::lock(&dir).map_err(StoreError::Unavailable)?;
        let tables = InMemoryTaskStore::new().retention(retention);
        let mut segments = Vec::new();
        let mut snapshots = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(|e| unavailable("read", &dir, &e))? {
            let entry = entry.map_err(|e| unavailable("read", &dir, &e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.ends_with(".tmp") && name.starts_with("snapshot-") {
                // A snapshot a stop interrupted: the files it would replace are all here.
                let _ = std::fs::remove_file(entry.path());
            } else if let Some((number, snapshot)) = file_number(name) {
                if snapshot {
                    snapshots.push(number);
                } else {
                    segments.push(number);
                }
            }
        }
        segments.sort_unstable();
        snapshots.sort_unstable();
        let mut seq = 0;
        let mut first = 0;
        let mut snapshot_bytes = 0;
        if let Some(&number) = snapshots.last() {
            let path = snapshot_path(&dir, number);
            let bytes = read_file(&path)?;
            let encoding;
            (seq, encoding) = read_header(&path, &bytes, FileKind::Snapshot, number)?;
            let mut image = Image::default();
            let (ending, _) = read_frames(&bytes, encoding, 0, |part| image.add(part));
            match ending {
                Ending::Bad(at, why) => return Err(corrupt(&path, at, &why)),
                Ending::Clean(at) if !image.ended => {
                    return Err(corrupt(
                        &path,
                        at,
                        "the snapshot ends before its last frame",
                    ));
                }
                Ending::Clean(_) => {}
            }
            tables.restore(image.image);
            first = number;
            snapshot_bytes = bytes.len() as u64;
            // Left by a stop between a snapshot and the removal of what it replaces.
            remove_older(&dir, number);
        }
        segments.retain(|&n| n >= first);
        if let Some(&lowest) = segments.first()
            && lowest != first
        {
            return Err(StoreError::Unavailable(format!(
                "the journal in {} begins at segment {lowest}, and no snapshot holds what \
                 came before it (move the data directory aside to start empty, or restore \
                 it from a backup)",
                dir.display()
            )));
        }
        let mut since_snapshot = 0;
        let mut open = None;
        for (i, &number) in segments.iter().enumerate() {
            let path = segment_path(&dir, number);
            if number != first + i as u64 {
                return Err(StoreError::Unavailable(format!(
                    "the journal in {} has no segment {} before {}",
                    dir.display(),
                    first + i as u64,
                    path.display()
                )));
            }
            let bytes = read_file(&path)?;
            let (starts, encoding) = read_header(&path, &bytes, FileKind::Segment, number)?;
            if starts != seq {
                return Err(corrupt(
                    &path,
                    16,
                    &format!("it begins at write {starts} where {seq} was next"),
                ));
            }
            let (ending, next) = read_frames(&bytes, encoding, seq, |op: Op| {
                // A write that broke its rules when it was made breaks them again: the
                // tables come back as they were.
                let _ = op.apply(&tables);
                Ok(())
            });
            seq = next;
            let last = i + 1 == segments.len();
            let end = match ending {
                Ending::Clean(end) => end,
                Ending::Bad(at, why) if last => {
                    tracing::warn!(
                        file = %path.display(),
                        at,
                        %why,
                        "the journal's last write was torn by a stop; it was never answered, and is dropped"
                    );
                    at
                }
                Ending::Bad(at, why) => return Err(corrupt(&path, at, &why)),
            };
            since_snapshot += end;
            if last {
                open = Some((number, path, bytes.len() as u64, end, encoding));
            }
        }
        let (file, path, number, end, zeroed) = match open {
            Some((number, path, len, end, encoding)) => {
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&path)
                    .map_err(|e| unavailable("open", &path, &e))?;
                // Whatever follows the last whole frame (a torn write) becomes zeros, so
                // no later start reads it as a frame.
                let tail = len.saturating_sub(end);
                if tail > 0 {
                    zero_fill(&file, end, tail)
                        .and_then(|_| file.sync_data())
                        .map_err(|e| unavailable("write", &path, &e))?;
                }
                if encoding == Encoding::MessagePack {
                    (file, path, number, end, len.max(end))
                } else {
                    // A segment of an earlier version is never appended to: one file
                    // holds frames of one encoding. The writes go on in the next.
                    let (file, path, zeroed) = Log::create(&dir, tuning, number + 1, seq)
                        .map_err(|e| unavailable("create", &segment_path(&dir, number + 1), &e))?;
                    (file, path, number + 1, FILE_HEADER as u64, zeroed)
                }
            }
            None => {
                let (file, path, zeroed) = Log::create(&dir, tuning, first, seq)
                    .map_err(|e| unavailable("create", &segment_path(&dir, first), &e))?;
                (file, path, first, FILE_HEADER as u64, zeroed)
            }
        };
        let log = Log {
            dir: dir.clone(),
            tuning,
            file,
            path,
            number,
            end,
            zeroed,
            seq,
            since_snapshot,
            snapshot_bytes,
            dirty: None,
            compacting: None,
            frame: Vec::new(),
        };
        let shared = Arc::new(Shared {
            tables,
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
        });
        let writer = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("agentyard-journal".into())
                .spawn(move || {
                    // The directory stays locked for as long as anything may write it.
                    let _lock = lock;
                    write_loop(&shared, log);
                })
                .map_err(|e| StoreError::Backend(Box::new(e)))?
        };
        Ok(Self {
            shared,
            writer: Mutex::new(Some(writer)),
            dir,
        })
    }

    /// The directory the journal is in.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stops taking writes, waits for those queued to be written and answered, and
    /// releases the directory.
    pub async fn close(&self) {
        self.shut();
        let writer = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(writer) = writer {
            let _ = tokio::task::spawn_blocking(move || writer.join()).await;
        }
    }

    fn shut(&self) {
        lock_queue(&self.shared).closed = true;
        self.shared.wake.notify_one();
    }

    /// Encodes `op` and queues it, once `check` passes; `answer` (if any) is sent
    /// what applying it returned, once it is on disk and applied.
    fn queue(
        &self,
        op: Op,
        answer: Option<oneshot::Sender<Result<Done, StoreError>>>,
        check: impl FnOnce(&Queue, &InMemoryTaskStore) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let payload = encode_payload(&op).map_err(|e| StoreError::Backend(Box::new(e)))?;
        if payload.len() > MAX_FRAME {
            // Written, it would read back as a corrupt frame and stop the next start.
            return Err(StoreError::Backend(
                format!(
                    "a write of {} bytes is larger than the journal's frame limit ({} MiB)",
                    payload.len(),
                    MAX_FRAME >> 20
                )
                .into(),
            ));
        }
        let crc = crc32fast::hash(&payload);
        let mut queue = lock_queue(&self.shared);
        if queue.closed {
            return Err(StoreError::Unavailable(format!(
                "the journal in {} is closed",
                self.dir.display()
            )));
        }
        check(&queue, &self.shared.tables)?;
        if let Some(id) = op.inserts() {
            queue.inserting.insert(id.clone());
        }
        // One wake-up per sleep: later writes find the writer already woken.
        let wake = std::mem::take(&mut queue.writer_sleeps);
        queue.writes.push(Queued {
            payload,
            crc,
            op,
            answer,
        });
        drop(queue);
        if wake {
            self.shared.wake.notify_one();
        }
        Ok(())
    }

    /// Queues `op` and waits until it is on disk and applied.
    async fn write(&self, op: Op) -> Result<Done, StoreError> {
        let (answer, answered) = oneshot::channel();
        self.queue(op, Some(answer), |_, _| Ok(()))?;
        answered.await.map_err(|_| {
            StoreError::Unavailable(format!(
                "the journal's writer in {} stopped",
                self.dir.display()
            ))
        })?
    }
}

impl Drop for JournalTaskStore {
    fn drop(&mut self) {
        // The writer drains what is queued and exits; nobody waits for it here.
        self.shut();
    }
}

/// An answer of the wrong kind: a bug, said as an error rather than a panic.
fn mismatch(done: &Done) -> StoreError {
    StoreError::Backend(format!("the journal answered a write with {done:?}").into())
}

/// The rules an unanswered write of `id` keeps before it is queued: the task exists
/// (or its insert is queued) and has not ended.
fn live(queue: &Queue, tables: &InMemoryTaskStore, id: &TaskId) -> Result<(), StoreError> {
    if queue.inserting.contains(id) {
        return Ok(());
    }
    match tables.state_of(id) {
        None => Err(StoreError::NotFound(id.clone())),
        Some(state) if state.is_terminal() => Err(StoreError::Terminal {
            task_id: id.clone(),
            state,
        }),
        Some(_) => Ok(()),
    }
}

#[async_trait]
impl TaskStore for JournalTaskStore {
    async fn insert(&self, task: Task) -> Result<(), StoreError> {
        let at = SystemTime::now();
        self.write(Op::Insert {
            task,
            owner: None,
            at,
        })
        .await
        .map(drop)
    }

    async fn insert_owned(&self, task: Task, owner: TaskOwner) -> Result<(), StoreError> {
        let at = SystemTime::now();
        self.write(Op::Insert {
            task,
            owner: Some(owner.into()),
            at,
        })
        .await
        .map(drop)
    }

    async fn insert_owned_unanswered(
        &self,
        task: Task,
        owner: TaskOwner,
    ) -> Result<(), StoreError> {
        let at = SystemTime::now();
        let op = Op::Insert {
            task,
            owner: Some(owner.into()),
            at,
        };
        self.queue(op, None, |_, _| Ok(()))
    }

    async fn owner(&self, id: &TaskId) -> Result<Option<TaskOwner>, StoreError> {
        self.shared.tables.owner(id).await
    }

    async fn context_principal(
        &self,
        context_id: &ContextId,
    ) -> Result<Option<Arc<str>>, StoreError> {
        self.shared.tables.context_principal(context_id).await
    }

    async fn get(
        &self,
        id: &TaskId,
        history_length: Option<usize>,
    ) -> Result<Option<Task>, StoreError> {
        self.shared.tables.get(id, history_length).await
    }

    async fn set_status(&self, id: &TaskId, status: TaskStatus) -> Result<TaskState, StoreError> {
        let at = SystemTime::now();
        match self
            .write(Op::Status {
                id: id.clone(),
                status,
                at,
            })
            .await?
        {
            Done::Previous(previous, _) => Ok(previous),
            other => Err(mismatch(&other)),
        }
    }

    async fn set_status_logged(
        &self,
        id: &TaskId,
        update: TaskStatusUpdateEvent,
    ) -> Result<(TaskState, Option<u64>), StoreError> {
        let at = SystemTime::now();
        match self
            .write(Op::StatusLogged {
                id: id.clone(),
                update,
                at,
            })
            .await?
        {
            Done::Previous(previous, seq) => Ok((previous, seq)),
            other => Err(mismatch(&other)),
        }
    }

    async fn append_history(&self, id: &TaskId, message: Arc<Message>) -> Result<(), StoreError> {
        self.write(Op::History {
            id: id.clone(),
            message,
        })
        .await
        .map(drop)
    }

    async fn append_history_unanswered(
        &self,
        id: &TaskId,
        message: Arc<Message>,
    ) -> Result<(), StoreError> {
        let op = Op::History {
            id: id.clone(),
            message,
        };
        self.queue(op, None, |queue, tables| live(queue, tables, id))
    }

    async fn put_artifact(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
    ) -> Result<Arc<Artifact>, StoreError> {
        match self
            .write(Op::Artifact {
                id: id.clone(),
                artifact,
                append,
                event: None,
            })
            .await?
        {
            Done::Artifact(stored, _) => Ok(stored),
            other => Err(mismatch(&other)),
        }
    }

    async fn put_artifact_logged(
        &self,
        id: &TaskId,
        artifact: Arc<Artifact>,
        append: bool,
        event: &StreamEvent,
    ) -> Result<(Arc<Artifact>, Option<u64>), StoreError> {
        match self
            .write(Op::Artifact {
                id: id.clone(),
                artifact,
                append,
                event: Some(event.clone()),
            })
            .await?
        {
            Done::Artifact(stored, seq) => Ok((stored, seq)),
            other => Err(mismatch(&other)),
        }
    }

    async fn list(
        &self,
        filter: &TaskFilter<'_>,
        page_size: usize,
        before: Option<u64>,
    ) -> Result<TaskPage, StoreError> {
        self.shared.tables.list(filter, page_size, before).await
    }

    async fn context_history(
        &self,
        context_id: &ContextId,
        before: Option<&MessageId>,
        limit: usize,
    ) -> Result<Vec<Arc<Message>>, StoreError> {
        self.shared
            .tables
            .context_history(context_id, before, limit)
            .await
    }

    async fn append_event(
        &self,
        id: &TaskId,
        event: &StreamEvent,
    ) -> Result<Option<u64>, StoreError> {
        match self
            .write(Op::Event {
                id: id.clone(),
                event: event.clone(),
            })
            .await?
        {
            Done::Seq(seq) => Ok(Some(seq)),
            other => Err(mismatch(&other)),
        }
    }

    async fn events_after(
        &self,
        id: &TaskId,
        after: u64,
    ) -> Result<Vec<(u64, StreamEvent)>, StoreError> {
        self.shared.tables.events_after(id, after).await
    }

    async fn remember_key(&self, key: &str, task: &TaskId) -> Result<(), StoreError> {
        let at = SystemTime::now();
        self.write(Op::Key {
            key: key.to_owned(),
            task: task.clone(),
            at,
        })
        .await
        .map(drop)
    }

    async fn recall_key(&self, key: &str, since: SystemTime) -> Result<Option<TaskId>, StoreError> {
        self.shared.tables.recall_key(key, since).await
    }

    async fn forget_key(&self, key: &str) -> Result<(), StoreError> {
        self.write(Op::Unkey {
            key: key.to_owned(),
        })
        .await
        .map(drop)
    }

    async fn put_push_config(&self, config: &TaskPushNotificationConfig) -> Result<(), StoreError> {
        self.write(Op::Push {
            config: config.clone(),
        })
        .await
        .map(drop)
    }

    async fn push_configs(
        &self,
        id: &TaskId,
    ) -> Result<Vec<TaskPushNotificationConfig>, StoreError> {
        self.shared.tables.push_configs(id).await
    }

    async fn delete_push_config(&self, id: &TaskId, config_id: &str) -> Result<bool, StoreError> {
        match self
            .write(Op::Unpush {
                id: id.clone(),
                config: config_id.to_owned(),
            })
            .await?
        {
            Done::Deleted(deleted) => Ok(deleted),
            other => Err(mismatch(&other)),
        }
    }

    async fn tasks_with_push_configs(&self) -> Result<Vec<TaskId>, StoreError> {
        self.shared.tables.tasks_with_push_configs().await
    }

    async fn unfinished(&self) -> Result<Vec<(TaskId, TaskState)>, StoreError> {
        self.shared.tables.unfinished().await
    }

    async fn drop_ended_before(&self, cutoff: SystemTime) -> Result<usize, StoreError> {
        match self.write(Op::DropEnded { cutoff }).await? {
            Done::Dropped(n) => Ok(n),
            other => Err(mismatch(&other)),
        }
    }

    async fn put_record(
        &self,
        namespace: &str,
        key: &str,
        value: &serde_json::Value,
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        match self
            .write(Op::Record {
                namespace: namespace.to_owned(),
                key: key.to_owned(),
                value: value.clone(),
                expected,
            })
            .await?
        {
            Done::Version(version) => Ok(version),
            other => Err(mismatch(&other)),
        }
    }

    async fn get_record(&self, namespace: &str, key: &str) -> Result<Option<Record>, StoreError> {
        self.shared.tables.get_record(namespace, key).await
    }

    async fn list_records(&self, namespace: &str) -> Result<Vec<Record>, StoreError> {
        self.shared.tables.list_records(namespace).await
    }

    async fn delete_record(&self, namespace: &str, key: &str) -> Result<bool, StoreError> {
        match self
            .write(Op::Unrecord {
                namespace: namespace.to_owned(),
                key: key.to_owned(),
            })
            .await?
        {
            Done::Deleted(deleted) => Ok(deleted),
            other => Err(mismatch(&other)),
        }
    }
}
