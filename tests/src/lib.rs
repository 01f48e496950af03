//! Shared helpers for agentyard's integration tests.
//!
//! The tests themselves live in `tests/tests/e2e/`, one module per capability, all
//! in one test binary so the runtime is linked once. Each module is named as a
//! sentence that says what the capability guarantees. They use only the public API of
//! the `agentyard` crate. What several of them need is here:
//!
//! # Layout
//!
//! - [`wait`]: [`eventually`], the one helper that polls a condition until a
//!   deadline instead of sleeping for a guessed time (and returns what the
//!   condition found), and [`within`], which turns a hang into a test failure.
//! - [`agents`]: every test agent, each with a name of its own — [`Echo`],
//!   [`Gated`], [`Turnstile`], [`Cancellable`], [`Fragile`], [`Asking`],
//!   [`Interviewer`], [`PayloadProbe`], [`ChunkCounter`], [`Recorder`] — and the
//!   [`Calls`] counter and [`Gate`] they are steered with.
//! - [`events`]: [`EventLog`], a subscriber that records every runtime event so a test
//!   can assert on order and content after the fact.
//! - [`http`]: the one edge fixture, [`http::TestEdge`] (a runtime behind a real
//!   HTTP edge on 127.0.0.1), raw JSON-RPC and SSE, and a local webhook receiver.
//! - [`process`]: the built `agentyard` program run as `agentyard serve`
//!   ([`process::ServeProcess`]), for the suites that drive it from outside
//!   (interop with the official SDKs, the browser test).
//!
//! Time: tests whose subject is a timeout (idle passivation, cancel grace, shutdown
//! deadline) run on paused tokio time (`#[tokio::test(start_paused = true)]`), which
//! the runtime advances whenever every task is idle; the others run on real time and
//! finish in milliseconds.

pub mod agents;
pub mod events;
pub mod http;
pub mod process;
pub mod wait;

pub use agents::{
    Asking, Calls, Cancellable, ChunkCounter, Echo, Fragile, Gate, Gated, Interviewer,
    PayloadProbe, Recorder, Turnstile,
};
pub use events::EventLog;
pub use wait::{PATIENCE, eventually, within};

use agentyard::Task;

/// The text of a task's status message (the reply, the question, or the reason it
/// failed); empty when the status has no message.
#[must_use]
pub fn status_text(task: &Task) -> String {
    task.status
        .message
        .as_ref()
        .map(|message| message.text())
        .unwrap_or_default()
}
