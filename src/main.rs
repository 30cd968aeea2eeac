//! herd: a terminal dashboard for running fleets of CLI coding agents.

mod cli;
mod core;
mod sim;

use clap::Parser;

fn main() -> color_eyre::Result<()> {
    color_eyre::install()?;
    let cli = cli::Cli::parse();
    let code = match cli.command {
        cli::Command::Sim(args) => sim::run(&args)?,
        other => {
            eprintln!("herd: {other:?} is not wired yet");
            2
        }
    };
    std::process::exit(code);
}
