//! The engine: the one owner of run state. It picks tasks, starts attempts in PTYs, feeds their
//! output to the core's attempt state machines, carries out the effects, records everything and
//! writes every state change to the tasks file.
//!
//! It never blocks and never sleeps: the frontend (headless loop or dashboard) waits on the PTY
//! reports and on `next_wakeup`, then calls `on_report` / `on_tick`. Frontends read its state
//! and drain its `EngineEvent`s; they change nothing directly.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use serde_json::json;
use time::OffsetDateTime;
use tokio::sync::mpsc;

use super::failure_report;
use super::guard_context::guard_setup;
use super::hygiene::{self, EndedProcess};
use super::launch::{self, LaunchContext, LaunchPlan};
use super::outcome::{self, AttemptOutcome};
use super::pty::{AgentProcess, PtyReport};
use super::recorder::{AttemptPaths, Recorder};
use super::store::TaskStore;
use super::worktree;
use crate::core::accounts::{AccountBook, Choice};
use crate::core::attempt::{
    Attempt, AttemptSetup, DEFAULT_ANSWER_CAP, DEFAULT_PERMISSION_WAIT_SEC, Effect, Event, Note,
};
use crate::core::classify::{ExitStatus, Verdict};
use crate::core::profile::ProfileSet;
use crate::core::retry;
use crate::core::task::{FailureType, TaskSpec, TaskStatus};

/// How long to wait for the terminal to close after the agent exited (its process group is
/// killed at exit, so only a process that left the group can hold it longer).
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);
/// How often a running agent's signal file is looked for.
const SIGNAL_POLL: Duration = Duration::from_secs(1);
/// A task whose agent could not start for lack of resources tries again after this.
const SPAWN_RETRY_AFTER: Duration = Duration::from_secs(5);
/// A signal file larger than this is not read (it is not a verdict).
const SIGNAL_MAX_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Clone)]
pub struct EngineOptions {
    pub concurrency: usize,
    pub rows: u16,
    pub cols: u16,
    pub runs_dir: PathBuf,
    /// Task ids to run; empty means every enabled task.
    pub only: Vec<String>,
    /// Prompts wait for the operator without a time limit (the dashboard); headless they fail
    /// the attempt after `permission_wait_sec`.
    pub operator_present: bool,
}

/// What happened, for the frontends to show.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineEvent {
    Resumed {
        task_id: String,
        attempt: u32,
    },
    Started {
        task_id: String,
        attempt: u32,
        command: String,
    },
    Note {
        task_id: String,
        note: Note,
    },
    Finished {
        task_id: String,
        attempt: u32,
        verdict: Verdict,
        status: TaskStatus,
    },
    ConfigFailed {
        task_id: String,
        evidence: String,
    },
    RetryScheduled {
        task_id: String,
        after: Duration,
    },
    /// The agent could not start for lack of resources (open files, processes, memory): the
    /// task waits for a slot, not a failure, and concurrency was lowered.
    SpawnDeferred {
        task_id: String,
        reason: String,
        concurrency: usize,
    },
}

/// One running attempt.
pub struct LiveAttempt {
    pub task: usize,
    pub task_id: String,
    pub number: u32,
    pub attempt: Attempt,
    process: AgentProcess,
    recorder: Recorder,
    plan: LaunchPlan,
    pub started: Instant,
    started_at: OffsetDateTime,
    exit: Option<ExitStatus>,
    exited_at: Option<Instant>,
    closed: bool,
    /// The operator stopped herd: the task goes back to `retryable`.
    stopped_by_operator: bool,
    /// (cols, rows) the PTY started at.
    size: (u16, u16),
    /// `git status` of the task's folder when the attempt started (None outside a repository).
    /// `git status` as the attempt started, for a failure's changed files (in a repository).
    git_before: failure_report::GitSnapshot,
    /// The profile's account this attempt uses, by index.
    pub account: Option<usize>,
    /// The signal file's text as last read, so an unchanged file is not read into the attempt
    /// again.
    signal_text: Option<String>,
    next_signal_poll: Instant,
    /// The agent's own log (the profile's `agent_log`), read every `SIGNAL_POLL`.
    agent_log: Option<super::agent_log::AgentLogTail>,
    /// `HERD_ATTEMPT_ID` of this attempt: every process it starts carries it.
    cookie: String,
    /// Processes seen under the agent before herd signalled it (found again by identity, for
    /// those that cleared their environment).
    known_processes: Vec<(u32, u64)>,
    /// What was ended after the agent exited; the attempt concludes only once this is known.
    swept: Option<Vec<EndedProcess>>,
}

impl LiveAttempt {
    /// The launch plan the attempt runs (argv, completion rule, resumed session).
    pub fn plan(&self) -> &LaunchPlan {
        &self.plan
    }
}

/// What the agent reported besides its verdict: its events, its signal file, its transcript.
#[derive(Default)]
struct AgentReport {
    stream: Option<crate::core::stream::StreamFacts>,
    signal: Option<std::result::Result<crate::core::signal_file::SignalFile, String>>,
    /// The transcript's path (relative to the tasks file where below it) and facts.
    transcript: Option<(String, crate::core::transcript::TranscriptFacts)>,
}

/// An attempt that ended (or could not start), as `conclude` records it.
struct Ended<'a> {
    index: usize,
    task_id: &'a str,
    number: u32,
    plan: &'a LaunchPlan,
    /// (cols, rows) the PTY started at.
    size: (u16, u16),
    verdict: &'a Verdict,
    exit: &'a ExitStatus,
    marker_seen: bool,
    auto_inputs: &'a [crate::core::attempt::AutoInput],
    approvals: &'a [crate::core::approval::Approval],
    auto_counts: Vec<(String, u32)>,
    started: Instant,
    started_at: OffsetDateTime,
    stopped_by_operator: bool,
    /// What went wrong, for the next attempt's `{previous_failure}`.
    failure_summary: Option<String>,
    /// A quota failure's reset time, when the task waits for it.
    quota_reset: Option<OffsetDateTime>,
    account: Option<usize>,
    agent: AgentReport,
    /// Leftover processes herd ended after the agent exited.
    ended_processes: Vec<EndedProcess>,
}

/// A task's next attempt between `prepare_start` and `launch`.
struct Starting {
    index: usize,
    task: TaskSpec,
    number: u32,
    plan: LaunchPlan,
    profile: crate::core::profile::Profile,
    recorder: Recorder,
    key: u64,
    account: Option<usize>,
    started_at: OffsetDateTime,
}

pub struct Engine {
    store: TaskStore,
    profiles: ProfileSet,
    opts: EngineOptions,
    live: BTreeMap<u64, LiveAttempt>,
    live_by_task: HashMap<usize, u64>,
    next_key: u64,
    retry_at: HashMap<usize, Instant>,
    /// Profiles that hit their quota: their tasks wait until the reset.
    quota_holds: HashMap<String, Instant>,
    /// Which account of each profile is exhausted and which was used last.
    accounts: AccountBook,
    reports: mpsc::Sender<PtyReport>,
    events: Vec<EngineEvent>,
    paused: bool,
    stopping: bool,
    /// `hygiene::file_tag` of the tasks file: the prefix of every cookie this run hands out.
    file_tag: String,
    /// Per task: the survivors of its interrupted attempt ended at start, carried into the
    /// record of its next attempt so the record keeps saying so.
    survivors: HashMap<usize, serde_json::Value>,
}

impl Engine {
    /// Takes over the store: tasks left `running` by a herd that died become `retryable` with the
    /// interruption recorded; tasks with config problems fail now, before anything starts.
    pub fn new(
        store: TaskStore,
        profiles: ProfileSet,
        opts: EngineOptions,
        reports: mpsc::Sender<PtyReport>,
    ) -> Result<Engine> {
        let mut engine = Engine {
            store,
            profiles,
            opts,
            live: BTreeMap::new(),
            live_by_task: HashMap::new(),
            next_key: 1,
            retry_at: HashMap::new(),
            quota_holds: HashMap::new(),
            accounts: AccountBook::default(),
            reports,
            events: Vec::new(),
            paused: false,
            stopping: false,
            file_tag: String::new(),
            survivors: HashMap::new(),
        };
        engine.file_tag = hygiene::file_tag(engine.store.path());
        engine.end_survivors()?;
        engine.recover_interrupted()?;
        engine.restore_retry_times(Instant::now(), OffsetDateTime::now_utc());
        engine.fail_config_problems()?;
        Ok(engine)
    }

    fn in_scope(&self, index: usize) -> bool {
        let task = &self.store.file().tasks()[index];
        task.enabled && (self.opts.only.is_empty() || self.opts.only.contains(&task.task_id))
    }

    fn scope(&self) -> Vec<usize> {
        (0..self.store.file().tasks().len())
            .filter(|&i| self.in_scope(i))
            .collect()
    }

    fn recover_interrupted(&mut self) -> Result<()> {
        let now = OffsetDateTime::now_utc();
        for index in self.scope() {
            let task = &self.store.file().tasks()[index];
            if task.status != TaskStatus::Running {
                continue;
            }
            let (task_id, attempt) = (task.task_id.clone(), task.attempts);
            let mut result = task.result.clone().unwrap_or_else(|| json!({}));
            if let Some(obj) = result.as_object_mut() {
                obj.insert("completed_at".into(), json!(outcome::utc_timestamp(now)));
                obj.insert("interrupted".into(), json!(true));
                obj.insert(
                    "failure_evidence".into(),
                    json!(format!(
                        "attempt {attempt} was interrupted: herd stopped while it ran"
                    )),
                );
            }
            let file = self.store.file_mut();
            file.set_status(index, TaskStatus::Retryable);
            file.set_result(index, result);
            self.events.push(EngineEvent::Resumed { task_id, attempt });
        }
        self.store.save().wrap_err("cannot write the tasks file")?;
        Ok(())
    }

    /// An account that hit its quota waits for the reset it named (or half an hour); one whose
    /// login failed is not used again in this run.
    fn exhaust_account(
        &mut self,
        profile: &crate::core::profile::Profile,
        index: usize,
        failure: FailureType,
        reset: Option<OffsetDateTime>,
        ended_at: OffsetDateTime,
        now: Instant,
    ) {
        let wait = match (failure, reset) {
            (FailureType::Quota, Some(at)) => {
                Duration::try_from((at - ended_at).max(time::Duration::ZERO)).unwrap_or_default()
            }
            (FailureType::Quota, None) => Duration::from_secs(30 * 60),
            _ => Duration::from_secs(24 * 60 * 60),
        };
        let name = profile.accounts.get(index).map_or("?", |a| a.name.as_str());
        tracing::info!(profile = %profile.name, account = name, wait_sec = wait.as_secs(), "account exhausted");
        self.accounts.mark_exhausted(profile, index, now + wait);
    }

    /// The reset time a quota failure names, when its task waits for quota resets.
    fn quota_reset(
        &self,
        index: usize,
        verdict: &Verdict,
        attempt: &mut Attempt,
    ) -> Option<OffsetDateTime> {
        let task = &self.store.file().tasks()[index];
        let has_accounts = self
            .profiles
            .get(&task.agent)
            .is_some_and(|p| !p.accounts.is_empty());
        if verdict.failure != Some(FailureType::Quota)
            || !(task.wait_for_quota_reset || has_accounts)
        {
            return None;
        }
        let rows = attempt
            .screen_mut()
            .rows_with_history(failure_report::TAIL_ROWS);
        let text = crate::core::detect::tail_rows(&rows, failure_report::TAIL_ROWS).join("\n");
        let local = time::UtcOffset::current_local_offset().unwrap_or(time::UtcOffset::UTC);
        let reset = crate::core::quota_reset::parse_reset(&text, OffsetDateTime::now_utc(), local)?;
        tracing::info!(task = %task.task_id, at = %reset.at, evidence = %reset.evidence, "waiting for the quota reset");
        Some(reset.at)
    }

    /// A resumed batch keeps the backoff: `retry_at` in the file becomes the wait.
    fn restore_retry_times(&mut self, now: Instant, now_utc: OffsetDateTime) {
        for index in self.scope() {
            let task = &self.store.file().tasks()[index];
            if let (TaskStatus::Retryable, Some(at)) = (task.status, task.retry_at) {
                let wait = (at - now_utc).max(time::Duration::ZERO);
                let wait = Duration::try_from(wait).unwrap_or_default();
                self.retry_at.insert(index, now + wait);
            }
        }
    }

    /// The launch plan of a task's next attempt, or its config problem.
    fn plan_for(&self, index: usize, attempt: u32) -> std::result::Result<LaunchPlan, String> {
        let task = &self.store.file().tasks()[index];
        let run_dir = self.opts.runs_dir.join(&task.task_id);
        let ctx = LaunchContext {
            base_dir: self.store.base_dir(),
            run_id: self.store.file().run_id(),
            attempt,
            run_dir: &run_dir,
        };
        launch::prepare(task, &self.profiles, &ctx)
    }

    fn fail_config_problems(&mut self) -> Result<()> {
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

    fn fail_config(&mut self, index: usize, evidence: String) -> Result<()> {
        let task_id = self.store.file().tasks()[index].task_id.clone();
        let file = self.store.file_mut();
        file.set_status(index, TaskStatus::Failed);
        file.set_result(
            index,
            outcome::config_failure_json(&evidence, OffsetDateTime::now_utc()),
        );
        self.store.save().wrap_err("cannot write the tasks file")?;
        self.events
            .push(EngineEvent::ConfigFailed { task_id, evidence });
        Ok(())
    }

    pub fn drain_events(&mut self) -> Vec<EngineEvent> {
        std::mem::take(&mut self.events)
    }

    pub fn store(&self) -> &TaskStore {
        &self.store
    }

    pub fn profiles(&self) -> &ProfileSet {
        &self.profiles
    }

    pub fn live(&self) -> impl Iterator<Item = &LiveAttempt> {
        self.live.values()
    }

    pub fn live_for_task(&self, index: usize) -> Option<&LiveAttempt> {
        self.live_by_task.get(&index).and_then(|k| self.live.get(k))
    }

    pub fn retry_at(&self, index: usize) -> Option<Instant> {
        self.retry_at.get(&index).copied()
    }

    pub fn is_stopping(&self) -> bool {
        self.stopping
    }

    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    pub fn concurrency(&self) -> usize {
        self.opts.concurrency
    }

    pub fn set_concurrency(&mut self, n: usize) {
        self.opts.concurrency = n.clamp(1, 256);
    }

    /// Nothing runs and nothing in scope is left to start.
    pub fn is_done(&self) -> bool {
        self.live.is_empty()
            && (self.stopping
                || !self
                    .scope()
                    .into_iter()
                    .any(|i| self.store.file().tasks()[i].status.is_runnable()))
    }

    /// Whether a task of this run waits for the operator's answers to its questions.
    pub fn any_needs_input(&self) -> bool {
        self.scope()
            .into_iter()
            .any(|i| self.store.file().tasks()[i].status == TaskStatus::NeedsInput)
    }

    /// Starts tasks while there is room.
    pub fn fill_slots(&mut self, now: Instant) -> Result<()> {
        if self.paused || self.stopping {
            return Ok(());
        }
        // Group commit: every task started in this turn is marked `running` in one write, made
        // before any of their agents is launched.
        let mut starting = Vec::new();
        for index in self.scope() {
            if self.live.len() + starting.len() >= self.opts.concurrency {
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
            if due && let Some(prepared) = self.prepare_start(index, now)? {
                starting.push(prepared);
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

    /// Everything a task's next attempt needs before its agent runs, with the task marked
    /// `running` in the document (not yet written: the caller writes before `launch`). `None`
    /// when the task failed its configuration instead.
    fn prepare_start(&mut self, index: usize, now: Instant) -> Result<Option<Starting>> {
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
        let (rows, cols) = (self.opts.rows, self.opts.cols);
        let started_at = OffsetDateTime::now_utc();
        let paths = AttemptPaths::new(&self.opts.runs_dir.join(&task.task_id), number);
        let recorder = Recorder::create(
            paths,
            cols,
            rows,
            started_at.unix_timestamp().max(0) as u64,
            &task.task_id,
        )?;
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
        Ok(Some(Starting {
            index,
            task,
            number,
            plan,
            profile,
            recorder,
            key,
            account,
            started_at,
        }))
    }

    /// Launches a prepared attempt's agent; its `running` state is already on disk.
    fn launch(&mut self, starting: Starting, now: Instant) -> Result<()> {
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
        } = starting;
        let (rows, cols) = (self.opts.rows, self.opts.cols);
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
        let agent_log = setup.profile.agent_log.map(|kind| {
            super::agent_log::AgentLogTail::new(
                kind,
                plan.agent_log.clone(),
                &plan.env,
                &plan.cwd,
                std::time::SystemTime::from(started_at),
            )
        });
        let command = plan.argv.join(" ");
        tracing::info!(task = %task.task_id, attempt = number, cwd = %plan.cwd.display(), "starting {command}");
        self.events.push(EngineEvent::Started {
            task_id: task.task_id.clone(),
            attempt: number,
            command,
        });
        let git_before = failure_report::GitSnapshot::start(&plan.cwd);
        let cookie = hygiene::new_cookie(&self.file_tag, &task.task_id, number);
        plan.env.insert(hygiene::COOKIE_VAR.into(), cookie.clone());
        match AgentProcess::spawn(&plan, rows, cols, key, self.reports.clone()) {
            Ok(process) => {
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
                        next_signal_poll: now + SIGNAL_POLL,
                        agent_log,
                        cookie,
                        known_processes: Vec::new(),
                        swept: None,
                    },
                );
                self.live_by_task.insert(index, key);
                Ok(())
            }
            Err(error) if super::limits::is_resource_shortage(&error) => {
                self.defer_spawn(index, &task, format!("{error:#}"), now)
            }
            Err(error) => {
                // Could not even start: a process failure of this attempt, with the reason.
                let verdict = Verdict::failed(FailureType::Process, format!("{error:#}"));
                let mut recorder = recorder;
                let exit = ExitStatus::default();
                let ended = Ended {
                    index,
                    task_id: &task.task_id,
                    number,
                    plan: &plan,
                    size: (cols, rows),
                    verdict: &verdict,
                    exit: &exit,
                    marker_seen: false,
                    auto_inputs: &[],
                    approvals: &[],
                    auto_counts: Vec::new(),
                    started: now,
                    started_at,
                    stopped_by_operator: false,
                    failure_summary: None,
                    quota_reset: None,
                    account,
                    agent: AgentReport::default(),
                    ended_processes: Vec::new(),
                };
                self.conclude(ended, &mut recorder, now)
            }
        }
    }

    /// Handles one report from a PTY thread.
    pub fn on_report(&mut self, report: PtyReport, now: Instant) -> Result<()> {
        match report {
            PtyReport::Output { key, bytes } => {
                let Some(live) = self.live.get_mut(&key) else {
                    return Ok(());
                };
                let at = now.saturating_duration_since(live.started);
                live.recorder.output(at, &bytes)?;
                let effects = live.attempt.handle(Event::Output(&bytes), at);
                self.apply(key, effects, at)?;
            }
            PtyReport::Exited { key, status } => {
                if let Some(live) = self.live.get_mut(&key) {
                    // Whatever the agent left running in its group goes with it, and whatever
                    // left the group is found by its cookie, off the event loop.
                    live.process.signal(crate::core::attempt::StopSignal::Kill);
                    live.exit = Some(status);
                    live.exited_at = Some(now);
                    hygiene_steps::sweep_in_background(key, live, self.reports.clone());
                }
                self.conclude_if_drained(key, now)?;
            }
            PtyReport::Swept { key, ended } => {
                if let Some(live) = self.live.get_mut(&key) {
                    for process in &ended {
                        tracing::info!(task = %live.task_id, attempt = live.number, "ended a leftover process: {}", hygiene::describe(process));
                    }
                    live.swept = Some(ended);
                }
                self.conclude_if_drained(key, now)?;
            }
            PtyReport::Closed { key } => {
                if let Some(live) = self.live.get_mut(&key) {
                    live.closed = true;
                }
                self.conclude_if_drained(key, now)?;
            }
        }
        Ok(())
    }

    fn apply(&mut self, key: u64, effects: Vec<Effect>, at: Duration) -> Result<()> {
        let Some(live) = self.live.get_mut(&key) else {
            return Ok(());
        };
        for effect in effects {
            match effect {
                Effect::Write { bytes, .. } => {
                    live.recorder.input(at, &bytes)?;
                    live.process.write(bytes);
                }
                Effect::Signal(signal) => {
                    if live.exit.is_none() {
                        hygiene_steps::remember_descendants(live);
                    }
                    live.process.signal(signal);
                }
                Effect::Note(note) => {
                    live.recorder.marker(at, &note_label(&note))?;
                    self.events.push(EngineEvent::Note {
                        task_id: live.task_id.clone(),
                        note,
                    });
                }
            }
        }
        Ok(())
    }

    /// Deadlines that passed: attempt timers, drains, retries.
    pub fn on_tick(&mut self, now: Instant) -> Result<()> {
        let keys: Vec<u64> = self.live.keys().copied().collect();
        for key in keys {
            let Some(live) = self.live.get_mut(&key) else {
                continue;
            };
            let at = now.saturating_duration_since(live.started);
            live.recorder.flush_if_due(at)?;
            if live.attempt.next_deadline().is_some_and(|d| d <= at) {
                let effects = live.attempt.handle(Event::Tick, at);
                self.apply(key, effects, at)?;
            }
            if self.live.get(&key).is_some_and(|l| {
                (l.plan.signal_file.is_some() || l.agent_log.is_some()) && now >= l.next_signal_poll
            }) {
                self.poll_agent_log(key, now)?;
                self.poll_signal(key, now, false)?;
            }
            self.conclude_if_drained(key, now)?;
        }
        self.fill_slots(now)?;
        self.flush()
    }

    /// Writes the state changes not yet on disk (the ends of attempts since the last write), in
    /// one write. Called at the end of every turn of the event loop (`on_tick`).
    pub fn flush(&mut self) -> Result<()> {
        if self.store.has_changes() {
            self.store.save().wrap_err("cannot write the tasks file")?;
        }
        Ok(())
    }

    /// Reads attempt `key`'s signal file into its attempt when it changed. While the agent runs
    /// only a valid file counts (it may be half written); `last` (the agent exited) hands over
    /// whatever is there.
    fn poll_signal(&mut self, key: u64, now: Instant, last: bool) -> Result<()> {
        let Some(live) = self.live.get_mut(&key) else {
            return Ok(());
        };
        live.next_signal_poll = now + SIGNAL_POLL;
        let Some(path) = live.plan.signal_file.clone() else {
            return Ok(());
        };
        let text = match std::fs::metadata(&path) {
            Ok(meta) if meta.len() > SIGNAL_MAX_BYTES => Some(Err(format!(
                "it is {} bytes; a signal file is a small JSON object",
                meta.len()
            ))),
            Ok(_) => std::fs::read_to_string(&path).ok().map(Ok),
            Err(_) => None,
        };
        let Some(text) = text else {
            return Ok(());
        };
        let (read, raw) = match text {
            Ok(raw) => (crate::core::signal_file::parse(&raw), raw),
            Err(problem) => (Err(problem.clone()), problem),
        };
        if live.signal_text.as_deref() == Some(raw.as_str()) || (read.is_err() && !last) {
            return Ok(());
        }
        live.signal_text = Some(raw);
        let at = now.saturating_duration_since(live.started);
        let effects = live.attempt.handle(Event::SignalFile(read), at);
        self.apply(key, effects, at)
    }

    /// Hands attempt `key` what its agent added to its own log since the last read.
    fn poll_agent_log(&mut self, key: u64, now: Instant) -> Result<()> {
        let Some(live) = self.live.get_mut(&key) else {
            return Ok(());
        };
        live.next_signal_poll = now + SIGNAL_POLL;
        let Some(tail) = live.agent_log.as_mut() else {
            return Ok(());
        };
        let bytes = tail.read_new();
        if bytes.is_empty() {
            return Ok(());
        }
        let at = now.saturating_duration_since(live.started);
        let effects = live.attempt.handle(Event::AgentLog(&bytes), at);
        self.apply(key, effects, at)
    }

    /// When `on_tick` should run next.
    pub fn next_wakeup(&self) -> Option<Instant> {
        let attempts = self.live.values().filter_map(|live| {
            let attempt = live.attempt.next_deadline().map(|d| live.started + d);
            let drain = live.exited_at.map(|t| t + DRAIN_AFTER_EXIT);
            let signal = ((live.plan.signal_file.is_some() || live.agent_log.is_some())
                && live.exit.is_none())
            .then_some(live.next_signal_poll);
            let flush = live.recorder.flush_due().map(|d| live.started + d);
            attempt
                .into_iter()
                .chain(drain)
                .chain(signal)
                .chain(flush)
                .min()
        });
        let retries = if self.paused || self.stopping {
            None
        } else {
            let now = Instant::now();
            let holds = self.quota_holds.values().filter(|at| **at > now);
            let accounts = self.accounts.next_release(now);
            self.retry_at
                .values()
                .chain(holds)
                .copied()
                .chain(accounts)
                .min()
        };
        attempts.chain(retries).min()
    }

    fn conclude_if_drained(&mut self, key: u64, now: Instant) -> Result<()> {
        let ready = self.live.get(&key).is_some_and(|live| {
            live.exit.is_some()
                && live.swept.is_some()
                && (live.closed || live.exited_at.is_some_and(|t| now >= t + DRAIN_AFTER_EXIT))
        });
        if !ready {
            return Ok(());
        }
        if self
            .live
            .get(&key)
            .is_some_and(|l| l.plan.signal_file.is_some())
        {
            self.poll_signal(key, now, true)?;
        }
        // The last lines of the agent's log (a Codex refusal the model talked past).
        self.poll_agent_log(key, now)?;
        let Some(mut live) = self.live.remove(&key) else {
            return Ok(());
        };
        self.live_by_task.remove(&live.task);
        let at = now.saturating_duration_since(live.started);
        let exit = live.exit.clone().unwrap_or_default();
        // The verdict note is recorded by `conclude`, with the status it leads to.
        let _ = live.attempt.handle(Event::Exited(exit.clone()), at);
        let verdict = live
            .attempt
            .verdict()
            .cloned()
            .unwrap_or_else(Verdict::success);
        let counts = live.attempt.auto_input_counts();
        let inputs = live.attempt.auto_inputs().to_vec();
        let approvals = live.attempt.approvals().to_vec();
        let marker_seen = live.attempt.marker_seen();
        let failure_summary = (verdict.failure.is_some() && !live.stopped_by_operator).then(|| {
            let rows = live
                .attempt
                .screen_mut()
                .rows_with_history(failure_report::TAIL_ROWS);
            let tail = match live.attempt.stream_facts().filter(|f| f.events > 0) {
                // A structured agent's screen is JSON: its own error texts say more.
                Some(facts) => failure_report::stream_lines(facts),
                None => crate::core::detect::tail_rows(&rows, failure_report::TAIL_ROWS),
            };
            // The agent's own error in its signal file comes first.
            let tail = match live.attempt.signal() {
                Some(Ok(file)) => match &file.signal {
                    crate::core::signal_file::Signal::Error { error } => {
                        let mut lines = vec![format!("Error: {error}")];
                        lines.extend(tail);
                        lines
                    }
                    _ => tail,
                },
                _ => tail,
            };
            let before = live.git_before.take();
            let changed = failure_report::changed_since(before.as_ref(), &live.plan.cwd);
            let errors_path = live.recorder.paths().log.with_extension("errors.json");
            failure_report::report(&tail, changed, &errors_path)
        });
        let quota_reset = self.quota_reset(live.task, &verdict, &mut live.attempt);
        let agent = self.agent_report(&live);
        let ended = Ended {
            index: live.task,
            task_id: &live.task_id,
            number: live.number,
            plan: &live.plan,
            size: live.size,
            verdict: &verdict,
            exit: &exit,
            marker_seen,
            auto_inputs: &inputs,
            approvals: &approvals,
            auto_counts: counts,
            started: live.started,
            started_at: live.started_at,
            stopped_by_operator: live.stopped_by_operator,
            failure_summary,
            quota_reset,
            account: live.account,
            agent,
            ended_processes: live.swept.take().unwrap_or_default(),
        };
        self.conclude(ended, &mut live.recorder, now)
    }

    /// What the agent reported: its events and signal file (from the attempt), and a Claude
    /// session's transcript when the profile leaves them.
    fn agent_report(&self, live: &LiveAttempt) -> AgentReport {
        let stream = live.attempt.stream_facts().cloned();
        let signal = live.attempt.signal().cloned();
        let wants_transcript = self
            .profiles
            .get(&self.store.file().tasks()[live.task].agent)
            .is_some_and(|p| p.transcripts.is_some());
        let transcript = wants_transcript
            .then(|| {
                let session = stream
                    .as_ref()
                    .and_then(|s| s.session_id.clone())
                    .or_else(|| live.plan.resumed_session.clone());
                let since = std::time::SystemTime::from(live.started_at);
                let path = super::transcripts::find(
                    &live.plan.env,
                    &live.plan.cwd,
                    session.as_deref(),
                    since,
                )?;
                let facts = super::transcripts::read(&path)?;
                Some((outcome::relative_to(&path, self.store.base_dir()), facts))
            })
            .flatten();
        AgentReport {
            stream,
            signal,
            transcript,
        }
    }

    fn conclude(&mut self, ended: Ended<'_>, recorder: &mut Recorder, now: Instant) -> Result<()> {
        let Ended {
            index,
            task_id,
            number,
            plan,
            size: (cols, rows),
            verdict,
            exit,
            marker_seen,
            auto_inputs,
            approvals,
            auto_counts,
            started,
            started_at,
            stopped_by_operator,
            failure_summary,
            quota_reset,
            account,
            agent,
            ended_processes,
        } = ended;
        let task = self.store.file().tasks()[index].clone();
        let mut verdict = verdict.clone();
        let ended_at = OffsetDateTime::now_utc();
        let profile = self.profiles.get(&task.agent).cloned();
        let account_name = account
            .and_then(|i| profile.as_ref().and_then(|p| p.accounts.get(i)))
            .map(|a| a.name.clone());
        let account_retry = match (account, &profile, verdict.failure) {
            (Some(i), Some(p), Some(failure @ (FailureType::Quota | FailureType::Auth)))
                if !stopped_by_operator =>
            {
                self.exhaust_account(p, i, failure, quota_reset, ended_at, now);
                match self.accounts.peek(p, now) {
                    Choice::Use(_) => Some(Duration::from_secs(1)),
                    Choice::AllExhausted { until }
                        if failure == FailureType::Quota && task.wait_for_quota_reset =>
                    {
                        Some(until.saturating_duration_since(now))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        // With accounts the exhausted account waits, not the whole profile.
        let quota_reset = if account.is_none() && task.wait_for_quota_reset {
            quota_reset
        } else {
            None
        };
        let status = if account_retry.is_some() || (quota_reset.is_some() && !stopped_by_operator) {
            TaskStatus::Retryable
        } else if stopped_by_operator {
            verdict.evidence = Some("stopped by the operator; the task will run again".into());
            TaskStatus::Retryable
        } else if verdict.cancelled {
            TaskStatus::Cancelled
        } else if verdict.needs_operator() {
            TaskStatus::NeedsInput
        } else {
            retry::status_after(
                verdict.failure,
                number,
                task.max_retries,
                task.retry_on.as_deref(),
            )
        };
        let o = AttemptOutcome {
            attempt: number,
            verdict: &verdict,
            marker_seen,
            exit,
            log_file: outcome::relative_to(&recorder.paths().log, self.store.base_dir()),
            auto_counts,
            auto_inputs,
            approvals,
            started_at,
            ended_at,
            duration: now.saturating_duration_since(started),
        };
        let mut result = outcome::result_json(&o);
        if task.worktree
            && let Some(obj) = result.as_object_mut()
        {
            obj.insert("worktree".into(), worktree_state(&plan.cwd, status));
        }
        if let Some(obj) = result.as_object_mut() {
            if stopped_by_operator {
                obj.insert("interrupted".into(), json!(true));
            }
            if let Some(summary) = failure_summary {
                obj.insert("failure_summary".into(), json!(summary));
            }
            if let Some(name) = &account_name {
                obj.insert("account".into(), json!(name));
            }
            add_agent_report(obj, &agent, plan, task.result.as_ref());
            if let Some(survivors) = self.survivors.remove(&index) {
                obj.insert("survivors_ended".into(), survivors);
            }
        }
        let mut facts = outcome::facts_json(&o, plan, cols, rows, &task.agent);
        if let Some(obj) = facts.as_object_mut() {
            if let Some(name) = &account_name {
                obj.insert("account".into(), json!(name));
            }
            obj.insert(
                "completion".into(),
                json!(plan.completion.completion.as_str()),
            );
            if let Some(session) = &plan.resumed_session {
                obj.insert("resumed_session".into(), json!(session));
            }
            if let Some(stream) = &agent.stream {
                obj.insert("stream".into(), json!(stream));
            }
            if let Some(signal) = &agent.signal {
                let mut fields = serde_json::Map::new();
                outcome::agent_facts::signal_result_fields(signal, &mut fields);
                obj.insert("signal".into(), fields.remove("signal").unwrap_or_default());
            }
            if let Some((path, transcript)) = &agent.transcript {
                obj.insert(
                    "transcript".into(),
                    json!({"path": path, "facts": transcript}),
                );
            }
            obj.insert("ended_processes".into(), json!(ended_processes));
        }
        recorder.marker(o.duration, &note_label(&Note::Verdict(verdict.clone())))?;
        recorder.finish(o.duration, &facts)?;
        let retry_after = match (account_retry, quota_reset) {
            (Some(wait), _) => Some(wait),
            (None, Some(at)) => {
                let wait = Duration::try_from((at - ended_at).max(time::Duration::ZERO))
                    .unwrap_or_default();
                self.quota_holds.insert(task.agent.clone(), now + wait);
                Some(wait)
            }
            (None, None) => (status == TaskStatus::Retryable && !stopped_by_operator)
                .then(|| retry::backoff_with_jitter(number, random_spread(index, number))),
        };
        let file = self.store.file_mut();
        file.set_result(index, result);
        file.set_status(index, status);
        match retry_after {
            Some(after) => file.set_field(
                index,
                "retry_at",
                json!(outcome::utc_timestamp(ended_at + after)),
            ),
            None => file.remove_field(index, "retry_at"),
        }
        // Group commit: written with whatever else this turn of the loop changes, by `on_tick`
        // at the latest, and always before the next agent starts (`start` saves first).
        // Nothing here acts on the new state before then: a retry waits for `start`.
        tracing::info!(task = task_id, attempt = number, verdict = verdict.label(), evidence = ?verdict.evidence, status = %status, "attempt ended");
        self.events.push(EngineEvent::Finished {
            task_id: task_id.to_string(),
            attempt: number,
            verdict,
            status,
        });
        if let Some(after) = retry_after {
            self.retry_at.insert(index, now + after);
            self.events.push(EngineEvent::RetryScheduled {
                task_id: task_id.to_string(),
                after,
            });
        }
        Ok(())
    }

    /// The operator stops herd: every running agent is ended and its task goes back to
    /// `retryable`; nothing new starts.
    pub fn stop(&mut self, now: Instant) -> Result<()> {
        self.stopping = true;
        let keys: Vec<u64> = self.live.keys().copied().collect();
        for key in keys {
            if let Some(live) = self.live.get_mut(&key) {
                live.stopped_by_operator = true;
                let at = now.saturating_duration_since(live.started);
                let effects = live.attempt.handle(Event::Cancel, at);
                self.apply(key, effects, at)?;
            }
        }
        Ok(())
    }

    /// herd cannot go on (`reason`: a write of the tasks file or of a recording failed): every
    /// agent is killed and its task written back as `retryable`, where the file can still be
    /// written (the write is atomic either way, so the file stays valid).
    pub fn abandon(&mut self, reason: &str) {
        self.stopping = true;
        self.kill_all();
        let ended_at = outcome::utc_timestamp(OffsetDateTime::now_utc());
        let in_flight: Vec<(usize, u32)> = self.live.values().map(|l| (l.task, l.number)).collect();
        let file = self.store.file_mut();
        for (index, attempt) in in_flight {
            // Like a crash (`recover_interrupted`): what the result already holds is kept.
            let mut result = file.tasks()[index]
                .result
                .clone()
                .unwrap_or_else(|| json!({}));
            if let Some(fields) = result.as_object_mut() {
                fields.insert("completed_at".into(), json!(ended_at));
                fields.insert("interrupted".into(), json!(true));
                fields.insert(
                    "failure_evidence".into(),
                    json!(format!(
                        "attempt {attempt} was interrupted: herd could not go on ({reason})"
                    )),
                );
            }
            file.set_status(index, TaskStatus::Retryable);
            file.set_result(index, result);
        }
        if let Err(error) = self.store.save() {
            tracing::error!("cannot write the tasks in flight back as retryable: {error}");
        }
    }

    /// Kills every agent's process group at once (a second Ctrl-C, or leaving for good), and
    /// every process the attempts started, wherever it went.
    pub fn kill_all(&mut self) {
        for live in self.live.values() {
            live.process.signal(crate::core::attempt::StopSignal::Kill);
        }
        for live in self.live.values() {
            let ended = hygiene::end_attempt(&live.cookie, &live.known_processes, Duration::ZERO);
            for process in &ended {
                tracing::info!(task = %live.task_id, attempt = live.number, "killed on leaving: {}", hygiene::describe(process));
            }
        }
    }

    /// Exit status of `herd run`: 0 every task in scope completed, 1 otherwise, 130 stopped.
    pub fn exit_code(&self) -> i32 {
        if self.stopping {
            return 130;
        }
        let all_done = self
            .scope()
            .into_iter()
            .all(|i| self.store.file().tasks()[i].status == TaskStatus::Completed);
        if all_done { 0 } else { 1 }
    }

    /// The tasks in scope, for summaries.
    pub fn scoped_tasks(&self) -> Vec<usize> {
        self.scope()
    }

    /// Sends an event to a live attempt (operator answers, keys, cancel, resize).
    pub fn send_to_task(&mut self, index: usize, event: Event<'_>, now: Instant) -> Result<()> {
        let Some(&key) = self.live_by_task.get(&index) else {
            return Ok(());
        };
        let Some(live) = self.live.get_mut(&key) else {
            return Ok(());
        };
        let at = now.saturating_duration_since(live.started);
        if let Event::Resize { rows, cols } = event {
            live.process.resize(rows, cols)?;
            live.recorder.resize(at, cols, rows)?;
        }
        let effects = live.attempt.handle(event, at);
        self.apply(key, effects, at)
    }
}

/// A task's worktree after an attempt: removed when the task completed with a clean tree, kept
/// (with its changed files) otherwise.
/// The agent's own report into `result`: structured fields, the signal file, the transcript's
/// summary, the session to resume and the cost over all attempts.
fn add_agent_report(
    result: &mut serde_json::Map<String, serde_json::Value>,
    agent: &AgentReport,
    plan: &LaunchPlan,
    previous: Option<&serde_json::Value>,
) {
    use outcome::agent_facts;
    if let Some(stream) = &agent.stream {
        agent_facts::stream_result_fields(stream, result);
    }
    if let Some(signal) = &agent.signal {
        agent_facts::signal_result_fields(signal, result);
    }
    if let Some((path, transcript)) = &agent.transcript {
        result.insert(
            "transcript".into(),
            agent_facts::transcript_summary(path, transcript),
        );
        if let Some(id) = &transcript.session_id {
            result.entry("session_id").or_insert_with(|| json!(id));
        }
    }
    if let Some(id) = &plan.resumed_session {
        result.entry("session_id").or_insert_with(|| json!(id));
        result.insert("resumed".into(), json!(true));
    }
    let cost = agent.stream.as_ref().and_then(|s| s.cost_usd);
    if let Some(total) = agent_facts::total_cost(previous, cost) {
        result.insert("total_cost_usd".into(), json!((total * 1e6).round() / 1e6));
    }
}

fn worktree_state(path: &std::path::Path, status: TaskStatus) -> serde_json::Value {
    let shown = path.display().to_string();
    if status != TaskStatus::Completed {
        return json!({"path": shown, "state": "kept"});
    }
    match worktree::finish(path) {
        Ok(worktree::Cleanup::Removed) => json!({"path": shown, "state": "removed"}),
        Ok(worktree::Cleanup::KeptDirty { files }) => {
            tracing::info!(path = %shown, changed = files.len(), "kept a dirty worktree");
            json!({"path": shown, "state": "kept: it has changes", "changed_files": files})
        }
        Err(error) => json!({"path": shown, "state": format!("kept: {error}")}),
    }
}

/// A number in 0..=1 that differs between runs, tasks and attempts, to spread retries.
fn random_spread(index: usize, attempt: u32) -> f64 {
    use std::hash::BuildHasher;
    let hash = std::collections::hash_map::RandomState::new().hash_one((index, attempt));
    hash as f64 / u64::MAX as f64
}

/// The cast marker text for a note.
pub fn note_label(note: &Note) -> String {
    match note {
        Note::PromptShown { rule, text } => format!("prompt {rule}: {text}"),
        Note::AutoAnswered { rule, keys } => format!("auto answer {rule}: {keys:?}"),
        Note::OperatorAnswered { rule, keys } => format!("operator answer {rule}: {keys:?}"),
        Note::WaitingForOperator { rule, text } => format!("waiting for operator {rule}: {text}"),
        Note::MarkerSeen => "completion marker seen".to_string(),
        Note::ResultEvent { success } => format!(
            "result event: {}",
            if *success { "success" } else { "error" }
        ),
        Note::SignalRead { status } => format!("signal file: {status}"),
        Note::Ending { reason } => format!("ending: {reason}"),
        Note::Verdict(v) => format!(
            "verdict: {}{}",
            v.label(),
            v.evidence
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        ),
        Note::Bell => "bell".to_string(),
        Note::Approval(approval) => format!("answer {}", approval.summary()),
        Note::AnswerTaken { rule } => format!("taken {rule}: the dialog left the screen"),
        Note::AnswerResent { rule, keys, resend } => format!(
            "not taken {rule}: the dialog still showed {} s later; {keys:?} sent again \
             ({resend} of {})",
            crate::core::attempt::RESEND_AFTER.as_secs(),
            crate::core::attempt::MAX_RESENDS
        ),
    }
}

// Operator actions (cancel, retry now, auto-answer toggles, prompt edits) live beside the engine
// so they can reach its state without widening its interface.
#[path = "engine_control.rs"]
pub mod control;

// Operator messages to a finished or questioning agent's session.
#[path = "engine_session.rs"]
pub mod session;

// Process hygiene around attempts: survivors at start, the sweep after each agent, spawns that
// failed for lack of resources.
#[path = "engine_hygiene.rs"]
mod hygiene_steps;
