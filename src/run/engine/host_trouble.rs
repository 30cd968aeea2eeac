//! A host's trouble at an attempt's start or end: the launcher's end told apart from the
//! agent's (a host that cannot be reached or a lost connection sends the task back to the
//! queue, not counted against its retries, and takes the host out of rotation), and the tasks'
//! records of which host they ran on or were lost on.

use std::time::{Duration, Instant};

use color_eyre::eyre::Result;
use serde_json::json;

use super::Engine;
use super::event::EngineEvent;
use crate::core::batch::Input;
use crate::core::remote::script::LauncherEnd;
use crate::core::task::TaskStatus;
use crate::run::outcome;

/// The task field that says which host a task's latest attempt ran on (kept after it ends).
pub(super) const RAN_ON_FIELD: &str = "ran_on";
/// The task field that names a host left unswept after a lost connection (until swept).
const LOST_ON_FIELD: &str = "lost_on";

impl Engine {
    /// Whether attempt `key` ended through its host rather than its agent; if so the task goes
    /// back to the queue (not counted), the host out of rotation, and `true` is returned.
    /// `lost`: the host could not be read at the attempt's end (its signal file, which decides
    /// the verdict), whatever the launcher said.
    pub(super) fn conclude_on_host_trouble(
        &mut self,
        key: u64,
        now: Instant,
        lost: Option<String>,
    ) -> Result<bool> {
        let Some(live) = self.attempts.get_live(key) else {
            return Ok(false);
        };
        let Some(remote) = &live.remote else {
            return Ok(false);
        };
        let exit_code = self
            .batch
            .end(key)
            .and_then(|end| end.exit())
            .and_then(|e| e.code);
        let end = match lost {
            Some(reason) => LauncherEnd::Lost { reason },
            None => remote.end(exit_code, live.stopped_by_operator),
        };
        let (lost, reason) = match end {
            LauncherEnd::Agent => return Ok(false),
            LauncherEnd::Unreachable { reason } => (false, reason),
            LauncherEnd::Lost { reason } => (true, reason),
        };
        let Some(mut live) = self.attempts.take_live(key) else {
            return Ok(false);
        };
        let Some(remote) = live.remote.take() else {
            return Ok(false);
        };
        let host = remote.host.name.clone();
        let what = if lost {
            format!("lost the connection to host {host}: {reason}")
        } else {
            format!("host {host} cannot be reached: {reason}")
        };
        let for_how_long = Duration::from_secs(remote.host.out_of_rotation_sec);
        if lost {
            // What it left on the host may still run (an agent that ignores SIGHUP) and the
            // sweep could not reach it: swept again once the host is back.
            self.hosts.lost(remote.host.clone(), live.cookie.clone());
        }
        let out = Input::HostOut {
            host: host.clone(),
            reason,
            out_for: for_how_long,
        };
        self.batch.handle(out, now);
        // The attempt's recording is kept under another name: the next attempt takes its number.
        let at = now.saturating_duration_since(live.started);
        let facts = json!({
            "attempt": live.number,
            "argv": live.plan.argv,
            "cwd": live.plan.cwd.display().to_string(),
            "host": host,
            "host_trouble": what,
            "not_counted": true,
            "ended_processes": std::mem::take(&mut live.swept),
        });
        live.recorder.finish(at, &facts)?;
        set_aside(
            live.recorder.paths(),
            live.number,
            self.clock.wall.as_second(),
        );
        let index = live.task;
        self.note_host_trouble(index, &host, &what);
        let file = self.tasks.store.file_mut();
        if lost {
            file.set_field(index, LOST_ON_FIELD, json!(host));
        }
        file.set_status(index, TaskStatus::Retryable);
        file.set_attempts(index, live.number.saturating_sub(1));
        tracing::warn!(task = %live.task_id, attempt = live.number, "{what}; the task goes back to the queue (not counted) and {host} is out of rotation for {} s", for_how_long.as_secs());
        self.out.events.push(EngineEvent::HostTrouble {
            task_id: live.task_id.clone(),
            host,
            evidence: what,
            out_for: for_how_long,
        });
        Ok(true)
    }

    /// The host of a planned attempt could not be reached to prepare it: the attempt did not
    /// happen (the task keeps its status and attempts) and the host goes out of rotation.
    pub(super) fn unreachable_at_start(
        &mut self,
        planned: super::attempts::Planned,
        reason: String,
        now: Instant,
    ) -> Result<()> {
        let Some(host) = planned.host else {
            return Ok(());
        };
        let name = host.name.clone();
        let what = format!("host {name} cannot be reached: {reason}");
        let for_how_long = Duration::from_secs(host.out_of_rotation_sec);
        let out = Input::HostOut {
            host: name.clone(),
            reason,
            out_for: for_how_long,
        };
        self.batch.handle(out, now);
        self.note_host_trouble(planned.index, &name, &what);
        tracing::warn!(task = %planned.task.task_id, "{what}; the task waits (not counted) and {name} is out of rotation for {} s", for_how_long.as_secs());
        self.out.events.push(EngineEvent::HostTrouble {
            task_id: planned.task.task_id.clone(),
            host: name,
            evidence: what,
            out_for: for_how_long,
        });
        Ok(())
    }

    /// Adds `host_trouble` (which host, when, what happened) to task `index`'s result.
    fn note_host_trouble(&mut self, index: usize, host: &str, what: &str) {
        let at = outcome::utc_timestamp(self.clock.wall);
        let file = self.tasks.store.file_mut();
        let mut result = file.tasks()[index]
            .result
            .clone()
            .unwrap_or_else(|| json!({}));
        if let Some(obj) = result.as_object_mut() {
            obj.insert(
                "host_trouble".into(),
                json!({"host": host, "at": at, "evidence": what}),
            );
        }
        file.set_result(index, result);
    }
}

impl Engine {
    /// `lost_on` of every task that names `host` is cleared: the host was swept.
    pub(super) fn forget_lost_on(&mut self, host: &str) {
        let indexes: Vec<usize> = (0..self.tasks.store.file().tasks().len())
            .filter(|&i| self.tasks.store.file().tasks()[i].lost_on.as_deref() == Some(host))
            .collect();
        for index in indexes {
            self.tasks
                .store
                .file_mut()
                .remove_field(index, LOST_ON_FIELD);
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
