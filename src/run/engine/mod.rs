//! The engine: the one owner of run state, and the executor of the batch's decisions
//! (`core::batch`: which task starts next, when an agent may launch, the stages of an
//! attempt's end). It starts attempts in PTYs, feeds their output to the core's attempt state
//! machines, carries out both machines' effects, records everything and writes every state
//! change to the tasks file.
//!
//! It never blocks and never sleeps: the frontend (headless loop or dashboard) waits on its
//! inbox (`inbox::EngineInbox`: what the terminals and workers report) and on `next_wakeup`,
//! then calls `on_report` / `on_tick`. Frontends read its state through `view`
//! (`engine.view()`, a read-only `BatchView`) and drain its `EngineEvent`s; what they ask of the
//! batch is a `Command` carried out by `apply` (`command`).
//!
//! This file holds the engine's state, its parts, each with its own impl in its own file(s):
//! `tasks` (the tasks file and what is known per task: the operator's edits, recovery at
//! start, the operator's changes), `attempts` (every attempt holding a slot, at its stage:
//! preparing, awaiting its write, live, ending), `hosts` (the run's hosts and what is left to
//! sweep on them), `notify` (the operator's `notify` command), `sizes` (the size each next
//! agent starts at), `commit` (the tasks file's writer), `outgoing` (the events and the
//! workers' outbox); `options` and `event` hold what it is started with and what it tells.
//! Here too are `apply` (one typed `Command`, `command`, dispatched to the parts),
//! `impl BatchView` (what the frontends read, `view`) and the steps that need several parts
//! (an operator's command, a merged edit carried out, the writes' handoff, stop, abandon).
//! The steps live beside it: `executor` (hands inputs to `core::batch` and carries out its
//! effects), `prepare` (a task's plan, and its worktree, signal file or host
//! folder made on a worker before it starts), `start` (from plan to a start awaiting its
//! write), `launch_agent` (from that start to spawn), `files` (the
//! attempt's signal file and agent log read on a worker, here or on its host), `attempts::reports` (PTY
//! output, timers, what the workers read fed to the attempts), `conclude` (carries out
//! `core::outcome::decide` at an attempt's end), `gather` (the end's git, transcript and
//! worktree work, on a worker), `agent_report` (what the agent said besides its verdict),
//! `interrupted` (the last kill), `processes` (process hygiene), `host_trouble` (a
//! host lost or unreachable at an attempt's start or end), `control` and `api` (the words of
//! an operator action's outcome, the API's prompts), `session` (messages to a session),
//! `inbox` (the reports the engine receives). Workers start through `run::jobs`.
//!
//! The tasks file is written by `commit` on a writer thread, pipelined: an agent is launched
//! once the write that marks its task `running` is on disk (`commit` says why that is enough).

use std::path::Path;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::clock::Now;
use super::jobs::Outbox;
use super::store::TaskStore;
use crate::core::approval::AnsweredBy;
use crate::core::attempt::Event;
use crate::core::batch::{Batch, Input, QueueCommand};
use crate::core::guard::Decision;
use crate::core::profile::ProfileSet;
use crate::core::task::TaskStatus;
use crate::core::taskfile::{Merged, TaskFile};
use crate::run::store::format_problem;
use api::{Added, AnswerRefused, ApiAnswer, PromptInfo};
use command::Command;
use control::{ControlOutcome, done, refused};
use inbox::EngineInbox;

mod agent_report;
pub mod api;
#[cfg(test)]
mod api_tests;
mod attempts;
pub mod command;
#[cfg(test)]
mod command_tests;
mod commit;
#[cfg(test)]
mod commit_tests;
mod conclude;
pub mod control;
#[cfg(test)]
mod control_tests;
#[cfg(test)]
mod edits_tests;
pub mod event;
mod executor;
mod files;
pub mod gather;
pub mod gathered;
mod host_trouble;
mod hosts;
pub mod inbox;
mod interrupted;
mod launch_agent;
mod notify;
pub mod options;
pub(crate) mod os;
#[cfg(test)]
pub(crate) mod os_fake;
mod os_real;
mod outgoing;
#[cfg(test)]
mod parts_tests;
mod prepare;
mod processes;
pub mod session;
mod sizes;
mod snapshots;
mod start;
mod tasks;
mod view;
#[cfg(test)]
mod view_tests;

pub use attempts::LiveAttempt;
pub use commit::LAST_WRITE_WAIT;
pub use event::{EngineEvent, note_label};
pub use options::EngineOptions;
pub use tasks::edits;
pub use view::{BatchView, LiveView};

pub struct Engine {
    /// The tasks file's writer and the generations handed to it. First, so it is dropped (its
    /// last write and the spare's removal waited for) before the store gives the lock up.
    commits: commit::Commits,
    /// The tasks file, the profiles and the options, and what is known per task (`tasks`).
    tasks: tasks::Tasks,
    /// Every attempt holding a slot, at its stage (`attempts`).
    attempts: attempts::Attempts,
    /// The batch's decisions: which task starts next (retry times, quota holds, accounts,
    /// hosts, pause, stop).
    batch: Batch,
    /// The events for the frontends and the outbox the workers report through (`outgoing`).
    out: outgoing::Outgoing,
    /// The size of each next agent's PTY by how many run when it starts (`sizes`).
    sizes: sizes::Sizes,
    /// The run's hosts, and what is left to sweep on them (`hosts`).
    hosts: hosts::Hosts,
    /// The time of the current turn, as the frontend gave it: every timestamp written in the
    /// turn is its `wall`. The engine reads no clock.
    clock: Now,
    /// What the `notify` command was told, and its worker.
    notify: notify::Notify,
    /// What agents are spawned, written to, resized and signalled through (`os`).
    os: Box<dyn os::Os>,
    /// Where each local attempt's folder stood as it started, for its changes (`snapshots`).
    snapshots: snapshots::Snapshots,
}

impl Engine {
    /// The most agents that run at once (`set_concurrency` keeps to it).
    pub const MAX_CONCURRENCY: usize = 256;

    /// Takes over the store at `now`: tasks left `running` by a herd that died become
    /// `retryable` with the interruption recorded; tasks with config problems fail now, before
    /// anything starts.
    pub fn new(
        store: TaskStore,
        profiles: ProfileSet,
        opts: EngineOptions,
        reports: mpsc::Sender<EngineInbox>,
        now: Now,
    ) -> Result<Engine> {
        Engine::with_os(
            store,
            profiles,
            opts,
            reports,
            now,
            Box::new(os_real::RealOs),
        )
    }

    /// `new`, its agents started through `os` (the tests' fake spawns none).
    pub(crate) fn with_os(
        store: TaskStore,
        profiles: ProfileSet,
        mut opts: EngineOptions,
        reports: mpsc::Sender<EngineInbox>,
        now: Now,
        os: Box<dyn os::Os>,
    ) -> Result<Engine> {
        let inbox = Outbox::new(reports);
        let commits = commit::Commits::start(inbox.map(EngineInbox::from), store.guard())?;
        let sizes = sizes::Sizes::new(opts.rows, opts.cols);
        let hosts = hosts::Hosts::new(std::mem::take(&mut opts.hosts));
        let mut engine = Engine {
            tasks: tasks::Tasks::new(store, profiles, opts),
            attempts: attempts::Attempts::default(),
            batch: Batch::default(),
            out: outgoing::Outgoing::new(inbox),
            hosts,
            sizes,
            commits,
            clock: now,
            notify: notify::Notify::default(),
            os,
            snapshots: snapshots::Snapshots::default(),
        };
        engine.tasks.end_survivors(&engine.hosts);
        engine.tasks.recover_from_runs(&mut engine.out);
        engine.tasks.recover_interrupted(&mut engine.out, now.wall);
        engine.tasks.restore_retry_times(&mut engine.batch, now);
        let (hosts, wall) = (engine.hosts.set(), now.wall);
        (engine.tasks).fail_config_problems(hosts, &mut engine.out, wall);
        // What was found at the start is on disk before anything runs.
        engine.write_last(LAST_WRITE_WAIT)?;
        Ok(engine)
    }

    /// The batch, to read.
    pub fn view(&self) -> &dyn BatchView {
        self
    }

    /// Carries out `command` in the turn of `now`; what it did, in words (`command`).
    pub fn apply(&mut self, command: Command, now: Now) -> Result<ControlOutcome> {
        match command {
            Command::Pause => {
                self.set_paused(true);
                Ok(command::paused(true))
            }
            Command::Resume => {
                self.set_paused(false);
                Ok(command::paused(false))
            }
            Command::SetConcurrency(n) => {
                self.set_concurrency(n);
                Ok(command::concurrency(self.tasks.opts.concurrency))
            }
            Command::FillSlots => {
                self.fill_slots(now)?;
                Ok(done("free slots filled"))
            }
            Command::SetLaunchSizes(sizes) => {
                self.sizes.set(sizes);
                Ok(done("launch sizes set"))
            }
            Command::Stop => {
                self.stop(now)?;
                Ok(done("stopping: ending the running agents"))
            }
            Command::KillAll => {
                self.kill_all();
                Ok(done("killing the agents' process groups"))
            }
            Command::Abandon { reason } => {
                self.abandon(&reason, now);
                Ok(done(format!("abandoned: {reason}")))
            }
            Command::Cancel { task } => self.cancel_task(task, now),
            Command::RetryNow { task } => self.retry_now(task, now),
            Command::Run { task } => self.run_task(task, now),
            Command::SetAutoAnswer { task, rule, on } => self.set_auto_answer(task, rule, on, now),
            Command::SetPromptTemplate { task, text } => {
                let running = self.attempts.has_task(task);
                Ok(self.tasks.set_prompt_template(task, &text, running))
            }
            Command::SendMessage { task, text } => self.send_message(task, &text, now),
            Command::ResumeWithMessage { task, text } => self.resume_with_message(task, &text, now),
            Command::Answer { task, reply } => {
                self.send_to_agent(task, reply.into_event(), now, "answer sent")
            }
            Command::AnswerPrompt {
                prompt_id,
                answer,
                by,
            } => {
                let answer = self.answer_prompt(&prompt_id, answer, by, now)?;
                Ok(command::answered(answer))
            }
            Command::TypeKeys { task, bytes } => {
                self.send_to_agent(task, Event::OperatorKeys(bytes), now, "keys sent")
            }
            Command::ResizePane { task, rows, cols } => {
                let said = format!("resized to {rows}x{cols}");
                self.send_to_agent(task, Event::Resize { rows, cols }, now, &said)
            }
        }
    }

    /// Hands `event` to task `task`'s running attempt; nothing to hand it to when none runs.
    fn send_to_agent(
        &mut self,
        task: usize,
        event: Event<'_>,
        now: Now,
        said: &str,
    ) -> Result<ControlOutcome> {
        if self.attempts.with_agent_of_task(task).is_none() {
            return Ok(ControlOutcome::Refused(match self.tasks.label(task) {
                Some((task_id, _)) => format!("{task_id} is not running"),
                None => "no such task".to_string(),
            }));
        }
        self.send_to_task(task, event, now)?;
        Ok(ControlOutcome::Done(said.to_string()))
    }

    /// The task an inbox report is about, while its attempt is live.
    pub fn task_of_report(&self, report: &EngineInbox) -> Option<usize> {
        let key = report.key()?;
        self.attempts.get_live(key).map(|live| live.task)
    }

    /// Cancels a task: a running agent is ended (its process group gets TERM, then KILL) and the
    /// task becomes `cancelled` when it is gone; a pending or retryable task is cancelled now.
    pub fn cancel_task(&mut self, index: usize, now: Now) -> Result<ControlOutcome> {
        let now = self.turn(now);
        // Its agent has not launched yet: the start is withdrawn and the task cancelled.
        self.withdraw_starts(Some(index));
        let Some(live) = self.attempts.with_agent_of_task(index) else {
            return Ok(self.tasks.cancel(index, &mut self.batch, now));
        };
        let task_id = live.task_id.clone();
        if live.attempt.is_ending() {
            return Ok(refused(format!("{task_id} is already ending")));
        }
        self.send(index, Event::Cancel, now)?;
        Ok(done(format!("cancelling {task_id}: ending its agent")))
    }

    /// Runs a task again as soon as there is room, as `herd run --retry` does (`Tasks::retry_now`).
    pub fn retry_now(&mut self, index: usize, now: Now) -> Result<ControlOutcome> {
        let now = self.turn(now);
        let running = self.attempts.has_task(index);
        let message = match (self.tasks).retry_now(index, running, &mut self.batch, now) {
            Ok(message) => message,
            Err(refusal) => return Ok(refusal),
        };
        self.fill(now)?;
        Ok(done(format!("{message}; {}", self.when_it_starts(index))))
    }

    /// Whether task `index`, just queued, started or when it will.
    fn when_it_starts(&self, index: usize) -> &'static str {
        if self.attempts.has_task(index) {
            "started"
        } else if self.batch.queue().is_paused() {
            "the queue is paused"
        } else {
            "it starts when a slot is free"
        }
    }

    /// Sends `text` to task `index`'s agent session: the task becomes `retryable` with the
    /// message, and starts as soon as there is room (`session`).
    pub fn resume_with_message(
        &mut self,
        index: usize,
        text: &str,
        now: Now,
    ) -> Result<ControlOutcome> {
        let now = self.turn(now);
        let running = self.attempts.has_task(index);
        let queued = (self.tasks).queue_message(index, text, running, &mut self.batch, now);
        let (task_id, session) = match queued {
            Ok(queued) => queued,
            Err(refusal) => return Ok(refusal),
        };
        self.fill(now)?;
        let how = match session {
            Some(id) => format!("resuming session {id}"),
            None => "no session to resume: a fresh attempt gets the message".to_string(),
        };
        Ok(done(format!(
            "{task_id}: {how}; {}",
            self.when_it_starts(index)
        )))
    }

    /// Whether herd answers prompt rule `rule` (an index into the task's profile's prompts) by
    /// itself for this task: for the running attempt at once, and in the task's
    /// `permission_policy` so later attempts keep it. Turning it on while that prompt waits for
    /// the operator answers it now.
    pub fn set_auto_answer(
        &mut self,
        index: usize,
        rule: usize,
        auto: bool,
        now: Now,
    ) -> Result<ControlOutcome> {
        let now = self.turn(now);
        let (task_id, name, policy) = match self.tasks.auto_answer_policy(index, rule, auto) {
            Ok(switched) => switched,
            Err(refusal) => return Ok(refusal),
        };
        let mut answered = false;
        if let Some((_, live)) = self.attempts.live_of_task_mut(index) {
            live.attempt.set_auto(rule, auto);
            // Never for a request the guard refused: the switch allows only what it does not.
            answered = auto
                && live.attempt.waiting().is_some_and(|w| {
                    w.rule == rule && !matches!(w.decision, Some(Decision::Refuse { .. }))
                });
        }
        if answered {
            self.send(index, Event::OperatorAnswer { rule }, now)?;
        }
        let file = self.tasks.store.file_mut();
        file.set_field(index, "permission_policy", policy);
        let state = if auto { "on" } else { "off" };
        let extra = match answered {
            true => "; the waiting prompt was answered",
            false => "",
        };
        Ok(done(format!("{task_id}: auto_{name} {state}{extra}")))
    }

    /// Types a (multi-line) message into a running agent and submits it.
    pub fn send_message(&mut self, index: usize, text: &str, now: Now) -> Result<ControlOutcome> {
        let now = self.turn(now);
        let Some((task_id, _)) = self.tasks.label(index) else {
            return Ok(refused("no such task"));
        };
        let Some(live) = self.attempts.with_agent_of_task(index) else {
            return Ok(refused(format!("{task_id} is not running")));
        };
        if text.trim().is_empty() {
            return Ok(refused("empty message not sent"));
        }
        let bytes = control::message_bytes(text, live.attempt.screen().vt().bracketed_paste());
        self.send(index, Event::OperatorMessage(bytes), now)?;
        Ok(done(format!("message sent to {task_id}")))
    }

    /// Answers the prompt `prompt_id` if it still waits (recorded as the API's answer).
    pub fn answer_prompt(
        &mut self,
        prompt_id: &str,
        answer: ApiAnswer,
        by: AnsweredBy,
        now: Now,
    ) -> Result<std::result::Result<String, AnswerRefused>> {
        let now = self.turn(now);
        let (index, event) = match api::answer_event(&self.attempts, prompt_id, answer, by) {
            Ok(answering) => answering,
            Err(refusal) => return Ok(Err(refusal)),
        };
        self.send(index, event, now)?;
        Ok(Ok(format!("{prompt_id} answered: {}", answer.as_str())))
    }

    /// Adds `task` at the end of the tasks file (`Tasks::add`) and starts what can start.
    pub fn add_task(&mut self, task: Map<String, Value>, now: Now) -> Result<Added> {
        let now = self.turn(now);
        let (task_id, merged) = match self.tasks.add(task, self.hosts.set(), &mut self.out) {
            Ok(added) => added,
            Err(not) => return Ok(not),
        };
        self.carry_out(&merged)?;
        self.fill(now)?;
        Ok(Added::Added { task_id })
    }

    /// Changes task `index`'s operator fields (`Tasks::update`) from its next attempt.
    pub fn update_task(
        &mut self,
        index: usize,
        patch: &Map<String, Value>,
    ) -> Result<std::result::Result<ControlOutcome, Vec<String>>> {
        let task_id = match self.tasks.update(index, patch, self.hosts.set()) {
            Ok(task_id) => task_id,
            Err(not) => return Ok(not),
        };
        // A start not launched yet goes with the task as it is now.
        self.withdraw_starts(Some(index));
        let running = self.attempts.has_task(index);
        Ok(Ok(tasks::operator::saved(&task_id, patch, running)))
    }

    /// Brings task `index` into this run and starts it when a slot is free: a run limited by
    /// `--only` takes it in, a disabled task is enabled, a failed or cancelled one is pending
    /// again (`retry_now`).
    pub fn run_task(&mut self, index: usize, now: Now) -> Result<ControlOutcome> {
        let (task_id, notes) = match self.tasks.take_into_run(index) {
            Ok(taken) => taken,
            Err(refusal) => return Ok(refusal),
        };
        if self.attempts.has_task(index) {
            return Ok(done(format!("{task_id} is running")));
        }
        let outcome = self.retry_now(index, now)?;
        match (outcome, notes.is_empty()) {
            (outcome, true) => Ok(outcome),
            (ControlOutcome::Done(m), false) => Ok(done(format!("{m} ({})", notes.join(", ")))),
            (ControlOutcome::Refused(m) | ControlOutcome::Stale(m), false) => {
                Ok(refused(format!("{m} ({})", notes.join(", "))))
            }
        }
    }

    /// The operator stops herd: every running agent is ended and its task goes back to
    /// `retryable`; nothing new starts.
    pub fn stop(&mut self, now: Now) -> Result<()> {
        let now = self.turn(now);
        self.drive(Input::Operator(QueueCommand::Stop), now)?;
        // Not started yet (nothing marked them `running`): they stay as they are.
        self.attempts.drop_preparing();
        // Prepared, waiting for the write that marks them `running`: back to what they were.
        self.withdraw_starts(None);
        let keys: Vec<u64> = self.attempts.live().map(|(key, _)| key).collect();
        for key in keys {
            if let Some(live) = self.attempts.get_live_mut(key) {
                live.stopped_by_operator = true;
                let at = now.saturating_duration_since(live.started);
                let effects = live.attempt.handle(Event::Cancel, at);
                self.apply_effects(key, effects, at)?;
            }
        }
        Ok(())
    }

    /// herd cannot go on (`reason`: a write of the tasks file or of a recording failed): every
    /// agent is killed and its task written back as `retryable`, where the file can still be
    /// written (the write is atomic either way, so the file stays valid).
    pub fn abandon(&mut self, reason: &str, now: Now) {
        let now = self.turn(now);
        // A stop has no effects to carry out: nothing can fail here.
        self.batch.handle(Input::Operator(QueueCommand::Stop), now);
        self.kill_all();
        self.withdraw_starts(None);
        let in_flight: Vec<(usize, u32)> = (self.attempts.live_then_ending())
            .map(|l| (l.task, l.number))
            .collect();
        for (index, attempt) in in_flight {
            // Like a crash (`Tasks::recover_interrupted`).
            let why = format!("attempt {attempt} was interrupted: herd could not go on ({reason})");
            self.tasks.interrupt(index, why, self.clock.wall);
        }
        if let Err(error) = self.write_last(LAST_WRITE_WAIT) {
            tracing::error!("cannot write the tasks in flight back as retryable: {error:#}");
        }
    }

    /// Kills every agent's process group at once (a second Ctrl-C, or leaving for good), and
    /// every process the attempts started, wherever it went.
    pub fn kill_all(&mut self) {
        interrupted::kill_every_agent(&self.attempts);
    }

    /// The sizes (rows, cols) the next agents start at, by how many run when each starts
    /// (`Command::SetLaunchSizes` does the same). Running agents are not touched.
    pub fn set_launch_sizes(&mut self, sizes: Vec<(u16, u16)>) {
        self.sizes.set(sizes);
    }

    /// `herd run --notify CMD`: the argv that gets every event, whatever the file and profiles
    /// say.
    pub fn set_notify_command(&mut self, argv: Option<Vec<String>>) {
        self.notify.set_command(argv);
    }

    /// The web view runs: the `notify` events of waiting prompts carry its one-time links.
    pub fn set_action_links(&mut self, links: crate::core::operator::action_link::ActionLinks) {
        self.notify.set_links(Some(links));
    }

    /// The events since last asked. Every event leaves the engine here, so this is also where
    /// the `notify` command hears of them (and of the prompts waiting now).
    pub fn drain_events(&mut self) -> Vec<EngineEvent> {
        let events = std::mem::take(&mut self.out.events);
        let ended = self.is_done().then(|| self.exit_code());
        let (attempts, tasks) = (&self.attempts, &self.tasks);
        (self.notify).turn(&events, attempts, tasks, ended, self.clock.wall);
        events
    }

    /// The store itself, for tests that look inside; frontends read through `view()`.
    #[cfg(test)]
    pub(crate) fn store(&self) -> &TaskStore {
        &self.tasks.store
    }

    /// Every attempt running or ending. Tests only: frontends read `view().live_attempts()`.
    #[cfg(test)]
    pub(crate) fn live(&self) -> impl Iterator<Item = &LiveAttempt> {
        self.attempts.live_then_ending()
    }

    /// Task `index`'s attempt, for tests; frontends read `view().live_attempt(index)`.
    #[cfg(test)]
    pub(crate) fn live_for_task(&self, index: usize) -> Option<&LiveAttempt> {
        self.attempts.with_agent_of_task(index)
    }

    pub fn set_paused(&mut self, paused: bool) {
        let command = if paused {
            QueueCommand::Pause
        } else {
            QueueCommand::Resume
        };
        // Pausing and resuming have no effects to carry out; the next turn fills the slots.
        self.batch.handle(Input::Operator(command), self.clock.at);
    }

    pub fn set_concurrency(&mut self, n: usize) {
        self.tasks.opts.concurrency = n.clamp(1, Self::MAX_CONCURRENCY);
    }

    /// Hands the changes made so far to the writer (`Commits::commit`); what waited for a
    /// text already on disk goes.
    fn commit(&mut self, now: Instant) -> Result<()> {
        match (self.commits).commit(&mut self.batch, &mut self.tasks, now)? {
            Some(durable) => self.drive(durable, now),
            None => Ok(()),
        }
    }

    /// Takes in what the writer finished: the operator's version it found is merged, the
    /// starts whose generation is on disk launch, and the changes made meanwhile are handed
    /// over. A failed write stops the run.
    fn take_writes(&mut self, now: Instant) -> Result<()> {
        let status = self.commits.status(&mut self.tasks.store)?;
        let merged = self.take_operator_version()?;
        let store = &mut self.tasks.store;
        if let Some(durable) = commit::Commits::take_status(&status, &mut self.batch, store, now) {
            self.drive(durable, now)?;
        }
        if merged || !self.batch.generations().in_flight() {
            self.commit(now)?;
        }
        Ok(())
    }

    /// Waits until every change made so far is on disk (at most `timeout` per write), then
    /// launches what waited for it. For the ends of a run, where the loop has nothing else to
    /// do; while it runs, `take_writes` does this without waiting.
    pub fn settle_writes(&mut self, now: Now, timeout: Duration) -> Result<()> {
        let now = self.turn(now);
        self.take_writes(now)?;
        self.write_last(timeout)?;
        let generation = self.batch.generations().durable();
        self.drive(Input::WriteDurable { generation }, now)
    }

    /// Writes what is not on disk yet and waits for it (at most `timeout` per write), whatever
    /// happened to the writes before: herd giving up writes its tasks back this way.
    fn write_last(&mut self, timeout: Duration) -> Result<()> {
        if self.batch.generations().in_flight() {
            // A newer snapshot follows when this one failed; its own result is what counts.
            let _ = self.wait_for(self.batch.generations().handed(), timeout);
        }
        // Each round merges the operator's version that held the last write; an operator who
        // keeps writing faster than herd can merge is given up on after a few.
        for _ in 0..commit::LAST_WRITE_ROUNDS {
            self.take_operator_version()?;
            if self.tasks.file_invalid.is_some() {
                return self.tasks.write_beside(self.clock.wall);
            }
            let Some(snapshot) = self.tasks.store.snapshot().wrap_err(commit::CANNOT_WRITE)? else {
                return Ok(());
            };
            let at = self.clock.at;
            let generation = self.commits.hand_over(&mut self.batch, snapshot, at);
            match self.wait_for(generation, timeout) {
                Err(error) if commit::is_held(&error) => {
                    self.batch.handle(Input::WriteHeld { generation }, at);
                    self.tasks.store.mark_unsaved();
                }
                other => return other,
            }
        }
        self.tasks.write_beside(self.clock.wall)
    }

    /// Waits for `generation` to reach the disk; what waited for it launches.
    fn wait_for(&mut self, generation: u64, timeout: Duration) -> Result<()> {
        let durable = (self.commits).wait_for(generation, timeout, &mut self.tasks.store)?;
        self.drive(durable, self.clock.at)
    }

    /// (handed, durable) generations, for tests.
    #[cfg(test)]
    pub(super) fn generations(&self) -> (u64, u64) {
        let generations = self.batch.generations();
        (generations.handed(), generations.durable())
    }

    /// Merges the operator's version the writer found, if there is one, and carries out what
    /// it means for the queue; true when one was merged (its text is to be written).
    fn take_operator_version(&mut self) -> Result<bool> {
        let (commits, out, at) = (&self.commits, &mut self.out, self.clock.at);
        let Some(merged) = self.tasks.take_operator_version(commits, out, at) else {
            return Ok(false);
        };
        self.carry_out(&merged)?;
        Ok(true)
    }

    /// What a merged version means for the queue (see `tasks::edits`).
    fn carry_out(&mut self, merged: &Merged) -> Result<()> {
        for &index in &merged.removed {
            let task_id = self.tasks.store.file().tasks()[index].task_id.clone();
            if self.attempts.has_task(index) {
                tracing::warn!(
                    task_id,
                    "removed from the tasks file while it ran: its agent is ended"
                );
                self.cancel_task(index, self.clock)?;
            } else {
                tracing::info!(task_id, "removed from the tasks file");
                let cleared = Input::RetryCleared { task: index };
                self.batch.handle(cleared, self.clock.at);
            }
        }
        // A start still waiting for the write that marks it running has launched nothing: the
        // attempt that goes reads the task as the operator left it, or does not go.
        for &index in (merged.disabled.iter())
            .chain(&merged.prompt_changed)
            .chain(&merged.other_changed)
        {
            self.withdraw_starts(Some(index));
            self.attempts.withdraw_preparation(index);
        }
        let path = self.tasks.store.path().to_path_buf();
        for problem in &merged.problems {
            let index =
                (problem.task_id.as_deref()).and_then(|id| self.tasks.store.file().task_index(id));
            let said = format_problem(&path, problem);
            match index {
                Some(index) if self.tasks.may_fail_config(index, &self.attempts) => {
                    (self.tasks).fail_config(index, said, &mut self.out, self.clock.wall)
                }
                _ => tracing::warn!("tasks file: {said}"),
            }
        }
        // New tasks are checked like the tasks at the start (agent, inputs, host).
        for &index in &merged.added {
            let task = &self.tasks.store.file().tasks()[index];
            if self.tasks.in_scope(index)
                && task.status.is_runnable()
                && let Err(evidence) =
                    self.tasks
                        .plan_for(index, task.attempts + 1, self.hosts.set())
            {
                let (evidence, wall) = (evidence.to_string(), self.clock.wall);
                (self.tasks).fail_config(index, evidence, &mut self.out, wall);
            }
        }
        Ok(())
    }

    /// Takes the time of a turn from the frontend; its instant, for deadlines.
    fn turn(&mut self, now: Now) -> Instant {
        self.clock = now;
        now.at
    }
}

impl BatchView for Engine {
    fn file(&self) -> &TaskFile {
        self.tasks.store.file()
    }

    fn tasks_path(&self) -> &Path {
        self.tasks.store.path()
    }

    fn profiles(&self) -> &ProfileSet {
        &self.tasks.profiles
    }

    fn in_scope(&self, index: usize) -> bool {
        self.tasks.in_scope(index)
    }

    fn reported_tasks(&self) -> Vec<usize> {
        self.tasks.reported()
    }

    fn live_attempt(&self, index: usize) -> Option<LiveView<'_>> {
        (self.attempts.with_agent_of_task(index)).map(|live| LiveView { live })
    }

    fn live_attempts(&self) -> Vec<LiveView<'_>> {
        (self.attempts.live_then_ending())
            .map(|live| LiveView { live })
            .collect()
    }

    fn retry_at(&self, index: usize) -> Option<Instant> {
        self.batch.queue().retry_at(index)
    }

    fn last_attempt_duration(&self, index: usize) -> Option<Duration> {
        self.tasks.last_durations.get(&index).copied()
    }

    fn resumable_session(&self, index: usize) -> Option<String> {
        self.tasks.resumable_session(index)
    }

    fn waiting_prompt(&self, index: usize) -> Option<PromptInfo> {
        PromptInfo::of(self.attempts.with_agent_of_task(index)?)
    }

    fn waiting_prompts(&self) -> Vec<PromptInfo> {
        let mut tasks: Vec<usize> = self.attempts.live().map(|(_, l)| l.task).collect();
        tasks.sort_unstable();
        (tasks.into_iter())
            .filter_map(|t| self.waiting_prompt(t))
            .collect()
    }

    fn screen_text(&self, index: usize) -> Option<(u16, u16, String)> {
        Some(self.live_attempt(index)?.screen_text())
    }

    fn is_paused(&self) -> bool {
        self.batch.queue().is_paused()
    }

    fn concurrency(&self) -> usize {
        self.tasks.opts.concurrency
    }

    fn is_stopping(&self) -> bool {
        self.batch.queue().is_stopping()
    }

    fn is_done(&self) -> bool {
        self.tasks.gave_up_on_file(&self.attempts, self.clock.at)
            || self.attempts.is_empty()
                && (self.batch.queue().is_stopping()
                    || !self.tasks.any_in_scope_is(TaskStatus::is_runnable))
    }

    fn exit_code(&self) -> i32 {
        if self.batch.queue().is_stopping() {
            return 130;
        }
        let all_done = !self.tasks.any_in_scope_is(|s| s != TaskStatus::Completed);
        if all_done { 0 } else { 1 }
    }

    fn any_needs_input(&self) -> bool {
        self.tasks.any_in_scope_is(|s| s == TaskStatus::NeedsInput)
    }

    fn tasks_file_problem(&self) -> Option<&str> {
        self.tasks.file_problem()
    }

    fn hosts_out_of_rotation(&self, now: Instant) -> Vec<(String, String, Duration)> {
        hosts::out_of_rotation(self.batch.queue(), now)
    }

    fn runs_dir(&self) -> &Path {
        &self.tasks.opts.runs_dir
    }
}
