//! A task's changes as the faces read them (`herd diff`, the dashboard's diff view): its folder
//! (its worktree when it has one), the snapshots of one of its attempts under `runs/` (from its
//! start to its end, or to now while it runs), where that attempt started as its facts file
//! recorded it, and herd's own files left out.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::diff::{ChangesWithText, Since, changes};
use super::{ChangesError, SnapshotFiles, folder_of};
use crate::core::facts::changes::{Changes, StartPoint};
use crate::core::task::TaskSpec;

/// What `task` changed in attempt `attempt` (its latest when `None`): from its start to its end,
/// or to now while it runs, read in the folder it ran in; with the unified text when `with_text`. The folder comes back too.
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
    let since = Since {
        files: &SnapshotFiles::of(&task_runs, attempt),
        start: recorded_start(&task_runs, attempt),
        own: &own,
    };
    let found = changes(&folder, &since, with_text)?;
    Ok((folder, attempt, found))
}

/// Where attempt `attempt` started, as its facts file (`attempt_<n>.json`) recorded it.
fn recorded_start(task_runs: &Path, attempt: u32) -> Option<StartPoint> {
    let text = std::fs::read_to_string(task_runs.join(format!("attempt_{attempt}.json"))).ok()?;
    let facts: Value = serde_json::from_str(&text).ok()?;
    match Changes::from_json(facts.pointer("/task_result/changes")?)? {
        Changes::InRepository(repo) => Some(repo.start),
        Changes::NotARepository => None,
    }
}
