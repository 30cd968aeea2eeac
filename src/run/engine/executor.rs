//! The engine as the batch's executor: an input goes to `core::batch::Batch::handle`, and the
//! effects it returns are carried out here, each one's result (a sweep done here, a host
//! checked, a gather done at once, a conclusion) fed back as the next input. The decisions
//! are the batch's; this only does what it is told.

use std::time::Instant;

use color_eyre::eyre::Result;

use super::Engine;
use super::attempts::Planned;
use super::host_trouble::HostTrouble;
use crate::core::attempt::StopSignal;
use crate::core::batch::{Effect, EndInput, EndStep, Input};

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
                self.launch(starting, now)?;
                Ok(None)
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
            EndStep::Gather => Ok(self.gather_end(key, now)),
            EndStep::Conclude => self.conclude_ended(key, now),
        }
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
        let exit = self.batch.end(key).and_then(|end| end.exit());
        let exit_code = exit.and_then(|e| e.code);
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
}
