//! Attempts cut short: tasks a herd that died left `running` come back as `retryable`, a
//! resumed batch keeps its backoff, and the operator's stop, herd giving up and the last
//! kill end the agents that run.

use std::time::Duration;

use color_eyre::eyre::Result;
use serde_json::json;

use super::Engine;
use super::event::EngineEvent;
use crate::run::clock::Now;

use crate::core::attempt::Event;
use crate::core::batch::{Input, QueueCommand};
use crate::core::recovered;
use crate::core::task::TaskStatus;
use crate::run::jobs::{self, Job};
use crate::run::{hygiene, outcome};

impl Engine {
    /// Results `runs/` kept and the tasks file does not have (a run that ended while the
    /// operator's version did not parse): adopted into the file (`core::recovered`), before
    /// the tasks found `running` are taken as interrupted.
    pub(super) fn recover_from_runs(&mut self) {
        let runs_dir = self.tasks.opts.runs_dir.clone();
        let mut recovered = Vec::new();
        for index in 0..self.tasks.store.file().tasks().len() {
            let task = &self.tasks.store.file().tasks()[index];
            if self.tasks.store.file().is_removed(index) {
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
            let file = self.tasks.store.file_mut();
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
        self.out.events.push(EngineEvent::RecoveredFromRuns {
            summary,
            tasks: recovered,
        });
    }

    pub(super) fn recover_interrupted(&mut self) -> Result<()> {
        let now = self.clock.wall;
        for index in self.tasks.scope() {
            let task = &self.tasks.store.file().tasks()[index];
            if task.status != TaskStatus::Running {
                continue;
            }
            let (task_id, attempt) = (task.task_id.clone(), task.attempts);
            let mut result = task.result.clone().unwrap_or_else(|| json!({}));
            if let Some(obj) = result.as_object_mut() {
                obj.insert("completed_at".into(), json!(outcome::utc_timestamp(now)));
                obj.insert("interrupted".into(), json!(true));
                obj.insert(
                    "failure_evidence".into(),
                    json!(format!(
                        "attempt {attempt} was interrupted: herd stopped while it ran"
                    )),
                );
            }
            let file = self.tasks.store.file_mut();
            file.set_status(index, TaskStatus::Retryable);
            file.set_result(index, result);
            self.out
                .events
                .push(EngineEvent::Resumed { task_id, attempt });
        }
        Ok(())
    }

    /// A resumed batch keeps the backoff: `retry_at` in the file becomes the wait.
    pub(super) fn restore_retry_times(&mut self, now: Now) {
        for index in self.tasks.scope() {
            let task = &self.tasks.store.file().tasks()[index];
            if let (TaskStatus::Retryable, Some(at)) = (task.status, task.retry_at) {
                let wait = Duration::try_from(at.duration_since(now.wall)).unwrap_or_default();
                let at = now.at + wait;
                self.batch
                    .handle(Input::RetryAt { task: index, at }, now.at);
            }
        }
    }

    /// The operator stops herd: every running agent is ended and its task goes back to
    /// `retryable`; nothing new starts.
    pub fn stop(&mut self, now: Now) -> Result<()> {
        let now = self.turn(now);
        self.drive(Input::Operator(QueueCommand::Stop), now)?;
        // Not started yet (nothing marked them `running`): they stay as they are.
        self.attempts.drop_preparing();
        // Prepared, waiting for the write that marks them `running`: back to what they were.
        self.withdraw_starts(None);
        let keys: Vec<u64> = self.attempts.live().map(|(key, _)| key).collect();
        for key in keys {
            if let Some(live) = self.attempts.get_live_mut(key) {
                live.stopped_by_operator = true;
                let at = now.saturating_duration_since(live.started);
                let effects = live.attempt.handle(Event::Cancel, at);
                self.apply_effects(key, effects, at)?;
            }
        }
        Ok(())
    }

    /// herd cannot go on (`reason`: a write of the tasks file or of a recording failed): every
    /// agent is killed and its task written back as `retryable`, where the file can still be
    /// written (the write is atomic either way, so the file stays valid).
    pub fn abandon(&mut self, reason: &str, now: Now) {
        let now = self.turn(now);
        // A stop has no effects to carry out: nothing can fail here.
        self.batch.handle(Input::Operator(QueueCommand::Stop), now);
        self.kill_all();
        self.withdraw_starts(None);
        let ended_at = outcome::utc_timestamp(self.clock.wall);
        let in_flight: Vec<(usize, u32)> = (self.attempts.live_then_ending())
            .map(|l| (l.task, l.number))
            .collect();
        let file = self.tasks.store.file_mut();
        for (index, attempt) in in_flight {
            // Like a crash (`recover_interrupted`): what the result already holds is kept.
            let mut result = file.tasks()[index]
                .result
                .clone()
                .unwrap_or_else(|| json!({}));
            if let Some(fields) = result.as_object_mut() {
                fields.insert("completed_at".into(), json!(ended_at));
                fields.insert("interrupted".into(), json!(true));
                fields.insert(
                    "failure_evidence".into(),
                    json!(format!(
                        "attempt {attempt} was interrupted: herd could not go on ({reason})"
                    )),
                );
            }
            file.set_status(index, TaskStatus::Retryable);
            file.set_result(index, result);
        }
        if let Err(error) = self.write_last(super::commit::LAST_WRITE_WAIT) {
            tracing::error!("cannot write the tasks in flight back as retryable: {error:#}");
        }
    }

    /// Kills every agent's process group at once (a second Ctrl-C, or leaving for good), and
    /// every process the attempts started, wherever it went.
    pub fn kill_all(&mut self) {
        for (_, live) in self.attempts.live() {
            live.process.signal(crate::core::attempt::StopSignal::Kill);
        }
        // The hosts' sweeps run at once, each on its own thread, while the local ones run here
        // (a sweep that gets no thread runs here too, before them).
        let on_hosts: Vec<_> = self
            .attempts
            .live()
            .filter_map(|(key, live)| {
                let sweep = super::hosts::sweep_on_host(live)?;
                let job = jobs::spawn_thread(format!("leave-sweep-{key}"), sweep)
                    .unwrap_or_else(|not| Job::done((not.work)()));
                Some((live.task_id.clone(), job))
            })
            .collect();
        for (_, live) in self.attempts.live() {
            let ended = hygiene::end_attempt(
                &live.cookie,
                &live.known_processes,
                live.process.start_time,
                Duration::ZERO,
            );
            for process in &ended {
                tracing::info!(task = %live.task_id, attempt = live.number, "killed on leaving: {}", hygiene::describe(process));
            }
        }
        for (task_id, sweep) in on_hosts {
            for process in sweep.join().unwrap_or_default() {
                tracing::info!(task = %task_id, "ended on its host on leaving: {}", hygiene::describe(&process));
            }
        }
    }
}
