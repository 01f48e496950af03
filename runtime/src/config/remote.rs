//! `[[remote]]`: remote A2A agents registered as local agent types.

use std::time::Duration;

use agentyard_actors::remote::{RemoteOptions, StartMode};
use agentyard_transport::client::ClientAuth;
use serde::Deserialize;

use super::ConfigError;

/// One `[[remote]]` entry: a remote A2A agent known by its card URL, reached by local
/// agents and callers under `name` like a local agent type.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct RemoteEntry {
    /// The local agent type name.
    pub name: String,
    /// The peer's agent card URL (or the base URL its well-known card is under).
    pub card_url: String,
    /// The credential sent to the peer; its secret is read from the environment.
    #[serde(default)]
    pub auth: Option<RemoteAuth>,
    /// Serve the peer through agentyard's edge, behind agentyard's auth, policy,
    /// limits and events (the gateway). Default false.
    #[serde(default)]
    pub expose: bool,
    /// Tasks of this peer running at once (default 64).
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Bound on each call to the peer, in seconds (default 30).
    #[serde(default = "default_request_timeout")]
    pub request_timeout_secs: u64,
    /// Bound on opening a connection to the peer, in seconds (default 5).
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout_secs: u64,
    /// Tries per call where a repeat cannot run the work twice (default 3).
    #[serde(default = "default_attempts")]
    pub attempts: u32,
    /// Bound on a whole remote task, in seconds (default 0: none).
    #[serde(default)]
    pub task_timeout_secs: u64,
    /// How often the card is fetched again, in seconds (default 300; 0: never).
    #[serde(default = "default_refresh")]
    pub refresh_secs: u64,
    /// What an unreachable card at start does: `"fail"` (the default) stops the
    /// start with an error, `"retry"` starts anyway and fetches it in the background.
    #[serde(default)]
    pub on_unreachable: Unreachable,
}

/// `on_unreachable`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Unreachable {
    /// Fail the start.
    #[default]
    Fail,
    /// Start, and retry in the background.
    Retry,
}

/// `[remote.auth]`: how agentyard presents itself to the peer. The secret itself is
/// never in the file: the file names the environment variable holding it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RemoteAuth {
    /// `Authorization: Bearer <token>`.
    Bearer {
        /// The environment variable holding the token.
        token_env: String,
    },
    /// An API key in a header.
    ApiKey {
        /// The header (default `X-API-Key`).
        #[serde(default = "default_key_header")]
        header: String,
        /// The environment variable holding the key.
        key_env: String,
    },
}

const fn default_concurrency() -> usize {
    64
}
const fn default_request_timeout() -> u64 {
    30
}
const fn default_connect_timeout() -> u64 {
    5
}
const fn default_attempts() -> u32 {
    3
}
const fn default_refresh() -> u64 {
    300
}
fn default_key_header() -> String {
    String::from("X-API-Key")
}

impl RemoteEntry {
    /// Checks the entry at `index` of `[[remote]]`.
    pub(super) fn check(&self, index: usize) -> Result<(), ConfigError> {
        let invalid = |field: &str, problem: &str| ConfigError::Invalid {
            key: format!("remote[{index}].{field}"),
            problem: problem.to_owned(),
        };
        if self.name.trim().is_empty() {
            return Err(invalid("name", "must not be empty"));
        }
        if !(self.card_url.starts_with("http://") || self.card_url.starts_with("https://")) {
            return Err(invalid("card_url", "must be an http:// or https:// URL"));
        }
        if self.concurrency == 0 {
            return Err(invalid("concurrency", "must be at least 1"));
        }
        if self.attempts == 0 {
            return Err(invalid("attempts", "must be at least 1"));
        }
        if self.request_timeout_secs == 0 || self.connect_timeout_secs == 0 {
            return Err(invalid(
                "request_timeout_secs",
                "timeouts must be at least 1 s",
            ));
        }
        Ok(())
    }

    /// The options the runtime connects with, the secret read from `env` (the
    /// process environment in `serve`).
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the entry when the variable holding its
    /// secret is unset or empty (the secret itself is never shown).
    pub fn options(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<RemoteOptions, ConfigError> {
        let secret = |variable: &str| {
            env(variable)
                .filter(|value| !value.is_empty())
                .ok_or_else(|| ConfigError::Invalid {
                    key: format!("remote `{}`.auth", self.name),
                    problem: format!("the environment variable {variable} is not set"),
                })
        };
        let mut options = RemoteOptions::new(self.card_url.clone())
            .exposed(self.expose)
            .concurrency(self.concurrency)
            .request_timeout(Duration::from_secs(self.request_timeout_secs))
            .connect_timeout(Duration::from_secs(self.connect_timeout_secs))
            .attempts(self.attempts)
            .refresh(Duration::from_secs(self.refresh_secs))
            .start(match self.on_unreachable {
                Unreachable::Fail => StartMode::Fail,
                Unreachable::Retry => StartMode::Retry,
            });
        if self.task_timeout_secs > 0 {
            options = options.task_timeout(Duration::from_secs(self.task_timeout_secs));
        }
        match &self.auth {
            None => {}
            Some(RemoteAuth::Bearer { token_env }) => {
                options = options.auth(ClientAuth::Bearer(secret(token_env)?));
            }
            Some(RemoteAuth::ApiKey { header, key_env }) => {
                options = options.auth(ClientAuth::ApiKey {
                    header: header.clone(),
                    key: secret(key_env)?,
                });
            }
        }
        Ok(options)
    }
}
