//! Bounds on what the client reads from a server: a whole answer, the start of an
//! error's body, and each event of a stream. A remote agent is another party's
//! server; without them an answer that never ends (or one SSE event that never
//! does) would grow this process's memory until it ran out.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::stream::Stream;

use super::ClientError;

/// The most bytes one answer, or one event of a stream, may hold unless
/// [`ClientOptions::response_limit`](super::ClientOptions::response_limit) says
/// otherwise: 16 MiB, room for a task with inline files well past the 1 MiB a server
/// takes in a request by default.
pub const DEFAULT_RESPONSE_LIMIT: usize = 16 * 1024 * 1024;

/// How much of an error answer's body is read for its message: the rest is not
/// needed, and the server may not end it.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// The whole body of `response`, or [`ClientError::TooLarge`] as soon as it is
/// known to hold more than `limit` bytes (from `Content-Length`, or while reading).
pub(super) async fn read(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Bytes, ClientError> {
    let too_large = |response: &reqwest::Response| ClientError::TooLarge {
        url: response.url().to_string(),
        limit,
    };
    let declared = response.content_length().unwrap_or(0);
    if usize::try_from(declared).map_or(true, |declared| declared > limit) {
        return Err(too_large(&response));
    }
    // Most answers come in one chunk: that one is returned as it is, uncopied.
    let Some(first) = response.chunk().await? else {
        return Ok(Bytes::new());
    };
    if first.len() > limit {
        return Err(too_large(&response));
    }
    let Some(second) = response.chunk().await? else {
        return Ok(first);
    };
    let mut body = Vec::with_capacity(
        usize::try_from(declared)
            .unwrap_or(0)
            .max(first.len() + second.len()),
    );
    let mut next = Some(second);
    body.extend_from_slice(&first);
    while let Some(chunk) = next {
        if body.len() + chunk.len() > limit {
            return Err(too_large(&response));
        }
        body.extend_from_slice(&chunk);
        next = response.chunk().await?;
    }
    Ok(Bytes::from(body))
}

/// The start of an error answer's body, for its message: at most [`ERROR_BODY_LIMIT`]
/// bytes, and what arrived before a broken connection.
pub(super) async fn error_body(mut response: reqwest::Response) -> Bytes {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_LIMIT {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = ERROR_BODY_LIMIT - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    Bytes::from(body)
}

/// An error of a stream whose events are bounded: its own, or an event past the
/// limit.
#[derive(Debug)]
pub(super) enum Limited<E> {
    /// The stream's own error.
    Inner(E),
    /// An event held more than this many bytes.
    Over(usize),
}

impl<E: std::fmt::Display> std::fmt::Display for Limited<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Inner(error) => error.fmt(f),
            Self::Over(limit) => write!(f, "an event larger than {limit} bytes"),
        }
    }
}

/// `bytes`, an SSE body, ending with [`Limited::Over`] once one event (the bytes from
/// the end of the one before it to the blank line that ends it) holds more than
/// `limit` bytes: the SSE parser keeps an event whole until it ends.
pub(super) fn events<S, B, E>(bytes: S, limit: usize) -> LimitedEvents<S>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    LimitedEvents {
        inner: bytes,
        limit,
        event: EventBytes::default(),
        over: false,
    }
}

/// See [`events`].
pub(super) struct LimitedEvents<S> {
    inner: S,
    limit: usize,
    event: EventBytes,
    over: bool,
}

impl<S, B, E> Stream for LimitedEvents<S>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
{
    type Item = Result<B, Limited<E>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.over {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                if self.event.feed(chunk.as_ref()) > self.limit {
                    self.over = true;
                    return Poll::Ready(Some(Err(Limited::Over(self.limit))));
                }
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(Limited::Inner(error)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Where an SSE body stands between events: how many bytes the event under way holds
/// so far, and what its current line is. Lines end with CRLF, LF or CR; a blank line
/// ends an event.
#[derive(Debug, Default)]
struct EventBytes {
    /// Bytes of the event under way, line ends included.
    event: usize,
    /// Bytes of the line under way.
    line: usize,
    /// Whether the last byte ended a line with CR (so an LF next is that line's).
    after_cr: bool,
}

impl EventBytes {
    /// Takes in the next chunk; the most bytes any event reached in it.
    fn feed(&mut self, chunk: &[u8]) -> usize {
        let mut most = 0;
        let mut from = 0;
        for at in memchr::memchr2_iter(b'\n', b'\r', chunk) {
            let text = at - from;
            self.line += text;
            self.event += text + 1;
            if chunk[at] == b'\n' && self.after_cr && self.line == 0 {
                // The LF of a CRLF: the line ended at the CR.
                self.after_cr = false;
            } else {
                if self.line == 0 {
                    // A blank line: the event ends here.
                    most = most.max(self.event);
                    self.event = 0;
                }
                self.line = 0;
                self.after_cr = chunk[at] == b'\r';
            }
            from = at + 1;
        }
        let rest = chunk.len() - from;
        if rest > 0 {
            self.line += rest;
            self.event += rest;
            self.after_cr = false;
        }
        most.max(self.event)
    }
}

#[cfg(test)]
mod tests {
    use super::EventBytes;

    /// The size of each event `body` holds when fed in chunks of `size`, as `feed`
    /// reports the largest.
    fn largest(body: &str, size: usize) -> usize {
        let mut event = EventBytes::default();
        body.as_bytes()
            .chunks(size)
            .map(|chunk| event.feed(chunk))
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn an_event_ends_at_a_blank_line_whatever_the_line_ends() {
        for body in [
            "data: a\n\ndata: b\n\n",
            "data: a\r\n\r\ndata: b\r\n\r\n",
            "data: a\r\rdata: b\r\r",
            "data: a\r\n\ndata: b\n\r\n",
        ] {
            for size in 1..=body.len() {
                // "data: a" and its line ends: were the blank line missed, the two
                // events would count as one.
                let most = largest(body, size);
                assert!(
                    (9..=11).contains(&most),
                    "{body:?} in chunks of {size}: {most}"
                );
            }
        }
    }

    #[test]
    fn lines_without_a_blank_one_are_one_event() {
        let body = "data: a\ndata: b\ndata: c\n";
        assert_eq!(largest(body, 3), body.len());
        let body = "data: a\r\ndata: b\r\n: keep-alive\r\n";
        assert_eq!(largest(body, 5), body.len());
    }

    #[test]
    fn an_event_without_line_ends_grows_with_every_chunk() {
        let mut event = EventBytes::default();
        assert_eq!(event.feed(b"data: "), 6);
        assert_eq!(event.feed(b"xxxx"), 10);
        assert_eq!(event.feed(b"\n\n"), 12);
        assert_eq!(event.feed(b"data"), 4, "the next event starts from nothing");
    }
}
