//! What the gathering worker found at an attempt's end (see `gather`), as it travels back to the
//! loop inside an `EngineInbox`. Data only: its own file so the inbox (`inbox`) does not
//! depend on the worker that fills it.

use crate::core::facts::transcript::TranscriptFacts;
use crate::run::worktree;

/// What the worker found.
#[derive(Debug, Default)]
pub struct Gathered {
    pub(super) failure: Option<crate::run::failure_report::FailureReport>,
    pub(super) transcript: Option<(String, TranscriptFacts)>,
    pub(super) worktree: Option<Result<worktree::Cleanup, worktree::WorktreeError>>,
    /// What the attempt changed, and its `on_complete`'s record.
    pub(super) changes: crate::run::changes::attempt::ChangesFound,
}
