//! The tasks file and the recordings through the real binary: a hand-written file keeps its
//! layout, an agent starts only once its `running` state is on disk, and when writes fail: herd ends the run
//! with exit 3 and a message naming the file and the cause, writes the tasks in flight back as
//! `retryable` where it still can, and leaves a valid file. Writes are made to fail for real with
//! a file-size limit (`ulimit -f`, SIGXFSZ ignored so the write returns EFBIG), which works the
//! same for root and other users. Also: planted links are refused before anything starts.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{agents_under, describe, task};
use serde_json::Value;

/// Runs `herd run --headless` under a file-size limit of `limit_blocks` × 512 bytes.
fn run_with_file_size_limit(tasks: &Path, limit_blocks: u64) -> Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {limit_blocks} && exec \"$0\" run --headless --tasks \"$1\""
        ))
        .arg(env!("CARGO_BIN_EXE_herd"))
        .arg(tasks)
        .output()
        .unwrap()
}

fn write_tasks(dir: &Path, tasks: &str) -> PathBuf {
    let path = dir.join("tasks.json");
    std::fs::write(
        &path,
        format!("{{\"run_id\": \"t\", \"tasks\": [{tasks}]}}"),
    )
    .unwrap();
    path
}

#[test]
fn a_recording_that_cannot_be_written_ends_the_run_with_exit_3_and_the_task_retryable() {
    let dir = tempfile::tempdir().unwrap();
    // Far more output than the 32 KiB limit, then a long wait: the task is in flight when the
    // recording fails.
    let tasks = write_tasks(
        dir.path(),
        r#"{"task_id": "loud", "agent": "generic", "prompt_template": "x",
            "command": ["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x; sleep 60"]}"#,
    );
    let out = run_with_file_size_limit(&tasks, 64);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The .log or the .cast, whichever reached the limit first.
    let recording = dir.path().join("runs/loud/attempt_1.");
    assert!(
        stderr.contains(&format!(
            "cannot write the recording {}",
            recording.display()
        )) && stderr.matches("File too large").count() == 1,
        "{}",
        describe(&out)
    );
    assert!(!stderr.contains(".rs:"), "no source locations: {stderr}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&tasks).unwrap()).unwrap();
    assert_eq!(task(&doc, "loud")["status"], "retryable", "{doc:#}");
    assert_eq!(task(&doc, "loud")["result"]["interrupted"], true);
    assert!(
        agents_under(dir.path()).is_empty(),
        "{:?}",
        agents_under(dir.path())
    );
}

#[test]
fn a_tasks_file_that_cannot_be_written_ends_the_run_with_exit_3_and_stays_valid() {
    let dir = tempfile::tempdir().unwrap();
    // The file sits just under the 8 KiB limit: marking the task running still fits, its result
    // does not.
    let task_text = r#"{"task_id": "t", "agent": "generic", "prompt_template": "x",
        "command": ["sh", "-c", "echo TASK_COMPLETE:t"], "padding": "PAD"}"#;
    let without_padding = write_tasks(dir.path(), &task_text.replace("PAD", ""));
    let size = std::fs::metadata(&without_padding).unwrap().len() as usize;
    let padding = "p".repeat(8192 - 60 - size);
    let tasks = write_tasks(dir.path(), &task_text.replace("PAD", &padding));
    let out = run_with_file_size_limit(&tasks, 16);
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&tasks.display().to_string())
            && stderr.matches("File too large").count() == 1,
        "{}",
        describe(&out)
    );
    assert!(!stderr.contains(".rs:"), "no source locations: {stderr}");
    let text = std::fs::read_to_string(&tasks).unwrap();
    let doc: Value = serde_json::from_str(&text).expect("the file is still valid JSON");
    assert_eq!(
        task(&doc, "t")["status"],
        "running",
        "the last state that was written"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_task_folder_under_runs_that_is_a_link_is_refused_with_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(dir.path().join("runs")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.path().join("runs/t")).unwrap();
    let tasks = write_tasks(
        dir.path(),
        r#"{"task_id": "t", "agent": "generic", "prompt_template": "x",
            "command": ["sh", "-c", "echo TASK_COMPLETE:t"]}"#,
    );
    let out = common::herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&tasks)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("runs/t is a symbolic link"),
        "{}",
        describe(&out)
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn a_hand_written_file_keeps_its_layout_and_agents_start_only_once_running_is_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    // Each agent reads the tasks file itself: it prints the marker only if its own task already
    // says `running`, attempt 1, when it starts.
    let line = |id: &str| {
        format!(
            r#"    {{ "task_id": "{id}", "agent": "generic", "mine": [1, 2], "prompt_template": "x", "command": ["sh", "-c", "grep -q '\"task_id\": \"{id}\".*\"status\": \"running\", \"attempts\": 1' tasks.json && echo TASK_COMPLETE:{id}"] }}"#
        )
    };
    let ids = ["a", "b", "c", "d", "e", "f"];
    let lines: Vec<String> = ids.iter().map(|id| line(id)).collect();
    let original = format!(
        "{{\n  \"run_id\":   \"by hand\",\n  \"tasks\": [\n{}\n  ],\n  \"extra\": {{\"kept\": true}}\n}}\n",
        lines.join(",\n")
    );
    let tasks = dir.path().join("tasks.json");
    std::fs::write(&tasks, &original).unwrap();
    let out = common::herd()
        .args(["run", "--headless", "--concurrency", "3", "--tasks"])
        .arg(&tasks)
        .output()
        .unwrap();
    let after = std::fs::read_to_string(&tasks).unwrap();
    assert_eq!(out.status.code(), Some(0), "{}\n{after}", describe(&out));
    let before_lines: Vec<&str> = original.lines().collect();
    let after_lines: Vec<&str> = after.lines().collect();
    assert_eq!(before_lines.len(), after_lines.len(), "{after}");
    for (before, now) in before_lines.iter().zip(&after_lines) {
        match before.strip_suffix(" }").or(before.strip_suffix(" },")) {
            // A task: its own text, then herd's fields, in the inline style of the task.
            Some(task_text) if before.contains("task_id") => {
                assert!(
                    now.starts_with(&format!(
                        "{task_text}, \"status\": \"completed\", \"attempts\": 1, \"result\": {{"
                    )),
                    "{now}"
                );
                assert_eq!(now.ends_with(','), before.ends_with(','), "{now}");
            }
            _ => assert_eq!(before, now),
        }
    }
}
