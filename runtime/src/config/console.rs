//! `[console]`: the live web console at `/ui` (`crate::console`).

use serde::Deserialize;

use super::{AuthSection, ConfigError};

/// `[console]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct ConsoleSection {
    /// Whether the edge serves the console at `/ui` and its API under `/api/console`
    /// (default yes). The page holds no data; its API needs the same credentials as
    /// the A2A routes.
    pub enabled: bool,
    /// Principals (the `name` of an API key or bearer token in `[auth]`) that see
    /// every agent and every task in the console; everyone else sees only the tasks
    /// they created (default none).
    pub operators: Vec<String>,
}

impl Default for ConsoleSection {
    fn default() -> Self {
        Self {
            enabled: true,
            operators: Vec::new(),
        }
    }
}

impl ConsoleSection {
    /// Checks that each operator names a principal of `[auth]`: a name that no key
    /// or token carries would let nobody in, silently.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming `console.operators` and the name.
    pub fn check(&self, auth: &AuthSection) -> Result<(), ConfigError> {
        for operator in &self.operators {
            let known = auth.api_keys.iter().any(|k| &k.name == operator)
                || auth.bearer_tokens.iter().any(|t| &t.name == operator);
            if !known {
                return Err(ConfigError::Invalid {
                    key: String::from("console.operators"),
                    problem: format!(
                        "`{operator}` is not the name of an API key or bearer token in [auth]"
                    ),
                });
            }
        }
        Ok(())
    }

    /// The console's options from this section.
    #[must_use]
    pub fn options(&self) -> crate::console::ConsoleOptions {
        self.operators.iter().fold(
            crate::console::ConsoleOptions::default(),
            |options, name| options.operator(name.clone()),
        )
    }
}
