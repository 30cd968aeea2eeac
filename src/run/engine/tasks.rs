//! The engine's part that holds the tasks file: the store with its document, the profiles and
//! the run's options, and what the run knows of each task beyond the file (the survivors of an
//! interrupted attempt, how long its last attempt took, whether the operator's version parses).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::options::EngineOptions;
use crate::core::profile::ProfileSet;
use crate::run::hygiene;
use crate::run::store::TaskStore;

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

    pub(super) fn in_scope(&self, index: usize) -> bool {
        let file = self.store.file();
        let task = &file.tasks()[index];
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
}
