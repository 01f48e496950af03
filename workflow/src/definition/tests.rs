use super::*;

fn catalog() -> Names {
    Names::new(["echo"], ["upper"])
}

fn load(text: &str) -> Result<Workflow, DefinitionError> {
    Workflow::load(text, &catalog())
}

const GOOD: &str = r#"
name = "good"
description = "d"
[[nodes]]
id = "in"
kind = "input"
[[nodes]]
id = "a"
kind = "agent"
agent = "echo"
prompt = "{{in}}"
timeout_ms = 1000
retries = 2
backoff_ms = 50
[[nodes]]
id = "t"
kind = "tool"
tool = "upper"
depends_on = ["a"]
[[nodes]]
id = "out"
kind = "output"
from = ["a", "t"]
"#;

#[test]
fn toml_json_and_the_builder_give_the_same_workflow() {
    let from_toml = load(GOOD).unwrap();
    let json = serde_json::to_string(from_toml.spec()).unwrap();
    let from_json = load(&json).unwrap();
    let built = Workflow::builder("good")
        .description("d")
        .input("in")
        .agent("a", "echo", "{{in}}")
        .with_last(|n| {
            n.timeout_ms = Some(1000);
            n.retries = Some(2);
            n.backoff_ms = Some(50);
        })
        .tool("t", "upper", None)
        .with_last(|n| n.depends_on = vec!["a".into()])
        .output("out", ["a", "t"])
        .build(&catalog())
        .unwrap();
    assert_eq!(from_toml, from_json);
    assert_eq!(from_toml, built);
    let NodeKind::Agent(agent) = &built.node("a").unwrap().kind else {
        panic!()
    };
    assert_eq!(agent.timeout, Some(Duration::from_millis(1000)));
    assert_eq!(
        (agent.retries, agent.backoff),
        (2, Duration::from_millis(50))
    );
    assert_eq!(built.node("a").unwrap().dependencies, ["in"]);
    assert_eq!(built.output().id, "out");
    let order: Vec<&str> = built.topological().map(|n| n.id.as_str()).collect();
    assert_eq!(order, ["in", "a", "t", "out"]);
}

fn refused(text: &str) -> (Option<String>, String) {
    let error = load(text).unwrap_err();
    (error.node().map(str::to_owned), error.to_string())
}

#[test]
fn a_cycle_is_refused_naming_a_node_on_it() {
    let (node, message) = refused(
        r#"
        name = "loop"
        [[nodes]]
        id = "a"
        kind = "agent"
        agent = "echo"
        prompt = "{{c}}"
        [[nodes]]
        id = "b"
        kind = "agent"
        agent = "echo"
        prompt = "{{a}}"
        [[nodes]]
        id = "c"
        kind = "agent"
        agent = "echo"
        prompt = "{{b}}"
        [[nodes]]
        id = "out"
        kind = "output"
        from = ["c"]
        "#,
    );
    assert!(
        matches!(node.as_deref(), Some("a" | "b" | "c")),
        "{message}"
    );
    assert!(message.contains("is on a cycle"), "{message}");
    for id in ["a", "b", "c"] {
        assert!(message.contains(id), "{message}");
    }
}

#[test]
fn load_errors_name_the_node() {
    let base = |extra: &str| {
        format!(
            "name = \"w\"\n[[nodes]]\nid = \"in\"\nkind = \"input\"\n{extra}\n[[nodes]]\nid = \"out\"\nkind = \"output\"\nfrom = [\"in\"]\n"
        )
    };
    let cases = [
        (
            "[[nodes]]\nid = \"in\"\nkind = \"input\"",
            "in",
            "duplicate id",
        ),
        (
            "[[nodes]]\nid = \"x\"\nkind = \"agent\"\nagent = \"nobody\"\nprompt = \"hi\"",
            "x",
            "unknown agent `nobody`",
        ),
        (
            "[[nodes]]\nid = \"x\"\nkind = \"tool\"\ntool = \"nothing\"",
            "x",
            "unknown tool `nothing`",
        ),
        (
            "[[nodes]]\nid = \"x\"\nkind = \"agent\"\nagent = \"echo\"\nprompt = \"{{ghost}}\"",
            "x",
            "refers to `ghost`",
        ),
        (
            "[[nodes]]\nid = \"x\"\nkind = \"agent\"\nagent = \"echo\"\nprompt = \"{{in\"",
            "x",
            "never closed",
        ),
        (
            "[[nodes]]\nid = \"x\"\nkind = \"agent\"\nagent = \"echo\"\nprompt = \"hi\"\ndepends_on = [\"x\"]",
            "x",
            "depends on itself",
        ),
        (
            "[[nodes]]\nid = \"x\"\nkind = \"agent\"\nagent = \"echo\"",
            "x",
            "needs `prompt`",
        ),
        (
            "[[nodes]]\nid = \"x\"\nkind = \"output\"\nfrom = [\"in\"]",
            "out",
            "a second `output` node",
        ),
        (
            "[[nodes]]\nid = \"x y\"\nkind = \"input\"",
            "x y",
            "an id must be",
        ),
    ];
    for (extra, node, problem) in cases {
        let (named, message) = refused(&base(extra));
        assert_eq!(named.as_deref(), Some(node), "{message}");
        assert!(message.contains(problem), "{problem}: {message}");
        assert!(message.contains(&format!("node `{node}`")), "{message}");
    }
}

#[test]
fn whole_workflow_and_syntax_errors_say_what_is_wrong() {
    let message = load("name = \"w\"\n[[nodes]]\nid = \"in\"\nkind = \"input\"\n")
        .unwrap_err()
        .to_string();
    assert!(message.contains("no `output` node"), "{message}");
    let message = load("name = \"w\"\n[[nodes]]\nid = \"in\"\nkind = \"nope\"\n")
        .unwrap_err()
        .to_string();
    assert!(message.starts_with("workflow file:"), "{message}");
    assert!(message.contains("nope"), "{message}");
    let message = load(
        "{\"name\": \"w\", \"nodes\": [{\"id\": \"in\", \"kind\": \"input\", \"colour\": 1}]}",
    )
    .unwrap_err()
    .to_string();
    assert!(message.contains("colour"), "{message}");
}

#[test]
fn a_card_url_names_the_remote_agent_type_registered_for_it() {
    let url = "http://127.0.0.1:9999/.well-known/agent-card.json";
    let text = format!(
        "name = \"r\"\n[[nodes]]\nid = \"far\"\nkind = \"agent\"\nagent = \"{url}\"\nprompt = \"hi\"\n[[nodes]]\nid = \"out\"\nkind = \"output\"\nfrom = [\"far\"]\n"
    );
    let error = load(&text).unwrap_err();
    assert_eq!(error.node(), Some("far"));
    assert!(
        error
            .to_string()
            .contains(&format!("unknown remote agent `{url}`")),
        "{error}"
    );
    let catalog = Names::new([remote_agent_name(url)], Vec::<String>::new());
    let workflow = Workflow::load(&text, &catalog).unwrap();
    let NodeKind::Agent(agent) = &workflow.node("far").unwrap().kind else {
        panic!()
    };
    assert_eq!(agent.agent, format!("remote:{url}"));
    assert_eq!(agent.card_url.as_deref(), Some(url));
    // The spec keeps what was written.
    assert_eq!(workflow.spec().nodes[0].agent.as_deref(), Some(url));
}
