//! A host's trouble at an attempt's start or end: the launcher's end told apart from the
//! agent's (a host that cannot be reached or a lost connection sends the task back to the
//! queue, not counted against its retries, and takes the host out of rotation), and the tasks'
//! records of which host they ran on or were lost on. The engine composes the parts' steps
//! here (`executor`); this holds each part's own.

use std::time::{Duration, Instant};

use color_eyre::eyre::Result;
use serde_json::json;

use super::attempts::{Attempts, LiveAttempt};
use super::event::EngineEvent;
use super::tasks::Tasks;
use crate::core::batch::Input;
use crate::core::remote::hosts::Host;
use crate::core::remote::script::LauncherEnd;
use crate::core::task::TaskStatus;
use crate::run::outcome;

/// The task field that says which host a task's latest attempt ran on (kept after it ends).
pub(super) const RAN_ON_FIELD: &str = "ran_on";
/// The task field that names a host left unswept after a lost connection (until swept).
const LOST_ON_FIELD: &str = "lost_on";

/// A host's trouble that ended an attempt, or kept one from starting.
pub(super) struct HostTrouble {
    pub(super) host: Host,
    /// The connection was lost (rather than never made).
    pub(super) lost: bool,
    reason: String,
    /// What happened, in words.
    what: String,
}

impl HostTrouble {
    fn new(host: Host, lost: bool, reason: String) -> HostTrouble {
        let name = &host.name;
        let what = if lost {
            format!("lost the connection to host {name}: {reason}")
        } else {
            format!("host {name} cannot be reached: {reason}")
        };
        HostTrouble {
            host,
            lost,
            reason,
            what,
        }
    }

    /// The host could not be reached to prepare an attempt.
    pub(super) fn unreachable(host: Host, reason: String) -> HostTrouble {
        HostTrouble::new(host, false, reason)
    }

    fn out_for(&self) -> Duration {
        Duration::from_secs(self.host.out_of_rotation_sec)
    }

    /// The batch's input that takes the host out of rotation.
    pub(super) fn host_out(&self) -> Input {
        Input::HostOut {
            host: self.host.name.clone(),
            reason: self.reason.clone(),
            out_for: self.out_for(),
        }
    }

    /// What the frontends are told, about task `task_id`.
    pub(super) fn event(&self, task_id: &str) -> EngineEvent {
        EngineEvent::HostTrouble {
            task_id: task_id.to_string(),
            host: self.host.name.clone(),
            evidence: self.what.clone(),
            out_for: self.out_for(),
        }
    }
}

impl Attempts {
    /// Live attempt `key`, when it ended through its host rather than its agent, taken out of
    /// the table with that trouble. `exit_code`: its launcher's; `lost`: the host could not be
    /// read at the attempt's end (its signal file, which decides the verdict), whatever the
    /// launcher said.
    pub(super) fn take_on_host_trouble(
        &mut self,
        key: u64,
        exit_code: Option<i32>,
        lost: Option<String>,
    ) -> Option<(LiveAttempt, HostTrouble)> {
        let live = self.get_live(key)?;
        let remote = live.remote.as_ref()?;
        let end = match lost {
            Some(reason) => LauncherEnd::Lost { reason },
            None => remote.end(exit_code, live.stopped_by_operator),
        };
        let (lost, reason) = match end {
            LauncherEnd::Agent => return None,
            LauncherEnd::Unreachable { reason } => (false, reason),
            LauncherEnd::Lost { reason } => (true, reason),
        };
        let mut live = self.take_live(key)?;
        let host = live.remote.take()?.host;
        Some((live, HostTrouble::new(host, lost, reason)))
    }
}

impl LiveAttempt {
    /// The recording of an attempt its host ended is finished and kept under another name:
    /// the next attempt takes its number.
    pub(super) fn set_aside(
        &mut self,
        trouble: &HostTrouble,
        now: Instant,
        wall: jiff::Timestamp,
    ) -> Result<()> {
        let at = now.saturating_duration_since(self.started);
        let facts = json!({
            "attempt": self.number,
            "argv": self.plan.argv,
            "cwd": self.plan.cwd.display().to_string(),
            "host": trouble.host.name,
            "host_trouble": trouble.what,
            "not_counted": true,
            "ended_processes": std::mem::take(&mut self.swept),
        });
        self.recorder.finish(at, &facts)?;
        set_aside(self.recorder.paths(), self.number, wall.as_second());
        Ok(())
    }
}

impl Tasks {
    /// Attempt `number` of task `index` ended through its host: the task goes back to the
    /// queue, not counted.
    pub(super) fn back_after_host_trouble(
        &mut self,
        (index, number): (usize, u32),
        trouble: &HostTrouble,
        wall: jiff::Timestamp,
    ) {
        let host = &trouble.host.name;
        self.note_host_trouble(index, trouble, wall);
        let file = self.store.file_mut();
        if trouble.lost {
            file.set_field(index, LOST_ON_FIELD, json!(host));
        }
        file.set_status(index, TaskStatus::Retryable);
        file.set_attempts(index, number.saturating_sub(1));
        let task_id = &file.tasks()[index].task_id;
        tracing::warn!(task = %task_id, attempt = number, "{}; the task goes back to the queue (not counted) and {host} is out of rotation for {} s", trouble.what, trouble.out_for().as_secs());
    }

    /// The host of task `index`'s planned attempt could not be reached to prepare it: the
    /// attempt did not happen (the task keeps its status and attempts).
    pub(super) fn unreachable_at_start(
        &mut self,
        index: usize,
        trouble: &HostTrouble,
        wall: jiff::Timestamp,
    ) {
        self.note_host_trouble(index, trouble, wall);
        let (task_id, name) = (
            &self.store.file().tasks()[index].task_id,
            &trouble.host.name,
        );
        tracing::warn!(task = %task_id, "{}; the task waits (not counted) and {name} is out of rotation for {} s", trouble.what, trouble.out_for().as_secs());
    }

    /// Adds `host_trouble` (which host, when, what happened) to task `index`'s result.
    fn note_host_trouble(&mut self, index: usize, trouble: &HostTrouble, wall: jiff::Timestamp) {
        let at = outcome::utc_timestamp(wall);
        let file = self.store.file_mut();
        let mut result = file.tasks()[index]
            .result
            .clone()
            .unwrap_or_else(|| json!({}));
        if let Some(obj) = result.as_object_mut() {
            let (host, what) = (&trouble.host.name, &trouble.what);
            obj.insert(
                "host_trouble".into(),
                json!({"host": host, "at": at, "evidence": what}),
            );
        }
        file.set_result(index, result);
    }

    /// `lost_on` of every task that names `host` is cleared: the host was swept.
    pub(super) fn forget_lost_on(&mut self, host: &str) {
        let indexes: Vec<usize> = (0..self.store.file().tasks().len())
            .filter(|&i| self.store.file().tasks()[i].lost_on.as_deref() == Some(host))
            .collect();
        for index in indexes {
            self.store.file_mut().remove_field(index, LOST_ON_FIELD);
        }
    }
}

/// Renames a lost attempt's recordings (`attempt_3.cast` → `attempt_3.host-lost-<time>.cast`):
/// kept for the operator, and out of the way of the attempt that takes its number.
/// `stamp`: now, in seconds since the epoch.
fn set_aside(paths: &crate::run::recorder::AttemptPaths, number: u32, stamp: i64) {
    for path in [&paths.log, &paths.cast, &paths.facts] {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let prefix = format!("attempt_{number}.");
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let to = path.with_file_name(format!("attempt_{number}.host-lost-{stamp}.{rest}"));
        if let Err(error) = std::fs::rename(path, &to)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("cannot set {} aside: {error}", path.display());
        }
    }
}
