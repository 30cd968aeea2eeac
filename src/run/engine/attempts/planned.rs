//! A task's next attempt, planned and not yet started: the payload of the attempt table's
//! `Preparing` stage while its worktree, signal file or host folder is made on a worker.

use crate::core::remote::hosts::Host;
use crate::core::task::TaskSpec;
use crate::run::launch::LaunchPlan;

/// A task's next attempt, planned, not yet started.
pub(in crate::run::engine) struct Planned {
    pub(in crate::run::engine) key: u64,
    pub(in crate::run::engine) index: usize,
    pub(in crate::run::engine) task: TaskSpec,
    pub(in crate::run::engine) number: u32,
    pub(in crate::run::engine) plan: LaunchPlan,
    pub(in crate::run::engine) profile: crate::core::profile::Profile,
    /// The host it runs on, when not here.
    pub(in crate::run::engine) host: Option<Host>,
    /// Its profile's account, by index, as the batch chose it (`core::batch::fill`).
    pub(in crate::run::engine) account: Option<usize>,
    /// Its task was disabled or changed while it was prepared: it does not start, and the
    /// next attempt is planned from the task as it is now (`withdraw_preparation`).
    pub(in crate::run::engine) withdrawn: bool,
}

impl Planned {
    /// Whether something must be made before the agent starts (off the loop).
    pub(in crate::run::engine) fn needs_preparation(&self) -> bool {
        self.task.worktree
            || self.host.is_some()
            || self.plan.signal_file.is_some()
            || self.plan.trust_folder.is_some()
            // Its snapshot (`run::changes`) is taken before the agent runs.
            || crate::run::failure_report::in_repository(&self.plan.cwd)
    }
}
