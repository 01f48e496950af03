//! The `agentyard` command-line program.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use agentyard::serve::Server;
use clap::{Parser, Subcommand, ValueEnum};
use tracing_subscriber::EnvFilter;

/// agentyard: an actor-based multi-agent runtime speaking A2A 0.3.0.
#[derive(Debug, Parser)]
#[command(name = "agentyard", version, about)]
struct Cli {
    /// Log lines as human-readable text or as JSON objects. The level comes from
    /// `RUST_LOG` (default `info`).
    #[arg(long, value_enum, default_value_t = LogFormat::Text, global = true)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
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
        #[arg(long)]
        config: Option<PathBuf>,
        /// The address to listen on, over the config file's `server.bind`
        /// (`127.0.0.1:0` picks a free port).
        #[arg(long)]
        bind: Option<SocketAddr>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs(cli.log_format);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return fail(&error),
    };
    match cli.command {
        Command::Serve { config, bind } => runtime.block_on(serve(config, bind)),
    }
}

async fn serve(config: Option<PathBuf>, bind: Option<SocketAddr>) -> ExitCode {
    let server = match Server::start(config.as_deref(), bind).await {
        Ok(server) => server,
        Err(error) => return fail(&error),
    };
    println!(
        "agentyard is serving A2A 0.3.0 on http://{}",
        server.local_addr()
    );
    for (name, url) in server.card_urls() {
        println!("  {name:<20} {url}");
    }
    println!("press Ctrl-C to stop");
    shutdown_signal().await;
    tracing::info!("shutting down");
    server.stop().await;
    ExitCode::SUCCESS
}

/// Ctrl-C, or SIGTERM where there is one (how service managers stop a process).
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

fn init_logs(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

/// Prints an error with its causes and returns a failing exit code.
fn fail(error: &dyn std::error::Error) -> ExitCode {
    let mut text = format!("agentyard: {error}");
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    eprintln!("{text}");
    ExitCode::FAILURE
}
