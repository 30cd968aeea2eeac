//! What the dashboard reads from disk (answers, recorded attempts, changes, a recording): a key
//! asks for a read (`UiState::to_read`), a worker does it and the window opens with what it
//! hands back (`act::opened`). Never on the loop's thread.

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
