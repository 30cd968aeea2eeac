//! Which tasks a run will not start, and why, and which tasks the operator's
//! `herd run --retry failed|TASK_ID...` sends back to the queue. Pure: the tasks come in, a plan
//! and messages go out; the shell writes the changes and prints the messages.
//!
//! A retried task becomes `pending` with a fresh retry budget: its `attempts` so far are set
//! aside (`attempts_before_retry`), so `max_retries` counts from there, and attempt numbers (and
//! the recordings named after them) go on from where they were.

use crate::core::batch::retry::DEFAULT_RETRY_ON;
use crate::core::task::{FailureType, TaskSpec, TaskStatus};
use crate::core::taskfile::TaskFile;

/// The word that stands for every failed task in `--retry`.
pub const RETRY_FAILED: &str = "failed";

/// What `--retry` does to one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryReset {
    pub index: usize,
    pub task_id: String,
    /// Its status before (`failed`, `cancelled`, `retryable`).
    pub was: TaskStatus,
    /// Its attempts so far, set aside: the retry budget counts after them.
    pub attempts: u32,
}

impl RetryReset {
    /// What a retry does to `task` (task `index`): the reset `--retry` and the dashboard's `r`
    /// share.
    pub fn of(index: usize, task: &TaskSpec) -> RetryReset {
        RetryReset {
            index,
            task_id: task.task_id.clone(),
            was: task.status,
            attempts: task.attempts,
        }
    }

    /// Carries the reset out in the document: `pending`, the attempts so far set aside (a fresh
    /// retry budget), the retry wait dropped.
    pub fn apply(&self, file: &mut TaskFile) {
        file.set_status(self.index, TaskStatus::Pending);
        file.set_field(
            self.index,
            "attempts_before_retry",
            serde_json::json!(self.attempts),
        );
        file.remove_field(self.index, "retry_at");
    }

    /// `bad: failed after 1 attempt; pending again, with max_retries counted from attempt 2`.
    pub fn describe(&self) -> String {
        format!(
            "{}: {} after {}; pending again, with max_retries counted from attempt {}",
            self.task_id,
            self.was,
            attempts(self.attempts),
            self.attempts.saturating_add(1)
        )
    }
}

/// `--retry` as a whole: the tasks reset, and what to tell the operator about the rest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RetryPlan {
    pub resets: Vec<RetryReset>,
    /// Things worth saying that do not stop the run (`--retry failed` found none).
    pub notes: Vec<String>,
}

/// Plans `--retry` for `requested` (task ids, or `failed` for every enabled failed task) in a
/// run limited to `only` (empty: every task). Errors: one message per task that cannot be
/// retried (nothing is started then).
pub fn plan_retries(
    tasks: &[TaskSpec],
    requested: &[String],
    only: &[String],
) -> Result<RetryPlan, Vec<String>> {
    let in_run = |task: &TaskSpec| only.is_empty() || only.contains(&task.task_id);
    let mut plan = RetryPlan::default();
    let mut errors = Vec::new();
    let mut chosen: Vec<usize> = Vec::new();
    for word in requested {
        if word == RETRY_FAILED {
            let failed: Vec<usize> = (0..tasks.len())
                .filter(|&i| tasks[i].enabled && tasks[i].status == TaskStatus::Failed)
                .filter(|&i| in_run(&tasks[i]))
                .collect();
            if failed.is_empty() {
                plan.notes
                    .push("--retry failed: no enabled task is failed".into());
            }
            chosen.extend(failed);
            continue;
        }
        let Some(index) = tasks.iter().position(|t| &t.task_id == word) else {
            errors.push(format!("--retry {word}: no task has this task_id"));
            continue;
        };
        if !in_run(&tasks[index]) {
            errors.push(format!(
                "--retry {word}: it is not part of this run (--only names other tasks); add \
                 --only {word}"
            ));
            continue;
        }
        match refusal(&tasks[index]) {
            Some(why) => errors.push(format!("--retry {word}: {why}")),
            None if tasks[index].status == TaskStatus::Pending => {
                plan.notes
                    .push(format!("--retry {word}: it is pending; it runs anyway"));
            }
            None => chosen.push(index),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    for index in chosen {
        if plan.resets.iter().any(|r| r.index == index) {
            continue;
        }
        plan.resets.push(RetryReset::of(index, &tasks[index]));
    }
    Ok(plan)
}

/// Why `--retry` cannot send `task` back to the queue, if it cannot.
fn refusal(task: &TaskSpec) -> Option<String> {
    if !task.enabled {
        return Some(
            "it is disabled (\"enabled\": false in the tasks file); set it to true to run it"
                .into(),
        );
    }
    match task.status {
        TaskStatus::Completed => Some(
            "it is completed, and completed tasks never run again (`herd message --reopen` \
             sends it a follow-up)"
                .into(),
        ),
        TaskStatus::NeedsInput => Some(
            "it waits for answers to its questions: send them with `herd message` and it \
             resumes"
                .into(),
        ),
        TaskStatus::Running => Some(
            "it was left running by a herd that stopped; this run takes it up again without \
             --retry"
                .into(),
        ),
        TaskStatus::Pending
        | TaskStatus::Retryable
        | TaskStatus::Failed
        | TaskStatus::Cancelled => None,
    }
}

/// Why a run that was asked for `task` (`--only`) will not start it, if it will not.
pub fn why_it_will_not_run(task: &TaskSpec) -> Option<String> {
    let id = &task.task_id;
    if !task.enabled {
        return Some(format!(
            "{id} is disabled (\"enabled\": false in the tasks file), so it does not run"
        ));
    }
    let failure = task
        .result
        .as_ref()
        .and_then(|r| r.get("failure_type"))
        .and_then(serde_json::Value::as_str);
    match task.status {
        TaskStatus::Completed => Some(format!(
            "{id} is completed, and completed tasks never run again"
        )),
        TaskStatus::Failed => Some(format!(
            "{id} failed{} after {} and {}, so it does not run again; add --retry {id} to run \
             it with a fresh retry budget",
            failure.map(|f| format!(" ({f})")).unwrap_or_default(),
            attempts(task.attempts),
            match failure.and_then(FailureType::parse) {
                Some(kind) if !retried(task, kind) => format!("{kind} is not retried"),
                _ => "is out of retries".to_string(),
            },
        )),
        TaskStatus::Cancelled => Some(format!(
            "{id} was cancelled, so it does not run; add --retry {id} to run it again"
        )),
        TaskStatus::NeedsInput => Some(format!(
            "{id} waits for answers to its questions; send them with `herd message --tasks \
             FILE {id} TEXT` and the next run resumes it"
        )),
        TaskStatus::Pending | TaskStatus::Retryable | TaskStatus::Running => None,
    }
}

/// Whether a failure of `kind` is retried for `task` (its `retry_on`, else the default list).
fn retried(task: &TaskSpec, kind: FailureType) -> bool {
    task.retry_on
        .as_deref()
        .unwrap_or(&DEFAULT_RETRY_ON)
        .contains(&kind)
}

fn attempts(n: u32) -> String {
    match n {
        1 => "1 attempt".into(),
        n => format!("{n} attempts"),
    }
}

#[cfg(test)]
#[path = "rerun_tests.rs"]
mod tests;
