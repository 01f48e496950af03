//! `lf.a2a.v1.A2AService`: A2A 1.0 over gRPC.

use tonic::{Request, Response, Status};

use super::door::{Door, EventStream, Wire, answered, internal};
use super::status::to_status;
use crate::a2a::StreamEvent;
use crate::a2a::v1::{self as model, ProtocolVersion};
use crate::jsonrpc::A2aRequest;
use crate::proto::ConversionError;
use crate::proto::v1::{self, pb};
use crate::service::{A2aResult, A2aService, NoExtendedCard, no_extended_card};

/// A2A 1.0's messages: the agent is the request's `tenant`; a stream settles on the
/// task.
pub(crate) struct Wire1;

impl Wire for Wire1 {
    const VERSION: ProtocolVersion = ProtocolVersion::V1_0;
    const SETTLES_ON_TASK: bool = true;
    type Request = v1::Request;
    type Response = v1::Response;
    type Event = pb::StreamResponse;

    fn tenant(request: &v1::Request) -> &str {
        request.tenant()
    }
    fn request(request: v1::Request) -> Result<A2aRequest, ConversionError> {
        v1::request(request)
    }
    fn result(result: A2aResult) -> Result<v1::Response, ConversionError> {
        v1::result(result)
    }
    fn event(event: StreamEvent) -> Result<pb::StreamResponse, ConversionError> {
        v1::stream_response(event)
    }
}

/// The 1.0 service over an [`A2aService`].
pub(crate) type V1<S> = Door<S, Wire1>;

type Events = EventStream<pb::StreamResponse>;

#[tonic::async_trait]
impl<S: A2aService> pb::a2a_service_server::A2aService for V1<S> {
    async fn send_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<pb::SendMessageResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            model::method::SEND_MESSAGE,
            &metadata,
            v1::Request::SendMessage(message),
            |response| match response {
                v1::Response::Send(send) => Some(send),
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
            model::method::SEND_STREAMING_MESSAGE,
            &metadata,
            v1::Request::SendStreamingMessage(message),
        )
        .await
    }

    async fn get_task(
        &self,
        request: Request<pb::GetTaskRequest>,
    ) -> Result<Response<pb::Task>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            model::method::GET_TASK,
            &metadata,
            v1::Request::GetTask(message),
            |response| match response {
                v1::Response::Task(task) => Some(task),
                _ => None,
            },
        )
        .await
    }

    async fn list_tasks(
        &self,
        request: Request<pb::ListTasksRequest>,
    ) -> Result<Response<pb::ListTasksResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            model::method::LIST_TASKS,
            &metadata,
            v1::Request::ListTasks(message),
            |response| match response {
                v1::Response::TaskList(list) => Some(list),
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
            model::method::CANCEL_TASK,
            &metadata,
            v1::Request::CancelTask(message),
            |response| match response {
                v1::Response::Task(task) => Some(task),
                _ => None,
            },
        )
        .await
    }

    type SubscribeToTaskStream = Events;

    async fn subscribe_to_task(
        &self,
        request: Request<pb::SubscribeToTaskRequest>,
    ) -> Result<Response<Events>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.streaming(
            model::method::SUBSCRIBE_TO_TASK,
            &metadata,
            v1::Request::SubscribeToTask(message),
        )
        .await
    }

    async fn create_task_push_notification_config(
        &self,
        request: Request<pb::TaskPushNotificationConfig>,
    ) -> Result<Response<pb::TaskPushNotificationConfig>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            model::method::CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
            &metadata,
            v1::Request::CreateTaskPushNotificationConfig(message),
            |response| match response {
                v1::Response::PushConfig(config) => Some(config),
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
            model::method::GET_TASK_PUSH_NOTIFICATION_CONFIG,
            &metadata,
            v1::Request::GetTaskPushNotificationConfig(message),
            |response| match response {
                v1::Response::PushConfig(config) => Some(config),
                _ => None,
            },
        )
        .await
    }

    async fn list_task_push_notification_configs(
        &self,
        request: Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Result<Response<pb::ListTaskPushNotificationConfigsResponse>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            model::method::LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
            &metadata,
            v1::Request::ListTaskPushNotificationConfigs(message),
            |response| match response {
                v1::Response::PushConfigs(list) => Some(list),
                _ => None,
            },
        )
        .await
    }

    async fn get_extended_agent_card(
        &self,
        request: Request<pb::GetExtendedAgentCardRequest>,
    ) -> Result<Response<pb::AgentCard>, Status> {
        let (metadata, _, message) = request.into_parts();
        let method = model::method::GET_EXTENDED_AGENT_CARD;
        let (admitted, _) = self.admit(
            method,
            &metadata,
            v1::Request::GetExtendedAgentCard(message),
        )?;
        // Answered by the server, as on JSON-RPC: the card is for authenticated
        // callers, and the service says whether the agent has one.
        let Some(principal) = admitted.context.principal.as_ref() else {
            let rejected = crate::server::auth::Unauthorized {
                challenges: crate::server::auth::declared_challenges(&admitted.card),
                bad_credential: false,
            };
            return Err(admitted.fail(super::gate::unauthenticated(admitted.agent(), &rejected)));
        };
        let Some(card) = self
            .shared
            .service
            .extended_card(admitted.agent(), principal)
        else {
            return Err(admitted.fail(to_status(
                no_extended_card(admitted.agent(), NoExtendedCard::NotConfigured),
                None,
            )));
        };
        let default = self.shared.service.default_agent().as_deref() == Some(admitted.agent());
        let card = crate::server::cards::v1_card(card, default);
        let card = v1::card_to_pb(card).map_err(|error| {
            admitted.fail(internal(format!(
                "the extended card cannot be sent: {error}"
            )))
        })?;
        Ok(answered(&admitted, card))
    }

    async fn delete_task_push_notification_config(
        &self,
        request: Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Result<Response<pbjson_types::Empty>, Status> {
        let (metadata, _, message) = request.into_parts();
        self.unary(
            model::method::DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
            &metadata,
            v1::Request::DeleteTaskPushNotificationConfig(message),
            |response| match response {
                v1::Response::Deleted => Some(pbjson_types::Empty {}),
                _ => None,
            },
        )
        .await
    }
}
