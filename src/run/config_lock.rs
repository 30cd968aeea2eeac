//! The lock Claude Code takes on its `.claude.json` while it rewrites it (`proper-lockfile`'s
//! `<file>.lock` folder, refreshed by its holder; one left unchanged for [`STALE`] is taken
//! over). herd takes it around its own edits, so a trust entry is never lost to a Claude Code
//! writing its config (it would show the trust dialog, whose default is "No, exit").

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// A lock unchanged this long is a dead holder's (`proper-lockfile`'s default `stale`).
pub const STALE: Duration = Duration::from_secs(10);

/// How long to wait between tries while another process holds the lock.
const RETRY: Duration = Duration::from_millis(20);

/// The lock on one config file, held until dropped.
#[derive(Debug)]
pub struct ConfigLock {
    folder: PathBuf,
}

impl ConfigLock {
    /// Takes the lock on `file`, waiting up to `wait`; the error says who holds it.
    pub fn acquire(file: &Path, wait: Duration) -> io::Result<ConfigLock> {
        let folder = lock_folder(file);
        let start = Instant::now();
        loop {
            match std::fs::create_dir(&folder) {
                Ok(()) => return Ok(ConfigLock { folder }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
            if is_stale(&folder, SystemTime::now()) {
                tracing::warn!(
                    "{} was left by a process that ended while holding it; taking it over",
                    folder.display()
                );
                // Another taker may remove it first: then this try's mkdir races it fairly.
                let _ = std::fs::remove_dir(&folder);
                continue;
            }
            if start.elapsed() >= wait {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!(
                        "{} is held by another process (Claude Code writing its config?) and was \
                         still held after {:.1} s; remove it if no such process runs",
                        folder.display(),
                        wait.as_secs_f64()
                    ),
                ));
            }
            std::thread::sleep(RETRY);
        }
    }
}

impl Drop for ConfigLock {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir(&self.folder) {
            tracing::warn!("cannot release {}: {e}", self.folder.display());
        }
    }
}

/// `<file>.lock`, beside `file`.
pub fn lock_folder(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Whether the lock `folder` was last refreshed [`STALE`] or longer before `now` (gone: not).
fn is_stale(folder: &Path, now: SystemTime) -> bool {
    std::fs::metadata(folder)
        .and_then(|m| m.modified())
        .is_ok_and(|at| now.duration_since(at).is_ok_and(|age| age >= STALE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_is_a_folder_beside_the_file_removed_when_dropped() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join(".claude.json");
        let folder = dir.path().join(".claude.json.lock");
        let lock = ConfigLock::acquire(&file, Duration::ZERO).expect("taken");
        assert!(folder.is_dir());
        drop(lock);
        assert!(!folder.exists());
    }

    #[test]
    fn a_live_holder_is_waited_for_and_then_named() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join(".claude.json");
        let held = ConfigLock::acquire(&file, Duration::ZERO).expect("taken");
        let error = ConfigLock::acquire(&file, Duration::from_millis(60)).expect_err("held");
        assert_eq!(error.kind(), io::ErrorKind::WouldBlock);
        assert!(error.to_string().contains(".claude.json.lock"), "{error}");
        // Released by its holder, it is taken.
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(held);
        });
        ConfigLock::acquire(&file, Duration::from_secs(10)).expect("taken once released");
        releaser.join().expect("released");
    }

    #[test]
    fn a_lock_left_by_a_dead_holder_is_taken_over() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join(".claude.json");
        let folder = lock_folder(&file);
        std::fs::create_dir(&folder).expect("left behind");
        let now = SystemTime::now();
        assert!(!is_stale(&folder, now));
        assert!(is_stale(&folder, now + STALE));
        let old = std::fs::File::open(&folder).expect("open");
        old.set_modified(now - STALE - Duration::from_secs(1))
            .expect("aged");
        ConfigLock::acquire(&file, Duration::ZERO).expect("taken over");
    }
}
