//! End to end: the real `herd run` dashboard in a pseudo-terminal with an ACP agent (the
//! scripted fake agent of `acp/fake_agent.rs`, played by this test binary) whose permission
//! request the task's policy leaves to the operator. The pane shows the client's numbered
//! dialog and the banner offers its keys; the operator's Enter (the banner's "Allow once")
//! allows once, `n` rejects; each task ends as answered, with the answer in
//! `result.approvals` as the client gave it (by the operator, the option sent).

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

#[path = "acp/fake_agent.rs"]
mod fake_agent;

use std::path::Path;
use std::time::{Duration, Instant};

mod common;
use common::dashboard::{Dashboard, Launch};
use serde_json::{Value, json};

/// Not a test: the entry point through which this binary plays the fake ACP agent
/// (`HERD_FAKE_ACP=<script>`); without the variable it returns at once.
#[test]
fn fake_acp_agent_entry_point() {
    if let Ok(script) = std::env::var("HERD_FAKE_ACP") {
        fake_agent::run(&script);
    }
}

const ROWS: u16 = 40;
const COLS: u16 = 140;

fn task_in_file(tasks: &Path, id: &str) -> Value {
    let text = std::fs::read_to_string(tasks).expect("tasks file");
    let doc: Value = serde_json::from_str(&text).expect("json");
    doc["tasks"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["task_id"] == id))
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn the_operator_answers_an_acp_request_from_the_dashboard_with_enter_or_n() {
    let dir = tempfile::tempdir().expect("temp dir");
    let me = std::env::current_exe().unwrap().display().to_string();
    let task = |id: &str| {
        json!({
            "task_id": id, "agent": "gemini-acp", "timeout_sec": 120, "max_retries": 0,
            "command": [me, "fake_acp_agent_entry_point", "--exact", "--nocapture"],
            "env": {"HERD_FAKE_ACP": "asks"},
            "prompt_template": "Run the tests, then print TASK_COMPLETE:{task_id}",
        })
    };
    let tasks = dir.path().join("tasks.json");
    let doc = json!({"run_id": "acp-e2e", "tasks": [task("allowed"), task("rejected")]});
    std::fs::write(&tasks, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let mut ui = Dashboard::start(
        &tasks,
        Launch {
            args: &["--concurrency", "1"],
            ..Launch::size(ROWS, COLS)
        },
    );

    for (id, key, option, status) in [
        ("allowed", "\r", "allow_once", "completed"),
        ("rejected", "n", "reject_once", "failed"),
    ] {
        if id == "rejected" {
            // The answered task stays selected once it ended: the next one is chosen, never
            // answered because its pane took the focus.
            ui.wait_until_text(
                "the next pane to wait unselected",
                Duration::from_secs(30),
                |s| s.contains("⚠ rejected waits"),
            );
            ui.press("w");
        }
        ui.wait_until_text(
            &format!("{id}'s request and the banner's keys"),
            Duration::from_secs(60),
            |s| {
                s.contains(&format!("⚠ {id}"))
                    && s.contains("Request: Bash(npm test)")
                    && s.contains("/Enter] Allow once")
                    && s.contains("[n] No")
            },
        );
        ui.press(key);
        let deadline = Instant::now() + Duration::from_secs(30);
        while task_in_file(&tasks, id)["status"] != status {
            assert!(
                Instant::now() < deadline,
                "{id} did not end {status}: {}\nthe screen was:\n{}",
                task_in_file(&tasks, id),
                ui.text()
            );
            ui.pump(Duration::from_millis(200));
        }
        let result = &task_in_file(&tasks, id)["result"];
        let approvals = result["approvals"].as_array().cloned().unwrap_or_default();
        assert_eq!(approvals.len(), 1, "{id}: {result}");
        let answer = &approvals[0];
        assert_eq!(answer["by"], "operator", "{id}: {answer}");
        assert_eq!(answer["option"], option, "{id}: {answer}");
        assert_eq!(answer["request"], "Bash(npm test)", "{id}: {answer}");
        assert_eq!(answer["decision"], "ask", "{id}: {answer}");
        if status == "failed" {
            assert_eq!(result["failure_type"], "failed_permission_blocked");
            let evidence = result["failure_evidence"].as_str().unwrap_or_default();
            assert!(
                evidence.contains("Bash(npm test)") && evidence.contains("by the operator"),
                "{evidence}"
            );
        }
    }
    ui.press("q");
}
