//! Identifiers that travel on the A2A wire.
//!
//! A2A ids are strings chosen by whoever creates the object: a client may send
//! `"messageId":"m-1"`, so these wrap a string rather than a `Uuid`. Ids the
//! server creates itself come from [`TaskId::mint`] and friends, which format
//! a uuid v7 (the time first, then random bits).
//!
//! The string is shared (`Arc<str>`), not owned: one send's ids are copied into the
//! store's maps, the live-task table, events, envelopes and spans, and a clone of a
//! shared string is a reference count, where a `String` clone was an allocation
//! and a copy each time (`docs/benchmarks.md`).

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Reads an id's string straight into its shared form. Serde's own `Arc<str>` reads a
/// `String` first and copies it into the `Arc`: two allocations an id, where the text
/// the decoder lends (a JSON string without escapes, a MessagePack string) needs one.
struct IdVisitor;

impl serde::de::Visitor<'_> for IdVisitor {
    type Value = Arc<str>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Serde's words for a `String`, so a wrong type reads as it always did.
        formatter.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, id: &str) -> Result<Self::Value, E> {
        Ok(Arc::from(id))
    }
}

/// Declares a string newtype id with the conversions every id shares.
macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(Arc<str>);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_str(IdVisitor).map(Self)
            }
        }

        impl $name {
            /// Wraps an id received from the wire or chosen by the caller.
            pub fn new(id: impl Into<String>) -> Self {
                Self(Arc::from(id.into()))
            }

            /// Mints a fresh, globally unique id (a uuid v7 string: the
            /// millisecond first, then 74 random bits), for ids the server
            /// creates. Ids minted in a later millisecond sort later, so a durable
            /// store's indexes on them grow at their end instead of touching a
            /// random page per new task. (No shared counter orders ids within a
            /// millisecond: `Uuid::now_v7`'s takes a global lock per id.)
            #[must_use]
            pub fn mint() -> Self {
                Self::mint_at(std::time::SystemTime::now())
            }

            /// Mints an id as [`Self::mint`] does, with `at` for its time: for a
            /// caller that stamps something else with the same read of the clock.
            #[must_use]
            pub fn mint_at(at: std::time::SystemTime) -> Self {
                // A time before 1970 is no time this runtime mints at; it sorts first.
                let since = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                let time = uuid::Timestamp::from_unix(
                    uuid::NoContext,
                    since.as_secs(),
                    since.subsec_nanos(),
                );
                let mut text = uuid::Uuid::encode_buffer();
                let id = uuid::Uuid::new_v7(time);
                Self(Arc::from(&*id.hyphenated().encode_lower(&mut text)))
            }

            /// The id as it appears on the wire.
            #[must_use]
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Unwraps the id into its string.
            #[must_use]
            pub fn into_string(self) -> String {
                self.0.to_string()
            }
        }

        /// The empty id: a placeholder for a value whose id is moved out or filled in
        /// later. It allocates nothing (every empty id shares one static string).
        impl Default for $name {
            fn default() -> Self {
                Self(Arc::default())
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(Arc::from(id))
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                Self(Arc::from(id))
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

string_id! {
    /// Identifies an A2A task (`Task.id`, `taskId`). Minted by the server for
    /// a new task; echoed by the client to continue it.
    ///
    /// On the wire it is a plain JSON string:
    ///
    /// ```
    /// use agentyard_transport::TaskId;
    ///
    /// let id = TaskId::new("task-123");
    /// let json = serde_json::to_string(&id).unwrap();
    /// assert_eq!(json, r#""task-123""#);
    /// let back: TaskId = serde_json::from_str(&json).unwrap();
    /// assert_eq!(back, id);
    /// assert_eq!(back.to_string(), "task-123");
    /// ```
    TaskId
}

string_id! {
    /// Groups related tasks and messages into one conversation (`contextId`).
    /// Minted by the server and echoed by the client.
    ///
    /// ```
    /// use agentyard_transport::ContextId;
    ///
    /// let id: ContextId = serde_json::from_str(r#""ctx-456""#).unwrap();
    /// assert_eq!(id.as_str(), "ctx-456");
    /// assert_eq!(serde_json::to_value(&id).unwrap(), serde_json::json!("ctx-456"));
    /// ```
    ContextId
}

string_id! {
    /// Identifies one message (`messageId`), chosen by its sender.
    ///
    /// ```
    /// use agentyard_transport::MessageId;
    ///
    /// let minted = MessageId::mint();
    /// let json = serde_json::to_value(&minted).unwrap();
    /// assert_eq!(serde_json::from_value::<MessageId>(json).unwrap(), minted);
    /// ```
    MessageId
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_ids_are_distinct_uuid_strings() {
        let a = TaskId::mint();
        let b = TaskId::mint();
        assert_ne!(a, b);
        assert!(uuid::Uuid::parse_str(a.as_str()).is_ok());
    }

    #[test]
    fn an_id_minted_at_a_time_carries_that_millisecond() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_790_000_000_123);
        let id = uuid::Uuid::parse_str(TaskId::mint_at(at).as_str()).expect("a uuid");
        assert_eq!(id.get_version_num(), 7);
        let time = id.get_timestamp().expect("v7 has a time").to_unix();
        assert_eq!(time, (1_790_000_000, 123_000_000));
        assert_ne!(
            TaskId::mint_at(at),
            TaskId::mint_at(at),
            "random past the time"
        );
    }

    #[test]
    fn ids_minted_in_a_later_millisecond_sort_later() {
        let first = TaskId::mint();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let later = TaskId::mint();
        assert!(first.as_str() < later.as_str(), "{first} then {later}");
        let version = uuid::Uuid::parse_str(later.as_str()).map(|id| id.get_version_num());
        assert_eq!(version.ok(), Some(7));
    }

    #[test]
    fn the_default_id_is_empty() {
        assert_eq!(MessageId::default().as_str(), "");
        assert_eq!(TaskId::default(), TaskId::from(""));
    }

    #[test]
    fn ids_accept_any_client_chosen_string() {
        let id: MessageId = serde_json::from_str(r#""m-1""#).expect("a string id");
        assert_eq!(id, MessageId::from("m-1"));
        assert_eq!(id.into_string(), "m-1");
    }

    #[test]
    fn ids_reject_non_string_json() {
        let error = serde_json::from_str::<ContextId>("42").expect_err("a number is no id");
        assert!(error.to_string().contains("expected a string"), "{error}");
    }

    #[test]
    fn ids_read_from_lent_owned_and_escaped_text_alike() {
        // Lent by the decoder (no escapes), decoded into a buffer (escapes), and handed
        // over owned (a `Value`): the same id each way.
        let lent: TaskId = serde_json::from_str(r#""t-1""#).expect("lent text");
        let escaped: TaskId = serde_json::from_str(r#""t-\u0031""#).expect("escaped text");
        let owned: TaskId = serde_json::from_value(serde_json::json!("t-1")).expect("owned");
        assert_eq!(lent, TaskId::from("t-1"));
        assert_eq!(escaped, lent);
        assert_eq!(owned, lent);
    }
}
