//! Process hygiene around attempts, beside the engine so it reaches its state: the survivors of
//! a herd that died on this file are ended before anything starts; each agent's leftovers are
//! swept on a worker thread when it exits; an agent that cannot start for lack of resources
//! leaves its task waiting. The /proc work itself is in `run::hygiene`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use super::attempts::LiveAttempt;
use super::event::EngineEvent;
use super::hosts::Hosts;
use super::inbox::EngineInbox;
use super::tasks::Tasks;
use crate::core::task::TaskSpec;
use crate::run::hygiene::{self, EndedProcess};
use crate::run::jobs::{self, Outbox};

/// A task whose agent could not start for lack of resources tries again after this.
pub(super) const SPAWN_RETRY_AFTER: Duration = Duration::from_secs(5);

impl Tasks {
    /// Ends what attempts of a herd that died on this file left running (found by the file's
    /// cookie tag, here and on the `hosts` they ran on) before anything starts, and says so in
    /// the log and in each task's record.
    pub(super) fn end_survivors(&mut self, hosts: &Hosts) {
        let mut ended = hygiene::end_survivors(&self.file_tag, hygiene::SWEEP_GRACE);
        let (on_hosts, swept) = hosts.survivors(self.store.file().tasks(), &self.file_tag);
        ended.extend(on_hosts);
        for host in swept {
            self.forget_lost_on(&host);
        }
        if ended.is_empty() {
            return;
        }
        let mut by_task: BTreeMap<String, Vec<&EndedProcess>> = BTreeMap::new();
        for process in &ended {
            let task = process
                .cookie
                .as_deref()
                .and_then(hygiene::cookie_task)
                .unwrap_or_default();
            tracing::warn!(
                task,
                "ended a survivor of an interrupted attempt: {}",
                hygiene::describe(process)
            );
            by_task.entry(task.to_string()).or_default().push(process);
        }
        for (task_id, processes) in by_task {
            let Some(index) = self
                .store
                .file()
                .tasks()
                .iter()
                .position(|t| t.task_id == task_id)
            else {
                continue;
            };
            let mut result = self.store.file().tasks()[index]
                .result
                .clone()
                .unwrap_or_else(|| json!({}));
            if let Some(obj) = result.as_object_mut() {
                obj.insert("survivors_ended".into(), json!(processes));
            }
            self.survivors.insert(index, json!(processes));
            self.store.file_mut().set_result(index, result);
        }
    }

    /// The agent could not start for lack of resources while `running` others run: the task
    /// goes back to what it was (`before`: the attempt did not happen), and fewer agents run at
    /// once from now on; what the frontends are told. The task's wait is the caller's.
    pub(super) fn defer_spawn(
        &mut self,
        (index, before): (usize, &TaskSpec),
        reason: String,
        running: usize,
    ) -> EngineEvent {
        self.revert_start(index, before);
        self.opts.concurrency = running.max(1).min(self.opts.concurrency);
        tracing::warn!(task = %before.task_id, concurrency = self.opts.concurrency, "cannot start the agent for lack of resources, the task waits: {reason}");
        EngineEvent::SpawnDeferred {
            task_id: before.task_id.clone(),
            reason,
            concurrency: self.opts.concurrency,
        }
    }
}

/// Notes the agent's descendants (pid, start time) before herd signals it: a child that
/// cleared its environment is then still found after the agent is gone.
pub(super) fn remember_descendants(live: &mut LiveAttempt) {
    for process in hygiene::descendants_of(live.process.pid) {
        if !live.known_processes.contains(&process) {
            live.known_processes.push(process);
        }
    }
}

/// Ends what the attempt left running (TERM, grace, KILL) on a worker thread, which reports
/// back with what it ended; the attempt concludes after that. `true`: no worker could be had
/// and the sweep was done here, at once.
pub(super) fn sweep_in_background(
    key: u64,
    live: &mut LiveAttempt,
    reports: Outbox<EngineInbox>,
) -> bool {
    let cookie = live.cookie.clone();
    let known = live.known_processes.clone();
    let since = live.process.start_time;
    let on_host = super::hosts::sweep_on_host(live);
    let swept = reports.map(move |ended| EngineInbox::from_sweep(key, ended));
    let sweep = move || {
        let mut ended = hygiene::end_attempt(&cookie, &known, since, hygiene::SWEEP_GRACE);
        if let Some(sweep) = on_host {
            ended.extend(sweep());
        }
        ended
    };
    if let Err(not) = jobs::spawn_job(format!("sweep-{key}"), swept, sweep) {
        // No thread to spare: kill them at once here rather than leave them.
        tracing::warn!(
            "cannot start the sweep of attempt {key}: {}",
            not.error.cause
        );
        let mut ended = hygiene::end_attempt(
            &live.cookie,
            &live.known_processes,
            live.process.start_time,
            Duration::ZERO,
        );
        if let Some(sweep) = super::hosts::sweep_on_host(live) {
            ended.extend(sweep());
        }
        live.swept = ended;
        return true;
    }
    false
}
