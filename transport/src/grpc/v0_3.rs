//! `a2a.v1.A2AService`: A2A 0.3.0 over gRPC.

use std::pin::Pin;

use futures::{Stream, StreamExt as _};
use tonic::{Request, Response, Status};

use super::gate::{Admitted, Shared};
use super::status::{conversion_status, to_status};
use crate::a2a::v1::ProtocolVersion;
use crate::jsonrpc::{A2aRequest, JsonRpcError, method};
use crate::proto::v0_3::{self, pb};
use crate::service::A2aService;

/// The 0.3 service over an [`A2aService`].
pub(crate) struct V0_3<S>(pub(crate) Shared<S>);

/// The stream of a streaming 0.3 RPC.
pub(crate) type EventStream =
    Pin<Box<dyn Stream<Item = Result<pb::StreamResponse, Status>> + Send>>;

impl<S: A2aService> V0_3<S> {
    /// Lets the call in (0.3 requests have no tenant: the agent comes from the
    /// metadata or is the default one), converts it and checks it against the card.
    fn admit(
        &self,
        method: &'static str,
        metadata: &tonic::metadata::MetadataMap,
        request: v0_3::Request,
    ) -> Result<(Admitted, A2aRequest), Status> {
        let admitted = self
            .0
            .admit(ProtocolVersion::V0_3, method, metadata, "", true)?;
        let request =
            v0_3::request(request).map_err(|error| admitted.fail(conversion_status(&error)))?;
        Shared::<S>::check(&admitted, &request).map_err(|status| admitted.fail(status))?;
        Ok((admitted, request))
    }

    /// A unary RPC: `pick` takes the response message out of the converted result.
    async fn unary<T>(
        &self,
        method: &'static str,
        metadata: &tonic::metadata::MetadataMap,
        request: v0_3::Request,
        pick: impl FnOnce(v0_3::Response) -> Option<T>,
    ) -> Result<Response<T>, Status> {
        let (admitted, request) = self.admit(method, metadata, request)?;
        let result = self
            .0
            .unary(&admitted, request)
            .await
            .map_err(|status| admitted.fail(status))?;
        let response = v0_3::result(result).map_err(|error| {
            admitted.fail(to_status(
                JsonRpcError::internal_error()
                    .with_message(format!("the answer to `{method}` cannot be sent: {error}")),
                None,
            ))
        })?;
        let message = pick(response).ok_or_else(|| {
            admitted.fail(to_status(
                JsonRpcError::internal_error().with_message(format!(
                    "agent `{}` answered `{method}` with the wrong kind of result",
                    admitted.agent()
                )),
                None,
            ))
        })?;
        let mut response = Response::new(message);
        admitted.echo(response.metadata_mut());
        admitted.log(tonic::Code::Ok);
        Ok(response)
    }

    /// A streaming RPC: the service's events as `StreamResponse`s, ending after
    /// the one marked `final`, as the 0.3 SSE stream does.
    async fn streaming(
        &self,
        method: &'static str,
        metadata: &tonic::metadata::MetadataMap,
        request: v0_3::Request,
    ) -> Result<Response<EventStream>, Status> {
        let (admitted, request) = self.admit(method, metadata, request)?;
        let events = self
            .0
            .stream(&admitted, request, false)
            .await
            .map_err(|status| admitted.fail(status))?;
        let frames = events.map(|event| match event {
            Ok(event) => v0_3::stream_response(event).map_err(|error| {
                to_status(
                    JsonRpcError::internal_error()
                        .with_message(format!("a stream event cannot be sent: {error}")),
                    None,
                )
            }),
            Err(error) => Err(to_status(error, None)),
        });
        let frames = super::end_after_error(frames);
        let mut response = Response::new(Box::pin(frames) as EventStream);
        admitted.echo(response.metadata_mut());
        admitted.log(tonic::Code::Ok);
        Ok(response)
    }
}

#[tonic::async_trait]
impl<S: A2aService> pb::a2a_service_server::A2aService for V0_3<S> {
    async fn send_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<pb::SendMessageResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            method::SEND_MESSAGE,
            &metadata,
            v0_3::Request::SendMessage(message),
            |response| match response {
                v0_3::Response::Send(send) => Some(send),
                _ => None,
            },
        )
        .await
    }

    type SendStreamingMessageStream = EventStream;

    async fn send_streaming_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<EventStream>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.streaming(
            method::SEND_STREAMING_MESSAGE,
            &metadata,
            v0_3::Request::SendStreamingMessage(message),
        )
        .await
    }

    async fn get_task(
        &self,
        request: Request<pb::GetTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            method::GET_TASK,
            &metadata,
            v0_3::Request::GetTask(message),
            |response| match response {
                v0_3::Response::Task(task) => Some(task),
                _ => None,
            },
        )
        .await
    }

    async fn cancel_task(
        &self,
        request: Request<pb::CancelTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            method::CANCEL_TASK,
            &metadata,
            v0_3::Request::CancelTask(message),
            |response| match response {
                v0_3::Response::Task(task) => Some(task),
                _ => None,
            },
        )
        .await
    }

    type TaskSubscriptionStream = EventStream;

    async fn task_subscription(
        &self,
        request: Request<pb::TaskSubscriptionRequest>,
    ) -> Result<Response<EventStream>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.streaming(
            method::TASK_RESUBSCRIPTION,
            &metadata,
            v0_3::Request::TaskSubscription(message),
        )
        .await
    }

    async fn create_task_push_notification_config(
        &self,
        request: Request<pb::CreateTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            method::SET_TASK_PUSH_NOTIFICATION_CONFIG,
            &metadata,
            v0_3::Request::CreateTaskPushNotificationConfig(message),
            |response| match response {
                v0_3::Response::PushConfig(config) => Some(config),
                _ => None,
            },
        )
        .await
    }

    async fn get_task_push_notification_config(
        &self,
        request: Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            method::GET_TASK_PUSH_NOTIFICATION_CONFIG,
            &metadata,
            v0_3::Request::GetTaskPushNotificationConfig(message),
            |response| match response {
                v0_3::Response::PushConfig(config) => Some(config),
                _ => None,
            },
        )
        .await
    }

    async fn list_task_push_notification_config(
        &self,
        request: Request<pb::ListTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pb::ListTaskPushNotificationConfigResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            method::LIST_TASK_PUSH_NOTIFICATION_CONFIG,
            &metadata,
            v0_3::Request::ListTaskPushNotificationConfig(message),
            |response| match response {
                v0_3::Response::PushConfigs(list) => Some(list),
                _ => None,
            },
        )
        .await
    }

    async fn get_agent_card(
        &self,
        request: Request<pb::GetAgentCardRequest>,
    ) -> Result<Response<pb::AgentCard>, Status> {
        // The public card, as `/.well-known/agent-card.json` serves it: no
        // credentials needed.
        let admitted = self.0.admit(
            ProtocolVersion::V0_3,
            "GetAgentCard",
            request.metadata(),
            "",
            false,
        )?;
        let default = self.0.service.default_agent().as_deref() == Some(admitted.agent());
        let card = crate::server::cards::legacy_card(admitted.card.clone(), default);
        let card = v0_3::card(card).map_err(|error| {
            admitted.fail(to_status(
                JsonRpcError::internal_error()
                    .with_message(format!("the card cannot be sent: {error}")),
                None,
            ))
        })?;
        let mut response = Response::new(card);
        admitted.echo(response.metadata_mut());
        admitted.log(tonic::Code::Ok);
        Ok(response)
    }

    async fn delete_task_push_notification_config(
        &self,
        request: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pbjson_types::Empty>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            method::DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
            &metadata,
            v0_3::Request::DeleteTaskPushNotificationConfig(message),
            |response| match response {
                v0_3::Response::Deleted => Some(pbjson_types::Empty {}),
                _ => None,
            },
        )
        .await
    }
}
