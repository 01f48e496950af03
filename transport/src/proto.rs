//! A2A over gRPC: the protobuf messages of both protocol versions and their
//! conversions to and from the internal model.
//!
//! The messages are generated at build time (see `build.rs`) from the project's own
//! `.proto` files in `transport/proto/`, which `tests/proto_conformance.rs` holds
//! field by field to the reference files:
//!
//! - [`v1`]: A2A 1.0, package `lf.a2a.v1` ([`v1::pb`]). Its conversions go through
//!   the 1.0 serde model of [`crate::a2a::v1`], so every lossy case is decided once,
//!   in that module's table, for JSON-RPC and gRPC alike.
//! - [`v0_3`]: A2A 0.3.0, package `a2a.v1` ([`v0_3::pb`]), whose messages also carry
//!   ProtoJSON serde impls (pbjson): the 0.3 HTTP+JSON binding sends them. Its
//!   conversions go straight to and from the internal model, which is shaped by 0.3.
//!
//! Each module converts every RPC's request message into an
//! [`A2aRequest`](crate::jsonrpc::A2aRequest) (and back, for the client), and every
//! [`A2aResult`](crate::service::A2aResult) and
//! [`StreamEvent`](crate::a2a::StreamEvent) into the RPC's response message (and
//! back). Bad input is a [`ConversionError`] naming the proto field, which becomes
//! an invalid-params error; nothing panics.
//!
//! What the protobuf encoding adds to the JSON forms:
//!
//! - `bytes` (a file's content) are raw bytes on the wire and base64 text in the
//!   internal model: decoded when writing a message (standard or URL-safe alphabet,
//!   padded or not), encoded (standard, padded) when reading one. Text that is not
//!   base64 cannot be written, and is an error naming the field.
//! - Timestamps are `google.protobuf.Timestamp` on the wire and RFC 3339 strings in
//!   the internal model; a string that is not RFC 3339 cannot be written, and is an
//!   error naming the field.
//! - `Struct`/`Value` (metadata, data parts) are JSON values in the internal model.
//!   Numbers are doubles in protobuf: an integer beyond 2^53 loses precision, as it
//!   does in every ProtoJSON peer.

pub mod v0_3;
pub mod v1;

use std::collections::HashMap;

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use crate::a2a::Metadata;
pub use crate::a2a::v1::ConversionError;

/// A JSON object as a `google.protobuf.Struct`.
pub(crate) fn to_struct(map: Metadata) -> pbjson_types::Struct {
    pbjson_types::Struct {
        fields: map
            .into_iter()
            .map(|(key, value)| (key, to_value(value)))
            .collect::<HashMap<_, _>>(),
    }
}

/// An optional JSON object as an optional `Struct`.
pub(crate) fn to_struct_opt(map: Option<Metadata>) -> Option<pbjson_types::Struct> {
    map.map(to_struct)
}

/// A JSON value as a `google.protobuf.Value`.
pub(crate) fn to_value(value: Value) -> pbjson_types::Value {
    use pbjson_types::value::Kind;
    let kind = match value {
        Value::Null => Kind::NullValue(0),
        Value::Bool(flag) => Kind::BoolValue(flag),
        // Every JSON number has an f64 form (integers beyond 2^53 rounded).
        Value::Number(number) => Kind::NumberValue(number.as_f64().unwrap_or(0.0)),
        Value::String(text) => Kind::StringValue(text),
        Value::Array(items) => Kind::ListValue(pbjson_types::ListValue {
            values: items.into_iter().map(to_value).collect(),
        }),
        Value::Object(map) => Kind::StructValue(to_struct(map)),
    };
    pbjson_types::Value { kind: Some(kind) }
}

/// A `google.protobuf.Struct` as a JSON object.
pub(crate) fn from_struct(value: pbjson_types::Struct) -> Metadata {
    let mut map = Map::new();
    for (key, value) in value.fields {
        map.insert(key, from_value(value));
    }
    map
}

/// An optional `Struct` as an optional JSON object.
pub(crate) fn from_struct_opt(value: Option<pbjson_types::Struct>) -> Option<Metadata> {
    value.map(from_struct)
}

/// A `google.protobuf.Value` as JSON. A value with no kind set reads as `null`, and
/// so does a NaN or infinite number, which JSON cannot hold (ProtoJSON refuses to
/// write them).
pub(crate) fn from_value(value: pbjson_types::Value) -> Value {
    use pbjson_types::value::Kind;
    match value.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(flag)) => Value::Bool(flag),
        Some(Kind::NumberValue(number)) => number_value(number),
        Some(Kind::StringValue(text)) => Value::String(text),
        Some(Kind::ListValue(list)) => {
            Value::Array(list.values.into_iter().map(from_value).collect())
        }
        Some(Kind::StructValue(map)) => Value::Object(from_struct(map)),
    }
}

/// A double as a JSON number: integral values as integers (so that `3` written by
/// a JSON peer reads back as `3`, not `3.0`), others as floats.
fn number_value(number: f64) -> Value {
    // 2^53: the integers a double holds exactly.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if number.fract() == 0.0 && number.abs() <= EXACT {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "integral and within 2^53, so exact"
        )]
        return Value::Number(Number::from(number as i64));
    }
    Number::from_f64(number).map_or(Value::Null, Value::Number)
}

/// Base64 text (standard or URL-safe alphabet, padded or not) as bytes.
pub(crate) fn decode_bytes(field: &'static str, text: &str) -> Result<Vec<u8>, ConversionError> {
    use base64::alphabet;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const CONFIG: GeneralPurposeConfig =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    const STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, CONFIG);
    const URL_SAFE: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, CONFIG);
    STANDARD
        .decode(text)
        .or_else(|_| URL_SAFE.decode(text))
        .map_err(|error| ConversionError::new(field, format!("not base64: {error}")))
}

/// Bytes as base64 text (standard alphabet, padded), as the JSON forms carry them.
pub(crate) fn encode_bytes(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// An RFC 3339 timestamp as a `google.protobuf.Timestamp`.
pub(crate) fn to_timestamp(
    field: &'static str,
    text: &str,
) -> Result<pbjson_types::Timestamp, ConversionError> {
    let time = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map_err(|error| {
            ConversionError::new(
                field,
                format!("`{text}` is not an RFC 3339 timestamp: {error}"),
            )
        })?;
    Ok(pbjson_types::Timestamp {
        seconds: time.unix_timestamp(),
        nanos: i32::try_from(time.nanosecond()).unwrap_or(0),
    })
}

/// An optional RFC 3339 timestamp as an optional `Timestamp`.
pub(crate) fn to_timestamp_opt(
    field: &'static str,
    text: Option<&str>,
) -> Result<Option<pbjson_types::Timestamp>, ConversionError> {
    text.map(|text| to_timestamp(field, text)).transpose()
}

/// A `google.protobuf.Timestamp` as RFC 3339 text (UTC, `Z`).
pub(crate) fn from_timestamp(
    field: &'static str,
    timestamp: &pbjson_types::Timestamp,
) -> Result<String, ConversionError> {
    let nanos = i128::from(timestamp.seconds) * 1_000_000_000 + i128::from(timestamp.nanos);
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|time| {
            time.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .ok_or_else(|| {
            ConversionError::new(
                field,
                format!(
                    "{}s {}ns is not a representable time",
                    timestamp.seconds, timestamp.nanos
                ),
            )
        })
}

/// An optional `Timestamp` as optional RFC 3339 text.
pub(crate) fn from_timestamp_opt(
    field: &'static str,
    timestamp: Option<&pbjson_types::Timestamp>,
) -> Result<Option<String>, ConversionError> {
    timestamp.map(|t| from_timestamp(field, t)).transpose()
}

/// A proto3 string (empty = absent) as an optional string.
pub(crate) fn some_string(value: String) -> Option<String> {
    if value.is_empty() { None } else { Some(value) }
}

/// A proto3 list (empty = absent) as an optional list.
pub(crate) fn some_vec<T>(list: Vec<T>) -> Option<Vec<T>> {
    if list.is_empty() { None } else { Some(list) }
}

/// A required message field that is absent.
pub(crate) fn missing(field: &'static str) -> ConversionError {
    ConversionError::new(field, "missing: the field is required")
}

#[cfg(test)]
mod tests;
