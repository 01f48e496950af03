//! `a2a.v1.A2AService`: A2A 0.3.0 over gRPC.

use tonic::{Request, Response, Status};

use super::door::{Door, EventStream, Wire, answered, internal};
use crate::a2a::StreamEvent;
use crate::a2a::v1::ProtocolVersion;
use crate::jsonrpc::{A2aRequest, method};
use crate::proto::ConversionError;
use crate::proto::v0_3::{self, pb};
use crate::service::{A2aResult, A2aService};

/// A2A 0.3's messages: no tenant (the agent comes from the metadata or is the
/// default one); a stream ends after the status update marked `final`, as the 0.3
/// SSE stream does.
pub(crate) struct Wire03;

impl Wire for Wire03 {
    const VERSION: ProtocolVersion = ProtocolVersion::V0_3;
    const SETTLES_ON_TASK: bool = false;
    type Request = v0_3::Request;
    type Response = v0_3::Response;
    type Event = pb::StreamResponse;

    fn tenant(_: &v0_3::Request) -> &str {
        ""
    }
    fn request(request: v0_3::Request) -> Result<A2aRequest, ConversionError> {
        v0_3::request(request)
    }
    fn result(result: A2aResult) -> Result<v0_3::Response, ConversionError> {
        v0_3::result(result)
    }
    fn event(event: StreamEvent) -> Result<pb::StreamResponse, ConversionError> {
        v0_3::stream_response(event)
    }
}

/// The 0.3 service over an [`A2aService`].
pub(crate) type V0_3<S> = Door<S, Wire03>;

type Events = EventStream<pb::StreamResponse>;

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

    type SendStreamingMessageStream = Events;

    async fn send_streaming_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<Events>, Status> {
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

    type TaskSubscriptionStream = Events;

    async fn task_subscription(
        &self,
        request: Request<pb::TaskSubscriptionRequest>,
    ) -> Result<Response<Events>, Status> {
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
        let admitted = self.shared.admit(
            ProtocolVersion::V0_3,
            "GetAgentCard",
            request.metadata(),
            "",
            false,
        )?;
        let default = self.shared.service.default_agent().as_deref() == Some(admitted.agent());
        let card = crate::server::cards::legacy_card((*admitted.card).clone(), default);
        let card = v0_3::card(card).map_err(|error| {
            admitted.fail(internal(format!("the card cannot be sent: {error}")))
        })?;
        Ok(answered(&admitted, card))
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
