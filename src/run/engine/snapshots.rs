//! The engine's part that keeps, for each local attempt from its start to its end, the folder
//! whose changes are its and where that folder stood as it started (`run::changes`: the
//! snapshot, taken on the preparing worker before the agent ran). At the attempt's end it hands
//! both to the gathering worker, which reads the changes and carries out `on_complete`. It
//! reads no repository itself, on the loop or anywhere.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::core::facts::changes::StartPoint;
use crate::run::changes::attempt::{AttemptFolder, ChangesAtEnd, OnCompleteJob};

/// The starts of the attempts that run here, by attempt key.
#[derive(Debug, Default)]
pub(super) struct Snapshots {
    starts: HashMap<u64, (AttemptFolder, Option<StartPoint>)>,
}

impl Snapshots {
    /// Attempt `key` started in `folder`, which stood at `start` (`None`: not in a repository,
    /// or the snapshot could not be taken).
    pub(super) fn started(&mut self, key: u64, folder: AttemptFolder, start: Option<StartPoint>) {
        self.starts.insert(key, (folder, start));
    }

    /// The changes work of attempt `key`'s end; `folder` when its start was not recorded (an
    /// attempt that needed no preparation: its changes are then those since `HEAD`).
    pub(super) fn end(
        &mut self,
        key: u64,
        folder: AttemptFolder,
        on_complete: Option<OnCompleteJob>,
    ) -> ChangesAtEnd {
        let (folder, start) = self.starts.remove(&key).unwrap_or((folder, None));
        ChangesAtEnd {
            folder,
            start,
            on_complete,
        }
    }
}

/// Where attempt `attempt` of a task reads its changes: `folder`, its files in `task_runs`, and
/// herd's own files (`own`) left out.
pub(super) fn attempt_folder(
    folder: PathBuf,
    task_runs: PathBuf,
    attempt: u32,
    own: Vec<PathBuf>,
) -> AttemptFolder {
    AttemptFolder {
        folder,
        task_runs,
        attempt,
        own,
    }
}
