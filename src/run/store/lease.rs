//! A write lease on the tasks file's spare (`F_SETLEASE`): granted only when no other open file
//! refers to it, proving nobody reads the version about to be overwritten. Besides `run::spawn`,
//! the only module allowed `unsafe`: two `fcntl` calls on a borrowed descriptor, touching no
//! memory. A lease break is signalled with SIGURG (ignored by default; SIGIO would end herd).

#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// `F_SETSIG` (Linux's `fcntl.h`, not bound by libc): the signal of a lease break.
const F_SETSIG: libc::c_int = 10;

/// What asking for a write lease came to.
#[derive(Debug)]
pub(super) enum Lease {
    /// Held: nobody else has the file open until `release`.
    Held,
    /// Someone has the file open (a reader of an old version): leave the file as it is.
    Busy,
    /// Leases cannot be had here (file system, permissions, leases switched off).
    Unavailable(io::Error),
}

/// Asks for a write lease on `file` (open for writing).
pub(super) fn take(file: &File) -> Lease {
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is open for as long as `file` is borrowed; F_SETSIG takes an integer.
    if unsafe { libc::fcntl(fd, F_SETSIG, libc::SIGURG) } == -1 {
        return Lease::Unavailable(io::Error::last_os_error());
    }
    // SAFETY: as above; F_SETLEASE takes an integer.
    if unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_WRLCK) } == 0 {
        return Lease::Held;
    }
    let error = io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::EAGAIN) => Lease::Busy,
        _ => Lease::Unavailable(error),
    }
}

/// Gives the lease on `file` up.
pub(super) fn release(file: &File) -> io::Result<()> {
    // SAFETY: `file`'s descriptor is open while it is borrowed; F_SETLEASE takes an integer.
    match unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK) } {
        -1 => Err(io::Error::last_os_error()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_held_only_while_nobody_else_has_the_file_open() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("spare");
        let file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .expect("create");
        match take(&file) {
            Lease::Held => {}
            // Some file systems (or a container's settings) have no leases: nothing to test.
            Lease::Unavailable(error) => {
                eprintln!("leases are not available here: {error}");
                return;
            }
            Lease::Busy => panic!("nobody else has it open"),
        }
        release(&file).expect("released");
        let reader = File::open(&path).expect("a reader");
        assert!(matches!(take(&file), Lease::Busy));
        drop(reader);
        assert!(matches!(take(&file), Lease::Held));
        release(&file).expect("released");
    }
}
