//! A task's next attempt, from its launch plan to its agent's spawn: the tasks that are due
//! start while there is room, each marked `running` on disk before its agent launches; a task
//! whose configuration cannot launch fails here.

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use time::OffsetDateTime;

use super::agent_report::AgentReport;
use super::conclude::Ended;
use super::prepare::{Planned, RemoteGitBefore};
use super::{Engine, EngineEvent, LiveAttempt};

use crate::core::accounts::Choice;
use crate::core::attempt::{
    Attempt, AttemptSetup, DEFAULT_ANSWER_CAP, DEFAULT_PERMISSION_WAIT_SEC,
};
use crate::core::classify::{ExitStatus, Verdict};
use crate::core::task::{FailureType, TaskSpec, TaskStatus};
use crate::run::guard_context::guard_setup;
use crate::run::launch::LaunchPlan;
use crate::run::outcome::AttemptOutcome;
use crate::run::pty::AgentProcess;
use crate::run::recorder::{AttemptPaths, Recorder};
use crate::run::{failure_report, hygiene, outcome};

/// A task's next attempt between `begin` and `launch`.
pub(super) struct Starting {
    index: usize,
    task: TaskSpec,
    number: u32,
    plan: LaunchPlan,
    profile: crate::core::profile::Profile,
    recorder: Recorder,
    key: u64,
    account: Option<usize>,
    started_at: OffsetDateTime,
    /// (rows, cols) its PTY starts at.
    size: (u16, u16),
    /// The host it runs on, when not here.
    host: Option<crate::core::hosts::Host>,
    /// `git status` of a remote attempt's folder as it started.
    git_before: RemoteGitBefore,
}

impl Engine {
    /// Starts tasks while there is room.
    pub fn fill_slots(&mut self, now: Instant) -> Result<()> {
        if self.paused || self.stopping {
            return Ok(());
        }
        // Group commit: every task started in this turn is marked `running` in one write, made
        // before any of their agents is launched.
        let mut starting = Vec::new();
        for index in self.scope() {
            // An attempt being concluded still holds its slot.
            let taken = self.live.len() + self.ending.len() + self.preparing.len();
            if taken + starting.len() >= self.opts.concurrency {
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
                    let taken: Vec<&str> = starting
                        .iter()
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
            let Some(planned) = self.plan_start(index, host)? else {
                continue;
            };
            if let Some(planned) = self.starts_now(planned) {
                // Its slot among the agents running once it started: the frontend's size for it.
                let size =
                    self.launch_size_at(self.live.len() + self.ending.len() + starting.len());
                starting.push(self.begin(planned, now, None, size)?);
            }
        }
        if starting.is_empty() {
            return Ok(());
        }
        self.store.save().wrap_err("cannot write the tasks file")?;
        for prepared in starting {
            self.launch(prepared, now)?;
        }
        Ok(())
    }

    /// A planned attempt about to launch, with its task marked `running` in the document (not
    /// yet written: the caller writes before `launch`). `git_before`: `git status` of a remote
    /// attempt's folder as it starts.
    pub(super) fn begin(
        &mut self,
        planned: Planned,
        now: Instant,
        git_before: RemoteGitBefore,
        size: (u16, u16),
    ) -> Result<Starting> {
        let Planned {
            key,
            index,
            task,
            number,
            mut plan,
            profile,
            host,
        } = planned;
        let account = match self.accounts.take(&profile, now) {
            Choice::Use(i) => {
                let chosen = &profile.accounts[i];
                plan.env.extend(chosen.env.clone());
                plan.env.insert("HERD_ACCOUNT".into(), chosen.name.clone());
                Some(i)
            }
            Choice::NoAccounts | Choice::AllExhausted { .. } => None,
        };
        let (rows, cols) = size;
        let started_at = OffsetDateTime::now_utc();
        let paths = AttemptPaths::new(&self.opts.runs_dir.join(&task.task_id), number);
        let recorder = Recorder::create(
            paths,
            cols,
            rows,
            started_at.unix_timestamp().max(0) as u64,
            &task.task_id,
        )?;
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
        Ok(Starting {
            index,
            task,
            number,
            plan,
            profile,
            recorder,
            key,
            account,
            started_at,
            size,
            host,
            git_before,
        })
    }

    /// Launches a prepared attempt's agent; its `running` state is already on disk.
    pub(super) fn launch(&mut self, starting: Starting, now: Instant) -> Result<()> {
        let Starting {
            index,
            task,
            number,
            mut plan,
            profile,
            recorder,
            key,
            account,
            started_at,
            size: (rows, cols),
            host,
            git_before,
        } = starting;
        let profile_rules = profile.rules.clone();
        let auto_rules = profile
            .prompts
            .iter()
            .map(|rule| task.policy_for(&rule.name).unwrap_or(rule.auto_by_default))
            .collect();
        let setup = AttemptSetup {
            idle: Duration::from_secs_f64(task.idle_sec.unwrap_or(profile.idle_sec)),
            permission_wait: (!self.opts.operator_present).then(|| {
                Duration::from_secs_f64(
                    task.permission_wait_sec
                        .unwrap_or(DEFAULT_PERMISSION_WAIT_SEC),
                )
            }),
            profile,
            marker: plan.marker.clone(),
            prompt: plan.prompt.clone(),
            rows,
            cols,
            timeout: Duration::from_secs(task.timeout_sec),
            auto_rules,
            answer_cap: DEFAULT_ANSWER_CAP,
            completion: plan.completion.completion,
            marker_required: plan.completion.marker_required,
            guard: guard_setup(&task, &profile_rules, &plan.cwd),
        };
        let agent_log = setup.profile.agent_log;
        let command = plan.argv.join(" ");
        tracing::info!(task = %task.task_id, attempt = number, cwd = %plan.cwd.display(), "starting {command}");
        self.events.push(EngineEvent::Started {
            task_id: task.task_id.clone(),
            attempt: number,
            command,
        });
        let git_before = match (&host, git_before) {
            (None, _) => failure_report::GitSnapshot::start(&plan.cwd),
            (Some(_), Some(before)) => failure_report::GitSnapshot::known(before),
            (Some(_), None) => failure_report::GitSnapshot::default(),
        };
        let cookie = hygiene::new_cookie(&self.file_tag, &task.task_id, number);
        plan.env.insert(hygiene::COOKIE_VAR.into(), cookie.clone());
        // On a host, the local terminal carries the launcher (ssh -tt, an exec with -t).
        let (spawned, remote) = match host {
            None => (
                AgentProcess::spawn(&plan, rows, cols, key, self.reports.clone()),
                None,
            ),
            Some(host) => {
                let run_dir = self.opts.runs_dir.join(&task.task_id);
                let log = crate::run::remote::log_path(&run_dir, number);
                let cwd = plan.cwd.display().to_string();
                let local = crate::run::remote::wrap(&plan, &host, &cwd, &cookie, &log, &run_dir);
                let spawned = AgentProcess::spawn(&local, rows, cols, key, self.reports.clone());
                (spawned, Some(super::hosts::RemoteState::new(host, log)))
            }
        };
        let host_name = remote.as_ref().map(|r| r.host.name.clone());
        match spawned {
            Ok(process) => {
                let files =
                    self.watch_files(key, &task, number, &plan, agent_log, &remote, started_at);
                self.live.insert(
                    key,
                    LiveAttempt {
                        task: index,
                        task_id: task.task_id.clone(),
                        number,
                        attempt: Attempt::new(setup),
                        process,
                        recorder,
                        plan,
                        started: now,
                        started_at,
                        exit: None,
                        exited_at: None,
                        closed: false,
                        stopped_by_operator: false,
                        size: (cols, rows),
                        git_before,
                        account,
                        signal_text: None,
                        files,
                        files_asked: false,
                        files_trouble: None,
                        cookie,
                        known_processes: Vec::new(),
                        swept: None,
                        remote,
                    },
                );
                self.live_by_task.insert(index, key);
                Ok(())
            }
            Err(error) if crate::run::limits::is_resource_shortage(&error) => {
                self.defer_spawn(index, &task, format!("{error:#}"), now)
            }
            Err(error) => {
                // Could not even start: a process failure of this attempt, with the reason.
                let verdict = Verdict::failed(FailureType::Process, format!("{error:#}"));
                let mut recorder = recorder;
                let outcome = AttemptOutcome {
                    attempt: number,
                    verdict,
                    marker_seen: false,
                    exit: ExitStatus::default(),
                    log_file: outcome::relative_to(&recorder.paths().log, self.store.base_dir()),
                    auto_counts: Vec::new(),
                    auto_inputs: Vec::new(),
                    approvals: Vec::new(),
                    started_at,
                    ended_at: OffsetDateTime::now_utc(),
                    duration: Duration::ZERO,
                };
                let ended = Ended {
                    index,
                    task_id: &task.task_id,
                    plan: &plan,
                    size: (cols, rows),
                    account,
                    stopped_by_operator: false,
                    outcome,
                    failure_summary: None,
                    quota_reset: None,
                    agent: AgentReport::default(),
                    ended_processes: Vec::new(),
                    host: host_name,
                    worktree: None,
                };
                self.conclude(ended, &mut recorder, now)
            }
        }
    }
}
