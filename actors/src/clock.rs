//! Timestamps in the form A2A uses (RFC 3339, UTC).

use std::time::SystemTime;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Formats `at` as RFC 3339 in UTC, e.g. `2026-11-22T03:24:06.123Z`.
pub(crate) fn rfc3339(at: SystemTime) -> String {
    OffsetDateTime::from(at)
        .format(&Rfc3339)
        .unwrap_or_else(|_| String::from("1970-01-01T00:00:00Z"))
}
