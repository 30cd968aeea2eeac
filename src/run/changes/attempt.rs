//! The changes work of one attempt, as a worker carries it out: the snapshot as the attempt
//! starts, the changes as it ends, and the task's `on_complete` once it completed. Each call
//! blocks on the disk and returns plain values (the facts, the JSON to record); recording them
//! is the caller's.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::command::run_on_complete;
use super::commit::commit_onto_branch;
use super::diff::{Since, changes};
use super::snapshot;
use super::{ChangesError, SnapshotFiles};
use crate::core::facts::changes::{Changes, StartPoint, commit_message};
use crate::core::task::{OnComplete, TaskSpec};

/// Where one attempt's changes are read: its task's folder, its files under `runs/`, and the
/// files herd writes itself (the tasks file, `runs/`), which are never the agent's.
#[derive(Debug, Clone)]
pub struct AttemptFolder {
    pub folder: PathBuf,
    pub task_runs: PathBuf,
    pub attempt: u32,
    pub own: Vec<PathBuf>,
}

impl AttemptFolder {
    fn snapshots(&self) -> SnapshotFiles {
        SnapshotFiles::of(&self.task_runs, self.attempt)
    }

    /// As the attempt starts: where the folder stands (`None`: not in a repository), its
    /// working tree kept in the attempt's snapshot.
    pub fn at_start(&self) -> Result<Option<StartPoint>, ChangesError> {
        snapshot::take(&self.folder, &self.snapshots(), &self.own)
    }

    /// As the attempt ends: its working tree kept in its end snapshot, and what it changed since
    /// `start` (as `at_start` found it). Without an end snapshot (it could not be written), the
    /// changes are read from the working tree as it is.
    pub fn at_end(&self, start: Option<StartPoint>) -> Result<Changes, ChangesError> {
        let files = self.snapshots();
        if let Err(error) = snapshot::take_end(&self.folder, &files, &self.own) {
            tracing::warn!(folder = %self.folder.display(), "cannot take the attempt's end snapshot: {error}");
        }
        let since = Since {
            files: &files,
            start,
            own: &self.own,
        };
        Ok(changes(&self.folder, &since, false)?.changes)
    }

    /// Once the task completed: its `on_complete`, carried out, as the record that goes into
    /// `result.on_complete` (`None` when it has none). A failure is recorded there, never an
    /// error: it does not change the task's verdict. `facts` is what a command gets on stdin;
    /// `output_tail` the agent's last lines before the marker, for a commit message when the
    /// agent gave no result text.
    pub fn on_complete(
        &self,
        task: &TaskSpec,
        facts: &Value,
        output_tail: &[String],
    ) -> Option<Value> {
        match task.on_complete.as_ref()? {
            OnComplete::Commit => Some(self.commit(task, facts, output_tail)),
            OnComplete::Command(argv) => Some(self.command(argv, facts)),
        }
    }

    fn commit(&self, task: &TaskSpec, facts: &Value, output_tail: &[String]) -> Value {
        let result_text = facts.pointer("/result/result_text").and_then(Value::as_str);
        let message = commit_message(&task.task_id, result_text, output_tail);
        match commit_onto_branch(
            &self.folder,
            &task.task_id,
            &message,
            &self.own,
            &self.task_runs,
        ) {
            Ok(done) => json!({"action": "commit", "branch": done.branch, "commit": done.commit}),
            Err(error) => json!({"action": "commit", "error": error.to_string()}),
        }
    }

    fn command(&self, argv: &[String], facts: &Value) -> Value {
        match run_on_complete(argv, &self.folder, facts) {
            Ok(end) if end.succeeded() => json!({"action": "command", "exit_code": 0}),
            Ok(end) => json!({
                "action": "command",
                "exit_code": end.exit_code,
                "error": if end.stderr.is_empty() { "the command failed".to_string() } else { end.stderr },
            }),
            Err(error) => json!({"action": "command", "error": error.to_string()}),
        }
    }
}

/// What a completed attempt's `on_complete` needs: the task, and the agent's own summary (its
/// final result text, else its last lines before the marker) for a commit message.
#[derive(Debug, Clone)]
pub struct OnCompleteJob {
    pub task: TaskSpec,
    pub result_text: Option<String>,
    pub output_tail: Vec<String>,
}

/// The changes work of an attempt's end, for the gathering worker.
#[derive(Debug, Clone)]
pub struct ChangesAtEnd {
    pub folder: AttemptFolder,
    /// Where the attempt started (`None`: not in a repository, or not taken).
    pub start: Option<StartPoint>,
    /// The task completed and has an `on_complete`.
    pub on_complete: Option<OnCompleteJob>,
}

/// What the end found: the changes (`None` when they could not be read, said in the log) and
/// the record of `on_complete`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangesFound {
    pub changes: Option<Changes>,
    pub on_complete: Option<Value>,
}

impl ChangesFound {
    /// Those of an attempt on another host: not read there (`Changes::on_remote_host`), and
    /// no `on_complete` carried out.
    pub fn on_remote_host() -> ChangesFound {
        ChangesFound {
            changes: Some(Changes::on_remote_host()),
            on_complete: None,
        }
    }
}

impl ChangesAtEnd {
    /// The changes first (against the snapshot), then `on_complete`, which may commit them.
    pub fn run(self) -> ChangesFound {
        let changes = match self.folder.at_end(self.start) {
            Ok(changes) => Some(changes),
            Err(error) => {
                tracing::warn!(folder = %self.folder.folder.display(), "cannot read the attempt's changes: {error}");
                None
            }
        };
        let on_complete = self.on_complete.and_then(|job| {
            let facts = facts_of(&job, &self.folder, changes.as_ref());
            self.folder.on_complete(&job.task, &facts, &job.output_tail)
        });
        ChangesFound {
            changes,
            on_complete,
        }
    }
}

/// The facts an `on_complete` command gets on its standard input: the task's id and agent, its
/// status, the attempt, the folder, its changes and the agent's final result text.
pub fn facts_of(job: &OnCompleteJob, folder: &AttemptFolder, changes: Option<&Changes>) -> Value {
    json!({
        "task_id": job.task.task_id,
        "agent": job.task.agent,
        "status": "completed",
        "attempt": folder.attempt,
        "folder": folder.folder.display().to_string(),
        "changes": changes.map(Changes::to_json),
        "result": {"result_text": job.result_text},
    })
}
