//! A task's next attempt, from its launch plan to a prepared start: the tasks that are due
//! start while there is room, each marked `running` in the document; its agent launches once
//! that is on disk (`commit`, `launch_agent`). A task whose configuration cannot launch fails
//! here.

use std::time::Instant;

use color_eyre::eyre::Result;
use time::OffsetDateTime;

use super::{Engine, EngineEvent};

use crate::core::accounts::Choice;
use crate::core::task::{TaskSpec, TaskStatus};
use crate::run::launch::{self, LaunchContext, LaunchPlan};
use crate::run::{outcome, worktree};

/// A task's next attempt between `prepare_start` and `launch`: its task is `running` in the
/// document, and its agent launches once generation `generation` is on disk.
pub(super) struct Starting {
    pub(super) index: usize,
    /// The task as it was before this start changed it.
    pub(super) task: TaskSpec,
    pub(super) number: u32,
    pub(super) plan: LaunchPlan,
    pub(super) profile: crate::core::profile::Profile,
    pub(super) key: u64,
    pub(super) account: Option<usize>,
    /// The host it runs on, when not here.
    pub(super) host: Option<crate::core::hosts::Host>,
    /// (rows, cols) its PTY starts at: its slot's size when it was prepared.
    pub(super) size: (u16, u16),
    /// The write that records this start.
    pub(super) generation: u64,
}

impl Engine {
    /// The launch plan of a task's next attempt, or its config problem.
    pub(super) fn plan_for(
        &self,
        index: usize,
        attempt: u32,
    ) -> std::result::Result<LaunchPlan, String> {
        let task = &self.store.file().tasks()[index];
        let run_dir = self.opts.runs_dir.join(&task.task_id);
        let ctx = LaunchContext {
            base_dir: self.store.base_dir(),
            run_id: self.store.file().run_id(),
            attempt,
            run_dir: &run_dir,
        };
        match &task.host {
            None => launch::prepare(task, &self.profiles, &ctx).map_err(|e| e.to_string()),
            // The folder and the program are the host's: not looked for here.
            Some(_) => match crate::run::remote::task_problem(task, &self.opts.hosts) {
                Some(problem) => Err(problem),
                None => launch::render(task, &self.profiles, &ctx).map_err(|e| e.to_string()),
            },
        }
    }

    pub(super) fn fail_config_problems(&mut self) -> Result<()> {
        for index in self.scope() {
            let task = &self.store.file().tasks()[index];
            if !task.status.is_runnable() {
                continue;
            }
            if let Err(evidence) = self.plan_for(index, task.attempts + 1) {
                self.fail_config(index, evidence)?;
            }
        }
        Ok(())
    }

    pub(super) fn fail_config(&mut self, index: usize, evidence: String) -> Result<()> {
        let task_id = self.store.file().tasks()[index].task_id.clone();
        let file = self.store.file_mut();
        file.set_status(index, TaskStatus::Failed);
        file.set_result(
            index,
            outcome::config_failure_json(&evidence, OffsetDateTime::now_utc()),
        );
        // Written with the rest of this turn's changes (`commit`): nothing follows from it.
        self.events
            .push(EngineEvent::ConfigFailed { task_id, evidence });
        Ok(())
    }

    /// Starts tasks while there is room.
    pub fn fill_slots(&mut self, now: Instant) -> Result<()> {
        if self.paused || self.stopping {
            return Ok(());
        }
        // Group commit: every task started in this turn is marked `running` in the same
        // generation, and their agents launch once it is on disk (`commit`).
        let mut starting = Vec::new();
        for index in self.scope() {
            // An attempt being concluded, or waiting for its start's write, holds its slot.
            if self.attempts_in_flight() + starting.len() >= self.opts.concurrency {
                break;
            }
            let task = &self.store.file().tasks()[index];
            // Most of a large file is done or running: skip those before any lookup.
            if !task.status.is_runnable() || self.live_by_task.contains_key(&index) {
                continue;
            }
            let agent = task.agent.clone();
            let due = self.retry_at.get(&index).is_none_or(|at| *at <= now)
                && self.quota_holds.get(&agent).is_none_or(|at| *at <= now)
                && self.profiles.get(&agent).is_none_or(|profile| {
                    !matches!(
                        self.accounts.peek(profile, now),
                        Choice::AllExhausted { .. }
                    )
                });
            if !due {
                continue;
            }
            let host = match task.host.clone() {
                None => None,
                Some(name) => {
                    let taken: Vec<&str> = (starting.iter().chain(&self.awaiting))
                        .filter_map(|s: &Starting| s.host.as_ref().map(|h| h.name.as_str()))
                        .collect();
                    match self.choose_host(&name, &taken, now) {
                        crate::core::host_choice::HostChoice::Use(chosen) => {
                            self.opts.hosts.get(&chosen).cloned()
                        }
                        // Full or out of rotation: the task waits, it has not failed.
                        crate::core::host_choice::HostChoice::Wait { .. } => continue,
                        crate::core::host_choice::HostChoice::Unknown => {
                            let problem = self.opts.hosts.unknown_target_message(&name);
                            self.fail_config(index, problem)?;
                            continue;
                        }
                    }
                }
            };
            // Its slot among the agents running once it started: the frontend's size for it.
            let size = self.launch_size_at(self.attempts_in_flight() + starting.len());
            if let Some(prepared) = self.prepare_start(index, now, host, size)? {
                starting.push(prepared);
            }
        }
        if starting.is_empty() {
            return Ok(());
        }
        self.awaiting.extend(starting);
        // Handed over now: a frontend may wait for reports right after this call.
        self.commit(now)
    }

    /// Everything a task's next attempt needs before its agent runs, with the task marked
    /// `running` in the document (not yet written: `launch` waits for the write). `None` when
    /// the task failed its configuration instead.
    fn prepare_start(
        &mut self,
        index: usize,
        now: Instant,
        host: Option<crate::core::hosts::Host>,
        size: (u16, u16),
    ) -> Result<Option<Starting>> {
        self.retry_at.remove(&index);
        let task = self.store.file().tasks()[index].clone();
        let number = task.attempts + 1;
        let mut plan = match self.plan_for(index, number) {
            Ok(plan) => plan,
            Err(evidence) => return self.fail_config(index, evidence).map(|()| None),
        };
        if task.worktree {
            match worktree::prepare(&plan.cwd, &task.task_id) {
                Ok(path) => {
                    plan.env
                        .insert("HERD_WORKTREE".into(), path.display().to_string());
                    plan.cwd = path;
                }
                Err(evidence) => return self.fail_config(index, evidence).map(|()| None),
            }
        }
        if let Some(host) = &host {
            let cwd = crate::run::remote::remote_cwd(task.cwd.as_deref(), host, &plan.cwd);
            plan.cwd = cwd.into();
        }
        let Some(profile) = self.profiles.get(&task.agent).cloned() else {
            return self
                .fail_config(
                    index,
                    format!("agent \"{}\" is not a known profile", task.agent),
                )
                .map(|()| None);
        };
        let account = match self.accounts.take(&profile, now) {
            Choice::Use(i) => {
                let chosen = &profile.accounts[i];
                plan.env.extend(chosen.env.clone());
                plan.env.insert("HERD_ACCOUNT".into(), chosen.name.clone());
                Some(i)
            }
            Choice::NoAccounts | Choice::AllExhausted { .. } => None,
        };
        let key = self.next_key;
        self.next_key += 1;
        if let Some(path) = &plan.signal_file {
            // Cleared before every attempt: only what this attempt's agent writes counts.
            if let Err(e) = std::fs::remove_file(path)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(task = %task.task_id, "cannot clear the signal file {}: {e}", path.display());
            }
        }
        let file = self.store.file_mut();
        file.set_status(index, TaskStatus::Running);
        file.set_attempts(index, number);
        file.remove_field(index, "retry_at");
        // The operator's message is delivered by this attempt.
        file.remove_field(index, "resume_message");
        if let Some(host) = &host {
            file.set_field(
                index,
                super::hosts::RAN_ON_FIELD,
                serde_json::json!(host.name),
            );
        }
        Ok(Some(Starting {
            index,
            task,
            number,
            plan,
            profile,
            key,
            account,
            host,
            size,
            generation: self.next_generation(),
        }))
    }
}
