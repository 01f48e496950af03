//! Fixed discriminator fields: `kind` on tasks, messages, events and parts,
//! `type` on security schemes.
//!
//! Serde's `#[serde(tag = "kind")]` on a struct writes the tag but never checks
//! it when reading, so a message sent as `"kind":"task"` would be accepted. The
//! [`tagged!`] macro pairs each public struct with a private wire twin that
//! reads the tag as a real field, and checks it before converting. Unions whose
//! variants are told apart by the tag (a [`Part`](super::Part), a send result,
//! a security scheme) read the object first and dispatch with [`take_tag`].

use serde::de::Error as _;
use serde_json::{Map, Value};

/// Builds the error for a tag that is present but not one of `expected`.
pub(crate) fn wrong_tag<E: serde::de::Error>(field: &str, found: &str, expected: &[&str]) -> E {
    let expected = expected
        .iter()
        .map(|tag| format!("\"{tag}\""))
        .collect::<Vec<_>>()
        .join(", ");
    E::custom(format_args!(
        "invalid `{field}` \"{found}\": expected {expected}"
    ))
}

/// A tag as read, held inline rather than in a `String`: a message and each of its
/// parts has one, and a send reads them all. Every tag the protocol defines is
/// short; a longer one is wrong whatever it says, and is kept cut short, for the
/// error that names it.
#[derive(Clone, Copy)]
pub(crate) struct Tag {
    bytes: [u8; Tag::CAPACITY],
    len: u8,
    cut: bool,
}

impl Tag {
    /// The longest tag held whole; the protocol's longest is `artifact-update`.
    const CAPACITY: usize = 30;

    fn new(read: &str) -> Self {
        let mut end = read.len().min(Self::CAPACITY);
        while !read.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0; Self::CAPACITY];
        bytes[..end].copy_from_slice(&read.as_bytes()[..end]);
        Self {
            bytes,
            // At most `CAPACITY`, which fits.
            len: u8::try_from(end).unwrap_or(u8::MAX),
            cut: end < read.len(),
        }
    }

    /// The tag, when it was held whole; a tag cut short matches none.
    pub(crate) fn as_str(&self) -> Option<&str> {
        if self.cut {
            return None;
        }
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).ok()
    }

    /// The tag as an error shows it: cut short with `…` when it was.
    pub(crate) fn shown(&self) -> String {
        let held = std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default();
        if self.cut {
            format!("{held}…")
        } else {
            held.to_owned()
        }
    }
}

impl<'de> serde::Deserialize<'de> for Tag {
    fn deserialize<D>(deserializer: D) -> Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        struct Visitor;

        impl serde::de::Visitor<'_> for Visitor {
            type Value = Tag;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a string")
            }

            fn visit_str<E: serde::de::Error>(self, read: &str) -> Result<Tag, E> {
                Ok(Tag::new(read))
            }
        }

        deserializer.deserialize_str(Visitor)
    }
}

/// Reads a JSON object for a union discriminated by `field` and returns the
/// object with its tag, which must be one of `expected`.
///
/// # Errors
///
/// The input is not an object, the tag is missing or not a string, or it is
/// not one of `expected`.
pub(crate) fn take_tag<'de, D>(
    deserializer: D,
    field: &'static str,
    expected: &[&str],
) -> Result<(String, Map<String, Value>), D::Error>
where
    D: serde::Deserializer<'de>,
{
    let object = <Map<String, Value> as serde::Deserialize>::deserialize(deserializer)?;
    let tag = match object.get(field) {
        Some(Value::String(tag)) => tag.clone(),
        Some(other) => {
            return Err(D::Error::custom(format_args!(
                "invalid `{field}` {other}: expected a string"
            )));
        }
        None => return Err(D::Error::missing_field(field)),
    };
    if expected.contains(&tag.as_str()) {
        Ok((tag, object))
    } else {
        Err(wrong_tag(field, &tag, expected))
    }
}

/// Deserializes one variant of a union from the object [`take_tag`]
/// returned. The object was buffered, so the outer path tracking stops here;
/// the error text carries the path inside the object instead (e.g.
/// `file.bytes: invalid type: ...`).
pub(crate) fn from_object<T, E>(object: Map<String, Value>) -> Result<T, E>
where
    T: serde::de::DeserializeOwned,
    E: serde::de::Error,
{
    serde_path_to_error::deserialize(Value::Object(object)).map_err(|error| {
        let path = error.path().to_string();
        if path == "." {
            E::custom(error.into_inner())
        } else {
            E::custom(format_args!("{path}: {}", error.into_inner()))
        }
    })
}

/// Declares a struct whose JSON form carries a fixed, required tag field.
///
/// The public struct serializes with `$tag: $value` first; reading goes
/// through a private twin with the same fields plus the tag as a [`Tag`],
/// which is checked against `$value`. Every field must be `pub` and listed
/// with its serde attributes; both structs use camelCase.
macro_rules! tagged {
    (
        $tag:literal = $value:literal, wire = $wire:ident, expecting = $expecting:literal;
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
        #[serde(tag = $tag, rename = $value, rename_all = "camelCase")]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: $ty,
            )*
        }

        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase", expecting = $expecting)]
        struct $wire {
            #[serde(rename = $tag)]
            tag: $crate::a2a::tagged::Tag,
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
                if wire.tag.as_str() != Some($value) {
                    return Err($crate::a2a::tagged::wrong_tag(
                        $tag,
                        &wire.tag.shown(),
                        &[$value],
                    ));
                }
                Ok(Self { $($field: wire.$field,)* })
            }
        }
    };
}

pub(crate) use tagged;
