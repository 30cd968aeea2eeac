//! The files of an attempt that runs on a host: the shell code that prepares it there, reads its
//! signal file and log while it runs, and gathers its end. Everything comes back in frames
//! (`core::remote::frames`) that nothing else the host prints can be confused with, each body
//! copied into a private folder first so its length holds; without the last frame, `end`, the
//! host did not finish. Pure.

use super::template::{Fill, render};
use crate::core::guard::shell_words::quote;

/// Where an attempt's files live on the host, under its `$HOME`.
pub fn run_dir_under_home(file_tag: &str, task_id: &str) -> String {
    format!(".herd/runs/{file_tag}/{task_id}")
}

/// Every script starts with this: a private temporary folder, `frame KIND FILE [NUMBER]` and
/// `say KIND TEXT...` (their own variables start with `_`: a function shares the script's).
const PREAMBLE: &str = include_str!("scripts/preamble.sh");
/// The task's folder, the attempt's folder made, before an attempt.
const PREPARE_SETUP: &str = include_str!("scripts/prepare_setup.sh");
/// The task's folder, the attempt's folder and its stamp, once an attempt ended.
const END_SETUP: &str = include_str!("scripts/end_setup.sh");
/// The end of a round of [`follow_script`].
const FOLLOW_TICK: &str = include_str!("scripts/follow_tick.sh");
/// The task's folder as a worktree of its repository ([`prepare_script`]).
const PREPARE_WORKTREE: &str = include_str!("scripts/prepare_worktree.sh");
const GIT_STATUS: &str = include_str!("scripts/git_status.sh");
const ROLLOUT_SEARCH: &str = include_str!("scripts/rollout_search.sh");
const READ_SIGNAL: &str = include_str!("scripts/read_signal.sh");
const READ_LOG: &str = include_str!("scripts/read_log.sh");
const FOLLOW_SIGNAL: &str = include_str!("scripts/follow_signal.sh");
const FOLLOW_LOG: &str = include_str!("scripts/follow_log.sh");
const TRANSCRIPT_SETUP: &str = include_str!("scripts/transcript_setup.sh");
const TRANSCRIPT_BY_ID: &str = include_str!("scripts/transcript_by_id.sh");
const TRANSCRIPT_NEWEST: &str = include_str!("scripts/transcript_newest.sh");
const TRANSCRIPT_SEND: &str = include_str!("scripts/transcript_send.sh");
const FINISH_WORKTREE: &str = include_str!("scripts/finish_worktree.sh");
const FETCH_FILE: &str = include_str!("scripts/fetch_file.sh");

/// What to prepare on the host before an attempt's agent starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotePrepare<'a> {
    /// The task's folder on the host.
    pub cwd: &'a str,
    /// The attempt's folder under `$HOME` ([`run_dir_under_home`]).
    pub run_dir: &'a str,
    /// File names in that folder cleared first (a signal file, a log of an earlier run).
    pub clear: &'a [String],
    /// The stamp file (in that folder) whose time says when the attempt started.
    pub stamp: &'a str,
    /// `Some(task_id)`: the attempt runs in the task's worktree, made if it is not there yet.
    pub worktree: Option<&'a str>,
    pub host: &'a str,
}

/// Makes the attempt's folder and worktree, clears its files, stamps the start, and prints
/// frames `run-dir`, `cwd`, `git-status`, `worktree-error`, `end`.
pub fn prepare_script(p: &RemotePrepare<'_>) -> String {
    let mut s = String::from(PREAMBLE);
    s.push_str(&render(
        PREPARE_SETUP,
        &[
            ("cwd", Fill::quoted(p.cwd)),
            ("run_dir", Fill::quoted(p.run_dir)),
        ],
    ));
    for name in p.clear {
        s.push_str(&format!("rm -f \"$run\"/{}\n", quote(name)));
    }
    s.push_str(&format!(": > \"$run\"/{}\n", quote(p.stamp)));
    s.push_str("say run-dir \"$run\"\n");
    if let Some(task_id) = p.worktree {
        s.push_str(&render(
            PREPARE_WORKTREE,
            &[
                ("shown", Fill::message(p.cwd)),
                ("host", Fill::message(p.host)),
                ("id", Fill::quoted(task_id)),
                ("branch", Fill::quoted(&format!("herd/{task_id}"))),
            ],
        ));
    }
    s.push_str("say cwd \"$cwd\"\n");
    s.push_str(GIT_STATUS);
    s.push_str("say end ok\n");
    s
}

/// What one read of a running attempt's files looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRead<'a> {
    /// The signal file (absolute, on the host).
    pub signal: Option<&'a str>,
    /// The agent's log (absolute, on the host) and how much of it was read already.
    pub log: Option<(&'a str, u64)>,
    /// A larger signal file is not sent, only its size.
    pub signal_max: u64,
    /// The most of the log sent in one read.
    pub log_max: u64,
    /// Without a known log: the Codex rollouts to look for.
    pub rollouts: Option<RolloutSearch<'a>>,
}

/// Where a Codex rollout is looked for on the host: `<home>/sessions/**/rollout-*.jsonl` since
/// the attempt's stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RolloutSearch<'a> {
    /// `CODEX_HOME` of the attempt, when it set one (else the host's, else `~/.codex`).
    pub codex_home: Option<&'a str>,
    /// The attempt's stamp file (absolute).
    pub stamp: &'a str,
    /// The task's folder, also sent back resolved (`cwd-real`): Codex names the resolved one.
    pub cwd: &'a str,
}

/// The most of a rollout's first line (`session_meta`) sent to learn its folder.
const ROLLOUT_META_BYTES: u64 = 64 * 1024;

/// Prints the resolved folder (`cwd-real`) and a `rollout` frame (path, first line) per
/// candidate.
fn rollout_search(search: &RolloutSearch<'_>) -> String {
    let home = match search.codex_home {
        Some(home) => Fill::quoted(home),
        None => Fill::code("\"${CODEX_HOME:-${HOME:-/tmp}/.codex}\""),
    };
    render(
        ROLLOUT_SEARCH,
        &[
            ("cwd", Fill::quoted(search.cwd)),
            ("home", home),
            ("stamp", Fill::quoted(search.stamp)),
            ("meta_bytes", Fill::number(ROLLOUT_META_BYTES)),
        ],
    )
}

/// Prints the signal file (`signal`, or `signal-large`) and the log's bytes from the offset
/// (`log`, from 0 again when the file was replaced by a shorter one), then `end`.
pub fn read_script(r: &RemoteRead<'_>) -> String {
    let mut s = String::from(PREAMBLE);
    if let Some(signal) = r.signal {
        s.push_str(&render(
            READ_SIGNAL,
            &[
                ("path", Fill::quoted(signal)),
                ("max", Fill::number(r.signal_max)),
            ],
        ));
    }
    if let Some((log, offset)) = r.log {
        s.push_str(&render(
            READ_LOG,
            &[
                ("path", Fill::quoted(log)),
                ("offset", Fill::number(offset)),
                ("max", Fill::number(r.log_max)),
            ],
        ));
    }
    if let (None, Some(search)) = (r.log, &r.rollouts) {
        s.push_str(&rollout_search(search));
    }
    s.push_str("say end ok\n");
    s
}

/// Like [`read_script`] every `every_sec` seconds on one run of the launcher, each round closed
/// by a `tick` frame (which ends the script once nobody reads it).
pub fn follow_script(r: &RemoteRead<'_>, every_sec: u32) -> String {
    let mut s = String::from(PREAMBLE);
    s.push_str(": > \"$t/prev\"\n");
    if let Some((_, offset)) = r.log {
        s.push_str(&format!("off={offset}\n"));
    }
    s.push_str("while :; do\n");
    if let Some(signal) = r.signal {
        s.push_str(&render(
            FOLLOW_SIGNAL,
            &[
                ("path", Fill::quoted(signal)),
                ("max", Fill::number(r.signal_max)),
            ],
        ));
    }
    if let Some((log, _)) = r.log {
        s.push_str(&render(
            FOLLOW_LOG,
            &[
                ("path", Fill::quoted(log)),
                ("max", Fill::number(r.log_max)),
            ],
        ));
    }
    if let (None, Some(search)) = (r.log, &r.rollouts) {
        s.push_str(&rollout_search(search));
    }
    s.push_str(&render(
        FOLLOW_TICK,
        &[("every_sec", Fill::number(every_sec.into()))],
    ));
    s
}

/// Where a Claude transcript is looked for on the host, as `run::transcripts::find` does here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTranscript<'a> {
    /// `CLAUDE_CONFIG_DIR` of the attempt, when it set one.
    pub config_dir: Option<&'a str>,
    /// The project folder's name for the task's folder as given.
    pub project: String,
    /// The session id, when known (a plain name: letters, digits, `-`, `_`).
    pub session: Option<&'a str>,
    /// The most sent: the transcript's last bytes.
    pub max_bytes: u64,
}

/// What to do on the host once an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteEnd<'a> {
    /// The folder the agent ran in.
    pub cwd: &'a str,
    /// `git status` of the folder after a failure.
    pub git_status: bool,
    pub transcript: Option<RemoteTranscript<'a>>,
    /// Remove the worktree (`cwd`) when it is clean (the task completed).
    pub finish_worktree: bool,
    /// The attempt's folder under `$HOME`, and the files in it to remove (copied back already).
    pub run_dir: &'a str,
    pub remove: &'a [String],
    /// Files of the attempt's folder sent back (their last `fetch_max` bytes), then removed.
    pub fetch: &'a [String],
    pub fetch_max: u64,
    /// The stamp file (in the attempt's folder) that says when the attempt started.
    pub stamp: &'a str,
}

/// Prints `git-status`, the transcript, the worktree's fate, the fetched files, then `end`.
pub fn end_script(e: &RemoteEnd<'_>) -> String {
    let mut s = String::from(PREAMBLE);
    s.push_str(&render(
        END_SETUP,
        &[
            ("cwd", Fill::quoted(e.cwd)),
            ("run_dir", Fill::quoted(e.run_dir)),
            ("stamp", Fill::quoted(e.stamp)),
        ],
    ));
    if e.git_status {
        s.push_str(GIT_STATUS);
    }
    if let Some(tr) = &e.transcript {
        let root = match tr.config_dir {
            Some(dir) => Fill::quoted(dir),
            None => Fill::code("\"${CLAUDE_CONFIG_DIR:-${HOME:-/tmp}/.claude}\""),
        };
        s.push_str(&render(
            TRANSCRIPT_SETUP,
            &[("root", root), ("project", Fill::quoted(&tr.project))],
        ));
        match tr.session.filter(|id| is_plain_name(id)) {
            Some(id) => s.push_str(&render(TRANSCRIPT_BY_ID, &[("id", Fill::quoted(id))])),
            None => s.push_str(TRANSCRIPT_NEWEST),
        }
        s.push_str(&render(
            TRANSCRIPT_SEND,
            &[("max", Fill::number(tr.max_bytes))],
        ));
    }
    if e.finish_worktree {
        s.push_str(FINISH_WORKTREE);
    }
    for name in e.fetch {
        s.push_str(&render(
            FETCH_FILE,
            &[
                ("name", Fill::quoted(name)),
                ("max", Fill::number(e.fetch_max)),
            ],
        ));
    }
    let removed = e.remove.iter().chain(e.fetch).map(String::as_str);
    for name in removed.chain([e.stamp]) {
        s.push_str(&format!("rm -f \"$run\"/{}\n", quote(name)));
    }
    // The task's folder goes once empty (its parent may be another task's to fill now).
    s.push_str("rmdir \"$run\" 2>/dev/null\n");
    s.push_str("say end ok\n");
    s
}

fn is_plain_name(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
