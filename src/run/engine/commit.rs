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
//!   `next_generation()`, and its agent is launched only once G is durable (`launch_ready`;
//!   the count is `core::batch::generations`);
//!   until then the start waits in `awaiting` and holds its slot. Every snapshot holds every
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

use super::Engine;
use crate::core::batch::Input;
use crate::run::clock::Now;
use crate::run::jobs::Outbox;
use crate::run::store::watch::Guard;
use crate::run::store::writer::{StoreWriter, TasksFileWritten, WriteError};

/// What every failed write says first.
pub(super) const CANNOT_WRITE: &str = "cannot write the tasks file";

/// How long the ends of a run wait for the last write of the tasks file.
pub const LAST_WRITE_WAIT: Duration = Duration::from_secs(30);

/// How many times the last write is tried again after the operator wrote the file under it.
const LAST_WRITE_ROUNDS: usize = 5;

fn is_held(error: &color_eyre::eyre::Report) -> bool {
    matches!(error.downcast_ref::<WriteError>(), Some(WriteError::Held))
}

/// The tasks file's writer (its own thread).
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
}

impl Engine {
    /// The generation that carries a change made now: the next one handed to the writer.
    pub(super) fn next_generation(&self) -> u64 {
        self.batch.generations().next()
    }

    /// Hands `snapshot` to the writer as the next generation.
    fn hand_over(&mut self, snapshot: crate::run::store::Snapshot) -> u64 {
        self.batch.handle(Input::WriteHanded, self.clock.at);
        let generation = self.batch.generations().handed();
        self.commits.writer.submit(generation, snapshot);
        generation
    }

    /// Hands the changes made so far to the writer, unless a write is in flight: then the
    /// write that follows it carries them (`take_writes` hands it over).
    pub(super) fn commit(&mut self, now: Instant) -> Result<()> {
        // While the operator's version does not parse, herd's changes wait in memory.
        if self.batch.generations().in_flight() || self.tasks.file_invalid.is_some() {
            return Ok(());
        }
        let generations = self.batch.generations();
        match self.tasks.store.snapshot().wrap_err(CANNOT_WRITE)? {
            Some(snapshot) => {
                self.hand_over(snapshot);
                Ok(())
            }
            // The text is what is on disk: starts waiting for the next generation may go.
            None if generations.waits_beyond(generations.durable()) => {
                let generation = generations.next();
                self.drive(Input::WriteDurable { generation }, now)
            }
            None => Ok(()),
        }
    }

    /// Takes in what the writer finished: the starts whose generation is on disk launch, and
    /// the changes made meanwhile are handed over. A failed write stops the run.
    pub(super) fn take_writes(&mut self, now: Instant) -> Result<()> {
        let status = self.commits.writer.status();
        if let Some((_, error)) = status.failed {
            self.tasks.store.mark_unsaved();
            return Err(WriteError::Failed(error)).wrap_err(CANNOT_WRITE);
        }
        let merged = self.take_operator_version()?;
        if status.held > self.batch.generations().held() {
            // Its text is not on disk: the next snapshot carries it again.
            let generation = status.held;
            self.batch.handle(Input::WriteHeld { generation }, now);
            self.tasks.store.mark_unsaved();
        }
        if status.durable > self.batch.generations().durable() {
            let generation = status.durable;
            self.drive(Input::WriteDurable { generation }, now)?;
        }
        if merged || !self.batch.generations().in_flight() {
            self.commit(now)?;
        }
        Ok(())
    }

    /// Tells the batch what is on disk: the prepared starts whose generation is launch, in
    /// the order they were made (`core::batch::generations`).
    fn launch_ready(&mut self, now: Instant) -> Result<()> {
        let generation = self.batch.generations().durable();
        self.drive(Input::WriteDurable { generation }, now)
    }

    /// Waits until every change made so far is on disk (at most `timeout` per write), then
    /// launches what waited for it. For the ends of a run, where the loop has nothing else to
    /// do; while it runs, `take_writes` does this without waiting.
    pub fn settle_writes(&mut self, now: Now, timeout: Duration) -> Result<()> {
        let now = self.turn(now);
        self.take_writes(now)?;
        self.write_last(timeout)?;
        self.launch_ready(now)
    }

    /// Writes what is not on disk yet and waits for it (at most `timeout` per write), whatever
    /// happened to the writes before: herd giving up writes its tasks back this way.
    pub(super) fn write_last(&mut self, timeout: Duration) -> Result<()> {
        if self.batch.generations().in_flight() {
            // A newer snapshot follows when this one failed; its own result is what counts.
            let _ = self.wait_for(self.batch.generations().handed(), timeout);
        }
        // Each round merges the operator's version that held the last write; an operator who
        // keeps writing faster than herd can merge is given up on after a few.
        for _ in 0..LAST_WRITE_ROUNDS {
            self.take_operator_version()?;
            if self.tasks.file_invalid.is_some() {
                return self.write_beside();
            }
            let Some(snapshot) = self.tasks.store.snapshot().wrap_err(CANNOT_WRITE)? else {
                return Ok(());
            };
            let generation = self.hand_over(snapshot);
            match self.wait_for(generation, timeout) {
                Err(error) if is_held(&error) => {
                    self.batch
                        .handle(Input::WriteHeld { generation }, self.clock.at);
                    self.tasks.store.mark_unsaved();
                }
                other => return other,
            }
        }
        self.write_beside()
    }

    /// Waits for `generation` to reach the disk; what waited for it launches.
    fn wait_for(&mut self, generation: u64, timeout: Duration) -> Result<()> {
        match self.commits.writer.wait(generation, timeout) {
            Ok(()) => self.drive(Input::WriteDurable { generation }, self.clock.at),
            Err(WriteError::Held) => Err(WriteError::Held).wrap_err(CANNOT_WRITE),
            Err(error) => {
                self.tasks.store.mark_unsaved();
                Err(error).wrap_err(CANNOT_WRITE)
            }
        }
    }

    /// (handed, durable) generations, for tests.
    #[cfg(test)]
    pub(super) fn generations(&self) -> (u64, u64) {
        let generations = self.batch.generations();
        (generations.handed(), generations.durable())
    }
}
