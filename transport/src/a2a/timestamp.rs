//! [`Timestamp`]: a status's time as text, held inline when short.

use std::borrow::Borrow;
use std::cell::Cell;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `2026-11-28T13:10:00`: the part of a time [`Timestamp::now`] keeps per second.
const PREFIX: usize = 19;

thread_local! {
    /// The second [`Timestamp::now`] last formatted on this thread, and its text.
    static SECOND: Cell<(Option<u64>, [u8; PREFIX])> = const { Cell::new((None, [0; PREFIX])) };
}

/// The longest text kept inline: an RFC 3339 time with nanoseconds and an offset
/// (`2026-11-28T13:10:00.123456789+05:30`) is 35 bytes.
const INLINE: usize = 38;

/// When a status was recorded: ISO 8601 text, kept as written so that whatever a
/// peer sent round-trips unchanged.
///
/// Every send makes three statuses and copies each several times (into the task,
/// its event log and the events it publishes); as a `String` each copy was an
/// allocation and each forgotten task a handful of frees. Text up to 38 bytes,
/// which covers every time this runtime stamps, is held inline and copies without
/// allocating or touching a shared counter; longer text is shared.
#[derive(Clone)]
pub struct Timestamp(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Shared(Arc<str>),
}

impl Timestamp {
    /// The current UTC time in RFC 3339, with nanoseconds.
    #[must_use]
    pub fn now() -> Self {
        Self::at(SystemTime::now())
    }

    /// `at` in RFC 3339, UTC, as [`time`] writes it (`2026-11-28T13:10:00.5Z`: the
    /// fraction without trailing zeros, none for a whole second), for a caller that
    /// has read the clock already (a clock read costs as much as this).
    ///
    /// Three statuses a send, each formatted whole by [`time`], were about 5% of
    /// a send's instructions; the date and time of day change once a second, so each
    /// thread keeps the last second's text and writes only the fraction.
    #[must_use]
    pub fn at(at: SystemTime) -> Self {
        let Ok(since_epoch) = at.duration_since(UNIX_EPOCH) else {
            return Self::formatted(at);
        };
        let second = since_epoch.as_secs();
        let Some(prefix) = SECOND.with(|cached| {
            let (cached_second, prefix) = cached.get();
            if cached_second == Some(second) {
                return Some(prefix);
            }
            let whole = Self::formatted(UNIX_EPOCH + Duration::from_secs(second));
            let prefix: [u8; PREFIX] = whole.as_str().as_bytes().get(..PREFIX)?.try_into().ok()?;
            cached.set((Some(second), prefix));
            Some(prefix)
        }) else {
            return Self::formatted(at);
        };
        let mut bytes = [0u8; INLINE];
        bytes[..PREFIX].copy_from_slice(&prefix);
        let mut len = PREFIX;
        let nanos = since_epoch.subsec_nanos();
        if nanos != 0 {
            bytes[len] = b'.';
            len += 1;
            let mut digits = 9;
            let mut fraction = nanos;
            while fraction % 10 == 0 {
                fraction /= 10;
                digits -= 1;
            }
            for i in (0..digits).rev() {
                // A digit: always < 10.
                bytes[len + i] = b'0' + u8::try_from(fraction % 10).unwrap_or(0);
                fraction /= 10;
            }
            len += digits;
        }
        bytes[len] = b'Z';
        len += 1;
        Self(Repr::Inline {
            len: u8::try_from(len).unwrap_or(0),
            bytes,
        })
    }

    /// `at` formatted whole by [`time`].
    fn formatted(at: SystemTime) -> Self {
        let mut bytes = [0u8; INLINE];
        let mut out = &mut bytes[..];
        let written = time::OffsetDateTime::from(at)
            .format_into(&mut out, &time::format_description::well_known::Rfc3339);
        // What the writer consumed of the buffer: the count `format_into` returns
        // leaves out the zeros it pads a fraction with.
        let len = INLINE - out.len();
        match written {
            Ok(_) => Self(Repr::Inline {
                // At most INLINE (38): the formatter writes into the buffer or fails.
                len: u8::try_from(len).unwrap_or(0),
                bytes,
            }),
            // Only a year past 9999 does not format; such a clock is wrong anyway.
            Err(_) => Self::from("1970-01-01T00:00:00Z"),
        }
    }

    /// The text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, bytes } => {
                // Inline bytes are always a whole `&str` copied in (see `From<&str>`,
                // `now`), so this never fails.
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Repr::Shared(text) => text,
        }
    }
}

impl From<&str> for Timestamp {
    fn from(text: &str) -> Self {
        if text.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            Self(Repr::Inline {
                len: u8::try_from(text.len()).unwrap_or(0),
                bytes,
            })
        } else {
            Self(Repr::Shared(Arc::from(text)))
        }
    }
}

impl From<String> for Timestamp {
    fn from(text: String) -> Self {
        if text.len() <= INLINE {
            Self::from(text.as_str())
        } else {
            Self(Repr::Shared(Arc::from(text)))
        }
    }
}

impl Deref for Timestamp {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Timestamp {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Timestamp {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Timestamp {}

impl PartialEq<str> for Timestamp {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Timestamp {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Hash for Timestamp {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;

        impl serde::de::Visitor<'_> for Text {
            type Value = Timestamp;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an ISO 8601 timestamp string")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Timestamp, E> {
                Ok(Timestamp::from(text))
            }

            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Timestamp, E> {
                Ok(Timestamp::from(text))
            }
        }

        deserializer.deserialize_str(Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_rfc_3339_and_inline() {
        let now = Timestamp::now();
        assert!(matches!(now.0, Repr::Inline { .. }), "{now:?}");
        let parsed = time::OffsetDateTime::parse(
            now.as_str(),
            &time::format_description::well_known::Rfc3339,
        )
        .expect("RFC 3339");
        assert_eq!(parsed.offset(), time::UtcOffset::UTC);
    }

    /// The per-second shortcut writes what [`time`] would, whatever the fraction,
    /// also across a change of second.
    #[test]
    fn now_writes_what_time_writes() {
        let base = UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        for (second, nanos) in [
            (0, 0),
            (0, 1),
            (0, 500_000_000),
            (0, 123_456_789),
            (0, 120_000_000),
            (0, 999_999_999),
            (1, 10),
            (1, 100_000),
            (86_400 * 400, 7),
        ] {
            let at = base + Duration::from_secs(second) + Duration::from_nanos(nanos);
            let expected = time::OffsetDateTime::from(at)
                .format(&time::format_description::well_known::Rfc3339)
                .expect("formats");
            assert_eq!(Timestamp::at(at).as_str(), expected);
            assert_eq!(Timestamp::formatted(at).as_str(), expected);
        }
        let before_epoch = UNIX_EPOCH - Duration::from_millis(1500);
        assert_eq!(
            Timestamp::at(before_epoch).as_str(),
            "1969-12-31T23:59:58.5Z"
        );
    }

    #[test]
    fn text_round_trips_unchanged_short_or_long() {
        let short = "2025-01-02T03:04:05Z";
        let longest_inline = "2025-01-02T03:04:05.123456789+05:30:00";
        assert_eq!(longest_inline.len(), INLINE);
        let shortest_shared = "2025-01-02T03:04:05.123456789+05:30:000";
        assert_eq!(shortest_shared.len(), INLINE + 1);
        let long = "2025-01-02T03:04:05.123456789123456789123456789+05:30";
        for text in [short, longest_inline, shortest_shared, long, ""] {
            let stamp = Timestamp::from(text);
            assert_eq!(stamp.as_str(), text);
            assert_eq!(Timestamp::from(text.to_owned()), stamp);
            let json = serde_json::to_string(&stamp).expect("serializes");
            assert_eq!(json, serde_json::to_string(text).expect("serializes"));
            let back: Timestamp = serde_json::from_str(&json).expect("deserializes");
            assert_eq!(back, stamp);
        }
        assert!(matches!(Timestamp::from(long).0, Repr::Shared(_)));
        assert!(matches!(
            Timestamp::from(shortest_shared).0,
            Repr::Shared(_)
        ));
        assert!(matches!(
            Timestamp::from(shortest_shared.to_owned()).0,
            Repr::Shared(_)
        ));
        assert!(matches!(
            Timestamp::from(longest_inline).0,
            Repr::Inline { .. }
        ));
    }

    #[test]
    fn a_timestamp_that_is_not_a_string_is_refused() {
        let error = serde_json::from_str::<Timestamp>("12").expect_err("refused");
        assert!(error.to_string().contains("ISO 8601"), "{error}");
    }
}
