//! agentyard: an actor-based multi-agent runtime speaking A2A 0.3.0.
//!
//! # Layout
//!
//! (filled in as the modules land)
