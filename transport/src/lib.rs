//! A2A 0.3.0 on the wire.
//!
//! # Layout
//!
//! (filled in as the modules land)
