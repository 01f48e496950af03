//! Shared helpers for agentyard's end-to-end tests.
