//! Pure policy decisions for agentyard.
mod bucket;
mod decision;
mod error;
mod request;
mod rule;
pub use bucket::{RateLimit, TokenBucket};
pub use decision::{Decision, Rejection, RejectionKind};
pub use error::{PolicyError, Result};
pub use request::{EntryPoint, SendRequest};
pub use rule::{Effect, Pattern, Rule};
