//! One `herd run --detach` at a time per tasks file: the launcher holds an exclusive lock on
//! the file's `<key>.start` in the rendezvous folder from before it looks for a running herd
//! until the herd it started is up (registered and attached to), so a second launcher waits for
//! the first and then finds its herd, instead of starting a second holder that loses the tasks
//! file's lock and writes its failure into the first one's `runs/background.log`. The lock file
//! is removed when the start is over; a lock file left by a launcher that died is taken over.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Held while this launcher starts the background herd of a tasks file.
#[derive(Debug)]
pub struct Starting {
    file: File,
    path: PathBuf,
}

/// How many times the lock is taken again when the file was removed under it.
const ATTEMPTS: usize = 20;

impl Starting {
    /// Waits until no other launcher starts a herd for the file whose start lock is `path`,
    /// then holds it.
    pub fn take(path: &Path) -> io::Result<Starting> {
        for _ in 0..ATTEMPTS {
            let file = File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)?;
            file.lock()?;
            // The launcher before removed the name between our open and our lock: the lock is
            // on a file nobody else will find; take the one the name leads to now.
            if still_named(&file, path) {
                return Ok(Starting {
                    file,
                    path: path.to_path_buf(),
                });
            }
        }
        Err(io::Error::other(
            "the start lock kept being removed while herd took it",
        ))
    }
}

impl Drop for Starting {
    fn drop(&mut self) {
        // Removed while still held: a launcher waiting on this file then sees it is unnamed.
        let _ = fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

fn still_named(file: &File, path: &Path) -> bool {
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(held), Ok(named)) => held.dev() == named.dev() && held.ino() == named.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_second_start_waits_for_the_first_and_the_file_is_gone_after() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("k.start");
        let first = Starting::take(&path).expect("first");
        let (took, taken) = mpsc::channel();
        let waiting = path.clone();
        let second = std::thread::spawn(move || {
            let held = Starting::take(&waiting).expect("second");
            took.send(()).expect("send");
            drop(held);
        });
        // The second must still be waiting while the first holds the lock.
        assert_eq!(
            taken.recv_timeout(Duration::from_millis(300)),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        drop(first);
        taken
            .recv_timeout(Duration::from_secs(10))
            .expect("the second takes it once the first is done");
        second.join().expect("joined");
        assert!(!path.exists(), "removed when the start is over");
    }
}
