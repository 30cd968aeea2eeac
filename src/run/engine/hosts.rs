//! Attempts on other hosts, beside the engine so it reaches its state: which host a task's next
//! attempt takes (least loaded of its group, `max_agents`, rotation), the launcher's end told
//! apart from the agent's (a host that cannot be reached or a lost connection sends the task
//! back to the queue, not counted against its retries, and takes the host out of rotation), and
//! the survivors of a herd that died ended on the hosts it used.
//!
//! The shell code and the launchers are `run::remote`; the choice is `core::remote::host_choice`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use color_eyre::eyre::Result;
use serde_json::json;

use super::Engine;
use super::attempts::LiveAttempt;
use super::event::EngineEvent;
use crate::core::remote::host_choice::HostChoice;
use crate::core::remote::hosts::Host;
use crate::core::remote::script::{self as remote_script, LauncherEnd, SweepScope};
use crate::core::task::TaskStatus;
use crate::run::hygiene::{self, EndedProcess};
use crate::run::jobs::{self, Job};
use crate::run::{outcome, remote};

/// The task field that says which host a task's latest attempt ran on (kept after it ends).
pub(super) const RAN_ON_FIELD: &str = "ran_on";
/// The task field that names a host left unswept after a lost connection (until swept).
const LOST_ON_FIELD: &str = "lost_on";

/// What the engine keeps of an attempt that runs on a host.
pub(super) struct RemoteState {
    pub host: Host,
    /// ssh's own messages and the wrapper's note when the launch script could not be sent.
    pub log: PathBuf,
    carry: Vec<u8>,
    /// The agent's exit code, from the launch script's trailer.
    trailer: Option<i32>,
    /// herd signalled the launcher (timeout, exit keys done, cancel): its end is herd's doing.
    pub signalled: bool,
}

impl RemoteState {
    pub(super) fn new(host: Host, log: PathBuf) -> RemoteState {
        RemoteState {
            host,
            log,
            carry: Vec::new(),
            trailer: None,
            signalled: false,
        }
    }

    pub(super) fn scan(&mut self, bytes: &[u8]) {
        if let Some(code) = remote_script::scan_trailer(&mut self.carry, bytes) {
            self.trailer = Some(code);
        }
    }

    /// How the launcher ended, once the agent's terminal is drained.
    fn end(&self, exit_code: Option<i32>, stopped_by_operator: bool) -> LauncherEnd {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        remote_script::launcher_end(
            exit_code,
            self.trailer,
            self.signalled || stopped_by_operator,
            &log,
        )
    }
}

impl Engine {
    /// The host for a task whose `host` is `name`, counting the attempts running and those
    /// about to start (`starting`).
    pub(super) fn choose_host(&self, name: &str, starting: &[&str], now: Instant) -> HostChoice {
        let mut load: BTreeMap<String, usize> = BTreeMap::new();
        for (_, live) in self.attempts.live() {
            if let Some(remote) = &live.remote {
                *load.entry(remote.host.name.clone()).or_default() += 1;
            }
        }
        for (_, planned) in self.attempts.preparing() {
            if let Some(host) = &planned.host {
                *load.entry(host.name.clone()).or_default() += 1;
            }
        }
        for host in starting {
            *load.entry((*host).to_string()).or_default() += 1;
        }
        self.batch
            .queue()
            .choose_host(&self.opts.hosts, name, &load, now)
    }

    /// The hosts out of rotation now, with why, for the status bar.
    pub(super) fn hosts_out_of_rotation(&self, now: Instant) -> Vec<(String, String, Duration)> {
        self.batch
            .queue()
            .hosts_out(now)
            .into_iter()
            .map(|(name, out)| {
                (
                    name.to_string(),
                    out.reason.clone(),
                    out.until.saturating_duration_since(now),
                )
            })
            .collect()
    }

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
            self.unswept
                .push((remote.host.clone(), live.cookie.clone()));
        }
        self.batch
            .queue_mut()
            .take_host_out(&host, reason.clone(), now, for_how_long);
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
        let file = self.store.file_mut();
        if lost {
            file.set_field(index, LOST_ON_FIELD, json!(host));
        }
        file.set_status(index, TaskStatus::Retryable);
        file.set_attempts(index, live.number.saturating_sub(1));
        tracing::warn!(task = %live.task_id, attempt = live.number, "{what}; the task goes back to the queue (not counted) and {host} is out of rotation for {} s", for_how_long.as_secs());
        self.events.push(EngineEvent::HostTrouble {
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
        self.batch
            .queue_mut()
            .take_host_out(&name, reason, now, for_how_long);
        self.note_host_trouble(planned.index, &name, &what);
        tracing::warn!(task = %planned.task.task_id, "{what}; the task waits (not counted) and {name} is out of rotation for {} s", for_how_long.as_secs());
        self.events.push(EngineEvent::HostTrouble {
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
        let file = self.store.file_mut();
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

    /// Sweeps again, on a worker, the attempts whose connection was lost once their host is
    /// back in rotation.
    pub(super) fn sweep_hosts_back(&mut self, now: Instant) {
        let (back, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.unswept)
            .into_iter()
            .partition(|(host, _)| self.batch.queue().host_in_rotation(&host.name, now));
        self.unswept = waiting;
        for (host, cookie) in back {
            let retry = (host.clone(), cookie.clone());
            let sweep = move || match remote::sweep(
                &host,
                SweepScope::Attempt(&cookie),
                hygiene::SWEEP_GRACE,
            ) {
                Ok(found) => {
                    for process in remote::as_ended(&host, found) {
                        tracing::warn!(host = %host.name, "ended a process of an attempt whose connection was lost: {}", hygiene::describe(&process));
                    }
                }
                Err(why) => {
                    tracing::warn!(host = %host.name, "cannot sweep the host after a lost connection: {why}")
                }
            };
            // Not joined: it ends with its sweep. Without a thread the sweep waits for a later
            // turn rather than hold this one up for its grace time.
            if let Err(not) = jobs::spawn_thread(format!("host-sweep-{}", retry.0.name), sweep) {
                tracing::warn!(host = %retry.0.name, "the sweep after a lost connection waits: {}", not.error);
                self.unswept.push(retry);
            }
        }
    }

    /// The survivors on hosts of a herd that died: the hosts its interrupted tasks ran on, and
    /// those that went away while a task ran there, are swept for this file's cookies, in
    /// parallel.
    pub(super) fn remote_survivors(&mut self) -> Vec<EndedProcess> {
        let mut hosts: Vec<Host> = Vec::new();
        for task in self.store.file().tasks() {
            let troubled = task.lost_on.as_deref();
            let ran_on = (task.status == TaskStatus::Running)
                .then_some(task.ran_on.as_deref())
                .flatten();
            for name in [ran_on, troubled].into_iter().flatten() {
                if let Some(host) = self.opts.hosts.get(name)
                    && !hosts.iter().any(|h| h.name == host.name)
                {
                    hosts.push(host.clone());
                }
            }
        }
        let tag = self.file_tag.clone();
        // In parallel; a sweep that gets no thread runs here, at once.
        let sweeps: Vec<_> = hosts
            .into_iter()
            .map(|host| {
                let tag = tag.clone();
                let name = format!("survivors-{}", host.name);
                let sweep = move || {
                    let result = remote::sweep(&host, SweepScope::File(&tag), hygiene::SWEEP_GRACE);
                    (host, result)
                };
                jobs::spawn_thread(name, sweep).unwrap_or_else(|not| Job::done((not.work)()))
            })
            .collect();
        let mut ended = Vec::new();
        for sweep in sweeps {
            match sweep.join() {
                Some((host, Ok(found))) => {
                    ended.extend(remote::as_ended(&host, found));
                    self.forget_lost_on(&host.name);
                }
                Some((host, Err(why))) => {
                    tracing::warn!(host = %host.name, "cannot end the survivors on the host: {why}");
                }
                None => tracing::warn!("a survivors' sweep on a host panicked"),
            }
        }
        ended
    }
}

impl Engine {
    /// `lost_on` of every task that names `host` is cleared: the host was swept.
    fn forget_lost_on(&mut self, host: &str) {
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

/// Ends a remote attempt's processes on its host (after the local sweep), for the sweep thread.
pub(super) fn sweep_on_host(
    live: &LiveAttempt,
) -> Option<impl FnOnce() -> Vec<EndedProcess> + Send + 'static> {
    let remote = live.remote.as_ref()?;
    let host = remote.host.clone();
    let cookie = live.cookie.clone();
    Some(
        move || match remote::sweep(&host, SweepScope::Attempt(&cookie), hygiene::SWEEP_GRACE) {
            Ok(found) => remote::as_ended(&host, found),
            Err(why) => {
                tracing::warn!(host = %host.name, "cannot end the attempt's processes on the host: {why}");
                Vec::new()
            }
        },
    )
}
