//! An attempt's files on its host: runs `core::remote::files`'s scripts without a terminal and
//! with a time limit each, so a hanging host never holds herd. Worker threads only.

use std::io::Read;
use std::process::Child;
use std::sync::mpsc;
use std::time::Duration;

use crate::core::remote;
use crate::core::remote::files::{RemoteEnd, RemotePrepare, RemoteRead};
use crate::core::remote::frames::{EndBack, FollowReader, Prepared, ReadBack};
use crate::core::remote::hosts::Host;
use crate::run::jobs;
use crate::run::remote::{PlainBytes, drain, run_plain_bytes, spawn_script};

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
    Unreachable(NoAnswer),
}

/// Why a host did not answer a script.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoAnswer {
    /// The launcher program could not be started here.
    #[error("cannot run {program}: {cause}")]
    Launcher { program: String, cause: String },
    /// It ran without finishing the script: how it ended and the launcher's last message.
    #[error("{}{}", ended, said.as_deref().map(|s| format!(": {s}")).unwrap_or_default())]
    Unfinished { ended: Ended, said: Option<String> },
}

/// How a launcher that did not finish its script ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Ended {
    #[error("timed out")]
    TimedOut,
    #[error("exit {0}")]
    Exit(i32),
    #[error("ended by a signal")]
    Signal,
}

impl NoAnswer {
    fn launcher(host: &Host, error: &std::io::Error) -> NoAnswer {
        NoAnswer::Launcher {
            program: host.program().to_string(),
            cause: error.to_string(),
        }
    }
}

pub fn prepare(host: &Host, p: &RemotePrepare<'_>) -> PrepareOutcome {
    let script = remote::files::prepare_script(p);
    match run_plain_bytes(host, &script, PREPARE_TIMEOUT) {
        Err(error) => PrepareOutcome::Unreachable(NoAnswer::launcher(host, &error)),
        Ok(run) => match remote::frames::parse_prepare(&run.stdout) {
            ready @ Prepared::Ready { .. } => PrepareOutcome::Ready(ready),
            Prepared::Refused { problem } => PrepareOutcome::Refused(problem),
            Prepared::Unfinished => PrepareOutcome::Unreachable(why(&run)),
        },
    }
}

/// One read of a running attempt's signal file and log; `Err` says why the host did not answer.
pub fn read(host: &Host, r: &RemoteRead<'_>, timeout: Duration) -> Result<ReadBack, NoAnswer> {
    let run = run_plain_bytes(host, &remote::files::read_script(r), timeout)
        .map_err(|e| NoAnswer::launcher(host, &e))?;
    let back = remote::frames::parse_read(&run.stdout);
    if back.complete {
        Ok(back)
    } else {
        Err(why(&run))
    }
}

/// What a [`Follower`] saw.
#[derive(Debug)]
pub enum FollowEvent {
    /// One round of reads.
    Round(ReadBack),
    /// The launcher ended (the connection went, the host is gone): why.
    Gone(String),
}

/// A long-lived read of a running attempt's files on its host: one launcher run reading every
/// interval. Ends with its process group when dropped.
pub struct Follower {
    child: Child,
    events: mpsc::Receiver<FollowEvent>,
}

impl Follower {
    pub fn start(host: &Host, r: &RemoteRead<'_>, every: Duration) -> std::io::Result<Follower> {
        let every_sec = u32::try_from(every.as_secs().max(1)).unwrap_or(u32::MAX);
        let script = remote::files::follow_script(r, every_sec);
        let mut child = spawn_script(host, &script)?;
        let stderr = child.stderr.take().map(|pipe| drain(pipe.take(64 * 1024)));
        let (send, events) = mpsc::channel();
        if let Some(mut stdout) = child.stdout.take() {
            let lost = send.clone();
            let following = jobs::spawn_thread("remote-follow", move || {
                let mut reader = FollowReader::default();
                let mut chunk = vec![0u8; 64 * 1024];
                loop {
                    match stdout.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            for round in reader.feed(&chunk[..n]) {
                                if send.send(FollowEvent::Round(round)).is_err() {
                                    return;
                                }
                            }
                        }
                    }
                }
                let said = stderr.and_then(jobs::Job::join).unwrap_or_default();
                let said = String::from_utf8_lossy(&said)
                    .lines()
                    .map(str::trim)
                    .rfind(|l| !l.is_empty())
                    .unwrap_or("the connection closed")
                    .to_string();
                let _ = send.send(FollowEvent::Gone(said));
            });
            if let Err(not) = following {
                let _ = lost.send(FollowEvent::Gone(not.to_string()));
            }
        }
        Ok(Follower { child, events })
    }

    /// What it saw since last asked, without waiting.
    pub fn seen(&self) -> Vec<FollowEvent> {
        self.events.try_iter().collect()
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        if let Some(group) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The end of an attempt on its host; `Err` says why the host did not answer.
pub fn end(host: &Host, e: &RemoteEnd<'_>) -> Result<EndBack, NoAnswer> {
    let run = run_plain_bytes(host, &remote::files::end_script(e), END_TIMEOUT)
        .map_err(|err| NoAnswer::launcher(host, &err))?;
    let back = remote::frames::parse_end(&run.stdout);
    if back.complete {
        Ok(back)
    } else {
        Err(why(&run))
    }
}

/// Why a script did not finish: how the launcher ended and its last message.
fn why(run: &PlainBytes) -> NoAnswer {
    let said = run
        .stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(str::to_string);
    let ended = match (run.timed_out, run.code) {
        (true, _) => Ended::TimedOut,
        (false, Some(code)) => Ended::Exit(code),
        (false, None) => Ended::Signal,
    };
    NoAnswer::Unfinished { ended, said }
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
