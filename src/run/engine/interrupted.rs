//! The last kill: when herd leaves for good (a second Ctrl-C, or giving up), every agent's
//! process group is killed at once, and every process the attempts started, wherever it went.
//! The operator's stop and herd giving up are the engine's (`Engine::stop`, `Engine::abandon`).

use std::time::Duration;

use super::attempts::Attempts;
use crate::run::hygiene;
use crate::run::jobs::{self, Job};

/// `Engine::kill_all`.
pub(super) fn kill_every_agent(attempts: &Attempts) {
    for (_, live) in attempts.live() {
        live.process.signal(crate::core::attempt::StopSignal::Kill);
    }
    // The hosts' sweeps run at once, each on its own thread, while the local ones run here
    // (a sweep that gets no thread runs here too, before them).
    let on_hosts: Vec<_> = attempts
        .live()
        .filter_map(|(key, live)| {
            let sweep = super::hosts::sweep_on_host(live)?;
            let job = jobs::spawn_thread(format!("leave-sweep-{key}"), sweep)
                .unwrap_or_else(|not| Job::done((not.work)()));
            Some((live.task_id.clone(), job))
        })
        .collect();
    for (_, live) in attempts.live() {
        let ended = hygiene::end_attempt(
            &live.cookie,
            &live.known_processes,
            live.process.start_time,
            Duration::ZERO,
        );
        for process in &ended {
            tracing::info!(task = %live.task_id, attempt = live.number, "killed on leaving: {}", hygiene::describe(process));
        }
    }
    for (task_id, sweep) in on_hosts {
        for process in sweep.join().unwrap_or_default() {
            tracing::info!(task = %task_id, "ended on its host on leaving: {}", hygiene::describe(&process));
        }
    }
}
