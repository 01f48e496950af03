//! A2A 0.3.0 over gRPC (package `a2a.v1`): the generated messages, service and
//! client ([`pb`], with ProtoJSON serde impls), and their conversions to and from
//! the internal model, which 0.3 shaped.
//!
//! - [`request`]: a [`pb`] request message (as [`Request`]) → the [`A2aRequest`]
//!   the service answers; [`to_request`] is the way back (client). The per-message
//!   conversions are `TryFrom` impls (e.g. `MessageSendParams: TryFrom<pb::SendMessageRequest>`),
//!   usable one by one by a binding that reads part of a request from its path.
//! - [`result`]: an [`A2aResult`] → the RPC's response message ([`Response`]);
//!   [`from_response`] is the way back.
//! - [`stream_response`] / [`from_stream_response`]: a [`StreamEvent`] and the
//!   `StreamResponse` message.
//! - [`card`]: the internal card as the 0.3 `AgentCard` message.
//!
//! Tasks and push configs are addressed by resource names, parsed and written
//! here: `tasks/{task_id}` and `tasks/{task_id}/pushNotificationConfigs/{config_id}`.
//!
//! # Where a conversion loses information
//!
//! The 0.3 proto is narrower than the 0.3 JSON schema (the internal model):
//!
//! | case | proto → internal | internal → proto |
//! |---|---|---|
//! | part `metadata` | absent | dropped: 0.3 proto parts have none |
//! | file `name` | absent | dropped: 0.3 proto `FilePart` has none |
//! | message `referenceTaskIds` | absent | dropped |
//! | `TASK_STATE_UNSPECIFIED` | `unknown` | `unknown` → `TASK_STATE_UNSPECIFIED` |
//! | `ROLE_UNSPECIFIED` | error naming `Message.role` | – |
//! | `historyLength` 0 (proto3 default) | absent (no limit), as the 0.3 SDK reads it | `0` ("no history") is written as 0, which 0.3 peers read as no limit |
//! | `blocking` | `configuration` present: its value; absent: the default (blocking) | written as is (`true` when unset) whenever a configuration is sent |
//! | `append`, `lastChunk`, `final` false vs absent | `false` reads as absent (`final`: `false`) | absent written as `false` |
//! | empty string or list vs absent | read as absent | written as empty |
//! | push config list paging | dropped: the internal list is whole | `nextPageToken` empty |
//! | `metadata` of get/cancel/subscribe/push-config params | absent | dropped: the requests have none |
//! | card `iconUrl`, `capabilities.stateTransitionHistory` | absent | dropped: not in the 0.3 proto |

use std::sync::Arc;

use super::{
    ConversionError, decode_bytes, encode_bytes, from_struct, from_struct_opt, from_timestamp_opt,
    missing, some_string, some_vec, to_struct, to_struct_opt, to_timestamp_opt,
};
use crate::a2a::{self, StreamEvent};
use crate::ids::TaskId;
use crate::jsonrpc::A2aRequest;
use crate::service::A2aResult;

/// The code generated from `transport/proto/a2a/v1/a2a.proto`: the messages,
/// `a2a_service_server` (the tonic service trait and server) and
/// `a2a_service_client`, and ProtoJSON serde impls for every message (what the 0.3
/// HTTP+JSON binding sends).
#[allow(
    missing_docs,
    unreachable_pub,
    clippy::all,
    clippy::pedantic,
    rust_2018_idioms,
    reason = "generated code"
)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/a2a.v1.rs"));
    include!(concat!(env!("OUT_DIR"), "/a2a.v1.serde.rs"));
}

/// The fully qualified name of the 0.3 service, as gRPC routes it.
pub const SERVICE_NAME: &str = "a2a.v1.A2AService";

// ---------------------------------------------------------------- resource names

/// `tasks/{task_id}`.
#[must_use]
pub fn task_name(task_id: &TaskId) -> String {
    format!("tasks/{task_id}")
}

/// `tasks/{task_id}/pushNotificationConfigs/{config_id}`.
#[must_use]
pub fn push_config_name(task_id: &TaskId, config_id: &str) -> String {
    format!("tasks/{task_id}/pushNotificationConfigs/{config_id}")
}

/// The task id of a `tasks/{task_id}` resource name.
///
/// # Errors
/// A [`ConversionError`] on `field` when `name` is not of that form.
pub fn parse_task_name(field: &'static str, name: &str) -> Result<TaskId, ConversionError> {
    match name.strip_prefix("tasks/") {
        Some(id) if !id.is_empty() && !id.contains('/') => Ok(TaskId::new(id)),
        _ => Err(ConversionError::new(
            field,
            format!("`{name}` is not a task name: expected `tasks/{{task_id}}`"),
        )),
    }
}

/// The task id and config id of a `tasks/{task_id}/pushNotificationConfigs/{config_id}`
/// resource name; a bare `tasks/{task_id}`, or an empty config id, gives none (the
/// task's only config).
///
/// # Errors
/// A [`ConversionError`] on `field` when `name` is of neither form.
pub fn parse_push_config_name(
    field: &'static str,
    name: &str,
) -> Result<(TaskId, Option<String>), ConversionError> {
    let bad = || {
        ConversionError::new(
            field,
            format!(
                "`{name}` is not a push config name: expected `tasks/{{task_id}}/pushNotificationConfigs/{{config_id}}`"
            ),
        )
    };
    let rest = name.strip_prefix("tasks/").ok_or_else(bad)?;
    match rest.split_once('/') {
        None if !rest.is_empty() => Ok((TaskId::new(rest), None)),
        None => Err(bad()),
        Some((task, config)) => {
            let config = config
                .strip_prefix("pushNotificationConfigs/")
                .ok_or_else(bad)?;
            if task.is_empty() || config.contains('/') {
                return Err(bad());
            }
            // An empty config id is what a config without one is named with.
            Ok((TaskId::new(task), some_string(config.to_owned())))
        }
    }
}

// ---------------------------------------------------------------- enums

fn role_to(role: a2a::Role) -> i32 {
    match role {
        a2a::Role::User => pb::Role::User as i32,
        a2a::Role::Agent => pb::Role::Agent as i32,
    }
}

fn role_from(number: i32) -> Result<a2a::Role, ConversionError> {
    match pb::Role::try_from(number) {
        Ok(pb::Role::User) => Ok(a2a::Role::User),
        Ok(pb::Role::Agent) => Ok(a2a::Role::Agent),
        Ok(pb::Role::Unspecified) => Err(ConversionError::new(
            "Message.role",
            "ROLE_UNSPECIFIED: a message is from the user or the agent",
        )),
        Err(_) => Err(ConversionError::new(
            "Message.role",
            format!("{number} is not a Role"),
        )),
    }
}

fn state_to(state: a2a::TaskState) -> i32 {
    use a2a::TaskState as S;
    let state = match state {
        S::Submitted => pb::TaskState::Submitted,
        S::Working => pb::TaskState::Working,
        S::InputRequired => pb::TaskState::InputRequired,
        S::Completed => pb::TaskState::Completed,
        S::Canceled => pb::TaskState::Cancelled,
        S::Failed => pb::TaskState::Failed,
        S::Rejected => pb::TaskState::Rejected,
        S::AuthRequired => pb::TaskState::AuthRequired,
        S::Unknown => pb::TaskState::Unspecified,
    };
    state as i32
}

fn state_from(field: &'static str, number: i32) -> Result<a2a::TaskState, ConversionError> {
    use a2a::TaskState as S;
    Ok(
        match pb::TaskState::try_from(number)
            .map_err(|_| ConversionError::new(field, format!("{number} is not a TaskState")))?
        {
            pb::TaskState::Unspecified => S::Unknown,
            pb::TaskState::Submitted => S::Submitted,
            pb::TaskState::Working => S::Working,
            pb::TaskState::Completed => S::Completed,
            pb::TaskState::Failed => S::Failed,
            pb::TaskState::Cancelled => S::Canceled,
            pb::TaskState::InputRequired => S::InputRequired,
            pb::TaskState::Rejected => S::Rejected,
            pb::TaskState::AuthRequired => S::AuthRequired,
        },
    )
}

fn try_vec<T, U, E>(items: Vec<T>, convert: impl Fn(T) -> Result<U, E>) -> Result<Vec<U>, E> {
    items.into_iter().map(convert).collect()
}

// ---------------------------------------------------------------- parts, messages

impl TryFrom<a2a::Part> for pb::Part {
    type Error = ConversionError;

    fn try_from(part: a2a::Part) -> Result<Self, ConversionError> {
        use pb::part::Part as P;
        let part = match part {
            a2a::Part::Text(text) => P::Text(text.text),
            a2a::Part::Data(data) => P::Data(pb::DataPart {
                data: Some(to_struct(data.data)),
            }),
            a2a::Part::File(file) => P::File(match file.file {
                a2a::FileContent::Bytes(bytes) => pb::FilePart {
                    file: Some(pb::file_part::File::FileWithBytes(decode_bytes(
                        "FilePart.file_with_bytes",
                        &bytes.bytes,
                    )?)),
                    mime_type: bytes.mime_type.unwrap_or_default(),
                },
                a2a::FileContent::Uri(uri) => pb::FilePart {
                    file: Some(pb::file_part::File::FileWithUri(uri.uri)),
                    mime_type: uri.mime_type.unwrap_or_default(),
                },
            }),
        };
        Ok(Self { part: Some(part) })
    }
}

impl TryFrom<pb::Part> for a2a::Part {
    type Error = ConversionError;

    fn try_from(part: pb::Part) -> Result<Self, ConversionError> {
        use pb::part::Part as P;
        Ok(match part.part {
            Some(P::Text(text)) => Self::text(text),
            Some(P::Data(data)) => Self::data(data.data.map(from_struct).unwrap_or_default()),
            Some(P::File(file)) => {
                let mime_type = some_string(file.mime_type);
                let content = match file.file {
                    Some(pb::file_part::File::FileWithBytes(bytes)) => {
                        a2a::FileContent::Bytes(a2a::FileWithBytes {
                            bytes: encode_bytes(&bytes),
                            name: None,
                            mime_type,
                        })
                    }
                    Some(pb::file_part::File::FileWithUri(uri)) => {
                        a2a::FileContent::Uri(a2a::FileWithUri {
                            uri,
                            name: None,
                            mime_type,
                        })
                    }
                    None => {
                        return Err(ConversionError::new(
                            "FilePart.file",
                            "neither file_with_uri nor file_with_bytes is set",
                        ));
                    }
                };
                Self::File(a2a::FilePart {
                    file: content,
                    metadata: None,
                })
            }
            None => {
                return Err(ConversionError::new(
                    "Part.part",
                    "none of text, file, data is set",
                ));
            }
        })
    }
}

/// A shared message: moved out when this was its last holder, else copied.
impl TryFrom<Arc<a2a::Message>> for pb::Message {
    type Error = ConversionError;

    fn try_from(message: Arc<a2a::Message>) -> Result<Self, ConversionError> {
        Arc::unwrap_or_clone(message).try_into()
    }
}

impl TryFrom<a2a::Message> for pb::Message {
    type Error = ConversionError;

    fn try_from(message: a2a::Message) -> Result<Self, ConversionError> {
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
            role: role_to(message.role),
            content: try_vec(message.parts, pb::Part::try_from)?,
            metadata: to_struct_opt(message.metadata),
            extensions: message.extensions.unwrap_or_default(),
        })
    }
}

impl TryFrom<pb::Message> for a2a::Message {
    type Error = ConversionError;

    fn try_from(message: pb::Message) -> Result<Self, ConversionError> {
        if message.message_id.is_empty() {
            return Err(missing("Message.message_id"));
        }
        let mut model = Self::new(
            role_from(message.role)?,
            try_vec(message.content, a2a::Part::try_from)?,
        );
        model.message_id = message.message_id.into();
        model.context_id = some_string(message.context_id).map(Into::into);
        model.task_id = some_string(message.task_id).map(Into::into);
        model.metadata = from_struct_opt(message.metadata);
        model.extensions = some_vec(message.extensions);
        Ok(model)
    }
}

// ---------------------------------------------------------------- tasks, events

impl TryFrom<a2a::TaskStatus> for pb::TaskStatus {
    type Error = ConversionError;

    fn try_from(status: a2a::TaskStatus) -> Result<Self, ConversionError> {
        Ok(Self {
            state: state_to(status.state),
            update: status.message.map(pb::Message::try_from).transpose()?,
            timestamp: to_timestamp_opt("TaskStatus.timestamp", status.timestamp.as_deref())?,
        })
    }
}

impl TryFrom<pb::TaskStatus> for a2a::TaskStatus {
    type Error = ConversionError;

    fn try_from(status: pb::TaskStatus) -> Result<Self, ConversionError> {
        let mut model = Self::new(state_from("TaskStatus.state", status.state)?);
        model.message = status
            .update
            .map(|message| a2a::Message::try_from(message).map(Arc::new))
            .transpose()?;
        model.timestamp = from_timestamp_opt("TaskStatus.timestamp", status.timestamp.as_ref())?
            .map(a2a::Timestamp::from);
        Ok(model)
    }
}

/// A shared artifact: moved out when this was its last holder, else copied.
impl TryFrom<Arc<a2a::Artifact>> for pb::Artifact {
    type Error = ConversionError;

    fn try_from(artifact: Arc<a2a::Artifact>) -> Result<Self, ConversionError> {
        Arc::unwrap_or_clone(artifact).try_into()
    }
}

impl TryFrom<a2a::Artifact> for pb::Artifact {
    type Error = ConversionError;

    fn try_from(artifact: a2a::Artifact) -> Result<Self, ConversionError> {
        Ok(Self {
            artifact_id: artifact.artifact_id,
            name: artifact.name.unwrap_or_default(),
            description: artifact.description.unwrap_or_default(),
            parts: try_vec(artifact.parts, pb::Part::try_from)?,
            metadata: to_struct_opt(artifact.metadata),
            extensions: artifact.extensions.unwrap_or_default(),
        })
    }
}

impl TryFrom<pb::Artifact> for a2a::Artifact {
    type Error = ConversionError;

    fn try_from(artifact: pb::Artifact) -> Result<Self, ConversionError> {
        Ok(Self {
            artifact_id: artifact.artifact_id,
            name: some_string(artifact.name),
            description: some_string(artifact.description),
            parts: try_vec(artifact.parts, a2a::Part::try_from)?,
            extensions: some_vec(artifact.extensions),
            metadata: from_struct_opt(artifact.metadata),
        })
    }
}

impl TryFrom<a2a::Task> for pb::Task {
    type Error = ConversionError;

    fn try_from(task: a2a::Task) -> Result<Self, ConversionError> {
        Ok(Self {
            id: task.id.into_string(),
            context_id: task.context_id.into_string(),
            status: Some(task.status.try_into()?),
            artifacts: try_vec(task.artifacts.unwrap_or_default(), pb::Artifact::try_from)?,
            history: try_vec(task.history.unwrap_or_default(), pb::Message::try_from)?,
            metadata: to_struct_opt(task.metadata),
        })
    }
}

impl TryFrom<pb::Task> for a2a::Task {
    type Error = ConversionError;

    fn try_from(task: pb::Task) -> Result<Self, ConversionError> {
        if task.id.is_empty() {
            return Err(missing("Task.id"));
        }
        let mut model = Self::new(
            task.id.into(),
            task.context_id.into(),
            task.status
                .ok_or_else(|| missing("Task.status"))?
                .try_into()?,
        );
        model.artifacts = some_vec(try_vec(task.artifacts, |artifact| {
            a2a::Artifact::try_from(artifact).map(Arc::new)
        })?);
        model.history = some_vec(try_vec(task.history, |message| {
            a2a::Message::try_from(message).map(Arc::new)
        })?);
        model.metadata = from_struct_opt(task.metadata);
        Ok(model)
    }
}

impl TryFrom<a2a::TaskStatusUpdateEvent> for pb::TaskStatusUpdateEvent {
    type Error = ConversionError;

    fn try_from(event: a2a::TaskStatusUpdateEvent) -> Result<Self, ConversionError> {
        Ok(Self {
            task_id: event.task_id.into_string(),
            context_id: event.context_id.into_string(),
            status: Some(event.status.try_into()?),
            r#final: event.is_final,
            metadata: to_struct_opt(event.metadata),
        })
    }
}

impl TryFrom<pb::TaskStatusUpdateEvent> for a2a::TaskStatusUpdateEvent {
    type Error = ConversionError;

    fn try_from(event: pb::TaskStatusUpdateEvent) -> Result<Self, ConversionError> {
        let mut model = Self::new(
            event.task_id.into(),
            event.context_id.into(),
            event
                .status
                .ok_or_else(|| missing("TaskStatusUpdateEvent.status"))?
                .try_into()?,
            event.r#final,
        );
        model.metadata = from_struct_opt(event.metadata);
        Ok(model)
    }
}

impl TryFrom<a2a::TaskArtifactUpdateEvent> for pb::TaskArtifactUpdateEvent {
    type Error = ConversionError;

    fn try_from(event: a2a::TaskArtifactUpdateEvent) -> Result<Self, ConversionError> {
        Ok(Self {
            task_id: event.task_id.into_string(),
            context_id: event.context_id.into_string(),
            artifact: Some(event.artifact.try_into()?),
            append: event.append.unwrap_or(false),
            last_chunk: event.last_chunk.unwrap_or(false),
            metadata: to_struct_opt(event.metadata),
        })
    }
}

impl TryFrom<pb::TaskArtifactUpdateEvent> for a2a::TaskArtifactUpdateEvent {
    type Error = ConversionError;

    fn try_from(event: pb::TaskArtifactUpdateEvent) -> Result<Self, ConversionError> {
        let mut model = Self::new(
            event.task_id.into(),
            event.context_id.into(),
            a2a::Artifact::try_from(
                event
                    .artifact
                    .ok_or_else(|| missing("TaskArtifactUpdateEvent.artifact"))?,
            )?,
        );
        model.append = event.append.then_some(true);
        model.last_chunk = event.last_chunk.then_some(true);
        model.metadata = from_struct_opt(event.metadata);
        Ok(model)
    }
}

// ---------------------------------------------------------------- push configs

impl From<a2a::PushNotificationConfig> for pb::PushNotificationConfig {
    fn from(config: a2a::PushNotificationConfig) -> Self {
        Self {
            id: config.id.unwrap_or_default(),
            url: config.url,
            token: config.token.unwrap_or_default(),
            authentication: config.authentication.map(|auth| pb::AuthenticationInfo {
                schemes: auth.schemes,
                credentials: auth.credentials.unwrap_or_default(),
            }),
        }
    }
}

impl From<pb::PushNotificationConfig> for a2a::PushNotificationConfig {
    fn from(config: pb::PushNotificationConfig) -> Self {
        Self {
            id: some_string(config.id),
            url: config.url,
            token: some_string(config.token),
            authentication: config.authentication.map(|auth| {
                a2a::PushNotificationAuthenticationInfo {
                    schemes: auth.schemes,
                    credentials: some_string(auth.credentials),
                }
            }),
        }
    }
}

impl From<a2a::TaskPushNotificationConfig> for pb::TaskPushNotificationConfig {
    /// Named `tasks/{task_id}/pushNotificationConfigs/{config_id}` (an empty config
    /// id when the config has none).
    fn from(config: a2a::TaskPushNotificationConfig) -> Self {
        let id = config
            .push_notification_config
            .id
            .as_deref()
            .unwrap_or_default();
        Self {
            name: push_config_name(&config.task_id, id),
            push_notification_config: Some(config.push_notification_config.into()),
        }
    }
}

impl TryFrom<pb::TaskPushNotificationConfig> for a2a::TaskPushNotificationConfig {
    type Error = ConversionError;

    /// The task comes from `name`; the config's id from `name` when the config
    /// itself has none.
    fn try_from(config: pb::TaskPushNotificationConfig) -> Result<Self, ConversionError> {
        let (task_id, config_id) =
            parse_push_config_name("TaskPushNotificationConfig.name", &config.name)?;
        let mut push: a2a::PushNotificationConfig = config
            .push_notification_config
            .ok_or_else(|| missing("TaskPushNotificationConfig.push_notification_config"))?
            .into();
        if push.id.is_none() {
            push.id = config_id;
        }
        Ok(Self {
            task_id,
            push_notification_config: push,
        })
    }
}

// ---------------------------------------------------------------- requests

impl TryFrom<pb::SendMessageRequest> for a2a::MessageSendParams {
    type Error = ConversionError;

    fn try_from(request: pb::SendMessageRequest) -> Result<Self, ConversionError> {
        let message = request
            .request
            .ok_or_else(|| missing("SendMessageRequest.request"))?
            .try_into()?;
        Ok(Self {
            message,
            configuration: request
                .configuration
                .map(|config| a2a::MessageSendConfiguration {
                    accepted_output_modes: some_vec(config.accepted_output_modes),
                    history_length: u32::try_from(config.history_length).ok().filter(|n| *n > 0),
                    push_notification_config: config.push_notification.map(Into::into),
                    blocking: Some(config.blocking),
                }),
            metadata: from_struct_opt(request.metadata),
        })
    }
}

impl TryFrom<a2a::MessageSendParams> for pb::SendMessageRequest {
    type Error = ConversionError;

    fn try_from(params: a2a::MessageSendParams) -> Result<Self, ConversionError> {
        let blocking = params.is_blocking();
        Ok(Self {
            request: Some(params.message.try_into()?),
            configuration: params
                .configuration
                .map(|config| pb::SendMessageConfiguration {
                    accepted_output_modes: config.accepted_output_modes.unwrap_or_default(),
                    push_notification: config.push_notification_config.map(Into::into),
                    history_length: config
                        .history_length
                        .map_or(0, |n| i32::try_from(n).unwrap_or(i32::MAX)),
                    blocking,
                }),
            metadata: to_struct_opt(params.metadata),
        })
    }
}

/// One request message of the 0.3 service, as the server receives it (and the
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
    /// `CancelTask`.
    CancelTask(pb::CancelTaskRequest),
    /// `TaskSubscription`.
    TaskSubscription(pb::TaskSubscriptionRequest),
    /// `CreateTaskPushNotificationConfig`.
    CreateTaskPushNotificationConfig(pb::CreateTaskPushNotificationConfigRequest),
    /// `GetTaskPushNotificationConfig`.
    GetTaskPushNotificationConfig(pb::GetTaskPushNotificationConfigRequest),
    /// `ListTaskPushNotificationConfig`.
    ListTaskPushNotificationConfig(pb::ListTaskPushNotificationConfigRequest),
    /// `DeleteTaskPushNotificationConfig`.
    DeleteTaskPushNotificationConfig(pb::DeleteTaskPushNotificationConfigRequest),
}

/// A 0.3 request message as the internal request the service answers.
///
/// `GetAgentCard` is not among them: it is answered from the card, not by a call.
///
/// # Errors
/// A [`ConversionError`] naming the field that has no internal form (a resource
/// name that is not one, a missing message, an unknown enum number, ...).
pub fn request(request: Request) -> Result<A2aRequest, ConversionError> {
    Ok(match request {
        Request::SendMessage(r) => A2aRequest::SendMessage(r.try_into()?),
        Request::SendStreamingMessage(r) => A2aRequest::SendStreamingMessage(r.try_into()?),
        Request::GetTask(r) => A2aRequest::GetTask(a2a::TaskQueryParams {
            id: parse_task_name("GetTaskRequest.name", &r.name)?,
            // 0 is the proto3 default: no limit asked for.
            history_length: u32::try_from(r.history_length).ok().filter(|n| *n > 0),
            metadata: None,
        }),
        Request::CancelTask(r) => A2aRequest::CancelTask(a2a::TaskIdParams {
            id: parse_task_name("CancelTaskRequest.name", &r.name)?,
            metadata: None,
        }),
        Request::TaskSubscription(r) => A2aRequest::TaskResubscription(a2a::TaskIdParams {
            id: parse_task_name("TaskSubscriptionRequest.name", &r.name)?,
            metadata: None,
        }),
        Request::CreateTaskPushNotificationConfig(r) => {
            let task_id =
                parse_task_name("CreateTaskPushNotificationConfigRequest.parent", &r.parent)?;
            let config = r
                .config
                .ok_or_else(|| missing("CreateTaskPushNotificationConfigRequest.config"))?;
            let mut push: a2a::PushNotificationConfig = config
                .push_notification_config
                .ok_or_else(|| missing("TaskPushNotificationConfig.push_notification_config"))?
                .into();
            if push.url.is_empty() {
                return Err(missing("PushNotificationConfig.url"));
            }
            if push.id.is_none() {
                push.id = some_string(r.config_id);
            }
            A2aRequest::SetTaskPushNotificationConfig(a2a::TaskPushNotificationConfig {
                task_id,
                push_notification_config: push,
            })
        }
        Request::GetTaskPushNotificationConfig(r) => {
            let (id, config_id) =
                parse_push_config_name("GetTaskPushNotificationConfigRequest.name", &r.name)?;
            A2aRequest::GetTaskPushNotificationConfig(a2a::GetTaskPushNotificationConfigParams {
                id,
                push_notification_config_id: config_id,
                metadata: None,
            })
        }
        Request::ListTaskPushNotificationConfig(r) => {
            A2aRequest::ListTaskPushNotificationConfig(a2a::ListTaskPushNotificationConfigParams {
                id: parse_task_name("ListTaskPushNotificationConfigRequest.parent", &r.parent)?,
                metadata: None,
            })
        }
        Request::DeleteTaskPushNotificationConfig(r) => {
            let field = "DeleteTaskPushNotificationConfigRequest.name";
            let (id, config_id) = parse_push_config_name(field, &r.name)?;
            A2aRequest::DeleteTaskPushNotificationConfig(
                a2a::DeleteTaskPushNotificationConfigParams {
                    id,
                    push_notification_config_id: config_id.ok_or_else(|| {
                        ConversionError::new(field, "names no config: a delete needs one")
                    })?,
                    metadata: None,
                },
            )
        }
    })
}

/// The 0.3 request message a client sends for an internal request.
///
/// # Errors
/// A [`ConversionError`] for content the protobuf form cannot carry (a file part
/// whose bytes are not base64, a timestamp that is not RFC 3339), and for
/// `ListTasks` and the extended card, which the 0.3 service does not have.
pub fn to_request(request: A2aRequest) -> Result<Request, ConversionError> {
    Ok(match request {
        A2aRequest::SendMessage(params) => Request::SendMessage(params.try_into()?),
        A2aRequest::SendStreamingMessage(params) => {
            Request::SendStreamingMessage(params.try_into()?)
        }
        A2aRequest::GetTask(params) => Request::GetTask(pb::GetTaskRequest {
            name: task_name(&params.id),
            history_length: params
                .history_length
                .map_or(0, |n| i32::try_from(n).unwrap_or(i32::MAX)),
        }),
        A2aRequest::CancelTask(params) => Request::CancelTask(pb::CancelTaskRequest {
            name: task_name(&params.id),
        }),
        A2aRequest::TaskResubscription(params) => {
            Request::TaskSubscription(pb::TaskSubscriptionRequest {
                name: task_name(&params.id),
            })
        }
        A2aRequest::SetTaskPushNotificationConfig(config) => {
            let config_id = config
                .push_notification_config
                .id
                .clone()
                .unwrap_or_default();
            Request::CreateTaskPushNotificationConfig(pb::CreateTaskPushNotificationConfigRequest {
                parent: task_name(&config.task_id),
                config_id,
                config: Some(config.into()),
            })
        }
        A2aRequest::GetTaskPushNotificationConfig(params) => {
            let name = match &params.push_notification_config_id {
                Some(config_id) => push_config_name(&params.id, config_id),
                None => task_name(&params.id),
            };
            Request::GetTaskPushNotificationConfig(pb::GetTaskPushNotificationConfigRequest {
                name,
            })
        }
        A2aRequest::ListTaskPushNotificationConfig(params) => {
            Request::ListTaskPushNotificationConfig(pb::ListTaskPushNotificationConfigRequest {
                parent: task_name(&params.id),
                page_size: 0,
                page_token: String::new(),
            })
        }
        A2aRequest::DeleteTaskPushNotificationConfig(params) => {
            Request::DeleteTaskPushNotificationConfig(pb::DeleteTaskPushNotificationConfigRequest {
                name: push_config_name(&params.id, &params.push_notification_config_id),
            })
        }
        A2aRequest::ListTasks(_) => {
            return Err(ConversionError::new(
                "ListTasksRequest",
                "the 0.3 service has no ListTasks: call it over 1.0",
            ));
        }
        A2aRequest::GetAuthenticatedExtendedCard => {
            return Err(ConversionError::new(
                "GetAgentCardRequest",
                "the 0.3 gRPC service has no extended card: call it over 1.0 or JSON-RPC",
            ));
        }
    })
}

// ---------------------------------------------------------------- responses

/// The response message of a unary 0.3 RPC.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Response {
    /// `SendMessage`.
    Send(pb::SendMessageResponse),
    /// `GetTask`, `CancelTask`.
    Task(pb::Task),
    /// `Create…` and `GetTaskPushNotificationConfig`.
    PushConfig(pb::TaskPushNotificationConfig),
    /// `ListTaskPushNotificationConfig`.
    PushConfigs(pb::ListTaskPushNotificationConfigResponse),
    /// `DeleteTaskPushNotificationConfig` (`google.protobuf.Empty`).
    Deleted,
    /// `GetAgentCard`.
    Card(Box<pb::AgentCard>),
}

/// A `SendMessage` answer as its response message (`{"task": …}` or
/// `{"message": …}` in ProtoJSON).
///
/// # Errors
/// As [`result`].
pub fn send_response(
    result: a2a::SendMessageResult,
) -> Result<pb::SendMessageResponse, ConversionError> {
    use pb::send_message_response::Payload;
    let payload = match result {
        a2a::SendMessageResult::Task(task) => Payload::Task(task.try_into()?),
        a2a::SendMessageResult::Message(message) => Payload::Msg(message.try_into()?),
    };
    Ok(pb::SendMessageResponse {
        payload: Some(payload),
    })
}

/// A unary call's result as the 0.3 response message.
///
/// # Errors
/// A [`ConversionError`] for content the protobuf form cannot carry (bytes that
/// are not base64, a timestamp that is not RFC 3339), or a `ListTasks` result,
/// which 0.3 has no message for.
pub fn result(result: A2aResult) -> Result<Response, ConversionError> {
    Ok(match result {
        A2aResult::Send(result) => Response::Send(send_response(result)?),
        A2aResult::Task(task) => Response::Task(task.try_into()?),
        A2aResult::PushConfig(config) => Response::PushConfig(config.into()),
        A2aResult::PushConfigs(configs) => {
            Response::PushConfigs(pb::ListTaskPushNotificationConfigResponse {
                configs: configs.into_iter().map(Into::into).collect(),
                next_page_token: String::new(),
            })
        }
        A2aResult::Deleted => Response::Deleted,
        A2aResult::Card(card) => Response::Card(Box::new(self::card(*card)?)),
        A2aResult::TaskList(_) => {
            return Err(ConversionError::new(
                "ListTasksResponse",
                "the 0.3 service has no ListTasks",
            ));
        }
    })
}

/// A 0.3 response message as the internal result.
///
/// # Errors
/// A [`ConversionError`] naming the field that has no internal form; a card, which
/// the client reads over HTTP, not from this message.
pub fn from_response(response: Response) -> Result<A2aResult, ConversionError> {
    Ok(match response {
        Response::Send(response) => {
            use pb::send_message_response::Payload;
            A2aResult::Send(match response.payload {
                Some(Payload::Task(task)) => a2a::SendMessageResult::Task(task.try_into()?),
                Some(Payload::Msg(message)) => a2a::SendMessageResult::Message(message.try_into()?),
                None => return Err(missing("SendMessageResponse.payload")),
            })
        }
        Response::Task(task) => A2aResult::Task(task.try_into()?),
        Response::PushConfig(config) => A2aResult::PushConfig(config.try_into()?),
        Response::PushConfigs(list) => A2aResult::PushConfigs(try_vec(
            list.configs,
            a2a::TaskPushNotificationConfig::try_from,
        )?),
        Response::Deleted => A2aResult::Deleted,
        Response::Card(_) => {
            return Err(ConversionError::new(
                "AgentCard",
                "read the 0.3 card from its well-known URL",
            ));
        }
    })
}

/// A stream event as the 0.3 `StreamResponse`.
///
/// # Errors
/// As [`result`].
pub fn stream_response(event: StreamEvent) -> Result<pb::StreamResponse, ConversionError> {
    use pb::stream_response::Payload;
    let payload = match event {
        StreamEvent::Task(task) => Payload::Task(task.try_into()?),
        StreamEvent::Message(message) => Payload::Msg(message.try_into()?),
        StreamEvent::StatusUpdate(event) => Payload::StatusUpdate(event.try_into()?),
        StreamEvent::ArtifactUpdate(event) => Payload::ArtifactUpdate(event.try_into()?),
    };
    Ok(pb::StreamResponse {
        payload: Some(payload),
    })
}

/// A 0.3 `StreamResponse` as the internal stream event.
///
/// # Errors
/// A [`ConversionError`] naming the field that has no internal form.
pub fn from_stream_response(response: pb::StreamResponse) -> Result<StreamEvent, ConversionError> {
    use pb::stream_response::Payload;
    Ok(match response.payload {
        Some(Payload::Task(task)) => StreamEvent::Task(task.try_into()?),
        Some(Payload::Msg(message)) => StreamEvent::Message(message.try_into()?),
        Some(Payload::StatusUpdate(event)) => StreamEvent::StatusUpdate(event.try_into()?),
        Some(Payload::ArtifactUpdate(event)) => StreamEvent::ArtifactUpdate(event.try_into()?),
        None => return Err(missing("StreamResponse.payload")),
    })
}

// ---------------------------------------------------------------- the card

/// The internal card as the 0.3 `AgentCard` message.
///
/// Built from the 1.0 card message: the two protos share every message a card
/// holds (skills, capabilities, provider, security schemes and requirements,
/// extensions, signatures) field for field, so those are carried over by
/// re-reading their protobuf encoding; the fields where the versions differ (the
/// interfaces, the extended-card flag, the protocol version) are set here.
///
/// # Errors
/// A [`ConversionError`] on `AgentCard` if the card does not fit the 1.0 card
/// message (it always should).
pub fn card(card: a2a::AgentCard) -> Result<pb::AgentCard, ConversionError> {
    use prost::Message as _;
    let url = card.url.clone();
    let preferred_transport = card
        .preferred_transport
        .as_ref()
        .map(|transport| transport.as_str().to_owned())
        .unwrap_or_default();
    let additional_interfaces = card
        .additional_interfaces
        .as_ref()
        .map(|interfaces| {
            interfaces
                .iter()
                .map(|interface| pb::AgentInterface {
                    url: interface.url.clone(),
                    transport: interface.transport.as_str().to_owned(),
                })
                .collect()
        })
        .unwrap_or_default();
    let protocol_version = card.protocol_version.clone();
    let extended = card.supports_authenticated_extended_card.unwrap_or(false);
    let mut v1 = super::v1::card_to_pb(crate::a2a::v1::AgentCard::from(card))?;
    // The fields whose numbers mean something else in 0.3 (3, 13, 14) go; the
    // signatures (13 in 1.0, 17 in 0.3) are carried over one by one.
    v1.supported_interfaces.clear();
    v1.icon_url = None;
    let signatures = std::mem::take(&mut v1.signatures);
    let mut card = pb::AgentCard::decode(v1.encode_to_vec().as_slice())
        .map_err(|error| ConversionError::new("AgentCard", error.to_string()))?;
    card.signatures = signatures
        .into_iter()
        .map(|signature| pb::AgentCardSignature {
            protected: signature.protected,
            signature: signature.signature,
            header: signature.header,
        })
        .collect();
    card.url = url;
    card.preferred_transport = preferred_transport;
    card.additional_interfaces = additional_interfaces;
    card.protocol_version = protocol_version;
    card.supports_authenticated_extended_card = extended;
    Ok(card)
}

#[cfg(test)]
mod tests;
