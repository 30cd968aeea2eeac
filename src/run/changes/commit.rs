//! `"on_complete": "commit"`: a completed task's working tree committed onto `herd/<task_id>`.
//!
//! The tree is written from a private index (a temporary file), so the user's index and files
//! are never touched; the commit's parent is the folder's `HEAD`. In the task's own worktree
//! (`"worktree": true`), whose checked-out branch is `herd/<task_id>`, this advances that branch
//! and the worktree's index is set to the new tree, so that `git status` there is clean. In the
//! user's own checkout (any other branch) only the ref `herd/<task_id>` moves: `HEAD`, the index
//! and the files stay as they were.

use std::path::{Path, PathBuf};

use git2::{Index, Oid, Repository, Signature};

use super::snapshot::{head_commit, write_working_tree};
use super::{ChangesError, OwnPaths, branch_of, open};

/// The commit made, and the branch it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committed {
    pub branch: String,
    pub commit: String,
}

/// Commits what is in `folder`'s working tree (herd's own files `own` left out) onto
/// `herd/<task_id>` with `message`; `scratch` is a folder of herd's for the private index.
pub fn commit_onto_branch(
    folder: &Path,
    task_id: &str,
    message: &str,
    own: &[PathBuf],
    scratch: &Path,
) -> Result<Committed, ChangesError> {
    let repo = open(folder)?.ok_or_else(|| ChangesError::NotARepository {
        folder: folder.to_path_buf(),
    })?;
    let own = OwnPaths::new(&repo, own);
    let branch = format!("herd/{task_id}");
    let index_file = scratch.join(format!("commit_{task_id}.index"));
    write_working_tree(&repo, &index_file, &own)?;
    let tree_id = Index::open(&index_file)?.write_tree_to(&repo)?;
    let _ = std::fs::remove_file(&index_file);
    let tree = repo.find_tree(tree_id)?;
    let signature = signature(&repo)?;
    let parent = head_commit(&repo);
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    let on_branch = branch_of(&repo).as_deref() == Some(branch.as_str());
    let reference = format!("refs/heads/{branch}");
    let commit = repo.commit(None, &signature, &signature, message, &tree, &parents)?;
    repo.reference(&reference, commit, true, "herd: on_complete commit")?;
    if on_branch {
        match_index_to(repo.path(), tree_id)?;
    }
    Ok(Committed {
        branch,
        commit: commit.to_string(),
    })
}

/// The user's identity from git's configuration, else herd's.
fn signature(repo: &Repository) -> Result<Signature<'static>, ChangesError> {
    match repo.signature() {
        Ok(signature) => Ok(signature.to_owned()),
        Err(_) => Ok(Signature::now("herd", "herd@localhost")?),
    }
}

/// Sets the index of the repository at `git_dir` (the task's worktree) to `tree`, now its
/// `HEAD`'s. A fresh handle: the one that wrote the tree holds the private index.
fn match_index_to(git_dir: &Path, tree: Oid) -> Result<(), ChangesError> {
    let repo = Repository::open(git_dir)?;
    let mut index = repo.index()?;
    index.read_tree(&repo.find_tree(tree)?)?;
    index.write()?;
    Ok(())
}
