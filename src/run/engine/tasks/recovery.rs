//! Tasks cut short by a herd that died: results `runs/` kept and the tasks file does not have
//! are adopted, tasks left `running` come back as `retryable` with the interruption recorded,
//! and a resumed batch keeps its backoff. herd giving up (`Engine::abandon`) records its
//! attempts in flight the same way (`interrupt`).

use std::time::Duration;

use serde_json::json;

use super::Tasks;
use crate::core::batch::{Batch, Input};
use crate::core::recovered;
use crate::core::task::TaskStatus;
use crate::run::clock::Now;
use crate::run::engine::event::EngineEvent;
use crate::run::engine::outgoing::Outgoing;
use crate::run::outcome;

impl Tasks {
    /// Results `runs/` kept and the tasks file does not have (a run that ended while the
    /// operator's version did not parse): adopted into the file (`core::recovered`), before
    /// the tasks found `running` are taken as interrupted.
    pub(crate) fn recover_from_runs(&mut self, out: &mut Outgoing) {
        let runs_dir = self.opts.runs_dir.clone();
        let mut recovered = Vec::new();
        for index in 0..self.store.file().tasks().len() {
            let task = &self.store.file().tasks()[index];
            if self.store.file().is_removed(index) {
                continue;
            }
            let last = crate::run::runs_dir::last_recorded_attempt(&runs_dir, &task.task_id);
            let Some(end) = last
                .filter(|&n| recovered::is_newer(task, n))
                .and_then(|n| crate::run::runs_dir::recorded_end(&runs_dir, &task.task_id, n))
            else {
                continue;
            };
            let task_id = task.task_id.clone();
            tracing::info!(task = %task_id, attempt = end.attempt, status = %end.status, "the tasks file did not have this attempt's end: taken from runs/");
            let file = self.store.file_mut();
            file.set_status(index, end.status);
            file.set_attempts(index, end.attempt);
            file.set_result(index, end.result);
            file.remove_field(index, "retry_at");
            recovered.push((task_id, end.attempt, end.status));
        }
        if recovered.is_empty() {
            return;
        }
        let summary = recovered::describe(recovered.len());
        tracing::info!("{summary}");
        out.events.push(EngineEvent::RecoveredFromRuns {
            summary,
            tasks: recovered,
        });
    }

    /// The tasks in scope a herd that died left `running`: `retryable`, the interruption
    /// recorded (`interrupt`).
    pub(crate) fn recover_interrupted(&mut self, out: &mut Outgoing, wall: jiff::Timestamp) {
        for index in self.scope() {
            let task = &self.store.file().tasks()[index];
            if task.status != TaskStatus::Running {
                continue;
            }
            let (task_id, attempt) = (task.task_id.clone(), task.attempts);
            let why = format!("attempt {attempt} was interrupted: herd stopped while it ran");
            self.interrupt(index, why, wall);
            out.events.push(EngineEvent::Resumed { task_id, attempt });
        }
    }

    /// Task `index`'s attempt was cut short at `wall` (`why`): the task goes back to
    /// `retryable`, and what its result already holds is kept.
    pub(crate) fn interrupt(&mut self, index: usize, why: String, wall: jiff::Timestamp) {
        let file = self.store.file_mut();
        let mut result = (file.tasks()[index].result.clone()).unwrap_or_else(|| json!({}));
        if let Some(fields) = result.as_object_mut() {
            fields.insert("completed_at".into(), json!(outcome::utc_timestamp(wall)));
            fields.insert("interrupted".into(), json!(true));
            fields.insert("failure_evidence".into(), json!(why));
        }
        file.set_status(index, TaskStatus::Retryable);
        file.set_result(index, result);
    }

    /// A resumed batch keeps the backoff: `retry_at` in the file becomes the wait.
    pub(crate) fn restore_retry_times(&self, batch: &mut Batch, now: Now) {
        for index in self.scope() {
            let task = &self.store.file().tasks()[index];
            if let (TaskStatus::Retryable, Some(at)) = (task.status, task.retry_at) {
                let wait = Duration::try_from(at.duration_since(now.wall)).unwrap_or_default();
                let at = now.at + wait;
                batch.handle(Input::RetryAt { task: index, at }, now.at);
            }
        }
    }
}
