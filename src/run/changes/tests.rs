//! Against real temporary repositories, checked beside the `git` binary's own `--numstat`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::diff::{ChangesWithText, Since, changes};
use super::*;
use crate::core::facts::changes::{Changes, FileStatus, RepoChanges, StartPoint};

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    git(p, &["init", "-q", "-b", "main"]);
    git(p, &["config", "user.email", "t@example.com"]);
    git(p, &["config", "user.name", "t"]);
    std::fs::write(p.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(p.join("gone.txt"), "bye\nbye\n").unwrap();
    git(p, &["add", "."]);
    git(p, &["commit", "-q", "-m", "first"]);
    dir
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_default()
}

fn end(
    folder: &Path,
    files: &SnapshotFiles,
    start: Option<StartPoint>,
    own: &[PathBuf],
) -> ChangesWithText {
    let since = Since { files, start, own };
    changes(folder, &since, true).unwrap()
}

fn in_repo(changes: &Changes) -> &RepoChanges {
    match changes {
        Changes::InRepository(repo) => repo,
        other => panic!("{}", other.summary()),
    }
}

/// `git diff --numstat` of everything since `HEAD`, untracked files included (staged into a
/// throwaway index so the repository's own stays as it was). That index is read from `HEAD`, not
/// copied: a copy is newer than racily written entries, whose sizes and times git would trust.
fn numstat(dir: &Path) -> Vec<(String, String, String)> {
    let scratch = dir.join(".git").join("numstat.index");
    let run = |args: &[&str]| {
        let output = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_INDEX_FILE", &scratch)
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    run(&["read-tree", "HEAD"]);
    run(&["add", "-A"]);
    let text = run(&["diff", "--cached", "--numstat", "HEAD"]);
    let _ = std::fs::remove_file(&scratch);
    text.lines()
        .map(|line| {
            let mut parts = line.split('\t');
            let mut next = || parts.next().unwrap_or_default().to_string();
            let (added, removed, path) = (next(), next(), next());
            (path, added, removed)
        })
        .collect()
}

fn as_numstat(repo: &RepoChanges) -> Vec<(String, String, String)> {
    let mut rows: Vec<_> = repo
        .files
        .iter()
        .map(|f| {
            let count = |n: u64| if f.binary { "-".into() } else { n.to_string() };
            (f.path.clone(), count(f.added), count(f.removed))
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn edits_additions_deletions_and_binaries_match_gits_numstat() {
    let repo = repo();
    let p = repo.path();
    let runs = tempfile::tempdir().unwrap();
    let index = SnapshotFiles::of(runs.path(), 1);
    let user_index = read(&p.join(".git/index"));
    let start = snapshot::take(p, &index, &[]).unwrap().unwrap();
    assert_eq!(start.branch.as_deref(), Some("main"));
    assert!(!start.dirty);
    assert_eq!(
        start.commit.as_deref(),
        Some(git(p, &["rev-parse", "HEAD"]).trim())
    );
    std::fs::write(p.join("a.txt"), "one\n2\nthree\nfour\n").unwrap();
    std::fs::remove_file(p.join("gone.txt")).unwrap();
    std::fs::create_dir(p.join("src")).unwrap();
    std::fs::write(p.join("src/new.rs"), "fn main() {}\n").unwrap();
    std::fs::write(p.join("logo.bin"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    let found = end(p, &index, Some(start), &[]);
    let changed = in_repo(&found.changes);
    assert_eq!(as_numstat(changed), numstat(p));
    assert_eq!(changed.summary(), "4 files +3 −3, 1 binary");
    let status_of = |path: &str| {
        changed
            .files
            .iter()
            .find(|f| f.path == path)
            .unwrap()
            .status
    };
    assert_eq!(status_of("gone.txt"), FileStatus::Deleted);
    assert_eq!(status_of("src/new.rs"), FileStatus::Added);
    assert_eq!(status_of("a.txt"), FileStatus::Modified);
    assert!(
        found
            .text
            .contains("+++ b/src/new.rs\n@@ -0,0 +1 @@\n+fn main() {}\n")
    );
    assert!(found.text.contains("-two\n+2\n"), "{}", found.text);
    assert_eq!(
        read(&p.join(".git/index")),
        user_index,
        "the user's index is untouched"
    );
    assert_eq!(git(p, &["status", "--porcelain"]).lines().count(), 4);
}

#[test]
fn changes_made_before_the_start_are_not_the_attempts() {
    let repo = repo();
    let p = repo.path();
    let runs = tempfile::tempdir().unwrap();
    let index = SnapshotFiles::of(runs.path(), 1);
    std::fs::write(p.join("a.txt"), "mine\n").unwrap();
    std::fs::write(p.join("draft.txt"), "mine too\n").unwrap();
    let start = snapshot::take(p, &index, &[]).unwrap().unwrap();
    assert!(start.dirty);
    std::fs::write(p.join("a.txt"), "mine\nagent's\n").unwrap();
    let found = end(p, &index, Some(start), &[]);
    let changed = in_repo(&found.changes);
    assert_eq!(changed.summary(), "1 file +1 −0");
    assert!(found.text.contains(" mine\n+agent's\n"), "{}", found.text);
}

#[test]
fn herds_own_files_are_never_the_agents_changes() {
    let repo = repo();
    let p = repo.path();
    std::fs::create_dir_all(p.join("runs/t")).unwrap();
    let index = SnapshotFiles::of(&p.join("runs/t"), 1);
    let own = vec![p.join("tasks.json"), p.join("runs")];
    let start = snapshot::take(p, &index, &own).unwrap().unwrap();
    std::fs::write(p.join("tasks.json"), "{}").unwrap();
    // The writer saves the tasks file through a temporary file beside it (`run::store`); one
    // left there mid-write is herd's too, and a look-alike of another name is not.
    std::fs::write(p.join(".tasks.json.5L8yTD.tmp"), "{}\n").unwrap();
    std::fs::write(p.join(".notes.json.5L8yTD.tmp"), "mine\n").unwrap();
    std::fs::write(p.join("runs/t/attempt_1.cast"), "x").unwrap();
    std::fs::create_dir_all(p.join(".herd/worktrees/x")).unwrap();
    std::fs::write(p.join(".herd/worktrees/x/f"), "x").unwrap();
    std::fs::write(p.join("real.txt"), "x\n").unwrap();
    let found = end(p, &index, Some(start), &own);
    assert_eq!(in_repo(&found.changes).summary(), "2 files +2 −0");
}

#[test]
fn a_folder_outside_a_repository_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let index = SnapshotFiles::of(dir.path(), 1);
    assert_eq!(snapshot::take(dir.path(), &index, &[]).unwrap(), None);
    assert!(!index.start.exists(), "nothing written");
    assert!(!index.store.exists(), "no store made");
    let found = end(dir.path(), &index, None, &[]);
    assert_eq!(found.changes, Changes::NotARepository);
}

#[test]
fn without_a_snapshot_the_changes_are_since_head() {
    let repo = repo();
    let p = repo.path();
    std::fs::write(p.join("a.txt"), "one\n").unwrap();
    let found = end(p, &SnapshotFiles::of(&p.join("none"), 1), None, &[]);
    assert_eq!(in_repo(&found.changes).summary(), "1 file +0 −2");
    assert_eq!(as_numstat(in_repo(&found.changes)), numstat(p));
}

#[test]
fn a_repository_without_commits_has_a_branch_and_no_start_commit() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    git(p, &["init", "-q", "-b", "trunk"]);
    let runs = tempfile::tempdir().unwrap();
    let index = SnapshotFiles::of(runs.path(), 1);
    let start = snapshot::take(p, &index, &[]).unwrap().unwrap();
    assert_eq!(
        (start.commit, start.branch.as_deref()),
        (None, Some("trunk"))
    );
    std::fs::write(p.join("first.txt"), "a\nb\n").unwrap();
    let found = end(p, &index, None, &[]);
    assert_eq!(in_repo(&found.changes).summary(), "1 file +2 −0");
}

#[test]
fn commit_in_the_users_checkout_moves_only_the_herd_branch() {
    let repo = repo();
    let p = repo.path();
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(p.join("a.txt"), "changed\n").unwrap();
    std::fs::write(p.join("new.txt"), "new\n").unwrap();
    let head = git(p, &["rev-parse", "HEAD"]);
    let user_index = read(&p.join(".git/index"));
    let status = git(p, &["status", "--porcelain"]);
    let done =
        commit::commit_onto_branch(p, "t1", "herd: t1\n\nDid it.\n", &[], scratch.path()).unwrap();
    assert_eq!(done.branch, "herd/t1");
    assert_eq!(git(p, &["rev-parse", "HEAD"]), head, "HEAD stays");
    assert_eq!(
        git(p, &["status", "--porcelain"]),
        status,
        "the checkout stays"
    );
    assert_eq!(read(&p.join(".git/index")), user_index);
    assert_eq!(git(p, &["rev-parse", "herd/t1^"]), head);
    assert_eq!(git(p, &["show", "herd/t1:new.txt"]), "new\n");
    assert_eq!(
        git(p, &["log", "-1", "--format=%B", "herd/t1"]).trim(),
        "herd: t1\n\nDid it."
    );
    let numstat = git(p, &["diff", "--numstat", "HEAD", "herd/t1"]);
    assert_eq!(numstat, "1\t3\ta.txt\n1\t0\tnew.txt\n");
}

#[test]
fn commit_in_the_tasks_worktree_advances_its_branch_and_leaves_it_clean() {
    let repo = repo();
    let p = repo.path();
    let scratch = tempfile::tempdir().unwrap();
    let wt = crate::run::worktree::prepare(p, "t2").unwrap();
    std::fs::write(wt.join("a.txt"), "worktree\n").unwrap();
    let user_status = git(p, &["status", "--porcelain"]);
    let done = commit::commit_onto_branch(&wt, "t2", "herd: t2\n", &[], scratch.path()).unwrap();
    assert_eq!(git(&wt, &["rev-parse", "HEAD"]).trim(), done.commit);
    assert_eq!(git(&wt, &["status", "--porcelain"]), "");
    assert_eq!(git(p, &["status", "--porcelain"]), user_status);
    assert_eq!(git(p, &["show", "herd/t2:a.txt"]), "worktree\n");
    assert_eq!(
        std::fs::read_to_string(p.join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
}

#[test]
fn the_on_complete_command_gets_the_facts_and_its_failure_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("facts.json");
    let argv: Vec<String> = [
        "sh",
        "-c",
        &format!("cat > {}; echo nope >&2; exit 3", out.display()),
    ]
    .map(String::from)
    .to_vec();
    let facts = serde_json::json!({"task_id": "t"});
    let ended = command::run_on_complete(&argv, dir.path(), &facts).unwrap();
    assert_eq!(ended.exit_code, Some(3));
    assert!(!ended.succeeded());
    assert_eq!(ended.stderr, "nope");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written, facts);
    let missing = ["/no/such/program".to_string()];
    assert!(command::run_on_complete(&missing, dir.path(), &facts).is_err());
}

/// Attempt `number` in `folder`, its files in `task_runs`.
fn attempt_in(folder: &Path, task_runs: &Path, number: u32) -> attempt::AttemptFolder {
    attempt::AttemptFolder {
        folder: folder.to_path_buf(),
        task_runs: task_runs.to_path_buf(),
        attempt: number,
        own: vec![],
    }
}

#[test]
fn an_attempt_records_its_changes_and_carries_out_on_complete() {
    use crate::core::task::OnComplete;
    let repo = repo();
    let p = repo.path();
    let runs = tempfile::tempdir().unwrap();
    let attempt = attempt_in(p, runs.path(), 2);
    let start = attempt.at_start().unwrap();
    assert!(runs.path().join("attempt_2.index").is_file());
    std::fs::write(p.join("a.txt"), "one\n").unwrap();
    let changes = attempt.at_end(start).unwrap();
    assert_eq!(changes.summary(), "1 file +0 −2");
    let mut task: crate::core::task::TaskSpec = crate::core::taskfile::TaskFile::parse(
        r#"{"tasks": [{"task_id": "t", "agent": "x", "prompt_template": "p"}]}"#,
    )
    .unwrap()
    .tasks()[0]
        .clone();
    let facts = serde_json::json!({"result": {"result_text": "Trimmed a.txt."}});
    assert_eq!(attempt.on_complete(&task, &facts, &[]), None);
    task.on_complete = Some(OnComplete::Commit);
    let record = attempt.on_complete(&task, &facts, &[]).unwrap();
    assert_eq!(record["branch"], "herd/t", "{record}");
    assert_eq!(
        git(p, &["log", "-1", "--format=%B", "herd/t"]).trim(),
        "herd: t\n\nTrimmed a.txt."
    );
    task.on_complete = Some(OnComplete::Command(
        ["sh", "-c", "echo broken >&2; exit 1"]
            .map(String::from)
            .to_vec(),
    ));
    let record = attempt.on_complete(&task, &facts, &[]).unwrap();
    assert_eq!(
        record,
        serde_json::json!({"action": "command", "exit_code": 1, "error": "broken"})
    );
    let end = attempt::ChangesAtEnd {
        folder: attempt.clone(),
        start: None,
        on_complete: Some(attempt::OnCompleteJob {
            task: task.clone(),
            result_text: Some("Trimmed.".into()),
            output_tail: vec![],
        }),
    };
    let found = end.run();
    assert_eq!(found.changes.unwrap().summary(), "1 file +0 −2");
    assert_eq!(found.on_complete.unwrap()["exit_code"], 1);
}

/// Every file under `git_dir`, with its bytes.
fn files_under(git_dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut found = std::collections::BTreeMap::new();
    let mut folders = vec![git_dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                found.insert(path.strip_prefix(git_dir).unwrap().into(), read(&path));
            }
        }
    }
    found
}

#[test]
fn snapshots_and_diffs_write_nothing_into_the_users_git_folder_worktree_or_not() {
    let repo = repo();
    let p = repo.path();
    let wt = crate::run::worktree::prepare(p, "t3").unwrap();
    for (n, folder) in [p.to_path_buf(), wt].iter().enumerate() {
        let before = files_under(&p.join(".git"));
        let runs = tempfile::tempdir().unwrap();
        let attempt = attempt_in(folder, runs.path(), 1);
        std::fs::write(folder.join("draft.txt"), format!("mine {n}\n")).unwrap();
        let start = attempt.at_start().unwrap();
        std::fs::write(folder.join("a.txt"), format!("agent {n}\n")).unwrap();
        std::fs::write(folder.join("logo.bin"), [0u8, 1, 2, n as u8]).unwrap();
        let found = attempt.at_end(start).unwrap();
        assert_eq!(found.summary(), "2 files +1 −3, 1 binary", "{folder:?}");
        let files = SnapshotFiles::of(runs.path(), 1);
        let since = Since {
            files: &files,
            start: None,
            own: &[],
        };
        assert!(
            changes(folder, &since, true)
                .unwrap()
                .text
                .contains("+agent")
        );
        assert_eq!(files_under(&p.join(".git")), before, "{folder:?}");
        let alternates = files.store.join("objects/info/alternates");
        let named = std::fs::read_to_string(alternates).unwrap();
        let objects = p.join(".git/objects").canonicalize().unwrap();
        assert_eq!(
            named.trim(),
            objects.to_str().unwrap(),
            "the main repository's objects"
        );
    }
}

#[test]
fn an_ended_attempts_changes_are_from_its_start_to_its_end() {
    let repo = repo();
    let p = repo.path();
    let runs = tempfile::tempdir().unwrap();
    let attempt = |number| attempt_in(p, runs.path(), number);
    let start = attempt(1).at_start().unwrap();
    std::fs::write(p.join("a.txt"), "first\n").unwrap();
    assert_eq!(attempt(1).at_end(start).unwrap().summary(), "1 file +1 −3");
    let start = attempt(2).at_start().unwrap();
    std::fs::write(p.join("new.txt"), "second\n").unwrap();
    assert_eq!(attempt(2).at_end(start).unwrap().summary(), "1 file +1 −0");
    // Later edits by anyone are neither attempt's.
    std::fs::write(p.join("gone.txt"), "later\n").unwrap();
    let read_attempt = |number| {
        let files = SnapshotFiles::of(runs.path(), number);
        let since = Since {
            files: &files,
            start: None,
            own: &[],
        };
        changes(p, &since, true).unwrap()
    };
    let first = read_attempt(1);
    assert_eq!(in_repo(&first.changes).summary(), "1 file +1 −3");
    assert!(first.text.contains("+first\n") && !first.text.contains("second"));
    let second = read_attempt(2);
    assert_eq!(in_repo(&second.changes).summary(), "1 file +1 −0");
    assert!(second.text.contains("+second\n") && !second.text.contains("first"));
}
