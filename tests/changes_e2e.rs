//! What agents changed, end to end over real git repositories: small shell agents edit files, add
//! and delete one, leave a binary file, run outside a repository and in their own worktree; for
//! each, `herd diff` (its `--stat` and its unified text) is checked against `git diff --numstat`
//! run beside it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{describe, herd};

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        describe(&output)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A repository at `dir` with `files` committed on `main`.
fn repo(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "t"]);
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

/// `git diff --numstat` of everything since `HEAD`, untracked files included, as
/// `(path, added, removed)` sorted; staged in a throwaway index so the repository's stays.
fn git_numstat(dir: &Path) -> Vec<(String, String, String)> {
    let scratch = tempfile::tempdir().unwrap();
    let index = scratch.path().join("index");
    let git_dir = PathBuf::from(git(dir, &["rev-parse", "--absolute-git-dir"]).trim());
    std::fs::copy(git_dir.join("index"), &index).unwrap();
    let run = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", describe(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["add", "-A"]);
    let mut rows: Vec<_> = run(&["diff", "--cached", "--numstat", "HEAD"])
        .lines()
        .map(|line| {
            let parts: Vec<&str> = line.split('\t').collect();
            (
                parts[2].to_string(),
                parts[0].to_string(),
                parts[1].to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

/// The rows of `herd diff --stat` (`  M +3 −1  a.txt`, `  A binary logo.png`) in the same form.
fn herd_numstat(stat: &str) -> Vec<(String, String, String)> {
    let mut rows: Vec<_> = stat
        .lines()
        .skip(1)
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            if words[1] == "binary" {
                (words[2].to_string(), "-".into(), "-".into())
            } else {
                let added = words[1].trim_start_matches('+').to_string();
                let removed = words[2].trim_start_matches('−').to_string();
                (words[3].to_string(), added, removed)
            }
        })
        .collect();
    rows.sort();
    rows
}

fn herd_diff(tasks: &Path, task_id: &str, extra: &[&str]) -> Output {
    herd()
        .args(["diff", "--tasks"])
        .arg(tasks)
        .arg(task_id)
        .args(extra)
        .output()
        .unwrap()
}

fn shell_task(id: &str, cwd: &str, script: &str, extra: &str) -> String {
    format!(
        r#"{{"task_id": "{id}", "agent": "generic", "cwd": "{cwd}", "prompt_template": "x",
            "command": ["sh", "-c", "{script}; echo TASK_COMPLETE:{id}"]{extra}}}"#
    )
}

#[test]
fn herd_diff_shows_what_each_agent_changed_as_git_counts_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo(
        &root.join("edit"),
        &[("a.txt", "one\ntwo\nthree\n"), ("b.txt", "b\n")],
    );
    repo(
        &root.join("addrm"),
        &[("gone.txt", "bye\nbye\n"), ("keep.txt", "k\n")],
    );
    repo(&root.join("binary"), &[("readme", "r\n")]);
    std::fs::create_dir(root.join("outside")).unwrap();
    repo(&root.join("wt"), &[("w.txt", "w\n")]);
    let tasks = [
        shell_task(
            "edit",
            "edit",
            r"printf 'one\\n2\\nthree\\nfour\\n' > a.txt; printf 'B\\n' > b.txt",
            "",
        ),
        shell_task(
            "addrm",
            "addrm",
            "rm gone.txt; mkdir -p src; printf 'fn main() {{}}\\n' > src/new.rs",
            "",
        ),
        shell_task(
            "binary",
            "binary",
            r"printf '\\000\\001\\002png' > logo.png",
            "",
        ),
        shell_task("outside", "outside", "echo hi > note.txt", ""),
        shell_task(
            "wt",
            "wt",
            "printf 'w\\nmore\\n' > w.txt",
            r#", "worktree": true"#,
        ),
    ];
    let tasks_file = root.join("tasks.json");
    std::fs::write(
        &tasks_file,
        format!(r#"{{"run_id": "c", "tasks": [{}]}}"#, tasks.join(",")),
    )
    .unwrap();
    let out = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&tasks_file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let worktree = root.join("wt/.herd/worktrees/wt");
    let cases = [
        ("edit", root.join("edit"), "2 files +3 −2"),
        ("addrm", root.join("addrm"), "2 files +1 −2"),
        ("binary", root.join("binary"), "1 file +0 −0, 1 binary"),
        ("wt", worktree.clone(), "1 file +1 −0"),
    ];
    for (id, folder, summary) in cases {
        let stat = herd_diff(&tasks_file, id, &["--stat"]);
        assert_eq!(stat.status.code(), Some(0), "{id}: {}", describe(&stat));
        let stat = String::from_utf8(stat.stdout).unwrap();
        assert!(
            stat.lines().next().unwrap().ends_with(summary),
            "{id}: {stat}"
        );
        assert_eq!(herd_numstat(&stat), git_numstat(&folder), "{id}: {stat}");
        let full = herd_diff(&tasks_file, id, &[]);
        let text = String::from_utf8(full.stdout).unwrap();
        assert!(text.starts_with(&stat), "{id}: the stat leads the diff");
        assert!(!text.contains("\x1b["), "{id}: plain into a pipe");
    }
    let text = String::from_utf8(herd_diff(&tasks_file, "edit", &[]).stdout).unwrap();
    assert!(text.contains("-two\n+2\n three\n+four\n"), "{text}");
    let text = String::from_utf8(herd_diff(&tasks_file, "addrm", &[]).stdout).unwrap();
    assert!(text.contains("deleted file mode") && text.contains("+fn main() {}\n"));
    let text = String::from_utf8(herd_diff(&tasks_file, "binary", &[]).stdout).unwrap();
    assert!(text.contains("Binary files"), "{text}");
    let outside = herd_diff(&tasks_file, "outside", &[]);
    let text = String::from_utf8(outside.stdout).unwrap();
    assert_eq!(outside.status.code(), Some(0));
    assert!(text.trim_end().ends_with("not a repository"), "{text}");
    assert_eq!(
        std::fs::read_to_string(root.join("wt/w.txt")).unwrap(),
        "w\n",
        "the worktree task's own checkout is untouched"
    );
    let unknown = herd_diff(&tasks_file, "nope", &[]);
    assert_eq!(unknown.status.code(), Some(2), "{}", describe(&unknown));
}
