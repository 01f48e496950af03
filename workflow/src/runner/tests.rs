//! The runner over real supervisors with mock agents (the seed's test plan).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use agentyard_actors::{
    Agent, AgentDescriptor, AgentError, InMemoryTaskStore, Registration, SendRequest, Supervisor,
    SupervisorConfig, TaskContext,
};
use agentyard_transport::a2a::{Message, Part, Role, TaskState};
use tokio::sync::{Barrier, mpsc, oneshot};

use super::*;
use crate::definition::{Names, NodeKindName, NodeSpec, Workflow};
use crate::host::Workflows;

struct Echo;
impl Agent for Echo {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let text = ctx.message().text();
        ctx.reply_text(text);
        Ok(())
    }
}

struct Fail;
impl Agent for Fail {
    async fn handle(&self, _ctx: &mut TaskContext) -> Result<(), AgentError> {
        Err("boom".into())
    }
}

/// Meets its twin at a barrier: completes only if both run at once.
struct Meet(Arc<Barrier>);
impl Agent for Meet {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        self.0.wait().await;
        ctx.reply_text(format!("met: {}", ctx.message().text()));
        Ok(())
    }
}

/// Runs until canceled, and says it was.
struct Hang(Arc<AtomicU32>);
impl Agent for Hang {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        ctx.cancelled().await;
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// Fails its first call, succeeds after; records when each call came.
struct Flaky(Arc<StdMutex<Vec<tokio::time::Instant>>>);
impl Agent for Flaky {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let calls = {
            let mut calls = self.0.lock().unwrap();
            calls.push(tokio::time::Instant::now());
            calls.len()
        };
        if calls == 1 {
            return Err("first call fails".into());
        }
        ctx.reply_text("second time lucky");
        Ok(())
    }
}

/// Waits for a gate, then echoes.
struct Gated(Arc<tokio::sync::Mutex<Option<oneshot::Receiver<()>>>>);
impl Agent for Gated {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        if let Some(gate) = self.0.lock().await.take() {
            let _ = gate.await;
        }
        ctx.reply_text("late but done");
        Ok(())
    }
}

/// Asks a question, then answers with what it was told.
struct Asker(Arc<AtomicBool>);
impl Agent for Asker {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        if !self.0.swap(true, Ordering::SeqCst) {
            ctx.require_input("which colour?");
        } else {
            ctx.reply_text(format!("colour: {}", ctx.message().text()));
        }
        Ok(())
    }
}

/// Replies with a data part.
struct Data;
impl Agent for Data {
    async fn handle(&self, ctx: &mut TaskContext) -> Result<(), AgentError> {
        let mut map = serde_json::Map::new();
        map.insert("n".into(), 7.into());
        ctx.reply(vec![Part::data(map)]);
        Ok(())
    }
}

struct Fixture {
    supervisor: Supervisor,
    workflows: Workflows,
    hung: Arc<AtomicU32>,
    flaky_calls: Arc<StdMutex<Vec<tokio::time::Instant>>>,
    gate: oneshot::Sender<()>,
}

async fn fixture(extra: Vec<Registration>, workflows: Workflows) -> Fixture {
    let barrier = Arc::new(Barrier::new(2));
    let hung = Arc::new(AtomicU32::new(0));
    let flaky_calls = Arc::new(StdMutex::new(Vec::new()));
    let (gate, gate_rx) = oneshot::channel();
    let gate_rx = Arc::new(tokio::sync::Mutex::new(Some(gate_rx)));
    let asked = Arc::new(AtomicBool::new(false));
    let mut registrations = vec![
        Registration::new(AgentDescriptor::new("echo"), |_| Echo),
        Registration::new(AgentDescriptor::new("fail"), |_| Fail),
        Registration::new(AgentDescriptor::new("data"), |_| Data),
        {
            let barrier = Arc::clone(&barrier);
            Registration::new(AgentDescriptor::new("meet"), move |_| {
                Meet(Arc::clone(&barrier))
            })
        },
        {
            let hung = Arc::clone(&hung);
            Registration::new(AgentDescriptor::new("hang"), move |_| {
                Hang(Arc::clone(&hung))
            })
        },
        {
            let calls = Arc::clone(&flaky_calls);
            Registration::new(AgentDescriptor::new("flaky"), move |_| {
                Flaky(Arc::clone(&calls))
            })
        },
        Registration::new(AgentDescriptor::new("gated"), move |_| {
            Gated(Arc::clone(&gate_rx))
        }),
        Registration::new(AgentDescriptor::new("asker"), move |_| {
            Asker(Arc::clone(&asked))
        }),
    ];
    registrations.extend(extra);
    let supervisor = Supervisor::start(
        SupervisorConfig::default(),
        registrations,
        Arc::new(agentyard_policy::RulePolicy::default()),
        Arc::new(InMemoryTaskStore::new()),
    )
    .await
    .unwrap();
    workflows.bind(supervisor.clone());
    Fixture {
        supervisor,
        workflows,
        hung,
        flaky_calls,
        gate,
    }
}

fn catalog() -> Names {
    Names::new(
        [
            "echo", "fail", "data", "meet", "hang", "flaky", "gated", "asker",
        ],
        ["upper", "concat", "word_count"],
    )
}

fn texts<'a>(artifacts: impl IntoIterator<Item = &'a Artifact>) -> Vec<String> {
    artifacts
        .into_iter()
        .flat_map(|a| a.parts.iter())
        .map(crate::template::render_part)
        .collect()
}

async fn run_with_events(
    f: &Fixture,
    workflow: Workflow,
    input: &str,
) -> (RunReport, Vec<RunEvent>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut control = RunControl::new();
    control.events = Some(tx);
    let report = f
        .workflows
        .runner()
        .unwrap()
        .run(Arc::new(workflow), input.to_owned(), control)
        .await;
    let mut events = Vec::new();
    while let Ok(event) = rx.try_recv() {
        events.push(event);
    }
    (report, events)
}

#[tokio::test]
async fn a_two_node_serial_run_passes_the_input_through_the_agent_to_the_output() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("serial")
        .input("in")
        .agent("say", "echo", "you said: {{in}}")
        .output("out", ["say"])
        .build(&catalog())
        .unwrap();
    let (report, events) = run_with_events(&f, workflow, "hello").await;
    assert_eq!(
        report.outcome,
        RunOutcome::Completed(report.artifacts["out"].clone())
    );
    assert_eq!(texts(&report.artifacts["out"]), ["you said: hello"]);
    let names: Vec<String> = events
        .iter()
        .map(|e| format!("{} {}", e.name(), e.node().unwrap_or("-")))
        .collect();
    assert_eq!(
        names,
        [
            "run.started -",
            "node.started in",
            "node.completed in",
            "node.started say",
            "node.completed say",
            "node.started out",
            "node.completed out",
            "run.completed -"
        ]
    );
    assert!(
        report
            .states
            .iter()
            .all(|(_, state)| *state == NodeState::Completed)
    );
}

#[tokio::test]
async fn parallel_branches_run_at_the_same_time() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    // `meet` completes only when both of its sessions wait at the barrier together;
    // run one after the other, the first would time out.
    let workflow = Workflow::builder("parallel")
        .input("in")
        .agent("a", "meet", "a {{in}}")
        .with_last(|n| n.timeout_ms = Some(10_000))
        .agent("b", "meet", "b {{in}}")
        .with_last(|n| n.timeout_ms = Some(10_000))
        .output("out", ["a", "b"])
        .build(&catalog())
        .unwrap();
    let (report, _) = run_with_events(&f, workflow, "x").await;
    assert_eq!(texts(&report.artifacts["out"]), ["met: a x", "met: b x"]);
}

#[tokio::test]
async fn the_concurrency_limit_of_one_runs_the_branches_one_after_the_other() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("serialized")
        .concurrency(1)
        .input("in")
        .agent("a", "meet", "a")
        .with_last(|n| n.timeout_ms = Some(200))
        .agent("b", "meet", "b")
        .with_last(|n| n.timeout_ms = Some(200))
        .output("out", ["a", "b"])
        .build(&catalog())
        .unwrap();
    let (report, _) = run_with_events(&f, workflow, "x").await;
    // With one slot the twins never meet: the first times out.
    assert!(
        matches!(report.outcome, RunOutcome::Failed { ref node, ref error } if node == "a" && error.contains("timed out"))
    );
}

#[tokio::test]
async fn a_failed_node_cancels_downstream_and_an_independent_branch_completes() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("failing")
        .input("in")
        .agent("bad", "fail", "{{in}}")
        .agent("after_bad", "echo", "{{bad}}")
        .agent("good", "gated", "{{in}}")
        .output("out", ["after_bad", "good"])
        .build(&catalog())
        .unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut control = RunControl::new();
    control.events = Some(tx);
    let runner = f.workflows.runner().unwrap();
    let run =
        tokio::spawn(async move { runner.run(Arc::new(workflow), "x".into(), control).await });
    // `good` is held until `bad` has failed: it finishes after the failure.
    let mut seen = Vec::new();
    while let Some(event) = rx.recv().await {
        let failed = matches!(&event, RunEvent::NodeError { node, .. } if node == "bad");
        seen.push(event);
        if failed {
            break;
        }
    }
    f.gate.send(()).unwrap();
    let report = run.await.unwrap();
    while let Ok(event) = rx.try_recv() {
        seen.push(event);
    }
    assert!(
        matches!(&report.outcome, RunOutcome::Failed { node, error } if node == "bad" && error.contains("boom"))
    );
    assert_eq!(report.state("bad"), Some(NodeState::Failed));
    assert_eq!(report.state("after_bad"), Some(NodeState::Canceled));
    assert_eq!(report.state("out"), Some(NodeState::Canceled));
    assert_eq!(report.state("good"), Some(NodeState::Completed));
    assert_eq!(texts(&report.artifacts["good"]), ["late but done"]);
    assert!(seen.iter().any(|e| matches!(e, RunEvent::NodeCanceled { node, reason } if node == "after_bad" && reason.contains("`bad`"))));
    assert!(matches!(seen.last(), Some(RunEvent::RunFailed { node, .. }) if node == "bad"));
}

#[tokio::test(start_paused = true)]
async fn a_node_past_its_timeout_has_its_task_canceled() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("slow")
        .input("in")
        .agent("stuck", "hang", "{{in}}")
        .with_last(|n| n.timeout_ms = Some(5_000))
        .output("out", ["stuck"])
        .build(&catalog())
        .unwrap();
    let started = tokio::time::Instant::now();
    let (report, _) = run_with_events(&f, workflow, "x").await;
    assert!(
        matches!(&report.outcome, RunOutcome::Failed { node, error } if node == "stuck" && error.contains("timed out after 5000 ms"))
    );
    assert!(started.elapsed() >= Duration::from_secs(5));
    // The agent saw its task canceled, and the store says so.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while f.hung.load(Ordering::SeqCst) == 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(f.hung.load(Ordering::SeqCst), 1);
    let canceled = f
        .supervisor
        .list_tasks(
            &|t: &agentyard_transport::a2a::Task, _| t.status.state == TaskState::Canceled,
            10,
            None,
        )
        .await
        .unwrap();
    assert_eq!(canceled.total, 1);
}

#[tokio::test(start_paused = true)]
async fn a_retry_succeeds_on_the_second_attempt_after_the_backoff() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("retrying")
        .input("in")
        .agent("flaky", "flaky", "{{in}}")
        .with_last(|n| {
            n.retries = Some(2);
            n.backoff_ms = Some(1_500);
        })
        .output("out", ["flaky"])
        .build(&catalog())
        .unwrap();
    let (report, events) = run_with_events(&f, workflow, "x").await;
    assert_eq!(texts(&report.artifacts["out"]), ["second time lucky"]);
    let calls = f.flaky_calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 2);
    assert!(calls[1] - calls[0] >= Duration::from_millis(1_500));
    assert!(events.iter().any(|e| matches!(e, RunEvent::NodeRetrying { node, attempt: 1, backoff_ms: 1_500, .. } if node == "flaky")));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::NodeStarted { node, attempt: 2 } if node == "flaky"))
    );
}

#[tokio::test]
async fn retries_are_not_deduplicated_by_the_idempotency_key_of_the_first_attempt() {
    // Without the attempt in the key, the second send would return the first,
    // failed task.
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("retrying")
        .input("in")
        .agent("flaky", "flaky", "{{in}}")
        .with_last(|n| {
            n.retries = Some(1);
            n.backoff_ms = Some(1);
        })
        .output("out", ["flaky"])
        .build(&catalog())
        .unwrap();
    let (report, _) = run_with_events(&f, workflow, "x").await;
    assert!(matches!(report.outcome, RunOutcome::Completed(_)));
}

#[tokio::test]
async fn canceling_a_run_cancels_every_started_node() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("cancel")
        .input("in")
        .agent("one", "hang", "{{in}}")
        .agent("two", "hang", "{{in}}")
        .agent("three", "echo", "{{one}} {{two}}")
        .output("out", ["three"])
        .build(&catalog())
        .unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut control = RunControl::new();
    control.events = Some(tx);
    let cancel = control.cancel.clone();
    let runner = f.workflows.runner().unwrap();
    let run =
        tokio::spawn(async move { runner.run(Arc::new(workflow), "x".into(), control).await });
    let mut started = 0;
    while let Some(event) = rx.recv().await {
        if matches!(&event, RunEvent::NodeStarted { node, .. } if node == "one" || node == "two") {
            started += 1;
            if started == 2 {
                break;
            }
        }
    }
    // Both sends are in flight; wait until both agents are running.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while f.supervisor.running_task_count() < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    cancel.cancel();
    let report = run.await.unwrap();
    assert_eq!(report.outcome, RunOutcome::Canceled);
    assert_eq!(report.state("one"), Some(NodeState::Canceled));
    assert_eq!(report.state("two"), Some(NodeState::Canceled));
    assert_eq!(report.state("three"), Some(NodeState::Canceled));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while f.hung.load(Ordering::SeqCst) < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        f.hung.load(Ordering::SeqCst),
        2,
        "every started node's task was canceled"
    );
}

#[tokio::test]
async fn a_reference_to_a_missing_part_fails_the_node_naming_the_template() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("templates")
        .input("in")
        .agent("say", "echo", "{{in}}")
        .agent("use_data", "echo", "n = {{say.data}}")
        .output("out", ["use_data"])
        .build(&catalog())
        .unwrap();
    let (report, _) = run_with_events(&f, workflow, "x").await;
    let RunOutcome::Failed { node, error } = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert_eq!(node, "use_data");
    assert!(error.contains("template `n = {{say.data}}`"), "{error}");
    assert!(error.contains("node `say` has no data part"), "{error}");
}

#[tokio::test]
async fn data_and_part_references_render_json_and_single_parts() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("data")
        .input("in")
        .agent("d", "data", "{{in}}")
        .agent(
            "show",
            "echo",
            "data={{d.data}} part={{d.parts[0]}} in={{input}}",
        )
        .output("out", ["show"])
        .build(&catalog())
        .unwrap();
    let (report, _) = run_with_events(&f, workflow, "x").await;
    assert_eq!(
        texts(&report.artifacts["out"]),
        [r#"data={"n":7} part={"n":7} in=x"#]
    );
}

#[tokio::test]
async fn a_tool_node_turns_artifacts_into_artifacts() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("tools")
        .input("in")
        .agent("say", "echo", "hello {{in}}")
        .tool("shout", "upper", None)
        .with_last(|n| n.depends_on = vec!["say".into()])
        .tool("count", "word_count", Some("{{shout}}"))
        .output("out", ["shout", "count"])
        .build(&catalog())
        .unwrap();
    let (report, _) = run_with_events(&f, workflow, "world").await;
    assert_eq!(
        texts(&report.artifacts["out"]),
        ["HELLO WORLD", r#"{"words":2}"#]
    );
}

#[tokio::test]
async fn an_input_request_suspends_the_run_until_it_is_answered() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("asking")
        .input("in")
        .agent("ask", "asker", "{{in}}")
        .output("out", ["ask"])
        .build(&catalog())
        .unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (answer, answers) = mpsc::channel(1);
    let mut control = RunControl::new();
    control.events = Some(tx);
    control.answers = Some(answers);
    let runner = f.workflows.runner().unwrap();
    let run =
        tokio::spawn(async move { runner.run(Arc::new(workflow), "x".into(), control).await });
    loop {
        match rx.recv().await.unwrap() {
            RunEvent::NodeInputRequired { node, question } => {
                assert_eq!((node.as_str(), question.as_str()), ("ask", "which colour?"));
                break;
            }
            RunEvent::RunCompleted { .. } | RunEvent::RunFailed { .. } => {
                panic!("ended without asking")
            }
            _ => {}
        }
    }
    answer.send("green".into()).await.unwrap();
    let report = run.await.unwrap();
    assert_eq!(texts(&report.artifacts["out"]), ["colour: green"]);
}

#[tokio::test]
async fn without_answers_an_input_request_fails_the_node() {
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let workflow = Workflow::builder("asking")
        .input("in")
        .agent("ask", "asker", "{{in}}")
        .output("out", ["ask"])
        .build(&catalog())
        .unwrap();
    let (report, _) = run_with_events(&f, workflow, "x").await;
    assert!(
        matches!(&report.outcome, RunOutcome::Failed { node, error } if node == "ask" && error.contains("which colour?"))
    );
}

/// Every event the supervisor published until now (the run has ended).
async fn drain(events: &mut agentyard_actors::Subscription) -> Vec<Arc<agentyard_actors::Event>> {
    let mut seen = Vec::new();
    while let Ok(Some(received)) =
        tokio::time::timeout(Duration::from_millis(200), events.recv()).await
    {
        if let agentyard_actors::Received::Event(event) = received {
            seen.push(event);
        }
    }
    seen
}

#[tokio::test]
async fn each_node_send_goes_through_the_supervisor_with_entry_point_workflow() {
    use agentyard_actors::EventKind;
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let mut events = f.supervisor.subscribe();
    let workflow = Workflow::builder("entry")
        .input("in")
        .agent("say", "echo", "{{in}}")
        .output("out", ["say"])
        .build(&catalog())
        .unwrap();
    let (report, _) = run_with_events(&f, workflow, "x").await;
    let seen = drain(&mut events).await;
    let initiated: Vec<_> = seen
        .iter()
        .filter(|e| e.kind == EventKind::SendInitiated)
        .collect();
    assert_eq!(initiated.len(), 1);
    let send = initiated[0];
    assert_eq!(send.entry_point, agentyard_policy::EntryPoint::Workflow);
    assert_eq!(send.from.as_deref(), Some("entry"));
    assert_eq!(&*send.to, "echo");
    assert_eq!(
        send.idempotency_key.as_deref(),
        Some(format!("workflow:{}:say:1:0", report.run_id).as_str())
    );
    assert!(seen.iter().any(|e| e.kind == EventKind::SendCompleted));
}

#[tokio::test]
async fn node_tasks_go_through_the_a2a_lifecycle_and_the_run_through_its_own() {
    use agentyard_actors::{EventDetail, EventKind};
    let f = fixture(Vec::new(), Workflows::new(Tools::builtin())).await;
    let mut events = f.supervisor.subscribe();
    let workflow = Workflow::builder("lifecycle")
        .input("in")
        .agent("good", "echo", "{{in}}")
        .agent("bad", "fail", "{{in}}")
        .output("out", ["good", "bad"])
        .build(&catalog())
        .unwrap();
    let (report, run_events) = run_with_events(&f, workflow, "x").await;
    let seen = drain(&mut events).await;
    let mut states: std::collections::BTreeMap<String, Vec<TaskState>> = Default::default();
    for event in &seen {
        if event.kind != EventKind::TaskStatus {
            continue;
        }
        if let EventDetail::Status { update } = &event.detail {
            states
                .entry(event.to.to_string())
                .or_default()
                .push(update.status.state);
        }
    }
    assert_eq!(
        states["echo"],
        [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed
        ]
    );
    assert_eq!(
        states["fail"],
        [TaskState::Submitted, TaskState::Working, TaskState::Failed]
    );
    // The nodes' states as the run saw them, and the run's own.
    assert_eq!(report.state("good"), Some(NodeState::Completed));
    assert_eq!(report.state("bad"), Some(NodeState::Failed));
    assert_eq!(report.state("out"), Some(NodeState::Canceled));
    let per_node = |node: &str| -> Vec<&str> {
        run_events
            .iter()
            .filter(|e| e.node() == Some(node) && !e.name().starts_with("run."))
            .map(RunEvent::name)
            .collect()
    };
    assert_eq!(per_node("good"), ["node.started", "node.completed"]);
    assert_eq!(per_node("bad"), ["node.started", "node.error"]);
    assert_eq!(per_node("out"), ["node.canceled"]);
    assert_eq!(run_events.first().map(RunEvent::name), Some("run.started"));
    assert_eq!(run_events.last().map(RunEvent::name), Some("run.failed"));
}

fn workflow_agent_registration(workflows: &Workflows, workflow: &Workflow) -> Registration {
    let agent = workflows.agent(workflow.name());
    Registration::new(Workflows::descriptor(workflow), move |_| agent.clone())
}

#[tokio::test]
async fn a_workflow_is_an_agent_whose_task_narrates_its_nodes() {
    let workflows = Workflows::new(Tools::builtin());
    let inner = Workflow::builder("inner")
        .input("in")
        .agent("say", "echo", "inner got {{in}}")
        .output("out", ["say"])
        .build(&catalog())
        .unwrap();
    let mut names = catalog();
    names.agents.insert("inner".into());
    let outer = Workflow::builder("outer")
        .input("in")
        .agent("nested", "inner", "outer sends {{in}}")
        .tool("shout", "upper", Some("{{nested}}"))
        .output("out", ["shout"])
        .build(&names)
        .unwrap();
    let registrations = vec![
        workflow_agent_registration(&workflows, &inner),
        workflow_agent_registration(&workflows, &outer),
    ];
    workflows.add(inner).await.unwrap();
    workflows.add(outer).await.unwrap();
    let f = fixture(registrations, workflows).await;
    let card = f.supervisor.agent("outer").unwrap();
    assert!(card.skills.iter().any(|s| s.id == "outer.nested"));

    use futures::StreamExt as _;
    let stream = f
        .supervisor
        .stream(SendRequest::new(
            "outer",
            Message::new(Role::User, vec![Part::text("hi")]),
        ))
        .await
        .unwrap();
    let events: Vec<_> = stream.collect().await;
    let mut states = Vec::new();
    let mut notes = Vec::new();
    for event in &events {
        if let agentyard_transport::a2a::StreamEvent::StatusUpdate(update) = event {
            states.push(update.status.state);
            if let Some(message) = &update.status.message {
                notes.push(message.text());
            }
        }
    }
    assert_eq!(states.first(), Some(&TaskState::Working));
    assert_eq!(states.last(), Some(&TaskState::Completed));
    assert!(
        notes
            .iter()
            .any(|n| n == "node.started: nested (attempt 1)"),
        "{notes:?}"
    );
    let data: Vec<serde_json::Value> = events
        .iter()
        .filter_map(|e| match e {
            agentyard_transport::a2a::StreamEvent::StatusUpdate(update) => {
                update.status.message.clone()
            }
            _ => None,
        })
        .filter_map(|m| match m.parts.get(1) {
            Some(Part::Data(data)) => Some(serde_json::Value::Object(data.data.clone())),
            _ => None,
        })
        .collect();
    assert!(
        data.contains(
            &serde_json::json!({"event": "node.started", "node": "nested", "attempt": 1})
        ),
        "{data:?}"
    );
    assert!(
        data.contains(
            &serde_json::json!({"event": "node.completed", "node": "shout", "artifacts": 1})
        ),
        "{data:?}"
    );
    assert!(
        notes.iter().any(|n| n.starts_with("node.completed: shout")),
        "{notes:?}"
    );
    let task = f
        .supervisor
        .get_task(events[0].task_id().unwrap(), None)
        .await
        .unwrap();
    assert_eq!(
        texts(task.artifacts.iter().flatten().map(|a| &**a)),
        ["INNER GOT OUTER SENDS HI"]
    );
}

#[tokio::test]
async fn a_workflow_task_waits_for_input_and_resumes_with_the_answer() {
    let workflows = Workflows::new(Tools::builtin());
    let asking = Workflow::builder("asking")
        .input("in")
        .agent("ask", "asker", "{{in}}")
        .output("out", ["ask"])
        .build(&catalog())
        .unwrap();
    let registrations = vec![workflow_agent_registration(&workflows, &asking)];
    workflows.add(asking).await.unwrap();
    let f = fixture(registrations, workflows).await;
    let first = f
        .supervisor
        .send_and_wait(SendRequest::new("asking", Message::user_text("go")))
        .await
        .unwrap();
    assert_eq!(first.task.status.state, TaskState::InputRequired);
    assert_eq!(first.task.status.message.unwrap().text(), "which colour?");
    let answer = Message::user_text("blue")
        .with_task_id(first.task.id.clone())
        .with_context_id(first.task.context_id.clone());
    let done = f
        .supervisor
        .send_and_wait(SendRequest::new("asking", answer))
        .await
        .unwrap();
    assert_eq!(done.task.status.state, TaskState::Completed);
    assert_eq!(
        texts(done.task.artifacts.iter().flatten().map(|a| &**a)),
        ["colour: blue"]
    );
}

#[tokio::test]
async fn canceling_a_workflow_task_cancels_its_running_nodes() {
    let workflows = Workflows::new(Tools::builtin());
    let hanging = Workflow::builder("hanging")
        .input("in")
        .agent("stuck", "hang", "{{in}}")
        .output("out", ["stuck"])
        .build(&catalog())
        .unwrap();
    let registrations = vec![workflow_agent_registration(&workflows, &hanging)];
    workflows.add(hanging).await.unwrap();
    let f = fixture(registrations, workflows).await;
    let submitted = f
        .supervisor
        .send(SendRequest::new("hanging", Message::user_text("go")))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while f.supervisor.running_task_count() < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    f.supervisor.cancel_task(&submitted.task.id).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while f.hung.load(Ordering::SeqCst) == 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(f.hung.load(Ordering::SeqCst), 1);
}

#[test]
fn a_node_spec_for_the_wrong_kind_is_refused() {
    let mut node = NodeSpec::new("in", NodeKindName::Input);
    node.retries = Some(1);
    let spec = Workflow::builder("w")
        .node(node)
        .output("out", ["in"])
        .spec();
    let error = spec.validate(&catalog()).unwrap_err();
    assert_eq!(error.node(), Some("in"));
    assert!(
        error
            .to_string()
            .contains("`retries` does not belong to a `input` node")
    );
}

#[tokio::test]
async fn a_workflow_that_runs_itself_is_cut_by_the_hop_limit() {
    let workflows = Workflows::new(Tools::builtin());
    let mut names = catalog();
    names.agents.insert("again".into());
    let again = Workflow::builder("again")
        .input("in")
        .agent("self", "again", "{{in}}")
        .output("out", ["self"])
        .build(&names)
        .unwrap();
    let registrations = vec![workflow_agent_registration(&workflows, &again)];
    workflows.add(again).await.unwrap();
    let f = fixture(registrations, workflows).await;
    let done = tokio::time::timeout(
        Duration::from_secs(20),
        f.supervisor
            .send_and_wait(SendRequest::new("again", Message::user_text("go"))),
    )
    .await
    .expect("the recursion ends")
    .unwrap();
    assert_eq!(done.task.status.state, TaskState::Failed);
    let reason = done.task.status.message.unwrap().text();
    assert!(reason.contains("node `self`"), "{reason}");
    assert!(reason.to_lowercase().contains("hop"), "{reason}");
}
