//! What a frontend reads of the batch: a read-only view (`BatchView`) the engine gives, with
//! each running attempt seen through a `LiveView`. The dashboard's frame, its mouse and answer
//! keys, the headless summary and the control socket read only this; none of them reaches into
//! the engine's store or its attempts' fields, and nothing here changes anything.
//!
//! `BatchView` is a trait so that a function that reads the batch says so in its signature:
//! `&Engine` and `&mut Engine` turn into `&dyn BatchView` where one is asked for, and such a
//! function can then call nothing that starts, ends or writes.

use std::path::Path;
use std::time::{Duration, Instant};

use super::api::PromptInfo;
use super::attempts::LiveAttempt;
use crate::core::attempt::Attempt;
use crate::core::profile::ProfileSet;
use crate::core::task::TaskSpec;
use crate::core::taskfile::TaskFile;

/// The batch as a frontend reads it: its tasks as the tasks file has them, what runs now, and
/// the queue's state.
pub trait BatchView {
    /// The tasks file as herd holds it: every task at its index, those the operator removed
    /// from the file during the run included (`TaskFile::is_removed`).
    fn file(&self) -> &TaskFile;

    /// Where the tasks file is.
    fn tasks_path(&self) -> &Path;

    /// The agents' profiles.
    fn profiles(&self) -> &ProfileSet;

    /// Whether task `index` belongs to this run (enabled, and picked by `--only` if given).
    fn in_scope(&self, index: usize) -> bool;

    /// The tasks a run's summary reports: the file's, or those `--only` names, disabled ones
    /// included (as `skipped`).
    fn reported_tasks(&self) -> Vec<usize>;

    /// Task `index`'s attempt while it runs or ends.
    fn live_attempt(&self, index: usize) -> Option<LiveView<'_>>;

    /// Every attempt that runs or ends, in no particular order.
    fn live_attempts(&self) -> Vec<LiveView<'_>>;

    /// When a retryable task `index` may start again, if it waits for a time.
    fn retry_at(&self, index: usize) -> Option<Instant>;

    /// How long task `index`'s last attempt of this run took, once it ended.
    fn last_attempt_duration(&self, index: usize) -> Option<Duration>;

    /// The session task `index`'s next attempt would continue, when its profile can resume.
    fn resumable_session(&self, index: usize) -> Option<String>;

    /// The prompt waiting for the operator in task `index`'s attempt, as the API shows it.
    fn waiting_prompt(&self, index: usize) -> Option<PromptInfo>;

    /// Every prompt waiting for the operator, in task order.
    fn waiting_prompts(&self) -> Vec<PromptInfo>;

    /// Task `index`'s screen as text (rows, cols, the visible rows) while an attempt runs.
    fn screen_text(&self, index: usize) -> Option<(u16, u16, String)>;

    /// The queue is paused: running agents go on, nothing new starts.
    fn is_paused(&self) -> bool;

    /// How many agents may run at once.
    fn concurrency(&self) -> usize;

    /// The operator stopped the run: running agents are being ended, nothing starts.
    fn is_stopping(&self) -> bool;

    /// Nothing runs and nothing in scope is left to start.
    fn is_done(&self) -> bool;

    /// Exit status of `herd run`: 0 every task in scope completed, 1 otherwise, 130 stopped.
    fn exit_code(&self) -> i32;

    /// Whether a task of this run waits for the operator's answers to its questions.
    fn any_needs_input(&self) -> bool;

    /// Where the operator's version of the tasks file does not parse, while it does not.
    fn tasks_file_problem(&self) -> Option<&str>;

    /// The hosts out of rotation at `now`: name, why, and for how long yet.
    fn hosts_out_of_rotation(&self, now: Instant) -> Vec<(String, String, Duration)>;

    /// Where attempts are recorded.
    fn runs_dir(&self) -> &Path;

    /// The tasks as the file has them (`file().tasks()`).
    fn tasks(&self) -> &[TaskSpec] {
        self.file().tasks()
    }

    /// Task `index`, if the file has that many.
    fn task(&self, index: usize) -> Option<&TaskSpec> {
        self.file().tasks().get(index)
    }

    /// The tasks of this run, in file order (`in_scope`).
    fn scoped_tasks(&self) -> Vec<usize> {
        (0..self.tasks().len())
            .filter(|&i| self.in_scope(i))
            .collect()
    }

    /// Whether task `index` is listed: not removed from the file by the operator during the
    /// run (such a task is held in memory only, its fields kept in case it comes back).
    fn is_listed(&self, index: usize) -> bool {
        !self.file().is_removed(index)
    }
}

/// One running (or ending) attempt, read-only.
#[derive(Clone, Copy)]
pub struct LiveView<'a> {
    pub(super) live: &'a LiveAttempt,
}

impl<'a> LiveView<'a> {
    /// The index of its task in the tasks file.
    pub fn task(self) -> usize {
        self.live.task
    }

    pub fn task_id(self) -> &'a str {
        &self.live.task_id
    }

    /// Its attempt number (1 for a task's first).
    pub fn number(self) -> u32 {
        self.live.number
    }

    /// When it started.
    pub fn started(self) -> Instant {
        self.live.started
    }

    /// The attempt's state machine, to read: its screen, the prompt waiting for the operator,
    /// the answers given, the auto-answer switches, what the agent's stream said.
    pub fn attempt(self) -> &'a Attempt {
        &self.live.attempt
    }

    /// A prompt waits for the operator.
    pub fn is_waiting(self) -> bool {
        self.live.attempt.waiting().is_some()
    }

    /// The id of the prompt waiting for the operator now.
    pub fn prompt_id(self) -> Option<&'a str> {
        self.live.prompts.current()
    }

    /// The host it runs on, when not here.
    pub fn host(self) -> Option<&'a str> {
        self.live.host()
    }

    /// Its pane as text: (rows, cols, the visible rows joined by newlines).
    pub fn screen_text(self) -> (u16, u16, String) {
        let screen = self.live.attempt.screen();
        let (rows, cols) = screen.size();
        let text = (screen.visible_rows().iter())
            .map(|r| r.trim_end())
            .collect::<Vec<_>>()
            .join("\n");
        (rows, cols, text)
    }

    /// The agent session it continues, when it resumed one.
    pub fn resumed_session(self) -> Option<&'a str> {
        self.live.plan().resumed_session.as_deref()
    }
}
