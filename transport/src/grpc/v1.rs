//! `lf.a2a.v1.A2AService`: A2A 1.0 over gRPC.

use std::pin::Pin;

use futures::{Stream, StreamExt as _};
use tonic::{Request, Response, Status};

use super::gate::{Admitted, Shared};
use super::status::{conversion_status, to_status};
use crate::a2a::v1::{self as model, ProtocolVersion};
use crate::jsonrpc::{A2aRequest, JsonRpcError};
use crate::proto::v1::{self, pb};
use crate::service::{A2aService, NoExtendedCard, no_extended_card};

/// The 1.0 service over an [`A2aService`].
pub(crate) struct V1<S>(pub(crate) Shared<S>);

/// The stream of a streaming 1.0 RPC.
pub(crate) type EventStream =
    Pin<Box<dyn Stream<Item = Result<pb::StreamResponse, Status>> + Send>>;

impl<S: A2aService> V1<S> {
    /// Lets the call in, converts it and checks it against the card.
    fn admit(
        &self,
        method: &'static str,
        metadata: &tonic::metadata::MetadataMap,
        request: v1::Request,
    ) -> Result<(Admitted, A2aRequest), Status> {
        let admitted = self.0.admit(
            ProtocolVersion::V1_0,
            method,
            metadata,
            request.tenant(),
            true,
        )?;
        let request =
            v1::request(request).map_err(|error| admitted.fail(conversion_status(&error)))?;
        Shared::<S>::check(&admitted, &request).map_err(|status| admitted.fail(status))?;
        Ok((admitted, request))
    }

    /// A unary RPC: `pick` takes the response message out of the converted result.
    async fn unary<T>(
        &self,
        method: &'static str,
        metadata: &tonic::metadata::MetadataMap,
        request: v1::Request,
        pick: impl FnOnce(v1::Response) -> Option<T>,
    ) -> Result<Response<T>, Status> {
        let (admitted, request) = self.admit(method, metadata, request)?;
        let result = self
            .0
            .unary(&admitted, request)
            .await
            .map_err(|status| admitted.fail(status))?;
        let response = v1::result(result).map_err(|error| {
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

    /// A streaming RPC: the service's events as `StreamResponse`s.
    async fn streaming(
        &self,
        method: &'static str,
        metadata: &tonic::metadata::MetadataMap,
        request: v1::Request,
    ) -> Result<Response<EventStream>, Status> {
        let (admitted, request) = self.admit(method, metadata, request)?;
        let events = self
            .0
            .stream(&admitted, request, true)
            .await
            .map_err(|status| admitted.fail(status))?;
        let frames = events.map(|event| match event {
            Ok(event) => v1::stream_response(event).map_err(|error| {
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

    type SendStreamingMessageStream = EventStream;

    async fn send_streaming_message(
        &self,
        request: Request<pb::SendMessageRequest>,
    ) -> Result<Response<EventStream>, Status> {
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

    type SubscribeToTaskStream = EventStream;

    async fn subscribe_to_task(
        &self,
        request: Request<pb::SubscribeToTaskRequest>,
    ) -> Result<Response<EventStream>, Status> {
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
        let Some(card) = self.0.service.extended_card(admitted.agent(), principal) else {
            return Err(admitted.fail(to_status(
                no_extended_card(admitted.agent(), NoExtendedCard::NotConfigured),
                None,
            )));
        };
        let default = self.0.service.default_agent().as_deref() == Some(admitted.agent());
        let card = crate::server::cards::v1_card(card, default);
        let card = v1::card_to_pb(card).map_err(|error| {
            admitted.fail(to_status(
                JsonRpcError::internal_error()
                    .with_message(format!("the extended card cannot be sent: {error}")),
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
