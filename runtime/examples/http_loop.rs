//! The work of one blocking JSON-RPC `message/send` over HTTP, without the noise of a
//! shared machine: N calls, one after another on one kept-alive connection, to the
//! built-in echo agent served on 127.0.0.1 (the in-memory store, a warnings-level
//! log, as the benchmark runs; push notifications on, as `agentyard serve` runs).
//! `HTTP_LOOP_AGENT=tasker` calls the benchmark's task-mode agent instead (one
//! artifact, then the echo's reply). Both answer with the whole task, as the
//! benchmark's task-mode row does; its `message/send → Message` row has its echo
//! answer with the reply alone (`answer_with_message`), a smaller answer than here.
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
//! blocking socket and the answer read by its `Content-Length`. Valgrind counts each
//! byte a `rep movsb` copies as an instruction, so a large `memcpy` (a future boxed
//! whole) weighs more in the count than in time.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};

use agentyard::builtin::Echo;
use agentyard::store::{JournalTaskStore, Retention};
use agentyard::{
    Agent, AgentDescriptor, AgentError, Artifact, HttpConfig, Part, Runtime, TaskContext,
};

/// The benchmark's task-mode agent: one artifact, then the echo's reply. A copy of
/// `Artifacts(1)` in `bench/src/suites/http.rs` (an example cannot use the bench
/// crate, which depends on this one): change both together, or the counts here stop
/// describing the benchmark's task-mode row.
#[derive(Debug)]
struct Tasker;

impl Agent for Tasker {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.artifact(Artifact::new("result-0", vec![Part::text(&text)]))
            .await?;
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
        .agent(AgentDescriptor::new("tasker").expose(), |_session| Tasker);
    if let Some(dir) = journal {
        let store = JournalTaskStore::open(dir, Retention::default()).await?;
        builder = builder.store(store);
    }
    let runtime = builder.build().await?;
    let server = runtime.serve(HttpConfig::default()).await?;
    let address = server.local_addr();
    // The client blocks: on a thread of its own, so the server's runtime runs on.
    let answered = tokio::task::spawn_blocking(move || call(address, calls))
        .await?
        .map_err(|error| error.to_string())?;
    println!("{answered} calls answered");
    Ok(())
}

/// Makes `calls` blocking sends on one connection; the number answered with a
/// result.
fn call(address: SocketAddr, calls: u64) -> Result<u64, Box<dyn std::error::Error + Send + Sync>> {
    let stream = TcpStream::connect(address)?;
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut answered = 0;
    let mut line = String::new();
    let mut body = Vec::new();
    let agent = std::env::var("HTTP_LOOP_AGENT").unwrap_or_else(|_| String::from("echo"));
    let mut head = String::new();
    for n in 0..calls {
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"message/send","params":{{"message":{{"kind":"message","messageId":"m-{n}","role":"user","contextId":"loop","parts":[{{"kind":"text","text":"ping"}}]}},"configuration":{{"blocking":true}}}}}}"#
        );
        // Formatted first and written at once, as a client's buffered writer would:
        // `write!` on the socket itself sends each piece of the format in a system
        // call of its own, and the server wakes for each.
        head.clear();
        write!(
            head,
            "POST /agents/{agent} HTTP/1.1\r\nHost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{request}",
            request.len()
        )?;
        writer.write_all(head.as_bytes())?;
        let mut length = None;
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Err("the server closed the connection".into());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = Some(value.trim().parse::<usize>()?);
            }
        }
        let length = length.ok_or("an answer without a content-length")?;
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
        if body.windows(9).any(|window| window == b"\"result\":") {
            answered += 1;
        }
    }
    Ok(answered)
}
