//! herd's own object store for a task's snapshots: a bare repository in the task's folder under
//! `runs/` (`runs/<task>/objects.git`) whose `objects/info/alternates` names the user's object
//! store. Opened through it, the user's repository reads its own commits without copying them,
//! while every blob and tree herd hashes (the snapshots) is written here, never into the user's
//! `.git`. A worktree's objects are its main repository's (`commondir`), so those are named.
//!
//! One store per task, not one per runs folder: a task's folder is in one repository, the store
//! goes away with the task's runs folder, and tasks running side by side never write into the
//! same store.

use std::path::{Path, PathBuf};

use git2::Repository;

use super::{ChangesError, open};
use crate::run::safe_fs;

/// The store of the task whose files under `runs/` are in `task_runs`.
pub fn store_dir(task_runs: &Path) -> PathBuf {
    task_runs.join("objects.git")
}

/// The repository holding `folder` (`None`: it is in none), its objects read from both stores
/// and written into herd's at `store`, which is made on first use.
pub fn open_with_store(folder: &Path, store: &Path) -> Result<Option<Repository>, ChangesError> {
    let Some(repo) = open(folder)? else {
        return Ok(None);
    };
    let own = own_store(store, &repo.commondir().join("objects"))?;
    repo.set_odb(&own.odb()?)?;
    Ok(Some(repo))
}

/// The bare repository at `store`, made when missing, reading `theirs` as its alternate.
fn own_store(store: &Path, theirs: &Path) -> Result<Repository, ChangesError> {
    let unusable = |cause: String| ChangesError::Snapshot {
        path: store.to_path_buf(),
        cause,
    };
    if !store.join("objects").is_dir() {
        if let Some(dir) = store.parent() {
            safe_fs::create_real_dir(dir).map_err(|e| unusable(e.to_string()))?;
        }
        Repository::init_bare(store)?;
        // It holds the blobs of the user's files: the owner's alone, like all of `runs/`.
        safe_fs::make_private(store).map_err(|e| unusable(e.to_string()))?;
    }
    let alternates = store.join("objects/info/alternates");
    let line = format!(
        "{}\n",
        theirs
            .canonicalize()
            .unwrap_or_else(|_| theirs.to_path_buf())
            .display()
    );
    if std::fs::read_to_string(&alternates).ok().as_deref() != Some(line.as_str()) {
        if let Some(dir) = alternates.parent() {
            std::fs::create_dir_all(dir).map_err(|e| unusable(e.to_string()))?;
        }
        std::fs::write(&alternates, line).map_err(|e| unusable(e.to_string()))?;
    }
    Ok(Repository::open_bare(store)?)
}
