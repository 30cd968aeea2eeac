//! The tasks file's writer thread: the engine hands it snapshots of the file's text, each tagged
//! with a generation number, and it writes them one at a time, atomically
//! (`Snapshot::write`), off the event loop.
//!
//! Owns the thread and what it knows: the newest generation on disk and the last failure. It
//! must not decide anything: which state may be acted on once a generation is durable is the
//! engine's business (`engine::commit`).
//!
//! A snapshot handed over while another waits replaces it (the newer text holds every change
//! of the older), so generations on disk only go up. After each write the thread wakes the
//! loop with a `PtyReport::TasksFileWritten`; the report carries nothing the loop needs, the
//! state does (`status`), so a wakeup that cannot be queued (the channel is full: the loop is
//! busy and looks at the state on its next turn anyway) loses nothing and never blocks the
//! writer. Between writes the thread does what a write need not wait for (`WriteAhead`).
//! Dropping the writer lets the thread finish the snapshot it was handed, then end; the drop
//! waits a few seconds for that, so that no temporary file is left beside the tasks file.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use thiserror::Error;
use tokio::sync::mpsc;

use super::{Snapshot, StoreError, WriteAhead};
use crate::run::pty::PtyReport;

/// Why a generation is not known to be on disk.
#[derive(Debug, Error)]
pub enum WriteError {
    #[error(transparent)]
    Failed(Arc<StoreError>),
    #[error(
        "its write did not complete within {} s: the file may not hold the last changes",
        waited.as_secs()
    )]
    TimedOut { waited: Duration },
    #[error("cannot start the thread that writes it: {0}")]
    NoThread(std::io::Error),
}

/// What the writer has done so far.
#[derive(Debug, Clone, Default)]
pub struct WriterStatus {
    /// The newest generation on disk (0: none yet).
    pub durable: u64,
    /// The last write that failed: its generation and why.
    pub failed: Option<(u64, Arc<StoreError>)>,
}

#[derive(Default)]
struct State {
    /// The newest snapshot handed over and not yet taken by the thread.
    next: Option<(u64, Snapshot)>,
    status: WriterStatus,
    /// The writer was dropped: the thread ends once `next` is written.
    closing: bool,
    /// The thread has ended, its temporary file removed.
    ended: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Signalled when a snapshot is handed over, a write ends, or the writer closes.
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic on the writer thread leaves the state as it was: still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until `done` holds of the state or `deadline` passed; the state as it is then.
    fn wait_until(
        &self,
        deadline: Instant,
        done: impl Fn(&State) -> bool,
    ) -> MutexGuard<'_, State> {
        let mut state = self.lock();
        while !done(&state) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        state
    }
}

/// The handle the engine keeps; one thread per handle.
pub struct StoreWriter {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for StoreWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreWriter")
            .field("status", &self.status())
            .finish()
    }
}

impl StoreWriter {
    /// Starts the thread; it wakes the loop through `reports` after each write.
    pub fn start(reports: mpsc::Sender<PtyReport>) -> Result<StoreWriter, WriteError> {
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("tasks-file-writer".into())
            .spawn(move || write_loop(&theirs, &reports))
            .map_err(WriteError::NoThread)?;
        Ok(StoreWriter {
            shared,
            thread: Some(thread),
        })
    }

    /// Hands over `snapshot` as generation `generation` (higher than any handed before).
    pub fn submit(&self, generation: u64, snapshot: Snapshot) {
        self.shared.lock().next = Some((generation, snapshot));
        self.shared.changed.notify_all();
    }

    pub fn status(&self) -> WriterStatus {
        self.shared.lock().status.clone()
    }

    /// Blocks until `generation` is on disk, its write failed, or `timeout` passed. Only for
    /// the ends of a run (and its start), where there is nothing else to do.
    pub fn wait(&self, generation: u64, timeout: Duration) -> Result<(), WriteError> {
        let state = self.shared.wait_until(Instant::now() + timeout, |state| {
            state.status.durable >= generation
                || state
                    .status
                    .failed
                    .as_ref()
                    .is_some_and(|(g, _)| *g >= generation)
        });
        if state.status.durable >= generation {
            return Ok(());
        }
        match &state.status.failed {
            Some((failed, error)) if *failed >= generation => {
                Err(WriteError::Failed(Arc::clone(error)))
            }
            _ => Err(WriteError::TimedOut { waited: timeout }),
        }
    }
}

/// How long dropping the writer waits for its thread to end. Not joined: a write stuck on a
/// dead disk must not hang herd's exit (the thread ends on its own after its last write).
/// Waited for at all so that herd does not exit before the thread has removed the temporary
/// file it made for a next write.
const ENDING: Duration = Duration::from_secs(5);

impl Drop for StoreWriter {
    fn drop(&mut self) {
        let deadline = Instant::now() + ENDING;
        self.shared.lock().closing = true;
        self.shared.changed.notify_all();
        drop(self.shared.wait_until(deadline, |state| state.ended));
        drop(self.thread.take());
    }
}

fn write_loop(shared: &Shared, reports: &mpsc::Sender<PtyReport>) {
    let mut ahead = WriteAhead::default();
    loop {
        let (generation, snapshot) = {
            let mut state = shared.lock();
            loop {
                if let Some(job) = state.next.take() {
                    break job;
                }
                if state.closing {
                    // The temporary file made for a next write goes with it.
                    drop(ahead);
                    state.ended = true;
                    shared.changed.notify_all();
                    return;
                }
                state = shared
                    .changed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        };
        let result = snapshot.write_with(&mut ahead);
        {
            let mut state = shared.lock();
            match result {
                Ok(()) => state.status.durable = state.status.durable.max(generation),
                Err(error) => {
                    tracing::error!(generation, "cannot write the tasks file: {error}");
                    state.status.failed = Some((generation, Arc::new(error)));
                }
            }
        }
        shared.changed.notify_all();
        // Only a wakeup (see the module header): a full channel means the loop looks anyway.
        let _ = reports.try_send(PtyReport::TasksFileWritten { generation });
        // The agents waiting for this write are on their way: now the work a write need not wait for.
        ahead.prepare(&snapshot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::task::TaskStatus;
    use crate::run::store::TaskStore;

    const TASKS: &str = r#"{"tasks": [{"task_id": "t", "agent": "a", "prompt_template": "p"}]}"#;

    fn store() -> (tempfile::TempDir, TaskStore) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("tasks.json");
        std::fs::write(&path, TASKS).expect("write");
        let store = TaskStore::open(&path).expect("open");
        (dir, store)
    }

    fn status_on_disk(dir: &tempfile::TempDir) -> serde_json::Value {
        let text = std::fs::read_to_string(dir.path().join("tasks.json")).expect("read");
        let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
        doc["tasks"][0]["status"].clone()
    }

    #[test]
    fn a_generation_is_reported_durable_once_its_text_is_on_disk() {
        let (dir, mut store) = store();
        let (tx, mut rx) = mpsc::channel(8);
        let writer = StoreWriter::start(tx).expect("writer");
        store.file_mut().set_status(0, TaskStatus::Running);
        let snapshot = store.snapshot().expect("snapshot").expect("changed");
        writer.submit(1, snapshot);
        writer.wait(1, Duration::from_secs(10)).expect("written");
        assert_eq!(status_on_disk(&dir), "running");
        assert_eq!(writer.status().durable, 1);
        assert!(matches!(
            rx.blocking_recv(),
            Some(PtyReport::TasksFileWritten { generation: 1 })
        ));
        // Nothing changed since: no snapshot, nothing to write.
        assert!(store.snapshot().expect("snapshot").is_none());
    }

    #[test]
    fn a_snapshot_is_immutable_while_later_changes_are_spliced() {
        let (dir, mut store) = store();
        let (tx, _rx) = mpsc::channel(8);
        let writer = StoreWriter::start(tx).expect("writer");
        store.file_mut().set_status(0, TaskStatus::Running);
        let first = store.snapshot().expect("snapshot").expect("changed");
        store.file_mut().set_status(0, TaskStatus::Completed);
        let second = store.snapshot().expect("snapshot").expect("changed");
        writer.submit(1, first);
        writer.wait(1, Duration::from_secs(10)).expect("written");
        assert_eq!(status_on_disk(&dir), "running");
        writer.submit(2, second);
        writer.wait(2, Duration::from_secs(10)).expect("written");
        assert_eq!(status_on_disk(&dir), "completed");
    }

    #[test]
    fn a_failed_write_is_reported_with_the_store_message() {
        let (dir, mut store) = store();
        let (tx, _rx) = mpsc::channel(8);
        let writer = StoreWriter::start(tx).expect("writer");
        store.file_mut().set_status(0, TaskStatus::Running);
        let snapshot = store.snapshot().expect("snapshot").expect("changed");
        // The folder is gone: no temporary file can be made beside the file.
        std::fs::remove_dir_all(dir.path()).expect("remove");
        writer.submit(1, snapshot);
        let error = writer.wait(1, Duration::from_secs(10)).expect_err("fails");
        assert!(matches!(error, WriteError::Failed(_)), "{error:?}");
        assert!(error.to_string().contains("tasks.json"), "{error}");
        assert_eq!(writer.status().durable, 0);
        assert_eq!(writer.status().failed.map(|(g, _)| g), Some(1));
    }

    #[test]
    fn a_generation_never_handed_over_times_out() {
        let (tx, _rx) = mpsc::channel(8);
        let writer = StoreWriter::start(tx).expect("writer");
        let error = writer
            .wait(1, Duration::from_millis(50))
            .expect_err("nothing was handed over");
        assert!(matches!(error, WriteError::TimedOut { .. }), "{error:?}");
    }
}
