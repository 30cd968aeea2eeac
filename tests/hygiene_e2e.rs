//! Process hygiene end to end, with the real binary: a timeout and Ctrl-C leave no escaped
//! process behind, an agent that cannot start for lack of open files waits instead of failing,
//! and SPEC's success rule holds for plain commands (the marker AND a normal end).

#![allow(clippy::unwrap_used)]

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

mod common;
mod procs;
use common::{describe, herd};
use procs::{Reaper, agent_task, processes_of, read_doc, states, wait_until, write_tasks};

#[test]
fn a_timeout_leaves_no_escaped_process_and_records_what_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let _reaper = Reaper(dir.path());
    let task = agent_task(
        "slow",
        "escape",
        "600",
        dir.path(),
        r#", "timeout_sec": 5, "max_retries": 0"#,
    );
    let path = write_tasks(dir.path(), &[task]);
    let child = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The agent's sleep and its two escapes' sleeps run before the timeout (5 s from the
    // attempt's start: room for the shells on a loaded machine). Waited for past it: were the
    // timeout to come first, the TERM-ignoring sleep would never be there to end.
    wait_until(
        "the agent and its escapes to run",
        Duration::from_secs(60),
        || {
            let sleeps = processes_of(dir.path())
                .iter()
                .filter(|p| p.ends_with(": sleep 600 "))
                .count();
            sleeps == 3
        },
        || format!("{:#?}", processes_of(dir.path())),
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let doc = read_doc(&path);
    assert_eq!(
        doc["tasks"][0]["result"]["failure_type"], "failed_timeout",
        "{doc:#}"
    );
    assert!(
        processes_of(dir.path()).is_empty(),
        "{:#?}",
        processes_of(dir.path())
    );
    let facts: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("runs/slow/attempt_1.json")).unwrap(),
    )
    .unwrap();
    let ended = facts["ended_processes"].as_array().unwrap();
    assert!(
        ended
            .iter()
            .any(|p| p["signal"] == "KILL" && p["argv"][0] == "sleep"),
        "the TERM-ignoring setsid'd sleep was killed: {ended:#?}"
    );
}

#[test]
fn ctrl_c_leaves_no_escaped_process() {
    let dir = tempfile::tempdir().unwrap();
    let _reaper = Reaper(dir.path());
    let tasks: Vec<String> = (0..2)
        .map(|i| {
            agent_task(
                &format!("e{i}"),
                "escape",
                "600",
                dir.path(),
                r#", "max_retries": 50"#,
            )
        })
        .collect();
    let path = write_tasks(dir.path(), &tasks);
    let child = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(
        "both agents and their escapes to run",
        Duration::from_secs(30),
        || processes_of(dir.path()).len() >= 2 * 4,
        || format!("{:#?}", processes_of(dir.path())),
    );
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    assert!(
        processes_of(dir.path()).is_empty(),
        "{:#?}",
        processes_of(dir.path())
    );
    let doc = read_doc(&path);
    for t in doc["tasks"].as_array().unwrap() {
        assert_eq!(t["status"], "retryable", "{t:#}");
    }
}

#[test]
fn agents_that_cannot_start_for_lack_of_files_wait_instead_of_failing() {
    let dir = tempfile::tempdir().unwrap();
    let _reaper = Reaper(dir.path());
    let tasks: Vec<String> = (0..8)
        .map(|i| agent_task(&format!("f{i}"), "plain", "1", dir.path(), ""))
        .collect();
    let path = write_tasks(dir.path(), &tasks);
    // A hard limit herd cannot raise: room for a few agents, not eight.
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 40 && exec "$0" run --headless --concurrency 8 --tasks "$1""#)
        .arg(env!("CARGO_BIN_EXE_herd"))
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let end = states(&read_doc(&path));
    assert_eq!(out.status.code(), Some(0), "{}\n{end:#?}", describe(&out));
    assert!(
        end.values().all(|(s, a)| s == "completed" && *a == 1),
        "no attempt was spent on the shortage: {end:#?}\n{}\n{}",
        std::fs::read_to_string(&path).unwrap_or_default(),
        describe(&out)
    );
    assert!(
        stdout.contains("waits: the agent could not start"),
        "the shortage was said: {stdout}"
    );
}

#[test]
fn the_success_rule_holds_for_plain_commands() {
    let dir = tempfile::tempdir().unwrap();
    let _reaper = Reaper(dir.path());
    let task = |id: &str, script: &str, extra: &str| {
        format!(
            r#"{{"task_id": "{id}", "agent": "generic", "prompt_template": "p", "max_retries": 0,
  "command": ["sh", "-c", {script}], "env": {{"TORTURE_DIR": "{dir}"}}{extra}}}"#,
            script = serde_json::to_string(script).unwrap(),
            dir = dir.path().display(),
        )
    };
    let tasks = [
        task("exit3", "echo TASK_COMPLETE:exit3; exit 3", ""),
        task("segv", "echo TASK_COMPLETE:segv; kill -SEGV $$", ""),
        task(
            "finishes",
            "echo TASK_COMPLETE:finishes; sleep 6; exit 0",
            "",
        ),
        task(
            "too_long",
            "echo TASK_COMPLETE:too_long; sleep 600",
            r#", "timeout_sec": 3"#,
        ),
    ];
    let path = write_tasks(dir.path(), &tasks);
    let out = herd()
        .args(["run", "--headless", "--tasks"])
        .arg(&path)
        .output()
        .unwrap();
    let doc = read_doc(&path);
    let verdict = |id: &str| {
        let t = doc["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task_id"] == id)
            .unwrap();
        (
            t["status"].as_str().unwrap_or("").to_string(),
            t["result"]["failure_type"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            t["result"]["failure_evidence"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        )
    };
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let (status, failure, evidence) = verdict("exit3");
    assert_eq!(
        (status.as_str(), failure.as_str()),
        ("failed", "failed_process")
    );
    assert!(evidence.contains("exit code 3"), "{evidence}");
    let (status, failure, evidence) = verdict("segv");
    assert_eq!(
        (status.as_str(), failure.as_str()),
        ("failed", "failed_process")
    );
    assert!(evidence.starts_with("killed by signal"), "{evidence}");
    assert_eq!(
        verdict("finishes").0,
        "completed",
        "left to finish after the marker"
    );
    assert_eq!(verdict("too_long").1, "failed_timeout");
}
