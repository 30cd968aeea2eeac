//! What the dashboard reads from disk: the answers window's facts files (`A`), a task's
//! recorded attempts (`v`), a task's changes (`D`, through `run::changes`), a recording opened in the player (Enter in that list). A key asks
//! for a read (`UiState::to_read`); the dashboard hands it to a worker (`run::jobs`) and opens
//! the window once the worker hands back what it read (`act::opened`). The reads
//! (`answers::lines`, `attempts::list`, `attempts::open`) run on the worker, never on the
//! loop's thread.

use super::attempts::{AttemptEntry, OpenError, Replaying};

/// A read a key asked for; it runs on a worker.
pub type FileRead = Box<dyn FnOnce() -> FileReadDone + Send>;

/// What a read found.
pub enum FileReadDone {
    Answers {
        task: usize,
        lines: Vec<String>,
    },
    Attempts {
        task: usize,
        list: Vec<AttemptEntry>,
    },
    /// A task's changes, for the diff view (boxed: it holds the whole diff).
    Diff {
        task: usize,
        view: Box<super::diff_view::DiffView>,
    },
    /// The player (boxed: it is large, and goes into `UiState::replay` boxed as it is).
    Replay(Result<Box<Replaying>, OpenError>),
}
