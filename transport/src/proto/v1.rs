//! A2A 1.0 over gRPC (package `lf.a2a.v1`): the generated messages, service and
//! client ([`pb`]), and their conversions.
//!
//! Every generated message converts to and from its counterpart in the 1.0 serde
//! model ([`crate::a2a::v1`]) field by field (`TryFrom` both ways: `bytes` and
//! timestamps can be malformed), and that model converts to and from the internal
//! one, so the lossy cases are the ones tabled in [`crate::a2a::v1`]. The functions
//! at the bottom go the whole way:
//!
//! - [`request`]: a [`pb`] request message (as [`Request`]) → its tenant and the
//!   [`A2aRequest`] the service answers; [`to_request`] is the way back (client).
//! - [`result`]: an [`A2aResult`] → the RPC's response message ([`Response`]);
//!   [`from_response`] is the way back.
//! - [`stream_response`] / [`from_stream_response`]: a [`StreamEvent`] and the
//!   `StreamResponse` message.
//!
//! The agent card is the one message converted through JSON (ProtoJSON, with the
//! pbjson impls generated for this package): it is large, rare, and the 1.0 serde
//! card already is its ProtoJSON form.

use super::{
    ConversionError, decode_bytes, encode_bytes, from_struct_opt, from_timestamp_opt, from_value,
    missing, to_struct_opt, to_timestamp_opt, to_value,
};
use crate::a2a::{self, StreamEvent, v1 as m};
use crate::jsonrpc::A2aRequest;
use crate::service::A2aResult;

/// The code generated from `transport/proto/lf/a2a/v1/a2a.proto`: the messages,
/// `a2a_service_server` (the tonic service trait and server) and
/// `a2a_service_client`, and ProtoJSON serde impls for every message.
#[allow(
    missing_docs,
    unreachable_pub,
    clippy::all,
    clippy::pedantic,
    rust_2018_idioms,
    reason = "generated code"
)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.rs"));
    include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.serde.rs"));
}

/// The fully qualified name of the 1.0 service, as gRPC routes it.
pub const SERVICE_NAME: &str = "lf.a2a.v1.A2AService";

fn role_from(number: i32) -> Result<m::Role, ConversionError> {
    [m::Role::Unspecified, m::Role::User, m::Role::Agent]
        .into_iter()
        .find(|role| role.number() == number)
        .ok_or_else(|| ConversionError::new("Message.role", format!("{number} is not a Role")))
}

fn state_from(field: &'static str, number: i32) -> Result<m::TaskState, ConversionError> {
    use m::TaskState as S;
    [
        S::Unspecified,
        S::Submitted,
        S::Working,
        S::Completed,
        S::Failed,
        S::Canceled,
        S::InputRequired,
        S::Rejected,
        S::AuthRequired,
    ]
    .into_iter()
    .find(|state| state.number() == number)
    .ok_or_else(|| ConversionError::new(field, format!("{number} is not a TaskState")))
}

fn try_vec<T, U, E>(items: Vec<T>, convert: impl Fn(T) -> Result<U, E>) -> Result<Vec<U>, E> {
    items.into_iter().map(convert).collect()
}

// ---------------------------------------------------------------- parts, messages

impl TryFrom<m::Part> for pb::Part {
    type Error = ConversionError;

    fn try_from(part: m::Part) -> Result<Self, ConversionError> {
        use pb::part::Content;
        let content = match part.content {
            m::PartContent::Text(text) => Content::Text(text),
            m::PartContent::Raw(base64) => Content::Raw(decode_bytes("Part.raw", &base64)?),
            m::PartContent::Url(url) => Content::Url(url),
            m::PartContent::Data(value) => Content::Data(to_value(value)),
        };
        Ok(Self {
            content: Some(content),
            metadata: to_struct_opt(part.metadata),
            filename: part.filename,
            media_type: part.media_type,
        })
    }
}

impl TryFrom<pb::Part> for m::Part {
    type Error = ConversionError;

    fn try_from(part: pb::Part) -> Result<Self, ConversionError> {
        use pb::part::Content;
        let content = match part.content {
            Some(Content::Text(text)) => m::PartContent::Text(text),
            Some(Content::Raw(bytes)) => m::PartContent::Raw(encode_bytes(&bytes)),
            Some(Content::Url(url)) => m::PartContent::Url(url),
            Some(Content::Data(value)) => m::PartContent::Data(from_value(value)),
            None => {
                return Err(ConversionError::new(
                    "Part.content",
                    "none of text, raw, url, data is set",
                ));
            }
        };
        Ok(Self {
            content,
            metadata: from_struct_opt(part.metadata),
            filename: part.filename,
            media_type: part.media_type,
        })
    }
}

impl TryFrom<m::Message> for pb::Message {
    type Error = ConversionError;

    fn try_from(message: m::Message) -> Result<Self, ConversionError> {
        Ok(Self {
            message_id: message.message_id.into_string(),
            context_id: message
                .context_id
                .map(|id| id.into_string())
                .unwrap_or_default(),
            task_id: message
                .task_id
                .map(|id| id.into_string())
                .unwrap_or_default(),
            role: message.role.number(),
            parts: try_vec(message.parts, pb::Part::try_from)?,
            metadata: to_struct_opt(message.metadata),
            extensions: message.extensions,
            reference_task_ids: message
                .reference_task_ids
                .into_iter()
                .map(|id| id.into_string())
                .collect(),
        })
    }
}

impl TryFrom<pb::Message> for m::Message {
    type Error = ConversionError;

    fn try_from(message: pb::Message) -> Result<Self, ConversionError> {
        if message.message_id.is_empty() {
            return Err(missing("Message.message_id"));
        }
        Ok(Self {
            message_id: message.message_id.into(),
            context_id: super::some_string(message.context_id).map(Into::into),
            task_id: super::some_string(message.task_id).map(Into::into),
            role: role_from(message.role)?,
            parts: try_vec(message.parts, m::Part::try_from)?,
            metadata: from_struct_opt(message.metadata),
            extensions: message.extensions,
            reference_task_ids: message
                .reference_task_ids
                .into_iter()
                .map(Into::into)
                .collect(),
        })
    }
}

// ---------------------------------------------------------------- tasks, events

impl TryFrom<m::TaskStatus> for pb::TaskStatus {
    type Error = ConversionError;

    fn try_from(status: m::TaskStatus) -> Result<Self, ConversionError> {
        Ok(Self {
            state: status.state.number(),
            message: status.message.map(pb::Message::try_from).transpose()?,
            timestamp: to_timestamp_opt("TaskStatus.timestamp", status.timestamp.as_deref())?,
        })
    }
}

impl TryFrom<pb::TaskStatus> for m::TaskStatus {
    type Error = ConversionError;

    fn try_from(status: pb::TaskStatus) -> Result<Self, ConversionError> {
        Ok(Self {
            state: state_from("TaskStatus.state", status.state)?,
            message: status.message.map(m::Message::try_from).transpose()?,
            timestamp: from_timestamp_opt("TaskStatus.timestamp", status.timestamp.as_ref())?
                .map(a2a::Timestamp::from),
        })
    }
}

impl TryFrom<m::Artifact> for pb::Artifact {
    type Error = ConversionError;

    fn try_from(artifact: m::Artifact) -> Result<Self, ConversionError> {
        Ok(Self {
            artifact_id: artifact.artifact_id,
            name: artifact.name,
            description: artifact.description,
            parts: try_vec(artifact.parts, pb::Part::try_from)?,
            metadata: to_struct_opt(artifact.metadata),
            extensions: artifact.extensions,
        })
    }
}

impl TryFrom<pb::Artifact> for m::Artifact {
    type Error = ConversionError;

    fn try_from(artifact: pb::Artifact) -> Result<Self, ConversionError> {
        Ok(Self {
            artifact_id: artifact.artifact_id,
            name: artifact.name,
            description: artifact.description,
            parts: try_vec(artifact.parts, m::Part::try_from)?,
            metadata: from_struct_opt(artifact.metadata),
            extensions: artifact.extensions,
        })
    }
}

impl TryFrom<m::Task> for pb::Task {
    type Error = ConversionError;

    fn try_from(task: m::Task) -> Result<Self, ConversionError> {
        Ok(Self {
            id: task.id.into_string(),
            context_id: task
                .context_id
                .map(|id| id.into_string())
                .unwrap_or_default(),
            status: Some(task.status.try_into()?),
            artifacts: try_vec(task.artifacts, pb::Artifact::try_from)?,
            history: try_vec(task.history, pb::Message::try_from)?,
            metadata: to_struct_opt(task.metadata),
        })
    }
}

impl TryFrom<pb::Task> for m::Task {
    type Error = ConversionError;

    fn try_from(task: pb::Task) -> Result<Self, ConversionError> {
        Ok(Self {
            id: task.id.into(),
            context_id: super::some_string(task.context_id).map(Into::into),
            status: task
                .status
                .ok_or_else(|| missing("Task.status"))?
                .try_into()?,
            artifacts: try_vec(task.artifacts, m::Artifact::try_from)?,
            history: try_vec(task.history, m::Message::try_from)?,
            metadata: from_struct_opt(task.metadata),
        })
    }
}

impl TryFrom<m::TaskStatusUpdateEvent> for pb::TaskStatusUpdateEvent {
    type Error = ConversionError;

    fn try_from(event: m::TaskStatusUpdateEvent) -> Result<Self, ConversionError> {
        Ok(Self {
            task_id: event.task_id.into_string(),
            context_id: event.context_id.into_string(),
            status: Some(event.status.try_into()?),
            metadata: to_struct_opt(event.metadata),
        })
    }
}

impl TryFrom<pb::TaskStatusUpdateEvent> for m::TaskStatusUpdateEvent {
    type Error = ConversionError;

    fn try_from(event: pb::TaskStatusUpdateEvent) -> Result<Self, ConversionError> {
        Ok(Self {
            task_id: event.task_id.into(),
            context_id: event.context_id.into(),
            status: event
                .status
                .ok_or_else(|| missing("TaskStatusUpdateEvent.status"))?
                .try_into()?,
            metadata: from_struct_opt(event.metadata),
        })
    }
}

impl TryFrom<m::TaskArtifactUpdateEvent> for pb::TaskArtifactUpdateEvent {
    type Error = ConversionError;

    fn try_from(event: m::TaskArtifactUpdateEvent) -> Result<Self, ConversionError> {
        Ok(Self {
            task_id: event.task_id.into_string(),
            context_id: event.context_id.into_string(),
            artifact: Some(event.artifact.try_into()?),
            append: event.append,
            last_chunk: event.last_chunk,
            metadata: to_struct_opt(event.metadata),
        })
    }
}

impl TryFrom<pb::TaskArtifactUpdateEvent> for m::TaskArtifactUpdateEvent {
    type Error = ConversionError;

    fn try_from(event: pb::TaskArtifactUpdateEvent) -> Result<Self, ConversionError> {
        Ok(Self {
            task_id: event.task_id.into(),
            context_id: event.context_id.into(),
            artifact: event
                .artifact
                .ok_or_else(|| missing("TaskArtifactUpdateEvent.artifact"))?
                .try_into()?,
            append: event.append,
            last_chunk: event.last_chunk,
            metadata: from_struct_opt(event.metadata),
        })
    }
}

// ---------------------------------------------------------------- push configs

impl From<m::TaskPushNotificationConfig> for pb::TaskPushNotificationConfig {
    fn from(config: m::TaskPushNotificationConfig) -> Self {
        Self {
            tenant: config.tenant,
            id: config.id,
            task_id: config.task_id,
            url: config.url,
            token: config.token,
            authentication: config.authentication.map(|auth| pb::AuthenticationInfo {
                scheme: auth.scheme,
                credentials: auth.credentials,
            }),
        }
    }
}

impl From<pb::TaskPushNotificationConfig> for m::TaskPushNotificationConfig {
    fn from(config: pb::TaskPushNotificationConfig) -> Self {
        Self {
            tenant: config.tenant,
            id: config.id,
            task_id: config.task_id,
            url: config.url,
            token: config.token,
            authentication: config.authentication.map(|auth| m::AuthenticationInfo {
                scheme: auth.scheme,
                credentials: auth.credentials,
            }),
        }
    }
}

// ---------------------------------------------------------------- requests

impl TryFrom<m::SendMessageRequest> for pb::SendMessageRequest {
    type Error = ConversionError;

    fn try_from(request: m::SendMessageRequest) -> Result<Self, ConversionError> {
        Ok(Self {
            tenant: request.tenant,
            message: Some(request.message.try_into()?),
            configuration: request
                .configuration
                .map(|config| pb::SendMessageConfiguration {
                    accepted_output_modes: config.accepted_output_modes,
                    task_push_notification_config: config
                        .task_push_notification_config
                        .map(Into::into),
                    history_length: config.history_length,
                    return_immediately: config.return_immediately,
                }),
            metadata: to_struct_opt(request.metadata),
        })
    }
}

impl TryFrom<pb::SendMessageRequest> for m::SendMessageRequest {
    type Error = ConversionError;

    fn try_from(request: pb::SendMessageRequest) -> Result<Self, ConversionError> {
        Ok(Self {
            tenant: request.tenant,
            message: request
                .message
                .ok_or_else(|| missing("SendMessageRequest.message"))?
                .try_into()?,
            configuration: request
                .configuration
                .map(|config| m::SendMessageConfiguration {
                    accepted_output_modes: config.accepted_output_modes,
                    task_push_notification_config: config
                        .task_push_notification_config
                        .map(Into::into),
                    history_length: config.history_length,
                    return_immediately: config.return_immediately,
                }),
            metadata: from_struct_opt(request.metadata),
        })
    }
}

impl TryFrom<m::ListTasksRequest> for pb::ListTasksRequest {
    type Error = ConversionError;

    fn try_from(request: m::ListTasksRequest) -> Result<Self, ConversionError> {
        Ok(Self {
            tenant: request.tenant,
            context_id: request.context_id,
            status: request.status.map_or(0, m::TaskState::number),
            page_size: request.page_size,
            page_token: request.page_token,
            history_length: request.history_length,
            status_timestamp_after: to_timestamp_opt(
                "ListTasksRequest.status_timestamp_after",
                request.status_timestamp_after.as_deref(),
            )?,
            include_artifacts: request.include_artifacts,
        })
    }
}

impl TryFrom<pb::ListTasksRequest> for m::ListTasksRequest {
    type Error = ConversionError;

    fn try_from(request: pb::ListTasksRequest) -> Result<Self, ConversionError> {
        // `status` unset (0, UNSPECIFIED) means no filter, as in the JSON form.
        let status = match request.status {
            0 => None,
            number => Some(state_from("ListTasksRequest.status", number)?),
        };
        Ok(Self {
            tenant: request.tenant,
            context_id: request.context_id,
            status,
            page_size: request.page_size,
            page_token: request.page_token,
            history_length: request.history_length,
            status_timestamp_after: from_timestamp_opt(
                "ListTasksRequest.status_timestamp_after",
                request.status_timestamp_after.as_ref(),
            )?,
            include_artifacts: request.include_artifacts,
        })
    }
}

/// One request message of the 1.0 service, as the server receives it (and the
/// client sends it): the RPC is the variant.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Request {
    /// `SendMessage`.
    SendMessage(pb::SendMessageRequest),
    /// `SendStreamingMessage`.
    SendStreamingMessage(pb::SendMessageRequest),
    /// `GetTask`.
    GetTask(pb::GetTaskRequest),
    /// `ListTasks`.
    ListTasks(pb::ListTasksRequest),
    /// `CancelTask`.
    CancelTask(pb::CancelTaskRequest),
    /// `SubscribeToTask`.
    SubscribeToTask(pb::SubscribeToTaskRequest),
    /// `CreateTaskPushNotificationConfig`.
    CreateTaskPushNotificationConfig(pb::TaskPushNotificationConfig),
    /// `GetTaskPushNotificationConfig`.
    GetTaskPushNotificationConfig(pb::GetTaskPushNotificationConfigRequest),
    /// `ListTaskPushNotificationConfigs`.
    ListTaskPushNotificationConfigs(pb::ListTaskPushNotificationConfigsRequest),
    /// `DeleteTaskPushNotificationConfig`.
    DeleteTaskPushNotificationConfig(pb::DeleteTaskPushNotificationConfigRequest),
    /// `GetExtendedAgentCard`.
    GetExtendedAgentCard(pb::GetExtendedAgentCardRequest),
}

impl Request {
    /// The request's `tenant`: the exposed agent it is addressed to (empty: the
    /// server's default agent).
    #[must_use]
    pub fn tenant(&self) -> &str {
        match self {
            Self::SendMessage(r) | Self::SendStreamingMessage(r) => &r.tenant,
            Self::GetTask(r) => &r.tenant,
            Self::ListTasks(r) => &r.tenant,
            Self::CancelTask(r) => &r.tenant,
            Self::SubscribeToTask(r) => &r.tenant,
            Self::CreateTaskPushNotificationConfig(r) => &r.tenant,
            Self::GetTaskPushNotificationConfig(r) => &r.tenant,
            Self::ListTaskPushNotificationConfigs(r) => &r.tenant,
            Self::DeleteTaskPushNotificationConfig(r) => &r.tenant,
            Self::GetExtendedAgentCard(r) => &r.tenant,
        }
    }

    /// Sets the request's `tenant` (the client, from the interface it calls).
    pub fn set_tenant(&mut self, tenant: String) {
        match self {
            Self::SendMessage(r) | Self::SendStreamingMessage(r) => r.tenant = tenant,
            Self::GetTask(r) => r.tenant = tenant,
            Self::ListTasks(r) => r.tenant = tenant,
            Self::CancelTask(r) => r.tenant = tenant,
            Self::SubscribeToTask(r) => r.tenant = tenant,
            Self::CreateTaskPushNotificationConfig(r) => r.tenant = tenant,
            Self::GetTaskPushNotificationConfig(r) => r.tenant = tenant,
            Self::ListTaskPushNotificationConfigs(r) => r.tenant = tenant,
            Self::DeleteTaskPushNotificationConfig(r) => r.tenant = tenant,
            Self::GetExtendedAgentCard(r) => r.tenant = tenant,
        }
    }
}

/// A 1.0 request message as the internal request the service answers (`tenant`
/// is not part of it: read it first with [`Request::tenant`]).
///
/// # Errors
/// A [`ConversionError`] naming the field that has no internal form (a missing
/// message, an unknown enum number, a negative history length, a malformed
/// timestamp, ...).
pub fn request(request: Request) -> Result<A2aRequest, ConversionError> {
    let model = match request {
        Request::SendMessage(r) => m::Request::SendMessage(r.try_into()?),
        Request::SendStreamingMessage(r) => m::Request::SendStreamingMessage(r.try_into()?),
        Request::GetTask(r) => m::Request::GetTask(m::GetTaskRequest {
            tenant: r.tenant,
            id: r.id.into(),
            history_length: r.history_length,
        }),
        Request::ListTasks(r) => m::Request::ListTasks(r.try_into()?),
        Request::CancelTask(r) => m::Request::CancelTask(m::CancelTaskRequest {
            tenant: r.tenant,
            id: r.id.into(),
            metadata: from_struct_opt(r.metadata),
        }),
        Request::SubscribeToTask(r) => m::Request::SubscribeToTask(m::SubscribeToTaskRequest {
            tenant: r.tenant,
            id: r.id.into(),
        }),
        Request::CreateTaskPushNotificationConfig(r) => {
            m::Request::CreateTaskPushNotificationConfig(r.into())
        }
        Request::GetTaskPushNotificationConfig(r) => {
            m::Request::GetTaskPushNotificationConfig(m::GetTaskPushNotificationConfigRequest {
                tenant: r.tenant,
                task_id: r.task_id.into(),
                id: r.id,
            })
        }
        Request::ListTaskPushNotificationConfigs(r) => {
            m::Request::ListTaskPushNotificationConfigs(m::ListTaskPushNotificationConfigsRequest {
                tenant: r.tenant,
                task_id: r.task_id.into(),
                page_size: r.page_size,
                page_token: r.page_token,
            })
        }
        Request::DeleteTaskPushNotificationConfig(r) => {
            m::Request::DeleteTaskPushNotificationConfig(
                m::DeleteTaskPushNotificationConfigRequest {
                    tenant: r.tenant,
                    task_id: r.task_id.into(),
                    id: r.id,
                },
            )
        }
        Request::GetExtendedAgentCard(r) => {
            m::Request::GetExtendedAgentCard(m::GetExtendedAgentCardRequest { tenant: r.tenant })
        }
    };
    check_ids(&model)?;
    A2aRequest::try_from(model)
}

/// Ids that the JSON form requires as members are proto3 strings here, where
/// absent reads as empty: an empty one is refused by name rather than looked up.
fn check_ids(request: &m::Request) -> Result<(), ConversionError> {
    let empty = |field: &'static str, id: &str| {
        if id.is_empty() {
            Err(missing(field))
        } else {
            Ok(())
        }
    };
    match request {
        m::Request::GetTask(r) => empty("GetTaskRequest.id", r.id.as_str()),
        m::Request::CancelTask(r) => empty("CancelTaskRequest.id", r.id.as_str()),
        m::Request::SubscribeToTask(r) => empty("SubscribeToTaskRequest.id", r.id.as_str()),
        m::Request::CreateTaskPushNotificationConfig(r) => {
            empty("TaskPushNotificationConfig.task_id", &r.task_id)?;
            empty("TaskPushNotificationConfig.url", &r.url)
        }
        m::Request::GetTaskPushNotificationConfig(r) => empty(
            "GetTaskPushNotificationConfigRequest.task_id",
            r.task_id.as_str(),
        ),
        m::Request::ListTaskPushNotificationConfigs(r) => empty(
            "ListTaskPushNotificationConfigsRequest.task_id",
            r.task_id.as_str(),
        ),
        m::Request::DeleteTaskPushNotificationConfig(r) => {
            empty(
                "DeleteTaskPushNotificationConfigRequest.task_id",
                r.task_id.as_str(),
            )?;
            empty("DeleteTaskPushNotificationConfigRequest.id", &r.id)
        }
        _ => Ok(()),
    }
}

/// The 1.0 request message a client sends for an internal request, addressed to
/// `tenant`.
///
/// # Errors
/// A [`ConversionError`] for content the protobuf form cannot carry (a file part
/// whose bytes are not base64, a timestamp that is not RFC 3339).
pub fn to_request(request: A2aRequest, tenant: &str) -> Result<Request, ConversionError> {
    let mut wire = match m::Request::from(request) {
        m::Request::SendMessage(r) => Request::SendMessage(r.try_into()?),
        m::Request::SendStreamingMessage(r) => Request::SendStreamingMessage(r.try_into()?),
        m::Request::GetTask(r) => Request::GetTask(pb::GetTaskRequest {
            tenant: r.tenant,
            id: r.id.into_string(),
            history_length: r.history_length,
        }),
        m::Request::ListTasks(r) => Request::ListTasks(r.try_into()?),
        m::Request::CancelTask(r) => Request::CancelTask(pb::CancelTaskRequest {
            tenant: r.tenant,
            id: r.id.into_string(),
            metadata: to_struct_opt(r.metadata),
        }),
        m::Request::SubscribeToTask(r) => Request::SubscribeToTask(pb::SubscribeToTaskRequest {
            tenant: r.tenant,
            id: r.id.into_string(),
        }),
        m::Request::CreateTaskPushNotificationConfig(r) => {
            Request::CreateTaskPushNotificationConfig(r.into())
        }
        m::Request::GetTaskPushNotificationConfig(r) => {
            Request::GetTaskPushNotificationConfig(pb::GetTaskPushNotificationConfigRequest {
                tenant: r.tenant,
                task_id: r.task_id.into_string(),
                id: r.id,
            })
        }
        m::Request::ListTaskPushNotificationConfigs(r) => {
            Request::ListTaskPushNotificationConfigs(pb::ListTaskPushNotificationConfigsRequest {
                tenant: r.tenant,
                task_id: r.task_id.into_string(),
                page_size: r.page_size,
                page_token: r.page_token,
            })
        }
        m::Request::DeleteTaskPushNotificationConfig(r) => {
            Request::DeleteTaskPushNotificationConfig(pb::DeleteTaskPushNotificationConfigRequest {
                tenant: r.tenant,
                task_id: r.task_id.into_string(),
                id: r.id,
            })
        }
        m::Request::GetExtendedAgentCard(r) => {
            Request::GetExtendedAgentCard(pb::GetExtendedAgentCardRequest { tenant: r.tenant })
        }
    };
    wire.set_tenant(tenant.to_owned());
    Ok(wire)
}

// ---------------------------------------------------------------- responses

/// The response message of a unary 1.0 RPC.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Response {
    /// `SendMessage`.
    Send(pb::SendMessageResponse),
    /// `GetTask`, `CancelTask`.
    Task(pb::Task),
    /// `ListTasks`.
    TaskList(pb::ListTasksResponse),
    /// `Create…` and `GetTaskPushNotificationConfig`.
    PushConfig(pb::TaskPushNotificationConfig),
    /// `ListTaskPushNotificationConfigs`.
    PushConfigs(pb::ListTaskPushNotificationConfigsResponse),
    /// `DeleteTaskPushNotificationConfig` (`google.protobuf.Empty`).
    Deleted,
    /// `GetExtendedAgentCard`.
    Card(Box<pb::AgentCard>),
}

/// A `SendMessage` answer as its response message.
///
/// # Errors
/// As [`result`].
pub fn send_response(
    result: a2a::SendMessageResult,
) -> Result<pb::SendMessageResponse, ConversionError> {
    use pb::send_message_response::Payload;
    let payload = match m::SendMessageResponse::from(result) {
        m::SendMessageResponse::Task(task) => Payload::Task(task.try_into()?),
        m::SendMessageResponse::Message(message) => Payload::Message(message.try_into()?),
    };
    Ok(pb::SendMessageResponse {
        payload: Some(payload),
    })
}

/// A task as its 1.0 message.
///
/// # Errors
/// As [`result`].
pub fn task(task: a2a::Task) -> Result<pb::Task, ConversionError> {
    m::Task::from(task).try_into()
}

/// A unary call's result as the 1.0 response message.
///
/// # Errors
/// A [`ConversionError`] for content the protobuf form cannot carry (bytes that
/// are not base64, a timestamp that is not RFC 3339, a card that does not fit the
/// 1.0 card).
pub fn result(result: A2aResult) -> Result<Response, ConversionError> {
    Ok(match result {
        A2aResult::Send(result) => Response::Send(send_response(result)?),
        A2aResult::Task(value) => Response::Task(task(value)?),
        A2aResult::PushConfig(config) => {
            Response::PushConfig(m::TaskPushNotificationConfig::from(config).into())
        }
        A2aResult::PushConfigs(configs) => {
            let list = m::ListTaskPushNotificationConfigsResponse::from(configs);
            Response::PushConfigs(pb::ListTaskPushNotificationConfigsResponse {
                configs: list.configs.into_iter().map(Into::into).collect(),
                next_page_token: list.next_page_token,
            })
        }
        A2aResult::Deleted => Response::Deleted,
        A2aResult::TaskList(list) => Response::TaskList(pb::ListTasksResponse {
            tasks: try_vec(list.tasks, pb::Task::try_from)?,
            next_page_token: list.next_page_token,
            page_size: list.page_size,
            total_size: list.total_size,
        }),
        A2aResult::Card(card) => Response::Card(Box::new(card_to_pb(m::AgentCard::from(*card))?)),
    })
}

/// A 1.0 response message as the internal result.
///
/// # Errors
/// A [`ConversionError`] naming the field that has no internal form.
pub fn from_response(response: Response) -> Result<A2aResult, ConversionError> {
    Ok(match response {
        Response::Send(response) => {
            use pb::send_message_response::Payload;
            let model = match response.payload {
                Some(Payload::Task(task)) => m::SendMessageResponse::Task(task.try_into()?),
                Some(Payload::Message(message)) => {
                    m::SendMessageResponse::Message(message.try_into()?)
                }
                None => return Err(missing("SendMessageResponse.payload")),
            };
            A2aResult::Send(model.try_into()?)
        }
        Response::Task(task) => A2aResult::Task(m::Task::try_from(task)?.try_into()?),
        Response::TaskList(list) => A2aResult::TaskList(m::ListTasksResponse {
            tasks: try_vec(list.tasks, m::Task::try_from)?,
            next_page_token: list.next_page_token,
            page_size: list.page_size,
            total_size: list.total_size,
        }),
        Response::PushConfig(config) => {
            A2aResult::PushConfig(m::TaskPushNotificationConfig::from(config).try_into()?)
        }
        Response::PushConfigs(list) => A2aResult::PushConfigs(
            m::ListTaskPushNotificationConfigsResponse {
                configs: list.configs.into_iter().map(Into::into).collect(),
                next_page_token: list.next_page_token,
            }
            .try_into()?,
        ),
        Response::Deleted => A2aResult::Deleted,
        Response::Card(card) => {
            A2aResult::Card(Box::new(a2a::AgentCard::try_from(card_from_pb(*card)?)?))
        }
    })
}

/// A stream event as the 1.0 `StreamResponse`.
///
/// # Errors
/// As [`result`].
pub fn stream_response(event: StreamEvent) -> Result<pb::StreamResponse, ConversionError> {
    use pb::stream_response::Payload;
    let payload = match m::StreamResponse::from(event) {
        m::StreamResponse::Task(task) => Payload::Task(task.try_into()?),
        m::StreamResponse::Message(message) => Payload::Message(message.try_into()?),
        m::StreamResponse::StatusUpdate(event) => Payload::StatusUpdate(event.try_into()?),
        m::StreamResponse::ArtifactUpdate(event) => Payload::ArtifactUpdate(event.try_into()?),
    };
    Ok(pb::StreamResponse {
        payload: Some(payload),
    })
}

/// A 1.0 `StreamResponse` as the internal stream event (`final` is set on
/// terminal and interrupted states, as the 1.0 table says).
///
/// # Errors
/// A [`ConversionError`] naming the field that has no internal form.
pub fn from_stream_response(response: pb::StreamResponse) -> Result<StreamEvent, ConversionError> {
    use pb::stream_response::Payload;
    let model = match response.payload {
        Some(Payload::Task(task)) => m::StreamResponse::Task(task.try_into()?),
        Some(Payload::Message(message)) => m::StreamResponse::Message(message.try_into()?),
        Some(Payload::StatusUpdate(event)) => m::StreamResponse::StatusUpdate(event.try_into()?),
        Some(Payload::ArtifactUpdate(event)) => {
            m::StreamResponse::ArtifactUpdate(event.try_into()?)
        }
        None => return Err(missing("StreamResponse.payload")),
    };
    StreamEvent::try_from(model)
}

// ---------------------------------------------------------------- the card

/// A 1.0 card (the serde model, e.g. from [`m::AgentCard::for_versions`]) as its
/// message, through its ProtoJSON form.
///
/// # Errors
/// A [`ConversionError`] on `AgentCard` if the JSON form does not read as the
/// message (it always should: both follow the same proto).
pub fn card_to_pb(card: m::AgentCard) -> Result<pb::AgentCard, ConversionError> {
    let json = serde_json::to_value(card)
        .map_err(|error| ConversionError::new("AgentCard", error.to_string()))?;
    serde_json::from_value(json)
        .map_err(|error| ConversionError::new("AgentCard", error.to_string()))
}

/// A 1.0 card message as the serde model, through its ProtoJSON form.
///
/// # Errors
/// A [`ConversionError`] on `AgentCard` naming what the model refuses.
pub fn card_from_pb(card: pb::AgentCard) -> Result<m::AgentCard, ConversionError> {
    let json = serde_json::to_value(card)
        .map_err(|error| ConversionError::new("AgentCard", error.to_string()))?;
    serde_json::from_value(json)
        .map_err(|error| ConversionError::new("AgentCard", error.to_string()))
}

#[cfg(test)]
mod tests;
