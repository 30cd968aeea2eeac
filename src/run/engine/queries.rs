//! The engine's reads of its store, attempts and queue (whether the run is done, its exit
//! code), which frontends reach through `view` (`BatchView`), and the few switches they flip
//! (pause, concurrency). Nothing here starts, ends or writes anything, except that draining
//! the events hands the `notify` command its events (`notify`: to a worker, never waited for).
//!
//! `store`, `live` and `live_for_task` are `pub(crate)`, not private, only for the dashboard's
//! action code that still reads through them (and tests); frontends read through `view`.

use std::time::Instant;

use super::Engine;
use super::attempts::LiveAttempt;
use super::event::EngineEvent;
use crate::core::batch::{Input, QueueCommand};
use crate::core::task::TaskStatus;

impl Engine {
    /// The events since last asked. Every event leaves the engine here, so this is also where
    /// the `notify` command hears of them (and of the prompts waiting now).
    pub fn drain_events(&mut self) -> Vec<EngineEvent> {
        let events = std::mem::take(&mut self.out.events);
        self.notify_turn(&events);
        events
    }

    /// The store itself, for tests that look inside; frontends read through `view()`.
    #[cfg(test)]
    pub(crate) fn store(&self) -> &crate::run::store::TaskStore {
        &self.tasks.store
    }

    /// Every attempt running or ending. Outside the engine, tests only: frontends read
    /// `view().live_attempts()`.
    pub(crate) fn live(&self) -> impl Iterator<Item = &LiveAttempt> {
        self.attempts.live_then_ending()
    }

    pub(crate) fn live_for_task(&self, index: usize) -> Option<&LiveAttempt> {
        self.attempts.with_agent_of_task(index)
    }

    pub fn retry_at(&self, index: usize) -> Option<Instant> {
        self.batch.queue().retry_at(index)
    }

    pub fn is_stopping(&self) -> bool {
        self.batch.queue().is_stopping()
    }

    pub fn set_paused(&mut self, paused: bool) {
        let command = if paused {
            QueueCommand::Pause
        } else {
            QueueCommand::Resume
        };
        // Pausing and resuming have no effects to carry out; the next turn fills the slots.
        self.batch.handle(Input::Operator(command), self.clock.at);
    }

    pub fn is_paused(&self) -> bool {
        self.batch.queue().is_paused()
    }

    pub fn concurrency(&self) -> usize {
        self.tasks.opts.concurrency
    }

    pub fn set_concurrency(&mut self, n: usize) {
        self.tasks.opts.concurrency = n.clamp(1, Self::MAX_CONCURRENCY);
    }

    /// Nothing runs and nothing in scope is left to start.
    pub fn is_done(&self) -> bool {
        self.gave_up_on_file()
            || self.attempts.is_empty()
                && (self.batch.queue().is_stopping()
                    || !self
                        .tasks
                        .scope_iter()
                        .any(|i| self.tasks.store.file().tasks()[i].status.is_runnable()))
    }

    /// Whether a task of this run waits for the operator's answers to its questions.
    pub fn any_needs_input(&self) -> bool {
        self.tasks
            .scope_iter()
            .any(|i| self.tasks.store.file().tasks()[i].status == TaskStatus::NeedsInput)
    }

    /// Exit status of `herd run`: 0 every task in scope completed, 1 otherwise, 130 stopped.
    pub fn exit_code(&self) -> i32 {
        if self.batch.queue().is_stopping() {
            return 130;
        }
        let all_done = self
            .tasks
            .scope_iter()
            .all(|i| self.tasks.store.file().tasks()[i].status == TaskStatus::Completed);
        if all_done { 0 } else { 1 }
    }

    /// The tasks in scope (enabled, and of `--only` when given).
    pub fn scoped_tasks(&self) -> Vec<usize> {
        self.tasks.scope()
    }

    /// The tasks a run's summary reports: the file's, or those `--only` names, disabled ones
    /// included (as `skipped`), so that it counts as `herd status` does.
    pub(super) fn reported_tasks(&self) -> Vec<usize> {
        let only = &self.tasks.opts.only;
        (0..self.tasks.store.file().tasks().len())
            .filter(|&i| {
                only.is_empty() || only.contains(&self.tasks.store.file().tasks()[i].task_id)
            })
            .collect()
    }
}
