//! The protocol version a request asks for, from its `A2A-Version` header.

use std::fmt;

/// The header (or query parameter) naming the protocol version of a request.
pub const VERSION_HEADER: &str = "A2A-Version";

/// A protocol version agentyard speaks. Only major.minor counts.
///
/// ```
/// use agentyard_transport::a2a::v1::ProtocolVersion;
///
/// assert_eq!(ProtocolVersion::from_header(None), Ok(ProtocolVersion::V0_3));
/// assert_eq!(ProtocolVersion::from_header(Some("1.0.1")), Ok(ProtocolVersion::V1_0));
/// let error = ProtocolVersion::from_header(Some("99.0")).unwrap_err();
/// assert_eq!(error.requested(), "99.0");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// A2A 0.3 (`kind` tags, `message/send`, ...).
    V0_3,
    /// A2A 1.0 (ProtoJSON, `SendMessage`, ...).
    V1_0,
}

impl ProtocolVersion {
    /// Every version served, newest first (the order of a card's interfaces).
    pub const ALL: [Self; 2] = [Self::V1_0, Self::V0_3];

    /// Major.minor, as a card's `protocolVersion` and the header carry it.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V0_3 => "0.3",
            Self::V1_0 => "1.0",
        }
    }

    /// The version an `A2A-Version` header value (or query parameter) asks
    /// for. Missing, empty or blank means 0.3 (spec §3.6.1: clients of 0.3
    /// send nothing). A patch number is ignored (`1.0.1` is 1.0), as are
    /// surrounding spaces.
    ///
    /// # Errors
    ///
    /// Any other value, carrying it as sent (for -32009).
    pub fn from_header(value: Option<&str>) -> Result<Self, UnsupportedVersion> {
        let Some(raw) = value else {
            return Ok(Self::V0_3);
        };
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Ok(Self::V0_3);
        }
        let mut pieces = trimmed.splitn(3, '.');
        let major = pieces.next().and_then(number);
        let minor = pieces.next().and_then(number);
        let patch_ok = pieces.next().is_none_or(|patch| number(patch).is_some());
        match (major, minor, patch_ok) {
            (Some(0), Some(3), true) => Ok(Self::V0_3),
            (Some(1), Some(0), true) => Ok(Self::V1_0),
            _ => Err(UnsupportedVersion(raw.to_owned())),
        }
    }
}

/// A version component: ASCII digits only (no sign, no spaces).
fn number(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An `A2A-Version` value naming no version agentyard speaks; answered with
/// -32009 VersionNotSupported
/// ([`version_not_supported`](super::version_not_supported)).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("protocol version \"{0}\" is not supported (supported: 1.0, 0.3)")]
pub struct UnsupportedVersion(String);

impl UnsupportedVersion {
    /// The value as the client sent it.
    #[must_use]
    pub fn requested(&self) -> &str {
        &self.0
    }
}
