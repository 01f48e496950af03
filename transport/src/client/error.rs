//! What can go wrong when calling a remote agent.

use reqwest::StatusCode;

use crate::jsonrpc::JsonRpcError;

/// Why an [`A2aClient`](super::A2aClient) call failed. Each variant is something
/// the caller can act on differently: fix the request or credentials
/// ([`Http`](Self::Http)), handle the agent's answer ([`JsonRpc`](Self::JsonRpc)),
/// distrust the server ([`Decode`](Self::Decode), [`Protocol`](Self::Protocol)), or
/// retry later ([`Transport`](Self::Transport)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with an HTTP error status (401 without valid
    /// credentials, 404 for an unknown agent, 413 for a body over its limit, ...).
    #[error("HTTP {status} from {url}: {message}")]
    Http {
        /// The status.
        status: StatusCode,
        /// The URL that answered.
        url: String,
        /// The JSON-RPC error in the body, when the server sent one (agentyard does).
        error: Option<JsonRpcError>,
        /// The error's message, or the start of the body.
        message: String,
        /// How many seconds the server asked the client to wait (`Retry-After`), if
        /// it said (whole seconds: the header has no finer unit; u32 keeps the
        /// error small).
        retry_after_secs: Option<u32>,
    },
    /// The agent answered with a JSON-RPC error (task not found, invalid params, ...).
    #[error("JSON-RPC error {}: {}", .0.code, .0.message)]
    JsonRpc(JsonRpcError),
    /// A response (or a stream event) that is not the JSON the protocol defines.
    #[error("could not decode the {what}")]
    Decode {
        /// What was being decoded, e.g. "`tasks/get` result".
        what: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// A response that breaks the protocol in another way: a wrong content type, an
    /// id that is not the request's, a malformed SSE stream.
    #[error("protocol violation: {0}")]
    Protocol(String),
    /// The HTTP exchange itself failed: connection refused or reset, timeout, TLS.
    #[error("{}", transport_sentence(.0))]
    Transport(#[from] reqwest::Error),
    /// A gRPC call ended with a status that is not an A2A error (the server could
    /// not be reached, the caller did not authenticate), or one that asks the
    /// client to come back later (UNAVAILABLE, RESOURCE_EXHAUSTED).
    #[error("gRPC {code:?} from {target}: {message}")]
    Grpc {
        /// The status code.
        code: tonic::Code,
        /// The target called (`http://host:port`).
        target: String,
        /// The A2A error the status carries in its details, if any.
        error: Option<JsonRpcError>,
        /// The status message.
        message: String,
    },
    /// An answer, or one event of a stream, larger than the client reads
    /// ([`ClientOptions::response_limit`](super::ClientOptions::response_limit)); the
    /// rest was not read.
    #[error("the answer from {url} is larger than this client's limit of {limit} bytes")]
    TooLarge {
        /// The URL that answered.
        url: String,
        /// The limit it went past.
        limit: usize,
    },
    /// A URL that cannot be parsed.
    #[error("invalid URL `{url}`: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl ClientError {
    /// The JSON-RPC error the agent sent, from a JSON-RPC error response or in the
    /// body of an HTTP error.
    #[must_use]
    pub fn json_rpc_error(&self) -> Option<&JsonRpcError> {
        match self {
            Self::JsonRpc(error) => Some(error),
            Self::Http { error, .. } | Self::Grpc { error, .. } => error.as_ref(),
            _ => None,
        }
    }

    /// The HTTP status, for an HTTP error.
    #[must_use]
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Self::Http { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// What a transport failure was, as a sentence (reqwest's own text is terse and its
/// source chain is where the cause is).
fn transport_sentence(error: &reqwest::Error) -> String {
    let what = if error.is_connect() {
        "could not connect"
    } else if error.is_timeout() {
        "timed out"
    } else if error.is_body() || error.is_decode() {
        "the connection broke while reading the answer"
    } else {
        "the HTTP exchange failed"
    };
    let mut text = match error.url() {
        Some(url) => format!("{what} to {url}"),
        None => what.to_owned(),
    };
    let mut innermost: Option<&(dyn std::error::Error + 'static)> =
        std::error::Error::source(error);
    while let Some(next) = innermost.and_then(std::error::Error::source) {
        innermost = Some(next);
    }
    if let Some(cause) = innermost {
        text.push_str(": ");
        text.push_str(&cause.to_string());
    }
    text
}
