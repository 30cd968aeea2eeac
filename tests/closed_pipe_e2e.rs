//! Printing commands into a pipe whose reader already left (`herd … | head`) end quietly, as
//! `cat` does: killed by SIGPIPE, nothing on stderr, no panic and no backtrace. A headless run
//! is not a printing command: its reader leaving ends only its printing, and the batch runs on.

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

/// `herd run --headless --tasks F 2>&1 | head -3`: the reader leaves after three lines, the
/// batch runs to its end all the same, with its usual exit status, and what herd could no
/// longer print goes on into `runs/herd.log`.
#[test]
fn a_headless_batch_outlives_the_reader_of_its_output() {
    use std::io::BufRead;
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().expect("tempdir");
    let ids: Vec<String> = (1..=6).map(|n| format!("t{n}")).collect();
    let tasks: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(
                r#"{{"task_id": "{id}", "agent": "sim", "inputs": {{"scenario": "plain_success"}},
                    "prompt_template": "Fix issue {id}."}}"#
            )
        })
        .collect();
    let tasks_path = dir.path().join("tasks.json");
    std::fs::write(
        &tasks_path,
        format!(r#"{{"tasks": [{}]}}"#, tasks.join(",")),
    )
    .expect("write tasks");

    let (reader, writer) = std::io::pipe().expect("pipe");
    // The command holds its copies of the write end until it is dropped.
    let mut child = {
        let mut command = herd();
        command
            .args([
                "run",
                "--headless",
                "--concurrency",
                "2",
                "--tasks",
                "tasks.json",
            ])
            .current_dir(dir.path())
            .stdout(writer.try_clone().expect("clone the write end"))
            .stderr(writer);
        command.spawn().expect("herd starts")
    };
    let mut head = std::io::BufReader::new(reader);
    let mut shown = Vec::new();
    for _ in 0..3 {
        let mut line = String::new();
        head.read_line(&mut line).expect("herd prints");
        shown.push(line);
    }
    // `head` exits: the read end is closed while herd still has events to print.
    drop(head);

    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("child status") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("herd did not finish within 60 s after its reader left; it printed {shown:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let log = std::fs::read_to_string(dir.path().join("runs/herd.log")).unwrap_or_default();
    assert_eq!(
        (status.code(), status.signal()),
        (Some(0), None),
        "herd should end as usual; it printed {shown:?}\nherd.log:\n{log}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tasks_path).expect("tasks file"))
            .expect("the tasks file is valid");
    for id in &ids {
        assert_eq!(
            common::task(&doc, id)["status"],
            "completed",
            "{id}\nherd.log:\n{log}"
        );
    }
    assert!(
        log.contains("is closed") && log.contains("printing stops, the run goes on"),
        "the log says printing stopped:\n{log}"
    );
    // The summary, printed after the reader left, is in the log: it names every task.
    assert!(
        log.lines()
            .any(|line| line.contains("herd::printed") && line.contains("t6")),
        "what could not be printed goes on into the log:\n{log}"
    );
}
