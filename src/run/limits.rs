//! Resource limits: herd raises its own open-file limit at start, and tells a spawn that failed
//! for lack of resources (a task that must wait for a slot) from one that failed for the task's
//! own reasons.

use rustix::io::Errno;
use rustix::process::{Resource, getrlimit, setrlimit};

/// Raises the soft open-file limit to the hard limit: every agent costs a PTY and a few pipes.
/// Returns (before, after) soft limits, `None` for unlimited.
pub fn raise_open_file_limit() -> (Option<u64>, Option<u64>) {
    let limit = getrlimit(Resource::Nofile);
    let before = limit.current;
    if limit.current == limit.maximum {
        return (before, before);
    }
    let raised = rustix::process::Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => (before, limit.maximum),
        Err(error) => {
            tracing::warn!(
                "cannot raise the open-file limit to {:?}: {error}",
                limit.maximum
            );
            (before, before)
        }
    }
}

/// The OS errors that mean "not now" (files, processes or memory ran out), not "never".
const SHORTAGES: [Errno; 4] = [Errno::MFILE, Errno::NFILE, Errno::AGAIN, Errno::NOMEM];

/// Texts of the same errors where a library turned them into strings (portable-pty does).
const SHORTAGE_TEXTS: &[&str] = &[
    "Too many open files",
    "Resource temporarily unavailable",
    "Cannot allocate memory",
];

/// Whether a failed spawn failed for lack of resources.
pub fn is_resource_shortage(error: &color_eyre::eyre::Report) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::raw_os_error)
            .is_some_and(|code| SHORTAGES.iter().any(|e| e.raw_os_error() == code))
            || SHORTAGE_TEXTS.iter().any(|t| cause.to_string().contains(t))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use color_eyre::eyre::{WrapErr, eyre};

    #[test]
    fn shortages_are_told_from_other_spawn_failures() {
        let emfile: color_eyre::Result<()> = Err(std::io::Error::from_raw_os_error(
            Errno::MFILE.raw_os_error(),
        ))
        .wrap_err("cannot open a pseudo-terminal");
        assert!(is_resource_shortage(&emfile.unwrap_err()));
        assert!(is_resource_shortage(&eyre!(
            "cannot start x: fork: Resource temporarily unavailable (os error 11)"
        )));
        // portable-pty's dup of the terminal for stdin/stdout/stderr, with its cause.
        assert!(is_resource_shortage(&eyre!(
            "cannot start /usr/bin/sh: dup of fd 37 failed: Too many open files (os error 24)"
        )));
        let missing: color_eyre::Result<()> = Err(std::io::Error::from_raw_os_error(
            Errno::NOENT.raw_os_error(),
        ))
        .wrap_err("cannot start x");
        assert!(!is_resource_shortage(&missing.unwrap_err()));
    }

    #[test]
    fn the_soft_limit_ends_at_the_hard_limit() {
        let (before, after) = raise_open_file_limit();
        let now = getrlimit(Resource::Nofile);
        assert_eq!(now.current, now.maximum);
        assert_eq!(after, now.current);
        assert!(before <= after || after.is_none());
    }
}
