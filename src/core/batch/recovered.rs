//! Results the tasks file lost and `runs/` kept: when a run ends while the operator's version
//! of the tasks file does not parse, herd leaves their text as it is, and the operator may then
//! fix their file and run again. The verdicts of the attempts that ended in between are then in
//! `runs/<task_id>/attempt_<n>.json` (`task_status`, `task_result`), not in the file. At the
//! start of the next run, the last recorded attempt of a task is adopted when it is newer than
//! what the file says: its number is greater than the file's `attempts`, or equal while the
//! file still says `running` (the attempt started, its end never reached the file).
//!
//! Everything else stays as the file says: a task the file has as `completed`, `failed`,
//! `retryable`, `pending` (`--retry`) with the same attempt number is the file's word, and a
//! task found `running` whose attempt has no recorded end is interrupted as before. Pure: the
//! shell reads the records and writes what is adopted.

use serde_json::Value;

use crate::core::task::{TaskSpec, TaskStatus};

/// The end of a task's last attempt as its facts file recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEnd {
    pub attempt: u32,
    /// The task's status that attempt's end decided.
    pub status: TaskStatus,
    /// The task's `result` that attempt's end wrote.
    pub result: Value,
}

impl RecordedEnd {
    /// The recorded end in an attempt's facts (`attempt_<n>.json`), when it has one: facts
    /// written by an older herd, or cut short, have none.
    pub fn from_facts(facts: &Value) -> Option<RecordedEnd> {
        let attempt = u32::try_from(facts.get("attempt")?.as_u64()?).ok()?;
        let status = TaskStatus::parse(facts.get("task_status")?.as_str()?)?;
        let result = facts.get("task_result")?.clone();
        let ended = !matches!(status, TaskStatus::Pending | TaskStatus::Running);
        (ended && attempt > 0 && result.is_object()).then_some(RecordedEnd {
            attempt,
            status,
            result,
        })
    }
}

/// Whether attempt `recorded` (the last one `runs/` has) is newer than what the file says of
/// `task` (see the module header). Only then are its facts read.
pub fn is_newer(task: &TaskSpec, recorded: u32) -> bool {
    recorded > task.attempts || (recorded == task.attempts && task.status == TaskStatus::Running)
}

/// What a run's start says of the results it took from `runs/`.
pub fn describe(count: usize) -> String {
    match count {
        1 => "recovered 1 result from runs/".to_string(),
        n => format!("recovered {n} results from runs/"),
    }
}

#[cfg(test)]
#[path = "recovered_tests.rs"]
mod tests;
