//! What an ended attempt needs from git and the disk, gathered on a worker thread so the event
//! loop never waits for it: `git status` for a failure's changed files (and its `errors.json`),
//! a Claude session's transcript, and the removal of a completed task's clean worktree. The
//! worker posts a `PtyReport::Gathered`; the attempt concludes on it. It decides nothing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::SystemTime;

use tokio::sync::mpsc;

use crate::core::transcript::TranscriptFacts;
use crate::run::failure_report::{self, GitSnapshot};
use crate::run::pty::PtyReport;
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
}

/// What the worker found.
#[derive(Debug, Default)]
pub struct Gathered {
    pub(super) failure_summary: Option<String>,
    pub(super) transcript: Option<(String, TranscriptFacts)>,
    pub(super) worktree: Option<Result<worktree::Cleanup, String>>,
}

impl GatherJob {
    fn run(self) -> Gathered {
        let failure_summary = self.failure.map(|mut job| {
            let before = job.before.take();
            let changed = failure_report::changed_since(before.as_ref(), &job.cwd);
            failure_report::report(&job.tail, changed, &job.errors_path)
        });
        let transcript = self.transcript.and_then(|job| {
            let path = transcripts::find(&job.env, &job.cwd, job.session.as_deref(), job.since)?;
            let facts = transcripts::read(&path)?;
            Some((outcome::relative_to(&path, &job.base_dir), facts))
        });
        let worktree = self.finish_worktree.map(|path| worktree::finish(&path));
        Gathered {
            failure_summary,
            transcript,
            worktree,
        }
    }
}

/// Runs `job` on a worker thread that reports back with a `PtyReport::Gathered` for attempt
/// `key`. With no thread to spare it runs here and returns what it found.
pub(super) fn gather_in_background(
    key: u64,
    job: GatherJob,
    reports: mpsc::Sender<PtyReport>,
) -> Option<Gathered> {
    let job = std::sync::Arc::new(std::sync::Mutex::new(Some(job)));
    let for_worker = job.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("gather-{key}"))
        .spawn(move || {
            let job = for_worker.lock().ok().and_then(|mut job| job.take());
            if let Some(job) = job {
                let gathered = Box::new(job.run());
                let _ = reports.blocking_send(PtyReport::Gathered { key, gathered });
            }
        });
    if let Err(error) = spawned {
        tracing::warn!("cannot gather the end of attempt {key} on a worker: {error}");
        let job = job.lock().ok().and_then(|mut job| job.take());
        return Some(job.map(GatherJob::run).unwrap_or_default());
    }
    None
}
