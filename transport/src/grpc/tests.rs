use futures::StreamExt as _;

#[tokio::test]
async fn a_stream_ends_right_after_its_first_error() {
    let items = futures::stream::iter([Ok(1), Err("boom"), Ok(2)]);
    let seen: Vec<Result<i32, &str>> = super::end_after_error(items).collect().await;
    assert_eq!(seen, [Ok(1), Err("boom")]);
}

#[tokio::test]
async fn a_stream_without_errors_is_passed_through_whole() {
    let items = futures::stream::iter([Ok::<_, ()>(1), Ok(2), Ok(3)]);
    let seen: Vec<_> = super::end_after_error(items).collect().await;
    assert_eq!(seen, [Ok(1), Ok(2), Ok(3)]);
}

mod call_limit {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::sync::{Notify, Semaphore};
    use tokio_util::sync::CancellationToken;
    use tonic::metadata::MetadataMap;

    use crate::a2a::v1::ProtocolVersion;
    use crate::a2a::{AgentCard, TaskQueryParams};
    use crate::grpc::gate::Shared;
    use crate::jsonrpc::{A2aRequest, JsonRpcError};
    use crate::server::ServerConfig;
    use crate::service::{A2aService, CallContext, Principal, Reply};

    /// Counts the calls inside it and holds each until released.
    #[derive(Default)]
    struct Held {
        inside: AtomicUsize,
        most: AtomicUsize,
        left: AtomicUsize,
        release: Notify,
    }

    impl A2aService for Held {
        fn card(&self, agent: &str) -> Option<std::sync::Arc<AgentCard>> {
            Some(std::sync::Arc::new(AgentCard::new(
                agent,
                "held",
                "http://127.0.0.1:1/",
                "1",
            )))
        }
        fn default_agent(&self) -> Option<String> {
            Some("a".to_owned())
        }
        fn agents(&self) -> Vec<String> {
            vec!["a".to_owned()]
        }
        fn extended_card(&self, _: &str, _: &Principal) -> Option<AgentCard> {
            None
        }
        async fn call(&self, _: CallContext, _: A2aRequest) -> Result<Reply, JsonRpcError> {
            let now = self.inside.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            self.release.notified().await;
            self.inside.fetch_sub(1, Ordering::SeqCst);
            self.left.fetch_add(1, Ordering::SeqCst);
            Err(JsonRpcError::task_not_found())
        }
    }

    #[tokio::test]
    async fn max_calls_lets_in_that_many_and_the_rest_wait() {
        let service = Arc::new(Held::default());
        let shared = Shared {
            service: Arc::clone(&service),
            config: Arc::new(ServerConfig::builder().max_calls(1).build()),
            permits: Some(Arc::new(Semaphore::new(1))),
            shutdown: CancellationToken::new(),
        };
        let calls: Vec<_> = (0..3)
            .map(|_| {
                let shared = shared.clone();
                tokio::spawn(async move {
                    let admitted = shared
                        .admit(
                            ProtocolVersion::V1_0,
                            "GetTask",
                            &MetadataMap::new(),
                            "",
                            true,
                        )
                        .expect("admitted");
                    let request = A2aRequest::GetTask(TaskQueryParams::new("t"));
                    shared.unary(&admitted, request).await
                })
            })
            .collect();
        let turns = async {
            for turn in 1..=3 {
                // One call is inside at a time: wait for it, then let it out.
                while service.inside.load(Ordering::SeqCst) == 0 {
                    tokio::task::yield_now().await;
                }
                service.release.notify_one();
                while service.left.load(Ordering::SeqCst) < turn {
                    tokio::task::yield_now().await;
                }
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(10), turns)
            .await
            .expect("each call got its turn within 10 s");
        for call in calls {
            let status = call.await.expect("joined").expect_err("the held error");
            assert_eq!(status.code(), tonic::Code::NotFound);
        }
        assert_eq!(service.most.load(Ordering::SeqCst), 1, "never two at once");
    }
}
