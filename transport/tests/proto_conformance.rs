//! agentyard's own `.proto` files (`transport/proto/`) against the reference ones
//! (`transport/schema/a2a-v1.0.proto`, `a2a-v0.3.0.proto`): both are compiled with
//! protox and compared field by field, so that our gRPC services are
//! wire-compatible with every official SDK.
//!
//! Compared: the package; every message, nested ones too, with each field's name,
//! number, type (and type name), label, proto3 `optional`, oneof and JSON name;
//! every enum with its values; every service with each method's input, output and
//! streaming flags. Options that do not reach the wire (`google.api.http`,
//! `field_behavior`, language options) are not compared. The reference files import
//! googleapis' `google/api/*.proto`; small stand-ins for them live in
//! `tests/fixtures/googleapis`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use prost_types::{DescriptorProto, FileDescriptorProto, FileDescriptorSet};

fn dir(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn compile(file: &str, includes: &[PathBuf]) -> FileDescriptorSet {
    protox::compile([file], includes).unwrap_or_else(|error| panic!("{file}: {error}"))
}

fn ours(file: &str) -> FileDescriptorProto {
    let set = compile(file, &[dir("proto")]);
    find(set, file)
}

fn reference(file: &str) -> FileDescriptorProto {
    let set = compile(file, &[dir("schema"), dir("tests/fixtures/googleapis")]);
    find(set, file)
}

fn find(set: FileDescriptorSet, name: &str) -> FileDescriptorProto {
    set.file
        .into_iter()
        .find(|file| file.name() == name)
        .unwrap_or_else(|| panic!("{name} is not in its descriptor set"))
}

/// Everything on the wire about one file, one line per fact, keyed so that two
/// files compare as maps (and a difference names the element).
fn wire_facts(file: &FileDescriptorProto) -> BTreeMap<String, String> {
    let mut facts = BTreeMap::new();
    facts.insert("package".to_owned(), file.package().to_owned());
    for message in &file.message_type {
        message_facts(message, file.package(), &mut facts);
    }
    for enumeration in &file.enum_type {
        enum_facts(enumeration, file.package(), &mut facts);
    }
    for service in &file.service {
        let name = format!("{}.{}", file.package(), service.name());
        facts.insert(format!("service {name}"), service.method.len().to_string());
        for method in &service.method {
            facts.insert(
                format!("rpc {name}.{}", method.name()),
                format!(
                    "({}{}) returns ({}{})",
                    if method.client_streaming() {
                        "stream "
                    } else {
                        ""
                    },
                    method.input_type(),
                    if method.server_streaming() {
                        "stream "
                    } else {
                        ""
                    },
                    method.output_type(),
                ),
            );
        }
    }
    facts
}

fn message_facts(message: &DescriptorProto, scope: &str, facts: &mut BTreeMap<String, String>) {
    let name = format!("{scope}.{}", message.name());
    facts.insert(
        format!("message {name}"),
        format!("{} fields", message.field.len()),
    );
    for field in &message.field {
        let oneof = field
            .oneof_index
            .filter(|_| !field.proto3_optional())
            .and_then(|index| usize::try_from(index).ok())
            .and_then(|index| message.oneof_decl.get(index))
            .map_or(String::new(), |oneof| format!(" oneof {}", oneof.name()));
        facts.insert(
            format!("field {name}.{}", field.name()),
            format!(
                "= {} {:?} {:?} {}{} optional={} json={}",
                field.number(),
                field.label(),
                field.r#type(),
                field.type_name(),
                oneof,
                field.proto3_optional(),
                field.json_name(),
            ),
        );
    }
    for nested in &message.nested_type {
        message_facts(nested, &name, facts);
    }
    for enumeration in &message.enum_type {
        enum_facts(enumeration, &name, facts);
    }
}

fn enum_facts(
    enumeration: &prost_types::EnumDescriptorProto,
    scope: &str,
    facts: &mut BTreeMap<String, String>,
) {
    let name = format!("{scope}.{}", enumeration.name());
    facts.insert(
        format!("enum {name}"),
        format!("{} values", enumeration.value.len()),
    );
    for value in &enumeration.value {
        facts.insert(
            format!("value {name}.{}", value.name()),
            value.number().to_string(),
        );
    }
}

/// The facts that differ, as readable lines (empty when the files match).
fn differences(ours: &FileDescriptorProto, reference: &FileDescriptorProto) -> Vec<String> {
    let ours = wire_facts(ours);
    let reference = wire_facts(reference);
    let mut lines = Vec::new();
    for (key, expected) in &reference {
        match ours.get(key) {
            None => lines.push(format!("missing: {key} {expected}")),
            Some(actual) if actual != expected => {
                lines.push(format!("{key}: ours `{actual}`, reference `{expected}`"));
            }
            Some(_) => {}
        }
    }
    for (key, actual) in &ours {
        if !reference.contains_key(key) {
            lines.push(format!("extra: {key} {actual}"));
        }
    }
    lines
}

#[test]
fn the_1_0_proto_matches_the_reference_on_the_wire() {
    let ours = ours("lf/a2a/v1/a2a.proto");
    let reference = reference("a2a-v1.0.proto");
    assert_eq!(reference.package(), "lf.a2a.v1");
    let lines = differences(&ours, &reference);
    assert!(lines.is_empty(), "1.0 proto differs:\n{}", lines.join("\n"));
}

#[test]
fn the_0_3_proto_matches_the_reference_on_the_wire() {
    let ours = ours("a2a/v1/a2a.proto");
    let reference = reference("a2a-v0.3.0.proto");
    assert_eq!(reference.package(), "a2a.v1");
    let lines = differences(&ours, &reference);
    assert!(lines.is_empty(), "0.3 proto differs:\n{}", lines.join("\n"));
}

#[test]
fn the_comparison_sees_a_changed_number_a_streaming_flag_and_a_missing_field() {
    let reference = reference("a2a-v1.0.proto");
    let mut changed = ours("lf/a2a/v1/a2a.proto");
    let task = changed
        .message_type
        .iter_mut()
        .find(|message| message.name() == "Task")
        .expect("Task");
    task.field[1].number = Some(42);
    task.field.pop();
    let service = &mut changed.service[0];
    let method = service
        .method
        .iter_mut()
        .find(|method| method.name() == "SubscribeToTask")
        .expect("SubscribeToTask");
    method.server_streaming = Some(false);
    let lines = differences(&changed, &reference);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("field lf.a2a.v1.Task.context_id")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("missing: field lf.a2a.v1.Task.metadata")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("rpc lf.a2a.v1.A2AService.SubscribeToTask")),
        "{lines:?}"
    );
}

#[test]
fn the_reference_annotations_are_read_through_the_stand_ins() {
    // The stand-in googleapis files are what let the reference compile; its HTTP
    // rules are what the HTTP+JSON binding's paths come from, so they must survive.
    let reference = reference("a2a-v1.0.proto");
    let send = &reference.service[0].method[0];
    assert_eq!(send.name(), "SendMessage");
    assert!(
        send.options.is_some(),
        "the google.api.http option was lost"
    );
}
