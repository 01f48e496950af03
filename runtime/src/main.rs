//! The `agentyard` command-line program.

// glibc's malloc serialized the tokio workers on its arena locks; jemalloc's thread
// caches do not, and take a block freed on another thread without sending it back
// (docs/benchmarks.md, "The allocator").
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use agentyard::config::{Config, parse_bind};
use agentyard::serve::Server;
use agentyard::telemetry::{self, Logs, Telemetry, TelemetryError, TracingConfig};
use clap::{Parser, Subcommand, ValueEnum};
use tracing_subscriber::EnvFilter;

mod cli;

/// agentyard: an actor-based multi-agent runtime speaking A2A 0.3.0.
#[derive(Debug, Parser)]
#[command(
    name = "agentyard",
    version,
    about,
    after_help = "Environment:\n  RUST_LOG  which log lines to write, e.g. `info` (the default), `debug`, \
                  `agentyard=debug,info`\n  NO_COLOR  set to anything non-empty: no colour in \
                  log lines (they have none anyway when stderr is not a terminal)\n  \
                  OTEL_EXPORTER_OTLP_ENDPOINT  `serve`: export spans to this OTLP/HTTP \
                  collector (also `[tracing] otlp_endpoint` in the config file)"
)]
struct Cli {
    /// Log lines as human-readable text or as JSON objects, start-up errors included;
    /// JSON lines inside a span carry its `trace_id` and `span_id` when traces are
    /// exported. The level comes from `RUST_LOG` (default `info`).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, global = true)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the built-in agents (echo, countdown, ask, planner) over A2A 0.3.0.
    Serve {
        /// A TOML config file; without one the embedded defaults are used
        /// (127.0.0.1:8080, every built-in agent exposed, no authentication).
        /// `agentyard.example.toml` lists every key.
        #[arg(long)]
        config: Option<PathBuf>,
        /// The address to listen on, HOST:PORT (`127.0.0.1:8080`, `[::1]:8080`,
        /// `localhost:8080`), over the config file's `server.bind`; port 0 picks a
        /// free port.
        #[arg(long, value_parser = parse_bind)]
        bind: Option<SocketAddr>,
        /// The data directory of the embedded task store, over the config file's
        /// `store.path` (default `./agentyard-data`, created on first start).
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
    /// Run one workflow file on the built-in agents, showing its nodes as they go,
    /// then print its output artifacts (exit code 1 when the run fails).
    Run(cli::run::RunArgs),
    /// The A2A client commands: card, send, stream, get, cancel, resubscribe.
    #[command(flatten)]
    Client(cli::ClientCommand),
}

/// The exit code of a program stopped by a second Ctrl-C or SIGTERM (128 + SIGINT, as
/// shells report an interrupted program).
const INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error),
    };
    // Only `serve` exports traces: its config file's `[tracing]` (or the OTLP
    // environment variables). A file that cannot be read is reported by `serve` itself.
    let tracing = match &cli.command {
        Command::Serve { config, .. } => Some(match config {
            Some(path) => Config::from_path(path)
                .map(|config| config.tracing)
                .unwrap_or_default(),
            None => TracingConfig::default(),
        }),
        _ => None,
    };
    let telemetry = match init_logs(cli.log_format, tracing.as_ref()) {
        Ok(telemetry) => telemetry,
        Err(error) => {
            let _logs_only = init_logs(cli.log_format, None);
            return fail(cli.log_format, &error);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return fail(cli.log_format, &error),
    };
    let code = match cli.command {
        Command::Serve {
            config,
            bind,
            data_dir,
        } => runtime.block_on(serve(cli.log_format, config, bind, data_dir)),
        Command::Client(command) => runtime.block_on(cli::run(command)),
        Command::Run(args) => runtime.block_on(cli::run::run(args)),
    };
    // The spans still batched go out before the program ends.
    drop(telemetry);
    code
}

async fn serve(
    format: LogFormat,
    config: Option<PathBuf>,
    bind: Option<SocketAddr>,
    data_dir: Option<PathBuf>,
) -> ExitCode {
    let mut signals = StopSignals::listen();
    let server = match Server::start_in(config.as_deref(), bind, data_dir.as_deref()).await {
        Ok(server) => server,
        Err(error) => return fail(format, &error),
    };
    print_banner(&server);

    signals.next().await;
    let load = server.load();
    let grace = server.shutdown_grace();
    tracing::info!(
        running_tasks = load.running_tasks,
        open_streams = load.open_streams,
        grace_secs = grace.as_secs(),
        "shutting down: waiting up to {}s for {} running or queued task(s) and {} open stream(s); \
         tasks still running then end `failed`; press Ctrl-C again to exit at once",
        grace.as_secs(),
        load.running_tasks,
        load.open_streams,
    );
    tokio::select! {
        () = server.stop() => {
            tracing::info!("stopped");
            ExitCode::SUCCESS
        }
        () = signals.next() => {
            tracing::warn!("second stop signal: exiting at once; running tasks are cut off");
            // Not a return: the runtime's worker threads may be inside agent code, and
            // dropping the runtime would wait for them.
            std::process::exit(i32::from(INTERRUPTED));
        }
    }
}

/// Prints where the server listens and what it serves. A closed or broken stdout
/// (`agentyard serve | head -1`) must not stop a running server, so a failed write is
/// ignored instead of panicking as `println!` would.
fn print_banner(server: &Server) {
    use std::fmt::Write as _;
    use std::io::Write as _;

    let mut text = String::new();
    let _ = writeln!(
        text,
        "agentyard is serving A2A 1.0 and 0.3.0 on http://{}",
        server.local_addr()
    );
    for (name, url) in server.card_urls() {
        let _ = writeln!(text, "  {name:<20} {url}");
    }
    let config_file = server.config_file().map_or_else(
        || String::from("none (embedded defaults; see agentyard.example.toml)"),
        |path| path.display().to_string(),
    );
    if let Some(addr) = server.grpc_addr() {
        let _ = writeln!(
            text,
            "grpc:   {addr} (lf.a2a.v1.A2AService and a2a.v1.A2AService)"
        );
    }
    if let Some(url) = server.console_url() {
        let _ = writeln!(text, "console: {url}");
    }
    let _ = writeln!(text, "config: {config_file}");
    let _ = writeln!(text, "auth:   {}", server.auth_summary());
    let _ = writeln!(text, "data:   {}", server.storage());
    let _ = writeln!(text, "watch:  {}", server.observability_summary());
    let _ = writeln!(text, "press Ctrl-C to stop");
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Ctrl-C, or SIGTERM where there is one (how service managers stop a process).
///
/// Listening starts when this is made, before the banner is printed: a signal that
/// arrives once the program has said it serves is always handled, never left to the
/// default action, which kills the process without a word.
struct StopSignals {
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let listen = |kind: SignalKind, name: &str| match signal(kind) {
                Ok(signal) => Some(signal),
                Err(error) => {
                    tracing::error!(%error, "cannot listen for {name}");
                    None
                }
            };
            Self {
                interrupt: listen(SignalKind::interrupt(), "Ctrl-C"),
                terminate: listen(SignalKind::terminate(), "SIGTERM"),
            }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// The next Ctrl-C or SIGTERM.
    async fn next(&mut self) {
        #[cfg(unix)]
        {
            async fn recv(signal: Option<&mut tokio::signal::unix::Signal>) {
                match signal {
                    Some(signal) => {
                        if signal.recv().await.is_none() {
                            std::future::pending::<()>().await;
                        }
                    }
                    None => std::future::pending::<()>().await,
                }
            }
            tokio::select! {
                () = recv(self.interrupt.as_mut()) => {}
                () = recv(self.terminate.as_mut()) => {}
            }
        }
        #[cfg(not(unix))]
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    }
}

/// The level when `RUST_LOG` is unset or unusable.
const DEFAULT_LOG: &str = "info";

/// Log targets a `RUST_LOG` directive may name without a warning: this program's own
/// crates and the libraries under it that log.
const KNOWN_TARGETS: &[&str] = &[
    "agentyard",
    "axum",
    "h2",
    "hyper",
    "hyper_util",
    "ractor",
    "reqwest",
    "tokio",
    "tower",
    "tower_http",
];

/// Logs to stderr, in the chosen format, with colour only for a person at a terminal:
/// never when stderr is piped or redirected, and never when `NO_COLOR` is set
/// (<https://no-color.org>); and exports spans when `tracing` says so.
fn init_logs(
    format: LogFormat,
    tracing: Option<&TracingConfig>,
) -> Result<Telemetry, TelemetryError> {
    let env = std::env::var("RUST_LOG").ok();
    let (filter, warning) = log_filter(env.as_deref());
    let color = std::io::stderr().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(color);
    if let Some(warning) = warning {
        // Written past the filter: a `RUST_LOG` naming only an unknown target would
        // silence the very warning about it.
        let warn = || tracing::warn!(rust_log = env.as_deref().unwrap_or_default(), "{warning}");
        match format {
            LogFormat::Text => tracing::subscriber::with_default(builder.finish(), warn),
            LogFormat::Json => tracing::subscriber::with_default(builder.json().finish(), warn),
        }
    }
    let format = match format {
        LogFormat::Text => telemetry::LogFormat::Text,
        LogFormat::Json => telemetry::LogFormat::Json,
    };
    telemetry::install(tracing, Some(Logs::new(format, filter).ansi(color)))
}

/// The filter `RUST_LOG` asks for, and a warning when it is malformed (the default is
/// used instead) or names a target nothing here logs under (which would silence the
/// logs without a word).
fn log_filter(env: Option<&str>) -> (EnvFilter, Option<String>) {
    let Some(text) = env.map(str::trim).filter(|text| !text.is_empty()) else {
        return (EnvFilter::new(DEFAULT_LOG), None);
    };
    let filter = match EnvFilter::builder().parse(text) {
        Ok(filter) => filter,
        Err(error) => {
            return (
                EnvFilter::new(DEFAULT_LOG),
                Some(format!(
                    "RUST_LOG is malformed ({error}); logging at `{DEFAULT_LOG}`. \
                     Expected a level (error, warn, info, debug, trace, off) or \
                     TARGET=LEVEL pairs, e.g. `agentyard=debug,info`"
                )),
            );
        }
    };
    let unknown: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|directive| !directive.is_empty())
        .filter_map(|directive| {
            let target = directive
                .split(['=', '['])
                .next()
                .unwrap_or_default()
                .trim();
            let is_level = matches!(
                target.to_ascii_lowercase().as_str(),
                "error" | "warn" | "info" | "debug" | "trace" | "off"
            );
            let known = target.is_empty()
                || is_level
                || KNOWN_TARGETS.iter().any(|known| {
                    target == *known
                        || target
                            .strip_prefix(known)
                            .is_some_and(|rest| rest.starts_with("::") || rest.starts_with('_'))
                });
            (!known).then_some(target)
        })
        .collect();
    if unknown.is_empty() {
        return (filter, None);
    }
    (
        filter,
        Some(format!(
            "RUST_LOG names {} that nothing here logs under: {}; a directive without \
             `=LEVEL` is a target, not a level. Levels: error, warn, info, debug, trace, off",
            if unknown.len() == 1 {
                "a target"
            } else {
                "targets"
            },
            unknown.join(", ")
        )),
    )
}

/// A command line clap refused: printed by clap as usual, or as a JSON log line when
/// the command line asked for JSON logs (clap could not tell us, so it is looked for).
fn usage_error(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let asked_json = {
        let args: Vec<String> = std::env::args().collect();
        args.iter().any(|arg| arg == "--log-format=json")
            || args
                .windows(2)
                .any(|pair| pair[0] == "--log-format" && pair[1] == "json")
    };
    let informational = matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if !asked_json || informational {
        error.exit();
    }
    let _logs = init_logs(LogFormat::Json, None);
    let text = error.render().to_string();
    tracing::error!(error = %text.trim(), "agentyard could not start");
    ExitCode::from(2)
}

/// Reports an error with its causes and returns a failing exit code: as one
/// `agentyard: …` line for a person, or as a JSON log line under `--log-format json`.
fn fail(format: LogFormat, error: &dyn std::error::Error) -> ExitCode {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    match format {
        LogFormat::Json => tracing::error!(error = %text, "agentyard could not start"),
        LogFormat::Text => eprintln!("agentyard: {text}"),
    }
    ExitCode::FAILURE
}
