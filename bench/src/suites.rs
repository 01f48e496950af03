//! The suites. Each one measures the runtime and its floor side by side, in the same
//! process or in sibling child processes, and adds its rows to the report.
//!
//! - [`supervisor`]: the send path against raw ractor `call` and `cast`.
//! - [`sessions`]: many sessions against as many raw actors, in child processes.
//! - [`http`]: A2A over HTTP through the edge against bare axum routes.
//! - [`bindings`]: A2A 1.0 through JSON-RPC, HTTP+JSON and gRPC, against each other
//!   and the bare axum floor.
//! - [`observability`]: HTTP `message/send` with metrics on against off, in the same
//!   rounds.
//! - [`overload`]: ten times the sustainable rate against a small limit, in a child.
//! - [`remote`]: a local agent calling a remote agent against the bare client.
//! - [`store`]: the durable task stores (embedded, PostgreSQL) against the in-memory
//!   store, over HTTP and through the supervisor.
//! - [`workflow`]: a 100-node fan-out/fan-in through the workflow runner (in process
//!   and pure A2A) against the same sends made directly.
//! - [`sustained`]: five minutes of new conversations against `agentyard serve`'s
//!   defaults, in a child, with its memory sampled.

pub(crate) mod bindings;
pub(crate) mod http;
pub(crate) mod observability;
pub(crate) mod overload;
pub(crate) mod remote;
pub(crate) mod sessions;
pub(crate) mod store;
pub(crate) mod supervisor;
pub(crate) mod sustained;
pub(crate) mod workflow;

use std::process::Command;

use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Runs this program again with `args` (a hidden child subcommand) and reads the JSON
/// figures it prints. A child process starts with a fresh allocator, so what one
/// measurement leaves on the heap never shows in another's resident memory.
///
/// # Errors
/// [`Error::Io`] if the child cannot start, [`Error::Child`] if it fails or prints
/// something else.
pub(crate) async fn in_child<T: DeserializeOwned + Send + 'static>(
    what: &str,
    args: Vec<String>,
) -> Result<T> {
    let exe = std::env::current_exe().map_err(|source| Error::Io {
        what: String::from("finding this program's path to start a child"),
        source,
    })?;
    let what = what.to_owned();
    tokio::task::spawn_blocking(move || {
        let output = Command::new(&exe)
            .args(&args)
            .output()
            .map_err(|source| Error::Io {
                what: format!("starting {} {}", exe.display(), args.join(" ")),
                source,
            })?;
        if !output.status.success() {
            return Err(Error::Child {
                what,
                detail: format!(
                    "{}: {}",
                    output.status,
                    String::from_utf8_lossy(&output.stderr).trim()
                ),
            });
        }
        serde_json::from_slice(&output.stdout).map_err(|error| Error::Child {
            what,
            detail: format!(
                "{error} in {:?}",
                String::from_utf8_lossy(&output.stdout).trim()
            ),
        })
    })
    .await?
}
