//! The work of one blocking JSON-RPC `message/send` over HTTP, without the noise of a
//! shared machine: N calls, one after another on one kept-alive connection, to the
//! built-in echo agent served on 127.0.0.1 (the in-memory store, a warnings-level
//! log, as the benchmark runs; push notifications on, as `agentyard serve` runs).
//! `HTTP_LOOP_AGENT=tasker` calls the benchmark's task-mode agent instead (one
//! artifact, then the echo's reply). Both answer with the whole task, as the
//! benchmark's task-mode row does; its `message/send → Message` row has its echo
//! answer with the reply alone (`answer_with_message`), a smaller answer than here.
//! `HTTP_LOOP_AGENT=bare` counts the benchmark's floor instead: a bare axum route
//! that parses the same body into the same typed params and answers with the echo's
//! first answer, serialized afresh each call (the `http` suite's bare route), so the
//! two counts' ratio is the instructions' share of the suite's `message/send` ratio.
//! `HTTP_LOOP_METHOD=stream` makes each call a `message/stream` instead, read to the
//! end of its SSE body: to `HTTP_LOOP_AGENT=streamer` (three artifacts, the `http`
//! suite's `stream.3` rows; `tasker` is its `stream.1`), or to the bare SSE route
//! (`HTTP_LOOP_AGENT=bare`), which replays the streamer's first stream, each event
//! serialized afresh as one `data:` line, as the suite's floor does.
//! Counted by an instruction counter, two runs give a request's instructions, which
//! do not vary from run to run as times do. A directory after the count serves the
//! same agent on the journal store kept there (`agentyard serve`'s default), to count
//! what a durable send adds (the journal's writer thread and its wake-ups included,
//! the kernel's flush not):
//!
//! ```sh
//! cargo build --release -p agentyard --example http_loop
//! for n in 2000 6000; do
//!   valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
//!     target/release/examples/http_loop $n 2>&1 | grep 'I *refs'
//! done
//! # (refs at 6000 - refs at 2000) / 4000 = instructions per request
//! # on the journal, a fresh directory each run:
//! #   target/release/examples/http_loop $n "$(mktemp -d)"
//! ```
//!
//! The count is the server's (hyper, the edge's layers, the JSON-RPC codec, the send
//! path) and the client's, which is kept small: the request is written by hand on a
//! blocking socket and the answer read by its `Content-Length` (a stream's by its
//! chunks). Valgrind counts each byte a `rep movsb` copies as an instruction, so a
//! large `memcpy` (a future boxed whole) weighs more in the count than in time.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};

use agentyard::builtin::Echo;
use agentyard::store::{JournalTaskStore, Retention};
use agentyard::{
    Agent, AgentDescriptor, AgentError, Artifact, HttpConfig, Part, Runtime, TaskContext,
};

/// The benchmark's task-mode and streaming agents: `self.0` artifacts, then the
/// echo's reply. A copy of `Artifacts` in `bench/src/suites/http.rs` (an example
/// cannot use the bench crate, which depends on this one): change both together, or
/// the counts here stop describing the benchmark's rows.
#[derive(Debug)]
struct Artifacts(usize);

impl Agent for Artifacts {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        for i in 0..self.0 {
            ctx.artifact(Artifact::new(
                format!("result-{i}"),
                vec![Part::text(&text)],
            ))
            .await?;
        }
        ctx.reply_text(text);
        Ok(())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let calls: u64 = match std::env::args().nth(1) {
        Some(n) => n
            .parse()
            .map_err(|e| format!("the number of calls, `{n}`: {e}"))?,
        None => 6_000,
    };
    let journal = std::env::args().nth(2).map(std::path::PathBuf::from);
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_writer(std::io::stderr)
        .init();
    let mut builder = Runtime::builder()
        .agent(Echo::descriptor().expose(), |_session| Echo)
        .agent(AgentDescriptor::new("tasker").expose(), |_session| {
            Artifacts(1)
        })
        .agent(AgentDescriptor::new("streamer").expose(), |_session| {
            Artifacts(3)
        });
    if let Some(dir) = journal {
        let store = JournalTaskStore::open(dir, Retention::default()).await?;
        builder = builder.store(store);
    }
    let runtime = builder.build().await?;
    let server = runtime.serve(HttpConfig::default()).await?;
    let mut address = server.local_addr();
    let agent = std::env::var("HTTP_LOOP_AGENT").unwrap_or_else(|_| String::from("echo"));
    let method = match std::env::var("HTTP_LOOP_METHOD").as_deref() {
        Ok("stream") => Method::Stream,
        Ok("send") | Err(_) => Method::Send,
        Ok(other) => return Err(format!("HTTP_LOOP_METHOD `{other}`: send or stream").into()),
    };
    let _bare = if agent == "bare" {
        let first = tokio::task::spawn_blocking(move || first_answer(address, method))
            .await?
            .map_err(|error| error.to_string())?;
        let bare = bare::serve(first, method)
            .await
            .map_err(|error| error.to_string())?;
        address = bare.0;
        Some(bare)
    } else {
        None
    };
    // The client blocks: on a thread of its own, so the server's runtime runs on.
    let answered = tokio::task::spawn_blocking(move || call(address, agent, method, calls))
        .await?
        .map_err(|error| error.to_string())?;
    println!("{answered} calls answered");
    Ok(())
}

/// Which JSON-RPC method the calls make.
#[derive(Debug, Clone, Copy)]
enum Method {
    /// A blocking `message/send`, answered with one JSON body.
    Send,
    /// `message/stream`, answered with SSE, read to its end.
    Stream,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Self::Send => "message/send",
            Self::Stream => "message/stream",
        }
    }
}

/// Makes `calls` calls to `agent` on one connection; the number answered with a
/// result.
fn call(
    address: SocketAddr,
    agent: String,
    method: Method,
    calls: u64,
) -> Result<u64, Box<dyn std::error::Error + Send + Sync>> {
    let mut client = Client::connect(address, agent, method)?;
    let mut answered = 0;
    for n in 0..calls {
        if client
            .send(n)?
            .windows(9)
            .any(|window| window == b"\"result\":")
        {
            answered += 1;
        }
    }
    Ok(answered)
}

/// The echo's answer to one send, or the streamer's whole stream: what the bare route
/// answers with.
fn first_answer(
    address: SocketAddr,
    method: Method,
) -> Result<Vec<u8>, Box<dyn std::error::Error + Send + Sync>> {
    let agent = match method {
        Method::Send => "echo",
        Method::Stream => "streamer",
    };
    let mut client = Client::connect(address, String::from(agent), method)?;
    Ok(client.send(0)?.to_vec())
}

/// One kept-alive connection written by hand on a blocking socket.
struct Client {
    address: SocketAddr,
    agent: String,
    method: Method,
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    head: String,
    line: String,
    body: Vec<u8>,
}

impl Client {
    fn connect(
        address: SocketAddr,
        agent: String,
        method: Method,
    ) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        let stream = TcpStream::connect(address)?;
        stream.set_nodelay(true)?;
        Ok(Self {
            address,
            agent,
            method,
            writer: stream.try_clone()?,
            reader: BufReader::new(stream),
            head: String::new(),
            line: String::new(),
            body: Vec::new(),
        })
    }

    /// Sends the `n`th message and returns the answer's body (a stream's whole body,
    /// its chunks joined).
    fn send(&mut self, n: u64) -> Result<&[u8], Box<dyn std::error::Error + Send + Sync>> {
        let method = self.method.name();
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"{method}","params":{{"message":{{"kind":"message","messageId":"m-{n}","role":"user","contextId":"loop","parts":[{{"kind":"text","text":"ping"}}]}},"configuration":{{"blocking":true}}}}}}"#
        );
        // Formatted first and written at once, as a client's buffered writer would:
        // `write!` on the socket itself sends each piece of the format in a system
        // call of its own, and the server wakes for each.
        self.head.clear();
        write!(
            self.head,
            "POST /agents/{} HTTP/1.1\r\nHost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{request}",
            self.agent,
            self.address,
            request.len()
        )?;
        self.writer.write_all(self.head.as_bytes())?;
        let mut length = None;
        let mut chunked = false;
        loop {
            self.line.clear();
            if self.reader.read_line(&mut self.line)? == 0 {
                return Err("the server closed the connection".into());
            }
            let header = self.line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = Some(value.trim().parse::<usize>()?);
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("transfer-encoding")
                && value.trim().eq_ignore_ascii_case("chunked")
            {
                chunked = true;
            }
        }
        self.body.clear();
        if chunked {
            self.read_chunks()?;
        } else {
            let length = length.ok_or("an answer without a content-length or chunks")?;
            self.body.resize(length, 0);
            self.reader.read_exact(&mut self.body)?;
        }
        Ok(&self.body)
    }

    /// Reads a chunked body to its last (empty) chunk into `self.body`.
    fn read_chunks(&mut self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        loop {
            self.line.clear();
            if self.reader.read_line(&mut self.line)? == 0 {
                return Err("the server closed the connection inside a chunked body".into());
            }
            let size = self.line.trim_end();
            let size = size.split_once(';').map_or(size, |(size, _)| size);
            let size = usize::from_str_radix(size, 16)?;
            let start = self.body.len();
            self.body.resize(start + size, 0);
            self.reader.read_exact(&mut self.body[start..])?;
            let mut end = [0u8; 2];
            self.reader.read_exact(&mut end)?;
            if end != *b"\r\n" {
                return Err("a chunk not followed by CRLF".into());
            }
            if size == 0 {
                return Ok(());
            }
        }
    }
}

/// The `http` suite's floor, as `bench/src/suites/http.rs` builds it: change both
/// together.
mod bare {
    use std::net::SocketAddr;
    use std::sync::Arc;

    use std::convert::Infallible;

    use agentyard_transport::a2a::MessageSendParams;
    use agentyard_transport::jsonrpc::{
        JsonRpcResponse, RequestId, SendMessageResult, StreamEvent,
    };
    use axum::Router;
    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::StatusCode;
    use axum::http::header::CONTENT_TYPE;
    use axum::response::sse::{Event, Sse};
    use axum::response::{IntoResponse, Response};
    use axum::routing::post;

    use super::Method;

    /// A `message/send` request, as the bare route reads it.
    #[derive(Debug, serde::Deserialize)]
    struct BareRequest {
        #[serde(rename = "jsonrpc")]
        _jsonrpc: String,
        id: RequestId,
        #[serde(rename = "method")]
        _method: String,
        #[serde(rename = "params")]
        _params: MessageSendParams,
    }

    /// The runtime's answer's `result`, read back into its type.
    #[derive(Debug, serde::Deserialize)]
    struct Answer {
        result: SendMessageResult,
    }

    /// Serves the route on an ephemeral port of 127.0.0.1, answering every send with
    /// `first`'s result, or every stream with `first`'s events; the server runs until
    /// the program ends.
    pub(crate) async fn serve(
        first: Vec<u8>,
        method: Method,
    ) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), Box<dyn std::error::Error + Send + Sync>>
    {
        let app = match method {
            Method::Send => {
                let answer: Answer = serde_json::from_slice(&first)?;
                Router::new()
                    .route("/agents/{agent}", post(message))
                    .with_state(Arc::new(answer.result))
            }
            Method::Stream => Router::new()
                .route("/agents/{agent}", post(stream))
                .with_state(Arc::new(events(&first)?)),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok((address, task))
    }

    async fn message(State(fixed): State<Arc<SendMessageResult>>, body: Bytes) -> Response {
        let id = match serde_json::from_slice::<BareRequest>(&body) {
            Ok(request) => request.id,
            Err(error) => return (StatusCode::BAD_REQUEST, error.to_string()).into_response(),
        };
        match serde_json::to_vec(&JsonRpcResponse::success(id, &*fixed)) {
            Ok(body) => ([(CONTENT_TYPE, "application/json")], body).into_response(),
            Err(error) => (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()).into_response(),
        }
    }

    /// The events of an SSE body, read from its `data:` lines.
    fn events(body: &[u8]) -> Result<Vec<StreamEvent>, Box<dyn std::error::Error + Send + Sync>> {
        String::from_utf8_lossy(body)
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| {
                let response: JsonRpcResponse<StreamEvent> = serde_json::from_str(data.trim())?;
                response
                    .into_result()
                    .map_err(|error| format!("the first stream carried an error: {error:?}").into())
            })
            .collect()
    }

    /// The fixed events as SSE, one JSON-RPC response per `data:` line, serialized as
    /// each is sent (the suite's `bare_stream`).
    async fn stream(State(fixed): State<Arc<Vec<StreamEvent>>>, body: Bytes) -> Response {
        use futures::StreamExt as _;
        let id = match serde_json::from_slice::<BareRequest>(&body) {
            Ok(request) => request.id,
            Err(error) => return (StatusCode::BAD_REQUEST, error.to_string()).into_response(),
        };
        let frames = futures::stream::iter(0..fixed.len()).map(move |i| {
            let response = JsonRpcResponse::success(id.clone(), &fixed[i]);
            let data = serde_json::to_string(&response).unwrap_or_default();
            Ok::<_, Infallible>(Event::default().data(data))
        });
        Sse::new(frames).into_response()
    }
}
