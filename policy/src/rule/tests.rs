use super::*;

fn parse(text: &str) -> Pattern {
    text.parse()
        .unwrap_or_else(|err| panic!("{text:?} should parse: {err}"))
}

#[test]
fn star_alone_parses_as_any_and_matches_absent_values_too() {
    let any = parse("*");
    assert_eq!(any, Pattern::Any);
    assert!(any.matches(Some("anything")));
    assert!(any.matches(None));
}

#[test]
fn plain_text_parses_as_a_case_sensitive_exact_match() {
    let exact = parse("planner");
    assert_eq!(exact, Pattern::exact("planner"));
    assert!(exact.matches(Some("planner")));
    assert!(!exact.matches(Some("Planner")));
    assert!(!exact.matches(Some("planner-2")));
    assert!(!exact.matches(None));
}

#[test]
fn trailing_star_parses_as_a_prefix_match() {
    let prefix = parse("worker-*");
    assert_eq!(prefix, Pattern::prefix("worker-"));
    assert!(prefix.matches(Some("worker-")));
    assert!(prefix.matches(Some("worker-12")));
    assert!(!prefix.matches(Some("worker")));
    assert!(!prefix.matches(None));
}

#[test]
fn none_marker_matches_only_absent_values() {
    let absent = parse("<none>");
    assert_eq!(absent, Pattern::Absent);
    assert!(absent.matches(None));
    assert!(!absent.matches(Some("<none>")));
    assert!(!absent.matches(Some("planner")));
}

#[test]
fn star_inside_a_pattern_is_refused_with_the_field_and_text() {
    let err = Pattern::parse_field("rules[3].from", "work*er").expect_err("inner star");
    let PolicyError::InvalidPattern { field, pattern, .. } = &err else {
        panic!("wrong error: {err:?}");
    };
    assert_eq!(field, "rules[3].from");
    assert_eq!(pattern, "work*er");
    assert!(
        err.to_string()
            .starts_with("rules[3].from: invalid pattern \"work*er\"")
    );
    assert!("**".parse::<Pattern>().is_err());
}

#[test]
fn empty_pattern_is_refused() {
    let err = "".parse::<Pattern>().expect_err("empty pattern");
    assert!(err.to_string().contains("write \"*\" to match anything"));
}

#[test]
fn pattern_display_parses_back_to_the_same_pattern() {
    for text in ["*", "planner", "worker-*", "<none>"] {
        assert_eq!(parse(text).to_string(), text);
    }
}

#[test]
fn entry_point_converts_to_an_exact_pattern_on_its_name() {
    assert_eq!(Pattern::from(EntryPoint::Http), Pattern::exact("http"));
}

#[test]
fn rule_with_no_patterns_matches_every_send() {
    let rule = Rule::deny();
    assert!(rule.matches(&SendRequest::new("x", EntryPoint::Api)));
    assert!(
        rule.matches(
            &SendRequest::new("y", EntryPoint::other("discord"))
                .from("z")
                .payload_type("answer")
        )
    );
    assert_eq!(rule.to_string(), "deny any send");
}

#[test]
fn rule_matches_only_when_every_pattern_matches() {
    let rule = Rule::allow()
        .from(Pattern::prefix("team-"))
        .to(Pattern::exact("billing"))
        .entry_point(EntryPoint::Agent)
        .payload_type(Pattern::exact("task_delegation"));
    let base = SendRequest::new("billing", EntryPoint::Agent)
        .from("team-a")
        .payload_type("task_delegation");
    assert!(rule.matches(&base));
    assert!(!rule.matches(&base.from("solo")));
    assert!(!rule.matches(&SendRequest {
        to: "ledger",
        ..base
    }));
    assert!(!rule.matches(&SendRequest {
        entry_point: EntryPoint::Http,
        ..base
    }));
    assert!(!rule.matches(&base.payload_type("question")));
    assert!(!rule.matches(&SendRequest {
        payload_type: None,
        ..base
    }));
    assert!(!rule.matches(&SendRequest { from: None, ..base }));
}

#[test]
fn rule_on_absent_sender_matches_only_anonymous_sends() {
    let rule = Rule::deny().from(Pattern::Absent);
    assert!(rule.matches(&SendRequest::new("b", EntryPoint::Http)));
    assert!(!rule.matches(&SendRequest::new("b", EntryPoint::Http).from("alice")));
}

#[test]
fn rule_on_absent_payload_type_matches_only_free_text() {
    let rule = Rule::deny().payload_type(Pattern::Absent);
    assert!(rule.matches(&SendRequest::new("b", EntryPoint::Api)));
    assert!(!rule.matches(&SendRequest::new("b", EntryPoint::Api).payload_type("answer")));
}

#[test]
fn rule_display_lists_only_narrowed_fields_and_the_name() {
    let rule = Rule::deny()
        .to(Pattern::exact("billing"))
        .entry_point(EntryPoint::Http);
    assert_eq!(rule.to_string(), "deny to=billing entry_point=http");
    let named = rule.named("no billing from outside");
    assert_eq!(
        named.to_string(),
        "\"no billing from outside\": deny to=billing entry_point=http"
    );
    assert_eq!(named.name(), Some("no billing from outside"));
    assert_eq!(named.effect(), Effect::Deny);
}

#[test]
fn effect_deserializes_from_lowercase_and_names_bad_values() {
    let deny: Effect = serde_json::from_str("\"deny\"").expect("valid effect");
    assert_eq!(deny, Effect::Deny);
    let err = serde_json::from_str::<Effect>("\"permit\"").expect_err("invalid effect");
    assert!(
        err.to_string().contains("unknown variant `permit`"),
        "{err}"
    );
}
