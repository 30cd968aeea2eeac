//! The command line: its definitions (`args`) and one module per command, which loads inputs,
//! calls into `serve`, `run`, `ui`, `replay` or `sim`, and maps outcomes to exit codes. Nothing
//! below `cli` imports it.

mod acp;
mod args;
mod attach;
mod background;
mod closed_pipe;
mod ctl;
mod diff;
pub mod explain;
pub mod hosts;
mod init;
pub mod inputs;
mod mcp;
mod message;
mod policy;
mod profiles;
mod profiles_view;
mod replay;
mod run;
mod status;
mod validate;
mod web;

pub use args::*;
pub use inputs::{EXIT_CANNOT_GO_ON, EXIT_INVALID};

use color_eyre::eyre::Result;

/// Runs the command; its exit code.
pub fn dispatch(cli: Cli) -> Result<i32> {
    if prints_only(&cli.command) {
        closed_pipe::end_quietly_when_stdout_closes();
    }
    match cli.command {
        HerdCommand::Sim(args) => crate::sim::run(&args),
        HerdCommand::AcpClient(args) => Ok(crate::run::acp::run(crate::run::acp::ClientArgs {
            command: args.command,
        })),
        HerdCommand::Hook => Ok(crate::run::hook_server::run_client()),
        HerdCommand::Hold(args) => Ok(background::hold(&args)),
        HerdCommand::AppServerPair(args) => Ok(crate::run::app_server::run_pair(
            &args.listen,
            &args.command,
        )),
        other => {
            color_eyre::install()?;
            match other {
                HerdCommand::Run(args) if args.detach => background::detach(&args),
                HerdCommand::Run(args) => run::run(&args),
                HerdCommand::Attach(args) => attach::attach(&args),
                HerdCommand::Init(args) => init::init(&args),
                HerdCommand::Validate(args) => validate::validate(&args),
                HerdCommand::Status(args) => status::status(&args),
                HerdCommand::Ctl(args) => ctl::ctl(&args),
                HerdCommand::Stop(args) => ctl::stop(&args),
                HerdCommand::Web(args) => web::web(&args),
                HerdCommand::Profiles(args) => profiles::profiles(&args),
                HerdCommand::Replay(args) => replay::replay(&args),
                HerdCommand::Explain(args) => explain::explain(&args),
                HerdCommand::Diff(args) => diff::diff(&args),
                HerdCommand::Message(args) => message::message(&args),
                HerdCommand::Mcp(args) => mcp::mcp(&args),
                HerdCommand::Policy(args) => policy::policy(&args),
                HerdCommand::Hosts(args) => hosts::hosts(&args),
                HerdCommand::Acp(args) => acp::acp(&args),
                HerdCommand::Sim(_)
                | HerdCommand::AcpClient(_)
                | HerdCommand::Hook
                | HerdCommand::Hold(_)
                | HerdCommand::AppServerPair(_) => Ok(0),
            }
        }
    }
}

/// Commands that start no agent and write into no child's pipe: a closed stdout may end them.
fn prints_only(command: &HerdCommand) -> bool {
    match command {
        HerdCommand::Validate(_)
        | HerdCommand::Init(_)
        | HerdCommand::Status(_)
        | HerdCommand::Ctl(_)
        | HerdCommand::Stop(_)
        | HerdCommand::Web(_)
        | HerdCommand::Profiles(_)
        | HerdCommand::Replay(_)
        | HerdCommand::Explain(_)
        | HerdCommand::Diff(_)
        | HerdCommand::Message(_)
        | HerdCommand::Policy(_)
        | HerdCommand::Sim(_) => true,
        HerdCommand::Run(_)
        | HerdCommand::Mcp(_)
        | HerdCommand::Attach(_)
        | HerdCommand::Hold(_)
        | HerdCommand::Hosts(_)
        | HerdCommand::Acp(_)
        | HerdCommand::AcpClient(_)
        | HerdCommand::Hook
        | HerdCommand::AppServerPair(_) => false,
    }
}
