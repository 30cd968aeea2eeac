//! Attempts on other hosts: the `Hosts` part (the run's hosts, and the attempts whose
//! connection was lost, swept once their host is back), and the survivors of a herd that died
//! ended on the hosts it used. `host_trouble` tells the launcher's end apart from the agent's (a
//! host that cannot be reached or a lost connection sends the task back to the queue, not
//! counted against its retries, and takes the host out of rotation).
//!
//! The shell code and the launchers are `run::remote`; which host a task's next attempt takes
//! (least loaded of its group, `max_agents`, rotation) is `core::batch::fill`'s choice.

mod remote_state;

use std::time::{Duration, Instant};

use super::attempts::LiveAttempt;
use crate::core::batch::Queue;
use crate::core::remote::hosts::{Host, HostSet};
use crate::core::remote::script::SweepScope;
use crate::core::task::{TaskSpec, TaskStatus};
use crate::run::hygiene::{self, EndedProcess};
use crate::run::jobs::{self, Job};
use crate::run::remote;

pub(super) use remote_state::RemoteState;

/// The run's hosts, and the attempts left unswept on them.
pub(super) struct Hosts {
    /// The hosts a task's `host` may name.
    set: HostSet,
    /// Attempts whose connection was lost (host, cookie): swept on their host once it is back.
    unswept: Vec<(Host, String)>,
}

impl Hosts {
    pub(super) fn new(set: HostSet) -> Hosts {
        Hosts {
            set,
            unswept: Vec::new(),
        }
    }

    /// Every host and group of the run.
    pub(super) fn set(&self) -> &HostSet {
        &self.set
    }

    /// An attempt's connection to `host` was lost: what it left there is swept once the host
    /// is back.
    pub(super) fn lost(&mut self, host: Host, cookie: String) {
        self.unswept.push((host, cookie));
    }

    pub(super) fn any_unswept(&self) -> bool {
        !self.unswept.is_empty()
    }

    /// Sweeps again, on a worker, the attempts whose connection was lost once their host is
    /// back in rotation.
    pub(in crate::run::engine) fn sweep_back(&mut self, queue: &Queue, now: Instant) {
        let (back, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.unswept)
            .into_iter()
            .partition(|(host, _)| queue.host_in_rotation(&host.name, now));
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
    /// those that went away while a task ran there, are swept for this file's cookies
    /// (`tag`), in parallel; what was ended, and the hosts swept.
    pub(in crate::run::engine) fn survivors(
        &self,
        tasks: &[TaskSpec],
        tag: &str,
    ) -> (Vec<EndedProcess>, Vec<String>) {
        let mut hosts: Vec<Host> = Vec::new();
        for task in tasks {
            let troubled = task.lost_on.as_deref();
            let ran_on = (task.status == TaskStatus::Running)
                .then_some(task.ran_on.as_deref())
                .flatten();
            for name in [ran_on, troubled].into_iter().flatten() {
                if let Some(host) = self.set.get(name)
                    && !hosts.iter().any(|h| h.name == host.name)
                {
                    hosts.push(host.clone());
                }
            }
        }
        let tag = tag.to_string();
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
        let mut swept = Vec::new();
        for sweep in sweeps {
            match sweep.join() {
                Some((host, Ok(found))) => {
                    ended.extend(remote::as_ended(&host, found));
                    swept.push(host.name);
                }
                Some((host, Err(why))) => {
                    tracing::warn!(host = %host.name, "cannot end the survivors on the host: {why}");
                }
                None => tracing::warn!("a survivors' sweep on a host panicked"),
            }
        }
        (ended, swept)
    }
}

/// The hosts out of rotation now, with why, for the status bar.
pub(super) fn out_of_rotation(queue: &Queue, now: Instant) -> Vec<(String, String, Duration)> {
    queue
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
