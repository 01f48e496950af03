//! The `kind` discriminator that A2A puts on tasks, messages, events and parts.
//!
//! Serde's `#[serde(tag = "kind")]` on a struct writes the tag but never checks
//! it when reading, so a message sent as `"kind":"task"` would be accepted. The
//! [`kinded!`] macro pairs each public struct with a private wire twin that
//! reads `kind` as a real field, and checks it before converting. Unions whose
//! variants are told apart by `kind` (a [`Part`](super::Part), a send result)
//! read the object first and dispatch with [`take_kind`].

use serde::de::Error as _;
use serde_json::{Map, Value};

/// Builds the error for a `kind` that is present but not the expected one.
pub(crate) fn wrong_kind<E: serde::de::Error>(found: &str, expected: &[&str]) -> E {
    let expected = expected
        .iter()
        .map(|k| format!("\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ");
    E::custom(format_args!(
        "invalid `kind` \"{found}\": expected {expected}"
    ))
}

/// Reads a JSON object for a union discriminated by `kind` and returns the
/// object with its `kind`, which must be one of `expected`.
///
/// # Errors
///
/// The input is not an object, `kind` is missing or not a string, or it is not
/// one of `expected`.
pub(crate) fn take_kind<'de, D>(
    deserializer: D,
    expected: &[&str],
) -> Result<(String, Map<String, Value>), D::Error>
where
    D: serde::Deserializer<'de>,
{
    let object = <Map<String, Value> as serde::Deserialize>::deserialize(deserializer)?;
    let kind = match object.get("kind") {
        Some(Value::String(kind)) => kind.clone(),
        Some(other) => {
            return Err(D::Error::custom(format_args!(
                "invalid `kind` {other}: expected a string"
            )));
        }
        None => return Err(D::Error::missing_field("kind")),
    };
    if expected.contains(&kind.as_str()) {
        Ok((kind, object))
    } else {
        Err(wrong_kind(&kind, expected))
    }
}

/// Deserializes one variant of a `kind` union from the object [`take_kind`]
/// returned, carrying serde_json's error (which names the bad field) into the
/// caller's error type.
pub(crate) fn from_object<T, E>(object: Map<String, Value>) -> Result<T, E>
where
    T: serde::de::DeserializeOwned,
    E: serde::de::Error,
{
    serde_json::from_value(Value::Object(object)).map_err(E::custom)
}

/// Declares a struct whose JSON form carries a fixed, required `kind`.
///
/// The public struct serializes with `"kind": $kind` first; reading goes
/// through a private twin with the same fields plus `kind: String`, which is
/// checked against `$kind`. Every field must be `pub` and listed with its
/// serde attributes; both structs use camelCase.
macro_rules! kinded {
    (
        kind = $kind:literal, wire = $wire:ident, expecting = $expecting:literal;
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                pub $field:ident : $ty:ty,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(serde::Serialize)]
        #[serde(tag = "kind", rename = $kind, rename_all = "camelCase")]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: $ty,
            )*
        }

        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase", expecting = $expecting)]
        struct $wire {
            kind: String,
            $(
                $(#[$fmeta])*
                $field: $ty,
            )*
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
            where
                D: serde::Deserializer<'de>,
            {
                let wire = $wire::deserialize(deserializer)?;
                if wire.kind != $kind {
                    return Err($crate::a2a::kind::wrong_kind(&wire.kind, &[$kind]));
                }
                Ok(Self { $($field: wire.$field,)* })
            }
        }
    };
}

pub(crate) use kinded;
