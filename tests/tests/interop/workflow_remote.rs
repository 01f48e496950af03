//! A workflow whose agent node names a remote agent by its card URL, run against an
//! agent agentyard did not write: the official Python SDK (a2a-sdk 0.3.x) peer of
//! `tests/interop/python/peer.py`, on an ephemeral loopback port. The node's send is a
//! supervisor send to the remote agent type registered for the URL (`remote:URL`),
//! whose session calls the peer; the peer's artifact comes back as the node's, and a
//! peer that fails fails the node, naming it.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use agentyard::Runtime;
use agentyard::workflow::definition::WorkflowSpec;
use agentyard::workflow::runner::{NodeState, RunControl, RunOutcome};
use agentyard::workflow::template::render_part;
use agentyard::workflow::{Tools, Workflows};

use super::{interop_dir, unavailable};

/// The SDK peer, killed when dropped.
struct Peer {
    child: Child,
    base: String,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    fn start(python: &Path) -> Self {
        let script = super::root().join("tests/interop/python/peer.py");
        let mut child = Command::new(python)
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the SDK peer starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stdout = BufReader::new(stdout);
        let mut first = String::new();
        let read = stdout.read_line(&mut first);
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        assert!(read.is_ok_and(|n| n > 0), "the SDK peer printed nothing");
        Self {
            child,
            base: first.trim().to_owned(),
        }
    }
}

/// The Python of the 0.3 venv, when it can run the peer.
fn python(case: &str) -> Option<PathBuf> {
    let python = interop_dir().join("venv").join("bin").join("python");
    let importable = python.is_file()
        && Command::new(&python)
            .args([
                "-c",
                "import uvicorn, starlette, sse_starlette, a2a.server.apps",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
    if importable {
        Some(python)
    } else {
        unavailable(
            case,
            &format!(
                "no a2a-sdk 0.3 venv with the http-server extra; {}",
                super::SET_UP
            ),
        );
        None
    }
}

#[test]
fn a_workflow_node_runs_on_an_official_sdk_server_given_by_its_card_url() {
    let case = "workflow remote node";
    let Some(python) = python(case) else { return };
    let peer = Peer::start(&python);
    let card = format!("{}/.well-known/agent-card.json", peer.base);
    let text = format!(
        r#"
        name = "far"
        [[nodes]]
        id = "in"
        kind = "input"
        [[nodes]]
        id = "remote"
        kind = "agent"
        agent = "{card}"
        prompt = "hello {{{{in}}}}"
        timeout_ms = 30000
        [[nodes]]
        id = "broken"
        kind = "agent"
        agent = "{card}"
        prompt = "fail {{{{in}}}}"
        [[nodes]]
        id = "local"
        kind = "tool"
        tool = "upper"
        prompt = "{{{{remote}}}}"
        [[nodes]]
        id = "out"
        kind = "output"
        from = ["local", "broken"]
        "#
    );
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(async {
            let workflows = Workflows::new(Tools::builtin());
            let spec = WorkflowSpec::parse(&text).expect("a workflow file");
            let builder = agentyard::workflows::register(
                Runtime::builder(),
                &workflows,
                vec![spec],
                false,
                |_| false,
            )
            .await
            .expect("registered");
            let runtime = builder
                .build()
                .await
                .expect("the runtime reaches the peer's card");
            let loaded = agentyard::workflows::bind(&workflows, &runtime)
                .await
                .expect("every node's agent is registered");
            let report = workflows
                .runner()
                .expect("bound")
                .run(
                    Arc::clone(&loaded[0]),
                    String::from("sdk"),
                    RunControl::new(),
                )
                .await;
            assert_eq!(
                report.state("remote"),
                Some(NodeState::Completed),
                "{report:?}"
            );
            let texts: Vec<String> = report.artifacts["remote"]
                .iter()
                .flat_map(|a| a.parts.iter().map(render_part))
                .collect();
            assert!(
                texts.contains(&String::from("echo: hello sdk")),
                "{texts:?}"
            );
            assert_eq!(
                report.artifacts["local"][0]
                    .parts
                    .iter()
                    .map(render_part)
                    .collect::<Vec<_>>(),
                ["ECHO: HELLO SDK"]
            );
            let RunOutcome::Failed { node, error } = &report.outcome else {
                panic!("{:?}", report.outcome)
            };
            assert_eq!(node, "broken");
            assert!(error.contains("the peer failed on purpose"), "{error}");
            assert_eq!(report.state("out"), Some(NodeState::Canceled));
            runtime.shutdown(std::time::Duration::from_secs(1)).await;
        });
}
