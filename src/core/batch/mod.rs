//! The batch as a state machine: `handle(input, now) -> effects`, like `core::attempt`.
//!
//! Owns the batch's decisions: which tasks start in a turn, on which host, with which account
//! (`fill`, asking `queue`: retry times, quota holds, account rotation, host choice,
//! concurrency, pause, stop), what an attempt's end means for the queue (`decide_end`), when a
//! prepared start's agent may launch (`generations`: once the write that marks its task
//! `running` is durable, the one count of which write is) and the stages of each attempt's end
//! (`end`: exit, sweep, drain, host check, last file read, gather, conclusion, durable write).
//! The queue's state changes only here. Inputs are ticks, worker results, write-durable notices and
//! operator commands; effects are values the shell (`run::engine`) carries out: start an agent,
//! run a job on a worker, conclude an attempt, fill the slots, commit the file. No I/O here, no
//! clock: `now` is passed in.
//!
//! What an attempt does while its agent runs (its screen, prompts, keys, verdict) stays with
//! `core::attempt`; the shell feeds it and writes its keys.

pub mod accounts;
pub mod outcome;
pub mod recovered;
pub mod rerun;
pub mod retry;

pub mod end;
pub mod fill;
pub mod generations;
pub mod queue;

#[cfg(test)]
mod end_tests;
#[cfg(test)]
mod fill_tests;
#[cfg(test)]
mod launch_tests;
#[cfg(test)]
mod queue_tests;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

pub use end::{AfterHost, AttemptEnd, DRAIN_AFTER_EXIT, EndInput, EndStage, EndStep};
pub use fill::{Fill, Room, Start};
pub use generations::Generations;
pub use queue::{Candidate, Consider, Queue, Slots};

use crate::core::profile::Profile;
use crate::core::task::TaskSpec;
use outcome::{Decision, OutcomeInput, RetryRules};

/// What comes in.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Time passed: deadlines (drains), then the slots are filled and the turn's changes go to
    /// the file.
    Tick,
    /// A prepared start marked its task `running` in write generation `generation`.
    StartRecorded { key: u64, generation: u64 },
    /// A start was withdrawn before its agent launched.
    StartWithdrawn { key: u64 },
    /// Attempt `key`'s agent was launched; `watches_files`: a worker reads its signal file or
    /// agent log.
    AgentStarted { key: u64, watches_files: bool },
    /// A worker's (or the PTY's) report about attempt `key`'s end.
    Attempt { key: u64, input: EndInput },
    /// The next write generation of the tasks file was handed to its writer.
    WriteHanded,
    /// Write generation `generation` of the tasks file is on disk.
    WriteDurable { generation: u64 },
    /// The writer held write generation `generation`: the file was not herd's version.
    WriteHeld { generation: u64 },
    /// The operator or the frontend steers the queue.
    Operator(QueueCommand),
    /// Task `task` may start as soon as there is room (its retry wait is dropped).
    RetryCleared { task: usize },
    /// Task `task`'s next attempt starts at `at` at the earliest.
    RetryAt { task: usize, at: Instant },
    /// Host `host` could not be reached or was lost (`reason`): out of rotation for `out_for`.
    HostOut {
        host: String,
        reason: String,
        out_for: Duration,
    },
}

/// How the queue is steered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueCommand {
    Pause,
    Resume,
    /// herd stops: nothing new starts.
    Stop,
}

/// What the shell does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Launch the agent of start `key`: the write that marks its task `running` is durable.
    StartAgent { key: u64 },
    /// The next step of attempt `key`'s end.
    End { key: u64, step: EndStep },
    /// Start the tasks that are due while there is room: the shell hands its runnable tasks to
    /// `Batch::plan_starts` and carries out the starts it returns.
    FillSlots,
    /// Hand the turn's changes of the document to the tasks file's writer.
    CommitFile,
}

/// The batch's state.
#[derive(Debug, Default)]
pub struct Batch {
    queue: Queue,
    generations: Generations,
    /// The end of every attempt whose agent was launched, until its status is durable.
    ends: BTreeMap<u64, AttemptEnd>,
}

impl Batch {
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// The starts of this turn among `runnable` (in the file's order), in `room`
    /// (`fill::plan`): each one's retry time dropped, its account taken, its slot held.
    pub fn plan_starts<'a>(
        &mut self,
        runnable: impl IntoIterator<Item = Candidate<'a>>,
        room: Room<'_>,
        now: Instant,
    ) -> Fill {
        fill::plan(&mut self.queue, runnable, room, now)
    }

    /// What follows an attempt's end (`outcome::decide`, with the rules of `task` and its
    /// `profile`), and the queue told: its account rests, its profile is held until its quota
    /// reset, its task waits for its retry time.
    pub fn decide_end(
        &mut self,
        end: &OutcomeInput<'_>,
        (index, task): (usize, &TaskSpec),
        profile: Option<&Profile>,
        now: Instant,
    ) -> Decision {
        let rules = RetryRules::of(task);
        let decision = outcome::decide(end, rules, profile, self.queue.accounts(), now);
        (self.queue).follow(index, &task.agent, profile, &decision, now);
        decision
    }

    /// Attempt `key`'s end, while it is not done.
    pub fn end(&self, key: u64) -> Option<&AttemptEnd> {
        self.ends.get(&key)
    }

    /// Whether a start waits for a generation newer than `durable`.
    pub fn waits_beyond(&self, durable: u64) -> bool {
        self.generations.waits_beyond(durable)
    }

    /// Which write generation of the tasks file is handed, durable, held.
    pub fn generations(&self) -> &Generations {
        &self.generations
    }

    /// When a `Tick` is due: a drain's deadline or a waiting task's time.
    pub fn next_deadline(&self, now: Instant) -> Option<Instant> {
        self.ends
            .values()
            .filter_map(AttemptEnd::deadline)
            .chain(self.queue.next_due(now))
            .min()
    }

    pub fn handle(&mut self, input: Input, now: Instant) -> Vec<Effect> {
        let mut effects = Vec::new();
        match input {
            Input::Tick => {
                for (key, end) in &mut self.ends {
                    if let Some(step) = end.handle(EndInput::Tick, now) {
                        effects.push(Effect::End { key: *key, step });
                    }
                }
                effects.push(Effect::FillSlots);
                effects.push(Effect::CommitFile);
            }
            Input::StartRecorded { key, generation } => {
                let ready = self.generations.recorded(key, generation);
                effects.extend(ready.into_iter().map(|key| Effect::StartAgent { key }));
            }
            Input::StartWithdrawn { key } => self.generations.withdraw(key),
            Input::WriteHanded => self.generations.hand(),
            Input::WriteHeld { generation } => self.generations.hold(generation),
            Input::AgentStarted { key, watches_files } => {
                self.ends.insert(key, AttemptEnd::new(watches_files));
            }
            Input::Attempt { key, input } => {
                let step = self
                    .ends
                    .get_mut(&key)
                    .and_then(|end| end.handle(input, now));
                if let Some(step) = step {
                    effects.push(Effect::End { key, step });
                }
            }
            Input::WriteDurable { generation } => {
                for end in self.ends.values_mut() {
                    end.handle(EndInput::WriteDurable { generation }, now);
                }
                let ready = self.generations.made_durable(generation);
                effects.extend(ready.into_iter().map(|key| Effect::StartAgent { key }));
            }
            Input::Operator(command) => match command {
                QueueCommand::Pause => self.queue.set_paused(true),
                QueueCommand::Resume => self.queue.set_paused(false),
                QueueCommand::Stop => self.queue.stop(),
            },
            Input::RetryCleared { task } => self.queue.clear_retry(task),
            Input::RetryAt { task, at } => self.queue.set_retry_at(task, at),
            Input::HostOut {
                host,
                reason,
                out_for,
            } => self.queue.take_host_out(&host, reason, now, out_for),
        }
        self.ends.retain(|_, end| !end.is_done());
        effects
    }
}
