//! One attempt whose agent was spawned: its state machine, its process and recorder, and the
//! handles that watch it (file watch, hook listener, app server), from its start until it is
//! concluded. It decides nothing: the engine feeds it and carries out what it says.

use std::time::Instant;

use crate::core::attempt::Attempt;
use crate::run::engine::os::AgentProcess;
use crate::run::failure_report;
use crate::run::hygiene::EndedProcess;
use crate::run::launch::LaunchPlan;
use crate::run::recorder::Recorder;

/// One running attempt.
pub struct LiveAttempt {
    pub task: usize,
    pub task_id: String,
    pub number: u32,
    pub attempt: Attempt,
    /// The id of the prompt waiting for the operator now, and how many waited before.
    pub prompts: crate::core::prompt_id::PromptIds,
    pub(in crate::run::engine) process: AgentProcess,
    pub(in crate::run::engine) recorder: Recorder,
    pub(in crate::run::engine) plan: LaunchPlan,
    pub started: Instant,
    pub(in crate::run::engine) started_at: jiff::Timestamp,
    /// The operator stopped herd: the task goes back to `retryable`.
    pub(in crate::run::engine) stopped_by_operator: bool,
    /// (cols, rows) the PTY started at.
    pub(in crate::run::engine) size: (u16, u16),
    /// `git status` of the task's folder when the attempt started (None outside a repository).
    /// `git status` as the attempt started, for a failure's changed files (in a repository).
    pub(in crate::run::engine) git_before: failure_report::GitSnapshot,
    /// The profile's account this attempt uses, by index.
    pub account: Option<usize>,
    /// The signal file's text as last read, so an unchanged file is not read into the attempt
    /// again.
    pub(in crate::run::engine) signal_text: Option<String>,
    /// The worker that reads the signal file and the agent's own log (the profile's
    /// `agent_log`); gone once its last read came in. Where the attempt's end is, is the
    /// batch's (`core::batch::end`).
    pub(in crate::run::engine) files: Option<crate::run::attempt_files::FileWatch>,
    /// `HERD_ATTEMPT_ID` of this attempt: every process it starts carries it.
    pub(in crate::run::engine) cookie: String,
    /// Processes seen under the agent before herd signalled it (found again by identity, for
    /// those that cleared their environment).
    pub(in crate::run::engine) known_processes: Vec<(u32, u64)>,
    /// What was ended after the agent exited.
    pub(in crate::run::engine) swept: Vec<EndedProcess>,
    /// What the worker gathered at its end, until it is concluded.
    pub(in crate::run::engine) gathered: Option<Box<crate::run::engine::gathered::Gathered>>,
    /// The host it runs on, when not here.
    pub(in crate::run::engine) remote: Option<crate::run::engine::hosts::RemoteState>,
    /// The listener of the CLI's hooks (profiles with `hooks`, agents here), gone with the
    /// attempt.
    pub(in crate::run::engine) _hooks: Option<crate::run::hook_server::HookServer>,
    /// herd's client of the attempt's Codex app server, when its command places
    /// `{app_server}` and the agent runs here.
    pub(in crate::run::engine) app_server: Option<crate::run::app_server::AppServerLink>,
}

impl LiveAttempt {
    /// The launch plan the attempt runs (argv, completion rule, resumed session).
    pub fn plan(&self) -> &LaunchPlan {
        &self.plan
    }

    /// The host it runs on, when not here.
    pub fn host(&self) -> Option<&str> {
        self.remote.as_ref().map(|r| r.host.name.as_str())
    }
}
