//! The engine as the batch's executor: an input goes to `core::batch::Batch::handle`, and the
//! effects it returns are carried out here, each one's result (a sweep done here, a host
//! checked, a gather done at once, a conclusion) fed back as the next input. The decisions
//! are the batch's; this only does what it is told.

use std::time::Instant;

use color_eyre::eyre::Result;

use super::Engine;
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
}
