//! A prepared start's agent, launched once the write that marks its task `running` is on disk
//! (`commit`), or withdrawn when herd stops first: then its task goes back to what it was, as
//! if the attempt had never been prepared.

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use serde_json::json;

use super::attempts::{Attempts, LiveAttempt, Starting};
use super::event::EngineEvent;
use super::inbox::EngineInbox;
use super::outgoing::Outgoing;
use super::tasks::Tasks;

use super::os::{AgentProcess, Os};
use crate::core::attempt::{
    Attempt, AttemptSetup, DEFAULT_ANSWER_CAP, DEFAULT_PERMISSION_WAIT_SEC,
};
use crate::core::task::TaskSpec;
use crate::run::guard_context::guard_setup;
use crate::run::jobs::Outbox;
use crate::run::recorder::{AttemptPaths, Recorder};
use crate::run::{failure_report, hygiene, outcome};

/// What became of a start `Attempts::launch` was given.
pub(super) enum Launch {
    /// Its agent runs (`watches_files`: a worker reads its files).
    Live { watches_files: bool },
    /// No room for another agent now: task `index` went back to what it was (`before`).
    NoRoom {
        index: usize,
        before: Box<TaskSpec>,
        reason: String,
    },
    /// Its agent could not start: to conclude as a process failure, into its `recorder`.
    Unspawned {
        starting: Box<Starting>,
        recorder: Recorder,
        error: color_eyre::eyre::Report,
    },
}

/// The moment of a launch: its instant and its time in the tasks file.
type At = (Instant, jiff::Timestamp);

/// What watches an agent beside its terminal, opened before it is spawned: its hygiene cookie
/// (in its environment), `git status` as it starts, herd's hook listener and Codex app-server
/// link (their addresses in its environment and command), and its host's state.
struct Watchers {
    cookie: String,
    git_before: failure_report::GitSnapshot,
    hooks: Option<crate::run::hook_server::HookServer>,
    app_server: Option<crate::run::app_server::AppServerLink>,
    remote: Option<super::hosts::RemoteState>,
}

/// The listener for the hooks of a profile that has them, for an agent on this machine
/// (reporting into `inbox`); a listener that cannot start leaves the screen in charge (and
/// says so in the log).
fn hook_server(
    (key, task): (u64, &TaskSpec),
    kind: crate::core::profile::HookKind,
    env: &std::collections::BTreeMap<String, String>,
    inbox: &Outbox<EngineInbox>,
) -> Option<crate::run::hook_server::HookServer> {
    let calls = inbox.map(move |call| EngineInbox::from_hook(key, call));
    match crate::run::hook_server::HookServer::start(kind, key, calls, env) {
        Ok(server) => Some(server),
        Err(error) => {
            tracing::warn!(task = %task.task_id, "herd's hooks could not be set up ({error}): the screen decides");
            None
        }
    }
}

/// herd's client of the Codex app server of a command that places `{app_server}`, for an
/// agent on this machine (reporting into `inbox`); a link that cannot start leaves the TUI on
/// its own session and the screen in charge (and says so in the log).
fn app_server_link(
    (key, task): (u64, &TaskSpec),
    argv: &[String],
    here: bool,
    inbox: &Outbox<EngineInbox>,
) -> Option<crate::run::app_server::AppServerLink> {
    let placed = argv
        .iter()
        .any(|a| a == crate::core::wire::app_server::PLACEHOLDER);
    if !placed || !here {
        return None;
    }
    let reports = inbox.map(move |report| EngineInbox::from_app_server(key, report));
    match crate::run::app_server::AppServerLink::start(key, reports) {
        Ok(link) => Some(link),
        Err(error) => {
            tracing::warn!(task = %task.task_id, "the Codex app server could not be set up ({error}): the screen decides");
            None
        }
    }
}

impl Attempts {
    /// Launches a prepared attempt's agent (its `running` state is on disk, `commit`) at `at`;
    /// what became of it. Its task's document is `tasks`; the frontends hear through `out`.
    pub(super) fn launch(
        &mut self,
        mut starting: Starting,
        os: &dyn Os,
        tasks: &mut Tasks,
        out: &mut Outgoing,
        (now, wall): At,
    ) -> Result<Launch> {
        let recorder = match starting.recorder(&tasks.opts.runs_dir, wall) {
            Ok(recorder) => recorder,
            Err(error) => {
                // herd stops: the attempt did not happen.
                tasks.revert_start(starting.index, &starting.task);
                return Err(error);
            }
        };
        let attempt = Attempt::new(starting.announce(tasks.opts.operator_present, out));
        let watchers = starting.open_watchers(tasks, &out.inbox);
        let runs_dir = &tasks.opts.runs_dir;
        let process = match self.spawn_agent(os, &starting, &watchers, runs_dir, &out.inbox) {
            Ok(process) => process,
            Err(error) if crate::run::limits::is_resource_shortage(&error) => {
                let reason = format!("{error:#}");
                let (index, before) = (starting.index, Box::new(starting.task));
                return Ok(Launch::NoRoom {
                    index,
                    before,
                    reason,
                });
            }
            Err(error) => {
                let starting = Box::new(starting);
                return Ok(Launch::Unspawned {
                    starting,
                    recorder,
                    error,
                });
            }
        };
        let (key, agent_log) = (starting.key, starting.profile.agent_log);
        let mut live = live_attempt(
            starting,
            attempt,
            (process, recorder),
            watchers,
            (now, wall),
        );
        let reports = out
            .inbox
            .map(move |report| EngineInbox::from_files(key, report));
        live.files = live.watch_files((key, agent_log), runs_dir, reports);
        let watches_files = live.files.is_some();
        self.go_live(key, live);
        Ok(Launch::Live { watches_files })
    }

    /// Spawns the agent in its PTY (reporting into `inbox`); on a host, the local terminal
    /// carries the launcher (ssh -tt, an exec with -t), its log in `runs_dir`.
    ///
    /// The reserve of descriptors for herd's own files is kept while other agents run (one of
    /// them ending frees what this start needs). With none running, nothing would ever free
    /// them: the start is tried, and only the system's own refusal makes it wait.
    fn spawn_agent(
        &self,
        os: &dyn Os,
        starting: &Starting,
        watchers: &Watchers,
        runs_dir: &std::path::Path,
        inbox: &Outbox<EngineInbox>,
    ) -> Result<AgentProcess> {
        let Starting { plan, key, .. } = starting;
        let (rows, cols) = starting.size;
        if self.with_agent() > 0 {
            crate::run::limits::check_room_for_an_agent()
                .wrap_err_with(|| format!("cannot start {}", plan.argv[0]))?;
        }
        let key = *key;
        let output = inbox.map(move |event| EngineInbox::from_pty(key, event));
        match &watchers.remote {
            None => os.spawn(plan, rows, cols, key, output),
            Some(remote) => {
                let run_dir = runs_dir.join(&starting.task.task_id);
                let cwd = plan.cwd.display().to_string();
                let (host, log, cookie) = (&remote.host, &remote.log, &watchers.cookie);
                let local = crate::run::remote::wrap(plan, host, &cwd, cookie, log, &run_dir);
                os.spawn(&local, rows, cols, key, output)
            }
        }
    }
}

/// The spawned agent of `starting` as a live attempt: its state machine, its process and
/// recorder, what watches it; started at `now` (`started_at` in the tasks file).
fn live_attempt(
    starting: Starting,
    attempt: Attempt,
    (process, recorder): (AgentProcess, Recorder),
    watchers: Watchers,
    (now, started_at): At,
) -> LiveAttempt {
    let Starting {
        index,
        task,
        number,
        plan,
        account,
        size: (rows, cols),
        ..
    } = starting;
    LiveAttempt {
        task: index,
        task_id: task.task_id.clone(),
        number,
        attempt,
        prompts: crate::core::attempt::prompt_id::PromptIds::new(&task.task_id, number),
        process,
        recorder,
        plan,
        started: now,
        started_at,
        stopped_by_operator: false,
        size: (cols, rows),
        git_before: watchers.git_before,
        account,
        _hooks: watchers.hooks,
        app_server: watchers.app_server,
        signal_text: None,
        files: None,
        cookie: watchers.cookie,
        known_processes: Vec::new(),
        swept: Vec::new(),
        gathered: None,
        remote: watchers.remote,
    }
}

impl Starting {
    /// What its attempt's state machine is set up with (`operator_present`: no permission
    /// wait); its start said in the log and to the frontends (`out`).
    fn announce(&self, operator_present: bool, out: &mut Outgoing) -> AttemptSetup {
        let (task, number) = (&self.task, self.number);
        let setup = attempt_setup(task, &self.profile, &self.plan, self.size, operator_present);
        let command = one_line(&self.plan.argv);
        tracing::info!(task = %task.task_id, attempt = number, cwd = %self.plan.cwd.display(), "starting {command}");
        out.events.push(EngineEvent::Started {
            task_id: task.task_id.clone(),
            attempt: number,
            command,
        });
        setup
    }

    /// What watches its agent, opened now: its cookie, herd's hooks and app-server link put
    /// into its plan; its host's state.
    fn open_watchers(&mut self, tasks: &Tasks, inbox: &Outbox<EngineInbox>) -> Watchers {
        let (key, here, plan) = (self.key, self.host.is_none(), &mut self.plan);
        let git_before = match (here, self.git_before.take()) {
            (true, _) => failure_report::GitSnapshot::start(&plan.cwd),
            (false, Some(before)) => failure_report::GitSnapshot::known(before),
            (false, None) => failure_report::GitSnapshot::default(),
        };
        let cookie = hygiene::new_cookie(&tasks.file_tag, &self.task.task_id, self.number);
        plan.env.insert(hygiene::COOKIE_VAR.into(), cookie.clone());
        let hooks = self.profile.hooks.filter(|_| here);
        let hooks = hooks.and_then(|kind| hook_server((key, &self.task), kind, &plan.env, inbox));
        if let Some(server) = &hooks {
            plan.env.extend(server.env().iter().cloned());
        }
        let app_server = app_server_link((key, &self.task), &plan.argv, here, inbox);
        plan.argv = crate::run::app_server::argv_for(
            std::mem::take(&mut plan.argv),
            app_server.as_ref().map(|link| link.url()).as_deref(),
            &herd_exe(),
        );
        let remote = self.host.clone().map(|host| {
            let run_dir = tasks.opts.runs_dir.join(&self.task.task_id);
            let log = crate::run::remote::log_path(&run_dir, self.number);
            super::hosts::RemoteState::new(host, log)
        });
        Watchers {
            cookie,
            git_before,
            hooks,
            app_server,
            remote,
        }
    }

    /// Its recorder, in `runs_dir`, started at `started_at`.
    fn recorder(
        &self,
        runs_dir: &std::path::Path,
        started_at: jiff::Timestamp,
    ) -> Result<Recorder> {
        let (rows, cols) = self.size;
        let paths = AttemptPaths::new(&runs_dir.join(&self.task.task_id), self.number);
        let recorder = Recorder::create(
            paths,
            cols,
            rows,
            started_at.as_second().max(0) as u64,
            &self.task.task_id,
        )?;
        Ok(recorder)
    }
}

/// What the attempt's state machine is set up with: the profile's rules and timings as the
/// task overrides them, and the plan's prompt and completion (`operator_present`: no
/// permission wait).
fn attempt_setup(
    task: &TaskSpec,
    profile: &crate::core::profile::Profile,
    plan: &crate::run::launch::LaunchPlan,
    (rows, cols): (u16, u16),
    operator_present: bool,
) -> AttemptSetup {
    let profile_rules = profile.rules.clone();
    let auto_rules = profile
        .prompts
        .iter()
        .map(|rule| task.policy_for(&rule.name).unwrap_or(rule.auto_by_default))
        .collect();
    AttemptSetup {
        idle: Duration::from_secs_f64(task.idle_sec.unwrap_or(profile.idle_sec)),
        permission_wait: (!operator_present).then(|| {
            Duration::from_secs_f64(
                task.permission_wait_sec
                    .unwrap_or(DEFAULT_PERMISSION_WAIT_SEC),
            )
        }),
        profile: profile.clone(),
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

impl Tasks {
    /// Puts task `index` back to what it was before a start that did not happen (`before`).
    pub(super) fn revert_start(&mut self, index: usize, before: &TaskSpec) {
        let file = self.store.file_mut();
        file.set_status(index, before.status);
        file.set_attempts(index, before.attempts);
        if let Some(message) = &before.resume_message {
            file.set_field(index, "resume_message", json!(message));
        }
        if let Some(at) = before.retry_at {
            file.set_field(index, "retry_at", json!(outcome::utc_timestamp(at)));
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
