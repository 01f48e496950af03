//! Shared helpers for agentyard's integration tests.
//!
//! The tests themselves live in `tests/tests/`, one file per capability, named as a
//! sentence that says what the capability guarantees. They use only the public API of
//! the `agentyard` crate. What several of them need is here:
//!
//! # Layout
//!
//! - [`wait`]: [`eventually`] and [`eventually_async`], which poll a condition until a
//!   deadline instead of sleeping for a guessed time, and [`within`], which turns a
//!   hang into a test failure.
//! - [`agents`]: small agents with observable behaviour — [`Echo`], [`Gated`],
//!   [`Cancellable`], [`Fragile`], [`Asking`], [`Recorder`] — and the [`Calls`]
//!   counter and [`Gate`] they are steered with.
//! - [`events`]: [`EventLog`], a subscriber that records every runtime event so a test
//!   can assert on order and content after the fact.
//! - [`http`]: a runtime behind a real HTTP edge on 127.0.0.1, raw JSON-RPC and SSE,
//!   a local webhook receiver, and [`http::poll_until`].
//!
//! Time: tests whose subject is a timeout (idle passivation, cancel grace, shutdown
//! deadline) run on paused tokio time (`#[tokio::test(start_paused = true)]`), which
//! the runtime advances whenever every task is idle; the others run on real time and
//! finish in milliseconds.

pub mod agents;
pub mod events;
pub mod http;
pub mod wait;

pub use agents::{Asking, Calls, Cancellable, Echo, Fragile, Gate, Gated, Recorder};
pub use events::EventLog;
pub use wait::{eventually, eventually_async, within};

use agentyard::Task;

/// The text of a task's status message (the reply, the question, or the reason it
/// failed); empty when the status has no message.
#[must_use]
pub fn status_text(task: &Task) -> String {
    task.status
        .message
        .as_ref()
        .map(agentyard::Message::text)
        .unwrap_or_default()
}
