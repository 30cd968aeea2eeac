//! What an ended attempt needs from git and the disk, gathered on a worker thread so the event
//! loop never waits for it: `git status` for a failure's changed files (and its `errors.json`),
//! a Claude session's transcript, and the removal of a completed task's clean worktree. For an
//! attempt on a host all of it is done there, through the launcher, in one run with a time
//! limit (the transcript is copied into the recordings; the attempt's files there are removed).
//! The attempt's files in `runs/` (the ones its agent wrote too) are made private. The worker
//! posts an `EngineInbox::Gathered`; the attempt concludes on it. It decides nothing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::SystemTime;

use super::gathered::Gathered;
use super::inbox::EngineInbox;
use crate::core::remote::files::{RemoteEnd, RemoteTranscript};
use crate::core::remote::frames::WorktreeEnd;
use crate::core::remote::hosts::Host;
use crate::run::changes::attempt::{ChangesAtEnd, ChangesFound};
use crate::run::failure_report::{self, GitSnapshot};
use crate::run::jobs::{self, Outbox};
use crate::run::{outcome, transcripts, worktree};

/// What a failed attempt's summary needs.
pub(super) struct FailureJob {
    /// The last lines the agent showed (or said), its own error first.
    pub(super) tail: Vec<String>,
    pub(super) before: GitSnapshot,
    pub(super) cwd: PathBuf,
    pub(super) errors_path: PathBuf,
}

/// Where a Claude session's transcript is looked for.
pub(super) struct TranscriptJob {
    pub(super) env: BTreeMap<String, String>,
    pub(super) cwd: PathBuf,
    pub(super) session: Option<String>,
    pub(super) since: SystemTime,
    /// The tasks file's folder: the path is written relative to it where below it.
    pub(super) base_dir: PathBuf,
}

/// The blocking work of one attempt's end.
#[derive(Default)]
pub(super) struct GatherJob {
    pub(super) failure: Option<FailureJob>,
    pub(super) transcript: Option<TranscriptJob>,
    /// The worktree to remove when it is clean (the task completed).
    pub(super) finish_worktree: Option<PathBuf>,
    /// The attempt ran on a host: all of the above is done there.
    pub(super) remote: Option<RemoteEndJob>,
    /// The attempt's recordings folder and number: its files, the agent's own included, are
    /// made private (`runs_dir::tighten_attempt`).
    pub(super) recordings: Option<(PathBuf, u32)>,
    /// What the attempt changed in its folder, read before a clean worktree is removed, and
    /// the completed task's `on_complete` (`run::changes`). Here only.
    pub(super) changes: Option<ChangesAtEnd>,
}

/// Where an attempt on a host left its files.
pub(super) struct RemoteEndJob {
    pub(super) host: Host,
    /// The attempt's folder under the host's `$HOME`, the files in it to remove, its stamp.
    pub(super) run_dir: String,
    pub(super) remove: Vec<String>,
    /// Files of that folder copied back into `runs_dir` (the ACP client's log).
    pub(super) fetch: Vec<String>,
    pub(super) runs_dir: PathBuf,
    pub(super) stamp: String,
    /// Where the transcript's copy goes, in the recordings.
    pub(super) transcript_copy: PathBuf,
}

impl GatherJob {
    fn run(mut self) -> Gathered {
        let recordings = self.recordings.take();
        let gathered = match self.remote.take() {
            Some(remote) => self.run_on_host(remote),
            None => self.run_here(),
        };
        if let Some((dir, attempt)) = recordings {
            crate::run::runs_dir::tighten_attempt(&dir, attempt);
        }
        gathered
    }

    fn run_here(self) -> Gathered {
        let failure = self.failure.map(|mut job| {
            let before = job.before.take();
            let changed = failure_report::changed_since(before.as_ref(), &job.cwd);
            failure_report::report(&job.tail, changed, &job.errors_path)
        });
        let transcript = self.transcript.and_then(|job| {
            let path = transcripts::find(&job.env, &job.cwd, job.session.as_deref(), job.since)?;
            let facts = transcripts::read(&path)?;
            Some((outcome::relative_to(&path, &job.base_dir), facts))
        });
        // Before the worktree's removal: `on_complete` may commit what is in it.
        let changes = self.changes.map(ChangesAtEnd::run).unwrap_or_default();
        let worktree = self.finish_worktree.map(|path| worktree::finish(&path));
        Gathered {
            failure,
            transcript,
            worktree,
            changes,
        }
    }
}

impl GatherJob {
    /// The end of an attempt on its host, in one run of its launcher.
    fn run_on_host(self, job: RemoteEndJob) -> Gathered {
        let cwd = self
            .failure
            .as_ref()
            .map(|f| &f.cwd)
            .or(self.finish_worktree.as_ref())
            .or(self.transcript.as_ref().map(|t| &t.cwd))
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let transcript = self.transcript.as_ref().map(|t| RemoteTranscript {
            config_dir: t.env.get("CLAUDE_CONFIG_DIR").map(String::as_str),
            project: crate::core::facts::transcript::project_dir_name(&t.cwd.to_string_lossy()),
            session: t.session.as_deref(),
            max_bytes: transcripts::MAX_READ_BYTES,
        });
        let end = RemoteEnd {
            cwd: &cwd,
            git_status: self.failure.is_some(),
            transcript,
            finish_worktree: self.finish_worktree.is_some(),
            run_dir: &job.run_dir,
            remove: &job.remove,
            fetch: &job.fetch,
            fetch_max: FETCH_MAX_BYTES,
            stamp: &job.stamp,
        };
        let back = crate::run::remote::files::end(&job.host, &end);
        if let Err(why) = &back {
            tracing::warn!(host = %job.host.name, "cannot gather the attempt's end on the host: {why}");
        }
        let back = back.as_ref().ok();
        for (name, bytes) in back.map(|b| b.fetched.as_slice()).unwrap_or_default() {
            keep(&job.runs_dir.join(name), bytes);
        }
        let failure = self.failure.map(|mut job| {
            let before = job.before.take();
            let changed = match (before, back.and_then(|b| b.git_after.clone())) {
                (Some(before), Some(after)) => after.difference(&before).cloned().collect(),
                (None, Some(after)) => after.into_iter().collect(),
                _ => Vec::new(),
            };
            failure_report::report(&job.tail, changed, &job.errors_path)
        });
        let transcript = self
            .transcript
            .zip(back.and_then(|b| b.transcript.as_ref()));
        let transcript = transcript.and_then(|(t, (_, bytes))| {
            let copy = &job.transcript_copy;
            if !keep(copy, bytes) {
                return None;
            }
            let facts = transcripts::read(copy)?;
            Some((outcome::relative_to(copy, &t.base_dir), facts))
        });
        let worktree = self
            .finish_worktree
            .map(|_| match back.map(|b| b.worktree.clone()) {
                Some(Some(WorktreeEnd::Removed)) => Ok(worktree::Cleanup::Removed),
                Some(Some(WorktreeEnd::KeptDirty { files })) => {
                    Ok(worktree::Cleanup::KeptDirty { files })
                }
                Some(Some(WorktreeEnd::Failed { error })) => {
                    Err(worktree::WorktreeError::OnHost(error))
                }
                _ => Err(worktree::WorktreeError::HostSilent {
                    host: job.host.name.clone(),
                }),
            });
        Gathered {
            failure,
            transcript,
            worktree,
            changes: ChangesFound::on_remote_host(),
        }
    }
}

/// The most of a file of a remote attempt's folder copied back.
const FETCH_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Writes what came back from a host into the recordings; false (said in the log) when it
/// cannot.
fn keep(path: &std::path::Path, bytes: &[u8]) -> bool {
    let written = crate::run::safe_fs::create_file(path)
        .map_err(|e| e.to_string())
        .and_then(|mut f| std::io::Write::write_all(&mut f, bytes).map_err(|e| e.to_string()));
    if let Err(error) = &written {
        tracing::warn!(path = %path.display(), "cannot keep what came back from the host: {error}");
    }
    written.is_ok()
}

/// Runs `job` on a worker thread that reports back with an `EngineInbox::Gathered` for attempt
/// `key`. With no thread to spare it runs here and returns what it found.
pub(super) fn gather_in_background(
    key: u64,
    job: GatherJob,
    reports: Outbox<EngineInbox>,
) -> Option<Gathered> {
    let gathered = reports.map(move |gathered| EngineInbox::from_gathered(key, gathered));
    match jobs::spawn_job(format!("gather-{key}"), gathered, move || job.run()) {
        Ok(()) => None,
        Err(not) => {
            tracing::warn!(
                "cannot gather the end of attempt {key} on a worker: {}",
                not.error.cause
            );
            Some((not.work)())
        }
    }
}
