//! After a failed attempt: its scored error lines and the files it changed (from git) written to
//! `attempt_<n>.errors.json`, and a summary for `{previous_failure}`. Best effort.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use super::jobs::{self, Job};
use crate::core::facts::failure_context::FailureContext;

/// Longest `{previous_failure}` text.
pub const SUMMARY_MAX_CHARS: usize = 1500;
/// Rows at the end of the output read for error lines.
pub const TAIL_ROWS: usize = 60;

/// The paths `git status` reports as changed or new in `cwd`, or `None` outside a repository.
/// Without git's optional locks, so that it never refreshes (writes) the user's index, nor holds
/// its lock while `on_complete` commits.
pub fn git_changes(cwd: &Path) -> Option<BTreeSet<String>> {
    let output = Command::new("git")
        .arg("-C")
        .arg(cwd)
        .args(["status", "--porcelain=v1", "--untracked-files=all"])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| line.get(3..))
            .map(str::to_string)
            .collect(),
    )
}

/// True when `cwd` is inside a git repository (a few `stat`s, so git runs only where useful).
pub fn in_repository(cwd: &Path) -> bool {
    cwd.ancestors().any(|dir| dir.join(".git").exists())
}

/// `git status` of an attempt's folder as it started, on a worker; nothing outside a repository.
#[derive(Debug, Default)]
pub struct GitSnapshot {
    worker: Option<Job<Option<BTreeSet<String>>>>,
    /// Taken already (on a host, through its launcher).
    known: Option<BTreeSet<String>>,
}

impl GitSnapshot {
    pub fn start(cwd: &Path) -> GitSnapshot {
        if !in_repository(cwd) {
            return GitSnapshot::default();
        }
        let cwd = cwd.to_path_buf();
        // Without a thread there is no snapshot: git is not run on the loop.
        let worker = jobs::spawn_thread("git-status", move || git_changes(&cwd)).ok();
        GitSnapshot {
            worker,
            known: None,
        }
    }

    /// A snapshot taken elsewhere (`None`: outside a repository).
    pub fn known(files: Option<BTreeSet<String>>) -> GitSnapshot {
        GitSnapshot {
            worker: None,
            known: files,
        }
    }

    /// The files git reported changed when the attempt started (asked only at a failed end).
    pub fn take(&mut self) -> Option<BTreeSet<String>> {
        if let Some(files) = self.known.take() {
            return Some(files);
        }
        self.worker.take()?.join().flatten()
    }
}

/// Files whose state changed since `before` was taken; git runs only inside a repository.
pub fn changed_since(before: Option<&BTreeSet<String>>, cwd: &Path) -> Vec<String> {
    if before.is_none() && !in_repository(cwd) {
        return Vec::new();
    }
    match (before, git_changes(cwd)) {
        (Some(before), Some(after)) => after.difference(before).cloned().collect(),
        (None, Some(after)) => after.into_iter().collect(),
        _ => Vec::new(),
    }
}

/// The lines a structured agent's failure is explained by: its errors, denied tools and final
/// text.
pub fn stream_lines(facts: &crate::core::wire::stream::StreamFacts) -> Vec<String> {
    let mut lines: Vec<String> = facts
        .errors
        .iter()
        .map(|e| match &e.kind {
            Some(kind) => format!("Error ({kind}): {}", e.message),
            None => format!("Error: {}", e.message),
        })
        .collect();
    lines.extend(
        facts
            .permission_denials
            .iter()
            .map(|d| format!("Permission denied: {d}")),
    );
    if let Some(text) = &facts.result_text {
        lines.extend(text.lines().map(str::to_string));
    }
    lines
}

/// What a failed attempt's output said, as the next attempt and the operator get it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailureReport {
    /// For the next attempt's `{previous_failure}`.
    pub summary: String,
    /// The line that says best why it failed (`result.failure_cause`).
    pub headline: Option<String>,
}

/// Builds the failure context of `tail`, writes it to `errors_path`, returns summary and headline.
pub fn report(tail: &[String], changed: Vec<String>, errors_path: &Path) -> FailureReport {
    let context = FailureContext::build(tail, changed);
    let text = serde_json::to_string_pretty(&context.to_json()).unwrap_or_default();
    let written = super::safe_fs::create_file(errors_path)
        .map_err(|e| e.to_string())
        .and_then(|mut file| {
            std::io::Write::write_all(&mut file, (text + "\n").as_bytes())
                .map_err(|e| e.to_string())
        });
    if let Err(error) = written {
        tracing::warn!(path = %errors_path.display(), %error, "cannot write the failure context");
    }
    FailureReport {
        summary: context.summary(SUMMARY_MAX_CHARS),
        headline: context.headline().map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_runs_only_inside_a_repository() {
        let dir = tempfile::tempdir().expect("temp dir");
        let plain = dir.path().join("plain");
        std::fs::create_dir(&plain).expect("mkdir");
        assert!(!in_repository(&plain));
        let mut snapshot = GitSnapshot::start(&plain);
        assert!(snapshot.worker.is_none(), "no git outside a repository");
        assert_eq!(snapshot.take(), None);
        assert!(changed_since(None, &plain).is_empty());

        let repo = dir.path().join("repo");
        let sub = repo.join("sub");
        std::fs::create_dir_all(&sub).expect("mkdir");
        let init = Command::new("git")
            .args(["init", "-q"])
            .arg(&repo)
            .status()
            .expect("git runs");
        assert!(init.success());
        assert!(in_repository(&sub));
        std::fs::write(sub.join("old.txt"), "x").expect("write");
        let mut snapshot = GitSnapshot::start(&sub);
        let before = snapshot.take().expect("a snapshot in a repository");
        assert!(before.contains("sub/old.txt"), "{before:?}");
        std::fs::write(sub.join("new.txt"), "x").expect("write");
        assert_eq!(changed_since(Some(&before), &sub), ["sub/new.txt"]);
    }

    #[test]
    fn a_report_is_written_and_summarised() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("attempt_1.errors.json");
        let tail: Vec<String> = [
            "error[E0308]: mismatched types",
            " --> src/main.rs:4:18",
            "error: could not compile `demo`",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let found = report(&tail, Vec::new(), &path);
        let summary = found.summary;
        assert!(summary.contains("E0308"), "{summary}");
        assert_eq!(
            found.headline.as_deref(),
            Some("error[E0308]: mismatched types --> src/main.rs:4:18"),
            "the most actionable line, with its location"
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(json["aggregate_score"].as_u64().unwrap() >= 50, "{json}");
    }

    #[test]
    fn git_changes_outside_a_repository_are_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(git_changes(dir.path()), None);
        assert!(changed_since(None, dir.path()).is_empty());
    }
}
