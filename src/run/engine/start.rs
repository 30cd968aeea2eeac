//! A task's next attempt, from its plan (`prepare`) to a start that waits for its write: its
//! task marked `running` in the document, its account's environment in its plan; its agent
//! launches once that is on disk (`commit`, `launch_agent`). The batch (`core::batch::fill`)
//! decides which tasks start, where and with which account; `executor` carries that out
//! through these steps.

use super::attempts::{Planned, RemoteGitBefore, Starting};
use super::tasks::Tasks;
use crate::core::remote::hosts::Host;
use crate::core::task::TaskStatus;

impl Tasks {
    /// Attempt `number` of task `index` starts (on `host`): the task is `running` in the
    /// document, its retry time and the operator's message (this attempt delivers it) gone.
    pub(super) fn mark_running(&mut self, index: usize, number: u32, host: Option<&Host>) {
        let file = self.store.file_mut();
        file.set_status(index, TaskStatus::Running);
        file.set_attempts(index, number);
        file.remove_field(index, "retry_at");
        file.remove_field(index, "resume_message");
        if let Some(host) = host {
            file.set_field(
                index,
                super::host_trouble::RAN_ON_FIELD,
                serde_json::json!(host.name),
            );
        }
    }
}

impl Planned {
    /// The start of this plan, its account's environment added to the plan, awaiting write
    /// `generation`. `git_before`: `git status` of a remote attempt's folder as it starts;
    /// `size`: (rows, cols) of its PTY.
    pub(super) fn into_starting(
        self,
        (git_before, size): (RemoteGitBefore, (u16, u16)),
        generation: u64,
    ) -> Starting {
        let Planned {
            key,
            index,
            task,
            number,
            mut plan,
            profile,
            host,
            account,
            withdrawn: _,
        } = self;
        if let Some(chosen) = account.and_then(|i| profile.accounts.get(i)) {
            plan.env.extend(chosen.env.clone());
            plan.env.insert("HERD_ACCOUNT".into(), chosen.name.clone());
        }
        Starting {
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
            generation,
        }
    }
}
