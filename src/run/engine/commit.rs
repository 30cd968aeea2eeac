//! The tasks file's group commit, pipelined: the engine changes the document in memory, hands
//! the writer (`store::writer`, its own thread) an immutable snapshot of the text tagged with a
//! generation number, and goes on; the writer reports back when that generation is durable.
//! While a write is in flight, changes pile up in memory and the next write carries all of
//! them, so the number of writes adapts to what a write costs.
//!
//! Owns the writer; which generation is handed, durable or held, and the starts waiting for
//! theirs, are the batch's (`core::batch::generations`), told here what the writer did. Must
//! not write itself (the writer does) nor decide task states (the other engine steps do).
//!
//! Never acting on a state that is not on disk, case by case:
//! - A start marks its task `running` (attempt number, cleared `retry_at`) in generation G =
//!   the batch's next generation, and its agent is launched only once G is durable (the
//!   count is `core::batch::generations`); until then the start waits in `awaiting` and holds its slot. Every snapshot holds every
//!   change made before it, and generations reach the disk in order, so "G durable" means every
//!   earlier change is durable too.
//! - A conclusion (status, result, `retry_at`) is only written to memory; what follows from it
//!   is another task's start (or the same task's retry, after its backoff), which is marked in
//!   a generation at least as new and waits for it: the conclusion is on disk before anything
//!   starts in its slot. The recording's facts are written before the conclusion, as before:
//!   a crash in between leaves the task `running` on disk, and the next herd calls that attempt
//!   interrupted, which is true. Account rests and quota holds are in memory only.
//! - Operator actions (cancel, retry now, prompt edits, policy switches, messages) change the
//!   document and reach the disk with the next write; what they lead to is a start, which waits.
//! - A config failure only records itself; nothing follows from it.
//! - The ends of a run (its start, its end, a stop, herd giving up) wait for the last write,
//!   bounded (`settle_writes`); a write that fails stops the run with the store's message.
//! - A write *held* by the writer (someone else wrote the file since herd's last write) is not
//!   on disk: the operator's version is merged (`edits`) and the next snapshot carries
//!   everything, so the starts waiting for the held generation wait for that one. While their
//!   version does not parse, nothing is handed over (and nothing new launches); at the end of
//!   the run herd's version is written beside the file instead (`write_last`).

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};

use super::tasks::Tasks;
use crate::core::batch::{Batch, Input};
use crate::run::jobs::Outbox;
use crate::run::store::watch::Guard;
use crate::run::store::writer::{StoreWriter, TasksFileWritten, WriteError, WriterStatus};
use crate::run::store::{Snapshot, TaskStore};

/// What every failed write says first.
pub(super) const CANNOT_WRITE: &str = "cannot write the tasks file";

/// How long the ends of a run wait for the last write of the tasks file.
pub const LAST_WRITE_WAIT: Duration = Duration::from_secs(30);

/// How many times the last write is tried again after the operator wrote the file under it.
pub(super) const LAST_WRITE_ROUNDS: usize = 5;

pub(super) fn is_held(error: &color_eyre::eyre::Report) -> bool {
    matches!(error.downcast_ref::<WriteError>(), Some(WriteError::Held))
}

/// The tasks file's writer (its own thread), and the handing of the document's snapshots to
/// it: which generation is handed and durable is the batch's (`Batch::generations`), told here.
pub(super) struct Commits {
    writer: StoreWriter,
}

impl Commits {
    pub(super) fn start(written: Outbox<TasksFileWritten>, guard: Guard) -> Result<Commits> {
        let writer = StoreWriter::start(written, guard).wrap_err(CANNOT_WRITE)?;
        Ok(Commits { writer })
    }

    /// The writer's, for the operator's version it found.
    pub(super) fn writer(&self) -> &StoreWriter {
        &self.writer
    }

    /// Hands `snapshot` to the writer as the next generation.
    pub(super) fn hand_over(&mut self, batch: &mut Batch, snapshot: Snapshot, at: Instant) -> u64 {
        batch.handle(Input::WriteHanded, at);
        let generation = batch.generations().handed();
        self.writer.submit(generation, snapshot);
        generation
    }

    /// Hands the changes made so far to the writer, unless a write is in flight: then the
    /// write that follows it carries them (`Engine::take_writes` hands it over). When the text
    /// is what is on disk, the input that lets the starts waiting for it go.
    pub(super) fn commit(
        &mut self,
        batch: &mut Batch,
        tasks: &mut Tasks,
        at: Instant,
    ) -> Result<Option<Input>> {
        // While the operator's version does not parse, herd's changes wait in memory.
        if batch.generations().in_flight() || tasks.file_invalid.is_some() {
            return Ok(None);
        }
        let generations = batch.generations();
        match tasks.store.snapshot().wrap_err(CANNOT_WRITE)? {
            Some(snapshot) => {
                self.hand_over(batch, snapshot, at);
                Ok(None)
            }
            None if generations.waits_beyond(generations.durable()) => {
                let generation = generations.next();
                Ok(Some(Input::WriteDurable { generation }))
            }
            None => Ok(None),
        }
    }

    /// What the writer finished; a failed write is an error that stops the run.
    pub(super) fn status(&self, store: &mut TaskStore) -> Result<WriterStatus> {
        let status = self.writer.status();
        if let Some((_, error)) = status.failed {
            store.mark_unsaved();
            return Err(WriteError::Failed(error)).wrap_err(CANNOT_WRITE);
        }
        Ok(status)
    }

    /// Tells the batch what `status` says beyond what it knew: a held write's text is not on
    /// disk (the next snapshot carries it again); the input for a newer durable generation.
    pub(super) fn take_status(
        status: &WriterStatus,
        batch: &mut Batch,
        store: &mut TaskStore,
        at: Instant,
    ) -> Option<Input> {
        if status.held > batch.generations().held() {
            let generation = status.held;
            batch.handle(Input::WriteHeld { generation }, at);
            store.mark_unsaved();
        }
        let generation = status.durable;
        (generation > batch.generations().durable()).then_some(Input::WriteDurable { generation })
    }

    /// Waits for `generation` to reach the disk; the input that launches what waited for it.
    pub(super) fn wait_for(
        &mut self,
        generation: u64,
        timeout: Duration,
        store: &mut TaskStore,
    ) -> Result<Input> {
        match self.writer.wait(generation, timeout) {
            Ok(()) => Ok(Input::WriteDurable { generation }),
            Err(WriteError::Held) => Err(WriteError::Held).wrap_err(CANNOT_WRITE),
            Err(error) => {
                store.mark_unsaved();
                Err(error).wrap_err(CANNOT_WRITE)
            }
        }
    }
}
