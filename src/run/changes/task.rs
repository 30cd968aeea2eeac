//! A task's changes as the faces read them (`herd diff`, the dashboard's diff view): its folder
//! (its worktree when it has one), the snapshots of one of its attempts under `runs/` (from its
//! start to its end, or to now while it runs), where that attempt started as its facts file
//! recorded it, and herd's own files left out.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::diff::{ChangesWithText, Since, changes};
use super::{ChangesError, SnapshotFiles, folder_of};
use crate::core::facts::changes::Changes;
use crate::core::task::TaskSpec;

/// What `task` changed in attempt `attempt` (its latest when `None`): from its start to its end,
/// or to now while it runs, read in the folder it ran in; with the unified text when
/// `with_text`. An attempt whose changes were not recorded (on another host) says so. The folder
/// comes back too.
pub fn task_changes(
    task: &TaskSpec,
    tasks_file: &Path,
    runs_dir: &Path,
    attempt: Option<u32>,
    with_text: bool,
) -> Result<(PathBuf, u32, ChangesWithText), ChangesError> {
    let base_dir = tasks_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let attempt = attempt.unwrap_or(task.attempts.max(1));
    let task_runs = runs_dir.join(&task.task_id);
    let folder = folder_of(task, base_dir);
    let own = [tasks_file.to_path_buf(), runs_dir.to_path_buf()];
    let recorded = recorded(&task_runs, attempt);
    if let Some(changes @ Changes::NotRecorded { .. }) = recorded {
        let text = String::new();
        return Ok((folder, attempt, ChangesWithText { changes, text }));
    }
    let start = match recorded {
        Some(Changes::InRepository(repo)) => Some(repo.start),
        _ => None,
    };
    let files = SnapshotFiles::of(&task_runs, attempt);
    let own = &own;
    let found = changes(
        &folder,
        &Since {
            files: &files,
            start,
            own,
        },
        with_text,
    )?;
    Ok((folder, attempt, found))
}

/// The changes attempt `attempt` recorded in its facts file (`attempt_<n>.json`).
fn recorded(task_runs: &Path, attempt: u32) -> Option<Changes> {
    let text = std::fs::read_to_string(task_runs.join(format!("attempt_{attempt}.json"))).ok()?;
    let facts: Value = serde_json::from_str(&text).ok()?;
    Changes::from_json(facts.pointer("/task_result/changes")?)
}
