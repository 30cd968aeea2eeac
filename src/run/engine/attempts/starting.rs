//! A start waiting for its write: the payload of the attempt table's `Awaiting` stage. Its
//! task is `running` in the document; its agent launches once that is on disk.

use std::collections::BTreeSet;

use crate::core::task::TaskSpec;
use crate::run::launch::LaunchPlan;

/// A task's next attempt between `begin` and `launch`: its task is `running` in the document,
/// and its agent launches once generation `generation` is on disk.
pub(in crate::run::engine) struct Starting {
    pub(in crate::run::engine) index: usize,
    /// The task as it was before this start changed it.
    pub(in crate::run::engine) task: TaskSpec,
    pub(in crate::run::engine) number: u32,
    pub(in crate::run::engine) plan: LaunchPlan,
    pub(in crate::run::engine) profile: crate::core::profile::Profile,
    pub(in crate::run::engine) key: u64,
    pub(in crate::run::engine) account: Option<usize>,
    /// (rows, cols) its PTY starts at: its slot's size when it was prepared.
    pub(in crate::run::engine) size: (u16, u16),
    /// The host it runs on, when not here.
    pub(in crate::run::engine) host: Option<crate::core::remote::hosts::Host>,
    /// `git status` of a remote attempt's folder as it started.
    pub(in crate::run::engine) git_before: RemoteGitBefore,
    /// The write that records this start.
    pub(in crate::run::engine) generation: u64,
}

/// `git status` of a remote attempt's folder as it started, for its `GitSnapshot`.
pub(in crate::run::engine) type RemoteGitBefore = Option<Option<BTreeSet<String>>>;
