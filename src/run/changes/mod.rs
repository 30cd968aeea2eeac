//! What an attempt changed in its task's folder, read through libgit2 (`git2`), never by parsing
//! git's printed output.
//!
//! As an attempt starts, `snapshot::take` records where the folder stands: its commit, branch
//! and uncommitted changes, and the whole working tree as a private index file under `runs/`
//! (`attempt_<n>.index`); as it ends, the working tree again (`attempt_<n>.end.index`).
//! `diff::changes` compares the start with the end (with the working tree while the attempt
//! runs): the files changed with their line counts (`core::facts::changes`), and the unified
//! text for `herd diff` and the diff view. `commit::commit_onto_branch` is `"on_complete": "commit"`;
//! `command::run_on_complete` is `"on_complete": [...]`; `attempt::AttemptFolder` is all
//! of it for one attempt, as a worker runs it.
//!
//! Nothing is written into the user's repository unless asked (`on_complete: commit`): the
//! snapshots' indexes are herd's own files, and the blobs and trees they name go into herd's
//! own object store (`store`), which reads the user's objects without copying them; the user's
//! index, refs, objects and files are only read. Everything here blocks on the disk: call it
//! from a worker (`run::jobs`), never from the event loop.

pub mod attempt;
pub mod command;
pub mod commit;
pub mod diff;
pub mod snapshot;
pub mod store;
pub mod task;

use std::path::{Path, PathBuf};

use git2::{ErrorCode, Repository};
use thiserror::Error;

use crate::core::task::TaskSpec;
use crate::run::launch::task_cwd;

/// Why the changes of a folder could not be read or committed.
#[derive(Debug, Error)]
pub enum ChangesError {
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    #[error("the snapshot {}: {cause}", path.display())]
    Snapshot { path: PathBuf, cause: String },
    #[error("{} is not in a git repository", .folder.display())]
    NotARepository { folder: PathBuf },
    #[error("{} has no working tree (a bare repository)", .folder.display())]
    Bare { folder: PathBuf },
    #[error("cannot run {program}: {cause}")]
    CannotRun { program: String, cause: String },
}

/// Where the snapshots of one attempt are kept, in its task's folder under `runs/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFiles {
    /// The working tree as the attempt started, as a private index.
    pub start: PathBuf,
    /// The working tree as it ended; missing while it runs.
    pub end: PathBuf,
    /// The task's object store, holding what both indexes name (`store`).
    pub store: PathBuf,
}

impl SnapshotFiles {
    /// Those of attempt `attempt` of the task whose files are in `task_runs_dir`.
    pub fn of(task_runs_dir: &Path, attempt: u32) -> Self {
        let file = |ending: &str| task_runs_dir.join(format!("attempt_{attempt}.{ending}"));
        let (start, end) = (file("index"), file("end.index"));
        let store = store::store_dir(task_runs_dir);
        SnapshotFiles { start, end, store }
    }
}

/// The folder whose changes are a task's: its own worktree when it runs in one (as its result
/// names it, else where `run::worktree` makes it), otherwise its `cwd`.
pub fn folder_of(task: &TaskSpec, base_dir: &Path) -> PathBuf {
    let cwd = task_cwd(task, base_dir);
    if !task.worktree {
        return cwd;
    }
    let recorded = task
        .result
        .as_ref()
        .and_then(|r| r.pointer("/worktree/path"))
        .and_then(|p| p.as_str())
        .map(PathBuf::from);
    let made = || {
        let repo = open(&cwd).ok().flatten()?;
        let path = repo
            .workdir()?
            .join(".herd")
            .join("worktrees")
            .join(&task.task_id);
        path.exists().then_some(path)
    };
    recorded.or_else(made).unwrap_or(cwd)
}

/// The repository holding `folder`, or `None` when it is in none.
pub fn open(folder: &Path) -> Result<Option<Repository>, ChangesError> {
    match Repository::discover(folder) {
        Ok(repo) if repo.is_bare() => Err(ChangesError::Bare {
            folder: folder.to_path_buf(),
        }),
        Ok(repo) => Ok(Some(repo)),
        Err(error) if error.code() == ErrorCode::NotFound => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// The branch `HEAD` names, also before its first commit; `None` on a detached head.
pub fn branch_of(repo: &Repository) -> Option<String> {
    let head = repo.find_reference("HEAD").ok()?;
    let target = head.symbolic_target().ok()??;
    Some(
        target
            .strip_prefix("refs/heads/")
            .unwrap_or(target)
            .to_string(),
    )
}

/// The paths herd writes itself (the tasks file and the temporary files its writer saves it
/// through, `runs/`, `.herd/`), which are never an agent's changes, as `/`-separated prefixes
/// relative to the repository's top folder.
#[derive(Debug, Clone, Default)]
pub struct OwnPaths {
    prefixes: Vec<String>,
}

impl OwnPaths {
    /// `paths` (absolute, or relative to the working directory) that lie inside `repo`'s
    /// working tree, plus `.herd/`.
    pub fn new(repo: &Repository, paths: &[PathBuf]) -> Self {
        let mut prefixes = vec![".herd/".to_string()];
        if let Some(top) = repo.workdir().and_then(|t| t.canonicalize().ok()) {
            for path in paths {
                let Ok(path) = canonical_even_if_missing(path) else {
                    continue;
                };
                if let Ok(relative) = path.strip_prefix(&top) {
                    let text = relative.to_string_lossy().replace('\\', "/");
                    if !text.is_empty() {
                        prefixes.push(text);
                    }
                }
            }
        }
        OwnPaths { prefixes }
    }

    /// Whether the repository path `path` is one of herd's own.
    pub fn holds(&self, path: &str) -> bool {
        self.prefixes.iter().any(|prefix| {
            let prefix = prefix.trim_end_matches('/');
            path == prefix
                || path.starts_with(&format!("{prefix}/"))
                || is_temp_file_of(path, prefix)
        })
    }
}

/// Whether `path` is one of the temporary files the tasks file's writer saves `own` through
/// (`.<name>.XXXXXX.tmp` beside it, `run::store`).
fn is_temp_file_of(path: &str, own: &str) -> bool {
    let (folder, name) = own.rsplit_once('/').unwrap_or(("", own));
    let (path_folder, file) = path.rsplit_once('/').unwrap_or(("", path));
    folder == path_folder && crate::run::store::is_own_temp_file(file, name)
}

/// `path` made absolute with its symbolic links resolved, as far as it exists.
fn canonical_even_if_missing(path: &Path) -> std::io::Result<PathBuf> {
    if let Ok(path) = path.canonicalize() {
        return Ok(path);
    }
    let parent = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default();
    Ok(parent.canonicalize()?.join(name))
}

#[cfg(test)]
mod tests;
