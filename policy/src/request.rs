//! What a policy is asked about: one send, described by the caller.

use std::fmt;
use std::hash::{Hash, Hasher};

/// The channel a send came in through.
///
/// Every entry point goes through the same supervisor and the same policy (the seed's
/// "correctness by construction"): the entry point is only one more field that rules
/// may match on, never a way around them.
///
/// Entry points are defined in code (a new channel is new code), so a new one is an
/// [`Other`](EntryPoint::Other) with a `&'static str` name: that keeps the type `Copy`
/// and free of allocation. Equality and hashing go by [`as_str`](EntryPoint::as_str),
/// so `EntryPoint::Other("http")` is the same entry point as `EntryPoint::Http`.
///
/// ```
/// use agentyard_policy::EntryPoint;
///
/// assert_eq!(EntryPoint::Http.to_string(), "http");
/// assert_eq!(EntryPoint::other("discord_dm_relay").as_str(), "discord_dm_relay");
/// assert_eq!(EntryPoint::other("workflow"), EntryPoint::Workflow);
/// ```
#[derive(Debug, Clone, Copy)]
pub enum EntryPoint {
    /// The in-process API of the runtime (a program calling `send`).
    Api,
    /// An agent sending to another agent (a delegation).
    Agent,
    /// The HTTP edge (A2A JSON-RPC).
    Http,
    /// The workflow (DAG) runner.
    Workflow,
    /// Any other channel, named in lower case (e.g. `"discord_dm_relay"`).
    Other(&'static str),
}

impl EntryPoint {
    /// The entry point with this name: one of the built-in variants when the name is
    /// `"api"`, `"agent"`, `"http"` or `"workflow"`, otherwise [`EntryPoint::Other`].
    #[must_use]
    pub fn other(name: &'static str) -> Self {
        match name {
            "api" => Self::Api,
            "agent" => Self::Agent,
            "http" => Self::Http,
            "workflow" => Self::Workflow,
            _ => Self::Other(name),
        }
    }

    /// The name used in events, rules and configuration.
    #[must_use]
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::Api => "api",
            Self::Agent => "agent",
            Self::Http => "http",
            Self::Workflow => "workflow",
            Self::Other(name) => name,
        }
    }
}

impl PartialEq for EntryPoint {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for EntryPoint {}

impl Hash for EntryPoint {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Display for EntryPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Serialized as its name, e.g. `"http"`, for events.
impl serde::Serialize for EntryPoint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// One send, as the supervisor describes it to the policy.
///
/// It borrows from the caller's message, so building one costs nothing on the hot path.
///
/// ```
/// use agentyard_policy::{EntryPoint, SendRequest};
///
/// let req = SendRequest::new("worker", EntryPoint::Agent)
///     .from("planner")
///     .payload_type("task_delegation")
///     .hops(1);
/// assert_eq!(req.from, Some("planner"));
/// assert_eq!(
///     req.to_string(),
///     "send from `planner` to `worker` via agent with payload task_delegation",
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SendRequest<'a> {
    /// Who sends: an agent name or an external principal; `None` for an anonymous
    /// external caller.
    pub from: Option<&'a str>,
    /// The target agent type.
    pub to: &'a str,
    /// The channel the send came in through.
    pub entry_point: EntryPoint,
    /// The typed handoff payload type (e.g. `"task_delegation"`); `None` for free text.
    pub payload_type: Option<&'a str>,
    /// How many delegations deep this send is: 0 for a send from outside (API, HTTP,
    /// workflow), and one more than the send being handled for a send an agent makes
    /// while handling it.
    pub hops: u32,
}

impl<'a> SendRequest<'a> {
    /// An anonymous free-text send to `to`, zero hops deep.
    #[must_use]
    pub const fn new(to: &'a str, entry_point: EntryPoint) -> Self {
        Self {
            from: None,
            to,
            entry_point,
            payload_type: None,
            hops: 0,
        }
    }

    /// Sets the sender (an agent name or an external principal).
    #[must_use]
    pub const fn from(mut self, sender: &'a str) -> Self {
        self.from = Some(sender);
        self
    }

    /// Sets the typed handoff payload type.
    #[must_use]
    pub const fn payload_type(mut self, payload_type: &'a str) -> Self {
        self.payload_type = Some(payload_type);
        self
    }

    /// Sets how many delegations deep this send is.
    #[must_use]
    pub const fn hops(mut self, hops: u32) -> Self {
        self.hops = hops;
        self
    }
}

/// A short description for rejection reasons: "send from `a` to `b` via http".
impl fmt::Display for SendRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.from {
            Some(sender) => write!(f, "send from `{sender}`")?,
            None => f.write_str("anonymous send")?,
        }
        write!(f, " to `{}` via {}", self.to, self.entry_point)?;
        if let Some(payload_type) = self.payload_type {
            write!(f, " with payload {payload_type}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_entry_points_display_their_wire_names() {
        let names: Vec<String> = [
            EntryPoint::Api,
            EntryPoint::Agent,
            EntryPoint::Http,
            EntryPoint::Workflow,
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(names, ["api", "agent", "http", "workflow"]);
    }

    #[test]
    fn other_with_a_built_in_name_equals_the_built_in_variant() {
        assert_eq!(EntryPoint::Other("http"), EntryPoint::Http);
        assert!(matches!(EntryPoint::other("http"), EntryPoint::Http));
        assert_ne!(EntryPoint::other("discord"), EntryPoint::Http);
    }

    #[test]
    fn entry_point_serializes_as_its_name() {
        let json = serde_json::to_string(&EntryPoint::other("discord_dm_relay"))
            .expect("a string always serializes");
        assert_eq!(json, "\"discord_dm_relay\"");
    }

    #[test]
    fn anonymous_free_text_send_describes_itself() {
        let req = SendRequest::new("billing", EntryPoint::Http);
        assert_eq!(req.to_string(), "anonymous send to `billing` via http");
    }

    #[test]
    fn typed_send_names_its_payload_type() {
        let req = SendRequest::new("b", EntryPoint::Agent)
            .from("a")
            .payload_type("question");
        assert_eq!(
            req.to_string(),
            "send from `a` to `b` via agent with payload question"
        );
    }
}
