use super::*;

#[test]
fn an_empty_file_is_the_embedded_default() {
    let config = Config::from_toml("").expect("empty is valid");
    assert_eq!(config.server.bind, SocketAddr::from(([127, 0, 0, 1], 8080)));
    assert_eq!(config.agents.default.as_deref(), Some("echo"));
    assert!(config.agents.exposed.iter().any(|a| a == "countdown"));
    assert!(config.push.enabled);
    assert!(!config.push.allow_private_addresses);
    assert_eq!(config.supervisor_config().session_limit, 1);
}

#[test]
fn a_full_file_is_read() {
    let config = Config::from_toml(
        r#"
        [server]
        bind = "127.0.0.1:9000"
        public_url = "https://agents.example.com/"
        body_limit = 2048
        [agents]
        exposed = ["echo"]
        default = "echo"
        [[auth.api_keys]]
        name = "ops"
        key = "k"
        [[auth.bearer_tokens]]
        name = "ci"
        token = "t"
        [limits]
        session = 4
        warm_sessions = 5
        finished_tasks = 7
        [push]
        enabled = false
        [policy]
        default = "deny"
        hop_limit = 3
        "#,
    )
    .expect("valid");
    assert_eq!(config.server.body_limit, 2048);
    assert_eq!(config.auth.api_key_header, "X-API-Key");
    assert_eq!(config.supervisor_config().session_limit, 4);
    assert_eq!(config.limits.finished_tasks, 7);
    assert_eq!(config.supervisor_config().warm_sessions, 5);
    assert_eq!(Config::default().supervisor_config().warm_sessions, 1_000);
    assert_eq!(config.policy.hop_limit, 3);
    assert_eq!(
        config.public_url(config.server.bind),
        "https://agents.example.com"
    );
}

fn error_of(text: &str) -> String {
    Config::from_toml(text).expect_err("invalid").to_string()
}

#[test]
fn an_unknown_key_is_named() {
    let e = error_of("[server]\nbnid = \"127.0.0.1:1\"\n");
    assert!(e.contains("bnid"), "{e}");
}

#[test]
fn a_bad_address_is_named() {
    let e = error_of("[server]\nbind = \"not an address\"\n");
    assert!(e.contains("bind"), "{e}");
}

#[test]
fn a_bad_policy_value_is_named() {
    let e = error_of("[policy]\ndefault = \"maybe\"\n");
    assert!(e.contains("default") || e.contains("maybe"), "{e}");
}

#[test]
fn a_default_agent_that_is_not_exposed_is_refused() {
    let e = error_of("[agents]\nexposed = [\"echo\"]\ndefault = \"ask\"\n");
    assert!(e.contains("agents.default"), "{e}");
}

#[test]
fn zero_limits_are_refused_by_name() {
    let e = error_of("[limits]\nsession = 0\n");
    assert!(e.contains("limits.session"), "{e}");
    let e = error_of("[limits]\nfinished_tasks = 0\n");
    assert!(e.contains("limits.finished_tasks"), "{e}");
    let e = error_of("[server]\nbody_limit = 0\n");
    assert!(e.contains("server.body_limit"), "{e}");
}

#[test]
fn empty_secrets_are_refused_by_name() {
    let e = error_of("[[auth.bearer_tokens]]\nname = \"ci\"\ntoken = \"\"\n");
    assert!(e.contains("auth.bearer_tokens[0]"), "{e}");
}

#[test]
fn an_unregistered_exposed_agent_is_named() {
    let config = Config::from_toml("[agents]\nexposed = [\"echo\", \"nobody\"]\n").expect("valid");
    let e = config
        .check_agents(|name| name == "echo")
        .expect_err("nobody is unknown")
        .to_string();
    assert!(
        e.contains("agents.exposed[1]") && e.contains("nobody"),
        "{e}"
    );
}
