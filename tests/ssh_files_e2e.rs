//! The files of attempts on a host, end to end: the real binary against a real OpenSSH server
//! on 127.0.0.1 (see `sshd/`). The host's `workdir` is a folder that does not exist beside the
//! tasks file, so every file herd needs there (the task's repository, its worktree, the signal
//! file, git's facts) can only have been reached through the launcher.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;
mod sshd;
use common::{describe, herd, task};
use sshd::{Keys, Sshd};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository at `dir` with one commit.
fn repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "t"]);
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    git(dir, &["add", "a.txt"]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

fn generic(id: &str, script: &str, extra: &str) -> String {
    format!(
        r#"{{"task_id": "{id}", "agent": "generic", "host": "box1", "cwd": "repo",
  "command": ["sh", "-c", {script}, "agent", "{id}"], "prompt_template": "p",
  "max_retries": 0{extra}}}"#,
        script = serde_json::to_string(script).unwrap(),
    )
}

#[test]
fn a_hosts_worktree_signal_file_and_git_facts_are_reached_through_its_launcher() {
    let dir = tempfile::tempdir().unwrap();
    let Some(keys) = Keys::new(dir.path()) else {
        return;
    };
    let Some(sshd) = Sshd::start(&keys, "box1") else {
        return;
    };
    // The host's folders: `repo` there, nothing of that name here.
    let local = dir.path().join("here");
    let remote = dir.path().join("there");
    std::fs::create_dir_all(&local).unwrap();
    repo(&remote.join("repo"));
    std::fs::write(
        local.join("hosts.toml"),
        sshd.host_entry(
            &keys,
            &format!(
                "workdir = \"{}\"\nenv = {{ PATH = \"/usr/local/bin:/usr/bin:/bin\" }}\n",
                remote.display()
            ),
        ),
    )
    .unwrap();
    let signal = |status: &str, words: &str| {
        format!(
            r#"printf '{{{{"status": "{status}", {words}}}}}' > "$HERD_SIGNAL_FILE"; echo "wrote $HERD_SIGNAL_FILE""#
        )
    };
    let tasks = [
        // The signal file decides: no marker printed, exit 0.
        generic(
            "sig-done",
            &signal("done", r#""result": "all good""#),
            r#", "completion": "signal_file""#,
        ),
        generic(
            "sig-error",
            &signal("error", r#""error": "cannot reproduce the bug""#),
            r#", "completion": "signal_file""#,
        ),
        // Runs in its own worktree on the host, removed there once it completed clean.
        generic(
            "wt",
            r#"echo "in $(pwd)"; echo "TASK_COMPLETE:$1""#,
            r#", "worktree": true"#,
        ),
        // Fails after changing a file: the failure's context names it.
        generic("broken", "echo made > made.txt; exit 3", ""),
        // Its own log on the host says its key is refused: ended at once, not at the timeout.
        format!(
            r#"{{"task_id": "keylog", "agent": "logger", "host": "box1", "cwd": "repo",
  "command": ["sh", "-c", {script}, "agent", "{{agent_log}}"], "prompt_template": "p",
  "max_retries": 0, "timeout_sec": 60}}"#,
            script = serde_json::to_string(REFUSED_KEY).unwrap()
        ),
    ];
    std::fs::write(local.join("profiles.toml"), LOGGER).unwrap();
    let tasks_path = local.join("tasks.json");
    std::fs::write(
        &tasks_path,
        format!("{{\"tasks\": [\n{}\n]}}\n", tasks.join(",\n")),
    )
    .unwrap();
    let out = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&tasks_path)
        .arg("--hosts")
        .arg(local.join("hosts.toml"))
        .arg("--profiles")
        .arg(local.join("profiles.toml"))
        .output()
        .unwrap();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&tasks_path).unwrap()).unwrap();
    let seen = || format!("{}\n{doc:#}", describe(&out));
    assert_eq!(out.status.code(), Some(1), "{}", seen());

    let done = task(&doc, "sig-done");
    assert_eq!(done["status"], "completed", "{}", seen());
    assert_eq!(done["result"]["signal"]["status"], "done", "{}", seen());
    // Its changes are not read on the host, and the record says so.
    let changes = &done["result"]["changes"];
    assert_eq!(changes["recorded"], false, "{}", seen());
    assert_eq!(
        changes["summary"],
        "not recorded (remote host)",
        "{}",
        seen()
    );
    let diff = herd()
        .args(["diff", "--tasks"])
        .arg(&tasks_path)
        .arg("sig-done")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&diff.stdout);
    assert!(
        text.trim_end().ends_with("not recorded (remote host)"),
        "{text}"
    );
    let error = task(&doc, "sig-error");
    assert_eq!(error["status"], "failed", "{}", seen());
    assert!(
        error["result"]["failure_evidence"]
            .as_str()
            .unwrap_or_default()
            .contains("cannot reproduce the bug"),
        "{}",
        seen()
    );
    // The agent wrote its signal file on the host, outside the recordings; herd kept a copy
    // there and removed the host's file.
    let runs = local.join("runs");
    let log = std::fs::read_to_string(runs.join("sig-done/attempt_1.log")).unwrap();
    let written: PathBuf = log
        .lines()
        .find_map(|l| l.trim().strip_prefix("wrote "))
        .unwrap_or_else(|| panic!("the agent says where it wrote: {log}"))
        .into();
    assert!(
        !written.starts_with(&local),
        "the signal file is the host's, not the recordings': {}",
        written.display()
    );
    assert!(!written.exists(), "removed on the host after the attempt");
    let copy = std::fs::read_to_string(runs.join("sig-done/attempt_1.signal.json")).unwrap();
    assert!(copy.contains("all good"), "{copy}");

    let wt = task(&doc, "wt");
    let path = remote.join("repo/.herd/worktrees/wt");
    assert_eq!(wt["status"], "completed", "{}", seen());
    assert_eq!(wt["result"]["worktree"]["state"], "removed", "{}", seen());
    assert_eq!(
        wt["result"]["worktree"]["path"],
        path.display().to_string(),
        "{}",
        seen()
    );
    let log = std::fs::read_to_string(runs.join("wt/attempt_1.log")).unwrap();
    assert!(
        log.contains(&format!("in {}", path.display())),
        "the agent ran in the worktree: {log}"
    );
    assert!(!path.exists(), "the clean worktree was removed on the host");
    assert!(
        git(&remote.join("repo"), &["branch", "--list", "herd/wt"]).contains("herd/wt"),
        "its branch stays"
    );
    assert_eq!(
        git(&remote.join("repo"), &["status", "--porcelain"]),
        "?? made.txt\n",
        "herd's folder is excluded from the repository's status"
    );

    let broken = task(&doc, "broken");
    assert_eq!(
        broken["result"]["failure_type"],
        "failed_process",
        "{}",
        seen()
    );
    assert!(
        broken["result"]["failure_summary"]
            .as_str()
            .unwrap_or_default()
            .contains("made.txt"),
        "git's facts from the host: {}",
        seen()
    );
    let errors = std::fs::read_to_string(runs.join("broken/attempt_1.errors.json")).unwrap();
    assert!(errors.contains("made.txt"), "{errors}");

    let keylog = task(&doc, "keylog");
    assert_eq!(
        keylog["result"]["failure_type"],
        "failed_auth",
        "{}",
        seen()
    );
    assert!(
        keylog["result"]["failure_evidence"]
            .as_str()
            .unwrap_or_default()
            .contains("authentication_error"),
        "{}",
        seen()
    );
    let copy = std::fs::read_to_string(runs.join("keylog/attempt_1.agent.log")).unwrap();
    assert!(
        copy.contains("invalid x-api-key"),
        "the host's log is kept: {copy}"
    );
}

/// An interactive agent whose own log (Claude's debug log) names its failed requests.
const LOGGER: &str = r#"
[profiles.logger]
command = ["sh"]
exit_keys = "/exit\r"
ready = '(?m)^❯\s*$'
agent_log = "claude_debug"
"#;

/// Says on screen that it retries, logs a refused key, then waits far longer than the test.
const REFUSED_KEY: &str = r#"printf '✻ API error · Retrying in 2s · attempt 2/10\n'
printf '%s\n' '2026-11-25T03:39:04Z [ERROR] API error (attempt 1/11): 401 401 {{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key"}}}}' >> "$1"
sleep 50"#;
