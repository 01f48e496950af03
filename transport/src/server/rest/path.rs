//! HTTP+JSON paths: from a request path to the agent, tenant, version and
//! resource it names.
//!
//! The resources are those of the protos' `google.api.http` annotations. Several
//! put a verb after a colon inside a segment (`/tasks/{id}:cancel`), which a
//! router cannot match in one segment, so the path is read here, segment by
//! segment, each segment percent-decoded.

use axum::http::Method;
use serde_json::{Map, Value};

use crate::a2a::v1::{self, ProtocolVersion};

/// A resource of the HTTP+JSON binding, with the ids its path carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::server) enum Resource {
    /// `message:send`.
    Send,
    /// `message:stream`.
    Stream,
    /// `tasks` (1.0 `ListTasks`).
    Tasks,
    /// `tasks/{id}`.
    Task(String),
    /// `tasks/{id}:cancel`.
    Cancel(String),
    /// `tasks/{id}:subscribe`.
    Subscribe(String),
    /// `tasks/{taskId}/pushNotificationConfigs`.
    Configs(String),
    /// `tasks/{taskId}/pushNotificationConfigs/{id}`.
    Config(String, String),
    /// `extendedAgentCard` (1.0), `card` (0.3).
    ExtendedCard,
}

impl Resource {
    /// The HTTP methods the resource takes.
    pub(in crate::server) fn allowed(&self) -> &'static [Method] {
        match self {
            Self::Send | Self::Stream | Self::Cancel(_) => &[Method::POST],
            Self::Tasks | Self::Task(_) | Self::ExtendedCard => &[Method::GET],
            // The proto gives GET, the spec text POST; the SDKs accept both.
            Self::Subscribe(_) | Self::Configs(_) => &[Method::GET, Method::POST],
            Self::Config(..) => &[Method::GET, Method::DELETE],
        }
    }

    /// The A2A method (its 1.0 name) `http` on the resource calls; `None` for a
    /// method the resource does not take.
    pub(in crate::server) fn method(&self, http: &Method) -> Option<&'static str> {
        use v1::method as m;
        Some(match (self, http) {
            (Self::Send, &Method::POST) => m::SEND_MESSAGE,
            (Self::Stream, &Method::POST) => m::SEND_STREAMING_MESSAGE,
            (Self::Tasks, &Method::GET) => m::LIST_TASKS,
            (Self::Task(_), &Method::GET) => m::GET_TASK,
            (Self::Cancel(_), &Method::POST) => m::CANCEL_TASK,
            (Self::Subscribe(_), &Method::GET | &Method::POST) => m::SUBSCRIBE_TO_TASK,
            (Self::Configs(_), &Method::POST) => m::CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
            (Self::Configs(_), &Method::GET) => m::LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
            (Self::Config(..), &Method::GET) => m::GET_TASK_PUSH_NOTIFICATION_CONFIG,
            (Self::Config(..), &Method::DELETE) => m::DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
            (Self::ExtendedCard, &Method::GET) => m::GET_EXTENDED_AGENT_CARD,
            _ => return None,
        })
    }

    /// Puts the ids of the path into the params, under their 1.0 names (a task's
    /// `id`; a config's `taskId` and `id`), over any the body or query gave.
    pub(in crate::server) fn path_params(&self, params: &mut Map<String, Value>) {
        let mut set = |key: &str, value: &str| {
            params.insert(key.to_owned(), Value::String(value.to_owned()));
        };
        match self {
            Self::Task(id) | Self::Cancel(id) | Self::Subscribe(id) => set("id", id),
            Self::Configs(task) => set("taskId", task),
            Self::Config(task, id) => {
                set("taskId", task);
                set("id", id);
            }
            Self::Send | Self::Stream | Self::Tasks | Self::ExtendedCard => {}
        }
    }
}

/// Where an HTTP+JSON request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::server) struct Target {
    /// The agent of `/agents/{name}/…`; `None` at the root (the default agent).
    pub(in crate::server) agent: Option<String>,
    /// The `{tenant}` of `/{tenant}/…` (1.0 only).
    pub(in crate::server) tenant: Option<String>,
    /// 0.3 under `/v1/…`, 1.0 otherwise.
    pub(in crate::server) version: ProtocolVersion,
    /// The resource.
    pub(in crate::server) resource: Resource,
}

/// Reads a request path: `[/agents/{name}][/{tenant}]/<1.0 resource>` or
/// `[/agents/{name}]/v1/<0.3 resource>`. `None` for a path that names no resource
/// (or has an empty or undecodable segment).
///
/// A first segment that is not a resource's is the tenant, except `v1`, which
/// starts the 0.3 paths: a tenant cannot be called `v1` (nor `message:send`,
/// `tasks`, ...).
pub(in crate::server) fn parse(path: &str) -> Option<Target> {
    let segments = path
        .strip_prefix('/')?
        .split('/')
        .map(|segment| decode(segment).map(std::borrow::Cow::into_owned))
        .collect::<Option<Vec<String>>>()?;
    let mut rest = segments.as_slice();
    let mut agent = None;
    if let [first, name, more @ ..] = rest
        && first == "agents"
    {
        agent = Some(name.clone());
        rest = more;
    }
    let (version, tenant, rest) = match rest {
        [first, more @ ..] if first == "v1" => (ProtocolVersion::V0_3, None, more),
        [first, more @ ..] if !starts_resource(first) => {
            (ProtocolVersion::V1_0, Some(first.clone()), more)
        }
        _ => (ProtocolVersion::V1_0, None, rest),
    };
    let resource = resource(version, rest)?;
    Some(Target {
        agent,
        tenant,
        version,
        resource,
    })
}

/// Whether a segment starts a 1.0 resource's path.
fn starts_resource(segment: &str) -> bool {
    matches!(
        segment,
        "message:send" | "message:stream" | "tasks" | "extendedAgentCard"
    )
}

/// The resource the segments after the base URL (and tenant, or `v1`) name.
fn resource(version: ProtocolVersion, segments: &[String]) -> Option<Resource> {
    let strs: Vec<&str> = segments.iter().map(String::as_str).collect();
    Some(match (version, strs.as_slice()) {
        (_, ["message:send"]) => Resource::Send,
        (_, ["message:stream"]) => Resource::Stream,
        (ProtocolVersion::V1_0, ["tasks"]) => Resource::Tasks,
        (ProtocolVersion::V1_0, ["extendedAgentCard"]) | (ProtocolVersion::V0_3, ["card"]) => {
            Resource::ExtendedCard
        }
        (_, ["tasks", task]) => match task.rsplit_once(':') {
            Some(("", "cancel" | "subscribe")) => return None,
            Some((id, "cancel")) => Resource::Cancel(id.to_owned()),
            Some((id, "subscribe")) => Resource::Subscribe(id.to_owned()),
            _ => Resource::Task((*task).to_owned()),
        },
        // The 0.3 proto's create annotation reads `task/*/pushNotificationConfigs`
        // (singular), the SDKs serve `tasks/…`: both are taken.
        (_, ["tasks", task, "pushNotificationConfigs"]) => Resource::Configs((*task).to_owned()),
        (ProtocolVersion::V0_3, ["task", task, "pushNotificationConfigs"]) => {
            Resource::Configs((*task).to_owned())
        }
        (_, ["tasks", task, "pushNotificationConfigs", id]) => {
            Resource::Config((*task).to_owned(), (*id).to_owned())
        }
        _ => return None,
    })
}

/// A path segment percent-decoded (borrowed when it has no escapes); `None` when
/// empty or not UTF-8 once decoded. The JSON-RPC routes read their agent's name with
/// it too.
pub(in crate::server) fn decode(segment: &str) -> Option<std::borrow::Cow<'_, str>> {
    if segment.is_empty() {
        return None;
    }
    percent_encoding::percent_decode_str(segment)
        .decode_utf8()
        .ok()
}
