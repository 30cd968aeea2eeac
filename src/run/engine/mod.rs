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
//! This file holds the engine's state: its parts, each with its own impl in its own file(s):
//! `attempts` (every attempt holding a slot, at its stage: preparing, awaiting its write,
//! live, ending), `hosts` (the run's hosts and what is left to sweep on them), `notify` (the
//! operator's `notify` command), `sizes` (the size each next agent starts at), `commit` (the
//! tasks file's writer); `options` and `event` hold what it is started with and what it
//! tells. `view` is what the frontends read, `queries` the reads behind it.
//! The steps live beside it: `executor` (hands inputs to `core::batch` and carries out its
//! effects), `prepare` (a task's plan, and its worktree, signal file or host
//! folder made on a worker before it starts), `start` (from plan to a start awaiting its
//! write), `launch_agent` (from that start to spawn), `files` (the
//! attempt's signal file and agent log read on a worker, here or on its host), `reports` (PTY
//! output, timers, what the workers read fed to the attempts), `conclude` (carries out
//! `core::outcome::decide` at an attempt's end), `gather` (the end's git, transcript and
//! worktree work, on a worker), `agent_report` (what the agent said besides its verdict),
//! `interrupted` (recovery, stop, abandon), `processes` (process hygiene), `host_trouble` (a
//! host lost or unreachable at an attempt's start or end), `command` (what a frontend asks:
//! one typed `Command`, one `apply`), `control` and `session` (the operator actions it
//! carries out), `inbox` (the reports the engine receives, and the outboxes it hands its
//! workers, `Engine::outbox_of`). Workers start through `run::jobs`.
//!
//! The tasks file is written by `commit` on a writer thread, pipelined: an agent is launched
//! once the write that marks its task `running` is on disk (`commit` says why that is enough).

use std::time::Instant;

use color_eyre::eyre::Result;
use tokio::sync::mpsc;

use super::clock::Now;
use super::jobs::Outbox;
use super::store::TaskStore;
use crate::core::batch::Batch;
use crate::core::profile::ProfileSet;
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
pub mod edits;
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
mod outgoing;
mod prepare;
mod processes;
mod queries;
mod reports;
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
        mut opts: EngineOptions,
        reports: mpsc::Sender<EngineInbox>,
        now: Now,
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
            snapshots: snapshots::Snapshots::default(),
        };
        engine.end_survivors()?;
        engine.recover_from_runs();
        engine.recover_interrupted()?;
        engine.restore_retry_times(now);
        engine.fail_config_problems()?;
        // What was found at the start is on disk before anything runs.
        engine.write_last(LAST_WRITE_WAIT)?;
        Ok(engine)
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

    /// Tells the `notify` command what this turn's events and waits call for.
    fn notify_turn(&mut self, events: &[EngineEvent]) {
        let waits = notify::wait_facts(&self.attempts);
        let ends = notify::end_facts(&self.tasks.store, events);
        let done = self.is_done();
        let scope = if done { self.tasks.scope() } else { Vec::new() };
        let batch_end =
            done.then(|| notify::batch_end(&self.tasks.store, &scope, self.exit_code()));
        let told = self.notify.observe(notify::Turn {
            waits: &waits,
            ends: &ends,
            batch_end,
        });
        if told.is_empty() {
            return;
        }
        let scope = if done { scope } else { self.tasks.scope() };
        let from = notify::NotifyContext {
            store: &self.tasks.store,
            profiles: &self.tasks.profiles,
            scope: &scope,
            wall: self.clock.wall,
        };
        self.notify.tell(&told, &from);
    }

    /// Takes the time of a turn from the frontend; its instant, for deadlines.
    fn turn(&mut self, now: Now) -> Instant {
        self.clock = now;
        now.at
    }
}
