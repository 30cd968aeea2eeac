//! A file-level `defaults` object through the real binary: five simulator tasks that name no
//! agent of their own run to completion, each task's own field winning over the default, and
//! the rewritten file keeps `defaults` byte for byte with nothing of it copied into a task.
//! A state field put into `defaults` is a `validate` problem with its place.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use serde_json::Value;

use common::{describe, herd, task};

const DEFAULTS: &str = r#"{
    "agent": "sim",
    "timeout_sec": 60,
    "max_retries": 0,
    "inputs": { "scenario": "success", "area": "parser" },
    "env": { "HERD_DEFAULTS_TEST": "1" }
  }"#;

fn tasks_file() -> String {
    format!(
        r#"{{
  "run_id": "defaults-e2e",
  "defaults": {DEFAULTS},
  "tasks": [
    {{ "task_id": "one", "prompt_template": "Tidy the {{area}} module." }},
    {{ "task_id": "two", "prompt_template": "Fix issue 2 in {{area}}." }},
    {{ "task_id": "three", "inputs": {{ "area": "lexer" }}, "prompt_template": "Review the {{area}}." }},
    {{ "task_id": "four", "inputs": {{ "scenario": "incomplete" }}, "prompt_template": "Write docs." }},
    {{ "task_id": "five", "max_retries": 1, "prompt_template": "Run the tests." }}
  ]
}}
"#
    )
}

#[test]
fn five_tasks_take_their_defaults_and_the_file_keeps_them_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tasks.json");
    let text = tasks_file();
    std::fs::write(&path, &text).expect("write tasks");

    let validated = herd()
        .args(["validate", "--tasks", "tasks.json"])
        .current_dir(dir.path())
        .output()
        .expect("validate runs");
    assert_eq!(validated.status.code(), Some(0), "{}", describe(&validated));

    let ran = herd()
        .args(["run", "--headless", "--tasks", "tasks.json"])
        .current_dir(dir.path())
        .output()
        .expect("herd runs");
    // Task "four" overrides the default scenario with one that never prints the marker.
    assert_eq!(ran.status.code(), Some(1), "{}", describe(&ran));

    let after = std::fs::read_to_string(&path).expect("readable");
    assert!(
        after.contains(&format!("\"defaults\": {DEFAULTS},")),
        "defaults must be kept as written:\n{after}"
    );
    let doc: Value = serde_json::from_str(&after).expect("still JSON");
    for id in ["one", "two", "three", "five"] {
        let t = task(&doc, id);
        assert_eq!(
            t["status"],
            "completed",
            "task {id}: {t}\n{}",
            describe(&ran)
        );
        for copied in ["agent", "timeout_sec", "env"] {
            assert!(t.get(copied).is_none(), "task {id} got {copied}: {t}");
        }
    }
    let four = task(&doc, "four");
    assert_eq!(four["status"], "failed", "{four}");
    assert_eq!(
        four["result"]["failure_type"], "failed_incomplete",
        "{four}"
    );
    // The task's own inputs were merged key by key with the defaults': its own `area` won.
    let three = std::fs::read_to_string(dir.path().join("runs/three/attempt_1.json"))
        .expect("attempt facts");
    assert!(three.contains("Review the lexer."), "{three}");
    let one =
        std::fs::read_to_string(dir.path().join("runs/one/attempt_1.json")).expect("attempt facts");
    assert!(one.contains("Tidy the parser module."), "{one}");
}

#[test]
fn a_state_field_in_defaults_is_reported_with_its_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tasks.json");
    let text = "{\n  \"defaults\": { \"agent\": \"sim\", \"status\": \"completed\" },\n  \
                \"tasks\": [ { \"task_id\": \"a\", \"prompt_template\": \"Hi.\" } ]\n}\n";
    std::fs::write(&path, text).expect("write tasks");
    let validated = herd()
        .args(["validate", "--tasks", "tasks.json"])
        .current_dir(dir.path())
        .output()
        .expect("validate runs");
    assert_eq!(validated.status.code(), Some(2), "{}", describe(&validated));
    let said = String::from_utf8_lossy(&validated.stdout).to_string()
        + &String::from_utf8_lossy(&validated.stderr);
    assert!(
        said.contains("tasks.json:2:33: defaults: \"status\" is not allowed here"),
        "{}",
        describe(&validated)
    );
}
