use super::*;
use crate::core::taskfile::TaskFile;

/// One task per status (and a disabled failed one), as a tasks file would hold them.
fn tasks() -> Vec<TaskSpec> {
    let task = |id: &str, status: &str, extra: &str| {
        format!(
            r#"{{"task_id": "{id}", "agent": "generic", "prompt_template": "p", "status": "{status}", "attempts": 2{extra}}}"#
        )
    };
    let list = [
        task("pend", "pending", ""),
        task("retry", "retryable", ""),
        task(
            "fail",
            "failed",
            r#", "result": {"failure_type": "failed_timeout"}"#,
        ),
        task(
            "fail2",
            "failed",
            r#", "result": {"failure_type": "failed_auth"}"#,
        ),
        task("off", "failed", r#", "enabled": false"#),
        task("done", "completed", ""),
        task("cancel", "cancelled", ""),
        task("asks", "needs_input", ""),
        task("stale", "running", ""),
    ];
    let text = format!(r#"{{"tasks": [{}]}}"#, list.join(","));
    TaskFile::parse(&text).expect("parses").tasks().to_vec()
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn reset_ids(plan: &RetryPlan) -> Vec<(&str, TaskStatus, u32)> {
    plan.resets
        .iter()
        .map(|r| (r.task_id.as_str(), r.was, r.attempts))
        .collect()
}

#[test]
fn retry_failed_takes_every_enabled_failed_task_once() {
    let plan = plan_retries(&tasks(), &words(&["failed", "fail"]), &[]).expect("a plan");
    assert_eq!(
        reset_ids(&plan),
        [
            ("fail", TaskStatus::Failed, 2),
            ("fail2", TaskStatus::Failed, 2)
        ]
    );
    assert!(plan.notes.is_empty());
    assert_eq!(
        plan.resets[0].describe(),
        "fail: failed after 2 attempts; pending again, with max_retries counted from attempt 3"
    );
}

#[test]
fn retry_by_id_takes_failed_cancelled_and_retryable_tasks() {
    let plan = plan_retries(&tasks(), &words(&["cancel", "retry", "pend"]), &[]).expect("a plan");
    assert_eq!(
        reset_ids(&plan),
        [
            ("cancel", TaskStatus::Cancelled, 2),
            ("retry", TaskStatus::Retryable, 2)
        ]
    );
    assert_eq!(plan.notes, ["--retry pend: it is pending; it runs anyway"]);
}

#[test]
fn retry_refuses_what_cannot_run_again_and_says_why() {
    let cases = [
        ("nope", "--retry nope: no task has this task_id"),
        ("off", "--retry off: it is disabled"),
        (
            "done",
            "--retry done: it is completed, and completed tasks never run again",
        ),
        (
            "asks",
            "--retry asks: it waits for answers to its questions",
        ),
        (
            "stale",
            "--retry stale: it was left running by a herd that stopped",
        ),
    ];
    for (id, expected) in cases {
        let errors = plan_retries(&tasks(), &words(&["fail", id]), &[]).expect_err(id);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with(expected), "{id}: {}", errors[0]);
    }
}

#[test]
fn with_only_retry_failed_keeps_to_the_run_and_a_named_task_outside_it_is_refused() {
    let only = words(&["fail2", "cancel"]);
    let plan = plan_retries(&tasks(), &words(&["failed", "cancel"]), &only).expect("a plan");
    assert_eq!(
        reset_ids(&plan),
        [
            ("fail2", TaskStatus::Failed, 2),
            ("cancel", TaskStatus::Cancelled, 2)
        ]
    );
    let errors = plan_retries(&tasks(), &words(&["fail"]), &only).expect_err("outside");
    assert_eq!(
        errors,
        ["--retry fail: it is not part of this run (--only names other tasks); add --only fail"]
    );
}

#[test]
fn retry_failed_with_nothing_failed_is_a_note() {
    let none: Vec<TaskSpec> = tasks()
        .into_iter()
        .filter(|t| t.status != TaskStatus::Failed || !t.enabled)
        .collect();
    let plan = plan_retries(&none, &words(&["failed"]), &[]).expect("a plan");
    assert!(plan.resets.is_empty());
    assert_eq!(plan.notes, ["--retry failed: no enabled task is failed"]);
}

#[test]
fn only_says_why_a_task_will_not_run() {
    let tasks = tasks();
    let why = |id: &str| {
        let task = tasks.iter().find(|t| t.task_id == id).expect(id);
        why_it_will_not_run(task)
    };
    for id in ["pend", "retry", "stale"] {
        assert_eq!(why(id), None, "{id} runs");
    }
    let expected = [
        (
            "fail",
            "fail failed (failed_timeout) after 2 attempts and is out of retries, so it does \
             not run again; add --retry fail to run it with a fresh retry budget",
        ),
        (
            "fail2",
            "fail2 failed (failed_auth) after 2 attempts and failed_auth is not retried, so \
             it does not run again; add --retry fail2",
        ),
        (
            "off",
            "off is disabled (\"enabled\": false in the tasks file)",
        ),
        (
            "done",
            "done is completed, and completed tasks never run again",
        ),
        (
            "cancel",
            "cancel was cancelled, so it does not run; add --retry cancel",
        ),
        ("asks", "asks waits for answers to its questions"),
    ];
    for (id, start) in expected {
        let text = why(id).unwrap_or_default();
        assert!(text.starts_with(start), "{id}: {text}");
    }
}

#[test]
fn the_budget_counts_after_the_attempts_set_aside() {
    let text = r#"{"tasks": [{"task_id": "t", "agent": "generic", "prompt_template": "p",
        "max_retries": 1, "attempts": 4, "attempts_before_retry": 3, "status": "pending"}]}"#;
    let file = TaskFile::parse(text).expect("parses");
    let task = &file.tasks()[0];
    assert_eq!(task.attempts_before_retry, 3);
    assert_eq!(task.last_retried_attempt(), 4);
    let rules = crate::core::batch::outcome::RetryRules::of(task);
    use crate::core::task::FailureType;
    // Attempt 4 (the first after the reset) is retried; attempt 5 is the last.
    assert_eq!(
        crate::core::batch::retry::status_after(
            Some(FailureType::Timeout),
            4,
            rules.max_retries,
            None
        ),
        TaskStatus::Retryable
    );
    assert_eq!(
        crate::core::batch::retry::status_after(
            Some(FailureType::Timeout),
            5,
            rules.max_retries,
            None
        ),
        TaskStatus::Failed
    );
}
