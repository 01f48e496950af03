//! Subcommands of the `agentyard` program that live in modules of their own.

pub(crate) mod run;
