//! The runnable examples of agentyard live in `examples/examples/`; this library is
//! empty and exists only because Cargo needs a target in every package.
//! See `examples/README.md` for the list and how to run each one.
