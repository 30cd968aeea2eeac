//! The engine's part that holds the tasks file: the store with its document, the profiles and
//! the run's options, and what the run knows of each task beyond the file (the survivors of an
//! interrupted attempt, how long its last attempt took, whether the operator's version parses).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::options::EngineOptions;
use crate::core::profile::ProfileSet;
use crate::core::task::TaskStatus;
use crate::run::hygiene;
use crate::run::launch::last_session;
use crate::run::store::TaskStore;

pub mod edits;
pub(super) mod operator;
mod recovery;

pub(super) struct Tasks {
    pub(super) store: TaskStore,
    pub(super) profiles: ProfileSet,
    pub(super) opts: EngineOptions,
    /// `hygiene::file_tag` of the tasks file: the prefix of every cookie this run hands out.
    pub(super) file_tag: String,
    /// Per task: the survivors of its interrupted attempt ended at start, carried into the
    /// record of its next attempt so the record keeps saying so.
    pub(super) survivors: HashMap<usize, serde_json::Value>,
    /// Per task: how long its last attempt of this run took.
    pub(super) last_durations: HashMap<usize, Duration>,
    /// The operator's version of the tasks file does not parse: where (`FILE:LINE:COL: ...`)
    /// and since when. Nothing is written meanwhile (`edits`).
    pub(super) file_invalid: Option<(String, Instant)>,
}

impl Tasks {
    pub(super) fn new(store: TaskStore, profiles: ProfileSet, opts: EngineOptions) -> Tasks {
        Tasks {
            file_tag: hygiene::file_tag(store.path()),
            store,
            profiles,
            opts,
            survivors: HashMap::new(),
            last_durations: HashMap::new(),
            file_invalid: None,
        }
    }

    /// Whether task `index` belongs to this run (enabled, and picked by `--only` if given).
    pub(super) fn in_scope(&self, index: usize) -> bool {
        let file = self.store.file();
        let Some(task) = file.tasks().get(index) else {
            return false;
        };
        task.enabled
            && !file.is_removed(index)
            && (self.opts.only.is_empty() || self.opts.only.contains(&task.task_id))
    }

    pub(super) fn scope(&self) -> Vec<usize> {
        self.scope_iter().collect()
    }

    /// `scope` without collecting it: the checks made every turn of the loop walk the whole
    /// file, which must not cost an allocation per task.
    pub(super) fn scope_iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.store.file().tasks().len()).filter(|&i| self.in_scope(i))
    }

    /// The tasks a run's summary reports: the file's, or those `--only` names, disabled ones
    /// included (as `skipped`), so that it counts as `herd status` does.
    pub(super) fn reported(&self) -> Vec<usize> {
        let (only, tasks) = (&self.opts.only, self.store.file().tasks());
        (0..tasks.len())
            .filter(|&i| only.is_empty() || only.contains(&tasks[i].task_id))
            .collect()
    }

    /// Whether a task in scope has status `status`.
    pub(super) fn any_in_scope_is(&self, status: impl Fn(TaskStatus) -> bool) -> bool {
        let tasks = self.store.file().tasks();
        self.scope_iter().any(|i| status(tasks[i].status))
    }

    /// Task `index`'s id and status, if the file has that many tasks.
    pub(super) fn label(&self, index: usize) -> Option<(String, TaskStatus)> {
        let task = self.store.file().tasks().get(index)?;
        Some((task.task_id.clone(), task.status))
    }

    /// The session task `index`'s next attempt would continue: its last session id, when its
    /// profile knows how to resume.
    pub(super) fn resumable_session(&self, index: usize) -> Option<String> {
        let task = self.store.file().tasks().get(index)?;
        let profile = self.profiles.get(&task.agent)?;
        if !profile.can_resume() {
            return None;
        }
        last_session(task)
    }
}
