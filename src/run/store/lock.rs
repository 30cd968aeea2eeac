//! One herd at a time owns a tasks file: an exclusive `flock` on `<file>.lock` beside it (so
//! users and containers sharing the file exclude each other), removed when the store is dropped.
//! After locking, the name must still lead to the file locked (another herd may have just
//! removed it), or the lock is taken again. Never through a symbolic link.

use std::fs::{self, File, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::{StoreError, io_error};
use crate::run::safe_fs;

/// How many times the lock is taken again when its file was removed under it.
const ATTEMPTS: usize = 20;

/// `tasks.json` → `tasks.json.lock`, in the same folder.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// The lock on one tasks file; dropping it removes the lock file, then releases the lock.
#[derive(Debug)]
pub(super) struct FileLock {
    /// Closing it releases the lock.
    file: File,
    path: PathBuf,
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Someone removed it during the run and another herd may hold the new one: not ours.
        if !still_named(&self.file, &self.path) {
            return;
        }
        // Removed while still held: a herd that opens the name from now on makes a new file.
        if let Err(error) = fs::remove_file(&self.path) {
            tracing::warn!(path = %self.path.display(), "cannot remove the lock file: {error}");
        }
    }
}

/// Takes the exclusive lock for `target` and writes who holds it (`path` for messages).
pub(super) fn lock(path: &Path, target: &Path) -> Result<FileLock, StoreError> {
    let lock_file = lock_path(target);
    for _ in 0..ATTEMPTS {
        let file = open_and_lock(path, &lock_file)?;
        if still_named(&file, &lock_file) {
            return write_holder(file, lock_file);
        }
        // The herd that held it ended and removed it between our open and our lock.
    }
    Err(io_error("lock", &lock_file)(std::io::Error::other(
        "the lock file kept being removed while herd took it",
    )))
}

fn open_and_lock(path: &Path, lock_file: &Path) -> Result<File, StoreError> {
    let mut file = safe_fs::open_no_follow(
        File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
        lock_file,
    )?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => {
            let mut text = String::new();
            // Best effort: the holder may be between taking the lock and writing its pid.
            let _ = file.read_to_string(&mut text);
            let holder = text
                .lines()
                .next()
                .map(str::trim)
                .filter(|l| l.starts_with("pid "))
                .map(str::to_string);
            Err(StoreError::Locked {
                path: path.to_path_buf(),
                holder,
            })
        }
        Err(TryLockError::Error(source)) => Err(io_error("lock", lock_file)(source)),
    }
}

/// The name `lock_file` still leads to the file `file` locked (not removed, not replaced).
fn still_named(file: &File, lock_file: &Path) -> bool {
    match (file.metadata(), fs::symlink_metadata(lock_file)) {
        (Ok(held), Ok(named)) => held.dev() == named.dev() && held.ino() == named.ino(),
        _ => false,
    }
}

fn write_holder(mut file: File, lock_file: PathBuf) -> Result<FileLock, StoreError> {
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let note = format!("pid {}\nstarted {started}\n", std::process::id());
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(note.as_bytes()))
        .and_then(|()| file.flush())
        .map_err(io_error("write the lock file", &lock_file))?;
    Ok(FileLock {
        file,
        path: lock_file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_counts_only_while_its_file_still_has_the_name() {
        // A herd that opened the lock file just before its holder removed it holds a file
        // nobody else can find: `lock` must see that and take the lock again.
        let dir = tempfile::tempdir().expect("temp dir");
        let name = dir.path().join("tasks.json.lock");
        let opened = File::create(&name).expect("create");
        assert!(still_named(&opened, &name));
        fs::remove_file(&name).expect("removed by the holder");
        assert!(!still_named(&opened, &name), "removed");
        let replaced = File::create(&name).expect("made anew by a third herd");
        assert!(!still_named(&opened, &name), "replaced by another file");
        assert!(still_named(&replaced, &name));
        // A link planted in its place is not the file either.
        fs::remove_file(&name).expect("remove");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &name).expect("symlink");
        assert!(!still_named(&replaced, &name));
    }
}
