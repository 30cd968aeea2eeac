//! The command line: its definitions (`args`) and one module per command, above everything
//! else. `dispatch` hands each command to its module; the modules load inputs, call into
//! `serve` (a batch served to its end: engine, control socket, dashboard or headless), `run`
//! (the engine and store), `ui` (the dashboard), `replay` and `sim`, and map outcomes to
//! exit codes. Nothing below `cli` imports it.

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

pub use args::*;
pub use inputs::{EXIT_CANNOT_GO_ON, EXIT_INVALID};

use color_eyre::eyre::Result;

/// Runs the command; its exit code.
pub fn dispatch(cli: Cli) -> Result<i32> {
    if prints_only(&cli.command) {
        closed_pipe::end_quietly_when_stdout_closes();
    }
    match cli.command {
        Command::Sim(args) => crate::sim::run(&args),
        Command::AcpClient(args) => Ok(crate::run::acp::run(crate::run::acp::ClientArgs {
            command: args.command,
        })),
        Command::Hook => Ok(crate::run::hook_server::run_client()),
        Command::Hold(args) => Ok(background::hold(&args)),
        Command::AppServerPair(args) => Ok(crate::run::app_server::run_pair(
            &args.listen,
            &args.command,
        )),
        other => {
            color_eyre::install()?;
            match other {
                Command::Run(args) if args.detach => background::detach(&args),
                Command::Run(args) => run::run(&args),
                Command::Attach(args) => attach::attach(&args),
                Command::Init(args) => init::init(&args),
                Command::Validate(args) => validate::validate(&args),
                Command::Status(args) => status::status(&args),
                Command::Ctl(args) => ctl::ctl(&args),
                Command::Stop(args) => ctl::stop(&args),
                Command::Profiles(args) => profiles::profiles(&args),
                Command::Replay(args) => replay::replay(&args),
                Command::Explain(args) => explain::explain(&args),
                Command::Diff(args) => diff::diff(&args),
                Command::Message(args) => message::message(&args),
                Command::Mcp(args) => mcp::mcp(&args),
                Command::Policy(args) => policy::policy(&args),
                Command::Hosts(args) => hosts::hosts(&args),
                Command::Acp(args) => acp::acp(&args),
                Command::Sim(_)
                | Command::AcpClient(_)
                | Command::Hook
                | Command::Hold(_)
                | Command::AppServerPair(_) => Ok(0),
            }
        }
    }
}

/// Commands that start no agent and write into no child's pipe: a closed stdout may end them
/// (`closed_pipe`). `hosts check` restores it itself once its probes are done.
fn prints_only(command: &Command) -> bool {
    match command {
        Command::Validate(_)
        | Command::Init(_)
        | Command::Status(_)
        | Command::Ctl(_)
        | Command::Stop(_)
        | Command::Profiles(_)
        | Command::Replay(_)
        | Command::Explain(_)
        | Command::Diff(_)
        | Command::Message(_)
        | Command::Policy(_)
        | Command::Sim(_) => true,
        Command::Run(_)
        | Command::Mcp(_)
        | Command::Attach(_)
        | Command::Hold(_)
        | Command::Hosts(_)
        | Command::Acp(_)
        | Command::AcpClient(_)
        | Command::Hook
        | Command::AppServerPair(_) => false,
    }
}
