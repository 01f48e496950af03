use super::*;

#[test]
fn an_empty_file_is_the_embedded_default() {
    let config = Config::from_toml("").expect("empty is valid");
    assert_eq!(config.server.bind, SocketAddr::from(([127, 0, 0, 1], 8080)));
    assert_eq!(config.agents.default_agent(), Some("echo"));
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
        conversation_tasks = 9
        history_depth = 3
        idempotency_keys = 11
        idempotency_ttl_secs = 12
        event_capacity = 13
        stream_capacity = 14
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
    let supervisor = config.supervisor_config();
    assert_eq!(supervisor.history_depth, 3);
    assert_eq!(supervisor.idempotency_capacity, 11);
    assert_eq!(supervisor.idempotency_ttl, Duration::from_secs(12));
    assert_eq!(supervisor.event_capacity, 13);
    assert_eq!(supervisor.stream_capacity, 14);
    assert_eq!(config.limits.conversation_tasks, 9);
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
fn rings_past_their_most_are_refused_by_name() {
    // Each ring is allocated whole: a huge capacity aborted the start (the event bus)
    // or panicked every stream.
    let e = error_of(&format!("[limits]\nevent_capacity = {}\n", i64::MAX));
    assert!(e.contains("limits.event_capacity"), "{e}");
    let e = error_of("[limits]\nstream_capacity = 65537\n");
    assert!(
        e.contains("limits.stream_capacity") && e.contains("65536"),
        "{e}"
    );
    let most = Config::from_toml("[limits]\nevent_capacity = 1048576\nstream_capacity = 65536\n")
        .expect("the most is allowed");
    assert_eq!(most.supervisor_config().stream_capacity, 65_536);
}

#[test]
fn a_max_age_past_a_century_is_refused_by_name() {
    // u64::MAX seconds before now is before the clock's start: the sweeper's cutoff
    // would overflow (TOML stops at i64::MAX; a config built in code does not).
    let mut config = Config::default();
    config.store.max_age_secs = u64::MAX;
    let e = config.check().expect_err("past a century").to_string();
    assert!(e.contains("store.max_age_secs"), "{e}");
    let e = error_of(&format!("[store]\nmax_age_secs = {}\n", i64::MAX));
    assert!(e.contains("store.max_age_secs"), "{e}");
    let e = error_of("[store]\nmax_age_secs = 3155760001\n");
    assert!(e.contains("store.max_age_secs"), "{e}");
    let century = Config::from_toml("[store]\nmax_age_secs = 3155760000\n").expect("a century");
    century.check().expect("a century is allowed");
    assert_eq!(
        century.retention().max_age,
        Some(Duration::from_secs(3_155_760_000))
    );
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

#[test]
fn the_example_file_parses_and_equals_the_defaults() {
    let text = include_str!("../../../agentyard.example.toml");
    let example = Config::from_toml(text).expect("the example file is valid");
    assert_eq!(format!("{example:?}"), format!("{:?}", Config::default()));
    // Copying the example must not turn authentication on.
    assert!(!example.auth.is_enabled());
}

#[test]
fn the_example_file_names_every_key_of_the_embedded_default() {
    let text = include_str!("../../../agentyard.example.toml");
    let example: toml::Table = toml::from_str(text).expect("TOML");
    for (section, keys) in [
        (
            "server",
            &[
                "bind",
                "body_limit",
                "request_timeout_secs",
                "shutdown_grace_secs",
                "header_read_timeout_secs",
                "idle_timeout_secs",
                "max_connections",
                "bindings",
            ][..],
        ),
        ("agents", &["exposed"][..]),
        ("auth", &["api_key_header"][..]),
        (
            "limits",
            &[
                "global",
                "global_queue",
                "agent",
                "agent_queue",
                "session",
                "session_queue",
                "idle_timeout_secs",
                "warm_sessions",
                "finished_tasks",
                "conversation_tasks",
                "history_depth",
                "idempotency_keys",
                "idempotency_ttl_secs",
                "event_capacity",
                "stream_capacity",
            ][..],
        ),
        ("push", &["enabled", "allow_private_addresses"][..]),
        ("metrics", &["enabled"][..]),
        ("grpc", &["enabled"][..]),
        ("store", &["path", "max_age_secs"][..]),
        (
            "tracing",
            &[
                "protocol",
                "service_name",
                "sampling_ratio",
                "max_traces_per_second",
            ][..],
        ),
        (
            "policy",
            &["default", "hop_limit", "max_tracked_senders"][..],
        ),
        (
            "workflows",
            &["files", "exposed", "concurrency", "pure_a2a"][..],
        ),
    ] {
        for key in keys {
            assert!(
                example[section].get(*key).is_some(),
                "{section}.{key} is missing from agentyard.example.toml"
            );
        }
    }
}

#[test]
fn exposed_alone_picks_the_default_agent() {
    let config = Config::from_toml("[agents]\nexposed = [\"countdown\"]\n").expect("valid");
    assert_eq!(config.agents.default_agent(), Some("countdown"));
    let config = Config::from_toml("[agents]\nexposed = [\"ask\", \"echo\"]\n").expect("valid");
    assert_eq!(config.agents.default_agent(), Some("echo"));
    let config = Config::from_toml("[agents]\nexposed = []\n").expect("valid");
    assert_eq!(config.agents.default_agent(), None);
    let config = Config::from_toml("[agents]\nexposed = [\"ask\", \"echo\"]\ndefault = \"ask\"\n")
        .expect("valid");
    assert_eq!(config.agents.default_agent(), Some("ask"));
}

#[test]
fn bind_takes_a_host_name() {
    let config = Config::from_toml("[server]\nbind = \"localhost:9000\"\n").expect("valid");
    assert!(
        config.server.bind.ip().is_loopback(),
        "{}",
        config.server.bind
    );
    assert_eq!(config.server.bind.port(), 9000);
    assert_eq!(
        parse_bind("[::1]:0").expect("ip literal"),
        "[::1]:0".parse::<SocketAddr>().expect("addr")
    );
}

#[test]
fn a_bad_bind_names_the_form_expected() {
    for bad in [
        "8080",
        "localhost",
        "localhost:http",
        ":8080",
        "127.0.0.1:99999",
    ] {
        let e = parse_bind(bad).expect_err(bad);
        assert!(e.contains(bad) && e.contains("HOST:PORT"), "{e}");
    }
    let e = error_of("[server]\nbind = \"8080\"\n");
    assert!(e.contains("bind") && e.contains("HOST:PORT"), "{e}");
}

#[test]
fn a_parse_error_from_a_file_names_the_file() {
    let dir = std::env::temp_dir().join(format!("agentyard-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("broken.toml");
    std::fs::write(&path, "[server\nbind = 1\n").expect("write");
    let error = Config::from_path(&path).expect_err("broken");
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    assert!(text.contains("broken.toml"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_extended_card_is_read_and_needs_credentials() {
    let config = Config::from_toml(
        r#"
        [agents.extended_cards.echo]
        skills = [{ id = "audit", name = "Audit", description = "d", tags = ["admin"] }]
        [[auth.api_keys]]
        name = "ops"
        key = "k"
        "#,
    )
    .expect("valid");
    let skills = &config.agents.extended_cards["echo"].skills;
    assert_eq!(skills[0].to_skill().tags, vec![String::from("admin")]);

    let e = error_of("[agents.extended_cards.echo]\nskills = []\n");
    assert!(
        e.contains("agents.extended_cards.echo") && e.contains("auth"),
        "{e}"
    );
    let e =
        error_of("[agents.extended_cards.nobody]\n[[auth.api_keys]]\nname = \"a\"\nkey = \"k\"\n");
    assert!(e.contains("agents.extended_cards.nobody"), "{e}");
}

#[test]
fn connection_limits_are_read_and_zero_is_refused_by_name() {
    let config = Config::from_toml(
        "[server]\nheader_read_timeout_secs = 3\nidle_timeout_secs = 20\nmax_connections = 50\n",
    )
    .expect("valid");
    assert_eq!(config.server.header_read_timeout_secs, 3);
    assert_eq!(config.server.idle_timeout_secs, 20);
    assert_eq!(config.server.max_connections, 50);
    for key in [
        "header_read_timeout_secs",
        "idle_timeout_secs",
        "max_connections",
    ] {
        let e = error_of(&format!("[server]\n{key} = 0\n"));
        assert!(e.contains(&format!("server.{key}")), "{e}");
    }
}

#[test]
fn the_workflows_section_is_read_and_relative_files_follow_the_config_file() {
    let config = Config::from_toml(
        "[workflows]\nfiles = [\"a.toml\", \"/abs/b.toml\"]\nexposed = false\nconcurrency = 4\npure_a2a = true\n",
    )
    .expect("valid");
    assert_eq!(config.workflows.concurrency, 4);
    assert!(config.workflows.pure_a2a && !config.workflows.exposed);
    let dir = std::env::temp_dir().join(format!("agentyard-wf-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("serve.toml");
    std::fs::write(
        &path,
        "[workflows]\nfiles = [\"a.toml\", \"/abs/b.toml\"]\n",
    )
    .expect("write");
    let config = Config::from_path(&path).expect("valid");
    assert_eq!(
        config.workflows.paths(),
        [dir.join("a.toml"), std::path::PathBuf::from("/abs/b.toml")]
    );
    let _ = std::fs::remove_dir_all(&dir);
    let e = error_of("[workflows]\nconcurrency = 0\n");
    assert!(e.contains("workflows.concurrency"), "{e}");
}

#[test]
fn remote_entries_are_read_with_their_secrets_from_the_environment() {
    let config = Config::from_toml(
        r#"
        [[remote]]
        name = "research"
        card_url = "http://127.0.0.1:9/.well-known/agent-card.json"
        expose = true
        concurrency = 4
        request_timeout_secs = 7
        connect_timeout_secs = 2
        attempts = 5
        task_timeout_secs = 60
        refresh_secs = 0
        on_unreachable = "retry"
        [remote.auth]
        type = "api_key"
        key_env = "RESEARCH_KEY"
        "#,
    )
    .expect("valid");
    let remote = &config.remote[0];
    assert_eq!(remote.on_unreachable, Unreachable::Retry);
    assert!(config.exposed_agents().contains(&"research".to_owned()));
    let options = remote
        .options(|name| (name == "RESEARCH_KEY").then(|| "s3cret".to_owned()))
        .expect("the key is set");
    assert_eq!(options.concurrency, 4);
    assert_eq!(options.attempts, 5);
    assert_eq!(options.task_timeout, Some(Duration::from_secs(60)));
    // The secret never shows in what is logged of the options.
    assert!(!format!("{options:?}").contains("s3cret"));

    let error = remote.options(|_| None).expect_err("unset").to_string();
    assert!(
        error.contains("RESEARCH_KEY") && error.contains("research"),
        "{error}"
    );
}

#[test]
fn remote_entries_with_bad_values_name_the_key() {
    let e = error_of("[[remote]]\nname = \"r\"\ncard_url = \"ftp://x\"\n");
    assert!(e.contains("remote[0].card_url"), "{e}");
    let e = error_of("[[remote]]\nname = \"echo\"\ncard_url = \"http://x\"\n");
    assert!(e.contains("remote[0].name"), "{e}");
    let e = error_of("[[remote]]\nname = \"r\"\ncard_url = \"http://x\"\nsecret = \"k\"\n");
    assert!(e.contains("secret"), "{e}");
}

#[test]
fn the_store_is_the_journal_unless_a_url_or_kind_or_an_older_store_says_otherwise() {
    let default = Config::from_toml("").expect("valid");
    assert_eq!(default.store.effective_kind(), StoreKind::Journal);
    assert_eq!(default.store.path, std::path::Path::new("./agentyard-data"));
    let url = Config::from_toml("[store]\nurl = \"postgres://u@127.0.0.1/db\"\n").expect("valid");
    assert_eq!(url.store.effective_kind(), StoreKind::Postgres);
    let memory = Config::from_toml("[store]\nkind = \"memory\"\n").expect("valid");
    assert_eq!(memory.store.effective_kind(), StoreKind::Memory);
    let journal = Config::from_toml("[store]\nkind = \"journal\"\n").expect("valid");
    assert_eq!(journal.store.effective_kind(), StoreKind::Journal);
    assert_eq!(journal.store.path, std::path::Path::new("./agentyard-data"));
    let e =
        Config::from_toml("[store]\nkind = \"journal\"\npath = \"\"\n").expect_err("no directory");
    assert!(e.to_string().contains("store.path"), "{e}");
    // A data directory an earlier version filled with a SQLite store keeps it, until a
    // journal is there too (or `kind` says).
    let dir = tempfile::tempdir().expect("temporary directory");
    let at = |dir: &std::path::Path| {
        let text = format!("[store]\npath = {:?}\n", dir.display().to_string());
        Config::from_toml(&text)
            .expect("valid")
            .store
            .effective_kind()
    };
    assert_eq!(at(dir.path()), StoreKind::Journal);
    std::fs::write(dir.path().join("agentyard.db"), b"").expect("an older store");
    assert_eq!(at(dir.path()), StoreKind::Embedded);
    std::fs::write(dir.path().join("journal-00000000000000000000.log"), b"").expect("a journal");
    assert_eq!(at(dir.path()), StoreKind::Journal);
    let aged = Config::from_toml("[store]\nmax_age_secs = 60\n").expect("valid");
    assert_eq!(aged.retention().max_age, Some(Duration::from_secs(60)));
    assert_eq!(default.retention().max_age, None);
}

#[test]
fn a_bad_store_is_named() {
    let e = error_of("[store]\nkind = \"postgres\"\n");
    assert!(e.contains("store.url"), "{e}");
    let e = error_of("[store]\nurl = \"mysql://x\"\n");
    assert!(e.contains("store.url") && e.contains("postgres://"), "{e}");
    let e = error_of("[store]\nkind = \"redis\"\n");
    assert!(e.contains("redis") || e.contains("kind"), "{e}");
}

#[test]
fn metrics_may_have_an_address_of_their_own() {
    let config = Config::from_toml("[metrics]\naddress = \"127.0.0.1:9464\"\n").expect("valid");
    assert!(config.metrics.enabled);
    assert_eq!(
        config.metrics.address,
        Some("127.0.0.1:9464".parse().unwrap())
    );
    let off = Config::from_toml("[metrics]\nenabled = false\n").expect("valid");
    assert!(!off.supervisor_config().metrics);
    let bad = Config::from_toml("[metrics]\naddress = \"nowhere\"\n").unwrap_err();
    assert!(
        bad.to_string().contains("metrics.address") || bad.to_string().contains("address"),
        "{bad}"
    );
}

#[test]
fn bindings_are_read_in_order_and_bad_ones_refused_by_name() {
    use agentyard_transport::a2a::TransportProtocol;
    let config =
        Config::from_toml("[server]\nbindings = [\"HTTP+JSON\", \"JSONRPC\"]\n").expect("valid");
    assert_eq!(
        config.server.bindings,
        [TransportProtocol::HttpJson, TransportProtocol::JsonRpc]
    );
    assert_eq!(
        Config::default().server.bindings,
        [
            TransportProtocol::JsonRpc,
            TransportProtocol::HttpJson,
            TransportProtocol::Grpc
        ]
    );
    for (bad, says) in [
        ("[\"REST\"]", "names `REST`"),
        ("[\"JSONRPC\", \"JSONRPC\"]", "twice"),
        ("[\"GRPC\"]", "must include"),
        ("[]", "must include"),
    ] {
        let e = error_of(&format!("[server]\nbindings = {bad}\n"));
        assert!(e.contains("server.bindings") && e.contains(says), "{e}");
    }
}

#[test]
fn grpc_is_on_beside_the_http_host_by_default_and_can_move_or_turn_off() {
    let config = Config::from_toml("").expect("valid");
    assert_eq!(
        config.grpc.address_beside(config.server.bind),
        Some("127.0.0.1:50051".parse().unwrap())
    );
    let ephemeral = Config::from_toml("[server]\nbind = \"127.0.0.1:0\"\n").expect("valid");
    assert_eq!(
        ephemeral.grpc.address_beside(ephemeral.server.bind),
        Some("127.0.0.1:0".parse().unwrap()),
        "an ephemeral HTTP port gets an ephemeral gRPC port"
    );
    let moved = Config::from_toml("[grpc]\naddress = \"0.0.0.0:7000\"\n").expect("valid");
    assert_eq!(
        moved.grpc.address_beside(moved.server.bind),
        Some("0.0.0.0:7000".parse().unwrap())
    );
    let off = Config::from_toml("[grpc]\nenabled = false\n").expect("valid");
    assert_eq!(off.grpc.address_beside(off.server.bind), None);
    let clash =
        Config::from_toml("[grpc]\naddress = \"127.0.0.1:8080\"\n").expect_err("the HTTP address");
    assert!(clash.to_string().contains("grpc.address"), "{clash}");
    let bad = Config::from_toml("[grpc]\nport = 1\n").unwrap_err();
    assert!(bad.to_string().contains("port"), "{bad}");
}
