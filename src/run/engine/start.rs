//! A task's next attempt, from its plan (`prepare`) to a start that waits for its write: the
//! tasks the queue (`core::batch::queue`) says are due start while there is room, each marked
//! `running` in the document; its agent launches once that is on disk (`commit`,
//! `launch_agent`). This carries the queue's decisions out; it decides nothing itself.

use std::time::Instant;

use color_eyre::eyre::Result;

use super::Engine;
use super::attempts::{Planned, RemoteGitBefore, Starting};
use crate::run::clock::Now;

use crate::core::batch::{Candidate, Consider, Input, Slots};
use crate::core::remote::host_choice::HostChoice;
use crate::core::task::TaskStatus;

impl Engine {
    /// Starts tasks while there is room.
    pub fn fill_slots(&mut self, now: Now) -> Result<()> {
        let now = self.turn(now);
        self.fill(now)
    }

    /// `fill_slots` within a turn.
    pub(super) fn fill(&mut self, now: Instant) -> Result<()> {
        if !self.batch.queue().accepts_starts() {
            return Ok(());
        }
        // Group commit: every task started in this turn is marked `running` in the same
        // generation, and their agents launch once it is on disk (`commit`).
        let mut starting = Vec::new();
        // Only the tasks that may start, not `scope()`: most of a large file is done, and this
        // runs every turn.
        let mut from = 0;
        while let Some(index) = self.tasks.store.file().next_runnable(from) {
            from = index + 1;
            // An attempt being prepared, waiting for its start's write, or being concluded
            // holds its slot.
            let slots = Slots {
                held: self.attempts.len() + starting.len(),
                concurrency: self.tasks.opts.concurrency,
            };
            let task = &self.tasks.store.file().tasks()[index];
            let candidate = Candidate {
                index,
                agent: &task.agent,
                profile: self.tasks.profiles.get(&task.agent),
                in_scope: self.tasks.in_scope(index),
                has_attempt: self.attempts.has_task(index),
            };
            match self.batch.queue_mut().consider(&candidate, slots, now) {
                Consider::Full => break,
                Consider::Skip => continue,
                Consider::Due => {}
            }
            let host = match task.host.clone() {
                None => None,
                Some(name) => {
                    let taken: Vec<&str> = (starting.iter().chain(self.attempts.awaiting()))
                        .filter_map(|s: &Starting| s.host.as_ref().map(|h| h.name.as_str()))
                        .collect();
                    match (self.hosts).choose(
                        &name,
                        &self.attempts,
                        &taken,
                        self.batch.queue(),
                        now,
                    ) {
                        HostChoice::Use(chosen) => self.hosts.set().get(&chosen).cloned(),
                        // Full or out of rotation: the task waits, it has not failed.
                        HostChoice::Wait { .. } => continue,
                        HostChoice::Unknown => {
                            let problem = self.hosts.set().unknown_target_message(&name);
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
                let size = self.sizes.at(self.attempts.len() + starting.len());
                starting.push(self.begin(planned, now, None, size)?);
            }
        }
        if starting.is_empty() {
            return Ok(());
        }
        self.record_starts(starting, now)?;
        // Handed over now: a frontend may wait for reports right after this call.
        self.commit(now)
    }

    /// Starts whose tasks are `running` in the document wait for the write that records them
    /// (`core::batch::launch` says when their agents launch).
    pub(super) fn record_starts(&mut self, starts: Vec<Starting>, now: Instant) -> Result<()> {
        let recorded: Vec<(u64, u64)> = starts.iter().map(|s| (s.key, s.generation)).collect();
        for starting in starts {
            self.attempts.await_write(starting);
        }
        for (key, generation) in recorded {
            self.drive(Input::StartRecorded { key, generation }, now)?;
        }
        Ok(())
    }

    /// A planned attempt about to launch, with its task marked `running` in the document (not
    /// yet written: it waits in `awaiting` for the write). `git_before`: `git status` of a
    /// remote attempt's folder as it starts.
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
            withdrawn: _,
        } = planned;
        let account = self.batch.queue_mut().take_account(&profile, now);
        if let Some(chosen) = account.and_then(|i| profile.accounts.get(i)) {
            plan.env.extend(chosen.env.clone());
            plan.env.insert("HERD_ACCOUNT".into(), chosen.name.clone());
        }
        let file = self.tasks.store.file_mut();
        file.set_status(index, TaskStatus::Running);
        file.set_attempts(index, number);
        file.remove_field(index, "retry_at");
        // The operator's message is delivered by this attempt.
        file.remove_field(index, "resume_message");
        if let Some(host) = &host {
            file.set_field(
                index,
                super::host_trouble::RAN_ON_FIELD,
                serde_json::json!(host.name),
            );
        }
        Ok(Starting {
            index,
            task,
            number,
            plan,
            profile,
            key,
            account,
            size,
            host,
            git_before,
            generation: self.next_generation(),
        })
    }
}
