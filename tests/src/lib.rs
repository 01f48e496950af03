//! Shared helpers for agentyard's end-to-end tests.
//!
//! - [`http`]: a runtime behind a real HTTP edge on 127.0.0.1, raw JSON-RPC and SSE,
//!   a local webhook receiver, and [`http::poll_until`].

pub mod http;
