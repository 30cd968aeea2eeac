//! The changes of a folder in one attempt: from its start snapshot to its end snapshot (to the
//! working tree while it runs), the files with their line counts, and the unified diff's text.
//! Without a start snapshot (an attempt started before herd took them, or a folder herd never
//! snapshotted), the changes since the folder's `HEAD`. A folder that is gone (a worktree removed
//! once its task completed) is read from its snapshots alone.

use std::path::{Path, PathBuf};

use git2::{Delta, Diff, DiffOptions, Index, Patch, Repository};

use super::snapshot::head_commit;
use super::store::open_with_store;
use super::{ChangesError, OwnPaths, SnapshotFiles, branch_of, open};
use crate::core::facts::changes::{Changes, FileChange, FileStatus, RepoChanges, StartPoint};

/// Between what an attempt's changes are read.
#[derive(Debug, Clone)]
pub struct Since<'a> {
    /// The snapshots `snapshot::take` and `take_end` wrote: a missing start is `HEAD`, a
    /// missing end the working tree.
    pub files: &'a SnapshotFiles,
    /// Where the attempt started, as `snapshot::take` found it.
    pub start: Option<StartPoint>,
    /// herd's own files, left out.
    pub own: &'a [PathBuf],
}

/// The changes and the unified diff's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangesWithText {
    pub changes: Changes,
    pub text: String,
}

/// The changes in `folder` since `since`, with the unified text when `with_text`.
pub fn changes(
    folder: &Path,
    since: &Since<'_>,
    with_text: bool,
) -> Result<ChangesWithText, ChangesError> {
    let Some(repo) = open_for(folder, since.files)? else {
        return Ok(ChangesWithText {
            changes: Changes::NotARepository,
            text: String::new(),
        });
    };
    let own = OwnPaths::new(&repo, since.own);
    let diff = diff_since(&repo, since.files)?;
    let mut files = Vec::new();
    let mut text = String::new();
    for position in 0..diff.deltas().len() {
        let Some(mut patch) = Patch::from_diff(&diff, position)? else {
            continue;
        };
        let delta = patch.delta();
        let Some(path) = path_of(&delta) else {
            continue;
        };
        if own.holds(&path) {
            continue;
        }
        let Some(file) = file_change(&patch, path)? else {
            continue;
        };
        if with_text {
            text.push_str(&patch_text(&mut patch)?);
        }
        files.push(file);
    }
    let start = since.start.clone().unwrap_or_else(|| StartPoint {
        commit: head_commit(&repo).map(|c| c.id().to_string()),
        branch: branch_of(&repo),
        dirty: false,
    });
    // herd's store alone (the folder is gone) has no branch of the user's: the start's stands.
    let branch = match repo.is_bare() {
        true => start.branch.clone(),
        false => branch_of(&repo),
    };
    let changes = Changes::InRepository(RepoChanges {
        start,
        branch,
        files,
    });
    Ok(ChangesWithText { changes, text })
}

/// The repository to read `folder`'s changes in: through herd's store when there are
/// snapshots; herd's store alone when the folder is gone but the attempt kept both (a task's
/// worktree, removed once the task completed); `None` outside a repository.
fn open_for(folder: &Path, files: &SnapshotFiles) -> Result<Option<Repository>, ChangesError> {
    let (start, end) = (files.start.exists(), files.end.exists());
    if start && end && !folder.exists() && files.store.is_dir() {
        return Ok(Some(Repository::open_bare(&files.store)?));
    }
    match start || end {
        true => open_with_store(folder, &files.store),
        false => open(folder),
    }
}

/// The diff from the start snapshot (else `HEAD`'s tree) to the end snapshot (else the working
/// tree), untracked files with their content, ignored ones left out. The snapshots' trees are
/// written into herd's store (`repo` is opened through it when they exist).
fn diff_since<'r>(repo: &'r Repository, files: &SnapshotFiles) -> Result<Diff<'r>, ChangesError> {
    let mut options = DiffOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true)
        .include_typechange(true)
        .ignore_submodules(true);
    let mut start = files
        .start
        .exists()
        .then(|| Index::open(&files.start))
        .transpose()?;
    if !files.end.exists()
        && let Some(index) = &start
    {
        return Ok(repo.diff_index_to_workdir(Some(index), Some(&mut options))?);
    }
    let start = match start.as_mut() {
        Some(index) => Some(repo.find_tree(index.write_tree_to(repo)?)?),
        None => head_commit(repo).map(|c| c.tree()).transpose()?,
    };
    if !files.end.exists() {
        return Ok(repo.diff_tree_to_workdir(start.as_ref(), Some(&mut options))?);
    }
    let end = repo.find_tree(Index::open(&files.end)?.write_tree_to(repo)?)?;
    Ok(repo.diff_tree_to_tree(start.as_ref(), Some(&end), Some(&mut options))?)
}

fn path_of(delta: &git2::DiffDelta<'_>) -> Option<String> {
    let file = match delta.status() {
        Delta::Deleted => delta.old_file(),
        _ => delta.new_file(),
    };
    Some(file.path()?.to_string_lossy().replace('\\', "/"))
}

/// The facts of one file's patch; `None` for a delta that is no change (unmodified, ignored).
fn file_change(patch: &Patch<'_>, path: String) -> Result<Option<FileChange>, ChangesError> {
    let delta = patch.delta();
    let status = match delta.status() {
        Delta::Added | Delta::Untracked | Delta::Copied => FileStatus::Added,
        Delta::Deleted => FileStatus::Deleted,
        Delta::Modified | Delta::Renamed => FileStatus::Modified,
        Delta::Typechange => FileStatus::TypeChanged,
        Delta::Unmodified | Delta::Ignored | Delta::Unreadable | Delta::Conflicted => {
            return Ok(None);
        }
    };
    let binary = delta.flags().is_binary();
    let (_, added, removed) = if binary {
        (0, 0, 0)
    } else {
        patch.line_stats()?
    };
    Ok(Some(FileChange {
        path,
        status,
        added: added as u64,
        removed: removed as u64,
        binary,
    }))
}

/// One file's unified diff as `git diff` prints it (headers, hunks, lines).
fn patch_text(patch: &mut Patch<'_>) -> Result<String, ChangesError> {
    let buffer = patch.to_buf()?;
    let mut text = String::from_utf8_lossy(&buffer).into_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}
