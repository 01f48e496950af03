//! What can stop a benchmark run.

/// Why a suite could not produce its figures.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum Error {
    /// The runtime refused or failed something the benchmark needs to succeed.
    #[error(transparent)]
    Runtime(#[from] agentyard::Error),
    /// The benchmark's policy could not be built.
    #[error("building the benchmark policy failed")]
    Policy(#[from] agentyard::policy::PolicyError),
    /// A raw ractor actor could not be spawned.
    #[error("spawning a raw ractor actor failed")]
    Spawn(#[from] ractor::SpawnErr),
    /// A raw ractor call did not come back.
    #[error("a raw ractor call failed: {0}")]
    Call(String),
    /// Reading or writing a file, or starting a child process, failed.
    #[error("{what}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A child process failed or printed something that is not its figures.
    #[error("the child process for {what} failed: {detail}")]
    Child {
        /// Which measurement the child was making.
        what: String,
        /// Its exit status and standard error, or the parse error.
        detail: String,
    },
    /// An HTTP request of the http suite failed.
    #[error("an HTTP request failed")]
    Http(#[from] reqwest::Error),
    /// JSON could not be written or read.
    #[error("JSON encoding failed")]
    Json(#[from] serde_json::Error),
    /// A benchmark task panicked or was cancelled.
    #[error("a benchmark task did not finish")]
    Join(#[from] tokio::task::JoinError),
    /// The measurement went somewhere it must not (a reply in the wrong state, a count
    /// that never arrives): the figures would be wrong, so none are given.
    #[error("{0}")]
    Unexpected(String),
}

/// The result type of the benchmark's functions.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;
