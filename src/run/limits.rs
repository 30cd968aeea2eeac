//! Resource limits: herd raises its open-file limit, and tells a spawn that failed for lack of
//! resources (the task waits for a slot) from one that failed for the task's own reasons.

use rustix::io::Errno;
use rustix::process::{Resource, getrlimit, setrlimit};

/// Raises the soft open-file limit to the hard limit; returns (before, after), `None` unlimited.
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

/// Descriptors herd keeps for its own files while agents run, so it can always record what its
/// agents did.
pub const OWN_FILES_RESERVE: u64 = 16;

/// Descriptors one agent's start needs at once: the terminal's two sides, a reader and a writer.
pub const AGENT_START_FILES: u64 = 4;

/// Whether `open` descriptors under `limit` leave room for one more agent and the reserve.
pub fn room_for_an_agent(open: u64, limit: Option<u64>) -> bool {
    limit.is_none_or(|limit| open + AGENT_START_FILES + OWN_FILES_RESERVE <= limit)
}

/// Fails with `EMFILE` (the task waits for a slot) when starting an agent would leave herd short.
pub fn check_room_for_an_agent() -> std::io::Result<()> {
    let Some(limit) = getrlimit(Resource::Nofile).current else {
        return Ok(());
    };
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        // No /proc: the spawn itself tells a shortage.
        return Ok(());
    };
    // The read_dir's own descriptor is counted too, which errs on the safe side.
    let open = entries.count() as u64;
    if room_for_an_agent(open, Some(limit)) {
        Ok(())
    } else {
        Err(std::io::Error::other(ShortOfFiles { open, limit }))
    }
}

/// The error of [`check_room_for_an_agent`]: says how many are open and kept.
#[derive(Debug, thiserror::Error)]
#[error(
    "{open} of {limit} open files in use; starting an agent now would leave fewer than {OWN_FILES_RESERVE} for herd's own files: Too many open files"
)]
pub struct ShortOfFiles {
    open: u64,
    limit: u64,
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
    fn an_agent_starts_only_with_herds_own_reserve_left() {
        let need = AGENT_START_FILES + OWN_FILES_RESERVE;
        assert!(room_for_an_agent(10, None));
        assert!(room_for_an_agent(10, Some(10 + need)));
        assert!(!room_for_an_agent(11, Some(10 + need)));
        assert!(!room_for_an_agent(40, Some(40)));
    }

    #[test]
    fn a_reserve_shortage_is_a_shortage() {
        let short: color_eyre::Result<()> = Err(std::io::Error::other(ShortOfFiles {
            open: 30,
            limit: 40,
        }))
        .wrap_err("cannot start x");
        let error = short.unwrap_err();
        assert!(is_resource_shortage(&error), "{error:#}");
        assert!(format!("{error:#}").contains("30 of 40 open files in use"));
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
