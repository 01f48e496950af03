//! The work of one blocking send, without the noise of a shared machine: N
//! `send_and_wait`s to an echo agent, one after another on one thread, through the
//! whole send path with the in-memory store (one send in four with an idempotency
//! key, as the benchmark's supervisor suite sends). Counted by an instruction
//! counter, two runs give a send's instructions, which do not vary from run to run
//! as times do:
//!
//! ```sh
//! cargo build --release -p agentyard-actors --example send_loop
//! for n in 12000 16000; do
//!   valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
//!     target/release/examples/send_loop $n 2>&1 | grep 'I *refs'
//! done
//! # (refs at 16000 - refs at 12000) / 4000 = instructions per send
//! ```
//!
//! Both counts are past the 10,000 ended tasks the store keeps, so each send also
//! forgets the oldest one, as a server's do once it has been up a while.

use agentyard_transport::ContextId;

// The sends, shared with the allocation budget test.
#[path = "support/echo_sends.rs"]
mod echo_sends;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sends: u64 = match std::env::args().nth(1) {
        Some(n) => n
            .parse()
            .map_err(|e| format!("the number of sends, `{n}`: {e}"))?,
        None => 16_000,
    };
    // As the benchmark and `agentyard serve` run: with a subscriber, whose level
    // (warnings, the benchmark's) leaves the send path's spans off. Without one,
    // `tracing` would hand every span to `log` and count work no server does.
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_writer(std::io::stderr)
        .init();
    let supervisor = echo_sends::start().await?;
    let conversation = ContextId::new("send-loop");
    for n in 0..sends {
        supervisor
            .send_and_wait(echo_sends::request(&conversation, n))
            .await?;
    }
    Ok(())
}
