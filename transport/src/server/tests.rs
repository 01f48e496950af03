//! The serving loop's own settings.

#[tokio::test]
async fn accepted_connections_have_nodelay_set() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let _client = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    let (accepted, _) = listener.accept().await.expect("accept");
    super::set_nodelay(&accepted);
    assert!(accepted.nodelay().expect("read TCP_NODELAY"));
}

#[test]
fn the_connection_cap_never_exceeds_the_open_file_limit() {
    let Some(limit) = super::conn::open_file_limit() else {
        // Not Linux: the limit cannot be read without `unsafe`, and the cap stands.
        assert_eq!(super::conn::within_fd_limit(10), 10);
        return;
    };
    assert!(super::conn::within_fd_limit(usize::MAX) < limit);
    assert_eq!(super::conn::within_fd_limit(1), 1);
}

mod versions {
    use axum::http::{HeaderMap, Uri};

    use crate::a2a::v1::ProtocolVersion::{V0_3, V1_0};
    use crate::server::rpc::{requested_version, wire_form};

    fn asked(header: Option<&str>, uri: &str) -> Result<crate::a2a::v1::ProtocolVersion, String> {
        let mut headers = HeaderMap::new();
        if let Some(value) = header {
            headers.insert("a2a-version", value.parse().expect("a header value"));
        }
        let uri: Uri = uri.parse().expect("a URI");
        requested_version(&headers, &uri).map_err(|e| e.requested().to_owned())
    }

    #[test]
    fn the_header_wins_over_the_query_and_missing_means_0_3() {
        assert_eq!(asked(None, "/agents/a"), Ok(V0_3));
        assert_eq!(asked(Some(""), "/agents/a?A2A-Version=1.0"), Ok(V0_3));
        assert_eq!(asked(None, "/agents/a?x=1&a2a-version=1.0.1"), Ok(V1_0));
        assert_eq!(asked(Some("1.0"), "/agents/a?A2A-Version=99.0"), Ok(V1_0));
        assert_eq!(asked(Some("99.0"), "/agents/a"), Err("99.0".to_owned()));
    }

    #[test]
    fn the_method_name_decides_the_wire_form() {
        assert_eq!(
            wire_form(Some("SendMessage"), V0_3),
            (V1_0, Some("SendMessage"))
        );
        assert_eq!(
            wire_form(Some("message/send"), V1_0),
            (V0_3, Some("message/send"))
        );
        assert_eq!(wire_form(Some("Nope"), V1_0), (V1_0, None));
        assert_eq!(wire_form(None, V0_3), (V0_3, None));
    }
}

mod cards {
    use axum::http::HeaderMap;
    use serde_json::json;

    use crate::server::cards::{merge_missing, not_modified};

    #[test]
    fn merge_adds_what_is_missing_and_keeps_what_is_there() {
        let mut into = json!({"a": 1, "o": {"x": 1}, "l": [{"p": 1}, {"p": 2}], "s": [1]});
        merge_missing(
            &mut into,
            json!({"a": 2, "b": 3, "o": {"y": 2}, "l": [{"q": 1}, {"q": 2}], "s": [1, 2]}),
        );
        assert_eq!(
            into,
            json!({"a": 1, "b": 3, "o": {"x": 1, "y": 2},
                   "l": [{"p": 1, "q": 1}, {"p": 2, "q": 2}], "s": [1]})
        );
    }

    #[test]
    fn validators_if_none_match_first_then_if_modified_since() {
        let modified = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").expect("a date");
        let check = |pairs: &[(&'static str, &str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(*name, value.parse().expect("a header value"));
            }
            not_modified(&headers, "\"abc\"", modified)
        };
        assert!(!check(&[]));
        assert!(check(&[("if-none-match", "\"x\", \"abc\"")]));
        assert!(check(&[("if-none-match", "W/\"abc\"")]));
        assert!(check(&[("if-none-match", "*")]));
        assert!(!check(&[("if-none-match", "\"x\"")]));
        assert!(check(&[(
            "if-modified-since",
            "Sun, 06 Nov 1994 08:49:37 GMT"
        )]));
        assert!(!check(&[(
            "if-modified-since",
            "Sat, 05 Nov 1994 08:49:37 GMT"
        )]));
        // If-None-Match present: If-Modified-Since is ignored (RFC 9110 §13.1.3).
        assert!(!check(&[
            ("if-none-match", "\"x\""),
            ("if-modified-since", "Sun, 06 Nov 1994 08:49:37 GMT"),
        ]));
    }
}

#[test]
fn the_strict_card_prefix_takes_only_plain_path_segments() {
    use crate::server::ServerConfig;
    let prefix = |value: Option<&str>| {
        ServerConfig::builder()
            .strict_card_prefix(value)
            .build()
            .strict_card_prefix()
            .map(str::to_owned)
    };
    assert_eq!(
        ServerConfig::default().strict_card_prefix(),
        Some(ServerConfig::DEFAULT_STRICT_CARD_PREFIX)
    );
    assert_eq!(prefix(Some("/tck/v1.0/")), Some("/tck/v1.0".to_owned()));
    for refused in ["", "/", "tck", "/{name}", "/a//b", "/*rest", "/a b"] {
        assert_eq!(prefix(Some(refused)), None, "{refused:?}");
    }
    assert_eq!(prefix(None), None);
}

/// Makes `card` ask for a bearer token, under the scheme named `bearer`.
pub(super) fn require_bearer(card: &mut crate::a2a::AgentCard) {
    let scheme = crate::a2a::SecurityScheme::Http(crate::a2a::HttpAuthSecurityScheme {
        scheme: "bearer".to_owned(),
        bearer_format: None,
        description: None,
    });
    card.security_schemes = Some([("bearer".to_owned(), scheme)].into());
    card.security = Some(vec![[("bearer".to_owned(), Vec::new())].into()]);
}

/// The JSON-RPC routes as tower layers: the optional cap on calls let in at once.
mod layers {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::body::Body;
    use axum::http::Request;
    use tokio::sync::Semaphore;
    use tower::ServiceExt as _;

    use crate::a2a::AgentCard;
    use crate::jsonrpc::{A2aRequest, JsonRpcError};
    use crate::server::{ServerConfig, app};
    use crate::service::{A2aService, CallContext, Principal, Reply};

    /// Holds every call until released, counting how many are inside at once.
    struct Held {
        inside: AtomicUsize,
        most: AtomicUsize,
        release: Semaphore,
    }

    impl A2aService for Held {
        fn card(&self, agent: &str) -> Option<std::sync::Arc<AgentCard>> {
            let mut card = AgentCard::new(agent, "held", "http://127.0.0.1/", "1");
            // `guarded` asks for a bearer token; `held` lets anyone in.
            if agent == "guarded" {
                super::require_bearer(&mut card);
            }
            Some(std::sync::Arc::new(card))
        }
        fn default_agent(&self) -> Option<String> {
            Some(String::from("held"))
        }
        fn agents(&self) -> Vec<String> {
            vec![String::from("held")]
        }
        fn extended_card(&self, _: &str, _: &Principal) -> Option<AgentCard> {
            None
        }
        async fn call(&self, _: CallContext, _: A2aRequest) -> Result<Reply, JsonRpcError> {
            let now = self.inside.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            let permit = self.release.acquire().await;
            drop(permit);
            self.inside.fetch_sub(1, Ordering::SeqCst);
            Err(JsonRpcError::task_not_found())
        }
    }

    /// A service holding every call, none inside yet.
    fn held() -> Arc<Held> {
        Arc::new(Held {
            inside: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
            release: Semaphore::new(0),
        })
    }

    fn get_task() -> Request<Body> {
        Request::post("/")
            .header("content-type", "application/json")
            .body(Body::from(
                r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}}"#,
            ))
            .expect("a request")
    }

    #[tokio::test]
    async fn past_max_calls_a_call_waits_for_its_turn() {
        let held = held();
        let router = app(
            Arc::clone(&held),
            ServerConfig::builder().max_calls(1).build(),
        );
        let calls: Vec<_> = (0..3)
            .map(|_| tokio::spawn(router.clone().oneshot(get_task())))
            .collect();
        // Let the calls reach the layer; only one may be inside.
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert_eq!(held.inside.load(Ordering::SeqCst), 1);
        held.release.add_permits(3);
        for call in calls {
            let response = call.await.expect("joined").expect("answered");
            assert_eq!(response.status(), 200);
        }
        assert_eq!(held.most.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_caller_refused_at_authentication_never_waits_for_the_cap() {
        let held = held();
        let router = app(
            Arc::clone(&held),
            ServerConfig::builder().max_calls(1).build(),
        );
        let inside = tokio::spawn(router.clone().oneshot(get_task()));
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert_eq!(held.inside.load(Ordering::SeqCst), 1, "the cap is full");
        let unauthenticated = Request::post("/agents/guarded")
            .header("content-type", "application/json")
            .body(Body::from(
                r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}}"#,
            ))
            .expect("a request");
        // Answered while the one place under the cap is still taken.
        let refused = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            router.oneshot(unauthenticated),
        )
        .await
        .expect("refused at once, not after the call inside")
        .expect("answered");
        assert_eq!(refused.status(), 401);
        held.release.add_permits(1);
        inside.await.expect("joined").expect("answered");
    }

    /// The routes beside the A2A ones are served inside the layer that tells
    /// `on_answer`, naming their route; the A2A routes and the 404 are as in `app`.
    #[tokio::test]
    async fn routes_beside_are_answered_and_told_by_their_route() {
        use std::sync::Mutex;

        use axum::extract::MatchedPath;
        use axum::http::StatusCode;

        use crate::server::{OnAnswer, RequestLog, app_beside};

        let told = Arc::new(Mutex::new(Vec::new()));
        let on_answer = {
            let told = Arc::clone(&told);
            OnAnswer::new(move |method, response, _| {
                let extensions = response.extensions();
                let name = extensions
                    .get::<RequestLog>()
                    .and_then(|log| log.method)
                    .map(str::to_owned)
                    .or_else(|| {
                        extensions
                            .get::<MatchedPath>()
                            .map(|route| format!("{method} {}", route.as_str()))
                    });
                told.lock()
                    .expect("not poisoned")
                    .push((name, response.status()));
            })
        };
        let beside =
            axum::Router::new().route("/hello/{who}", axum::routing::get(|| async { "hi" }));
        let held = held();
        held.release.add_permits(1);
        let app = app_beside(
            held,
            ServerConfig::builder().on_answer(on_answer).build(),
            beside,
        );
        let hello = app
            .clone()
            .oneshot(
                Request::get("/hello/you")
                    .body(Body::empty())
                    .expect("a request"),
            )
            .await
            .expect("answered");
        assert_eq!(hello.status(), StatusCode::OK);
        let call = app.clone().oneshot(get_task()).await.expect("answered");
        assert_eq!(call.status(), StatusCode::OK);
        let missing = app
            .oneshot(
                Request::get("/nowhere")
                    .body(Body::empty())
                    .expect("a request"),
            )
            .await
            .expect("answered");
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        assert_eq!(
            *told.lock().expect("not poisoned"),
            [
                (Some("GET /hello/{who}".to_owned()), StatusCode::OK),
                (Some("tasks/get".to_owned()), StatusCode::OK),
                // Read as an HTTP+JSON resource, which names its route.
                (Some("GET /{*resource}".to_owned()), StatusCode::NOT_FOUND),
            ]
        );
    }

    #[tokio::test]
    async fn without_a_cap_calls_run_side_by_side() {
        let held = held();
        let router = app(Arc::clone(&held), ServerConfig::default());
        let calls: Vec<_> = (0..3)
            .map(|_| tokio::spawn(router.clone().oneshot(get_task())))
            .collect();
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert_eq!(held.inside.load(Ordering::SeqCst), 3);
        held.release.add_permits(3);
        for call in calls {
            call.await.expect("joined").expect("answered");
        }
    }
}
