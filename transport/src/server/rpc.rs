//! The JSON-RPC endpoint: from an HTTP request to a service call and back, unary
//! or as an SSE stream.

use std::convert::Infallible;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use serde_json::{Value, json};
use tracing::{Instrument as _, Span, field};

use self::fast::decode_send;
use super::reply::{self, Binding, invalid_request};
use super::{
    AppState, EXTENSIONS_HEADER, ShutdownSignal, V1_EXTENSIONS_HEADER, auth, extensions, names, sse,
};
use crate::a2a::v1::{self, ProtocolVersion, RpcCode, UnsupportedVersion, VERSION_HEADER};
use crate::a2a::{AgentCard, StreamEvent};
use crate::bounded::Bounded;
use crate::jsonrpc::{
    A2aCall, A2aRequest, JsonRpcError, JsonRpcRequest, JsonRpcResponse, RequestError, RequestId,
    method,
};
use crate::service::{A2aResult, A2aService, CallContext, NumberedEventStream, Principal, Reply};

mod fast;

/// What the outermost layer resolved about a call, for the layers inside it and the
/// handler: the agent, its card, the extensions the request activates, the form
/// errors take before the body names its method, and the call's span; and, once the
/// authentication layer let the call in, who the caller is. Both bindings' outermost
/// layers make one ([`Resolved::new`]), so the layers inside (authentication, the
/// body) are the same for both.
#[derive(Clone)]
pub(super) struct Resolved {
    /// Shared with the call's context and its log line.
    pub(super) agent: Arc<str>,
    pub(super) card: Arc<AgentCard>,
    pub(super) activated: Activated,
    /// The version the request's header asks for, if it is one served.
    pub(super) asked: Result<ProtocolVersion, UnsupportedVersion>,
    /// The binding the request came in by: the form of refusals.
    pub(super) binding: Binding,
    pub(super) span: Span,
    /// Who the authentication layer, inside, found the caller to be (`None`:
    /// anonymous, and the agent allows it); unset until it let the call in. Here
    /// rather than in an extension of its own, which cost an allocation a call.
    pub(super) authenticated: OnceLock<Option<Principal>>,
}

impl Resolved {
    /// What is known of a call to `agent` (whose card is `card`) from its head: the
    /// extensions it activates and the version its header asks for; its span is
    /// `span`.
    pub(super) fn new(
        agent: Arc<str>,
        card: Arc<AgentCard>,
        headers: &HeaderMap,
        uri: &Uri,
        binding: Binding,
        span: Span,
    ) -> Self {
        // 0.3 requests may name extensions under either spelling (what the Python
        // SDK's compat layer accepts); 1.0 requests under `A2A-Extensions` only. Each
        // header is looked up once: every call comes through here.
        let legacy = headers.get_all(&names::EXTENSIONS);
        let v1 = headers.get_all(&names::V1_EXTENSIONS);
        let activated = Activated {
            v0_3: extensions::activate(
                &card,
                extensions::requested_in(legacy.iter().chain(v1.iter())),
            ),
            v1_0: extensions::activate(&card, extensions::requested_in(v1.iter())),
            // The 0.3 echo uses the spelling the request used: `A2A-Extensions` only
            // when it sent that one alone.
            v0_3_echo: if v1.iter().next().is_some() && legacy.iter().next().is_none() {
                V1_EXTENSIONS_HEADER
            } else {
                EXTENSIONS_HEADER
            },
        };
        Self {
            asked: requested_version(headers, uri),
            agent,
            card,
            activated,
            binding,
            span,
            authenticated: OnceLock::new(),
        }
    }

    /// The form of errors found before the body names its method: the one the
    /// path names on HTTP+JSON; on JSON-RPC the one the header asks for, 0.3 when it
    /// names no version served.
    pub(super) fn header_form(&self) -> ProtocolVersion {
        match self.binding {
            Binding::Rest(version) => version,
            Binding::JsonRpc => self.asked.clone().unwrap_or(ProtocolVersion::V0_3),
        }
    }

    /// The log line's facts of a call to this agent.
    fn log(&self, method: Option<&'static str>, version: ProtocolVersion) -> RequestLog {
        RequestLog {
            agent: Arc::clone(&self.agent),
            method,
            version,
        }
    }

    /// Finishes an answer on its way out: names the call for the log line, unless
    /// the handler did ([`RequestLog`]: the method and the version it answered in),
    /// as `method` answered in `version`; and echoes the extensions activated for
    /// answers in the version the answer is in.
    pub(super) fn finish(
        &self,
        mut response: Response,
        version: ProtocolVersion,
        method: Option<&'static str>,
    ) -> Response {
        let version = match response.extensions().get::<RequestLog>() {
            Some(log) => log.version,
            None => {
                response.extensions_mut().insert(self.log(method, version));
                version
            }
        };
        let (echo_name, echoed) = self.activated.of(version);
        let echo = echoed.join(", ");
        if !echo.is_empty()
            && let Ok(value) = HeaderValue::from_str(&echo)
        {
            response.headers_mut().insert(echo_name, value);
        }
        response
    }
}

/// Layer 1 (outermost) of the JSON-RPC routes: resolves the agent (`/` serves the
/// default one) and its card — 404 when there is none — and, on the way out, echoes
/// the activated extensions and names the call for the log line, whichever layer
/// answered. One boxed future a call: the inner layers are called in place, at
/// once, and their answer awaited in it.
pub(super) enum Resolve {}

impl<S, I> tower::Service<Request> for WithState<S, Resolve, I>
where
    S: A2aService,
    I: Inner + Clone + 'static,
    I::Future: 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = futures::future::BoxFuture<'static, Result<Response, Infallible>>;

    /// Always ready: the layers inside are asked in the call (`call_in_place`).
    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // Read as the router would, without its matching: the routes and `Dispatch`
        // hand only these paths here.
        let Some((route, named)) = RpcRoute::of(request.uri().path()) else {
            return Box::pin(std::future::ready(Ok(unresolved())));
        };
        let resolving = match agent_named(&self.state, named) {
            Ok(agent) => resolve(&self.state, agent, request, &mut self.inner),
            Err(refusal) => Resolution::Refused(refusal()),
        };
        // The answer's future made here, so that the boxed one holds it alone, not
        // the resolution it was made from beside it.
        let answer = match resolving {
            Resolution::Call(resolving) => futures::future::Either::Left(resolving.answer()),
            Resolution::Refused(refused) => {
                futures::future::Either::Right(std::future::ready(refused))
            }
        };
        // Mapped rather than awaited in an `async` block, which would hold the answer's
        // future twice (as captured and as awaited).
        Box::pin(futures::FutureExt::map(answer, move |mut response| {
            // A call's answer names its method; any other names its route, as the
            // card routes' answers do (`stamp_route`).
            let named = response
                .extensions()
                .get::<RequestLog>()
                .is_some_and(|log| log.method.is_some());
            if !named {
                response.extensions_mut().insert(route);
            }
            Ok(response)
        }))
    }
}

/// The JSON-RPC route an answer that names no call came by (`/agents/{name}`), for
/// the layers outside the router that label answers by route (the edge's metrics):
/// a JSON-RPC call is handed to its route's service without the router's matching
/// (see `Dispatch`), so its answers carry this instead of axum's `MatchedPath`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RpcRoute(pub &'static str);

impl RpcRoute {
    /// The route of a JSON-RPC endpoint's `path`, and the agent's name in it as
    /// written (percent-encoded; `None` at `/`, the default agent's); `None` for a
    /// path that is no JSON-RPC endpoint.
    pub(super) fn of(path: &str) -> Option<(Self, Option<&str>)> {
        if path == "/" {
            return Some((Self("/"), None));
        }
        let rest = path.strip_prefix("/agents/")?;
        let (name, route) = match rest.strip_suffix('/') {
            Some(name) => (name, "/agents/{name}/"),
            None => (rest, "/agents/{name}"),
        };
        (!name.is_empty() && !name.contains('/')).then_some((Self(route), Some(name)))
    }
}

/// The agent a JSON-RPC path names (`named`, as written), or the default agent at
/// `/`; else what makes the answer that refuses the call.
fn agent_named<S: A2aService>(
    state: &AppState<S>,
    named: Option<&str>,
) -> Result<Arc<str>, fn() -> Response> {
    match named {
        // Decoded as the HTTP+JSON binding decodes its segments (`RpcRoute::of`
        // found it non-empty).
        Some(name) => super::rest::path::decode(name)
            .map(Arc::from)
            .ok_or(reply::agent_name_not_utf8),
        None => state
            .service
            .default_agent()
            .map(Arc::from)
            .ok_or(reply::no_default_agent),
    }
}

/// The work of [`Resolve`] up to the inner layers: the call to `agent` resolved and
/// handed to `inner` in its span, or the answer that refuses it.
fn resolve<S, I>(
    state: &AppState<S>,
    agent: Arc<str>,
    mut request: Request,
    inner: &mut I,
) -> Resolution<InPlace<I>>
where
    S: A2aService,
    I: tower::Service<Request, Response = Response, Error = Infallible> + Clone,
{
    let Some(card) = state.service.card(&agent) else {
        return Resolution::Refused(reply::agent_not_found(&agent));
    };
    let span = tracing::info_span!(
        "a2a.jsonrpc",
        agent = %agent,
        method = field::Empty,
        rpc_id = field::Empty,
        version = field::Empty,
    );
    let resolved = Resolved::new(
        agent,
        card,
        request.headers(),
        request.uri(),
        Binding::JsonRpc,
        span.clone(),
    );
    let header_form = resolved.header_form();
    // Shared, not copied: the layers and the handler inside each extract it.
    let resolved = Arc::new(resolved);
    request.extensions_mut().insert(Arc::clone(&resolved));
    // The inner layers make their spans as they are called: in the call's.
    let answer = span.in_scope(|| super::call_in_place(inner, request));
    Resolution::Call(Resolving {
        answer: answer.instrument(span),
        resolved,
        header_form,
    })
}

/// What [`resolve`] makes of a request.
enum Resolution<F> {
    /// The call, its answer under way.
    Call(Resolving<F>),
    /// The answer that refuses it (no such agent, say).
    Refused(Response),
}

/// A resolved call, its answer under way.
struct Resolving<F> {
    answer: tracing::instrument::Instrumented<F>,
    resolved: Arc<Resolved>,
    header_form: ProtocolVersion,
}

impl<F: Future<Output = Result<Response, Infallible>>> Resolving<F> {
    /// The answer, finished. (Not an `async fn`, which would hold `self` twice.)
    fn answer(self) -> impl Future<Output = Response> {
        let Self {
            answer,
            resolved,
            header_form,
        } = self;
        // A combinator, not an `async` block: that would hold `answer` twice, as
        // captured and as awaited.
        futures::FutureExt::map(answer, move |answered| {
            let response = match answered {
                Ok(response) => response,
                Err(never) => match never {},
            };
            // The handler named the call; a layer that answered before it did not.
            resolved.finish(response, header_form, None)
        })
    }
}

/// The future of [`super::call_in_place`] on `I`.
type InPlace<I> = futures::future::Either<
    <I as tower::Service<Request>>::Future,
    tower::util::Oneshot<I, Request>,
>;

/// A layer of the JSON-RPC routes that needs the server's state: the service it
/// makes wraps the inner one with the state, and `K` says which layer it is
/// ([`Resolve`], [`Authenticate`] or [`ReadWholeBody`]). A tower layer rather than
/// an axum `from_fn` middleware, which clones the inner service, boxes it into the
/// `Next` it hands the middleware, and boxes the middleware's future and the inner
/// one's, on every call.
pub(super) struct StateLayer<S, K> {
    state: AppState<S>,
    kind: PhantomData<fn() -> K>,
}

impl<S, K> StateLayer<S, K> {
    /// The layer `K`, with `state`.
    pub(super) fn new(state: AppState<S>) -> Self {
        Self {
            state,
            kind: PhantomData,
        }
    }
}

impl<S, K> Clone for StateLayer<S, K> {
    fn clone(&self) -> Self {
        Self::new(self.state.clone())
    }
}

impl<S, K, I> tower::Layer<I> for StateLayer<S, K> {
    type Service = WithState<S, K, I>;

    fn layer(&self, inner: I) -> Self::Service {
        WithState {
            state: self.state.clone(),
            inner,
            kind: PhantomData,
        }
    }
}

/// The service of a [`StateLayer`]: the inner service, with the state.
pub(super) struct WithState<S, K, I> {
    state: AppState<S>,
    inner: I,
    kind: PhantomData<fn() -> K>,
}

impl<S, K, I: Clone> Clone for WithState<S, K, I> {
    fn clone(&self) -> Self {
        Self {
            state: self.state.clone(),
            inner: self.inner.clone(),
            kind: PhantomData,
        }
    }
}

/// (The layers inside `resolve` run in the call's span: it instruments them.)
///
/// Layer 2: authentication against the agent's card and the server's credentials;
/// 401 with the card's challenges when the caller is not let in. It decides before
/// the call and adds nothing after it, so it passes the inner service's future
/// through as it is.
pub(super) enum Authenticate {}

impl<S, I> tower::Service<Request> for WithState<S, Authenticate, I>
where
    S: A2aService,
    I: tower::Service<Request, Response = Response, Error = Infallible> + Clone,
{
    type Response = Response;
    type Error = Infallible;
    type Future =
        futures::future::Either<std::future::Ready<Result<Response, Infallible>>, InPlace<I>>;

    /// Always ready: the inner layers' readiness (a place under the cap on calls)
    /// is asked for only once the caller is let in, so a caller refused here never
    /// waits for one.
    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        use futures::future::Either;
        // `resolve`, outside, put it there; a route without it is a bug here.
        let Some(resolved) = request.extensions().get::<Arc<Resolved>>().cloned() else {
            return Either::Left(std::future::ready(Ok(unresolved())));
        };
        match auth::authenticate(&resolved.card, self.state.config.auth(), request.headers()) {
            Ok(principal) => {
                // Each request resolves its own: nothing set it before.
                let _ = resolved.authenticated.set(principal);
                Either::Right(super::call_in_place(&mut self.inner, request))
            }
            Err(rejected) => {
                tracing::debug!(bad_credential = rejected.bad_credential, "unauthenticated");
                Either::Left(std::future::ready(Ok(reply::unauthorized(
                    resolved.binding,
                    &resolved.agent,
                    RequestId::Null,
                    &rejected,
                ))))
            }
        }
    }
}

/// Layer 4 (after the optional concurrency limit): the body must be JSON, at most
/// the body limit, and arrive within the request timeout; it reaches the handler
/// read whole. On HTTP+JSON a request without a body (a `GET`, a `DELETE`, a
/// `POST` with neither `Content-Type` nor a body) needs no content type. One boxed
/// future a call: it awaits the body before the call.
pub(super) enum ReadWholeBody {}

impl<S, I> tower::Service<Request> for WithState<S, ReadWholeBody, I>
where
    S: A2aService,
    I: Inner + Clone + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = futures::future::BoxFuture<'static, Result<Response, Infallible>>;

    /// Always ready: the handler inside is asked once the body is read.
    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // What needs no waiting is done before the future starts, which then holds
        // the request's parts once (an `async` body would also hold the request
        // they came from, and a second copy of each argument).
        let Some(resolved) = request.extensions().get::<Arc<Resolved>>().cloned() else {
            return Box::pin(std::future::ready(Ok(unresolved())));
        };
        let (parts, body) = match whole_body_wanted(&resolved, request) {
            Ok(wanted) => wanted,
            Err(refused) => return Box::pin(std::future::ready(Ok(*refused))),
        };
        let config = &self.state.config;
        let (limit, timeout) = (config.body_limit(), config.request_timeout());
        let inner = self.inner.clone();
        Box::pin(async move {
            match read_body(body, &parts.headers, limit, timeout).await {
                Ok(body) => {
                    let request = Request::from_parts(parts, Body::from(body));
                    tower::ServiceExt::oneshot(inner, request).await
                }
                Err(error) => Ok(error.into_response(resolved.binding, limit, timeout)),
            }
        })
    }
}

/// The service a layer of the JSON-RPC routes hands a request on to: the layers
/// below it and the handler, never failing, their futures sent between threads.
pub(super) trait Inner:
    tower::Service<Request, Response = Response, Error = Infallible, Future: Send> + Send
{
}

impl<T> Inner for T where
    T: tower::Service<Request, Response = Response, Error = Infallible, Future: Send> + Send
{
}

/// The answer to a call that reached a layer inside `resolve` without its mark: a
/// route that lacks the layer, a bug here.
pub(super) fn unresolved() -> Response {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "the call was not resolved to an agent",
    )
        .into_response()
}

/// The request taken apart for its body to be read whole, or the refusal of a body
/// that is not what the binding takes (415).
fn whole_body_wanted(
    resolved: &Resolved,
    request: Request,
) -> Result<(Parts, Body), Box<Response>> {
    let bodiless = resolved.binding != Binding::JsonRpc
        && !request.headers().contains_key(CONTENT_TYPE)
        && request
            .headers()
            .get(CONTENT_LENGTH)
            .is_none_or(|length| length.as_bytes() == b"0");
    if !bodiless && let Err(detail) = check_content_type(request.headers(), resolved.binding) {
        return Err(Box::new(unsupported_media_type(
            &detail,
            resolved.binding,
            &resolved.header_form(),
        )));
    }
    Ok(request.into_parts())
}

/// The JSON-RPC handler, inside the layers: decodes the call, checks what the card
/// demands, and hands it to the service. A service of its own, not an axum handler,
/// so that the layers above clone a shared count rather than a boxed route.
pub(super) struct Handler<S>(AppState<S>);

impl<S> Handler<S> {
    /// The handler, with the server's state.
    pub(super) fn new(state: AppState<S>) -> Self {
        Self(state)
    }
}

impl<S> Clone for Handler<S> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<S: A2aService> tower::Service<Request> for Handler<S> {
    type Response = Response;
    type Error = Infallible;
    type Future = futures::future::BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let state = self.0.clone();
        Box::pin(futures::FutureExt::map(call(state, request), Ok))
    }
}

/// The work of [`Handler`]. The futures from here to the service are held one
/// inside the other and this one is boxed whole per call, so none is an `async fn`
/// (whose future holds its arguments twice, as called and once its body starts) and
/// each takes apart or hands on what it was given before its future starts.
fn call<S: A2aService>(
    state: AppState<S>,
    request: Request,
) -> impl Future<Output = Response> + Send {
    let (mut parts, body) = request.into_parts();
    async move {
        // Both put there by the layers outside; a route without them is a bug here.
        let Some(resolved) = parts.extensions.get::<Arc<Resolved>>().cloned() else {
            return unresolved();
        };
        let Some(principal) = resolved.authenticated.get().cloned() else {
            return unresolved();
        };
        // Read whole by the body layer already: this only takes the buffer.
        let body = whole(body).await.unwrap_or_default();
        let span = resolved.span.clone();
        let asked = resolved.asked.clone();
        let call = Call::new(state, &resolved);
        let outcome = call
            .run(&parts, asked, principal, body)
            .instrument(span)
            .await;
        let mut response = outcome.response;
        // The answer's extensions go in the request's map, emptied: its room is made
        // already, where a first extension on the answer allocates the map, its table
        // and the value (two allocations a call fewer).
        let mut extensions = std::mem::take(&mut parts.extensions);
        extensions.clear();
        extensions.extend(std::mem::take(response.extensions_mut()));
        extensions.insert(resolved.log(outcome.method, outcome.version));
        *response.extensions_mut() = extensions;
        response
    }
}

/// The extensions a request activates, per wire form (the form is known only once
/// the body names its method).
#[derive(Clone, Debug)]
pub(super) struct Activated {
    v0_3: Vec<String>,
    v1_0: Vec<String>,
    /// The header the 0.3 answer echoes them in.
    v0_3_echo: &'static str,
}

impl Activated {
    /// The header to echo in and the activated URIs, for answers in `version`.
    pub(super) fn of(&self, version: ProtocolVersion) -> (&'static str, &[String]) {
        match version {
            ProtocolVersion::V0_3 => (self.v0_3_echo, &self.v0_3),
            ProtocolVersion::V1_0 => (V1_EXTENSIONS_HEADER, &self.v1_0),
        }
    }
}

/// What [`Call::run`] hands back: the answer, the wire form it is in (for the
/// extensions echo) and the JSON-RPC method once known (for the log line).
struct Outcome {
    method: Option<&'static str>,
    version: ProtocolVersion,
    response: Response,
}

/// One request to one agent (on either binding), with what the server knows so far.
pub(super) struct Call<S> {
    pub(super) state: AppState<S>,
    pub(super) agent: Arc<str>,
    pub(super) card: Arc<AgentCard>,
    /// The extensions the request activated.
    pub(super) activated: Activated,
    /// The request's span; streams carry it past the handler's return.
    pub(super) span: Span,
    /// Set when running under [`serve`](super::serve): ends streams at shutdown.
    pub(super) shutdown: Option<ShutdownSignal>,
}

/// What a service call answered, once checked to be the kind its method expects.
pub(super) enum Answer {
    /// A unary result.
    Unary(A2aResult),
    /// A stream of events, each with its number in the task's log when it has one.
    Stream(NumberedEventStream),
}

/// The version a request asks for with the `A2A-Version` header, else the
/// `A2A-Version` query parameter (spec §3.6.1); missing or empty means 0.3.
pub(super) fn requested_version(
    headers: &HeaderMap,
    uri: &Uri,
) -> Result<ProtocolVersion, UnsupportedVersion> {
    if let Some(value) = headers.get(&names::VERSION) {
        let text = String::from_utf8_lossy(value.as_bytes());
        return ProtocolVersion::from_header(Some(&text));
    }
    let query = uri.query().unwrap_or_default();
    let value = query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        key.eq_ignore_ascii_case(VERSION_HEADER).then_some(value)
    });
    ProtocolVersion::from_header(value)
}

/// The wire form of a request, from its method name, and the method as a static
/// name when it is one A2A defines.
///
/// The method name decides, as in the official SDK servers, which route by name on
/// one URL: a 1.0 name is served as 1.0 even without a header (the draft
/// conformance case VER-NEG-002; "missing means 0.3" cannot apply to a name 0.3
/// does not have). A 0.3 name is served as 0.3 even with `A2A-Version: 1.0`: a
/// client that names `message/send` reads 0.3 answers, so answering it in 0.3 is
/// the one answer it can use (the JS SDK does the same; the Python SDK refuses it
/// with -32603, which helps no one). The header still has to name a version served
/// (else -32009). A name neither version has is answered in the form the header
/// asks for.
pub(super) fn wire_form(
    named: Option<&str>,
    asked: ProtocolVersion,
) -> (ProtocolVersion, Option<&'static str>) {
    let Some(named) = named else {
        return (asked, None);
    };
    if let Some(known) = v1::method::ALL.into_iter().find(|known| *known == named) {
        return (ProtocolVersion::V1_0, Some(known));
    }
    if let Some(known) = method::ALL.into_iter().find(|known| *known == named) {
        return (ProtocolVersion::V0_3, Some(known));
    }
    (asked, None)
}

impl<S: A2aService> Call<S> {
    /// Runs the call, once the layers have let it in: authenticated as `principal`,
    /// its body read whole.
    #[expect(clippy::manual_async_fn, reason = "holds its arguments once")]
    fn run<'a>(
        self,
        parts: &'a Parts,
        asked: Result<ProtocolVersion, UnsupportedVersion>,
        principal: Option<Principal>,
        body: Bytes,
    ) -> impl Future<Output = Outcome> + Send + 'a
    where
        S: 'a,
    {
        async move {
            // A well-formed send, the hot path, is typed straight from the bytes;
            // anything else (another method, a version the header refuses, a body
            // with something wrong) takes the full decoder, which names what is
            // wrong. In a block of its own, so that the decoded call is held once
            // across the wait below.
            let (version, named, call) = {
                let fast = asked.as_ref().ok().and_then(|_| decode_send(&body));
                match fast {
                    Some(fast) => {
                        self.span.record("version", fast.0.as_str());
                        fast
                    }
                    None => match self.decode(asked, &body) {
                        Ok(decoded) => decoded,
                        Err(early) => return *early,
                    },
                }
            };
            let outcome = |response| Outcome {
                method: named,
                version,
                response,
            };
            let method = named.unwrap_or_else(|| call.request.method());
            self.span.record("method", method);
            self.span.record("rpc_id", field::display(&call.id));
            if let Err(error) = self.check_call(version, method, &call.request) {
                tracing::debug!(code = error.code, message = %error.message, "request rejected");
                return outcome(answer_error(
                    version,
                    call.request.is_streaming(),
                    call.id,
                    error,
                ));
            }
            if matches!(call.request, A2aRequest::GetAuthenticatedExtendedCard) {
                return outcome(self.extended_card(version, call.id, principal.as_ref()));
            }
            let context = match self.context(&parts.headers, version, principal, call.id.clone()) {
                Ok(context) => context,
                Err(error) => {
                    return outcome(answer_error(
                        version,
                        call.request.is_streaming(),
                        call.id,
                        error,
                    ));
                }
            };
            outcome(self.dispatch(version, method, context, call).await)
        }
    }

    /// Decodes a call with every check, for [`Call::run`]: the version it is in, its
    /// method when the body names a known one, and the typed call; or the answer to
    /// a request that is not one.
    fn decode(
        &self,
        asked: Result<ProtocolVersion, UnsupportedVersion>,
        body: &[u8],
    ) -> Result<(ProtocolVersion, Option<&'static str>, A2aCall), Box<Outcome>> {
        // Errors found before the body names its method are in the form the header
        // asks for (0.3 when it names no version served).
        let header_form = asked.clone().unwrap_or(ProtocolVersion::V0_3);
        let early = |response| Outcome {
            method: None,
            version: header_form,
            response,
        };
        let value: Value = match serde_json::from_slice(body) {
            Ok(value) => value,
            Err(error) => {
                let error = JsonRpcError::parse_error()
                    .with_message(format!("Invalid JSON payload: {error}"));
                tracing::debug!(code = error.code, message = %error.message, "request rejected");
                return Err(Box::new(early(reply::error(
                    RequestId::Null,
                    in_form(header_form, error),
                ))));
            }
        };
        let (version, named) = wire_form(value.get("method").and_then(Value::as_str), header_form);
        self.span.record("version", version.as_str());
        // The streaming methods answer every error as a stream, even one in the
        // request itself (bad params, a missing id): a client of `message/stream`
        // reads SSE, and the official Python client turns an `application/json`
        // answer into a content-type exception instead of the error.
        let streaming = named.is_some_and(is_streaming);
        let outcome = |response| Outcome {
            method: named,
            version,
            response,
        };
        if let Err(unsupported) = asked {
            let id = value
                .get("id")
                .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
                .unwrap_or(RequestId::Null);
            let supported = ProtocolVersion::ALL.map(ProtocolVersion::as_str);
            let error = v1::version_not_supported(unsupported.requested(), &supported);
            let message = format!("{} (supported: {})", error.message, supported.join(", "));
            tracing::debug!(requested = unsupported.requested(), "version not supported");
            return Err(Box::new(outcome(answer_error(
                version,
                streaming,
                id,
                error.with_message(message),
            ))));
        }
        let decoded = match version {
            ProtocolVersion::V0_3 => A2aCall::from_value(value),
            ProtocolVersion::V1_0 => decode_v1(value),
        };
        let call = match decoded {
            Ok(call) => call,
            Err(rejected) => {
                let error = &rejected.error;
                tracing::debug!(code = error.code, message = %error.message, "request rejected");
                return Err(Box::new(outcome(answer_error(
                    version,
                    streaming,
                    rejected.id,
                    rejected.error,
                ))));
            }
        };
        Ok((version, named, call))
    }

    /// Starts a call's [`Call`]: the state, what the outer layers resolved, and the
    /// server's shutdown signal.
    pub(super) fn new(state: AppState<S>, resolved: &Resolved) -> Self {
        Self {
            shutdown: ShutdownSignal::current(),
            state,
            agent: Arc::clone(&resolved.agent),
            card: Arc::clone(&resolved.card),
            activated: resolved.activated.clone(),
            span: resolved.span.clone(),
        }
    }

    /// The [`CallContext`] of a call in `version` by `principal`, from the request's
    /// headers: the activated extensions, `Idempotency-Key`, `traceparent` and
    /// `Last-Event-ID`.
    ///
    /// # Errors
    ///
    /// -32602 for a `Last-Event-ID` that is not an event number.
    pub(super) fn context(
        &self,
        headers: &HeaderMap,
        version: ProtocolVersion,
        principal: Option<Principal>,
        id: RequestId,
    ) -> Result<CallContext, JsonRpcError> {
        let mut context = CallContext::new(Arc::clone(&self.agent), id);
        context.principal = principal;
        context.extensions = self.activated.of(version).1.to_vec();
        context.version = version;
        context.idempotency_key = headers
            .get(&names::IDEMPOTENCY_KEY)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        context.traceparent = headers
            .get(&names::TRACEPARENT)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if let Some(value) = headers.get(&names::LAST_EVENT_ID) {
            let after = value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| {
                    JsonRpcError::invalid_params().with_message(
                        "Invalid params: the Last-Event-ID header must be the number of a \
                         task event (the `id:` of an event this server sent)",
                    )
                })?;
            context.last_event_id = Some(after);
        }
        Ok(context)
    }

    /// What the card demands of every call: required extensions, and the optional
    /// capabilities a method needs.
    pub(super) fn check_call(
        &self,
        version: ProtocolVersion,
        method: &str,
        request: &A2aRequest,
    ) -> Result<(), JsonRpcError> {
        let missing = extensions::missing_required(&self.card, self.activated.of(version).1);
        if !missing.is_empty() {
            let list = missing
                .iter()
                .map(|uri| format!("`{uri}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let header = match version {
                ProtocolVersion::V0_3 => EXTENSIONS_HEADER,
                ProtocolVersion::V1_0 => V1_EXTENSIONS_HEADER,
            };
            let detail = format!(
                "agent `{}` requires extension {list}; activate it with the {header} header",
                self.agent
            );
            return Err(match version {
                // 0.3 has no code of its own for this: -32600, as before.
                ProtocolVersion::V0_3 => {
                    invalid_request(detail).with_data(json!({ "missingExtensions": missing }))
                }
                ProtocolVersion::V1_0 => {
                    let error = v1::extension_support_required(&missing);
                    let message = format!("{}: {detail}", error.message);
                    error.with_message(message)
                }
            });
        }
        check_capabilities(&self.agent, &self.card, request, method)
    }

    /// `agent/getAuthenticatedExtendedCard` (`GetExtendedAgentCard`), answered by
    /// the server itself.
    fn extended_card(
        &self,
        version: ProtocolVersion,
        id: RequestId,
        principal: Option<&Principal>,
    ) -> Response {
        match self.extended(principal) {
            Ok(card) => {
                let default = self.is_default();
                match version {
                    ProtocolVersion::V0_3 => {
                        reply::success(id, &super::cards::legacy_card(card, default))
                    }
                    ProtocolVersion::V1_0 => {
                        reply::success(id, &super::cards::v1_card(card, default))
                    }
                }
            }
            Err(None) => self.unauthenticated(Binding::JsonRpc, id),
            Err(Some(error)) => reply::error(id, in_form(version, error)),
        }
    }

    /// Whether the call's agent is the one served at the root.
    pub(super) fn is_default(&self) -> bool {
        self.state.service.default_agent().as_deref() == Some(&self.agent)
    }

    /// The extended card for `principal`: `Err(None)` for an anonymous caller (401),
    /// the -32007 error when the agent has none.
    pub(super) fn extended(
        &self,
        principal: Option<&Principal>,
    ) -> Result<AgentCard, Option<JsonRpcError>> {
        let Some(principal) = principal else {
            tracing::debug!("extended card asked for without credentials");
            return Err(None);
        };
        self.state
            .service
            .extended_card(&self.agent, principal)
            .ok_or_else(|| {
                Some(crate::service::no_extended_card(
                    &self.agent,
                    crate::service::NoExtendedCard::NotConfigured,
                ))
            })
    }

    /// HTTP 401 for a method that needs a principal, in `binding`'s form, with the
    /// card's challenges.
    pub(super) fn unauthenticated(&self, binding: Binding, id: RequestId) -> Response {
        let rejected = auth::Unauthorized {
            challenges: auth::declared_challenges(&self.card),
            bad_credential: false,
        };
        reply::unauthorized(binding, &self.agent, id, &rejected)
    }

    /// Hands the call to the service and frames its reply as JSON-RPC. (Not an
    /// `async fn`, as none on the way to the service is: see [`call`].)
    fn dispatch(
        self,
        version: ProtocolVersion,
        method: &'static str,
        context: CallContext,
        call: A2aCall,
    ) -> impl Future<Output = Response> + Send {
        let streaming = call.request.is_streaming();
        let A2aCall { id, request } = call;
        async move {
            match self.invoke(method, context, request).await {
                Err(error) => answer_error(version, streaming, id, error),
                Ok(Answer::Unary(result)) => encode_result(version, id, result),
                Ok(Answer::Stream(events)) => {
                    let keep_alive = self.state.config.sse_keep_alive();
                    let write = move |seq, event| stream_frame(version, &id, seq, event);
                    sse(version, events, self.span, keep_alive, self.shutdown, write)
                }
            }
        }
    }

    /// Hands `request` to the service within the request timeout, and checks that
    /// the reply is the kind `method` expects (a stream for the streaming methods).
    ///
    /// # Errors
    ///
    /// The service's error; -32603 naming the call when it took too long or
    /// answered with the wrong kind of reply.
    pub(super) fn invoke(
        &self,
        method: &'static str,
        context: CallContext,
        request: A2aRequest,
    ) -> impl Future<Output = Result<Answer, JsonRpcError>> + Send + '_ {
        let timeout = self.state.config.request_timeout();
        let streaming = request.is_streaming();
        // Boxed: the service's future is ~3 KiB (the runtime's send path), and held
        // inline it made the handler's future as large, copied whole as axum boxes
        // it and each layer wraps it (`memmove` was 6% of the server's samples).
        // Made here, not in the future below, which then holds neither the context
        // nor the request.
        let call = Box::pin(self.state.service.call(context, request));
        async move {
            let reply = tokio::time::timeout(timeout, call).await;
            match reply {
                Err(_elapsed) => {
                    tracing::warn!(?timeout, "the agent did not answer in time");
                    Err(JsonRpcError::internal_error().with_message(format!(
                        "agent `{}` did not answer `{method}` within {timeout:?}",
                        self.agent
                    )))
                }
                Ok(Err(error)) => {
                    tracing::debug!(
                        code = error.code,
                        message = %error.message,
                        "the service answered with an error"
                    );
                    Err(error)
                }
                Ok(Ok(Reply::Result(result))) if !streaming => Ok(Answer::Unary(result)),
                Ok(Ok(Reply::Stream(events))) if streaming => Ok(Answer::Stream(Box::pin(
                    events.map(|event| event.map(|event| (None, event))),
                ))),
                Ok(Ok(Reply::NumberedStream(events))) if streaming => Ok(Answer::Stream(events)),
                Ok(Ok(reply)) => {
                    tracing::error!(
                        ?reply,
                        streaming,
                        "the service answered with the wrong kind of reply"
                    );
                    let expected = if streaming {
                        "a stream"
                    } else {
                        "a single result"
                    };
                    Err(JsonRpcError::internal_error().with_message(format!(
                        "agent `{}` answered `{method}` with the wrong kind of reply \
                     (expected {expected})",
                        self.agent
                    )))
                }
            }
        }
    }
}

/// What the card's capabilities demand of a call, on every binding: streaming for
/// the streaming methods (-32004), push notifications for the push-config ones
/// (-32003), each naming the agent and the method.
pub(crate) fn check_capabilities(
    agent: &str,
    card: &AgentCard,
    request: &A2aRequest,
    method: &str,
) -> Result<(), JsonRpcError> {
    let capabilities = &card.capabilities;
    if request.is_streaming() && capabilities.streaming != Some(true) {
        return Err(JsonRpcError::unsupported_operation().with_message(format!(
            "agent `{agent}` does not support streaming (`{method}`)"
        )));
    }
    let push = matches!(
        request,
        A2aRequest::SetTaskPushNotificationConfig(_)
            | A2aRequest::GetTaskPushNotificationConfig(_)
            | A2aRequest::ListTaskPushNotificationConfig(_)
            | A2aRequest::DeleteTaskPushNotificationConfig(_)
    );
    if push && capabilities.push_notifications != Some(true) {
        return Err(
            JsonRpcError::push_notification_not_supported().with_message(format!(
                "agent `{agent}` does not support push notifications (`{method}`)"
            )),
        );
    }
    Ok(())
}

/// Types a 1.0 request into the internal model, with the checks of
/// [`A2aCall::from_jsonrpc`] (method and params first, then the id).
fn decode_v1(value: Value) -> Result<A2aCall, RequestError> {
    let request = JsonRpcRequest::from_value(value)?;
    let typed = v1::Request::from_jsonrpc(&request.method, request.params)
        .and_then(|typed| A2aRequest::try_from(typed).map_err(JsonRpcError::from));
    let id = match request.id {
        Some(RequestId::Null) | None => {
            let error = typed.err().unwrap_or_else(|| {
                invalid_request("`id` must be a string or an integer (A2A has no notifications)")
            });
            return Err(RequestError {
                id: RequestId::Null,
                error,
            });
        }
        Some(id) => id,
    };
    match typed {
        Ok(request) => Ok(A2aCall::new(id, request)),
        Err(error) => Err(RequestError { id, error }),
    }
}

/// A result in the wire form of `version`, as a JSON-RPC response.
fn encode_result(version: ProtocolVersion, id: RequestId, result: A2aResult) -> Response {
    match version {
        ProtocolVersion::V0_3 => reply::success(id, &result),
        ProtocolVersion::V1_0 => reply::success(id, &V1Result::from(result)),
    }
}

/// A unary result in its 1.0 form, as both bindings write it: the JSON-RPC
/// `result`, or the whole HTTP+JSON body.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub(super) enum V1Result {
    Send(v1::SendMessageResponse),
    Task(v1::Task),
    PushConfig(v1::TaskPushNotificationConfig),
    PushConfigs(v1::ListTaskPushNotificationConfigsResponse),
    Deleted(v1::Empty),
    TaskList(v1::ListTasksResponse),
    Card(Box<v1::AgentCard>),
}

impl From<A2aResult> for V1Result {
    /// An extended card is declared in every version served, as the public one.
    fn from(result: A2aResult) -> Self {
        match result {
            A2aResult::Send(result) => Self::Send(result.into()),
            A2aResult::Task(task) => Self::Task(task.into()),
            A2aResult::PushConfig(config) => Self::PushConfig(config.into()),
            A2aResult::PushConfigs(configs) => Self::PushConfigs(configs.into()),
            A2aResult::Deleted => Self::Deleted(v1::Empty {}),
            A2aResult::TaskList(list) => Self::TaskList(list),
            A2aResult::Card(card) => Self::Card(Box::new(v1::AgentCard::for_versions(
                *card,
                &ProtocolVersion::ALL,
            ))),
        }
    }
}

/// An error in the wire form of `version`: 1.0 carries `ErrorInfo` details.
fn in_form(version: ProtocolVersion, error: JsonRpcError) -> JsonRpcError {
    match version {
        ProtocolVersion::V0_3 => error,
        ProtocolVersion::V1_0 => v1::to_v1_error(error),
    }
}

/// What the request's log line says about a call, handed to the layer that writes
/// it (and tells [`OnAnswer`](super::OnAnswer), e.g. a counter of requests by
/// method) in the response's extensions.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RequestLog {
    /// The agent the call was for.
    pub agent: Arc<str>,
    /// The method, once the body (or, on HTTP+JSON, the path) was read far enough
    /// to name one.
    pub method: Option<&'static str>,
    /// The protocol version the answer is written in.
    pub version: ProtocolVersion,
}

fn is_streaming(name: &str) -> bool {
    matches!(
        name,
        method::SEND_STREAMING_MESSAGE
            | method::TASK_RESUBSCRIPTION
            | v1::method::SEND_STREAMING_MESSAGE
            | v1::method::SUBSCRIBE_TO_TASK
    )
}

/// A JSON-RPC error in the form of `version`: as JSON, or for a streaming method as
/// an SSE stream of that one error, which then closes (what the official SDK servers
/// send).
fn answer_error(
    version: ProtocolVersion,
    streaming: bool,
    id: RequestId,
    error: JsonRpcError,
) -> Response {
    let error = in_form(version, error);
    if !streaming {
        return reply::error(id, error);
    }
    let event = frame(&JsonRpcResponse::<Value>::error(id, error), None);
    sse::response(futures::stream::once(std::future::ready(event)))
}

/// Accepts `application/json` and `+json` media types (`application/a2a+json`,
/// HTTP+JSON's own, among them), with any parameters.
///
/// # Errors
///
/// What is wrong with the content type, for the 415 response.
fn check_content_type(headers: &HeaderMap, binding: Binding) -> Result<(), String> {
    let expected = match binding {
        Binding::JsonRpc => "send the JSON-RPC request as application/json",
        Binding::Rest(_) => "send the request body as application/a2a+json or application/json",
    };
    let Some(value) = headers.get(CONTENT_TYPE) else {
        return Err(format!("the request has no Content-Type; {expected}"));
    };
    // Compared without case and without a lowered copy: every call has one.
    let essence = value.to_str().map_or("", crate::a2a::media_essence);
    let starts = |prefix: &str| {
        essence
            .get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    };
    let ends = |suffix: &str| {
        essence
            .len()
            .checked_sub(suffix.len())
            .and_then(|start| essence.get(start..))
            .is_some_and(|tail| tail.eq_ignore_ascii_case(suffix))
    };
    if essence.eq_ignore_ascii_case("application/json") || (starts("application/") && ends("+json"))
    {
        Ok(())
    } else {
        Err(format!(
            "Content-Type `{}` is not supported; {expected}",
            String::from_utf8_lossy(value.as_bytes())
        ))
    }
}

/// HTTP 415 with the JSON-RPC error each version gives a body that is not JSON: 1.0
/// names it -32005 ContentTypeNotSupported (with its `ErrorInfo`), as the 1.0 error
/// table reads. The official Python server answers a parse error instead; that hides
/// the cause, so it is not copied. 0.3 keeps -32600, as it always answered. On
/// HTTP+JSON it is -32005 in either version, in that version's error body.
fn unsupported_media_type(detail: &str, binding: Binding, version: &ProtocolVersion) -> Response {
    tracing::debug!(detail, "unsupported media type");
    if let Binding::Rest(version) = binding {
        return super::rest::error(
            version,
            JsonRpcError::content_type_not_supported()
                .with_message(format!("Unsupported Media Type: {detail}")),
        );
    }
    let error = match version {
        ProtocolVersion::V1_0 => v1::to_v1_error(
            JsonRpcError::content_type_not_supported()
                .with_message(format!("Unsupported Media Type: {detail}")),
        ),
        ProtocolVersion::V0_3 => reply::http_problem(StatusCode::UNSUPPORTED_MEDIA_TYPE, detail),
    };
    reply::http_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, RequestId::Null, error)
}

/// Why a request body could not be read.
#[derive(Debug)]
enum BodyError {
    /// Longer than the limit.
    TooLarge,
    /// Did not arrive within the request timeout.
    TooSlow,
    /// The connection failed while reading.
    Read(axum::BoxError),
}

impl BodyError {
    fn into_response(self, binding: Binding, limit: usize, timeout: Duration) -> Response {
        tracing::debug!(error = ?self, "the request body was not read");
        let (status, code, error) = match self {
            Self::TooLarge => (
                StatusCode::PAYLOAD_TOO_LARGE,
                RpcCode::InvalidArgument,
                reply::http_problem(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the request body exceeds the limit of {limit} bytes"),
                )
                .with_data(json!({ "limit": limit })),
            ),
            Self::TooSlow => (
                StatusCode::REQUEST_TIMEOUT,
                RpcCode::DeadlineExceeded,
                reply::http_problem(
                    StatusCode::REQUEST_TIMEOUT,
                    format!("the request body did not arrive within {timeout:?}"),
                ),
            ),
            Self::Read(error) => (
                StatusCode::BAD_REQUEST,
                RpcCode::InvalidArgument,
                reply::http_problem(
                    StatusCode::BAD_REQUEST,
                    format!("the request body could not be read: {error}"),
                ),
            ),
        };
        reply::refusal(binding, status, code, error)
    }
}

/// Reads the whole body, at most `limit` bytes and within `timeout`.
async fn read_body(
    body: Body,
    headers: &HeaderMap,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, BodyError> {
    // A declared length over the limit is refused before reading anything.
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(BodyError::TooLarge);
    }
    match tokio::time::timeout(timeout, whole(Limited::new(body, limit))).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(error)) if error.downcast_ref::<LengthLimitError>().is_some() => {
            Err(BodyError::TooLarge)
        }
        Ok(Err(error)) => Err(BodyError::Read(error)),
        Err(_elapsed) => Err(BodyError::TooSlow),
    }
}

/// `body` read to its end. Most bodies arrive in one frame, which is kept as it came;
/// `collect` would have listed it in an allocation of its own first.
pub(super) async fn whole<B>(body: B) -> Result<Bytes, B::Error>
where
    B: axum::body::HttpBody<Data = Bytes>,
{
    let mut body = std::pin::pin!(body);
    let mut first: Option<Bytes> = None;
    let mut joined: Vec<u8> = Vec::new();
    while let Some(frame) = body.frame().await {
        // Trailers carry nothing a call reads.
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        match first.take() {
            None if joined.is_empty() => first = Some(data),
            None => joined.extend_from_slice(&data),
            Some(before) => {
                joined.reserve(before.len() + data.len());
                joined.extend_from_slice(&before);
                joined.extend_from_slice(&data);
            }
        }
    }
    Ok(first.unwrap_or_else(|| Bytes::from(joined)))
}

/// Frames a service's event stream as SSE, each item written by `write` (a whole
/// JSON-RPC response on JSON-RPC, the bare `StreamResponse` on HTTP+JSON) with the
/// event's number in the task's log, for its `id:`, when it has one; ending after an
/// error, after a final event, when the service's stream ends, or when the server
/// shuts down (at its next wait: events already ready are sent first). A 1.0 stream
/// also closes after a task that stands in a terminal or interrupted state (spec
/// §3.2: 1.0 has no `final` flag, the stream's end is the signal).
pub(super) fn sse<W>(
    version: ProtocolVersion,
    events: NumberedEventStream,
    span: Span,
    keep_alive: Duration,
    shutdown: Option<ShutdownSignal>,
    write: W,
) -> Response
where
    W: Fn(Option<u64>, Result<StreamEvent, JsonRpcError>) -> Bytes + Send + Unpin + 'static,
{
    let shutdown = shutdown.map(|ShutdownSignal(token)| token);
    let frames = Bounded::new(events, span, shutdown, framing(version, write));
    // The edge's own keep-alive, not axum's: it makes no timer for a stream that
    // never waits (`super::keep_alive`).
    sse::response(super::keep_alive::keep_alive(frames, keep_alive, || {
        sse::KEEP_ALIVE
    }))
}

/// An item of a service's numbered event stream.
type Numbered = Result<(Option<u64>, StreamEvent), JsonRpcError>;

/// Each item of an SSE stream in `version` written by `write`, with whether it is the
/// stream's last (see [`sse`]).
fn framing<W>(version: ProtocolVersion, write: W) -> impl FnMut(Numbered) -> (Bytes, bool)
where
    W: Fn(Option<u64>, Result<StreamEvent, JsonRpcError>) -> Bytes,
{
    move |item| match item {
        Ok((seq, event)) => {
            let last = ends_stream(&event, version == ProtocolVersion::V1_0);
            if last {
                tracing::debug!("stream closed");
            }
            (write(seq, Ok(event)), last)
        }
        Err(error) => {
            tracing::debug!(
                code = error.code,
                message = %error.message,
                "stream ended by an error"
            );
            (write(None, Err(error)), true)
        }
    }
}

/// Whether a stream ends after `event`: a final status update, or, where `on_task`
/// (A2A 1.0, which has no `final` flag: spec §3.2), a task that stands in a terminal
/// or interrupted state. The one rule of every binding's streams.
pub(crate) fn ends_stream(event: &StreamEvent, on_task: bool) -> bool {
    event.is_final()
        || (on_task
            && matches!(event, StreamEvent::Task(task)
                if task.status.state.is_terminal() || task.status.state.is_interrupted()))
}

/// One stream item of call `id` as an SSE event numbered `seq`: a JSON-RPC response
/// whose result is the event (in `version`'s form), or whose error ends the stream.
fn stream_frame(
    version: ProtocolVersion,
    id: &RequestId,
    seq: Option<u64>,
    event: Result<StreamEvent, JsonRpcError>,
) -> Bytes {
    match (version, event) {
        (ProtocolVersion::V0_3, Ok(event)) => {
            frame(&JsonRpcResponse::success(id.clone(), event), seq)
        }
        (ProtocolVersion::V1_0, Ok(event)) => frame(
            &JsonRpcResponse::success(id.clone(), v1::StreamResponse::from(event)),
            seq,
        ),
        (_, Err(error)) => frame(
            &JsonRpcResponse::<Value>::error(id.clone(), in_form(version, error)),
            seq,
        ),
    }
}

/// One SSE event whose data is `response` as one line of JSON, numbered `seq`.
fn frame<T: serde::Serialize>(response: &JsonRpcResponse<T>, seq: Option<u64>) -> Bytes {
    match sse::json_event(None, response, seq) {
        Ok(event) => event,
        Err(error) => {
            tracing::error!(%error, "a stream event failed to serialize");
            let fallback = JsonRpcResponse::<Value>::error(
                response.id().clone(),
                JsonRpcError::internal_error(),
            );
            sse::text_event(None, &serde_json::to_string(&fallback).unwrap_or_default())
        }
    }
}

#[cfg(test)]
mod tests;
