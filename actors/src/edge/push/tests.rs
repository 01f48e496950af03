use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use agentyard_policy::AllowAll;
use agentyard_transport::a2a::PushNotificationAuthenticationInfo;

use super::ssrf::{AddressClass, WebhookGuard, classify};
use super::*;
use crate::store::InMemoryTaskStore;
use crate::supervisor::SupervisorConfig;

fn v4(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(a, b, c, d))
}

#[test]
fn addresses_are_classified_for_the_webhook_rules() {
    let cases: [(IpAddr, AddressClass); 22] = [
        (v4(93, 184, 216, 34), AddressClass::Public),
        (v4(8, 8, 8, 8), AddressClass::Public),
        (v4(127, 0, 0, 1), AddressClass::Loopback),
        (v4(127, 8, 9, 10), AddressClass::Loopback),
        (v4(0, 0, 0, 0), AddressClass::Loopback),
        (v4(10, 1, 2, 3), AddressClass::Private),
        (v4(172, 16, 0, 1), AddressClass::Private),
        (v4(172, 31, 255, 255), AddressClass::Private),
        (v4(192, 168, 1, 1), AddressClass::Private),
        (v4(100, 64, 0, 1), AddressClass::Private),
        (v4(169, 254, 10, 10), AddressClass::Private),
        (v4(169, 254, 169, 254), AddressClass::Metadata),
        (v4(224, 0, 0, 1), AddressClass::NotUnicast),
        (v4(255, 255, 255, 255), AddressClass::NotUnicast),
        (IpAddr::V6(Ipv6Addr::LOCALHOST), AddressClass::Loopback),
        (IpAddr::V6(Ipv6Addr::UNSPECIFIED), AddressClass::Loopback),
        ("fe80::1".parse().expect("ip"), AddressClass::Private),
        ("fd12:3456::1".parse().expect("ip"), AddressClass::Private),
        ("fd00:ec2::254".parse().expect("ip"), AddressClass::Metadata),
        (
            "::ffff:127.0.0.1".parse().expect("ip"),
            AddressClass::Loopback,
        ),
        ("64:ff9b::a00:1".parse().expect("ip"), AddressClass::Private),
        ("2606:4700::1111".parse().expect("ip"), AddressClass::Public),
    ];
    for (ip, class) in cases {
        assert_eq!(classify(ip), class, "{ip}");
    }
}

fn guard(config: PushConfig) -> WebhookGuard {
    WebhookGuard::new(&config)
}

fn refusal(guard: &WebhookGuard, url: &str) -> Option<String> {
    guard.parse(url).err().map(|e| e.to_string())
}

#[test]
fn webhook_urls_must_be_http_with_a_host_and_no_credentials() {
    let g = guard(PushConfig::default());
    assert!(refusal(&g, "ftp://example.com/hook").is_some_and(|e| e.contains("scheme")));
    assert!(refusal(&g, "not a url").is_some());
    assert!(
        refusal(&g, "https://user:pw@example.com/hook").is_some_and(|e| e.contains("credentials"))
    );
    assert!(refusal(&g, "https://example.com/hook").is_none());
}

#[test]
fn internal_addresses_are_refused_by_default_and_named() {
    let g = guard(PushConfig::default());
    for url in [
        "http://127.0.0.1:8080/hook",
        "http://[::1]/hook",
        "http://0.0.0.0/hook",
        "http://2130706433/hook",
        "http://10.0.0.8/hook",
        "http://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::ffff:10.0.0.1]/hook",
    ] {
        let error = refusal(&g, url).unwrap_or_else(|| panic!("{url} was allowed"));
        assert!(error.contains("refused"), "{error}");
    }
}

#[test]
fn the_operator_can_allow_loopback_or_private_networks_but_not_metadata() {
    let loopback = guard(PushConfig::default().allow_loopback(true));
    assert!(refusal(&loopback, "http://127.0.0.1:9/hook").is_none());
    assert!(refusal(&loopback, "http://10.0.0.8/hook").is_some());
    let private = guard(PushConfig::default().allow_private_networks(true));
    assert!(refusal(&private, "http://10.0.0.8/hook").is_none());
    assert!(refusal(&private, "http://169.254.169.254/").is_some());
    assert!(refusal(&private, "http://127.0.0.1/").is_some());
    let listed = guard(PushConfig::default().allow_host("169.254.169.254"));
    assert!(refusal(&listed, "http://169.254.169.254/").is_none());
}

#[test]
fn a_host_name_is_not_resolved_when_set() {
    let g = guard(PushConfig::default());
    // Neither resolves to a public address now; both are left to the delivery.
    assert!(g.parse("http://localhost:9/hook").is_ok());
    assert!(g.parse("http://no-such-host.invalid/hook").is_ok());
}

#[test]
fn a_refusal_names_the_key_that_allows_it() {
    let g = guard(PushConfig::default());
    for url in ["http://127.0.0.1/", "http://10.1.2.3/"] {
        let reason = refusal(&g, url).expect("refused");
        assert!(reason.contains("push.allow_private_addresses"), "{reason}");
    }
    // No key allows a metadata address, so none is named.
    let reason = refusal(&g, "http://169.254.169.254/").expect("refused");
    assert!(!reason.contains("allow_private_addresses"), "{reason}");
}

fn webhook(schemes: &[&str], credentials: Option<&str>) -> PushNotificationConfig {
    let mut config = PushNotificationConfig::new("https://example.com/hook");
    config.authentication = Some(PushNotificationAuthenticationInfo {
        schemes: schemes.iter().map(|s| (*s).to_owned()).collect(),
        credentials: credentials.map(str::to_owned),
    });
    config
}

#[test]
fn bearer_and_basic_credentials_become_the_authorization_header() {
    let bearer = authorization(&webhook(&["bearer"], Some("abc"))).expect("supported");
    assert_eq!(
        bearer.as_ref().and_then(|v| v.to_str().ok()),
        Some("Bearer abc")
    );
    let basic = authorization(&webhook(&["Digest", "Basic"], Some("dXNlcjpwdw=="))).expect("ok");
    assert_eq!(
        basic.as_ref().and_then(|v| v.to_str().ok()),
        Some("Basic dXNlcjpwdw==")
    );
    assert!(matches!(
        authorization(&webhook(&["Bearer"], None)),
        Ok(None)
    ));
    assert!(matches!(
        authorization(&webhook(&["Digest"], Some("x"))),
        Err(EdgeError::UnsupportedAuthentication { .. })
    ));
    assert!(authorization(&webhook(&["Bearer"], Some("a\nb"))).is_err());
}

async fn notifier(config: PushConfig) -> (Supervisor, PushNotifier) {
    let supervisor = Supervisor::start(
        SupervisorConfig::default(),
        Vec::new(),
        Arc::new(AllowAll),
        Arc::new(InMemoryTaskStore::new()),
    )
    .await
    .expect("supervisor");
    let push = PushNotifier::start(supervisor.clone(), config).expect("notifier");
    (supervisor, push)
}

fn task_config(task: &str, id: Option<&str>, url: &str) -> TaskPushNotificationConfig {
    let mut webhook = PushNotificationConfig::new(url);
    webhook.id = id.map(str::to_owned);
    TaskPushNotificationConfig {
        task_id: TaskId::new(task),
        push_notification_config: webhook,
    }
}

#[tokio::test]
async fn a_task_keeps_several_webhooks_with_minted_or_given_ids() {
    let (_supervisor, push) = notifier(PushConfig::default().allow_loopback(true)).await;
    let task = TaskId::new("t-1");
    let minted = push
        .set(task_config("t-1", None, "http://127.0.0.1:1/a"), false)
        .await
        .expect("set");
    let minted_id = minted.push_notification_config.id.clone().expect("minted");
    assert!(!minted_id.is_empty());
    push.set(task_config("t-1", Some("b"), "http://127.0.0.1:1/b"), false)
        .await
        .expect("set");
    push.set(
        task_config("t-1", Some("b"), "http://127.0.0.1:1/b2"),
        false,
    )
    .await
    .expect("replace");
    let listed: Vec<String> = push
        .list(&task)
        .into_iter()
        .map(|c| c.push_notification_config.url)
        .collect();
    assert_eq!(listed, ["http://127.0.0.1:1/a", "http://127.0.0.1:1/b2"]);
    assert_eq!(
        push.inner.webhooks.counted.count(),
        1,
        "one task has webhooks"
    );
    let first = push.get(&task, None).expect("first");
    assert_eq!(
        first.push_notification_config.id.as_deref(),
        Some(minted_id.as_str())
    );
    assert_eq!(
        push.get(&task, Some("b"))
            .expect("b")
            .push_notification_config
            .url,
        "http://127.0.0.1:1/b2"
    );
    assert!(matches!(
        push.get(&task, Some("zzz")),
        Err(EdgeError::ConfigNotFound { .. })
    ));
    assert!(push.delete(&task, "b"));
    assert!(!push.delete(&task, "b"));
    assert!(push.delete(&task, &minted_id));
    assert!(push.list(&task).is_empty());
    assert_eq!(
        push.inner.webhooks.counted.count(),
        0,
        "none has: the bus asks no filter"
    );
    push.shutdown().await;
}

#[tokio::test]
async fn a_task_cannot_have_more_webhooks_than_allowed() {
    let mut config = PushConfig::default().allow_loopback(true);
    config.max_configs_per_task = 2;
    let (_supervisor, push) = notifier(config).await;
    for id in ["a", "b"] {
        push.set(task_config("t-1", Some(id), "http://127.0.0.1:1/"), false)
            .await
            .expect("set");
    }
    let error = push
        .set(task_config("t-1", Some("c"), "http://127.0.0.1:1/"), false)
        .await
        .expect_err("over the limit");
    assert!(
        matches!(error, EdgeError::TooManyConfigs { limit: 2, .. }),
        "{error}"
    );
    push.shutdown().await;
}

#[tokio::test]
async fn a_refused_webhook_is_not_stored() {
    let (_supervisor, push) = notifier(PushConfig::default()).await;
    let error = push
        .set(task_config("t-1", None, "http://127.0.0.1:1/"), false)
        .await
        .expect_err("loopback refused");
    assert!(error.to_string().contains("http://127.0.0.1:1/"), "{error}");
    assert!(push.list(&TaskId::new("t-1")).is_empty());
    push.shutdown().await;
}

#[tokio::test]
async fn webhooks_of_ended_tasks_are_forgotten_after_the_retention() {
    let mut config = PushConfig::default().allow_loopback(true);
    config.retention = Duration::ZERO;
    let (_supervisor, push) = notifier(config).await;
    push.set(task_config("ended", None, "http://127.0.0.1:1/"), true)
        .await
        .expect("set");
    push.set(task_config("live", None, "http://127.0.0.1:1/"), false)
        .await
        .expect("set");
    push.inner.sweep();
    assert!(push.list(&TaskId::new("ended")).is_empty());
    assert_eq!(push.list(&TaskId::new("live")).len(), 1);
    assert_eq!(push.inner.webhooks.counted.count(), 1);
    push.shutdown().await;
}

/// What a [`Receiver`] saw of one request: the path, the timestamp of the status in
/// the body (a 0.3 body), the content type, and whether it answered 2xx.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    path: String,
    stamp: String,
    media: String,
    accepted: bool,
}

/// A local webhook server: `/ok` answers 200; `/flaky` answers 503 to its first
/// request and 200 after; `/slow` answers 200 after a second (of tokio time), and
/// counts how many of its requests were open at once.
struct Receiver {
    base: String,
    seen: tokio::sync::mpsc::UnboundedReceiver<Seen>,
    most_open: Arc<std::sync::atomic::AtomicUsize>,
}

impl Receiver {
    async fn start() -> Self {
        use axum::http::{StatusCode, Uri};
        use std::sync::atomic::AtomicUsize;
        let (tx, seen) = tokio::sync::mpsc::unbounded_channel();
        let flaky_calls = Arc::new(AtomicUsize::new(0));
        let open = Arc::new(AtomicUsize::new(0));
        let most_open = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&most_open);
        let app = axum::Router::new().fallback(
            move |uri: Uri, headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let (tx, flaky_calls, open, most_open) = (
                    tx.clone(),
                    Arc::clone(&flaky_calls),
                    Arc::clone(&open),
                    Arc::clone(&counted),
                );
                async move {
                    let path = uri.path().to_owned();
                    let accepted = match path.as_str() {
                        "/flaky" => flaky_calls.fetch_add(1, Ordering::SeqCst) > 0,
                        "/slow" => {
                            let now = open.fetch_add(1, Ordering::SeqCst) + 1;
                            most_open.fetch_max(now, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_secs(1)).await;
                            open.fetch_sub(1, Ordering::SeqCst);
                            true
                        }
                        _ => true,
                    };
                    let task: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                    let stamp = task["status"]["timestamp"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    let media = headers
                        .get(axum::http::header::CONTENT_TYPE)
                        .and_then(|value| value.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    let _ = tx.send(Seen {
                        path,
                        stamp,
                        media,
                        accepted,
                    });
                    if accepted {
                        StatusCode::OK
                    } else {
                        StatusCode::SERVICE_UNAVAILABLE
                    }
                }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            base,
            seen,
            most_open,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base)
    }

    /// The next request, within ten minutes of tokio time.
    async fn next(&mut self) -> Seen {
        tokio::time::timeout(Duration::from_secs(600), self.seen.recv())
            .await
            .expect("a request within the deadline")
            .expect("the receiver is running")
    }
}

/// A loopback URL where nothing listens: every connection is refused.
fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("addr");
    drop(listener);
    format!("http://{address}/dead")
}

/// Slow retries (10 s, then doubling to 60 s: 130 s for five attempts), so that a
/// delivery held up behind a dead webhook shows in the tokio time it took.
fn slow_retries(workers: usize) -> PushConfig {
    let mut config = PushConfig::default().allow_loopback(true).retries(
        5,
        Duration::from_secs(10),
        Duration::from_secs(60),
    );
    config.workers = workers;
    config
}

/// A working status stamped `second` seconds past a fixed minute, so each is told
/// apart in the body.
fn status(second: u32) -> TaskStatus {
    let mut status = TaskStatus::new(agentyard_transport::a2a::TaskState::Working);
    status.timestamp = Some(stamp(second).into());
    status
}

fn stamp(second: u32) -> String {
    format!("2026-01-01T00:00:{second:02}Z")
}

/// Stores a task. Its webhooks are set before, while the store does not know it, so
/// they stay in memory only and the notifier's `restore` (which reads the store's
/// webhooks at start, at some moment of the test) never adds a delivery of its own.
async fn add_task(supervisor: &Supervisor, id: &str) -> TaskId {
    let task_id = TaskId::new(id);
    supervisor
        .core()
        .store
        .insert(Task::new(
            task_id.clone(),
            agentyard_transport::ContextId::new("ctx"),
            status(0),
        ))
        .await
        .expect("stored");
    task_id
}

async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(600);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_dead_webhook_does_not_delay_another_task_sharing_its_worker() {
    let (supervisor, push) = notifier(slow_retries(1)).await;
    let mut receiver = Receiver::start().await;
    push.set(task_config("a", Some("dead"), &dead_url()), false)
        .await
        .expect("set");
    push.set(task_config("b", Some("ok"), &receiver.url("ok")), false)
        .await
        .expect("set");
    let a = add_task(&supervisor, "a").await;
    let b = add_task(&supervisor, "b").await;
    let start = Instant::now();
    push.inner.offer(&a, &status(1), None);
    push.inner.offer(&b, &status(1), None);
    let seen = receiver.next().await;
    assert_eq!(seen.path, "/ok");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "task b waited {:?} behind task a's dead webhook",
        start.elapsed()
    );
    assert_eq!(
        push.stats().failed,
        0,
        "a's dead webhook was still retrying"
    );
    // The dead webhook is still retried to the end, and reported.
    until("the dead webhook to be given up on", || {
        push.stats().failed == 1
    })
    .await;
    let stats = push.stats();
    assert_eq!((stats.delivered, stats.retried), (1, 4), "{stats:?}");
    push.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_dead_webhook_does_not_delay_the_tasks_other_webhook() {
    let (supervisor, push) = notifier(slow_retries(4)).await;
    let mut receiver = Receiver::start().await;
    push.set(task_config("a", Some("dead"), &dead_url()), false)
        .await
        .expect("set");
    push.set(task_config("a", Some("ok"), &receiver.url("ok")), false)
        .await
        .expect("set");
    let a = add_task(&supervisor, "a").await;
    let start = Instant::now();
    push.inner.offer(&a, &status(1), None);
    push.inner.offer(&a, &status(2), None);
    let first = receiver.next().await;
    let second = receiver.next().await;
    assert_eq!(
        [first.stamp, second.stamp],
        [stamp(1), stamp(2)],
        "in order"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the working webhook waited {:?} behind the dead one",
        start.elapsed()
    );
    assert_eq!(push.stats().failed, 0);
    push.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_retried_notification_is_not_overtaken_by_a_later_one() {
    let (supervisor, push) = notifier(slow_retries(4)).await;
    let mut receiver = Receiver::start().await;
    push.set(
        task_config("a", Some("flaky"), &receiver.url("flaky")),
        false,
    )
    .await
    .expect("set");
    let a = add_task(&supervisor, "a").await;
    for second in 1..=3 {
        push.inner.offer(&a, &status(second), None);
    }
    let mut seen = Vec::new();
    for _ in 0..4 {
        let request = receiver.next().await;
        seen.push((request.stamp, request.accepted));
    }
    assert_eq!(
        seen,
        [
            (stamp(1), false),
            (stamp(1), true),
            (stamp(2), true),
            (stamp(3), true)
        ]
    );
    // The webhook answered before the notifier counted it.
    until("three deliveries", || push.stats().delivered == 3).await;
    assert_eq!(push.stats().retried, 1);
    push.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn no_more_webhook_calls_are_open_at_once_than_workers() {
    let (supervisor, push) = notifier(slow_retries(2)).await;
    let mut receiver = Receiver::start().await;
    let mut tasks = Vec::new();
    for n in 0..5 {
        let id = format!("t-{n}");
        push.set(task_config(&id, Some("slow"), &receiver.url("slow")), false)
            .await
            .expect("set");
        tasks.push(add_task(&supervisor, &id).await);
    }
    for task in &tasks {
        push.inner.offer(task, &status(1), None);
    }
    for _ in 0..5 {
        assert!(receiver.next().await.accepted);
    }
    assert_eq!(
        receiver.most_open.load(std::sync::atomic::Ordering::SeqCst),
        2
    );
    until("five deliveries", || push.stats().delivered == 5).await;
    push.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn deliveries_past_the_capacity_are_dropped_and_counted() {
    let mut config = slow_retries(4);
    config.queue_capacity = 2;
    let (supervisor, push) = notifier(config).await;
    push.set(task_config("a", Some("dead"), &dead_url()), false)
        .await
        .expect("set");
    let a = add_task(&supervisor, "a").await;
    // One delivery retrying and one waiting behind it fill the capacity.
    for second in 1..=4 {
        push.inner.offer(&a, &status(second), None);
    }
    assert_eq!(push.stats().dropped, 2);
    until("the dead webhook to be given up on twice", || {
        push.stats().failed == 2
    })
    .await;
    // Room again once they ended.
    push.inner.offer(&a, &status(5), None);
    assert_eq!(push.stats().dropped, 2);
    push.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn shutdown_stops_a_lane_in_its_backoff_and_frees_what_it_held() {
    let (supervisor, push) = notifier(slow_retries(4)).await;
    push.set(task_config("a", Some("dead"), &dead_url()), false)
        .await
        .expect("set");
    let a = add_task(&supervisor, "a").await;
    for second in 1..=3 {
        push.inner.offer(&a, &status(second), None);
    }
    until("a first retry", || push.stats().retried == 1).await;
    let start = Instant::now();
    push.shutdown().await;
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "shutdown waited {:?} for the backoff",
        start.elapsed()
    );
    assert_eq!(push.stats().failed, 0);
    assert!(push.inner.lanes.is_empty());
    assert_eq!(push.inner.held.load(Ordering::SeqCst), 0);
}

/// A notifier started as after a restart, on a supervisor with `store`: task `a` and
/// its webhook `ok` are in the store, as a previous process left them, and so are the
/// tasks named in `also`, without webhooks. Returns the notifier and the first
/// delivery its start made.
async fn restarted(store: Arc<dyn crate::store::TaskStore>, also: &[&str]) -> (PushNotifier, Seen) {
    let supervisor = Supervisor::start(
        SupervisorConfig::default(),
        Vec::new(),
        Arc::new(AllowAll),
        store,
    )
    .await
    .expect("supervisor");
    let mut receiver = Receiver::start().await;
    for id in also {
        add_task(&supervisor, id).await;
    }
    add_task(&supervisor, "a").await;
    supervisor
        .core()
        .store
        .put_push_config(&task_config("a", Some("ok"), &receiver.url("ok")))
        .await
        .expect("stored");
    let push = PushNotifier::start(supervisor, slow_retries(4)).expect("notifier");
    let seen = receiver.next().await;
    (push, seen)
}

#[tokio::test(start_paused = true)]
async fn webhooks_in_the_store_are_notified_of_their_tasks_status_at_start() {
    let (push, seen) = restarted(Arc::new(InMemoryTaskStore::new()), &[]).await;
    assert_eq!((seen.path.as_str(), seen.stamp), ("/ok", stamp(0)));
    assert_eq!(push.list(&TaskId::new("a")).len(), 1);
    push.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_webhook_set_in_a2a_1_0_still_gets_1_0_bodies_after_a_restart() {
    let store = Arc::new(InMemoryTaskStore::new());
    let start = || async {
        Supervisor::start(
            SupervisorConfig::default(),
            Vec::new(),
            Arc::new(AllowAll),
            Arc::clone(&store) as Arc<dyn crate::store::TaskStore>,
        )
        .await
        .expect("supervisor")
    };
    let mut receiver = Receiver::start().await;
    let first = start().await;
    let push = PushNotifier::start(first.clone(), slow_retries(4)).expect("notifier");
    // Its start reads the (empty) store's webhooks first.
    tokio::time::sleep(Duration::from_millis(10)).await;
    add_task(&first, "a").await;
    let set = |id: &'static str, version| {
        let push = push.clone();
        let config = task_config("a", Some(id), &receiver.url(id));
        async move { push.set_for(config, false, version).await.expect("set") }
    };
    set("new", ProtocolVersion::V1_0).await;
    set("old", ProtocolVersion::V0_3).await;
    // Set in 1.0, then again in 0.3: 0.3 from then on.
    set("changed", ProtocolVersion::V1_0).await;
    set("changed", ProtocolVersion::V0_3).await;
    push.shutdown().await;
    first.shutdown(Duration::from_secs(1)).await;

    // Another process on the same store: its start notifies every webhook.
    let second = start().await;
    let push = PushNotifier::start(second.clone(), slow_retries(4)).expect("notifier");
    let mut seen: Vec<(String, String)> = Vec::new();
    for _ in 0..3 {
        let request = receiver.next().await;
        seen.push((request.path, request.media));
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            ("/changed".to_owned(), "application/json".to_owned()),
            ("/new".to_owned(), V1_MEDIA_TYPE.to_owned()),
            ("/old".to_owned(), "application/json".to_owned()),
        ]
    );
    push.shutdown().await;
}

/// The in-memory store, listing one more task with webhooks than it has: a task whose
/// webhooks were deleted between the list and the read of them, as on a store that
/// another process shares.
#[derive(Debug, Default)]
struct ListsAGoneWebhook(InMemoryTaskStore);

agentyard_store::delegate_required! { ListsAGoneWebhook => 0;
    async fn put_push_config(
        &self,
        config: &TaskPushNotificationConfig,
    ) -> Result<(), crate::store::StoreError> {
        self.0.put_push_config(config).await
    }
    async fn push_configs(
        &self,
        id: &TaskId,
    ) -> Result<Vec<TaskPushNotificationConfig>, crate::store::StoreError> {
        self.0.push_configs(id).await
    }
    async fn tasks_with_push_configs(&self) -> Result<Vec<TaskId>, crate::store::StoreError> {
        // Listed first: once the other task's delivery is seen, this one was looked at.
        let mut tasks = vec![TaskId::new("gone")];
        tasks.extend(self.0.tasks_with_push_configs().await?);
        Ok(tasks)
    }
}

#[tokio::test(start_paused = true)]
async fn a_task_whose_webhooks_went_between_list_and_read_is_not_counted_at_start() {
    let (push, seen) = restarted(Arc::new(ListsAGoneWebhook::default()), &["gone"]).await;
    assert_eq!(seen.path, "/ok");
    assert!(
        !push.inner.webhooks.wants(&TaskId::new("gone")),
        "a task with no webhook left is in the status filter"
    );
    assert_eq!(
        push.inner.webhooks.counted.count(),
        1,
        "only the task with a webhook is counted into the bus's interest"
    );
    push.shutdown().await;
}
