//! A prompt written the way people write one ("Fix issue 2.") succeeds: herd adds the completion
//! instruction, and the simulator, like a model, prints the marker only because it was asked.
//! A task that opts out with `"marker_instruction": false` is sent its prompt as written and,
//! the marker never asked for, ends `failed_incomplete`. A prompt that names its marker itself
//! is not told twice, and the agent's echo of the instruction herd added never counts as the
//! marker. Through the real binary, headless, on simulator tasks.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::path::Path;

use serde_json::Value;

use common::{describe, herd, task};

const TASKS: &str = r#"{"tasks": [
  {"task_id": "natural", "agent": "sim", "inputs": {"scenario": "success"},
   "prompt_template": "Fix issue 2."},
  {"task_id": "as-written", "agent": "sim", "inputs": {"scenario": "plain_success"},
   "prompt_template": "Fix issue 2.", "marker_instruction": false, "my_note": "kept"},
  {"task_id": "names-it", "agent": "sim", "inputs": {"scenario": "plain_success"},
   "prompt_template": "Fix issue 3. When complete, print exactly: TASK_COMPLETE:{task_id}"},
  {"task_id": "echoes", "agent": "sim", "inputs": {"scenario": "echo_only"},
   "prompt_template": "Fix issue 4."}
]}
"#;

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("readable");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

/// The prompt the agent of `id` was started with: the `--prompt` value of its first attempt.
fn prompt_sent(dir: &Path, id: &str) -> String {
    let facts = read_json(&dir.join(format!("runs/{id}/attempt_1.json")));
    let argv: Vec<&str> = facts["argv"]
        .as_array()
        .expect("argv")
        .iter()
        .map(|v| v.as_str().expect("a string"))
        .collect();
    let at = argv
        .iter()
        .position(|a| *a == "--prompt")
        .unwrap_or_else(|| panic!("no --prompt in {argv:?}"));
    argv[at + 1].to_string()
}

#[test]
fn a_natural_prompt_completes_because_herd_asks_for_the_marker() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tasks = dir.path().join("tasks.json");
    std::fs::write(&tasks, TASKS).expect("write tasks");

    let validated = herd()
        .args(["validate", "--tasks", "tasks.json"])
        .current_dir(dir.path())
        .output()
        .expect("validate runs");
    assert_eq!(validated.status.code(), Some(0), "{}", describe(&validated));
    let said = String::from_utf8_lossy(&validated.stdout);
    let note = said
        .lines()
        .find(|l| l.contains("When complete, print exactly"))
        .unwrap_or_else(|| panic!("validate does not say who gets the instruction:\n{said}"));
    assert!(
        note.contains("2 tasks (natural, echoes)"),
        "only the prompts that do not ask for the marker get it: {note}"
    );

    let ran = herd()
        .args(["run", "--headless", "--tasks", "tasks.json"])
        .current_dir(dir.path())
        .output()
        .expect("herd runs");
    // One task ends otherwise: exit 1 (SPEC).
    assert_eq!(ran.status.code(), Some(1), "{}", describe(&ran));

    let doc = read_json(&tasks);
    let natural = task(&doc, "natural");
    assert_eq!(
        natural["status"],
        "completed",
        "{natural:#}\n{}",
        describe(&ran)
    );
    assert_eq!(natural["result"]["completion_marker_seen"], true);
    assert_eq!(
        prompt_sent(dir.path(), "natural"),
        "Fix issue 2.\n\nWhen complete, print exactly: TASK_COMPLETE:natural"
    );

    let as_written = task(&doc, "as-written");
    assert_eq!(as_written["status"], "failed", "{as_written:#}");
    assert_eq!(as_written["result"]["failure_type"], "failed_incomplete");
    assert_eq!(as_written["marker_instruction"], false, "the switch stays");
    assert_eq!(as_written["my_note"], "kept", "an unknown field stays");
    assert_eq!(prompt_sent(dir.path(), "as-written"), "Fix issue 2.");

    // The echo of the prompt holds the marker herd asked for, on a line of its own: not the
    // agent's output.
    let echoes = task(&doc, "echoes");
    assert_eq!(echoes["status"], "failed", "{echoes:#}");
    assert_eq!(echoes["result"]["failure_type"], "failed_incomplete");

    let names_it = task(&doc, "names-it");
    assert_eq!(names_it["status"], "completed", "{names_it:#}");
    let sent = prompt_sent(dir.path(), "names-it");
    assert_eq!(
        sent,
        "Fix issue 3. When complete, print exactly: TASK_COMPLETE:names-it"
    );
}
