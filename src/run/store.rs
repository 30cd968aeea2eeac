//! The tasks file on disk: read, owned (one herd per file, `lock`), refused when it cannot be
//! written back (`writable`), written back atomically after every change (`atomic_write`), on
//! the caller's thread (`save`) or the writer's (`writer`). Decides nothing about tasks.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::safe_fs::{self, SafeFsError};
use crate::core::taskfile::splice::SharedText;
use crate::core::taskfile::{Merged, Problem, TaskFile};
use watch::{DiskVersion, Guard, OperatorVersion};

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot {action} {}: {cause}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        /// In the message itself (not a `source`), so it is printed once.
        cause: io::Error,
    },
    #[error(
        "{} is in use by another herd ({}): one herd at a time runs a tasks file; wait for it \
         to end or stop it",
        path.display(),
        holder.as_deref().unwrap_or("pid unknown")
    )]
    Locked {
        path: PathBuf,
        /// `pid N` as written by the herd holding the lock, when it could be read.
        holder: Option<String>,
    },
    /// The file cannot be used at all; each problem prints as `FILE:LINE:COL: message`.
    #[error("{}", ProblemList { path, problems })]
    Invalid {
        path: PathBuf,
        problems: Vec<Problem>,
    },
    #[error("{}: {why}", path.display())]
    NotWritable { path: PathBuf, why: NotWritable },
    #[error("{} was opened read-only and cannot be written", path.display())]
    ReadOnly { path: PathBuf },
    #[error(transparent)]
    Unsafe(#[from] SafeFsError),
}

/// `FILE:LINE:COL: message` (or `FILE: message` for a problem without a place).
pub fn format_problem(path: &Path, problem: &Problem) -> String {
    match problem.location {
        Some(_) => format!("{}:{problem}", path.display()),
        None => format!("{}: {problem}", path.display()),
    }
}

struct ProblemList<'a> {
    path: &'a Path,
    problems: &'a [Problem],
}

impl fmt::Display for ProblemList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self
            .problems
            .iter()
            .map(|p| format_problem(self.path, p))
            .collect();
        f.write_str(&lines.join("\n"))
    }
}

/// One tasks file, read and (unless read-only) locked by this process.
#[derive(Debug)]
pub struct TaskStore {
    /// As the user gave it, for messages.
    path: PathBuf,
    /// The file written to: `path` with symlinks resolved, so a symlink stays a symlink.
    target: PathBuf,
    base_dir: PathBuf,
    file: TaskFile,
    /// The file started with a UTF-8 byte order mark: it is written back with it.
    byte_order_mark: bool,
    /// The text has changes that are not on disk yet (a save failed, or none was made).
    unsaved: bool,
    /// Held for as long as the store lives; dropping it removes the lock file and releases it.
    lock: Option<lock::FileLock>,
    /// The version of the file the text was read from.
    read_as: Option<DiskVersion>,
    /// The operator's version merged last, until a snapshot carries it to the writer.
    adopted: Option<DiskVersion>,
    /// Where `write_beside` wrote herd's version, once it did: later calls write there again.
    beside: Option<PathBuf>,
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> StoreError + use<> {
    let path = path.to_path_buf();
    move |cause| StoreError::Io {
        action,
        path,
        cause,
    }
}

impl TaskStore {
    /// Reads and locks the tasks file (`Locked`, `Invalid`); per-task problems are in the file.
    pub fn open(path: &Path) -> Result<TaskStore, StoreError> {
        let target = fs::canonicalize(path).map_err(io_error("read", path))?;
        writable::check(&target).map_err(|why| StoreError::NotWritable {
            path: path.to_path_buf(),
            why,
        })?;
        let lock = lock::lock(path, &target)?;
        remove_stale_temp_files(&target);
        let mut store = TaskStore::read(path, target)?;
        store.file.forget_positions();
        store.lock = Some(lock);
        Ok(store)
    }

    /// Reads the tasks file without locking it (for `status` and `validate`); cannot `save`.
    pub fn read_only(path: &Path) -> Result<TaskStore, StoreError> {
        let target = fs::canonicalize(path).map_err(io_error("read", path))?;
        TaskStore::read(path, target)
    }

    fn read(path: &Path, target: PathBuf) -> Result<TaskStore, StoreError> {
        let mut opened = File::open(&target).map_err(io_error("read", path))?;
        let mut text = String::new();
        opened
            .read_to_string(&mut text)
            .map_err(io_error("read", path))?;
        let read_as = opened.metadata().ok().map(|m| DiskVersion::of(&m));
        let byte_order_mark = text.starts_with('\u{feff}');
        let file = TaskFile::parse(&text).map_err(|problems| StoreError::Invalid {
            path: path.to_path_buf(),
            problems,
        })?;
        let absolute = std::path::absolute(path).map_err(io_error("read", path))?;
        let base_dir = absolute
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        Ok(TaskStore {
            path: path.to_path_buf(),
            target,
            base_dir,
            file,
            byte_order_mark,
            unsaved: false,
            lock: None,
            read_as,
            adopted: None,
            beside: None,
        })
    }

    /// What the writer thread needs to know the file on disk is the version this store holds.
    pub fn guard(&self) -> Guard {
        Guard::new(
            self.target.clone(),
            self.read_as,
            self.file.shared_text(),
            self.byte_order_mark,
        )
    }

    /// Takes the operator's version `theirs` as the base; the next snapshot may replace only it.
    /// `Err`, nothing changed, when it cannot be used.
    pub fn merge(&mut self, theirs: &OperatorVersion) -> Result<Merged, Vec<Problem>> {
        let text = std::str::from_utf8(&theirs.text).map_err(|error| {
            let before = &theirs.text[..error.valid_up_to()];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            vec![Problem::of_file(
                Some(crate::core::taskfile::Location { line, column }),
                "not valid UTF-8: save the file as UTF-8".to_string(),
            )]
        })?;
        let merged = self.file.merge(text)?;
        self.byte_order_mark = text.starts_with('\u{feff}');
        self.adopted = Some(theirs.version);
        // Written even when herd has nothing to put back: the writer learns the version.
        self.unsaved = true;
        Ok(merged)
    }

    /// The file's text with `task` appended, herd's changes spliced in first.
    pub fn text_with_task(&mut self, task: &serde_json::Value) -> String {
        if self.file.splice_changes() {
            self.unsaved = true;
        }
        self.file.text_with_task(task)
    }

    /// Takes in a version herd made itself (a task added), merged like an operator's.
    pub fn merge_own(&mut self, text: &str) -> Result<Merged, Vec<Problem>> {
        let merged = self.file.merge_own(text)?;
        self.unsaved = true;
        Ok(merged)
    }

    /// Writes herd's version beside the file (`<name>.herd-<time>`) when the operator's cannot
    /// be merged at the end; its path.
    pub fn write_beside(&mut self, at: jiff::Timestamp) -> Result<PathBuf, StoreError> {
        self.file.splice_changes();
        let beside = self.beside.clone().unwrap_or_else(|| {
            let mut name = self.target.file_name().unwrap_or_default().to_os_string();
            name.push(format!(".herd-{}", at.strftime("%Y%m%dT%H%M%SZ")));
            self.target.with_file_name(name)
        });
        self.beside = Some(beside.clone());
        let mut text = String::new();
        if self.byte_order_mark {
            text.push('\u{feff}');
        }
        text.push_str(&self.file.shared_text().to_string());
        let mut file = safe_fs::open_no_follow(
            File::options().write(true).create(true).truncate(true),
            &beside,
        )?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(io_error("write", &beside))?;
        Ok(beside)
    }

    pub fn file(&self) -> &TaskFile {
        &self.file
    }

    pub fn file_mut(&mut self) -> &mut TaskFile {
        &mut self.file
    }

    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The tasks file's folder (absolute): default `cwd` of tasks, base of relative paths.
    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    /// True when changes were made since the last successful save.
    pub fn has_changes(&self) -> bool {
        self.unsaved || self.file.has_changes()
    }

    /// Writes the file on the caller's thread if its text changed, rewriting only changed fields;
    /// on error the original stays. The engine writes through `StoreWriter` instead.
    pub fn save(&mut self) -> Result<(), StoreError> {
        let Some(snapshot) = self.snapshot()? else {
            return Ok(());
        };
        snapshot.write().inspect_err(|_| self.mark_unsaved())
    }

    /// The text to write when it changed (spliced, copy-free); from here on it counts as saved
    /// (`mark_unsaved` says a write failed).
    pub fn snapshot(&mut self) -> Result<Option<Snapshot>, StoreError> {
        if self.lock.is_none() {
            return Err(StoreError::ReadOnly {
                path: self.path.clone(),
            });
        }
        if self.file.splice_changes() {
            self.unsaved = true;
        }
        if !self.unsaved {
            return Ok(None);
        }
        self.unsaved = false;
        Ok(Some(Snapshot {
            text: self.file.shared_text(),
            merged_from: self.adopted.take(),
            byte_order_mark: self.byte_order_mark,
            path: self.path.clone(),
            target: self.target.clone(),
        }))
    }

    /// A snapshot's write failed: the text is not on disk, and the next snapshot carries it.
    pub fn mark_unsaved(&mut self) {
        self.unsaved = true;
    }
}

/// One version of the tasks file's text, ready to be written (on any thread).
#[derive(Debug, Clone)]
pub struct Snapshot {
    text: SharedText,
    /// The operator's version this text was merged from: the writer may replace only it.
    merged_from: Option<DiskVersion>,
    byte_order_mark: bool,
    /// As the user gave it, for messages.
    path: PathBuf,
    /// The file written to (symlinks resolved).
    target: PathBuf,
}

/// The temporary files `save` writes beside `target`: `.<name>.XXXXXX.tmp`.
pub fn is_own_temp_file(file_name: &str, target_name: &str) -> bool {
    file_name
        .strip_prefix(&format!(".{target_name}."))
        .and_then(|rest| rest.strip_suffix(".tmp"))
        .is_some_and(|random| {
            random.len() == TEMP_RANDOM_LEN && random.chars().all(|c| c.is_ascii_alphanumeric())
        })
}

/// How many random characters `tempfile` puts in a name (its default).
const TEMP_RANDOM_LEN: usize = 6;

/// Removes temporary files a killed herd left beside `target` (lock held; only herd's names).
fn remove_stale_temp_files(target: &Path) {
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return;
    };
    let name = name.to_string_lossy();
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && is_own_temp_file(&file_name.to_string_lossy(), &name) {
            match fs::remove_file(entry.path()) {
                Ok(()) => {
                    tracing::info!(path = %entry.path().display(), "removed a temporary file left by an interrupted write")
                }
                Err(e) => {
                    tracing::warn!(path = %entry.path().display(), "cannot remove a stale temporary file: {e}")
                }
            }
        }
    }
}

mod atomic_write;
mod lease;
mod lock;
pub mod watch;
mod writable;
pub mod writer;

pub use atomic_write::WriteAhead;
pub use lock::lock_path;
pub use writable::NotWritable;

#[cfg(test)]
mod tests;
