//! The tasks file's writer thread: the engine hands it snapshots tagged with a generation, and it
//! writes them one at a time, atomically, off the event loop. It decides nothing (what may be
//! acted on once a generation is durable is `engine::commit`'s). A snapshot handed over while
//! another waits replaces it, so generations on disk only go up. Each write wakes the loop with
//! a `TasksFileWritten` that carries nothing (the state does), so a wakeup with no room is lost
//! harmlessly. Dropping the writer waits a few seconds for the last write, leaving no temporary
//! file behind.
//!
//! The thread keeps the file's `watch::Guard`: a write over a version someone else wrote is
//! *held*, and their version waits for the engine to merge (`take_operator_version`); the merged
//! snapshot may replace only that version (`Snapshot::merged_from`). Between writes it looks at
//! the file when inotify says someone wrote it, and every `LOOK_EVERY`.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use thiserror::Error;

use super::atomic_write::Written;
use super::watch::{self, DiskVersion, Guard, OnDisk, OperatorVersion};
use super::{Snapshot, StoreError, WriteAhead};
use crate::run::jobs::{self, Job, Outbox};

/// The wakeup sent after each write, and when the operator's version was found (`generation`
/// 0). `StoreWriter::status` says what is on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TasksFileWritten {
    pub generation: u64,
}

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
    #[error("someone else changed it since herd's last write: their version is merged first")]
    Held,
}

/// What the writer has done so far.
#[derive(Debug, Clone, Default)]
pub struct WriterStatus {
    /// The newest generation on disk (0: none yet).
    pub durable: u64,
    /// The last write that failed: its generation and why.
    pub failed: Option<(u64, Arc<StoreError>)>,
    /// The newest generation held because the file was not herd's version (0: none).
    pub held: u64,
}

#[derive(Default)]
struct State {
    /// The newest snapshot handed over and not yet taken by the thread.
    next: Option<(u64, Snapshot)>,
    status: WriterStatus,
    /// The version of the file `next` was merged from: the one it may replace.
    adopt: Option<DiskVersion>,
    /// The watcher saw a change (`Some(true)`: someone wrote into it, read its text).
    look: Option<bool>,
    /// The operator's version found and not yet taken by the engine.
    operator: Option<OperatorVersion>,
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
    thread: Option<Job<()>>,
}

impl std::fmt::Debug for StoreWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreWriter")
            .field("status", &self.status())
            .finish()
    }
}

impl StoreWriter {
    /// Starts the thread guarding the file with `guard`; it wakes the loop through `reports`.
    pub fn start(
        reports: Outbox<TasksFileWritten>,
        guard: Guard,
    ) -> Result<StoreWriter, WriteError> {
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        let thread = jobs::spawn_thread("tasks-file-writer", move || {
            write_loop(&theirs, &reports, guard);
        })
        .map_err(|not| WriteError::NoThread(not.error.cause))?;
        Ok(StoreWriter {
            shared,
            thread: Some(thread),
        })
    }

    /// Hands over `snapshot` as generation `generation` (higher than any handed before).
    pub fn submit(&self, generation: u64, snapshot: Snapshot) {
        let mut state = self.shared.lock();
        if let Some(version) = snapshot.merged_from {
            state.adopt = Some(version);
        }
        state.next = Some((generation, snapshot));
        drop(state);
        self.shared.changed.notify_all();
    }

    /// The operator's version the thread found, once: for the engine to merge.
    pub fn take_operator_version(&self) -> Option<OperatorVersion> {
        self.shared.lock().operator.take()
    }

    pub fn status(&self) -> WriterStatus {
        self.shared.lock().status.clone()
    }

    /// Blocks until `generation` is on disk, failed or held, or `timeout` passed: only for a
    /// run's start and ends.
    pub fn wait(&self, generation: u64, timeout: Duration) -> Result<(), WriteError> {
        let state = self.shared.wait_until(Instant::now() + timeout, |state| {
            state.status.durable >= generation
                || state.status.held >= generation
                || state
                    .status
                    .failed
                    .as_ref()
                    .is_some_and(|(g, _)| *g >= generation)
        });
        if state.status.durable >= generation {
            return Ok(());
        }
        if state.status.held >= generation {
            return Err(WriteError::Held);
        }
        match &state.status.failed {
            Some((failed, error)) if *failed >= generation => {
                Err(WriteError::Failed(Arc::clone(error)))
            }
            _ => Err(WriteError::TimedOut { waited: timeout }),
        }
    }
}

/// How long dropping the writer waits for its thread: long enough for it to remove its
/// temporary file, never joined (a write stuck on a dead disk must not hang herd's exit).
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

/// How often the thread looks at the file anyway (no inotify).
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// What the thread does next.
enum Work {
    Write(u64, Box<Snapshot>, Option<DiskVersion>),
    /// Look at the file, reading it when someone wrote into it.
    Look {
        read: bool,
    },
    End,
}

fn next_work(shared: &Shared) -> Work {
    let mut state = shared.lock();
    let deadline = Instant::now() + LOOK_EVERY;
    loop {
        if let Some((generation, snapshot)) = state.next.take() {
            return Work::Write(generation, Box::new(snapshot), state.adopt.take());
        }
        if let Some(read) = state.look.take() {
            return Work::Look { read };
        }
        if state.closing {
            return Work::End;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Work::Look { read: false };
        }
        state = shared
            .changed
            .wait_timeout(state, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

fn write_loop(shared: &Arc<Shared>, reports: &Outbox<TasksFileWritten>, mut guard: Guard) {
    let mut ahead = WriteAhead::default();
    let looker = Arc::clone(shared);
    let _watcher = watch::watch(guard.target(), move |read| {
        let mut state = looker.lock();
        state.look = Some(read || state.look == Some(true));
        drop(state);
        looker.changed.notify_all();
    });
    loop {
        let (generation, snapshot) = match next_work(shared) {
            Work::End => {
                // The temporary file made for a next write goes with it.
                drop(ahead);
                shared.lock().ended = true;
                shared.changed.notify_all();
                return;
            }
            Work::Look { read } => {
                if let OnDisk::Changed(theirs) = guard.look(read) {
                    hand_over(shared, reports, theirs);
                }
                continue;
            }
            Work::Write(generation, snapshot, adopt) => {
                if let Some(version) = adopt {
                    guard.adopt(version);
                    ahead.forget_text();
                }
                (generation, *snapshot)
            }
        };
        let result = write_guarded(&snapshot, &mut ahead, &mut guard);
        {
            let mut state = shared.lock();
            match result {
                Ok(Some(theirs)) => {
                    state.status.held = state.status.held.max(generation);
                    if let Some(theirs) = theirs {
                        state.operator = Some(theirs);
                    }
                }
                Ok(None) => state.status.durable = state.status.durable.max(generation),
                Err(error) => {
                    tracing::error!(generation, "cannot write the tasks file: {error}");
                    state.status.failed = Some((generation, Arc::new(error)));
                }
            }
        }
        shared.changed.notify_all();
        // Only a wakeup (see the module header): a full channel means the loop looks anyway.
        let _ = reports.try_send(TasksFileWritten { generation });
        // The agents waiting for this write are on their way: now the work a write need not wait for.
        ahead.prepare(&snapshot);
    }
}

/// Writes `snapshot` if the file is herd's version: `Ok(None)`, written; `Ok(Some(_))`, held.
fn write_guarded(
    snapshot: &Snapshot,
    ahead: &mut WriteAhead,
    guard: &mut Guard,
) -> Result<Option<Option<OperatorVersion>>, StoreError> {
    let over = match guard.look(false) {
        OnDisk::Expected => guard.expected(),
        OnDisk::Missing => None,
        OnDisk::Changed(theirs) => return Ok(Some(Some(theirs))),
        OnDisk::Reported => return Ok(Some(None)),
    };
    match snapshot.write_with(ahead, over)? {
        Written::Done(version) => {
            guard.wrote(version, snapshot.text.clone(), snapshot.byte_order_mark);
            Ok(None)
        }
        Written::NotOurs => {
            ahead.forget_text();
            match guard.look(true) {
                OnDisk::Changed(theirs) => Ok(Some(Some(theirs))),
                _ => Ok(Some(None)),
            }
        }
    }
}

/// Leaves the operator's version for the engine and wakes it.
fn hand_over(shared: &Shared, reports: &Outbox<TasksFileWritten>, theirs: OperatorVersion) {
    shared.lock().operator = Some(theirs);
    let _ = reports.try_send(TasksFileWritten { generation: 0 });
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

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
        let writer = StoreWriter::start(Outbox::new(tx), store.guard()).expect("writer");
        store.file_mut().set_status(0, TaskStatus::Running);
        let snapshot = store.snapshot().expect("snapshot").expect("changed");
        writer.submit(1, snapshot);
        writer.wait(1, Duration::from_secs(10)).expect("written");
        assert_eq!(status_on_disk(&dir), "running");
        assert_eq!(writer.status().durable, 1);
        assert!(matches!(
            rx.blocking_recv(),
            Some(TasksFileWritten { generation: 1 })
        ));
        // Nothing changed since: no snapshot, nothing to write.
        assert!(store.snapshot().expect("snapshot").is_none());
    }

    #[test]
    fn a_snapshot_is_immutable_while_later_changes_are_spliced() {
        let (dir, mut store) = store();
        let (tx, _rx) = mpsc::channel(8);
        let writer = StoreWriter::start(Outbox::new(tx), store.guard()).expect("writer");
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
        let writer = StoreWriter::start(Outbox::new(tx), store.guard()).expect("writer");
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
        let (_dir, store) = store();
        let (tx, _rx) = mpsc::channel(8);
        let writer = StoreWriter::start(Outbox::new(tx), store.guard()).expect("writer");
        let error = writer
            .wait(1, Duration::from_millis(50))
            .expect_err("nothing was handed over");
        assert!(matches!(error, WriteError::TimedOut { .. }), "{error:?}");
    }

    /// Waits until the writer found the operator's version.
    fn operator_version(writer: &StoreWriter) -> OperatorVersion {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(theirs) = writer.take_operator_version() {
                return theirs;
            }
            assert!(Instant::now() < deadline, "no operator version found");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    const THEIRS: &str = r#"{"tasks": [{"task_id": "t", "agent": "a", "prompt_template": "p", "mine": 1}, {"task_id": "u", "agent": "a", "prompt_template": "q"}]}"#;

    #[test]
    fn an_edit_is_never_written_over_and_is_merged_first() {
        for in_place in [true, false] {
            let (dir, mut store) = store();
            let path = dir.path().join("tasks.json");
            let (tx, _rx) = mpsc::channel(8);
            let writer = StoreWriter::start(Outbox::new(tx), store.guard()).expect("writer");
            store.file_mut().set_status(0, TaskStatus::Running);
            writer.submit(1, store.snapshot().expect("snapshot").expect("changed"));
            writer.wait(1, Duration::from_secs(10)).expect("written");
            // The operator writes their version, in place or by rename.
            if in_place {
                std::fs::write(&path, THEIRS).expect("in place");
            } else {
                let beside = dir.path().join("theirs");
                std::fs::write(&beside, THEIRS).expect("write");
                std::fs::rename(&beside, &path).expect("rename");
            }
            store.file_mut().set_status(0, TaskStatus::Completed);
            writer.submit(2, store.snapshot().expect("snapshot").expect("changed"));
            let error = writer.wait(2, Duration::from_secs(10)).expect_err("held");
            assert!(matches!(error, WriteError::Held), "{error:?}");
            assert_eq!(std::fs::read_to_string(&path).expect("read"), THEIRS);
            let theirs = operator_version(&writer);
            let merged = store.merge(&theirs).expect("parses");
            assert_eq!(
                merged.to_string(),
                "tasks file changed: 1 task added, 1 task's fields changed"
            );
            writer.submit(3, store.snapshot().expect("snapshot").expect("changed"));
            writer.wait(3, Duration::from_secs(10)).expect("written");
            assert_eq!(
                std::fs::read_to_string(&path).expect("read"),
                THEIRS.replace("\"mine\": 1}", "\"mine\": 1, \"status\": \"completed\"}"),
                "in place: {in_place}"
            );
        }
    }

    #[test]
    fn an_edit_is_seen_within_a_second_with_nothing_to_write() {
        let (dir, store) = store();
        let (tx, _rx) = mpsc::channel(8);
        let writer = StoreWriter::start(Outbox::new(tx), store.guard()).expect("writer");
        let started = Instant::now();
        std::fs::write(dir.path().join("tasks.json"), THEIRS).expect("in place");
        let theirs = operator_version(&writer);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(theirs.text, THEIRS.as_bytes());
        // The same text again is not a new version; the next different one is.
        std::fs::write(dir.path().join("tasks.json"), THEIRS).expect("in place");
        let again = THEIRS.replace("\"q\"", "\"q2\"");
        std::fs::write(dir.path().join("tasks.json"), &again).expect("in place");
        assert_eq!(operator_version(&writer).text, again.as_bytes());
    }

    #[test]
    fn a_removed_file_is_written_again() {
        let (dir, mut store) = store();
        let (tx, _rx) = mpsc::channel(8);
        let writer = StoreWriter::start(Outbox::new(tx), store.guard()).expect("writer");
        store.file_mut().set_status(0, TaskStatus::Running);
        writer.submit(1, store.snapshot().expect("snapshot").expect("changed"));
        writer.wait(1, Duration::from_secs(10)).expect("written");
        std::fs::remove_file(dir.path().join("tasks.json")).expect("remove");
        store.file_mut().set_status(0, TaskStatus::Completed);
        writer.submit(2, store.snapshot().expect("snapshot").expect("changed"));
        writer.wait(2, Duration::from_secs(10)).expect("written");
        assert_eq!(status_on_disk(&dir), "completed");
    }
}
