//! What the conversions between the 1.0 wire form and the internal model
//! share: the error for a value that has no internal form, and the helpers
//! that turn proto3 defaults into absent values.

use std::borrow::Cow;

/// A 1.0 value the internal model cannot represent, naming the field.
///
/// ```
/// use agentyard_transport::a2a::{self, v1};
///
/// let message: v1::Message = serde_json::from_value(serde_json::json!({
///     "messageId": "m-1", "role": "ROLE_UNSPECIFIED", "parts": [{"text": "hi"}]
/// })).unwrap();
/// let error = a2a::Message::try_from(message).unwrap_err();
/// assert_eq!(error.field(), "Message.role");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{field}`: {problem}")]
pub struct ConversionError {
    field: &'static str,
    problem: Cow<'static, str>,
}

impl ConversionError {
    /// An error about `field` (the proto message and field, e.g.
    /// `"Message.role"`).
    pub(crate) fn new(field: &'static str, problem: impl Into<Cow<'static, str>>) -> Self {
        Self {
            field,
            problem: problem.into(),
        }
    }

    /// The field at fault, as `Message.field` in the proto's names.
    #[must_use]
    pub fn field(&self) -> &'static str {
        self.field
    }

    /// What is wrong with it.
    #[must_use]
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

/// A proto3 list (empty = absent) into the internal optional list.
pub(super) fn some_vec<T>(list: Vec<T>) -> Option<Vec<T>> {
    if list.is_empty() { None } else { Some(list) }
}

/// A proto3 string (empty = absent) into the internal optional string.
pub(super) fn some_string(value: String) -> Option<String> {
    if value.is_empty() { None } else { Some(value) }
}

/// A proto3 bool (false = absent) into the internal optional flag.
pub(super) fn some_true(flag: bool) -> Option<bool> {
    flag.then_some(true)
}

/// A 1.0 `optional int32` count into the internal `u32`, refusing negatives.
pub(super) fn count(
    field: &'static str,
    value: Option<i32>,
) -> Result<Option<u32>, ConversionError> {
    value
        .map(|n| {
            u32::try_from(n).map_err(|_| {
                ConversionError::new(field, format!("{n} is negative: a count cannot be"))
            })
        })
        .transpose()
}

/// An internal count back into a 1.0 `int32`, saturating (no history is that
/// long).
pub(super) fn to_int32(value: Option<u32>) -> Option<i32> {
    value.map(|n| i32::try_from(n).unwrap_or(i32::MAX))
}

/// Serde helper: skips a proto3 string left at its default.
pub(super) fn is_empty(value: &str) -> bool {
    value.is_empty()
}

/// Serde helper: skips a proto3 bool left at its default.
pub(super) fn is_false(value: &bool) -> bool {
    !*value
}

/// Serde helper: skips a proto3 int32 left at its default.
pub(super) fn is_zero(value: &i32) -> bool {
    *value == 0
}

/// Declares a proto enum: written as its full name, read from the name or
/// the number (both are ProtoJSON), with an error naming the enum otherwise.
macro_rules! proto_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident ($label:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $number:literal => $wire:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
        }

        impl $name {
            /// Every value, in the proto's order.
            pub const ALL: &'static [Self] = &[$(Self::$variant,)*];

            /// The value's ProtoJSON name.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $wire,)* }
            }

            /// The value's proto number.
            #[must_use]
            pub const fn number(self) -> i32 {
                match self { $(Self::$variant => $number,)* }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Visitor;

                impl serde::de::Visitor<'_> for Visitor {
                    type Value = $name;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("a ", $label, " name or number"))
                    }

                    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<$name, E> {
                        $name::ALL.iter().copied().find(|value| value.as_str() == name).ok_or_else(|| {
                            let names: Vec<&str> = $name::ALL.iter().map(|value| value.as_str()).collect();
                            E::custom(format_args!(
                                concat!("invalid ", $label, " \"{}\": expected one of {}"),
                                name,
                                names.join(", ")
                            ))
                        })
                    }

                    fn visit_i64<E: serde::de::Error>(self, number: i64) -> Result<$name, E> {
                        $name::ALL.iter().copied().find(|value| i64::from(value.number()) == number).ok_or_else(|| {
                            E::custom(format_args!(concat!("invalid ", $label, " number {}"), number))
                        })
                    }

                    fn visit_u64<E: serde::de::Error>(self, number: u64) -> Result<$name, E> {
                        match i64::try_from(number) {
                            Ok(number) => self.visit_i64(number),
                            Err(_) => Err(E::custom(format_args!(concat!("invalid ", $label, " number {}"), number))),
                        }
                    }
                }

                deserializer.deserialize_any(Visitor)
            }
        }
    };
}

pub(super) use proto_enum;

/// Serde helpers for `int32` fields, which ProtoJSON parsers accept as a
/// number or as a decimal string.
pub(super) mod int32 {
    use std::fmt;

    use serde::de::{self, Deserializer, Visitor};

    struct Int32;

    impl Visitor<'_> for Int32 {
        type Value = i32;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a 32-bit integer (a number or a decimal string)")
        }

        fn visit_i64<E: de::Error>(self, value: i64) -> Result<i32, E> {
            i32::try_from(value)
                .map_err(|_| E::custom(format_args!("{value} does not fit in 32 bits")))
        }

        fn visit_u64<E: de::Error>(self, value: u64) -> Result<i32, E> {
            i32::try_from(value)
                .map_err(|_| E::custom(format_args!("{value} does not fit in 32 bits")))
        }

        fn visit_f64<E: de::Error>(self, value: f64) -> Result<i32, E> {
            // ProtoJSON accepts `2.0` for an integer, but not `2.5`.
            let truncated = value.trunc();
            if truncated == value
                && truncated >= f64::from(i32::MIN)
                && truncated <= f64::from(i32::MAX)
            {
                // In range and whole, checked just above: the cast is exact.
                Ok(truncated as i32)
            } else {
                Err(E::custom(format_args!("{value} is not a 32-bit integer")))
            }
        }

        fn visit_str<E: de::Error>(self, value: &str) -> Result<i32, E> {
            value
                .parse()
                .map_err(|_| E::custom(format_args!("\"{value}\" is not a 32-bit integer")))
        }
    }

    /// An `int32` field.
    pub(in super::super) fn required<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<i32, D::Error> {
        deserializer.deserialize_any(Int32)
    }

    /// An `optional int32` field: `null` is absent.
    pub(in super::super) fn optional<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<i32>, D::Error> {
        struct Optional;

        impl<'de> Visitor<'de> for Optional {
            type Value = Option<i32>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 32-bit integer or null")
            }

            fn visit_none<E: de::Error>(self) -> Result<Option<i32>, E> {
                Ok(None)
            }

            fn visit_unit<E: de::Error>(self) -> Result<Option<i32>, E> {
                Ok(None)
            }

            fn visit_some<D: Deserializer<'de>>(
                self,
                deserializer: D,
            ) -> Result<Option<i32>, D::Error> {
                required(deserializer).map(Some)
            }
        }

        deserializer.deserialize_option(Optional)
    }
}
