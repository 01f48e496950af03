//! The accept loop and the life of each connection: how long a client may take to
//! send a request head, how long a keep-alive connection may sit idle, and how many
//! connections may be open at once.
//!
//! hyper's own `header_read_timeout` is not used: its timer starts whenever the
//! connection waits for a request head, idle keep-alive time included, so it cannot
//! tell a slow head from an idle connection. Each connection here has a watchdog that
//! knows which of the three a connection is in:
//!
//! - **new** (accepted, no request yet): closed after `header_read_timeout`, so a
//!   client that connects and sends nothing holds the connection no longer than one
//!   that sends half a head;
//! - **idle** (kept alive after a response): closed after `idle_timeout`;
//! - **reading a head** (bytes of a request arrived, the request has not reached the
//!   router): closed after `header_read_timeout`, counted from the first byte;
//! - **busy** (a request is being answered, an SSE stream included): no connection
//!   timeout; the request timeout bounds the call, and a stream lives while its
//!   service stream does. A busy connection that has accepted no bytes for
//!   `idle_timeout` while the server has something to write (a client that stopped
//!   reading, keep-alive comments included) is closed, which drops its stream.

use std::cell::RefCell;
use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::header::{CONNECTION, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{Served, ServerConfig, ShutdownSignal};

#[cfg(test)]
mod tests;

/// How many connections over the cap may be held at once just to be told 503. Past
/// that, the loop stops accepting until a connection closes, and new clients wait in
/// the listen backlog: an overload never turns into an accept-error loop.
const OVERFLOW_SLOTS: usize = 64;

/// The longest pause after an accept error (the process out of file descriptors,
/// say), so the loop neither spins nor stays deaf for long.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// The connection limits of [`ServerConfig`], copied out for the accept loop.
#[derive(Clone, Copy, Debug)]
struct Limits {
    header_read_timeout: Duration,
    idle_timeout: Duration,
}

/// The longest limit a connection is given: a century. An instant that far ahead is
/// still one the clock can hold, where one `Duration::MAX` ahead is not (adding it
/// panics), and a limit that long never ends a connection anyway.
const LONGEST_LIMIT: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

impl Limits {
    /// The two limits, each at most [`LONGEST_LIMIT`].
    fn new(header_read_timeout: Duration, idle_timeout: Duration) -> Self {
        Self {
            header_read_timeout: header_read_timeout.min(LONGEST_LIMIT),
            idle_timeout: idle_timeout.min(LONGEST_LIMIT),
        }
    }
}

/// Accepts connections on `listener` and serves each with `app` until `stop` is
/// cancelled, then shuts every connection down gracefully and returns when all have
/// closed.
pub(super) async fn accept_loop<A>(
    listener: TcpListener,
    app: A,
    config: &ServerConfig,
    stop: CancellationToken,
) -> io::Result<()>
where
    A: Served,
{
    let limits = Limits::new(config.header_read_timeout(), config.idle_timeout());
    let capacity = within_fd_limit(config.max_connections().max(1));
    let open = Arc::new(Semaphore::new(capacity));
    let overflow = Arc::new(Semaphore::new(OVERFLOW_SLOTS));
    let mut backoff = Duration::ZERO;
    loop {
        // At the cap with every overflow slot taken: stop accepting until a
        // connection closes.
        let waiting = if open.available_permits() == 0 && overflow.available_permits() == 0 {
            tracing::debug!(
                max_connections = capacity,
                "connection limit reached; new connections wait"
            );
            let permit = tokio::select! {
                () = stop.cancelled() => break,
                permit = Arc::clone(&open).acquire_owned() => permit,
            };
            permit.ok()
        } else {
            None
        };
        let (tcp, peer) = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => {
                    backoff = Duration::ZERO;
                    accepted
                }
                Err(error) if is_connection_error(&error) => continue,
                Err(error) => {
                    backoff = (backoff * 2).clamp(Duration::from_millis(10), MAX_ACCEPT_BACKOFF);
                    tracing::warn!(%error, pause = ?backoff, "accept failed; pausing");
                    tokio::select! {
                        () = stop.cancelled() => break,
                        () = tokio::time::sleep(backoff) => continue,
                    }
                }
            },
        };
        super::set_nodelay(&tcp);
        let permit = waiting.or_else(|| Arc::clone(&open).try_acquire_owned().ok());
        match permit {
            Some(permit) => {
                tokio::spawn(serve_connection(
                    tcp,
                    app.clone(),
                    limits,
                    stop.clone(),
                    permit,
                ));
            }
            None => match Arc::clone(&overflow).try_acquire_owned() {
                Ok(slot) => {
                    tracing::debug!(%peer, "over the connection limit: 503");
                    tokio::spawn(refuse_connection(tcp, limits, stop.clone(), slot));
                }
                // Not reached: only this loop takes slots, and it waited above when
                // none was free; closing is the safe answer all the same.
                Err(_) => drop(tcp),
            },
        }
    }
    drop(listener);
    // Every connection holds a permit until it closes: when all are back, all closed.
    let all = u32::try_from(capacity).unwrap_or(u32::MAX);
    let _closed = open.acquire_many(all).await;
    let _refused = overflow
        .acquire_many(u32::try_from(OVERFLOW_SLOTS).unwrap_or(u32::MAX))
        .await;
    Ok(())
}

/// File descriptors kept free of connections, for the task store, webhooks, logs and
/// the over-the-cap 503s.
const FD_RESERVE: usize = 128 + OVERFLOW_SLOTS;

/// The connection cap, lowered to what the process's open-file limit allows: past
/// it, `accept` fails with "Too many open files" for everyone, which is what the cap
/// is there to prevent.
pub(super) fn within_fd_limit(max_connections: usize) -> usize {
    let Some(limit) = open_file_limit() else {
        return max_connections;
    };
    let allowed = limit.saturating_sub(FD_RESERVE).max(1);
    if max_connections > allowed {
        // Info, not a warning: with the common soft limit of 1,024 the default cap is
        // lowered on every start, and that is the cap doing its job.
        tracing::info!(
            max_connections,
            open_file_limit = limit,
            lowered_to = allowed,
            "connection cap lowered to fit the open-file limit (ulimit -n)"
        );
        return allowed;
    }
    max_connections
}

/// The soft limit on open files, where the system tells it without `unsafe`
/// (Linux's `/proc/self/limits`).
pub(super) fn open_file_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.trim_start_matches("Max open files")
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Errors of one connection that failed before it was accepted; the listener is
/// fine and the next accept goes ahead at once.
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Serves one connection with `app`, under its watchdog.
async fn serve_connection<A>(
    tcp: TcpStream,
    app: A,
    limits: Limits,
    stop: CancellationToken,
    _permit: OwnedSemaphorePermit,
) where
    A: Served,
{
    let activity = Arc::new(Activity::new(limits));
    // One service a connection, called in place (borrowed for the call alone, which
    // returns a future that owns what it needs, so no borrow is ever held twice). A
    // clone a request raised and lowered every layer's shared reference counts, which
    // every connection's requests share across the cores; one is taken only for a
    // service not ready at once, which the A2A routes and a router always are.
    let app = RefCell::new(app);
    let service = {
        let activity = Arc::clone(&activity);
        hyper::service::service_fn(move |request: Request<Incoming>| {
            let guard = activity.begin_request();
            let answer = super::call_in_place(&mut *app.borrow_mut(), request.map(Body::new));
            async move {
                let response = answer.await?;
                // The request counts as in flight until its body is dropped: written
                // to the end, or the client gone. An SSE stream is in flight for as
                // long as it runs.
                Ok::<_, Infallible>(response.map(|body| AnswerBody {
                    body,
                    _in_flight: guard,
                }))
            }
        })
    };
    let io = TokioIo::new(Watched {
        io: tcp,
        activity: Arc::clone(&activity),
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .keep_alive(true)
        .serve_connection(io, service);
    // The handlers find the shutdown signal here rather than in each request's
    // extensions, where it cost an allocation a request: they run in this task.
    let signal = ShutdownSignal(stop.clone());
    SHUTDOWN
        .scope(signal, watch(connection, &activity, stop))
        .await;
}

tokio::task_local! {
    /// The shutdown signal of the connection being served (see
    /// [`ShutdownSignal::current`]).
    static SHUTDOWN: ShutdownSignal;
}

impl ShutdownSignal {
    /// The signal of the server whose connection the running task serves; `None`
    /// outside [`serve`](super::serve) (a router called directly, in a test).
    pub(super) fn current() -> Option<Self> {
        SHUTDOWN.try_with(Clone::clone).ok()
    }
}

pin_project_lite::pin_project! {
    /// An answer's body, with what keeps its request in flight until it is dropped.
    /// Handed to hyper as it is (boxed into a `Body` again it would cost an
    /// allocation a request), and telling hyper its size, from which hyper writes
    /// `Content-Length`.
    struct AnswerBody {
        #[pin]
        body: Body,
        _in_flight: InFlight,
    }
}

impl hyper::body::Body for AnswerBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        self.project().body.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// Answers a connection over the cap with 503 and closes it.
async fn refuse_connection(
    tcp: TcpStream,
    limits: Limits,
    stop: CancellationToken,
    _slot: OwnedSemaphorePermit,
) {
    // A refused client gets no keep-alive time: idle is as short as a head may take.
    let limits = Limits {
        idle_timeout: limits.header_read_timeout,
        ..limits
    };
    let activity = Arc::new(Activity::new(limits));
    let service = {
        let activity = Arc::clone(&activity);
        hyper::service::service_fn(move |_request: Request<Incoming>| {
            let guard = activity.begin_request();
            async move {
                drop(guard);
                Ok::<_, Infallible>(over_capacity())
            }
        })
    };
    let io = TokioIo::new(Watched {
        io: tcp,
        activity: Arc::clone(&activity),
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .keep_alive(false)
        .serve_connection(io, service);
    watch(connection, &activity, stop).await;
}

/// The 503 for a connection over the cap, with a JSON-RPC error body.
fn over_capacity() -> Response<Body> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32603,
            "message": "Service Unavailable: the server has as many open connections as it \
                        allows (`max_connections`); retry shortly",
        },
    });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(RETRY_AFTER, HeaderValue::from_static("1"));
    headers.insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

/// What a hyper connection offers the watchdog, whatever its service.
trait Graceful: Future<Output = hyper::Result<()>> {
    fn shut_down(self: Pin<&mut Self>);
}

impl<I, S> Graceful for hyper::server::conn::http1::Connection<I, S>
where
    hyper::server::conn::http1::Connection<I, S>: Future<Output = hyper::Result<()>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    S: hyper::service::HttpService<Incoming>,
    S::ResBody: 'static,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn shut_down(self: Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

/// Drives a connection to its end, closing it when the client overstays a limit, and
/// shutting it down gracefully when `stop` is cancelled.
///
/// One timer, set at most [`Activity::period`] ahead: every deadline a later event
/// starts (a head's first byte, the end of a request, a stalled write) is that event's
/// time plus a limit at least as long, so it falls at or after the time the timer is
/// already set for, and the watchdog learns of it when the timer fires and it looks
/// again. Requests on a kept-alive connection thus make no timer and no wake-up of
/// the watchdog; only a deadline that would come before the timer (limits shorter
/// than [`MIN_PERIOD`]) wakes it early.
async fn watch<C: Graceful>(connection: C, activity: &Activity, stop: CancellationToken) {
    let mut connection = std::pin::pin!(connection);
    let mut stopping = false;
    let timer = tokio::time::sleep_until(activity.arm(Instant::now()));
    let mut timer = std::pin::pin!(timer);
    loop {
        let stopped = async {
            if stopping {
                std::future::pending().await
            } else {
                stop.cancelled().await;
            }
        };
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended with an error");
                }
                return;
            }
            () = activity.sooner.notified() => {
                timer.as_mut().reset(activity.arm(Instant::now()));
            }
            () = stopped => {
                stopping = true;
                connection.as_mut().shut_down();
            }
            () = timer.as_mut() => {
                let now = Instant::now();
                if let Some((at, phase)) = activity.deadline()
                    && at <= now
                {
                    tracing::debug!(phase, "closing a connection that overstayed its limit");
                    return;
                }
                timer.as_mut().reset(activity.arm(now));
            }
        }
    }
}

/// The shortest time the watchdog's timer is set ahead while no deadline is nearer,
/// so that limits of zero (closing at once) do not make it spin while a request runs.
const MIN_PERIOD: Duration = Duration::from_millis(10);

/// Where a connection stands, as its watchdog sees it.
#[derive(Debug)]
struct Phase {
    /// Requests being answered (their response bodies not yet dropped).
    in_flight: usize,
    /// Since when the connection has had nothing in flight.
    idle_since: Instant,
    /// Since the first byte of a request head, while it is being read.
    head_since: Option<Instant>,
    /// Whether a request has reached the service: until then the connection is new,
    /// and its first head is due within the header-read timeout of the accept.
    served: bool,
    /// Since when a write has been waiting for the client to read.
    write_blocked_since: Option<Instant>,
    /// When the watchdog's timer fires next ([`Activity::arm`]).
    wakes_at: Option<Instant>,
}

impl Phase {
    /// See [`Activity::deadline`].
    fn deadline(&self, limits: Limits) -> Option<(Instant, &'static str)> {
        if let Some(since) = self.write_blocked_since {
            return Some((since + limits.idle_timeout, "write stalled"));
        }
        if self.in_flight > 0 {
            return None;
        }
        match self.head_since {
            Some(since) => Some((since + limits.header_read_timeout, "request head")),
            None if !self.served => Some((
                self.idle_since + limits.header_read_timeout,
                "no first request",
            )),
            None => Some((self.idle_since + limits.idle_timeout, "idle")),
        }
    }
}

/// A connection's phase, shared by its I/O, its service and its watchdog.
#[derive(Debug)]
struct Activity {
    limits: Limits,
    phase: Mutex<Phase>,
    /// Wakes the watchdog when a deadline comes before its timer.
    sooner: Notify,
}

impl Activity {
    fn new(limits: Limits) -> Self {
        Self {
            limits,
            phase: Mutex::new(Phase {
                in_flight: 0,
                idle_since: Instant::now(),
                head_since: None,
                served: false,
                write_blocked_since: None,
                wakes_at: None,
            }),
            sooner: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How far ahead the watchdog sets its timer when no deadline is nearer: the
    /// shorter limit, so that no deadline an event starts can come before the timer.
    fn period(&self) -> Duration {
        self.limits
            .header_read_timeout
            .min(self.limits.idle_timeout)
            .max(MIN_PERIOD)
    }

    /// Sets when the watchdog looks next, from `now`: the connection's deadline, or one
    /// period ahead if that is sooner (or there is none).
    fn arm(&self, now: Instant) -> Instant {
        let ahead = now + self.period();
        let mut phase = self.lock();
        let at = phase
            .deadline(self.limits)
            .map_or(ahead, |(at, _)| at.min(ahead));
        phase.wakes_at = Some(at);
        at
    }

    /// Wakes the watchdog if `phase`'s deadline, which an event just started, comes
    /// before its timer.
    fn began(&self, phase: std::sync::MutexGuard<'_, Phase>) {
        let sooner = match (phase.deadline(self.limits), phase.wakes_at) {
            (Some((at, _)), Some(armed)) => at < armed,
            (Some(_), None) => true,
            (None, _) => false,
        };
        drop(phase);
        if sooner {
            self.sooner.notify_one();
        }
    }

    /// A request reached the service; it is in flight until the guard drops.
    fn begin_request(self: &Arc<Self>) -> InFlight {
        let mut phase = self.lock();
        phase.in_flight += 1;
        phase.head_since = None;
        phase.served = true;
        drop(phase);
        InFlight(Arc::clone(self))
    }

    /// Bytes arrived: on an idle connection, a request head has begun.
    fn read(&self) {
        let mut phase = self.lock();
        if phase.in_flight == 0 && phase.head_since.is_none() {
            phase.head_since = Some(Instant::now());
            self.began(phase);
        }
    }

    /// A write went out (`true`) or had to wait for the client (`false`).
    fn wrote(&self, progressed: bool) {
        let mut phase = self.lock();
        if progressed {
            phase.write_blocked_since = None;
        } else if phase.write_blocked_since.is_none() {
            phase.write_blocked_since = Some(Instant::now());
            self.began(phase);
        }
    }

    /// When the connection must be closed if nothing changes, and which limit that
    /// is; `None` while a request is in flight and its writes go out.
    fn deadline(&self) -> Option<(Instant, &'static str)> {
        self.lock().deadline(self.limits)
    }
}

/// One request in flight on a connection.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut phase = self.0.lock();
        phase.in_flight = phase.in_flight.saturating_sub(1);
        if phase.in_flight == 0 {
            phase.idle_since = Instant::now();
            phase.head_since = None;
            self.0.began(phase);
        }
    }
}

/// A TCP stream that reports reads and stalled writes to its connection's activity.
struct Watched {
    io: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        self.activity.wrote(polled.is_ready());
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.activity.wrote(polled.is_ready());
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
