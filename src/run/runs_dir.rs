//! The recordings folder (`runs/`) is the owner's alone: made 0700, and herd's own entries in a
//! folder an older herd left readable lose group and other access; an attempt's files are
//! tightened when it ends. Never through a link, and nothing that is not herd's is touched.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::safe_fs::{self, SafeFsError};
use crate::core::batch::recovered::RecordedEnd;

/// Makes `runs_dir` private and, when it was not, herd's entries in it (`herd.log`, the folders
/// of `task_ids`). Returns how many lost group or other access.
pub fn prepare<'a>(
    runs_dir: &Path,
    task_ids: impl IntoIterator<Item = &'a str>,
) -> Result<usize, SafeFsError> {
    let was_shared = fs::metadata(runs_dir)
        .map(|m| m.permissions().mode() & 0o077 != 0)
        .unwrap_or(false);
    safe_fs::private_dir(runs_dir)?;
    if !was_shared {
        return Ok(0);
    }
    let mut tightened = usize::from(tighten(&runs_dir.join("herd.log")));
    for id in task_ids {
        // A task id is safe as a folder name (validated); never `..` or a path.
        if !id.is_empty() && !id.contains('/') && id != "." && id != ".." {
            tightened += tighten_tree(&runs_dir.join(id));
        }
    }
    Ok(tightened)
}

/// Takes group and other access from attempt `attempt`'s files in `task_dir`; how many had it.
pub fn tighten_attempt(task_dir: &Path, attempt: u32) -> usize {
    let prefix = format!("attempt_{attempt}.");
    let Ok(entries) = fs::read_dir(task_dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| usize::from(tighten(&e.path())))
        .sum()
}

/// The number of the last attempt of `task_id` with facts in `runs/`. Never through a link.
pub fn last_recorded_attempt(runs_dir: &Path, task_id: &str) -> Option<u32> {
    if task_id.is_empty() || task_id.contains('/') || task_id == "." || task_id == ".." {
        return None;
    }
    let task_dir = runs_dir.join(task_id);
    if !fs::symlink_metadata(&task_dir).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    fs::read_dir(&task_dir)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let number = name
                .to_str()?
                .strip_prefix("attempt_")?
                .strip_suffix(".json")?;
            number.parse::<u32>().ok()
        })
        .max()
}

/// The end of an attempt as its facts recorded it; an unreadable facts file is no record.
pub fn recorded_end(runs_dir: &Path, task_id: &str, attempt: u32) -> Option<RecordedEnd> {
    let path = runs_dir
        .join(task_id)
        .join(format!("attempt_{attempt}.json"));
    if !fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let text = fs::read_to_string(&path).ok()?;
    let facts: serde_json::Value = serde_json::from_str(&text).ok()?;
    RecordedEnd::from_facts(&facts).filter(|end| end.attempt == attempt)
}

/// `make_private`, a failure only noted in the log (the folder above is private already).
fn tighten(path: &Path) -> bool {
    match safe_fs::make_private(path) {
        Ok(changed) => changed,
        Err(error) => {
            if fs::symlink_metadata(path).is_ok() {
                tracing::warn!("{error}");
            }
            false
        }
    }
}

/// `tighten` on `path` and, for a real folder, everything below it (links are not followed).
fn tighten_tree(path: &Path) -> usize {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return 0;
    };
    let mut count = usize::from(tighten(path));
    if meta.is_dir()
        && let Ok(entries) = fs::read_dir(path)
    {
        for entry in entries.flatten() {
            count += tighten_tree(&entry.path());
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path)
            .expect("meta")
            .permissions()
            .mode()
            & 0o777
    }

    fn chmod(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
    }

    #[test]
    fn an_older_runs_folder_is_tightened_and_nothing_else() {
        let dir = tempfile::tempdir().expect("temp dir");
        let runs = dir.path().join("runs");
        let task = runs.join("t1");
        let deeper = task.join("sub");
        fs::create_dir_all(&deeper).expect("mkdir");
        let files = [
            runs.join("herd.log"),
            task.join("attempt_1.cast"),
            deeper.join("x"),
        ];
        for file in &files {
            fs::write(file, "x").expect("write");
            chmod(file, 0o644);
        }
        let users = runs.join("notes.txt");
        fs::write(&users, "mine").expect("write");
        chmod(&users, 0o644);
        let other_task = runs.join("not-a-task");
        fs::create_dir(&other_task).expect("mkdir");
        for folder in [&runs, &task, &deeper, &other_task] {
            chmod(folder, 0o755);
        }
        let outside = dir.path().join("outside");
        fs::write(&outside, "x").expect("write");
        chmod(&outside, 0o644);
        std::os::unix::fs::symlink(&outside, task.join("link")).expect("symlink");

        let tightened = prepare(&runs, ["t1", "missing"]).expect("prepared");
        assert_eq!(tightened, 5, "herd.log, t1, t1/sub and two files in them");
        assert_eq!(mode(&runs), 0o700);
        for folder in [&task, &deeper] {
            assert_eq!(mode(folder), 0o700, "{}", folder.display());
        }
        for file in &files {
            assert_eq!(mode(file), 0o600, "{}", file.display());
        }
        // Not herd's, or behind a link: left as they were (runs/ is closed to others anyway).
        assert_eq!((mode(&users), mode(&other_task)), (0o644, 0o755));
        assert_eq!(mode(&outside), 0o644);

        // Once private, a run does not walk it again.
        chmod(&files[1], 0o644);
        assert_eq!(prepare(&runs, ["t1"]).expect("prepared"), 0);
        assert_eq!(tighten_attempt(&task, 2), 0);
        assert_eq!(tighten_attempt(&task, 1), 1);
        assert_eq!(mode(&files[1]), 0o600);
    }

    #[test]
    fn a_missing_runs_folder_is_made_private() {
        let dir = tempfile::tempdir().expect("temp dir");
        let runs = dir.path().join("a").join("runs");
        assert_eq!(prepare(&runs, ["t"]).expect("made"), 0);
        assert_eq!(mode(&runs), 0o700);
    }
}
