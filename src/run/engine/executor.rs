//! The engine as the batch's executor: an input goes to `core::batch::Batch::handle`, and the
//! effects it returns are carried out here, each one's result (a sweep done here, a host
//! checked, a gather done at once, a conclusion) fed back as the next input. The decisions
//! are the batch's; this only does what it is told.

use std::time::{Duration, Instant};

use color_eyre::eyre::Result;

use super::Engine;
use super::attempts::{Effects, Planned, RemoteGitBefore, Starting};
use super::host_trouble::HostTrouble;
use super::inbox::EngineInbox;
use super::launch_agent::Launch;
use super::prepare::NotPrepared;
use super::processes::SPAWN_RETRY_AFTER;
use crate::core::attempt::{Effect as AttemptEffect, Event, StopSignal};
use crate::core::batch::{Candidate, Effect, EndInput, EndStep, Fill, Input, Room, Slots};
use crate::core::classify::ExitStatus;
use crate::run::attempt_files::{FilesReport, Preparation};
use crate::run::clock::Now;

/// Input `input` about attempt `key`'s end.
pub(super) fn end_input(key: u64, input: EndInput) -> Input {
    Input::Attempt { key, input }
}

impl Engine {
    /// Hands `input` to the batch and carries out what it says, each effect's follow-up before
    /// the next effect (an attempt concluded frees its slot before the slots are filled).
    pub(super) fn drive(&mut self, input: Input, now: Instant) -> Result<()> {
        for effect in self.batch.handle(input, now) {
            if let Some(next) = self.carry_out_effect(effect, now)? {
                self.drive(next, now)?;
            }
        }
        Ok(())
    }

    fn carry_out_effect(&mut self, effect: Effect, now: Instant) -> Result<Option<Input>> {
        match effect {
            Effect::StartAgent { key } => {
                let Some(starting) = self.attempts.take_awaiting(key) else {
                    return Ok(None);
                };
                self.launch(starting, now).map(|()| None)
            }
            Effect::End { key, step } => {
                let next = self.end_step(key, step, now)?;
                Ok(next.map(|input| end_input(key, input)))
            }
            Effect::FillSlots => self.fill(now).map(|()| None),
            Effect::CommitFile => self.commit(now).map(|()| None),
        }
    }

    /// One step of attempt `key`'s end; what it found at once, if anything.
    fn end_step(&mut self, key: u64, step: EndStep, now: Instant) -> Result<Option<EndInput>> {
        match step {
            EndStep::Sweep => Ok(self.sweep(key).then_some(EndInput::Swept)),
            EndStep::CheckHost { lost } => {
                let by_host = self.conclude_on_host_trouble(key, now, None)?
                    || (lost.is_some() && self.conclude_on_host_trouble(key, now, lost)?);
                Ok(Some(EndInput::HostChecked { by_host }))
            }
            EndStep::ReadLastFiles => {
                let Some(live) = self.attempts.get_live_mut(key) else {
                    return Ok(None);
                };
                // It concludes once the worker's last read is in, whatever it found.
                if live.files.as_ref().is_some_and(|files| files.ask_last()) {
                    return Ok(None);
                }
                live.files = None;
                Ok(Some(EndInput::LastFilesUnavailable))
            }
            EndStep::Gather => {
                let (exit, reports) = (self.exit_of(key), self.out.inbox.clone());
                Ok((self.attempts).gather_end(
                    key,
                    exit,
                    &self.tasks,
                    &mut self.snapshots,
                    reports,
                    now,
                ))
            }
            EndStep::Conclude => self.conclude_ended(key, now),
        }
    }

    /// Launches a prepared attempt's agent (its `running` state is on disk): the batch is told
    /// it runs; without room for it, its task waits; one that could not start concludes.
    fn launch(&mut self, starting: Starting, now: Instant) -> Result<()> {
        let (key, at) = (starting.key, (now, self.clock.wall));
        match (self.attempts).launch(
            starting,
            self.os.as_ref(),
            &mut self.tasks,
            &mut self.out,
            at,
        )? {
            Launch::Live { watches_files } => {
                self.drive(Input::AgentStarted { key, watches_files }, now)
            }
            Launch::NoRoom {
                index,
                before,
                reason,
            } => {
                let running = self.attempts.with_agent();
                let told = (self.tasks).defer_spawn((index, &before), reason, running);
                self.out.events.push(told);
                let at = now + SPAWN_RETRY_AFTER;
                self.batch.handle(Input::RetryAt { task: index, at }, now);
                Ok(())
            }
            Launch::Unspawned {
                starting,
                recorder,
                error,
            } => {
                let (tasks, batch) = (&mut self.tasks, &mut self.batch);
                starting.conclude_unspawned((recorder, &error), tasks, batch, &mut self.out, at)
            }
        }
    }

    /// How attempt `key`'s agent exited, as its end recorded it.
    fn exit_of(&self, key: u64) -> ExitStatus {
        let end = self.batch.end(key);
        end.and_then(|end| end.exit()).cloned().unwrap_or_default()
    }

    /// Concludes ended attempt `key` with what was gathered for it; `Concluded` follows, with
    /// the write that carries it.
    fn conclude_ended(&mut self, key: u64, now: Instant) -> Result<Option<EndInput>> {
        let Some(mut live) = self.attempts.take_ending(key) else {
            return Ok(None);
        };
        let gathered = live.gathered.take().map(|g| *g).unwrap_or_default();
        let (end, at) = ((gathered, self.exit_of(key)), (now, self.clock.wall));
        live.conclude(end, &mut self.tasks, &mut self.batch, &mut self.out, at)?;
        let generation = self.batch.generations().next();
        Ok(Some(EndInput::Concluded { generation }))
    }

    /// Whatever the agent left running in its group goes with it, and whatever left the group
    /// is found by its cookie, off the event loop; `true` when that was done here at once.
    fn sweep(&mut self, key: u64) -> bool {
        let Some(live) = self.attempts.get_live_mut(key) else {
            return false;
        };
        live.process.signal(StopSignal::Kill);
        super::processes::sweep_in_background(key, live, self.out.inbox.clone())
    }

    /// Whether attempt `key` ended through its host rather than its agent (`lost`: its host
    /// could not be read at its end); if so the task goes back to the queue (not counted) and
    /// the host out of rotation, and `true` is returned.
    fn conclude_on_host_trouble(
        &mut self,
        key: u64,
        now: Instant,
        lost: Option<String>,
    ) -> Result<bool> {
        let exit_code = self.exit_of(key).code;
        let Some((mut live, trouble)) = self.attempts.take_on_host_trouble(key, exit_code, lost)
        else {
            return Ok(false);
        };
        if trouble.lost {
            // What it left on the host may still run (an agent that ignores SIGHUP) and the
            // sweep could not reach it: swept again once the host is back.
            self.hosts.lost(trouble.host.clone(), live.cookie.clone());
        }
        self.batch.handle(trouble.host_out(), now);
        live.set_aside(&trouble, now, self.clock.wall)?;
        let attempt = (live.task, live.number);
        (self.tasks).back_after_host_trouble(attempt, &trouble, self.clock.wall);
        self.out.events.push(trouble.event(&live.task_id));
        Ok(true)
    }

    /// The host of a planned attempt could not be reached to prepare it: the attempt did not
    /// happen (the task keeps its status and attempts) and the host goes out of rotation.
    pub(super) fn unreachable_at_start(
        &mut self,
        planned: Planned,
        reason: String,
        now: Instant,
    ) -> Result<()> {
        let Some(host) = planned.host else {
            return Ok(());
        };
        let trouble = HostTrouble::unreachable(host, reason);
        self.batch.handle(trouble.host_out(), now);
        (self.tasks).unreachable_at_start(planned.index, &trouble, self.clock.wall);
        self.out.events.push(trouble.event(&planned.task.task_id));
        Ok(())
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
            self.tasks.revert_start(starting.index, &starting.task);
        }
    }

    /// Starts tasks while there is room.
    pub fn fill_slots(&mut self, now: Now) -> Result<()> {
        let now = self.turn(now);
        self.fill(now)
    }

    /// `fill_slots` within a turn: the starts the batch plans (`Batch::plan_starts`) are carried
    /// out, each task marked `running` in the document.
    pub(super) fn fill(&mut self, now: Instant) -> Result<()> {
        // Group commit: every task started in this turn is marked `running` in the same
        // generation, and their agents launch once it is on disk (`commit`).
        let mut starting = Vec::new();
        // A start whose configuration fails holds no slot: the tasks after it are asked again.
        while self.start_planned(&mut starting, now) {}
        if starting.is_empty() {
            return Ok(());
        }
        self.record_starts(starting, now)?;
        // Handed over now: a frontend may wait for reports right after this call.
        self.commit(now)
    }

    /// Carries out the starts the batch plans beside `starting`: each one's attempt is planned,
    /// then prepared on a worker or begun at once (into `starting`). Whether a task failed its
    /// configuration instead (its slot is free again).
    fn start_planned(&mut self, starting: &mut Vec<Starting>, now: Instant) -> bool {
        let fill = self.plan_starts(starting, now);
        let wall = self.clock.wall;
        for index in fill.unknown_host {
            let name = self.tasks.store.file().tasks()[index].host.clone();
            let problem = self
                .hosts
                .set()
                .unknown_target_message(&name.unwrap_or_default());
            (self.tasks).fail_config(index, problem, &mut self.out, wall);
        }
        let mut failed = false;
        for start in fill.starts {
            let index = start.task;
            let planned = match (self.attempts).plan(start, &self.tasks, self.hosts.set()) {
                Ok(planned) => planned,
                Err(problem) => {
                    (self.tasks).fail_config(index, problem, &mut self.out, wall);
                    // Asked again only once it left the queue: every round ends one task.
                    failed |= !self.tasks.store.file().tasks()[index].status.is_runnable();
                    continue;
                }
            };
            let prepared = (self.out).outbox_of(planned.key, EngineInbox::from_preparation);
            let (runs_dir, tasks_file) = (&self.tasks.opts.runs_dir, self.tasks.store.path());
            let snapshot = super::prepare::snapshot_place(&planned, runs_dir, tasks_file);
            let file_tag = &self.tasks.file_tag;
            if let Some(planned) = (self.attempts).starts_now(planned, file_tag, snapshot, prepared)
            {
                // Its slot among the agents running once it started: the frontend's size for it.
                let size = self.sizes.at(self.attempts.len() + starting.len());
                starting.push(self.begin(planned, None, size));
            }
        }
        failed
    }

    /// The batch's starts for this turn, among the runnable tasks (only those, not `scope()`:
    /// most of a large file is done, and this runs every turn); an attempt being prepared,
    /// waiting for its start's write, being concluded or among `starting` holds its slot.
    fn plan_starts(&mut self, starting: &[Starting], now: Instant) -> Fill {
        let (tasks, attempts) = (&self.tasks, &self.attempts);
        let file = tasks.store.file();
        let indices = std::iter::successors(file.next_runnable(0), |i| file.next_runnable(i + 1));
        let runnable = indices.map(|index| {
            let task = &file.tasks()[index];
            Candidate {
                index,
                agent: &task.agent,
                profile: tasks.profiles.get(&task.agent),
                in_scope: tasks.in_scope(index),
                has_attempt: attempts.has_task(index),
                host: task.host.as_deref(),
            }
        });
        let room = Room {
            slots: Slots {
                held: attempts.len() + starting.len(),
                concurrency: tasks.opts.concurrency,
            },
            hosts: self.hosts.set(),
            load: attempts.host_load(starting),
        };
        self.batch.plan_starts(runnable, room, now)
    }

    /// A planned attempt about to launch, with its task marked `running` in the document (not
    /// yet written: it waits in `awaiting` for the write). `git_before`: `git status` of a
    /// remote attempt's folder as it starts.
    fn begin(
        &mut self,
        planned: Planned,
        git_before: RemoteGitBefore,
        size: (u16, u16),
    ) -> Starting {
        let (index, number) = (planned.index, planned.number);
        self.tasks
            .mark_running(index, number, planned.host.as_ref());
        planned.into_starting((git_before, size), self.batch.generations().next())
    }

    /// Starts whose tasks are `running` in the document wait for the write that records them
    /// (`core::batch::launch` says when their agents launch).
    fn record_starts(&mut self, starts: Vec<Starting>, now: Instant) -> Result<()> {
        let recorded: Vec<(u64, u64)> = starts.iter().map(|s| (s.key, s.generation)).collect();
        for starting in starts {
            self.attempts.await_write(starting);
        }
        for (key, generation) in recorded {
            self.drive(Input::StartRecorded { key, generation }, now)?;
        }
        Ok(())
    }

    /// What attempt `key` needed was made (or not): it starts, its task fails its
    /// configuration, or its host goes out of rotation and the task waits.
    pub(super) fn on_prepared(
        &mut self,
        key: u64,
        mut preparation: Preparation,
        now: Instant,
    ) -> Result<()> {
        let Some(mut planned) = self.attempts.take_preparing(key) else {
            return Ok(());
        };
        // Stopped, or the operator cancelled the task meanwhile: it does not start.
        let task = &self.tasks.store.file().tasks()[planned.index];
        if self.batch.queue().is_stopping() || !task.status.is_runnable() {
            return Ok(());
        }
        // Disabled or changed meanwhile: the task as it is now goes, or stays, from the queue.
        if planned.withdrawn {
            return self.fill(now);
        }
        if let Preparation::Local { snapshot, .. } = &mut preparation
            && let Some((place, start)) = snapshot.take()
        {
            self.snapshots.started(key, place, start);
        }
        let git_before = match planned.take_preparation(preparation, &self.tasks) {
            Ok(git_before) => git_before,
            Err(NotPrepared::Config(problem)) => {
                let wall = self.clock.wall;
                (self.tasks).fail_config(planned.index, problem, &mut self.out, wall);
                return Ok(());
            }
            Err(NotPrepared::Unreachable(reason)) => {
                return self.unreachable_at_start(planned, reason, now);
            }
        };
        let size = self.sizes.at(self.attempts.past_preparation());
        let starting = self.begin(planned, git_before, size);
        // Launched once the write that marks it `running` is on disk.
        self.record_starts(vec![starting], now)?;
        self.commit(now)
    }

    /// Handles one report of the engine's inbox (a terminal's, a worker's, the writer's).
    pub fn on_report(&mut self, report: EngineInbox, now: Now) -> Result<()> {
        let now = self.turn(now);
        match report {
            EngineInbox::Output { key, bytes } => {
                let effects = self.attempts.output(key, &bytes, now)?;
                self.apply_some(key, effects)?;
            }
            EngineInbox::Exited { key, status } => {
                self.drive(end_input(key, EndInput::Exited(status)), now)?;
            }
            EngineInbox::Swept { key, ended } => {
                self.attempts.swept(key, ended);
                self.drive(end_input(key, EndInput::Swept), now)?;
            }
            EngineInbox::Gathered { key, gathered } => {
                if let Some(live) = self.attempts.get_ending_mut(key) {
                    live.gathered = Some(gathered);
                }
                self.drive(end_input(key, EndInput::Gathered), now)?;
            }
            EngineInbox::Files { key, report } => self.on_files(key, report, now)?,
            EngineInbox::Prepared { key, preparation } => {
                self.on_prepared(key, *preparation, now)?;
            }
            EngineInbox::Closed { key } => {
                self.drive(end_input(key, EndInput::TerminalClosed), now)?;
            }
            EngineInbox::TasksFileWritten { .. } => self.take_writes(now)?,
            EngineInbox::Hook { key, input, reply } => {
                let effects = self.attempts.hook(key, &input, &reply, now);
                self.apply_some(key, effects)?;
            }
            EngineInbox::AppServer { key, report } => {
                let effects = self.attempts.app_server(key, report, now);
                self.apply_some(key, effects)?;
            }
        }
        Ok(())
    }

    /// Carries out live attempt `key`'s `effects` (`LiveAttempt::apply`).
    pub(super) fn apply_effects(
        &mut self,
        key: u64,
        effects: Vec<AttemptEffect>,
        at: Duration,
    ) -> Result<()> {
        let exited = self.batch.end(key).is_some_and(|end| end.exit().is_some());
        let Some(live) = self.attempts.get_live_mut(key) else {
            return Ok(());
        };
        let record_input = self.tasks.opts.record_input;
        live.apply((effects, at), (record_input, exited), &mut self.out)
    }

    /// `apply_effects` of what a hand-over to attempt `key` returned, if anything.
    fn apply_some(&mut self, key: u64, effects: Option<Effects>) -> Result<()> {
        match effects {
            Some((effects, at)) => self.apply_effects(key, effects, at),
            None => Ok(()),
        }
    }

    /// Deadlines that passed: attempt timers, drains, retries; then this turn's changes go to
    /// the tasks file's writer (`commit`).
    pub fn on_tick(&mut self, now: Now) -> Result<()> {
        let now = self.turn(now);
        // Writes the writer finished whose wakeup is still queued behind other reports.
        self.take_writes(now)?;
        for key in self.attempts.due(now)? {
            let effects = self.attempts.tick(key, now);
            self.apply_some(key, effects)?;
        }
        if self.hosts.any_unswept() {
            self.hosts.sweep_back(self.batch.queue(), now);
        }
        // The drains that are over, then the slots and the write (`core::batch`).
        self.drive(Input::Tick, now)
    }

    /// What the worker read of attempt `key`'s signal file and agent log (`attempt_files`).
    fn on_files(&mut self, key: u64, report: FilesReport, now: Instant) -> Result<()> {
        let (signal, log, trouble) = match report {
            FilesReport::Signal(text) => {
                let effects = self.attempts.signal(key, text, false, now);
                return self.apply_some(key, effects);
            }
            FilesReport::AgentLog(bytes) => {
                let effects = self.attempts.agent_log(key, &bytes, now);
                return self.apply_some(key, effects);
            }
            FilesReport::Last {
                signal,
                log,
                trouble,
            } => (signal, log, trouble),
        };
        let Some(live) = self.attempts.get_live_mut(key) else {
            return Ok(());
        };
        live.files = None;
        let mut lost = None;
        match trouble {
            // Without its signal file the attempt has no verdict: its host's trouble.
            Some(why) if live.plan.signal_file.is_some() => lost = Some(why.to_string()),
            _ => {
                if let Some(text) = signal {
                    let effects = self.attempts.signal(key, text, true, now);
                    self.apply_some(key, effects)?;
                }
                // The last lines of the agent's log (a Codex refusal the model talked past).
                if !log.is_empty() {
                    let effects = self.attempts.agent_log(key, &log, now);
                    self.apply_some(key, effects)?;
                }
            }
        }
        self.drive(end_input(key, EndInput::LastFilesRead { lost }), now)
    }

    /// When `on_tick` should run next, seen at `now`.
    pub fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        // Drains, retries, holds, rests, hosts' returns.
        (self.attempts.next_deadline().into_iter())
            .chain(self.batch.next_deadline(now))
            .chain(self.tasks.gives_up_on_file_at())
            .min()
    }

    /// Sends an event to a live attempt (operator answers, keys, cancel, resize).
    pub fn send_to_task(&mut self, index: usize, event: Event<'_>, now: Now) -> Result<()> {
        let now = self.turn(now);
        self.send(index, event, now)
    }

    /// `send_to_task` within a turn.
    pub(super) fn send(&mut self, index: usize, event: Event<'_>, now: Instant) -> Result<()> {
        match self.attempts.send(index, event, now)? {
            Some((key, (effects, at))) => self.apply_effects(key, effects, at),
            None => Ok(()),
        }
    }
}
