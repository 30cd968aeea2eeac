//! What agents changed, end to end over real git repositories: small shell agents edit files, add
//! and delete one, leave a binary file, run outside a repository and in their own worktree; for
//! each, `herd diff` (its `--stat` and its unified text) is checked against `git diff --numstat`
//! run beside it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use common::dashboard::{Dashboard, Launch};
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
/// `(path, added, removed)` sorted; staged in a throwaway index so the repository's stays. That
/// index is read from `HEAD`, not copied: a copy is newer than the entries git wrote racily
/// (in the second their files were), and git would then trust their sizes and times over a
/// same-sized edit.
fn git_numstat(dir: &Path) -> Vec<(String, String, String)> {
    let scratch = tempfile::tempdir().unwrap();
    let index = scratch.path().join("index");
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
    run(&["read-tree", "HEAD"]);
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
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tasks_file).unwrap()).unwrap();
    for (id, folder, summary) in cases.clone() {
        let recorded = &common::task(&doc, id)["result"]["changes"];
        assert_eq!(recorded["summary"], summary, "{id}: {recorded}");
        let mut rows: Vec<_> = recorded["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let count = |key: &str| match f["binary"].as_bool() {
                    Some(true) => "-".to_string(),
                    _ => f[key].to_string(),
                };
                (
                    f["path"].as_str().unwrap().to_string(),
                    count("added"),
                    count("removed"),
                )
            })
            .collect();
        rows.sort();
        assert_eq!(rows, git_numstat(&folder), "{id}: {recorded}");
        let facts = root.join(format!("runs/{id}/attempt_1.json"));
        let facts: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(facts).unwrap()).unwrap();
        assert_eq!(
            &facts["task_result"]["changes"], recorded,
            "{id}: the attempt's facts"
        );
    }
    assert_eq!(
        common::task(&doc, "outside")["result"]["changes"],
        serde_json::json!({"repository": false, "summary": "not a repository"})
    );
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
    // herd status: the table and --json (which the MCP tools and the control socket share).
    let status = herd()
        .args(["status", "--json", "--tasks"])
        .arg(&tasks_file)
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let edit_row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["task_id"] == "edit")
        .unwrap();
    assert_eq!(
        edit_row["changes"]["summary"], "2 files +3 −2",
        "{edit_row}"
    );
    let table = herd()
        .args(["status", "--tasks"])
        .arg(&tasks_file)
        .output()
        .unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(table.contains("2 files +3 −2"), "{table}");
    assert!(
        table.contains("edit: 2 files +3 −2, took"),
        "the digest: {table}"
    );
    let unknown = herd_diff(&tasks_file, "nope", &[]);
    assert_eq!(unknown.status.code(), Some(2), "{}", describe(&unknown));
}

#[test]
fn on_complete_commits_onto_the_herd_branch_and_a_failing_command_keeps_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo(&root.join("mine"), &[("a.txt", "one\n")]);
    // The operator's own uncommitted work is there before the agent starts.
    std::fs::write(root.join("mine/draft.txt"), "mine\n").unwrap();
    repo(&root.join("wt"), &[("w.txt", "w\n")]);
    repo(&root.join("cmd"), &[("c.txt", "c\n")]);
    let facts_file = root.join("facts.json");
    let tasks = [
        shell_task(
            "mine",
            "mine",
            "echo Renamed the thing.; printf 'one\\\\ntwo\\\\n' > a.txt",
            r#", "on_complete": "commit""#,
        ),
        shell_task(
            "wt",
            "wt",
            "printf 'new\\\\n' > n.txt",
            r#", "worktree": true, "on_complete": "commit""#,
        ),
        shell_task(
            "cmd",
            "cmd",
            "echo x >> c.txt",
            &format!(
                r#", "on_complete": ["sh", "-c", "cat > {}; echo no token >&2; exit 4"]"#,
                facts_file.display()
            ),
        ),
    ];
    let tasks_file = root.join("tasks.json");
    std::fs::write(
        &tasks_file,
        format!(r#"{{"run_id": "c", "tasks": [{}]}}"#, tasks.join(",")),
    )
    .unwrap();
    let mine = root.join("mine");
    let head = git(&mine, &["rev-parse", "HEAD"]);
    let out = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&tasks_file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tasks_file).unwrap()).unwrap();
    for id in ["mine", "wt", "cmd"] {
        assert_eq!(common::task(&doc, id)["status"], "completed", "{id}: {doc}");
    }
    // The user's checkout: HEAD, index and files as they were; the branch has the agent's work.
    let result = &common::task(&doc, "mine")["result"];
    assert_eq!(result["changes"]["summary"], "1 file +1 −0", "{result}");
    assert_eq!(result["on_complete"]["branch"], "herd/mine", "{result}");
    assert_eq!(git(&mine, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&mine, &["branch", "--show-current"]).trim(), "main");
    assert_eq!(git(&mine, &["diff", "--cached", "--stat"]), "");
    assert_eq!(git(&mine, &["show", "herd/mine:a.txt"]), "one\ntwo\n");
    let message = git(&mine, &["log", "-1", "--format=%B", "herd/mine"]);
    assert!(message.starts_with("herd: mine\n\n"), "{message}");
    assert!(message.contains("Renamed the thing."), "{message}");
    assert_eq!(
        git(&mine, &["diff", "--numstat", "HEAD", "herd/mine"]),
        "1\t0\ta.txt\n1\t0\tdraft.txt\n",
        "the commit holds the folder as it was left"
    );
    // The worktree: committed onto its branch, so clean and removed; the branch stays.
    let wt = root.join("wt");
    let result = &common::task(&doc, "wt")["result"];
    assert_eq!(result["on_complete"]["branch"], "herd/wt", "{result}");
    assert_eq!(result["worktree"]["state"], "removed", "{result}");
    assert_eq!(git(&wt, &["show", "herd/wt:n.txt"]), "new\n");
    let diff = herd_diff(&tasks_file, "wt", &[]);
    let text = String::from_utf8(diff.stdout).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("(herd/wt) · 1 file +1 −0")
            && text.contains("+new\n"),
        "the removed worktree's changes, from its snapshots: {text}"
    );
    assert!(
        !wt.join("n.txt").exists(),
        "the user's checkout is untouched"
    );
    // The failing command: recorded, the verdict kept; it got the facts.
    let result = &common::task(&doc, "cmd")["result"];
    assert_eq!(result["on_complete"]["exit_code"], 4, "{result}");
    assert_eq!(result["on_complete"]["error"], "no token", "{result}");
    let facts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&facts_file).unwrap()).unwrap();
    assert_eq!(facts["task_id"], "cmd");
    assert_eq!(facts["changes"]["summary"], "1 file +1 −0");
}

/// `tasks.json` in `root`, holding `tasks`.
fn write_tasks(root: &Path, tasks: &[String]) -> PathBuf {
    let path = root.join("tasks.json");
    let text = format!(r#"{{"run_id": "c", "tasks": [{}]}}"#, tasks.join(","));
    std::fs::write(&path, text).unwrap();
    path
}

/// `herd run --headless` of `tasks_file` (with `extra`), which completes every task: the tasks
/// file as it leaves it.
fn run_batch(tasks_file: &Path, extra: &[&str]) -> serde_json::Value {
    let mut command = herd();
    command
        .args(["run", "--headless", "--tasks"])
        .arg(tasks_file);
    let out = command.args(extra).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    serde_json::from_str(&std::fs::read_to_string(tasks_file).unwrap()).unwrap()
}

/// Every file under the repository `dir`'s `.git` (objects, refs, index, logs) with its bytes.
fn git_folder(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let top = dir.join(".git");
    let mut files = BTreeMap::new();
    let mut folders = vec![top.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let name = path
                .strip_prefix(&top)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            files.insert(name, std::fs::read(&path).unwrap());
        }
    }
    files
}

/// The files of `after` that are new or changed since `before`.
fn new_in(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let changed = after
        .iter()
        .filter(|(name, bytes)| before.get(*name) != Some(bytes));
    let gone = before.keys().filter(|name| !after.contains_key(*name));
    assert_eq!(gone.count(), 0, "nothing of the user's is removed");
    changed.map(|(name, _)| name.clone()).collect()
}

#[test]
fn a_batch_writes_into_the_users_git_folder_only_the_commit_it_was_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for name in ["plain", "asked", "wt"] {
        repo(
            &root.join(name),
            &[("a.txt", "one\ntwo\n"), ("b.txt", "b\n")],
        );
        // The operator's uncommitted work, there before the agents start.
        std::fs::write(root.join(name).join("draft.txt"), "mine\n").unwrap();
    }
    let edits = r"printf 'one\\n2\\n' > a.txt; rm b.txt; printf 'new\\n' > new.txt; printf '\\000\\001png' > logo.png";
    let tasks = [
        shell_task("plain", "plain", edits, ""),
        shell_task("asked", "asked", edits, r#", "on_complete": "commit""#),
        shell_task("wt", "wt", edits, r#", "worktree": true"#),
    ];
    let tasks_file = write_tasks(root, &tasks);
    let before = ["plain", "asked", "wt"].map(|name| git_folder(&root.join(name)));
    let doc = run_batch(&tasks_file, &[]);
    for id in ["plain", "asked", "wt"] {
        let changes = &common::task(&doc, id)["result"]["changes"];
        assert_eq!(
            changes["summary"], "4 files +2 −2, 1 binary",
            "{id}: {changes}"
        );
    }
    assert_eq!(
        git_folder(&root.join("plain")),
        before[0],
        "not a byte changed"
    );
    // Asked to commit: its ref (with its log) and the objects of that commit, nothing else.
    let asked = root.join("asked");
    let commit_objects: Vec<String> = git(&asked, &["rev-list", "--objects", "herd/asked"])
        .lines()
        .map(|line| line.split(' ').next().unwrap().to_string())
        .collect();
    for name in new_in(&before[1], &git_folder(&asked)) {
        let object = name.strip_prefix("objects/").map(|o| o.replace('/', ""));
        assert!(
            ["refs/heads/herd/asked", "logs/refs/heads/herd/asked"].contains(&name.as_str())
                || object.is_some_and(|o| commit_objects.contains(&o)),
            "{name} is neither the commit's ref nor one of its objects"
        );
    }
    // Its own worktree, asked for: the worktree's files and branch (with `.herd/` excluded from
    // the user's status), and no object.
    let worktree_files = [
        "worktrees/wt/",
        "refs/heads/herd/wt",
        "logs/refs/heads/herd/wt",
        "info/exclude",
    ];
    for name in new_in(&before[2], &git_folder(&root.join("wt"))) {
        assert!(
            worktree_files
                .iter()
                .any(|allowed| name.starts_with(allowed)),
            "{name} is not the worktree's"
        );
    }
}

#[test]
fn herd_diff_of_an_attempt_shows_its_start_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo(&root.join("proj"), &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    // The first attempt edits a.txt and fails; the second edits b.txt and completes.
    let script = r"if [ -e ../ran ]; then printf 'second\\n' > b.txt; else touch ../ran; printf 'first\\n' > a.txt; exit 3; fi";
    let task = shell_task("twice", "proj", script, r#", "max_retries": 0"#);
    let tasks_file = write_tasks(root, &[task]);
    herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&tasks_file)
        .output()
        .unwrap();
    let doc = run_batch(&tasks_file, &["--retry", "twice"]);
    assert_eq!(common::task(&doc, "twice")["attempts"], 2, "{doc}");
    // Someone edits the folder after the batch: no attempt's change.
    std::fs::write(root.join("proj/a.txt"), "later\n").unwrap();
    for (attempt, changed, unchanged) in [("1", "a.txt", "b.txt"), ("2", "b.txt", "a.txt")] {
        let out = herd_diff(&tasks_file, "twice", &["--attempt", attempt]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        let text = String::from_utf8(out.stdout).unwrap();
        let first_line = text.lines().next().unwrap();
        assert!(
            first_line.ends_with("1 file +1 −1"),
            "attempt {attempt}: {text}"
        );
        assert!(
            text.contains(&format!("+++ b/{changed}")),
            "attempt {attempt}: {text}"
        );
        assert!(
            !text.contains(unchanged) && !text.contains("later"),
            "attempt {attempt}: {text}"
        );
        let facts = root.join(format!("runs/twice/attempt_{attempt}.json"));
        let facts: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(facts).unwrap()).unwrap();
        let files = &facts["task_result"]["changes"]["files"];
        assert_eq!(files[0]["path"], changed, "attempt {attempt}: {facts}");
    }
}

/// The screen as plain lines, for the test's output (the closing note's captures).
fn capture(ui: &Dashboard, title: &str) -> String {
    let text = ui.text();
    println!("--- {title} ---\n{text}\n---");
    text
}

#[test]
fn the_diff_view_in_the_dashboard_shows_the_files_and_the_diff_at_160x45_and_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    repo(
        &root.join("proj"),
        &[("a.txt", "one\ntwo\nthree\n"), ("gone.txt", "x\n")],
    );
    let task = shell_task(
        "edit",
        "proj",
        "printf 'one\\\\n2\\\\nthree\\\\nfour\\\\n' > a.txt; rm gone.txt; printf 'new\\\\n' > new.txt",
        "",
    );
    let tasks_file = root.join("tasks.json");
    std::fs::write(
        &tasks_file,
        format!(r#"{{"run_id": "c", "tasks": [{task}]}}"#),
    )
    .unwrap();
    let mut ui = Dashboard::start(&tasks_file, Launch::size(45, 160));
    ui.wait_until("the task to complete", Duration::from_secs(30), |s| {
        let text = s.contents();
        text.contains("✔ edit") && text.contains("DONE")
    });
    ui.press("D");
    ui.wait_until("the diff view", Duration::from_secs(10), |s| {
        let text = s.contents();
        text.contains("edit · 3 files +3 −2") && text.contains("+four") && text.contains("q close")
    });
    let wide = capture(&ui, "the diff view at 160x45");
    // The file list beside the diff, as git counts them.
    let numstat = git_numstat(&root.join("proj"));
    for (path, added, removed) in &numstat {
        let row = format!("+{added} −{removed} {path}");
        assert!(
            wide.lines().any(|l| l
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains(&row)),
            "{row} in the list:\n{wide}"
        );
    }
    assert!(wide.contains("diff --git a/a.txt b/a.txt"), "{wide}");
    assert!(wide.contains("+four"), "{wide}");
    ui.press("n");
    ui.wait_until("the next file", Duration::from_secs(5), |s| {
        s.contents().contains("edit · 3 files +3 −2 · 2/3 gone.txt")
    });
    ui.press("q");
    ui.wait_until("the dashboard again", Duration::from_secs(5), |s| {
        !s.contents().contains("j/k scroll")
    });
    ui.resize(24, 80);
    ui.press("D");
    ui.wait_until("the narrow diff view", Duration::from_secs(10), |s| {
        let text = s.contents();
        text.contains("1/3 a.txt") && text.contains("-two") && text.contains("q close")
    });
    let narrow = capture(&ui, "the diff view at 80x24");
    assert!(narrow.contains("-two"), "{narrow}");
    ui.press("q");
    ui.wait_until("the dashboard again", Duration::from_secs(5), |s| {
        !s.contents().contains("1/3 a.txt")
    });
    ui.press("q");
    assert_eq!(
        ui.wait_for_exit(Duration::from_secs(10)),
        0,
        "{}",
        ui.text()
    );
}
