use serde_json::json;

use super::*;

#[test]
fn json_values_survive_a_struct_round_trip_with_integers_kept_integral() {
    let value = json!({"n": 3, "x": 1.5, "s": "t", "b": true, "z": null,
        "list": [1, {"deep": [false]}], "neg": -7});
    let Value::Object(map) = value.clone() else {
        unreachable!("an object literal")
    };
    assert_eq!(Value::Object(from_struct(to_struct(map))), value);
}

#[test]
fn a_number_json_cannot_hold_reads_as_null() {
    let nan = pbjson_types::Value {
        kind: Some(pbjson_types::value::Kind::NumberValue(f64::NAN)),
    };
    assert_eq!(from_value(nan), Value::Null);
    assert_eq!(from_value(pbjson_types::Value { kind: None }), Value::Null);
}

#[test]
fn bytes_are_read_from_either_base64_alphabet_with_or_without_padding() {
    for text in ["aGk/Pz4+", "aGk_Pz4-", "aGk", "aGk="] {
        let bytes = decode_bytes("Part.raw", text).expect(text);
        assert!(bytes.starts_with(b"hi"), "{text}");
    }
    assert_eq!(encode_bytes(b"hi"), "aGk=");
}

#[test]
fn text_that_is_not_base64_is_an_error_naming_the_field() {
    let error = decode_bytes("Part.raw", "not base64!").expect_err("refused");
    assert_eq!(error.field(), "Part.raw");
}

#[test]
fn timestamps_round_trip_through_rfc_3339() {
    let stamp = to_timestamp("TaskStatus.timestamp", "2025-01-02T03:04:05.5Z").expect("parses");
    assert_eq!(stamp.seconds, 1_735_787_045);
    assert_eq!(stamp.nanos, 500_000_000);
    assert_eq!(
        from_timestamp("TaskStatus.timestamp", &stamp).expect("formats"),
        "2025-01-02T03:04:05.5Z"
    );
    let offset = to_timestamp("f", "2025-01-02T04:04:05+01:00").expect("parses");
    assert_eq!(offset.seconds, 1_735_787_045);
}

#[test]
fn a_malformed_timestamp_is_an_error_naming_the_field_both_ways() {
    let error = to_timestamp("TaskStatus.timestamp", "yesterday").expect_err("refused");
    assert_eq!(error.field(), "TaskStatus.timestamp");
    let out_of_range = pbjson_types::Timestamp {
        seconds: i64::MAX,
        nanos: 0,
    };
    let error = from_timestamp("TaskStatus.timestamp", &out_of_range).expect_err("refused");
    assert_eq!(error.field(), "TaskStatus.timestamp");
}
