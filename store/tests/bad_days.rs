//! Bad days: a database that goes away, or a disk that fills up, fails writes with
//! a clear error (nothing is acknowledged that was not stored), and the store
//! recovers by itself when it returns. PostgreSQL is reached through a proxy the
//! test cuts and restores, as a server restart or a network cut would; the embedded
//! store's disk is a small tmpfs the test fills.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agentyard_store::{
    JournalTaskStore, Retention, SqlTaskStore, StoreError, StoreLocation, TaskOwner, TaskStore,
};
use agentyard_transport::a2a::{Task, TaskState, TaskStatus};
use agentyard_transport::{ContextId, TaskId};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// A TCP proxy on a fixed loopback port that can be cut (every connection dropped,
/// nothing listening) and restored.
struct Proxy {
    addr: SocketAddr,
    upstream: String,
    running: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let mut proxy = Self {
            addr,
            upstream,
            running: None,
        };
        proxy.serve(listener);
        proxy
    }

    fn serve(&mut self, listener: TcpListener) {
        let upstream = self.upstream.clone();
        self.running = Some(tokio::spawn(async move {
            let mut connections = JoinSet::new();
            while let Ok((mut client, _)) = listener.accept().await {
                let upstream = upstream.clone();
                connections.spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        }));
    }

    /// Drops every connection and stops listening: the database is gone.
    async fn cut(&mut self) {
        if let Some(running) = self.running.take() {
            running.abort();
            let _ = running.await;
        }
    }

    /// Listens again on the same port.
    async fn restore(&mut self) {
        let listener = TcpListener::bind(self.addr).await.expect("bind again");
        self.serve(listener);
    }
}

fn task(id: &str) -> Task {
    Task::new(
        TaskId::new(id),
        ContextId::new("c"),
        TaskStatus::new(TaskState::Submitted),
    )
}

/// Whether the store holds the task, read as any caller would (a failed read fails
/// the test: reads must keep answering on a bad day).
async fn stored(store: &dyn TaskStore, id: &str) -> bool {
    store
        .get(&TaskId::new(id), None)
        .await
        .expect("reads still answer")
        .is_some()
}

/// Checks that a task whose insert was answered early and then lost is refused as
/// lost (the error says the write was not stored), not as unknown, and is absent.
async fn refused_as_lost(store: &dyn TaskStore, id: &TaskId) {
    let error = store
        .set_status(id, TaskStatus::new(TaskState::Completed))
        .await
        .expect_err("a write of a task that was never stored is refused");
    assert!(
        matches!(&error, StoreError::Unavailable(why) if why.contains("was not stored")),
        "{error:?}"
    );
    assert!(
        !stored(store, id.as_str()).await,
        "the lost task is not there"
    );
}

/// The host:port of a `postgres://user:pass@host:port/db?…` URL, and the URL with
/// another one in its place.
fn through(url: &str, proxy: SocketAddr) -> (String, String) {
    let (head, rest) = url.split_once('@').expect("a URL with a user");
    let (host, tail) = rest.split_at(rest.find('/').expect("a database"));
    (host.to_owned(), format!("{head}@{proxy}{tail}"))
}

/// A PostgreSQL store of a fresh schema, reached through a [`Proxy`]; `None` (skipped)
/// without a server.
async fn proxied_store() -> Option<(Proxy, Arc<dyn TaskStore>)> {
    let url = agentyard_store::testing::postgres_schema("baddays").await?;
    let (upstream, _) = through(&url, "127.0.0.1:1".parse().expect("addr"));
    let proxy = Proxy::start(upstream).await;
    let (_, proxied) = through(&url, proxy.addr);
    let store = SqlTaskStore::open(StoreLocation::Postgres(proxied), Retention::default())
        .await
        .expect("open through the proxy");
    Some((proxy, Arc::new(store)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_going_away_fails_writes_clearly_and_the_store_recovers_by_itself() {
    let Some((mut proxy, store)) = proxied_store().await else {
        return;
    };
    store.insert(task("before")).await.expect("stored");

    proxy.cut().await;
    let err = store
        .insert(task("during"))
        .await
        .expect_err("no database, no acknowledgement");
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("unavailable"), "{message}");

    proxy.restore().await;
    // Recovers by itself: the next writes go through once the pool reconnects.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        match store.insert(task("after")).await {
            Ok(()) => break,
            Err(error) => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "never recovered: {error}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    assert!(
        stored(&*store, "before").await,
        "what was acknowledged is there"
    );
    assert!(!stored(&*store, "during").await, "what was refused is not");
    assert!(stored(&*store, "after").await);
}

/// A write answered before its commit (the queued insert of a waiting send) that the
/// database then loses fails its task's later writes, so the send that waits on them
/// is never told the task is done; other tasks recover with the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_insert_answered_early_fails_its_tasks_later_writes() {
    let Some((mut proxy, store)) = proxied_store().await else {
        return;
    };
    store.insert(task("before")).await.expect("stored");

    proxy.cut().await;
    let id = TaskId::mint();
    let mut lost = task(id.as_str());
    lost.status = TaskStatus::new(TaskState::Working);
    store
        .insert_owned_unanswered(lost, TaskOwner::new("agent", None))
        .await
        .expect("answered once queued");
    let err = store
        .set_status(&id, TaskStatus::new(TaskState::Completed))
        .await
        .expect_err("the insert was lost: its task cannot complete");
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");

    proxy.restore().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while store.insert(task("after")).await.is_err() {
        assert!(tokio::time::Instant::now() < deadline, "never recovered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Still refused once the database is back.
    refused_as_lost(&*store, &id).await;
    assert!(stored(&*store, "before").await);
    assert!(stored(&*store, "after").await);
}

#[tokio::test]
async fn a_database_that_cannot_be_reached_is_named_at_open() {
    // Nothing listens on port 1 of loopback.
    let err = SqlTaskStore::open(
        StoreLocation::Postgres("postgres://u:secret@127.0.0.1:1/db".to_owned()),
        Retention::default(),
    )
    .await
    .expect_err("unreachable");
    let message = err.to_string();
    assert!(message.contains("127.0.0.1:1"), "{message}");
    assert!(
        !message.contains("secret"),
        "the password is never shown: {message}"
    );
}

/// A small tmpfs mounted for one test, unmounted when dropped: a disk that can
/// really fill up. Mounting needs root (CI runs as root); elsewhere the test says it
/// was skipped and why.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(bytes: usize) -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        Ok(Self { dir })
    }

    /// A 4 MiB disk, or `None` (said on stderr, with why) where none can be mounted.
    fn mount_or_skip() -> Option<Self> {
        Self::mount(4 << 20)
            .inspect_err(|why| eprintln!("skipped: cannot mount a small tmpfs to fill ({why})"))
            .ok()
    }

    fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Fills what is left of the disk with a file of its own, and returns its path
    /// (removing it gives the space back).
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write as _;
        let filler = self.path().join("filler");
        let mut file = std::fs::File::create(&filler).expect("filler");
        let block = vec![0u8; 64 << 10];
        while file.write_all(&block).is_ok() {}
        let _ = file.sync_all();
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazy: the store's files may still be open while the test unwinds.
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_writes_clearly_and_the_store_recovers_when_space_returns() {
    let Some(disk) = SmallDisk::mount_or_skip() else {
        return;
    };
    let data = disk.path().join("data");
    let store = SqlTaskStore::open(StoreLocation::Embedded(data), Retention::default())
        .await
        .expect("open on the small disk");
    fill_and_recover(&store, &disk).await;
    store.close().await;
}

/// The same day for the journal store: a write it cannot append is answered with the
/// error and applied nowhere, and the next write after space returns lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_journal_writes_clearly_and_the_journal_recovers_when_space_returns() {
    let Some(disk) = SmallDisk::mount_or_skip() else {
        return;
    };
    let data = disk.path().join("data");
    let store = JournalTaskStore::open(&data, Retention::default())
        .await
        .expect("open on the small disk");
    let refused = fill_and_recover(&store, &disk).await;

    // An insert nobody waits for, refused by the full disk: the task's later writes
    // say so, before and after space returns.
    let filler = disk.fill();
    let mut lost = None;
    for _ in 0..512 {
        let id = TaskId::mint();
        let mut task = task(id.as_str());
        task.status = TaskStatus::new(TaskState::Working);
        task.history = Some(vec![
            agentyard_transport::a2a::Message::user_text("x".repeat(32 << 10)).into(),
        ]);
        store
            .insert_owned_unanswered(task, TaskOwner::new("agent", None))
            .await
            .expect("answered once queued");
        if let Err(error) = store
            .set_status(&id, TaskStatus::new(TaskState::Completed))
            .await
        {
            assert!(matches!(error, StoreError::Unavailable(_)), "{error:?}");
            lost = Some(id);
            break;
        }
    }
    let lost = lost.expect("the full disk refuses a send");
    std::fs::remove_file(&filler).expect("free the space");
    refused_as_lost(&store, &lost).await;
    store.close().await;
    // What was refused is not in the file either: a reopen finds the same.
    let store = JournalTaskStore::open(&data, Retention::default())
        .await
        .expect("reopen");
    assert!(stored(&store, "before").await && stored(&store, "after").await);
    assert!(
        !stored(&store, &refused).await,
        "{refused} was refused, and is not stored"
    );
    store.close().await;
}

/// Fills the disk under `store`, checks that a write is refused clearly and that
/// nothing refused is stored, frees the space and checks that writes work again.
/// Returns the id of the task refused.
async fn fill_and_recover(store: &dyn TaskStore, disk: &SmallDisk) -> String {
    store.insert(task("before")).await.expect("stored");

    // Most of the disk goes to another file, so the store's next writes find it full.
    let filler = disk.fill();
    // Each task carries a large message, so the little space left goes quickly.
    let big = |n: usize| {
        let mut task = task(&format!("full-{n}"));
        task.history = Some(vec![
            agentyard_transport::a2a::Message::user_text("x".repeat(32 << 10)).into(),
        ]);
        task
    };
    let mut refused = None;
    for n in 0..512 {
        if let Err(error) = store.insert(big(n)).await {
            refused = Some((n, error));
            break;
        }
    }
    let (n, error) = refused.expect("a full disk refuses a write");
    assert!(matches!(error, StoreError::Unavailable(_)), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("full"), "names the cause: {message}");
    assert!(
        !stored(store, &format!("full-{n}")).await,
        "what was refused is not stored"
    );
    assert!(
        stored(store, "before").await,
        "what was acknowledged is still there"
    );

    // Space comes back: the store takes writes again by itself, no reopen.
    std::fs::remove_file(&filler).expect("free the space");
    store
        .insert(task("after"))
        .await
        .expect("writes work again");
    assert!(stored(store, "after").await);
    format!("full-{n}")
}
