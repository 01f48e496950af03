//! Pure policy decisions for agentyard.
//!
//! Every send in agentyard passes through the supervisor, and the supervisor asks this
//! crate whether the send may go ahead. Nothing here touches an actor, a socket or a
//! clock of its own: callers describe a request and pass the current instant, and get a
//! decision back, so every rule is unit-tested without a runtime.
//!
//! # Layout
//!
//! (filled in as the modules land)
