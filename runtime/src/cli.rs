//! The client commands of the `agentyard` program: `card`, `send`, `stream`, `get`,
//! `cancel`, `resubscribe`, against any A2A agent (agentyard's or another stack's).
//! `agentyard run` (one workflow file, with a live view) is the module [`run`](mod@run).
//!
//! Output is for people by default (a line per status change, artifact text as it
//! arrives, a summary line) and the raw JSON-RPC results with `--json` (one JSON
//! value per line), for scripts. The exit status says how the task ended, so a
//! script can branch on it without parsing: see [`Exit`].

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use agentyard_transport::a2a::v1::ProtocolVersion;
use agentyard_transport::a2a::{
    AgentCard, Artifact, Message, MessageSendConfiguration, MessageSendParams, Part,
    SendMessageResult, StreamEvent, Task, TaskIdParams, TaskQueryParams, TaskState,
    TransportProtocol,
};
use agentyard_transport::client::{A2aClient, ClientError, ClientOptions, RetryPolicy};
use agentyard_transport::handoff::{self, HANDOFF_EXTENSION_URI, HandoffPayload};
use agentyard_transport::jsonrpc::A2aRequest;
use agentyard_transport::{ContextId, TaskId};
use clap::{Args, Subcommand};
use futures::StreamExt as _;
use serde_json::Value;

pub(crate) mod run;
#[cfg(test)]
mod tests;

/// The exit statuses of the client commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exit {
    /// The task completed (or the command did what it was asked).
    Completed = 0,
    /// The task failed or was rejected.
    Failed = 3,
    /// The task was canceled.
    Canceled = 4,
    /// The task waits for input (or authentication).
    InputRequired = 5,
    /// The agent could not be reached: connection, timeout, an HTTP error status.
    Transport = 6,
    /// The agent answered with an error, or with something that is not A2A; or the
    /// command's own input was unusable (a missing file, bad JSON).
    Error = 7,
    /// The task is still running (`get` of a task that has not ended).
    Running = 8,
}

impl Exit {
    fn of(state: TaskState) -> Self {
        match state {
            TaskState::Completed => Self::Completed,
            TaskState::Failed | TaskState::Rejected => Self::Failed,
            TaskState::Canceled => Self::Canceled,
            TaskState::InputRequired | TaskState::AuthRequired => Self::InputRequired,
            TaskState::Submitted | TaskState::Working | TaskState::Unknown => Self::Running,
        }
    }

    fn code(self) -> ExitCode {
        ExitCode::from(self as u8)
    }
}

/// The client commands, flattened into the program's subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum ClientCommand {
    /// Show an agent's card.
    Card {
        /// The card URL, or the agent's base URL (its well-known card is fetched).
        url: String,
        #[command(flatten)]
        common: Common,
    },
    /// Send a message and wait for the task to complete or ask for input.
    Send {
        /// The agent: its card URL, its base URL, or its JSON-RPC endpoint.
        url: String,
        /// The message text.
        text: String,
        #[command(flatten)]
        message: MessageArgs,
        /// Return once the task is submitted instead of waiting for it.
        #[arg(long)]
        no_wait: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Send a message and follow the task live: status lines, artifact text as it
    /// arrives, a summary line.
    Stream {
        /// The agent: its card URL, its base URL, or its JSON-RPC endpoint.
        url: String,
        /// The message text.
        text: String,
        #[command(flatten)]
        message: MessageArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Show a task.
    Get {
        /// The agent: its card URL, its base URL, or its JSON-RPC endpoint.
        url: String,
        /// The task id.
        task: String,
        /// Show at most this many of its most recent messages.
        #[arg(long)]
        history: Option<u32>,
        #[command(flatten)]
        common: Common,
    },
    /// Cancel a task.
    Cancel {
        /// The agent: its card URL, its base URL, or its JSON-RPC endpoint.
        url: String,
        /// The task id.
        task: String,
        #[command(flatten)]
        common: Common,
    },
    /// Follow a running task's events from now on.
    Resubscribe {
        /// The agent: its card URL, its base URL, or its JSON-RPC endpoint.
        url: String,
        /// The task id.
        task: String,
        #[command(flatten)]
        common: Common,
    },
}

/// What every client command takes.
#[derive(Debug, Args)]
pub(crate) struct Common {
    /// Print the raw JSON-RPC results (one JSON value per line) instead of text.
    #[arg(long)]
    json: bool,
    /// An extra header on every request, `NAME:VALUE` (repeatable), e.g. an API key
    /// `--header X-API-Key:secret` or `--header "Authorization:Bearer t"`.
    #[arg(long = "header", value_name = "K:V", value_parser = parse_header)]
    headers: Vec<(String, String)>,
    /// Give up on a call after this many seconds.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// The binding to call over, whatever the card prefers: `jsonrpc`, `rest`
    /// (HTTP+JSON) or `grpc`. Unset, the card's order decides.
    #[arg(long, value_enum, value_name = "BINDING")]
    transport: Option<Transport>,
    /// The A2A version to speak, whatever the card prefers: `1.0` or `0.3`. Unset,
    /// the card decides (1.0 when offered).
    #[arg(long = "a2a-version", value_name = "VERSION", value_parser = parse_version)]
    a2a_version: Option<ProtocolVersion>,
}

/// A binding `--transport` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Transport {
    /// JSON-RPC 2.0 over HTTP.
    Jsonrpc,
    /// HTTP+JSON (REST).
    Rest,
    /// gRPC.
    Grpc,
}

impl From<Transport> for TransportProtocol {
    fn from(transport: Transport) -> Self {
        match transport {
            Transport::Jsonrpc => Self::JsonRpc,
            Transport::Rest => Self::HttpJson,
            Transport::Grpc => Self::Grpc,
        }
    }
}

/// `--a2a-version`: a version served (`1.0`, `0.3`; a patch number is ignored).
fn parse_version(text: &str) -> Result<ProtocolVersion, String> {
    ProtocolVersion::from_header(Some(text))
        .ok()
        .filter(|_| !text.trim().is_empty())
        .ok_or_else(|| format!("`{text}` is not an A2A version this program speaks (1.0, 0.3)"))
}

/// What makes up the message of `send` and `stream`.
#[derive(Debug, Args)]
pub(crate) struct MessageArgs {
    /// Continue this task (one waiting for input).
    #[arg(long)]
    task_id: Option<String>,
    /// Send within this conversation.
    #[arg(long)]
    context_id: Option<String>,
    /// Add a data part: a JSON object read from the file.
    #[arg(long, value_name = "FILE.json")]
    data: Option<PathBuf>,
    /// Add a typed handoff payload read from the file (and activate the handoff
    /// extension).
    #[arg(long, value_name = "FILE.json")]
    handoff: Option<PathBuf>,
}

fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("`{text}` is not NAME:VALUE"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("`{text}` has no header name before the colon"));
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

/// A failure of a command, as the sentence printed and the exit status.
#[derive(Debug)]
struct Failure {
    exit: Exit,
    sentence: String,
}

impl Failure {
    fn input(sentence: impl Into<String>) -> Self {
        Self {
            exit: Exit::Error,
            sentence: sentence.into(),
        }
    }
}

impl From<ClientError> for Failure {
    fn from(error: ClientError) -> Self {
        let exit = match &error {
            ClientError::Transport(_)
            | ClientError::Http { .. }
            | ClientError::Grpc { .. }
            | ClientError::InvalidUrl { .. } => Exit::Transport,
            _ => Exit::Error,
        };
        let sentence = match &error {
            ClientError::JsonRpc(rpc) => format!(
                "the agent answered with error {}: {}",
                rpc.code, rpc.message
            ),
            ClientError::Decode { what, source } => {
                format!(
                    "the agent's answer is not valid A2A: could not decode the {what}: {source}"
                )
            }
            other => other.to_string(),
        };
        Self { exit, sentence }
    }
}

/// Runs a client command; prints its output on stdout and a failure on stderr.
pub(crate) async fn run(command: ClientCommand) -> ExitCode {
    let mut out = Output::new();
    match execute(command, &mut out).await {
        Ok(exit) => exit.code(),
        Err(failure) => {
            out.flush();
            let _ = writeln!(std::io::stderr(), "error: {}", failure.sentence);
            failure.exit.code()
        }
    }
}

async fn execute(command: ClientCommand, out: &mut Output) -> Result<Exit, Failure> {
    match command {
        ClientCommand::Card { url, common } => {
            let client = connect(&url, &common, false).await?;
            let card = match client.card() {
                Some(card) => card.clone(),
                None => {
                    return Err(Failure::input(format!(
                        "no agent card at {url} (it answers as an endpoint only)"
                    )));
                }
            };
            if common.json {
                out.json(&card);
            } else {
                print_card(out, &card, &client);
            }
            Ok(Exit::Completed)
        }
        ClientCommand::Send {
            url,
            text,
            message,
            no_wait,
            common,
        } => {
            let (params, typed) = send_params(&text, &message)?;
            let client = connect(&url, &common, typed).await?;
            let mut params = params;
            if no_wait {
                params
                    .configuration
                    .get_or_insert_with(MessageSendConfiguration::default)
                    .blocking = Some(false);
            }
            let answer = client
                .call::<Value>(A2aRequest::SendMessage(params))
                .await?
                .value;
            if common.json {
                out.json(&answer);
            }
            let result: SendMessageResult = serde_json::from_value(answer).map_err(|e| {
                Failure::input(format!("the agent's answer is not a task or message: {e}"))
            })?;
            match result {
                SendMessageResult::Message(reply) => {
                    if !common.json {
                        out.line(&reply.text());
                    }
                    Ok(Exit::Completed)
                }
                SendMessageResult::Task(task) => {
                    if !common.json {
                        print_task(out, &task, false);
                    }
                    if no_wait {
                        Ok(Exit::Completed)
                    } else {
                        Ok(Exit::of(task.status.state))
                    }
                }
            }
        }
        ClientCommand::Stream {
            url,
            text,
            message,
            common,
        } => {
            let (params, typed) = send_params(&text, &message)?;
            let client = connect(&url, &common, typed).await?;
            let events = client.send_message_stream(params).await?;
            follow(out, &client, events, common.json).await
        }
        ClientCommand::Get {
            url,
            task,
            history,
            common,
        } => {
            let client = connect(&url, &common, false).await?;
            let mut params = TaskQueryParams::new(task);
            params.history_length = history;
            let value = client
                .call::<Value>(A2aRequest::GetTask(params))
                .await?
                .value;
            let task = as_task(&value)?;
            if common.json {
                out.json(&value);
            } else {
                print_task(out, &task, true);
            }
            Ok(Exit::of(task.status.state))
        }
        ClientCommand::Cancel { url, task, common } => {
            let client = connect(&url, &common, false).await?;
            let value = client
                .call::<Value>(A2aRequest::CancelTask(TaskIdParams::new(task)))
                .await?
                .value;
            let task = as_task(&value)?;
            if common.json {
                out.json(&value);
            } else {
                print_task(out, &task, false);
            }
            // Asked to cancel, a canceled task is success.
            Ok(match task.status.state {
                TaskState::Canceled => Exit::Completed,
                state => Exit::of(state),
            })
        }
        ClientCommand::Resubscribe { url, task, common } => {
            let client = connect(&url, &common, false).await?;
            let events = client.resubscribe(TaskIdParams::new(task)).await?;
            follow(out, &client, events, common.json).await
        }
    }
}

/// A client for `url`: a card URL as it is, else the card under it as a base URL,
/// else `url` as a JSON-RPC endpoint.
async fn connect(url: &str, common: &Common, handoff: bool) -> Result<A2aClient, Failure> {
    let mut options = ClientOptions::new()
        .timeout(Duration::from_secs(common.timeout.max(1)))
        .connect_timeout(Duration::from_secs(common.timeout.clamp(1, 10)))
        .retry(RetryPolicy::new(3));
    for (name, value) in &common.headers {
        options = options.header(name.clone(), value.clone());
    }
    if handoff {
        options = options.extension(HANDOFF_EXTENSION_URI);
    }
    if let Some(transport) = common.transport {
        options = options.transport(transport.into());
    }
    if let Some(version) = common.a2a_version {
        options = options.protocol_version(version);
    }
    // A gRPC target (`HOST:PORT`) has no card under it.
    if common.transport == Some(Transport::Grpc) && !url.contains("://") {
        return Ok(A2aClient::connect(url, options).await?);
    }
    let path = url.split(['?', '#']).next().unwrap_or(url);
    if path.ends_with(".json") {
        return Ok(A2aClient::connect(url, options).await?);
    }
    let card = format!("{}/.well-known/agent-card.json", url.trim_end_matches('/'));
    match A2aClient::connect(&card, options.clone()).await {
        Ok(client) => Ok(client),
        // No card there: an endpoint given directly.
        Err(ClientError::Http { status, .. }) if status.as_u16() == 404 => {
            Ok(A2aClient::connect(url, options).await?)
        }
        Err(error) => Err(error.into()),
    }
}

/// The send's params from the text and options, and whether it carries a typed
/// payload.
fn send_params(text: &str, args: &MessageArgs) -> Result<(MessageSendParams, bool), Failure> {
    let mut message = Message::user_text(text);
    if let Some(task_id) = &args.task_id {
        message.task_id = Some(TaskId::new(task_id.clone()));
    }
    if let Some(context_id) = &args.context_id {
        message.context_id = Some(ContextId::new(context_id.clone()));
    }
    if let Some(path) = &args.data {
        match read_json(path)? {
            Value::Object(object) => message.parts.push(Part::data(object)),
            _ => {
                return Err(Failure::input(format!(
                    "{} does not hold a JSON object (a data part is one)",
                    path.display()
                )));
            }
        }
    }
    let typed = match &args.handoff {
        Some(path) => {
            let value = read_json(path)?;
            let payload = HandoffPayload::from_json_value(&value).map_err(|invalid| {
                Failure::input(format!(
                    "{} is not a valid handoff payload: {invalid}",
                    path.display()
                ))
            })?;
            handoff::attach_to_message(&mut message, &payload);
            true
        }
        None => false,
    };
    Ok((MessageSendParams::new(message), typed))
}

fn read_json(path: &Path) -> Result<Value, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| Failure::input(format!("{} is not valid JSON: {e}", path.display())))
}

fn as_task(value: &Value) -> Result<Task, Failure> {
    serde_json::from_value(value.clone())
        .map_err(|e| Failure::input(format!("the agent's answer is not a task: {e}")))
}

/// Prints a stream's events as they arrive and returns how the task ended.
async fn follow(
    out: &mut Output,
    client: &A2aClient,
    mut events: agentyard_transport::client::A2aStream,
    json: bool,
) -> Result<Exit, Failure> {
    let started = Instant::now();
    let mut last: Option<(TaskId, TaskState)> = None;
    let mut artifacts = 0_usize;
    let mut open_line = false;
    while let Some(event) = events.next().await {
        let event = event?;
        if json {
            out.json(&event);
        }
        match &event {
            StreamEvent::Message(reply) => {
                if !json {
                    out.line(&reply.text());
                }
                return Ok(Exit::Completed);
            }
            StreamEvent::Task(task) => {
                last = Some((task.id.clone(), task.status.state));
                if !json {
                    out.status(
                        task.status.state,
                        task.status.message.as_deref(),
                        &mut open_line,
                    );
                }
            }
            StreamEvent::StatusUpdate(update) => {
                last = Some((update.task_id.clone(), update.status.state));
                if !json {
                    out.status(
                        update.status.state,
                        update.status.message.as_deref(),
                        &mut open_line,
                    );
                }
            }
            StreamEvent::ArtifactUpdate(update) => {
                if update.append != Some(true) {
                    artifacts += 1;
                }
                if !json {
                    out.artifact(&update.artifact, update.last_chunk, &mut open_line);
                }
            }
        }
    }
    let Some((task_id, state)) = last else {
        return Err(Failure::input("the stream ended before naming a task"));
    };
    if !state.is_terminal() && !state.is_interrupted() {
        // The stream ended before the task did: say where it stands now.
        let task = client
            .get_task(TaskQueryParams::new(task_id.clone()))
            .await?;
        if !json {
            out.end_line(&mut open_line);
            out.line(&format!(
                "the stream closed while task {task_id} is {}",
                task.status.state
            ));
        }
        return Ok(Exit::of(task.status.state));
    }
    if !json {
        out.end_line(&mut open_line);
        out.line(&format!(
            "task {task_id} {state} in {:.1}s ({artifacts} artifact{})",
            started.elapsed().as_secs_f64(),
            if artifacts == 1 { "" } else { "s" }
        ));
    }
    Ok(Exit::of(state))
}

fn print_card(out: &mut Output, card: &AgentCard, client: &A2aClient) {
    out.line(&format!("{} {}", card.name, card.version));
    if !card.description.is_empty() {
        out.line(&card.description);
    }
    out.line(&format!(
        "endpoint:  {} ({}, A2A {})",
        client.endpoint(),
        client.transport(),
        client.protocol_version().as_str()
    ));
    let streaming = card.capabilities.streaming == Some(true);
    out.line(&format!(
        "streaming: {}",
        if streaming { "yes" } else { "no" }
    ));
    for extension in card.capabilities.extensions.iter().flatten() {
        out.line(&format!("extension: {}", extension.uri));
    }
    if !card.skills.is_empty() {
        out.line("skills:");
        for skill in &card.skills {
            out.line(&format!("  {:<20} {}", skill.id, skill.description));
        }
    }
}

fn print_task(out: &mut Output, task: &Task, with_history: bool) {
    out.line(&format!(
        "task {} {} (context {})",
        task.id, task.status.state, task.context_id
    ));
    if with_history {
        for message in task.history.iter().flatten() {
            let who = match message.role {
                agentyard_transport::a2a::Role::User => "user ",
                agentyard_transport::a2a::Role::Agent => "agent",
            };
            out.line(&format!("  {who} {}", message.text()));
        }
    }
    for artifact in task.artifacts.iter().flatten() {
        let text: String = artifact.parts.iter().filter_map(Part::as_text).collect();
        let name = artifact.name.as_deref().unwrap_or(&artifact.artifact_id);
        out.line(&format!("  artifact {name}: {text}"));
    }
    if let Some(message) = &task.status.message {
        let text = message.text();
        if !text.is_empty() {
            out.line(&text);
        }
    }
}

/// Stdout, written line by line; a closed pipe (`agentyard stream … | head`) ends
/// the output quietly instead of panicking.
struct Output {
    stdout: std::io::Stdout,
}

impl Output {
    fn new() -> Self {
        Self {
            stdout: std::io::stdout(),
        }
    }

    fn write(&mut self, text: &str) {
        let mut lock = self.stdout.lock();
        let _ = lock.write_all(text.as_bytes()).and_then(|()| lock.flush());
    }

    fn line(&mut self, text: &str) {
        self.write(&format!("{text}\n"));
    }

    fn json(&mut self, value: &impl serde::Serialize) {
        let text = serde_json::to_string(value).unwrap_or_else(|e| format!("\"{e}\""));
        self.line(&text);
    }

    fn end_line(&mut self, open: &mut bool) {
        if *open {
            self.write("\n");
            *open = false;
        }
    }

    fn status(&mut self, state: TaskState, message: Option<&Message>, open: &mut bool) {
        self.end_line(open);
        let text = message.map(Message::text).unwrap_or_default();
        if text.is_empty() {
            self.line(&format!("{:>14}", state.as_str()));
        } else {
            self.line(&format!("{:>14} {text}", state.as_str()));
        }
    }

    /// Artifact text as it arrives: chunks of one artifact continue the same line.
    fn artifact(&mut self, artifact: &Artifact, last_chunk: Option<bool>, open: &mut bool) {
        let text: String = artifact.parts.iter().filter_map(Part::as_text).collect();
        if !*open {
            let name = artifact.name.as_deref().unwrap_or(&artifact.artifact_id);
            self.write(&format!("{:>14} ", format!("[{name}]")));
            *open = true;
        }
        self.write(&text);
        if text.ends_with('\n') {
            *open = false;
        } else if last_chunk != Some(false) {
            self.end_line(open);
        }
    }

    fn flush(&mut self) {
        let _ = self.stdout.lock().flush();
    }
}
