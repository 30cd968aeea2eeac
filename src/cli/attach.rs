//! `herd attach`: finds the background herd of a tasks file (its rendezvous) and attaches this
//! terminal to it (`run::background::client`); says how it ended.

use std::io::IsTerminal;

use color_eyre::eyre::Result;

use super::args::AttachArgs;
use crate::run::background::client::{self, Ending};
use crate::run::rendezvous::{Registration, Rendezvous, RunMode};

pub(super) fn attach(args: &AttachArgs) -> Result<i32> {
    let socket = match (&args.socket, &args.tasks) {
        (Some(socket), _) => socket.clone(),
        (None, Some(tasks)) => {
            let rendezvous = match Rendezvous::for_tasks(tasks) {
                Ok(r) => r,
                Err(error) => {
                    eprintln!("herd: {}: {error}", tasks.display());
                    return Ok(1);
                }
            };
            match Registration::read_live(&rendezvous.registration) {
                Some(running) if running.mode != RunMode::Background => {
                    eprintln!(
                        "herd: {} runs with its dashboard elsewhere or headless (pid {}, {:?}); \
                         only a background run (herd run --detach) can be attached",
                        tasks.display(),
                        running.pid,
                        running.mode
                    );
                    return Ok(1);
                }
                _ => rendezvous.attach,
            }
        }
        (None, None) => {
            eprintln!("herd: attach needs --tasks FILE");
            return Ok(2);
        }
    };
    // Said first: no herd to attach to matters more than where this runs.
    if let Err(error) = std::os::unix::net::UnixStream::connect(&socket) {
        eprintln!(
            "herd: no background herd answers on {}: {error}",
            socket.display()
        );
        return Ok(1);
    }
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!("herd: attach needs a terminal");
        return Ok(1);
    }
    let hint = args
        .tasks
        .as_ref()
        .map(|t| format!(" (herd attach --tasks {} to come back)", t.display()))
        .unwrap_or_default();
    match client::attach(&socket) {
        Ok(Ending::DetachKey) => println!("herd: detached; the batch runs on{hint}"),
        Ok(Ending::Said(text)) if text.starts_with("herd: detached") => println!("{text}{hint}"),
        Ok(Ending::Said(text)) => println!("{text}"),
        Ok(Ending::TerminalClosed) => {}
        Ok(Ending::Lost) => println!("herd: the background herd closed the connection"),
        Err(error) => {
            eprintln!("herd: {error}");
            return Ok(1);
        }
    }
    Ok(0)
}
