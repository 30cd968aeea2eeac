//! A plain program (`generic` profile) that asks `[y/N]` and reads the answer waits for a
//! person, not for its timeout: headless, nobody may answer, so the attempt ends after
//! `permission_wait_sec` with the question as evidence; with `auto_yes` herd answers it.

// Test code: a failed `expect` is the test failing, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use common::{describe, herd, task};

const ASKS: &str = "printf 'Overwrite config? [y/N] '; read answer; \
                    [ \"$answer\" = y ] && echo TASK_COMPLETE:$HERD_TASK_ID";

#[test]
fn a_yes_no_question_waits_for_a_person_and_auto_yes_answers_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tasks = dir.path().join("tasks.json");
    let task_json = |id: &str, policy: &str| {
        format!(
            r#"{{"task_id": "{id}", "agent": "generic", "command": ["sh", "-c", {ASKS:?}],
                "prompt_template": "x", "timeout_sec": 120, "max_retries": 0,
                "permission_wait_sec": 1, "permission_policy": {policy}}}"#
        )
    };
    std::fs::write(
        &tasks,
        format!(
            r#"{{"tasks": [{}, {}]}}"#,
            task_json("asks", "{}"),
            task_json("answered", r#"{"auto_yes": true}"#)
        ),
    )
    .expect("write tasks");
    let started = Instant::now();
    let out = herd()
        .args(["run", "--headless", "--tasks", "tasks.json"])
        .current_dir(dir.path())
        .output()
        .expect("run herd");
    let took = started.elapsed();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tasks).expect("read tasks")).expect("json");
    let asks = task(&doc, "asks");
    assert_eq!(
        asks["result"]["failure_type"],
        "failed_permission_blocked",
        "{}\n{doc:#}",
        describe(&out)
    );
    assert!(
        asks["result"]["failure_evidence"]
            .as_str()
            .is_some_and(|e| e.contains("[y/N]")),
        "{doc:#}"
    );
    assert_eq!(task(&doc, "answered")["status"], "completed", "{doc:#}");
    assert!(
        took < Duration::from_secs(60),
        "the question must not run into the 120 s timeout (took {took:?})"
    );
}
