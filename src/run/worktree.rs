//! Worktree isolation: a `"worktree": true` task runs in its own git worktree, kept across
//! retries; a clean one is removed after completion, a dirty one kept and reported.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use thiserror::Error;

/// Why a task's worktree could not be made or removed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WorktreeError {
    #[error("cannot run git: {0}")]
    NoGit(String),
    #[error("git {args} failed: {stderr}")]
    GitFailed { args: String, stderr: String },
    #[error("\"worktree\": true needs a git repository, and {} is not in one", .cwd.display())]
    NotARepository { cwd: PathBuf },
    /// The host's own account of its failure.
    #[error("{0}")]
    OnHost(String),
    #[error("host {host} did not answer")]
    HostSilent { host: String },
    #[error("its removal was not tried")]
    NotTried,
}

fn git(dir: &Path, args: &[&str]) -> Result<String, WorktreeError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| WorktreeError::NoGit(e.to_string()))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_string())
    } else {
        Err(WorktreeError::GitFailed {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        })
    }
}

/// The worktree of `task_id` for the repository holding `cwd`, created if it is not there yet.
pub fn prepare(cwd: &Path, task_id: &str) -> Result<PathBuf, WorktreeError> {
    let top =
        git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|_| WorktreeError::NotARepository {
            cwd: cwd.to_path_buf(),
        })?;
    let top = PathBuf::from(top);
    let path = top.join(".herd").join("worktrees").join(task_id);
    if path.join(".git").exists() {
        return Ok(path);
    }
    // Keep herd's folder out of the repository's own status.
    let exclude = git(&top, &["rev-parse", "--git-path", "info/exclude"])
        .map(|p| top.join(p))
        .ok();
    if let Some(exclude) = exclude {
        let current = std::fs::read_to_string(&exclude).unwrap_or_default();
        if !current.lines().any(|l| l.trim() == "/.herd/") {
            if let Some(dir) = exclude.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = std::fs::write(&exclude, format!("{current}\n/.herd/\n"));
        }
    }
    let branch = format!("herd/{task_id}");
    let target = path.display().to_string();
    git(&top, &["worktree", "add", "-B", &branch, &target])?;
    Ok(path)
}

/// What happened to a worktree after its task completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleanup {
    Removed,
    /// Kept because it has changes: the files `git status` lists.
    KeptDirty {
        files: Vec<String>,
    },
}

/// Removes a clean worktree; keeps a dirty one.
pub fn finish(path: &Path) -> Result<Cleanup, WorktreeError> {
    let status = git(path, &["status", "--porcelain=v1", "--untracked-files=all"])?;
    let files: Vec<String> = status
        .lines()
        .filter_map(|l| l.get(3..))
        .map(str::to_string)
        .collect();
    if !files.is_empty() {
        return Ok(Cleanup::KeptDirty { files });
    }
    let target = path.display().to_string();
    git(path, &["worktree", "remove", &target])?;
    Ok(Cleanup::Removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for args in [
            &["init", "-q", "-b", "main"][..],
            &["config", "user.email", "t@example.com"],
            &["config", "user.name", "t"],
        ] {
            git(p, args).unwrap();
        }
        std::fs::write(p.join("a.txt"), "a\n").unwrap();
        git(p, &["add", "a.txt"]).unwrap();
        git(p, &["commit", "-q", "-m", "first"]).unwrap();
        dir
    }

    #[test]
    fn a_worktree_is_made_once_reused_and_removed_when_clean() {
        let repo = repo();
        let wt = prepare(repo.path(), "t1").unwrap();
        assert!(wt.join("a.txt").exists());
        assert_eq!(
            prepare(repo.path(), "t1").unwrap(),
            wt,
            "kept across retries"
        );
        let other = prepare(repo.path(), "t2").unwrap();
        assert_ne!(other, wt, "two tasks never share a worktree");
        assert_eq!(
            git(repo.path(), &["status", "--porcelain"]).unwrap(),
            "",
            "herd's folder is excluded"
        );
        assert_eq!(finish(&wt).unwrap(), Cleanup::Removed);
        assert!(!wt.exists());
        assert!(
            git(repo.path(), &["rev-parse", "--verify", "herd/t1"]).is_ok(),
            "the branch stays"
        );
    }

    #[test]
    fn a_dirty_worktree_is_kept() {
        let repo = repo();
        let wt = prepare(repo.path(), "t1").unwrap();
        std::fs::write(wt.join("new.txt"), "x").unwrap();
        assert_eq!(
            finish(&wt).unwrap(),
            Cleanup::KeptDirty {
                files: vec!["new.txt".into()]
            }
        );
        assert!(wt.join("new.txt").exists());
    }

    #[test]
    fn outside_a_repository_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = prepare(dir.path(), "t").unwrap_err();
        assert!(err.to_string().contains("needs a git repository"), "{err}");
    }
}
