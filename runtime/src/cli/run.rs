//! `agentyard run WORKFLOW.toml --input TEXT`: runs one workflow on the built-in
//! agents and tools, with a live view of its nodes, then prints the output artifacts.
//!
//! On a terminal the view is one line per node, redrawn in place; otherwise each
//! change of a node's state is printed as a line of its own. A node that asks for
//! input reads the answer from standard input. The exit code is 0 when the run
//! completes, 1 when it fails or the file is unusable, 130 after Ctrl-C (the run's
//! started nodes are canceled first).

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use agentyard::Runtime;
use agentyard::workflow::runner::{NodeState, RunControl, RunEvent, RunOutcome};
use agentyard::workflow::template::render_part;
use agentyard::workflow::{Tools, Workflow, Workflows};
use agentyard_actors::edge::{Edge, EdgeConfig};
use tokio::sync::mpsc;

/// `agentyard run`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The workflow file (TOML, or JSON); its agent nodes may use the built-in agents
    /// (echo, countdown, ask, planner, worker) and tools (upper, concat, word_count).
    workflow: PathBuf,
    /// The run's input text.
    #[arg(long)]
    input: String,
    /// Reach the nodes over a loopback HTTP edge with A2A JSON-RPC (the seed's
    /// pure-A2A mode) instead of through the in-process supervisor.
    #[arg(long)]
    pure_a2a: bool,
}

/// Runs the workflow; see the module docs for the exit codes.
pub(crate) async fn run(args: RunArgs) -> ExitCode {
    match run_inner(args).await {
        Ok(code) => code,
        Err(message) => {
            eprintln!("agentyard: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run_inner(args: RunArgs) -> Result<ExitCode, String> {
    let path = args.workflow.display().to_string();
    let specs = agentyard::workflows::read_specs(std::slice::from_ref(&args.workflow), "workflow")
        .map_err(|e| format!("{e}"))?;
    let workflows = Workflows::new(Tools::builtin());
    let exposed: Vec<String> = agentyard::builtin::EXPOSED
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let builder = agentyard::builtin::register(Runtime::builder(), &exposed);
    let builder = agentyard::workflows::register(
        builder,
        &workflows,
        specs,
        false,
        agentyard::workflows::is_builtin,
    )
    .await
    .map_err(|e| format!("{path}: {e}"))?;
    let runtime = builder.build().await.map_err(|e| e.to_string())?;
    let mut edge = None;
    if args.pure_a2a {
        let started = Edge::start(
            runtime.supervisor().clone(),
            EdgeConfig::default().agents(exposed.iter().cloned()),
        )
        .await
        .map_err(|e| format!("the loopback HTTP edge could not start: {e}"))?;
        workflows.use_client(Arc::new(agentyard::workflow::client::OverHttp::new(
            started.base_url(),
            agentyard_transport::client::ClientOptions::new(),
        )));
        edge = Some(started);
    }
    let loaded = agentyard::workflows::bind(&workflows, &runtime)
        .await
        .map_err(|e| format!("{path}: {e}"))?;
    let workflow = loaded
        .into_iter()
        .next()
        .ok_or_else(|| format!("{path}: no workflow"))?;
    let runner = workflows.runner().ok_or("the workflows are not bound")?;

    let (events, mut rx) = mpsc::unbounded_channel();
    let (answer, answers) = mpsc::channel(1);
    let mut control = RunControl::new();
    control.events = Some(events);
    control.answers = Some(answers);
    let cancel = control.cancel.clone();
    let input = args.input;
    let running = {
        let workflow = Arc::clone(&workflow);
        tokio::spawn(async move { runner.run(workflow, input, control).await })
    };
    let mut view = LiveView::new(&workflow, std::io::stdout().is_terminal());
    let mut interrupted = false;
    loop {
        tokio::select! {
            event = rx.recv() => {
                let Some(event) = event else { break };
                view.apply(&event);
                if let RunEvent::NodeInputRequired { node, question } = &event {
                    let Some(text) = ask(node, question).await else {
                        cancel.cancel();
                        continue;
                    };
                    view.redraw_after_prompt();
                    let _ = answer.send(text).await;
                }
            }
            _ = tokio::signal::ctrl_c(), if !interrupted => {
                interrupted = true;
                cancel.cancel();
            }
        }
    }
    let report = running.await.map_err(|e| format!("the run stopped: {e}"))?;
    let code = match &report.outcome {
        RunOutcome::Completed(artifacts) => {
            print_artifacts(artifacts);
            ExitCode::SUCCESS
        }
        RunOutcome::Failed { node, error } => {
            eprintln!(
                "agentyard: workflow `{}` failed at node `{node}`: {error}",
                workflow.name()
            );
            ExitCode::FAILURE
        }
        RunOutcome::Canceled => {
            eprintln!("agentyard: workflow `{}` was canceled", workflow.name());
            ExitCode::from(if interrupted { 130 } else { 1 })
        }
    };
    if let Some(edge) = edge {
        edge.stop().await;
    }
    runtime.shutdown(std::time::Duration::from_secs(1)).await;
    Ok(code)
}

/// Asks the person at the terminal; `None` when standard input is closed.
async fn ask(node: &str, question: &str) -> Option<String> {
    print!("{node} asks: {question}\n> ");
    let _ = std::io::stdout().flush();
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
        }
    })
    .await
    .ok()
    .flatten()
}

fn print_artifacts(artifacts: &[agentyard::Artifact]) {
    let mut out = String::new();
    for artifact in artifacts {
        let title = artifact.name.as_deref().unwrap_or(&artifact.artifact_id);
        out.push_str(&format!("== {title} ==\n"));
        for part in &artifact.parts {
            out.push_str(&render_part(part));
            out.push('\n');
        }
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush());
}

/// The nodes' states: redrawn in place on a terminal, a line per change otherwise.
struct LiveView {
    rows: Vec<(String, NodeState, String)>,
    width: usize,
    terminal: bool,
    drawn: bool,
}

impl LiveView {
    fn new(workflow: &Workflow, terminal: bool) -> Self {
        let rows: Vec<_> = workflow
            .nodes()
            .iter()
            .map(|node| (node.id.clone(), NodeState::Pending, String::new()))
            .collect();
        let width = rows.iter().map(|(id, _, _)| id.len()).max().unwrap_or(0);
        let mut view = Self {
            rows,
            width,
            terminal,
            drawn: false,
        };
        if terminal {
            view.draw();
        }
        view
    }

    fn apply(&mut self, event: &RunEvent) {
        let (state, detail) = match event {
            RunEvent::NodeStarted { attempt, .. } if *attempt > 1 => {
                (NodeState::Working, format!("attempt {attempt}"))
            }
            RunEvent::NodeStarted { .. } => (NodeState::Working, String::new()),
            RunEvent::NodeCompleted { artifacts, .. } => (
                NodeState::Completed,
                format!("{} artifact(s)", artifacts.len()),
            ),
            RunEvent::NodeRetrying {
                attempt,
                error,
                backoff_ms,
                ..
            } => (
                NodeState::Working,
                format!("attempt {attempt} failed ({error}); retrying in {backoff_ms} ms"),
            ),
            RunEvent::NodeError { error, .. } => (NodeState::Failed, error.clone()),
            RunEvent::NodeCanceled { reason, .. } => (NodeState::Canceled, reason.clone()),
            RunEvent::NodeInputRequired { question, .. } => {
                (NodeState::InputRequired, question.clone())
            }
            _ => return,
        };
        let Some(node) = event.node() else { return };
        let Some(row) = self.rows.iter_mut().find(|(id, _, _)| id == node) else {
            return;
        };
        row.1 = state;
        row.2 = detail;
        if self.terminal {
            self.draw();
        } else {
            let line = Self::line(self.width, row);
            println!("{line}");
        }
    }

    fn line(width: usize, (id, state, detail): &(String, NodeState, String)) -> String {
        format!("{id:<width$}  {:<14} {detail}", state.as_str())
            .trim_end()
            .to_owned()
    }

    /// After a prompt was printed under the view, draw it afresh below.
    fn redraw_after_prompt(&mut self) {
        self.drawn = false;
        if self.terminal {
            self.draw();
        }
    }

    fn draw(&mut self) {
        let out = self.frame();
        self.drawn = true;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout
            .write_all(out.as_bytes())
            .and_then(|()| stdout.flush());
    }

    /// The view as written to a terminal: over the previous frame when there is one.
    fn frame(&self) -> String {
        let mut out = String::new();
        if self.drawn {
            // Back to the view's first line, to draw over it.
            out.push_str(&format!("\x1b[{}A", self.rows.len()));
        }
        for row in &self.rows {
            out.push_str("\x1b[2K");
            out.push_str(&Self::line(self.width, row));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> LiveView {
        let catalog = agentyard::workflow::definition::Names::new(["echo"], Vec::<String>::new());
        let workflow = Workflow::builder("w")
            .input("in")
            .agent("long_name", "echo", "{{in}}")
            .output("out", ["long_name"])
            .build(&catalog)
            .expect("valid");
        LiveView::new(&workflow, false)
    }

    #[test]
    fn each_node_is_one_aligned_line_and_a_redraw_goes_back_over_the_last_frame() {
        let mut view = view();
        view.rows[1].1 = NodeState::Failed;
        view.rows[1].2 = String::from("boom");
        let first = view.frame();
        assert_eq!(
            first,
            "\x1b[2Kin         pending\n\x1b[2Klong_name  failed         boom\n\x1b[2Kout        pending\n"
        );
        view.drawn = true;
        assert!(view.frame().starts_with("\x1b[3A\x1b[2Kin "));
    }
}
