//! Printing commands into a pipe whose reader already left (`herd … | head`) end quietly, as
//! `cat` does: killed by SIGPIPE, nothing on stderr, no panic and no backtrace.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;

use common::{describe, herd};

/// Runs `herd args` in `dir` with stdout a pipe whose read end is closed before herd starts.
fn into_closed_pipe(dir: &Path, args: &[&str]) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = herd()
        .args(args)
        .current_dir(dir)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run herd");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "herd {args:?} complained about the closed pipe:\n{}",
        describe(&out)
    );
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "herd {args:?} should end as `cat` does on a closed pipe:\n{}",
        describe(&out)
    );
}

#[test]
fn printing_commands_end_quietly_on_a_closed_pipe() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tasks = dir.path().join("tasks.json");
    std::fs::write(
        &tasks,
        r#"{"tasks": [{"task_id": "echo-1", "agent": "generic",
            "command": ["sh", "-c", "echo TASK_COMPLETE:echo-1"], "prompt_template": "hi"}]}"#,
    )
    .expect("write tasks");
    let ran = herd()
        .args(["run", "--headless", "--tasks", "tasks.json"])
        .current_dir(dir.path())
        .output()
        .expect("run herd");
    assert_eq!(ran.status.code(), Some(0), "{}", describe(&ran));

    for args in [
        &["sim", "--list"][..],
        &["status", "--tasks", "tasks.json"],
        &["explain", "runs/echo-1"],
        &["profiles"],
        &["validate", "--tasks", "tasks.json"],
        &["policy", "check", "--shell", "ls"],
    ] {
        into_closed_pipe(dir.path(), args);
    }
}
