use agentyard_transport::a2a::{Artifact, Part};

use super::*;

fn artifacts() -> Vec<Artifact> {
    let mut data = serde_json::Map::new();
    data.insert("k".into(), "v".into());
    vec![
        Artifact::new("a", vec![Part::data(data), Part::text("first text")]),
        Artifact::new(
            "b",
            vec![Part::text("second text"), Part::file_uri("http://x/f")],
        ),
    ]
}

fn render(source: &str) -> Result<String, TemplateError> {
    let produced = artifacts();
    Template::parse(source)
        .unwrap()
        .render("the input", |node| {
            (node == "n").then_some(produced.as_slice())
        })
}

#[test]
fn every_reference_form_renders() {
    assert_eq!(render("{{n}}").unwrap(), "first text");
    assert_eq!(render("{{ n.data }}").unwrap(), r#"{"k":"v"}"#);
    assert_eq!(render("{{n.parts[2]}}").unwrap(), "second text");
    assert_eq!(render("{{n.parts[3]}}").unwrap(), "http://x/f");
    assert_eq!(render("in: {{input}}!").unwrap(), "in: the input!");
    assert_eq!(render("no refs } {").unwrap(), "no refs } {");
}

#[test]
fn a_missing_part_is_an_error_naming_the_template_not_an_empty_string() {
    let error = render("x {{n.parts[9]}}").unwrap_err();
    assert_eq!(error.template, "x {{n.parts[9]}}");
    assert!(
        error.problem.contains("has 4 part(s), no part 9"),
        "{error}"
    );
    let error = render("{{other}}").unwrap_err();
    assert!(
        error.to_string().contains("node `other` has no text part"),
        "{error}"
    );
    let error = render("{{other.data}}").unwrap_err();
    assert!(
        error.to_string().contains("node `other` has no data part"),
        "{error}"
    );
}

#[test]
fn bad_templates_are_refused_when_parsed() {
    for (source, problem) in [
        ("{{n", "never closed"),
        ("{{}}", "names nothing"),
        ("{{n.text}}", "expected `data` or `parts[N]`"),
        ("{{n.parts[x]}}", "expected `data` or `parts[N]`"),
        ("{{a b}}", "is not a node id"),
    ] {
        let error = Template::parse(source).unwrap_err();
        assert!(error.to_string().contains(problem), "{source}: {error}");
        assert!(error.to_string().contains(source), "{source}: {error}");
    }
}

#[test]
fn references_list_the_nodes_in_order() {
    let t = Template::parse("{{a}} {{input}} {{b.data}} {{c.parts[1]}}").unwrap();
    let nodes: Vec<_> = t.references().filter_map(Reference::node).collect();
    assert_eq!(nodes, ["a", "b", "c"]);
}
