use super::*;

#[test]
fn headers_are_name_colon_value() {
    assert_eq!(
        parse_header("X-API-Key: k:1").expect("valid"),
        ("X-API-Key".to_owned(), "k:1".to_owned())
    );
    assert!(parse_header("novalue").is_err());
    assert!(parse_header(":v").is_err());
}

#[test]
fn transport_and_version_take_the_names_cards_use() {
    let transport = |name: &str| {
        <Transport as clap::ValueEnum>::from_str(name, true).map(TransportProtocol::from)
    };
    assert_eq!(transport("grpc"), Ok(TransportProtocol::Grpc));
    assert_eq!(transport("JSONRPC"), Ok(TransportProtocol::JsonRpc));
    assert_eq!(transport("rest"), Ok(TransportProtocol::HttpJson));
    assert!(transport("carrier-pigeon").is_err());
    assert_eq!(parse_version("1.0"), Ok(ProtocolVersion::V1_0));
    assert_eq!(parse_version("0.3.0"), Ok(ProtocolVersion::V0_3));
    assert!(parse_version("9.9").is_err());
}

#[test]
fn every_ending_has_its_own_exit_status() {
    let codes = [
        Exit::of(TaskState::Completed),
        Exit::of(TaskState::Failed),
        Exit::of(TaskState::Canceled),
        Exit::of(TaskState::InputRequired),
        Exit::Transport,
        Exit::Error,
        Exit::of(TaskState::Working),
    ];
    let mut numbers: Vec<u8> = codes.iter().map(|exit| *exit as u8).collect();
    assert_eq!(numbers[0], 0);
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), codes.len(), "distinct: {numbers:?}");
    assert_eq!(Exit::of(TaskState::Rejected), Exit::Failed);
}

#[test]
fn a_data_file_must_hold_an_object() {
    let dir = std::env::temp_dir().join(format!("agentyard-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a dir");
    let object = dir.join("object.json");
    std::fs::write(&object, r#"{"n": 1}"#).expect("written");
    let list = dir.join("list.json");
    std::fs::write(&list, "[1]").expect("written");
    let args = |data: &Path| MessageArgs {
        task_id: Some("t".to_owned()),
        context_id: None,
        data: Some(data.to_path_buf()),
        handoff: None,
    };
    let (params, typed) = send_params("hi", &args(&object)).expect("an object");
    assert!(!typed);
    assert_eq!(params.message.parts.len(), 2);
    assert_eq!(params.message.task_id, Some(TaskId::new("t")));
    let failure = send_params("hi", &args(&list)).expect_err("a list");
    assert!(
        failure.sentence.contains("JSON object"),
        "{}",
        failure.sentence
    );
    let failure = send_params("hi", &args(&dir.join("missing.json"))).expect_err("missing");
    assert!(
        failure.sentence.starts_with("cannot read"),
        "{}",
        failure.sentence
    );
    let _ = std::fs::remove_dir_all(dir);
}
