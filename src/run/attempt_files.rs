//! A running attempt's signal file and agent log, read on a worker every interval (on a host, by
//! one long-lived run of its launcher) and handed over only when changed; asked for the last
//! read, it reads once more and stops. Decides nothing. Reads from a host are also copied into
//! the attempt's recordings, so `runs/` stays the record.

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use super::agent_log::AgentLogTail;
use super::jobs;
use super::remote::files::{FollowEvent, Follower, NoAnswer};
use crate::core::remote::files::{RemoteRead, RolloutSearch};
use crate::core::remote::frames::{ReadBack, choose_rollout};
use crate::core::remote::hosts::Host;

/// A signal file larger than this is not read (it is not a verdict).
pub const SIGNAL_MAX_BYTES: u64 = 1024 * 1024;
/// The most of a remote agent log read at once (more comes with the next read).
const REMOTE_LOG_MAX_BYTES: u64 = 4 * 1024 * 1024;
/// The last read of a remote attempt's files may take this long; the polls, `READ_TIMEOUT`.
const LAST_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// What a signal file held when read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignalText {
    Text(String),
    /// Too large to be a signal file: its size in bytes.
    TooLarge(u64),
}

/// What the worker hands over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilesReport {
    /// The signal file changed.
    Signal(SignalText),
    /// The agent's log grew.
    AgentLog(Vec<u8>),
    /// The last read, at the attempt's end; `trouble` says why the host could not be read.
    Last {
        signal: Option<SignalText>,
        log: Vec<u8>,
        trouble: Option<NoAnswer>,
    },
}

/// What was made before an attempt's agent starts, off the loop.
#[derive(Debug)]
pub enum Preparation {
    /// Here: the task's worktree (when it has one) made, its signal file cleared.
    Local {
        worktree: Option<Result<PathBuf, crate::run::worktree::WorktreeError>>,
        /// `trust_folder`: the folder trusted in the CLI's config, or why it could not be.
        trusted: Option<Result<crate::core::profile::folder_trust::FolderTrust, String>>,
        /// Where the folder stood as the attempt starts (`run::changes`), when it could be taken.
        snapshot: Option<(
            crate::run::changes::attempt::AttemptFolder,
            Option<crate::core::facts::changes::StartPoint>,
        )>,
    },
    /// On a host, through its launcher (`run::remote::files::prepare`).
    Remote(super::remote::files::PrepareOutcome),
}

/// Where the files are.
pub enum FileSource {
    Local {
        signal: Option<PathBuf>,
        log: Option<AgentLogTail>,
    },
    /// On a host: absolute paths there, and the local copies kept in the recordings.
    Remote {
        host: Box<Host>,
        signal: Option<String>,
        log: Option<String>,
        copy_signal: Option<PathBuf>,
        copy_log: Option<PathBuf>,
        /// Without a known log: the Codex rollout to look for there (`log` once found).
        rollouts: Option<RemoteRollouts>,
    },
}

/// Where a remote attempt's Codex rollout is looked for.
pub struct RemoteRollouts {
    /// `CODEX_HOME` of the attempt, when it set one.
    pub codex_home: Option<String>,
    /// The attempt's stamp file on the host (absolute).
    pub stamp: String,
    /// The task's folder on the host.
    pub cwd: String,
}

/// The worker of one attempt; dropping it ends the worker.
pub struct FileWatch {
    last: mpsc::Sender<()>,
}

/// How often the worker of a remote attempt looks at what its follower read.
const REMOTE_LOOK: Duration = Duration::from_millis(100);

impl FileWatch {
    /// Starts the worker, reading every `every`; `post` says whether the loop is still there.
    pub fn start(
        name: String,
        source: FileSource,
        every: Duration,
        post: impl Fn(FilesReport) -> bool + Send + 'static,
    ) -> std::io::Result<FileWatch> {
        let (last, asked) = mpsc::channel();
        let look = match source {
            FileSource::Local { .. } => every,
            FileSource::Remote { .. } => REMOTE_LOOK.min(every),
        };
        let work = move || {
            let mut reader = Reader {
                source,
                every,
                offset: 0,
                handed: None,
                follower: None,
                follow_after: std::time::Instant::now(),
            };
            // Hands over what changed; false once the loop is gone.
            let hand = |reader: &mut Reader, signal: Option<SignalText>, log: Vec<u8>| {
                let changed = signal.filter(|s| reader.handed.as_ref() != Some(s));
                if let Some(signal) = changed {
                    reader.handed = Some(signal.clone());
                    if !post(FilesReport::Signal(signal)) {
                        return false;
                    }
                }
                log.is_empty() || post(FilesReport::AgentLog(log))
            };
            loop {
                match asked.recv_timeout(look) {
                    Ok(()) => {
                        for (signal, log) in reader.stop_following() {
                            if !hand(&mut reader, signal, log) {
                                return;
                            }
                        }
                        let (signal, log, trouble) = reader.read_once(true);
                        post(FilesReport::Last {
                            signal,
                            log,
                            trouble,
                        });
                        return;
                    }
                    Err(RecvTimeoutError::Timeout) => {
                        for (signal, log) in reader.poll() {
                            if !hand(&mut reader, signal, log) {
                                return;
                            }
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        };
        // Not joined: the worker ends on the last read, or when this watch is dropped.
        jobs::spawn_thread(name, work).map_err(|not| not.error.cause)?;
        Ok(FileWatch { last })
    }

    /// Asks for the last read; `false` when the worker is gone (nothing will come).
    pub fn ask_last(&self) -> bool {
        self.last.send(()).is_ok()
    }
}

type Found = (Option<SignalText>, Vec<u8>);

/// The read of a remote source's files, the log from `offset`.
fn remote_read<'a>(
    signal: &'a Option<String>,
    log: &'a Option<String>,
    rollouts: &'a Option<RemoteRollouts>,
    offset: u64,
) -> RemoteRead<'a> {
    RemoteRead {
        signal: signal.as_deref(),
        log: log.as_deref().map(|path| (path, offset)),
        signal_max: SIGNAL_MAX_BYTES,
        log_max: REMOTE_LOG_MAX_BYTES,
        rollouts: rollouts.as_ref().map(|r| RolloutSearch {
            codex_home: r.codex_home.as_deref(),
            stamp: &r.stamp,
            cwd: &r.cwd,
        }),
    }
}

struct Reader {
    source: FileSource,
    every: Duration,
    /// How much of a remote log was read.
    offset: u64,
    /// The signal text last handed over.
    handed: Option<SignalText>,
    /// The long-lived read on the host, while it runs.
    follower: Option<Follower>,
    /// When a follower that went away is started again.
    follow_after: std::time::Instant,
}

impl Reader {
    /// What was read since the last poll: one read here, the follower's rounds on a host.
    fn poll(&mut self) -> Vec<Found> {
        let FileSource::Remote {
            host,
            signal,
            log,
            rollouts,
            ..
        } = &self.source
        else {
            let (signal, log, _) = self.read_once(false);
            return vec![(signal, log)];
        };
        let now = std::time::Instant::now();
        if self.follower.is_none() && now >= self.follow_after {
            let read = remote_read(signal, log, rollouts, self.offset);
            match Follower::start(host, &read, self.every) {
                Ok(follower) => self.follower = Some(follower),
                Err(error) => {
                    tracing::debug!(host = %host.name, "cannot follow the attempt's files: {error}");
                    self.follow_after = now + self.every;
                }
            }
        }
        let events = self
            .follower
            .as_ref()
            .map(Follower::seen)
            .unwrap_or_default();
        let mut found = Vec::new();
        for event in events {
            match event {
                FollowEvent::Round(back) => {
                    let (text, bytes, rollout) = self.absorb(back, false);
                    found.push((text, bytes));
                    if rollout {
                        // Followed again, now with its log.
                        self.follower = None;
                        self.follow_after = now;
                        break;
                    }
                }
                FollowEvent::Gone(why) => {
                    tracing::debug!("the read of the attempt's files on its host went: {why}");
                    self.follower = None;
                    self.follow_after = now + self.every;
                }
            }
        }
        found
    }

    /// Ends the follower, with what it read and was not handed over yet.
    fn stop_following(&mut self) -> Vec<Found> {
        let Some(follower) = self.follower.take() else {
            return Vec::new();
        };
        let events = follower.seen();
        drop(follower);
        events
            .into_iter()
            .filter_map(|event| match event {
                FollowEvent::Round(back) => {
                    let (text, bytes, _) = self.absorb(back, false);
                    Some((text, bytes))
                }
                FollowEvent::Gone(_) => None,
            })
            .collect()
    }

    /// The signal file and the log's new bytes, read now; on a host, why it could not be read.
    fn read_once(&mut self, last: bool) -> (Option<SignalText>, Vec<u8>, Option<NoAnswer>) {
        match &mut self.source {
            FileSource::Local { signal, log } => {
                let text = signal
                    .as_ref()
                    .and_then(|path| match std::fs::metadata(path) {
                        Ok(meta) if meta.len() > SIGNAL_MAX_BYTES => {
                            Some(SignalText::TooLarge(meta.len()))
                        }
                        Ok(_) => std::fs::read_to_string(path).ok().map(SignalText::Text),
                        Err(_) => None,
                    });
                let bytes = log.as_mut().map(AgentLogTail::read_new).unwrap_or_default();
                (text, bytes, None)
            }
            FileSource::Remote {
                host,
                signal,
                log,
                rollouts,
                ..
            } => {
                let read = remote_read(signal, log, rollouts, self.offset);
                let timeout = if last {
                    LAST_READ_TIMEOUT
                } else {
                    super::remote::files::READ_TIMEOUT
                };
                match super::remote::files::read(host, &read, timeout) {
                    Ok(back) => match self.absorb(back, last) {
                        // Found just now: read it too.
                        (_, _, true) => self.read_once(last),
                        (text, bytes, false) => (text, bytes, None),
                    },
                    Err(why) => {
                        tracing::debug!(host = %host.name, "cannot read the attempt's files: {why}");
                        (None, Vec::new(), Some(why))
                    }
                }
            }
        }
    }

    /// What a read on the host found, the copies kept, and whether the rollout was just found.
    fn absorb(&mut self, back: ReadBack, last: bool) -> (Option<SignalText>, Vec<u8>, bool) {
        let text = back.signal.and_then(|found| match found {
            Ok(bytes) => String::from_utf8(bytes).ok().map(SignalText::Text),
            Err(size) => Some(SignalText::TooLarge(size)),
        });
        let mut bytes = Vec::new();
        if let Some((from, new)) = back.log {
            self.offset = from + new.len() as u64;
            bytes = new;
        }
        let mut found_rollout = false;
        if let FileSource::Remote {
            log: log @ None,
            rollouts: Some(search),
            ..
        } = &mut self.source
        {
            let mut folders = vec![search.cwd.as_str()];
            folders.extend(back.cwd_real.as_deref());
            if let Some(path) = choose_rollout(&back.rollouts, &folders) {
                *log = Some(path);
                self.offset = 0;
                found_rollout = true;
            }
        }
        if let FileSource::Remote {
            copy_signal,
            copy_log,
            ..
        } = &self.source
        {
            if let (Some(path), false) = (copy_log.as_ref(), bytes.is_empty()) {
                copy(path, &bytes, true);
            }
            if let (Some(path), true, Some(SignalText::Text(text))) =
                (copy_signal.as_ref(), last, text.as_ref())
            {
                copy(path, text.as_bytes(), false);
            }
        }
        (text, bytes, found_rollout)
    }
}

/// Keeps what was read from a host in the recordings (best effort: the attempt goes on).
fn copy(path: &std::path::Path, bytes: &[u8], append: bool) {
    let file = if append {
        super::safe_fs::append_file(path)
    } else {
        super::safe_fs::create_file(path)
    };
    let written = file
        .map_err(|e| e.to_string())
        .and_then(|mut f| f.write_all(bytes).map_err(|e| e.to_string()));
    if let Err(error) = written {
        tracing::warn!(path = %path.display(), "cannot keep a copy of the host's file: {error}");
    }
}

#[cfg(test)]
#[path = "attempt_files_tests.rs"]
mod tests;
