//! A small reader of the proto's `message X { ... }` blocks, enough to list
//! each message's fields by name (test-only: the proto is not compiled).

use std::collections::BTreeMap;

/// Each top-level message of `source` with its field names in order. Fields
/// inside a `oneof` belong to the message; comments and options are skipped.
pub(super) fn messages(source: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, Vec<String>)> = None;
    let mut depth = 0usize;
    for raw in source.lines() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if depth == 0 {
            if let Some(rest) = line.strip_prefix("message ") {
                let name = rest.trim_end_matches('{').trim().to_owned();
                current = Some((name, Vec::new()));
            }
        } else if let Some((_, fields)) = current.as_mut()
            && let Some(field) = field_name(line)
        {
            fields.push(field);
        }
        depth += line.matches('{').count();
        depth = depth.saturating_sub(line.matches('}').count());
        if depth == 0
            && let Some((name, fields)) = current.take()
        {
            out.insert(name, fields);
        }
    }
    out
}

/// The name of the field declared on `line` (`[optional|repeated] Type name =
/// N ...;` or `map<K, V> name = N;`), if it declares one.
fn field_name(line: &str) -> Option<String> {
    let (declaration, _) = line.split_once('=')?;
    if !line.ends_with(';') || line.starts_with("option ") {
        return None;
    }
    let name = declaration.split_whitespace().last()?;
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
        .then(|| name.to_owned())
}

/// The ProtoJSON name of a field: lowerCamelCase of its snake_case name.
pub(super) fn json_name(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut upper = false;
    for c in field.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}
