//! The W3C `traceparent` a remote call carries.

use std::fmt;

/// The header (and request metadata key) the trace context travels in.
pub const TRACEPARENT: &str = "traceparent";

/// A W3C trace context (version 00): the trace a call belongs to and the span that
/// makes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Traceparent {
    /// 32 lowercase hex digits, not all zero.
    pub trace_id: String,
    /// 16 lowercase hex digits, not all zero: the caller's span.
    pub parent_id: String,
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
}

impl Traceparent {
    /// Reads a `traceparent` value; `None` when it is not a valid version-00 one.
    #[must_use]
    pub fn parse(value: &str) -> Option<Self> {
        let mut fields = value.trim().split('-');
        let (version, trace_id, parent_id, flags) = (
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
        );
        let hex = |text: &str, len: usize| {
            text.len() == len
                && text
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                && text.bytes().any(|b| b != b'0')
        };
        if version != "00" || fields.next().is_some() || !hex(trace_id, 32) || !hex(parent_id, 16) {
            return None;
        }
        let flags = u8::from_str_radix(flags, 16)
            .ok()
            .filter(|_| flags.len() == 2)?;
        Some(Self {
            trace_id: trace_id.to_owned(),
            parent_id: parent_id.to_owned(),
            flags,
        })
    }

    /// The context of a call made on behalf of `incoming` (a `traceparent` value):
    /// the same trace with a new span, or a new sampled trace when there is no
    /// valid incoming one.
    #[must_use]
    pub fn continuing(incoming: Option<&str>) -> Self {
        let span = format!("{:016x}", uuid::Uuid::new_v4().as_u64_pair().0 | 1);
        match incoming.and_then(Self::parse) {
            Some(parent) => Self {
                trace_id: parent.trace_id,
                parent_id: span,
                flags: parent.flags,
            },
            None => Self {
                trace_id: uuid::Uuid::new_v4().simple().to_string(),
                parent_id: span,
                flags: 1,
            },
        }
    }
}

impl fmt::Display for Traceparent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "00-{}-{}-{:02x}",
            self.trace_id, self.parent_id, self.flags
        )
    }
}
