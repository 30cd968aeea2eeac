//! The operator's edits of the tasks file during a run: the writer thread found a version herd
//! did not write; `Tasks` merges it (`TaskStore::merge`, the core's `TaskFile::merge`) and the
//! engine carries out what follows for the queue (`Engine::carry_out`). A new task is checked
//! like at the start (a bad one fails with `failed_config`, the rest of the edit stands); a task
//! removed from the file while its agent runs is cancelled (its agent ended), and its end is
//! recorded in `runs/` and `runs/herd.log` but not written to the file, which no longer has it.
//! A disabled task is out of scope (`in_scope`), so it does not start; a changed prompt, inputs
//! or switches apply to the next attempt, which reads the task then. A start still being
//! prepared (`prepare`) or waiting for the write that marks it running (its agent not
//! launched) is withdrawn when its task is disabled or changed, so the edit applies to every
//! agent launched after herd read it.
//!
//! A version that does not parse is not merged: `file_invalid` holds where the error is (said
//! once when it breaks, `TasksFileInvalid`, and shown while it lasts, `file_problem`;
//! `TasksFileParses` when a version parses again), and
//! nothing is written (`commit`) until a version that parses comes, so no new agent launches
//! (a start waits for the write that records it). Attempts already running go on. If nothing
//! runs any more and the file still does not parse after `WAIT_FOR_VALID_FILE`, or the run ends
//! for another reason first, `write_beside` writes herd's version next to the file and the run
//! ends with exit code 3.

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, eyre};

use super::Tasks;
use crate::core::task::TaskStatus;
use crate::core::taskfile::Merged;
use crate::run::engine::attempts::Attempts;
use crate::run::engine::commit::Commits;
use crate::run::engine::event::EngineEvent;
use crate::run::engine::outgoing::Outgoing;
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

impl Tasks {
    /// Merges the operator's version the writer found, if there is one and it parses (its
    /// text is then to be written); one that does not parse is recorded (`file_invalid`).
    pub(crate) fn take_operator_version(
        &mut self,
        commits: &Commits,
        out: &mut Outgoing,
        at: Instant,
    ) -> Option<Merged> {
        let theirs = commits.writer().take_operator_version()?;
        match self.store.merge(&theirs) {
            Ok(merged) => {
                if self.file_invalid.take().is_some() {
                    tracing::info!("the tasks file parses again");
                    out.events.push(EngineEvent::TasksFileParses);
                }
                let summary = merged.to_string();
                tracing::info!(
                    added = merged.added.len(),
                    removed = merged.removed.len(),
                    "{summary}"
                );
                out.events.push(EngineEvent::TasksFileChanged { summary });
                Some(merged)
            }
            Err(problems) => {
                let path = self.store.path().to_path_buf();
                let said = problems
                    .first()
                    .map(|p| format_problem(&path, p))
                    .unwrap_or_else(|| format!("{}: cannot be read", path.display()));
                // Said once when it breaks; where the error is now stays readable through
                // `file_problem` until a version parses.
                let since = match self.file_invalid.take() {
                    Some((before, since)) => {
                        if before != said {
                            tracing::info!("the tasks file still does not parse: {said}");
                        }
                        since
                    }
                    None => {
                        tracing::warn!("the tasks file does not parse; herd waits: {said}");
                        let problem = said.clone();
                        out.events.push(EngineEvent::TasksFileInvalid { problem });
                        at
                    }
                };
                self.file_invalid = Some((said, since));
                None
            }
        }
    }

    /// Where the operator's version of the tasks file does not parse (`FILE:LINE:COL: ...`),
    /// while it does not: the dashboard shows it until a version parses.
    pub(crate) fn file_problem(&self) -> Option<&str> {
        self.file_invalid.as_ref().map(|(said, _)| said.as_str())
    }

    /// When herd stops waiting for the tasks file to parse again, once nothing runs.
    pub(crate) fn gives_up_on_file_at(&self) -> Option<Instant> {
        (self.file_invalid.as_ref()).map(|(_, since)| *since + WAIT_FOR_VALID_FILE)
    }

    /// Nothing runs, and the file has not parsed for `WAIT_FOR_VALID_FILE` at `at`: the run
    /// ends.
    pub(crate) fn gave_up_on_file(&self, attempts: &Attempts, at: Instant) -> bool {
        attempts.awaiting().count() == attempts.len()
            && self.gives_up_on_file_at().is_some_and(|end| at >= end)
    }

    /// A task with a problem fails its configuration unless an attempt of it runs or it is done.
    pub(crate) fn may_fail_config(&self, index: usize, attempts: &Attempts) -> bool {
        let status = self.store.file().tasks()[index].status;
        !attempts.has_task(index) && status.is_runnable() && status != TaskStatus::Running
    }

    /// The end of a run while the operator's version does not parse: their text stays, herd's
    /// version goes beside it, and the run ends with the message (exit code 3).
    pub(crate) fn write_beside(&mut self, wall: jiff::Timestamp) -> Result<()> {
        let problem = (self.file_invalid.as_ref())
            .map_or_else(|| "it kept changing".to_string(), |(said, _)| said.clone());
        let beside = self.store.write_beside(wall).map_err(|e| eyre!("{e}"))?;
        tracing::error!(beside = %beside.display(), "the tasks file does not parse at the end: {problem}");
        Err(eyre!(
            "the tasks file was changed and does not parse ({problem}): herd left it as it is \
             and wrote its own version to {}; fix the file, or use that version, and run again",
            beside.display()
        ))
    }
}
