//! The `agentyard` command-line program.

use clap::Parser;

/// agentyard: an actor-based multi-agent runtime speaking A2A 0.3.0.
#[derive(Debug, Parser)]
#[command(name = "agentyard", version, about)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
}
