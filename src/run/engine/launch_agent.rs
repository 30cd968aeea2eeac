//! A prepared start's agent, launched once the write that marks its task `running` is on disk
//! (`commit`), or withdrawn when herd stops first: then its task goes back to what it was, as
//! if the attempt had never been prepared.

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use serde_json::json;

use super::Engine;
use super::agent_report::AgentReport;
use super::attempts::LiveAttempt;
use super::attempts::Starting;
use super::conclude::Ended;
use super::event::EngineEvent;
use super::inbox::EngineInbox;

use crate::core::attempt::{
    Attempt, AttemptSetup, DEFAULT_ANSWER_CAP, DEFAULT_PERMISSION_WAIT_SEC,
};
use crate::core::batch::Input;
use crate::core::classify::{ExitStatus, Verdict};
use crate::core::task::{FailureType, TaskSpec};
use crate::run::guard_context::guard_setup;
use crate::run::outcome::AttemptOutcome;
use crate::run::pty::AgentProcess;
use crate::run::recorder::{AttemptPaths, Recorder};
use crate::run::{failure_report, hygiene, outcome};

/// An attempt whose agent is about to be spawned: what its live state, or its end when the
/// agent cannot start, is made of.
struct Launching {
    index: usize,
    /// The task as it was before this start changed it.
    task: TaskSpec,
    number: u32,
    plan: crate::run::launch::LaunchPlan,
    key: u64,
    account: Option<usize>,
    /// (rows, cols) of its PTY.
    size: (u16, u16),
    started_at: jiff::Timestamp,
    recorder: Recorder,
    setup: AttemptSetup,
    git_before: failure_report::GitSnapshot,
    cookie: String,
    hooks: Option<crate::run::hook_server::HookServer>,
    app_server: Option<crate::run::app_server::AppServerLink>,
    remote: Option<super::hosts::RemoteState>,
}

impl Engine {
    /// The listener for the hooks of a profile that has them, for an agent on this machine; a
    /// listener that cannot start leaves the screen in charge (and says so in the log).
    fn hook_server(
        &self,
        key: u64,
        task: &TaskSpec,
        setup: &AttemptSetup,
        env: &std::collections::BTreeMap<String, String>,
        here: bool,
    ) -> Option<crate::run::hook_server::HookServer> {
        let kind = setup.profile.hooks.filter(|_| here)?;
        match crate::run::hook_server::HookServer::start(
            kind,
            key,
            self.outbox_of(key, EngineInbox::from_hook),
            env,
        ) {
            Ok(server) => Some(server),
            Err(error) => {
                tracing::warn!(task = %task.task_id, "herd's hooks could not be set up ({error}): the screen decides");
                None
            }
        }
    }

    /// herd's client of the Codex app server of a command that places `{app_server}`, for an
    /// agent on this machine; a link that cannot start leaves the TUI on its own session and
    /// the screen in charge (and says so in the log).
    fn app_server_link(
        &self,
        key: u64,
        task: &TaskSpec,
        argv: &[String],
        here: bool,
    ) -> Option<crate::run::app_server::AppServerLink> {
        let placed = argv
            .iter()
            .any(|a| a == crate::core::app_server::PLACEHOLDER);
        if !placed || !here {
            return None;
        }
        match crate::run::app_server::AppServerLink::start(
            key,
            self.outbox_of(key, EngineInbox::from_app_server),
        ) {
            Ok(link) => Some(link),
            Err(error) => {
                tracing::warn!(task = %task.task_id, "the Codex app server could not be set up ({error}): the screen decides");
                None
            }
        }
    }

    /// Launches a prepared attempt's agent; its `running` state is on disk (`commit`).
    pub(super) fn launch(&mut self, starting: Starting, now: Instant) -> Result<()> {
        let started_at = self.clock.wall;
        let recorder = match self.create_recorder(&starting, started_at) {
            Ok(recorder) => recorder,
            Err(error) => {
                // herd stops: the attempt did not happen.
                self.revert_start(starting.index, &starting.task);
                return Err(error);
            }
        };
        let launching = self.prepare_launch(starting, recorder, started_at);
        match self.spawn_agent(&launching) {
            Ok(process) => self.go_live(launching, process, now),
            Err(error) if crate::run::limits::is_resource_shortage(&error) => {
                let reason = format!("{error:#}");
                self.defer_spawn(launching.index, &launching.task, reason, now)
            }
            Err(error) => self.conclude_unspawned(launching, &error, now),
        }
    }

    /// The recorder of the attempt `starting` prepares.
    fn create_recorder(
        &self,
        starting: &Starting,
        started_at: jiff::Timestamp,
    ) -> Result<Recorder> {
        let (rows, cols) = starting.size;
        let paths = AttemptPaths::new(
            &self.tasks.opts.runs_dir.join(&starting.task.task_id),
            starting.number,
        );
        let recorder = Recorder::create(
            paths,
            cols,
            rows,
            started_at.as_second().max(0) as u64,
            &starting.task.task_id,
        )?;
        Ok(recorder)
    }

    /// Everything the agent's process is started with and watched by: the attempt's setup,
    /// its hygiene cookie, herd's hooks and app-server link, its host's state; the start is
    /// announced.
    fn prepare_launch(
        &mut self,
        starting: Starting,
        recorder: Recorder,
        started_at: jiff::Timestamp,
    ) -> Launching {
        let Starting {
            index,
            task,
            number,
            mut plan,
            profile,
            key,
            account,
            host,
            git_before,
            size: (rows, cols),
            ..
        } = starting;
        let setup = self.attempt_setup(&task, profile, &plan, (rows, cols));
        let command = one_line(&plan.argv);
        tracing::info!(task = %task.task_id, attempt = number, cwd = %plan.cwd.display(), "starting {command}");
        self.out.events.push(EngineEvent::Started {
            task_id: task.task_id.clone(),
            attempt: number,
            command,
        });
        let git_before = match (&host, git_before) {
            (None, _) => failure_report::GitSnapshot::start(&plan.cwd),
            (Some(_), Some(before)) => failure_report::GitSnapshot::known(before),
            (Some(_), None) => failure_report::GitSnapshot::default(),
        };
        let cookie = hygiene::new_cookie(&self.tasks.file_tag, &task.task_id, number);
        plan.env.insert(hygiene::COOKIE_VAR.into(), cookie.clone());
        let hooks = self.hook_server(key, &task, &setup, &plan.env, host.is_none());
        if let Some(server) = &hooks {
            plan.env.extend(server.env().iter().cloned());
        }
        let app_server = self.app_server_link(key, &task, &plan.argv, host.is_none());
        plan.argv = crate::run::app_server::argv_for(
            std::mem::take(&mut plan.argv),
            app_server.as_ref().map(|link| link.url()).as_deref(),
            &herd_exe(),
        );
        let remote = host.map(|host| {
            let run_dir = self.tasks.opts.runs_dir.join(&task.task_id);
            let log = crate::run::remote::log_path(&run_dir, number);
            super::hosts::RemoteState::new(host, log)
        });
        Launching {
            index,
            task,
            number,
            plan,
            key,
            account,
            size: (rows, cols),
            started_at,
            recorder,
            setup,
            git_before,
            cookie,
            hooks,
            app_server,
            remote,
        }
    }

    /// What the attempt's state machine is set up with: the profile's rules and timings as the
    /// task overrides them, and the plan's prompt and completion.
    fn attempt_setup(
        &self,
        task: &TaskSpec,
        profile: crate::core::profile::Profile,
        plan: &crate::run::launch::LaunchPlan,
        (rows, cols): (u16, u16),
    ) -> AttemptSetup {
        let profile_rules = profile.rules.clone();
        let auto_rules = profile
            .prompts
            .iter()
            .map(|rule| task.policy_for(&rule.name).unwrap_or(rule.auto_by_default))
            .collect();
        AttemptSetup {
            idle: Duration::from_secs_f64(task.idle_sec.unwrap_or(profile.idle_sec)),
            permission_wait: (!self.tasks.opts.operator_present).then(|| {
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
            guard: guard_setup(task, &profile_rules, &plan.cwd),
        }
    }

    /// Spawns the agent in its PTY; on a host, the local terminal carries the launcher (ssh -tt,
    /// an exec with -t).
    ///
    /// The reserve of descriptors for herd's own files is kept while other agents run (one of
    /// them ending frees what this start needs). With none running, nothing would ever free
    /// them: the start is tried, and only the system's own refusal makes it wait.
    fn spawn_agent(&self, launching: &Launching) -> Result<AgentProcess> {
        let Launching { plan, key, .. } = launching;
        let (rows, cols) = launching.size;
        if self.attempts.with_agent() > 0 {
            crate::run::limits::check_room_for_an_agent()
                .wrap_err_with(|| format!("cannot start {}", plan.argv[0]))?;
        }
        match &launching.remote {
            None => AgentProcess::spawn(
                plan,
                rows,
                cols,
                *key,
                self.outbox_of(*key, EngineInbox::from_pty),
            ),
            Some(remote) => {
                let run_dir = self.tasks.opts.runs_dir.join(&launching.task.task_id);
                let cwd = plan.cwd.display().to_string();
                let (host, log, cookie) = (&remote.host, &remote.log, &launching.cookie);
                let local = crate::run::remote::wrap(plan, host, &cwd, cookie, log, &run_dir);
                AgentProcess::spawn(
                    &local,
                    rows,
                    cols,
                    *key,
                    self.outbox_of(*key, EngineInbox::from_pty),
                )
            }
        }
    }

    /// The spawned agent becomes a live attempt, its files watched, and the batch is told.
    fn go_live(&mut self, launching: Launching, process: AgentProcess, now: Instant) -> Result<()> {
        let Launching {
            index,
            task,
            number,
            plan,
            key,
            account,
            size: (rows, cols),
            started_at,
            recorder,
            setup,
            git_before,
            cookie,
            hooks,
            app_server,
            remote,
        } = launching;
        let agent_log = setup.profile.agent_log;
        let files = self.watch_files(key, &task, number, &plan, agent_log, &remote, started_at);
        let watches_files = files.is_some();
        self.attempts.go_live(
            key,
            LiveAttempt {
                task: index,
                task_id: task.task_id.clone(),
                number,
                attempt: Attempt::new(setup),
                prompts: crate::core::prompt_id::PromptIds::new(&task.task_id, number),
                process,
                recorder,
                plan,
                started: now,
                started_at,
                stopped_by_operator: false,
                size: (cols, rows),
                git_before,
                account,
                _hooks: hooks,
                app_server,
                signal_text: None,
                files,
                cookie,
                known_processes: Vec::new(),
                swept: Vec::new(),
                gathered: None,
                remote,
            },
        );
        let started = Input::AgentStarted { key, watches_files };
        self.drive(started, now)
    }

    /// An agent that could not even start: a process failure of this attempt, with the reason.
    fn conclude_unspawned(
        &mut self,
        launching: Launching,
        error: &color_eyre::eyre::Report,
        now: Instant,
    ) -> Result<()> {
        let Launching {
            index,
            task,
            number,
            plan,
            account,
            size: (rows, cols),
            started_at,
            mut recorder,
            remote,
            key,
            ..
        } = launching;
        self.snapshots.forget(key);
        let verdict = Verdict::failed(FailureType::Process, format!("{error:#}"));
        let outcome = AttemptOutcome {
            attempt: number,
            verdict,
            marker_seen: false,
            exit: ExitStatus::default(),
            log_file: outcome::relative_to(&recorder.paths().log, self.tasks.store.base_dir()),
            auto_counts: Vec::new(),
            auto_inputs: Vec::new(),
            approvals: Vec::new(),
            started_at,
            ended_at: self.clock.wall,
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
            failure: None,
            quota_reset: None,
            quota_resets_at: None,
            deciding_event: None,
            agent: AgentReport::default(),
            ended_processes: Vec::new(),
            host: remote.map(|r| r.host.name),
            worktree: None,
            changes: Default::default(),
        };
        self.conclude(ended, &mut recorder, now)
    }

    /// Puts task `index` back to what it was before a start that did not happen (`before`).
    pub(super) fn revert_start(&mut self, index: usize, before: &TaskSpec) {
        let file = self.tasks.store.file_mut();
        file.set_status(index, before.status);
        file.set_attempts(index, before.attempts);
        if let Some(message) = &before.resume_message {
            file.set_field(index, "resume_message", json!(message));
        }
        if let Some(at) = before.retry_at {
            file.set_field(index, "retry_at", json!(outcome::utc_timestamp(at)));
        }
    }

    /// Withdraws the starts still waiting for their write (`only`: that task's, or all): their
    /// tasks go back to what they were; nothing was launched or recorded for them.
    pub(super) fn withdraw_starts(&mut self, only: Option<usize>) {
        let withdrawn = (self.attempts).take_awaiting_if(|s| only.is_none_or(|i| i == s.index));
        for starting in withdrawn {
            let key = starting.key;
            self.batch
                .handle(Input::StartWithdrawn { key }, self.clock.at);
            tracing::info!(task = %starting.task.task_id, attempt = starting.number, "start withdrawn before its agent launched");
            self.revert_start(starting.index, &starting.task);
        }
    }
}

/// This herd's executable, for the launcher of a Codex app server (`herd app-server-pair`).
fn herd_exe() -> String {
    std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "herd".to_string())
}

/// The command as one line of herd.log and of the headless output: its parts joined by spaces,
/// the line breaks and other control characters inside them (a prompt's paragraphs) escaped, so
/// a reader of the log sees the whole start, its fields included, on its line.
fn one_line(argv: &[String]) -> String {
    let mut line = String::new();
    for (i, part) in argv.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        for c in part.chars() {
            match c {
                '\n' => line.push_str("\\n"),
                '\r' => line.push_str("\\r"),
                '\t' => line.push_str("\\t"),
                c if c.is_control() => line.push_str(&c.escape_unicode().to_string()),
                c => line.push(c),
            }
        }
    }
    line
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_started_command_is_one_line() {
        let argv = [
            "herd",
            "sim",
            "--prompt",
            "Fix it.\n\nWhen complete,\tprint\r\u{1b}",
        ]
        .map(str::to_string);
        assert_eq!(
            super::one_line(&argv),
            "herd sim --prompt Fix it.\\n\\nWhen complete,\\tprint\\r\\u{1b}"
        );
    }
}
