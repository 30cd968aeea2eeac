//! The operator's edits of the tasks file during a run: the writer thread found a version herd
//! did not write; this merges it (`TaskStore::merge`, the core's `TaskFile::merge`) and carries
//! out what follows for the queue. A new task is checked like at the start (a bad one fails
//! with `failed_config`, the rest of the edit stands); a task removed from the file while its
//! agent runs is cancelled (its agent ended), and its end is recorded in `runs/` and
//! `runs/herd.log` but not written to the file, which no longer has it. A disabled task is out of
//! scope (`in_scope`), so it does not start; a changed prompt, inputs or switches apply to the
//! next attempt, which reads the task then. A start still being prepared (`prepare`) or waiting
//! for the write that marks it running (its agent not launched) is withdrawn when its task is
//! disabled or changed, so the edit applies to every agent launched after herd read it.
//!
//! A version that does not parse is not merged: `file_invalid` holds where the error is (said
//! once when it breaks, `TasksFileInvalid`, and shown while it lasts, `tasks_file_problem`;
//! `TasksFileParses` when a version parses again), and
//! nothing is written (`commit`) until a version that parses comes, so no new agent launches
//! (a start waits for the write that records it). Attempts already running go on. If nothing
//! runs any more and the file still does not parse after `WAIT_FOR_VALID_FILE`, or the run ends
//! for another reason first, `write_beside` writes herd's version next to the file and the run
//! ends with exit code 3.

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, eyre};

use super::Engine;
use super::event::EngineEvent;
use crate::core::batch::Input;
use crate::core::task::TaskStatus;
use crate::run::store::format_problem;

/// What the dashboard's status line and the headless output say while the tasks file does not
/// parse (`problem`: `FILE:LINE:COL: message`).
pub fn does_not_parse_notice(problem: &str) -> String {
    format!("tasks file does not parse: {problem}; herd holds its changes until it does")
}

/// What they say once it parses again.
pub const PARSES_AGAIN_NOTICE: &str = "tasks file parses again: herd writes its changes";

/// How long a run with nothing left running waits for the tasks file to parse again before it
/// ends (herd's version written beside it).
const WAIT_FOR_VALID_FILE: Duration = Duration::from_secs(60);

impl Engine {
    /// Merges the operator's version the writer found, if there is one; true when one was
    /// merged (its text is to be written).
    pub(super) fn take_operator_version(&mut self) -> Result<bool> {
        let Some(theirs) = self.commits.writer().take_operator_version() else {
            return Ok(false);
        };
        match self.tasks.store.merge(&theirs) {
            Ok(merged) => {
                if self.tasks.file_invalid.take().is_some() {
                    tracing::info!("the tasks file parses again");
                    self.out.events.push(EngineEvent::TasksFileParses);
                }
                let summary = merged.to_string();
                tracing::info!(
                    added = merged.added.len(),
                    removed = merged.removed.len(),
                    "{summary}"
                );
                self.out
                    .events
                    .push(EngineEvent::TasksFileChanged { summary });
                self.carry_out(&merged)?;
                Ok(true)
            }
            Err(problems) => {
                let path = self.tasks.store.path().to_path_buf();
                let said = problems
                    .first()
                    .map(|p| format_problem(&path, p))
                    .unwrap_or_else(|| format!("{}: cannot be read", path.display()));
                // Said once when it breaks; where the error is now stays readable through
                // `tasks_file_problem` until a version parses.
                let since = match self.tasks.file_invalid.take() {
                    Some((before, since)) => {
                        if before != said {
                            tracing::info!("the tasks file still does not parse: {said}");
                        }
                        since
                    }
                    None => {
                        self.say_invalid(&said);
                        self.clock.at
                    }
                };
                self.tasks.file_invalid = Some((said, since));
                Ok(false)
            }
        }
    }

    fn say_invalid(&mut self, said: &str) {
        tracing::warn!("the tasks file does not parse; herd waits: {said}");
        self.out.events.push(EngineEvent::TasksFileInvalid {
            problem: said.to_string(),
        });
    }

    /// Where the operator's version of the tasks file does not parse (`FILE:LINE:COL: ...`),
    /// while it does not: the dashboard shows it until a version parses.
    pub(super) fn tasks_file_problem(&self) -> Option<&str> {
        self.tasks
            .file_invalid
            .as_ref()
            .map(|(said, _)| said.as_str())
    }

    /// When herd stops waiting for the tasks file to parse again, once nothing runs.
    pub(super) fn gives_up_on_file_at(&self) -> Option<Instant> {
        self.tasks
            .file_invalid
            .as_ref()
            .map(|(_, since)| *since + WAIT_FOR_VALID_FILE)
    }

    /// Nothing runs, and the file has not parsed for `WAIT_FOR_VALID_FILE`: the run ends.
    pub(super) fn gave_up_on_file(&self) -> bool {
        self.attempts.awaiting().count() == self.attempts.len()
            && self
                .gives_up_on_file_at()
                .is_some_and(|at| self.clock.at >= at)
    }

    /// What a merged version means for the queue (see the module header).
    pub(super) fn carry_out(&mut self, merged: &crate::core::taskfile::Merged) -> Result<()> {
        for &index in &merged.removed {
            let task_id = self.tasks.store.file().tasks()[index].task_id.clone();
            if self.attempts.has_task(index) {
                tracing::warn!(
                    task_id,
                    "removed from the tasks file while it ran: its agent is ended"
                );
                self.cancel_task(index, self.clock)?;
            } else {
                tracing::info!(task_id, "removed from the tasks file");
                self.batch
                    .handle(Input::RetryCleared { task: index }, self.clock.at);
            }
        }
        // A start still waiting for the write that marks it running has launched nothing: the
        // attempt that goes reads the task as the operator left it, or does not go.
        for &index in merged
            .disabled
            .iter()
            .chain(&merged.prompt_changed)
            .chain(&merged.other_changed)
        {
            self.withdraw_starts(Some(index));
            self.withdraw_preparation(index);
        }
        let path = self.tasks.store.path().to_path_buf();
        for problem in &merged.problems {
            let index = problem
                .task_id
                .as_deref()
                .and_then(|id| self.tasks.store.file().task_index(id));
            let said = format_problem(&path, problem);
            match index {
                Some(index) if self.may_fail_config(index) => self.fail_config(index, said)?,
                _ => tracing::warn!("tasks file: {said}"),
            }
        }
        // New tasks are checked like the tasks at the start (agent, inputs, host).
        for &index in &merged.added {
            let task = &self.tasks.store.file().tasks()[index];
            if self.tasks.in_scope(index)
                && task.status.is_runnable()
                && let Err(evidence) = self.plan_for(index, task.attempts + 1)
            {
                self.fail_config(index, evidence.to_string())?;
            }
        }
        Ok(())
    }

    /// A task with a problem fails its configuration unless an attempt of it runs or it is done.
    fn may_fail_config(&self, index: usize) -> bool {
        let status = self.tasks.store.file().tasks()[index].status;
        !self.attempts.has_task(index) && status.is_runnable() && status != TaskStatus::Running
    }

    /// The end of a run while the operator's version does not parse: their text stays, herd's
    /// version goes beside it, and the run ends with the message (exit code 3).
    pub(super) fn write_beside(&mut self) -> Result<()> {
        let problem = self
            .tasks
            .file_invalid
            .as_ref()
            .map_or_else(|| "it kept changing".to_string(), |(said, _)| said.clone());
        let beside = self
            .tasks
            .store
            .write_beside(self.clock.wall)
            .map_err(|e| eyre!("{e}"))?;
        tracing::error!(beside = %beside.display(), "the tasks file does not parse at the end: {problem}");
        Err(eyre!(
            "the tasks file was changed and does not parse ({problem}): herd left it as it is \
             and wrote its own version to {}; fix the file, or use that version, and run again",
            beside.display()
        ))
    }
}
