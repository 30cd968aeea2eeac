//! The snapshots of a folder as an attempt starts and ends: its commit, branch and uncommitted
//! changes, and its whole working tree in a private index file (herd's, under `runs/`), whose
//! blobs go into herd's own object store (`store`). The user's index, refs, objects and files
//! are only read.

use std::path::{Path, PathBuf};

use git2::{Index, IndexAddOption, Repository, StatusOptions};

use super::store::open_with_store;
use super::{ChangesError, OwnPaths, SnapshotFiles, branch_of};
use crate::core::facts::changes::StartPoint;
use crate::run::safe_fs;

/// Records where `folder` stands into `files.start`; `None` when the folder is in no repository
/// (then nothing is written). `own` are herd's own files, left out.
pub fn take(
    folder: &Path,
    files: &SnapshotFiles,
    own: &[PathBuf],
) -> Result<Option<StartPoint>, ChangesError> {
    let Some(repo) = open_with_store(folder, &files.store)? else {
        return Ok(None);
    };
    let own = OwnPaths::new(&repo, own);
    let start = StartPoint {
        commit: head_commit(&repo).map(|c| c.id().to_string()),
        branch: branch_of(&repo),
        dirty: is_dirty(&repo, &own)?,
    };
    write_working_tree(&repo, &files.start, &own)?;
    Ok(Some(start))
}

/// Records `folder`'s working tree as the attempt ended into `files.end`; `false` when the
/// folder is in no repository (then nothing is written).
pub fn take_end(
    folder: &Path,
    files: &SnapshotFiles,
    own: &[PathBuf],
) -> Result<bool, ChangesError> {
    let Some(repo) = open_with_store(folder, &files.store)? else {
        return Ok(false);
    };
    write_working_tree(&repo, &files.end, &OwnPaths::new(&repo, own))?;
    Ok(true)
}

/// The commit `HEAD` points at; `None` before the first commit.
pub(super) fn head_commit(repo: &Repository) -> Option<git2::Commit<'_>> {
    repo.head().ok()?.peel_to_commit().ok()
}

/// Whether the working tree or the index differs from `HEAD`, herd's own files aside.
fn is_dirty(repo: &Repository, own: &OwnPaths) -> Result<bool, ChangesError> {
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut options))?;
    Ok(statuses
        .iter()
        .filter_map(|entry| entry.path().ok().map(str::to_string))
        .any(|path| !own.holds(&path)))
}

/// The working tree as it is (tracked files as they are now, untracked ones that are not
/// ignored, deleted ones left out) into a fresh index at `index_file`, the files' blobs into
/// `repo`'s object store (herd's, through `store`, but for a commit asked for). The index is given
/// to this handle of the repository only, so that libgit2 can hash the files into it; the
/// repository's own index file is never written.
pub(super) fn write_working_tree(
    repo: &Repository,
    index_file: &Path,
    own: &OwnPaths,
) -> Result<(), ChangesError> {
    let unusable = |cause: String| ChangesError::Snapshot {
        path: index_file.to_path_buf(),
        cause,
    };
    if let Some(dir) = index_file.parent() {
        safe_fs::create_real_dir(dir).map_err(|e| unusable(e.to_string()))?;
    }
    if index_file.exists() {
        std::fs::remove_file(index_file).map_err(|e| unusable(e.to_string()))?;
    }
    let mut index = Index::open(index_file)?;
    if let Some(commit) = head_commit(repo) {
        index.read_tree(&commit.tree()?)?;
    }
    repo.set_index(&mut index)?;
    let mut skip_own = |path: &Path, _: &[u8]| -> i32 {
        i32::from(own.holds(&path.to_string_lossy().replace('\\', "/")))
    };
    index.add_all(["*"], IndexAddOption::DEFAULT, Some(&mut skip_own))?;
    index.update_all(["*"], Some(&mut skip_own))?;
    index.write()?;
    // The index names every file of the folder: it is the owner's alone, like all of `runs/`.
    safe_fs::make_private(index_file).map_err(|e| unusable(e.to_string()))?;
    Ok(())
}
