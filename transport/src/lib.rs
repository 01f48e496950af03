//! A2A 0.3.0 on the wire.
//!
//! # Layout
//!
//! - [`handoff`]: typed handoff payloads (task delegation, status report,
//!   question, answer): validation, parsing with a free-text fallback, intent,
//!   summaries.

pub mod handoff;
