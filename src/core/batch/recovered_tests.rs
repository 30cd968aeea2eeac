use serde_json::json;

use super::*;
use crate::core::taskfile::TaskFile;

/// A task as the file has it: `status` after `attempts` attempts.
fn task(status: &str, attempts: u32) -> TaskSpec {
    let text = format!(
        r#"{{"tasks": [{{"task_id": "t", "agent": "generic", "prompt_template": "p", "status": "{status}", "attempts": {attempts}}}]}}"#
    );
    TaskFile::parse(&text).expect("parses").tasks()[0].clone()
}

#[test]
fn a_recorded_end_is_adopted_only_when_newer_than_the_file() {
    // (file status, file attempts, last recorded attempt, adopted)
    let table = [
        // The file was never told the attempt started (the operator's copy predates it).
        ("pending", 0, 1, true),
        ("retryable", 1, 2, true),
        ("completed", 1, 3, true),
        // Started, its end never reached the file.
        ("running", 2, 2, true),
        ("running", 1, 1, true),
        // The file has that end already, or the operator's word on it.
        ("completed", 1, 1, false),
        ("retryable", 1, 1, false),
        ("failed", 2, 2, false),
        // `--retry`: pending again with the attempts so far; the file's word stands.
        ("pending", 2, 2, false),
        // The file is ahead of the recordings.
        ("running", 3, 2, false),
        ("completed", 3, 2, false),
        ("pending", 0, 0, false),
    ];
    for (status, attempts, recorded, adopted) in table {
        let task = task(status, attempts);
        assert_eq!(
            is_newer(&task, recorded),
            adopted,
            "file {status} after {attempts}, recorded attempt {recorded}"
        );
    }
}

#[test]
fn only_facts_with_an_end_are_a_recorded_end() {
    let result = json!({"completed_at": "2026-01-01T00:00:00Z", "attempt": 2});
    let full = json!({"attempt": 2, "verdict": "completed", "task_status": "completed", "task_result": result});
    assert_eq!(
        RecordedEnd::from_facts(&full),
        Some(RecordedEnd {
            attempt: 2,
            status: TaskStatus::Completed,
            result: result.clone()
        })
    );
    let without = [
        // An older herd's facts: no end recorded.
        json!({"attempt": 2, "verdict": "completed"}),
        json!({"attempt": 2, "task_status": "completed"}),
        json!({"attempt": 2, "task_status": "bogus", "task_result": result}),
        json!({"attempt": 2, "task_status": "running", "task_result": result}),
        json!({"attempt": 2, "task_status": "pending", "task_result": result}),
        json!({"attempt": 0, "task_status": "failed", "task_result": result}),
        json!({"attempt": -1, "task_status": "failed", "task_result": result}),
        json!({"task_status": "failed", "task_result": result}),
        json!({"attempt": 2, "task_status": "failed", "task_result": "text"}),
        json!([1, 2]),
    ];
    for facts in without {
        assert_eq!(RecordedEnd::from_facts(&facts), None, "{facts}");
    }
}

#[test]
fn the_notice_counts_results() {
    assert_eq!(describe(1), "recovered 1 result from runs/");
    assert_eq!(describe(3), "recovered 3 results from runs/");
}
