//! An attempt's files on its host, through the launcher: runs the scripts of
//! `core::remote_files` (prepare before the agent starts, read while it runs, end once it ended)
//! without a terminal and with a time limit each, so a host that hangs never holds herd: a run
//! that did not finish says why (the launcher's last message, or that it timed out).
//!
//! Blocking: called on worker threads only, never on the event loop.

use std::time::Duration;

use crate::core::hosts::Host;
use crate::core::remote_files::{
    self, EndBack, Prepared, ReadBack, RemoteEnd, RemotePrepare, RemoteRead,
};
use crate::run::remote::{PlainBytes, run_plain_bytes};

/// Longest a prepare may take (`git worktree add` of a large repository included).
pub const PREPARE_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest one read of a running attempt's files may take.
pub const READ_TIMEOUT: Duration = Duration::from_secs(15);
/// Longest the end may take (a transcript of up to 64 MiB copied back included).
pub const END_TIMEOUT: Duration = Duration::from_secs(120);

/// What preparing an attempt on its host came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrepareOutcome {
    /// Ready: where its files are, where it runs, `git status` there.
    Ready(Prepared),
    /// The task cannot run there as configured (not a repository for a worktree).
    Refused(String),
    /// The host could not be reached or did not finish: the host's trouble, not the task's.
    Unreachable(String),
}

pub fn prepare(host: &Host, p: &RemotePrepare<'_>) -> PrepareOutcome {
    let script = remote_files::prepare_script(p);
    match run_plain_bytes(host, &script, PREPARE_TIMEOUT) {
        Err(error) => {
            PrepareOutcome::Unreachable(format!("cannot run {}: {error}", host.program()))
        }
        Ok(run) => match remote_files::parse_prepare(&run.stdout) {
            ready @ Prepared::Ready { .. } => PrepareOutcome::Ready(ready),
            Prepared::Refused { problem } => PrepareOutcome::Refused(problem),
            Prepared::Unfinished => PrepareOutcome::Unreachable(why(&run)),
        },
    }
}

/// One read of a running attempt's signal file and log; `Err` says why the host did not answer.
pub fn read(host: &Host, r: &RemoteRead<'_>, timeout: Duration) -> Result<ReadBack, String> {
    let run = run_plain_bytes(host, &remote_files::read_script(r), timeout)
        .map_err(|e| format!("cannot run {}: {e}", host.program()))?;
    let back = remote_files::parse_read(&run.stdout);
    if back.complete {
        Ok(back)
    } else {
        Err(why(&run))
    }
}

/// The end of an attempt on its host; `Err` says why the host did not answer.
pub fn end(host: &Host, e: &RemoteEnd<'_>) -> Result<EndBack, String> {
    let run = run_plain_bytes(host, &remote_files::end_script(e), END_TIMEOUT)
        .map_err(|err| format!("cannot run {}: {err}", host.program()))?;
    let back = remote_files::parse_end(&run.stdout);
    if back.complete {
        Ok(back)
    } else {
        Err(why(&run))
    }
}

/// Why a script did not finish on `host`: its exit (or a time-out) and the launcher's last
/// message.
fn why(run: &PlainBytes) -> String {
    let said = run
        .stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("");
    let exit = match (run.timed_out, run.code) {
        (true, _) => "timed out".to_string(),
        (false, Some(code)) => format!("exit {code}"),
        (false, None) => "ended by a signal".to_string(),
    };
    if said.is_empty() {
        exit
    } else {
        format!("{exit}: {said}")
    }
}

#[cfg(test)]
#[path = "remote_files_tests.rs"]
mod tests;
