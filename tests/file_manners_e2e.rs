//! End to end, the real `herd` binary headless: the tasks file's manners and running failed
//! tasks again. A read-only file is refused (exit 2, nothing started, nothing written); the lock
//! does not outlive the run, holds whatever `--runs-dir` each herd is given, and a refused run
//! writes nothing under `runs/`; `--only` says why a task it names will not run; `--retry` runs
//! a failed task again with a fresh budget, recorded in the file and in `runs/herd.log`. The
//! recordings are private, and those an older herd left readable are tightened.

#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{describe, herd, task};

fn write_tasks(dir: &Path, tasks: &str) -> PathBuf {
    let path = dir.join("tasks.json");
    std::fs::write(&path, format!("{{\"tasks\": [{tasks}]}}\n")).unwrap();
    path
}

/// `herd run --headless` in the tasks file's folder (where a relative `--runs-dir` goes).
fn run(tasks: &Path, extra: &[&str]) -> Output {
    herd()
        .args(["run", "--headless", "--tasks"])
        .arg(tasks)
        .args(extra)
        .current_dir(tasks.parent().unwrap())
        .output()
        .unwrap()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn doc(tasks: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(tasks).unwrap()).unwrap()
}

/// A task that fails (exit 3) the first time it runs and completes every time after.
const FAILS_ONCE: &str = r#"{"task_id": "flaky", "agent": "generic", "prompt_template": "x",
  "max_retries": 0,
  "command": ["sh", "-c", "if [ -e ran-once ]; then echo TASK_COMPLETE:flaky; else touch ran-once; exit 3; fi"]}"#;

#[test]
fn a_read_only_tasks_file_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = write_tasks(dir.path(), FAILS_ONCE);
    let before = std::fs::read(&tasks).unwrap();
    std::fs::set_permissions(&tasks, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = run(&tasks, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is read-only (mode 0444)"), "{stderr}");
    assert!(stderr.contains("Nothing was started"), "{stderr}");
    assert!(stderr.contains("chmod u+w"), "{stderr}");
    assert_eq!(std::fs::read(&tasks).unwrap(), before);
    let mode = std::fs::metadata(&tasks).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o444, "the file is not replaced");
    assert_eq!(
        names_in(dir.path()),
        ["tasks.json"],
        "no runs/, no lock file"
    );
    assert!(!dir.path().join("ran-once").exists(), "nothing ran");
}

#[test]
fn the_lock_holds_across_runs_dirs_and_a_refused_run_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = write_tasks(
        dir.path(),
        r#"{"task_id": "h", "agent": "sim", "timeout_sec": 60, "inputs": {"scenario": "hang"},
            "prompt_template": "Wait. When complete, print exactly: TASK_COMPLETE:{task_id}"}"#,
    );
    let mut first = herd()
        .args(["run", "--headless", "--runs-dir", "first-runs", "--tasks"])
        .arg(&tasks)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while task(&doc(&tasks), "h")["status"] != "running" {
        assert!(Instant::now() < deadline, "the first herd did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        dir.path().join("tasks.json.lock").exists(),
        "held while it runs"
    );
    // A second herd, with another runs folder, is refused and makes none.
    let second = run(&tasks, &["--runs-dir", "second-runs"]);
    assert_eq!(second.status.code(), Some(2), "{}", describe(&second));
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("in use by another herd (pid"),
        "{}",
        describe(&second)
    );
    assert!(!dir.path().join("second-runs").exists());
    // Refused for its arguments (a --retry of no task): nothing under runs/ either.
    let third = run(&tasks, &["--retry", "nope", "--runs-dir", "third-runs"]);
    assert_eq!(third.status.code(), Some(2), "{}", describe(&third));
    assert!(!dir.path().join("third-runs").exists());

    rustix::process::kill_process(
        rustix::process::Pid::from_raw(first.id() as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    assert_eq!(first.wait().unwrap().code(), Some(130));
    assert_eq!(
        names_in(dir.path()),
        ["first-runs", "tasks.json"],
        "the lock file is gone with the run"
    );
}

#[test]
fn only_says_why_and_retry_runs_a_failed_task_again() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = write_tasks(dir.path(), FAILS_ONCE);
    let out = run(&tasks, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert_eq!(task(&doc(&tasks), "flaky")["status"], "failed");

    // --only a failed task: said, with what to do, and it does not run.
    let out = run(&tasks, &["--only", "flaky"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "--only flaky: flaky failed (failed_process) after 1 attempt and is out of \
             retries, so it does not run again; add --retry flaky"
        ),
        "{}",
        describe(&out)
    );
    assert_eq!(task(&doc(&tasks), "flaky")["attempts"], 1);

    // --retry failed: it runs again, as attempt 2, with a fresh budget, and completes.
    let out = run(&tasks, &["--retry", "failed"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--retry flaky: failed after 1 attempt; pending again"),
        "{stderr}"
    );
    let flaky = task(&doc(&tasks), "flaky").clone();
    assert_eq!(
        (
            &flaky["status"],
            &flaky["attempts"],
            &flaky["attempts_before_retry"]
        ),
        (&Value::from("completed"), &Value::from(2), &Value::from(1))
    );
    for n in [1, 2] {
        assert!(
            dir.path()
                .join(format!("runs/flaky/attempt_{n}.cast"))
                .exists()
        );
    }
    let log = std::fs::read_to_string(dir.path().join("runs/herd.log")).unwrap();
    assert!(
        log.contains("--retry flaky: failed after 1 attempt; pending again"),
        "{log}"
    );

    // A completed task is not retried: exit 2, nothing changes.
    let before = std::fs::read(&tasks).unwrap();
    let out = run(&tasks, &["--retry", "flaky"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--retry flaky: it is completed, and completed tasks never run again"),
        "{}",
        describe(&out)
    );
    assert_eq!(std::fs::read(&tasks).unwrap(), before);
}

#[test]
fn run_help_answers_how_to_run_failed_tasks_again() {
    let out = herd().args(["run", "--help"]).output().unwrap();
    // Wrapped at the terminal's width: compared with single spaces.
    let help = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for needle in [
        "--retry <failed|TASK_ID>",
        "fresh retry budget",
        "--only ID --retry ID",
        "--record-input",
    ] {
        assert!(help.contains(needle), "{needle} missing from:\n{help}");
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn recordings_are_private_and_an_older_herds_are_tightened() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = write_tasks(dir.path(), FAILS_ONCE);
    // As an older herd left them: 0755 folders, 0644 files; and a file of the user's.
    let runs = dir.path().join("runs");
    std::fs::create_dir_all(runs.join("flaky")).unwrap();
    let old = [
        runs.join("herd.log"),
        runs.join("flaky/attempt_0.log"),
        runs.join("notes.txt"),
    ];
    for file in &old {
        std::fs::write(file, "old").unwrap();
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    for folder in [&runs, &runs.join("flaky")] {
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = run(&tasks, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert_eq!(mode(&runs), 0o700);
    assert_eq!(mode(&runs.join("flaky")), 0o700);
    let written: Vec<PathBuf> = std::fs::read_dir(runs.join("flaky"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(written.len() >= 4, "{written:?}");
    for file in written.iter().chain(&old[..2]) {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }
    assert_eq!(mode(&old[2]), 0o644, "not herd's: left as it was");
}
