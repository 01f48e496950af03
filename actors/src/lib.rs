//! The ractor actors of agentyard.
//!
//! # Layout
//!
//! (filled in as the modules land)
