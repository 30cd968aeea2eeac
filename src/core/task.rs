//! Task fields, statuses and failure types, and the transitions allowed between them: the
//! vocabulary of SPEC.md. Reads no file (`taskfile`), decides no verdict (`classify`).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a task stands in the batch. Serialized exactly as SPEC.md spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    Running,
    Completed,
    Retryable,
    Failed,
    Cancelled,
    /// The agent asked questions and waits for the operator's answers (resuming its session).
    NeedsInput,
}

impl TaskStatus {
    pub const ALL: [TaskStatus; 7] = [
        TaskStatus::Pending,
        TaskStatus::Running,
        TaskStatus::Completed,
        TaskStatus::Retryable,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
        TaskStatus::NeedsInput,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::Running => "running",
            TaskStatus::Completed => "completed",
            TaskStatus::Retryable => "retryable",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
            TaskStatus::NeedsInput => "needs_input",
        }
    }

    pub fn parse(text: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// A run picks tasks in these states (if enabled).
    pub fn is_runnable(self) -> bool {
        matches!(self, TaskStatus::Pending | TaskStatus::Retryable)
    }

    /// Whether herd may move a task from `self` to `next`: `running` only from a runnable state
    /// and left only through a verdict or a stop; a `completed` task only becomes `retryable`
    /// by the operator's message to its session.
    pub fn can_become(self, next: TaskStatus) -> bool {
        use TaskStatus::*;
        matches!(
            (self, next),
            (Pending | Retryable, Running)
                | (
                    Running,
                    Completed | Retryable | Failed | Cancelled | NeedsInput
                )
                | (Pending | Retryable | NeedsInput, Cancelled | Failed)
                | (Failed | Cancelled | NeedsInput, Pending)
                | (Retryable, Pending)
                | (Completed | Failed | Cancelled | NeedsInput, Retryable)
        )
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The classified reason an attempt failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub enum FailureType {
    #[serde(rename = "failed_timeout")]
    Timeout,
    #[serde(rename = "failed_permission_blocked")]
    PermissionBlocked,
    #[serde(rename = "failed_auth")]
    Auth,
    #[serde(rename = "failed_quota")]
    Quota,
    #[serde(rename = "failed_process")]
    Process,
    #[serde(rename = "failed_incomplete")]
    Incomplete,
    #[serde(rename = "failed_config")]
    Config,
}

impl FailureType {
    pub const ALL: [FailureType; 7] = [
        FailureType::Timeout,
        FailureType::PermissionBlocked,
        FailureType::Auth,
        FailureType::Quota,
        FailureType::Process,
        FailureType::Incomplete,
        FailureType::Config,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureType::Timeout => "failed_timeout",
            FailureType::PermissionBlocked => "failed_permission_blocked",
            FailureType::Auth => "failed_auth",
            FailureType::Quota => "failed_quota",
            FailureType::Process => "failed_process",
            FailureType::Incomplete => "failed_incomplete",
            FailureType::Config => "failed_config",
        }
    }

    /// A short label for tables and the status bar.
    pub fn short(self) -> &'static str {
        match self {
            FailureType::Timeout => "timeout",
            FailureType::PermissionBlocked => "blocked",
            FailureType::Auth => "auth",
            FailureType::Quota => "quota",
            FailureType::Process => "process",
            FailureType::Incomplete => "incomplete",
            FailureType::Config => "config",
        }
    }

    pub fn parse(text: &str) -> Option<FailureType> {
        FailureType::ALL.into_iter().find(|f| f.as_str() == text)
    }
}

impl fmt::Display for FailureType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What makes an attempt a success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// The completion marker as the agent's own output line, and a normal end.
    Marker,
    /// A successful final `result` event of a structured (stream-json) agent.
    Result,
    /// The agent's own verdict in the file `HERD_SIGNAL_FILE`.
    SignalFile,
}

impl Completion {
    pub const ALL: [Completion; 3] = [
        Completion::Marker,
        Completion::Result,
        Completion::SignalFile,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Completion::Marker => "marker",
            Completion::Result => "result",
            Completion::SignalFile => "signal_file",
        }
    }

    pub fn parse(text: &str) -> Option<Completion> {
        Completion::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// How a retry starts: afresh, or by continuing the previous attempt's agent session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RetryMode {
    #[default]
    Restart,
    Resume,
}

impl RetryMode {
    pub fn parse(text: &str) -> Option<RetryMode> {
        match text {
            "restart" => Some(RetryMode::Restart),
            "resume" => Some(RetryMode::Resume),
            _ => None,
        }
    }
}

/// What herd does once a task completed, besides recording its changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnComplete {
    /// `"commit"`: commit the task's working tree onto the branch `herd/<task_id>`.
    Commit,
    /// `["cmd", ...]`: run this command with the task's facts as JSON on its standard input.
    Command(Vec<String>),
}

/// A task's permission rules as written; the guard compiles them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PermissionRules {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
}

/// Defaults of SPEC.md for fields a task may leave out.
pub const DEFAULT_TIMEOUT_SEC: u64 = 1800;
pub const DEFAULT_MAX_RETRIES: u32 = 1;
pub const DEFAULT_MARKER_TEMPLATE: &str = "TASK_COMPLETE:{task_id}";

/// The ranges herd accepts for a task's numbers (README, "Numbers"): beyond them a clock or a
/// counter would overflow.
pub const MAX_TIMEOUT_SEC: u64 = 30 * 24 * 3600;
/// `idle_sec` and `permission_wait_sec` (and a profile's `idle_sec`): above 0, at most this.
pub const MAX_WAIT_SEC: f64 = 30.0 * 24.0 * 3600.0;
pub const MAX_RETRIES_LIMIT: u32 = 1000;
/// `attempts`, which herd counts up: far more than any retry budget, far from overflowing.
pub const MAX_ATTEMPTS: u32 = 1_000_000;

/// One task as herd understands it; fields herd does not know stay in the document.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskSpec {
    pub task_id: String,
    pub agent: String,
    pub enabled: bool,
    /// As written; relative to the tasks file's folder (`None`: that folder).
    pub cwd: Option<String>,
    pub timeout_sec: u64,
    pub max_retries: u32,
    /// `auto_<rule name>` → whether herd may answer that prompt rule by itself.
    pub permission_policy: BTreeMap<String, bool>,
    /// `permission_policy.allow` / `ask` / `deny`: rules in Claude Code's syntax.
    pub permission_rules: PermissionRules,
    /// Values for `{placeholders}`; strings, numbers and booleans (rendered as text).
    pub inputs: BTreeMap<String, String>,
    pub prompt_template: Option<String>,
    /// A Markdown command file (relative to the task's folder) used instead of `prompt_template`.
    pub prompt_file: Option<String>,
    /// Values for the command file's `$ARGUMENTS` and `$1`, `$2`, ...
    pub args: Vec<String>,
    pub command: Option<Vec<String>>,
    pub env: BTreeMap<String, String>,
    pub completion_marker: Option<String>,
    /// `None`: by the profile (a structured agent's result event, else the marker).
    pub completion: Option<Completion>,
    /// herd adds the completion instruction to a prompt that does not place it;
    /// `"marker_instruction": false` leaves it as written.
    pub marker_instruction: bool,
    pub retry_mode: RetryMode,
    /// The operator's message for the task's session: the next attempt resumes with it.
    pub resume_message: Option<String>,
    /// Failure types that are retried, replacing the default list.
    pub retry_on: Option<Vec<FailureType>>,
    /// Overrides of the profile's idle end and the headless wait for an unanswered prompt.
    pub idle_sec: Option<f64>,
    pub permission_wait_sec: Option<f64>,
    /// A `failed_quota` attempt that names a reset time makes the task `retryable` at that time.
    pub wait_for_quota_reset: bool,
    /// Trust the task's folder in the CLI's config before it starts; `None`: as the profile says.
    pub trust_folder: Option<bool>,
    /// The ACP session mode for this task; `None`: the profile's `acp_mode`.
    pub acp_mode: Option<String>,
    /// Run in its own git worktree of `cwd` (`.herd/worktrees/<task_id>`, branch `herd/<task_id>`).
    pub worktree: bool,
    /// What herd does once the task completed; `None`: nothing.
    pub on_complete: Option<OnComplete>,
    /// The host or host group (of the hosts file) to run on; `None`: this machine.
    pub host: Option<String>,
    /// The host the latest attempt ran on (written by herd when it starts one there).
    pub ran_on: Option<String>,
    /// A host lost while an attempt ran there and not swept since (written by herd).
    pub lost_on: Option<String>,
    pub status: TaskStatus,
    pub attempts: u32,
    /// Attempts set aside by `herd run --retry`: `max_retries` counts those after them.
    pub attempts_before_retry: u32,
    pub result: Option<serde_json::Value>,
    /// When a `retryable` task may start again (written by herd, so a resumed batch keeps the
    /// backoff).
    pub retry_at: Option<jiff::Timestamp>,
}

impl TaskSpec {
    /// The policy switch for prompt rule `rule_name`, if the task says anything about it.
    pub fn policy_for(&self, rule_name: &str) -> Option<bool> {
        self.permission_policy
            .get(&format!("auto_{rule_name}"))
            .copied()
    }

    /// The last attempt whose failure is retried: `max_retries` after those set aside.
    pub fn last_retried_attempt(&self) -> u32 {
        self.attempts_before_retry.saturating_add(self.max_retries)
    }

    /// Tasks a run would start now.
    pub fn is_runnable(&self) -> bool {
        self.enabled && self.status.is_runnable()
    }
}

/// Whether `id` is safe as a folder name under `runs/`.
pub fn is_safe_task_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id != "."
        && id != ".."
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '@'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_pair_has_a_decided_transition() {
        use TaskStatus::*;
        let allowed = [
            (Pending, Running),
            (Retryable, Running),
            (Running, Completed),
            (Running, Retryable),
            (Running, Failed),
            (Running, Cancelled),
            (Pending, Cancelled),
            (Pending, Failed),
            (Retryable, Cancelled),
            (Retryable, Failed),
            (Failed, Pending),
            (Cancelled, Pending),
            (Retryable, Pending),
            (Running, NeedsInput),
            (NeedsInput, Cancelled),
            (NeedsInput, Failed),
            (NeedsInput, Pending),
            (Completed, Retryable),
            (Failed, Retryable),
            (Cancelled, Retryable),
            (NeedsInput, Retryable),
        ];
        for from in TaskStatus::ALL {
            for to in TaskStatus::ALL {
                let expected = allowed.contains(&(from, to));
                assert_eq!(from.can_become(to), expected, "{from} -> {to}");
            }
        }
    }

    #[test]
    fn completed_is_left_only_by_resuming_its_session() {
        for to in TaskStatus::ALL {
            assert_eq!(
                TaskStatus::Completed.can_become(to),
                to == TaskStatus::Retryable,
                "{to}"
            );
        }
        assert!(!TaskStatus::NeedsInput.is_runnable());
    }

    #[test]
    fn names_round_trip() {
        for s in TaskStatus::ALL {
            assert_eq!(TaskStatus::parse(s.as_str()), Some(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
        }
        for f in FailureType::ALL {
            assert_eq!(FailureType::parse(f.as_str()), Some(f));
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(json, format!("\"{}\"", f.as_str()));
        }
    }

    #[test]
    fn task_ids_that_are_not_folder_names_are_refused() {
        for ok in ["a", "pandas-merge-001", "x.y_z", "A+B@c"] {
            assert!(is_safe_task_id(ok), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "a\\b", "a b", "é", "a\0"] {
            assert!(!is_safe_task_id(bad), "{bad:?}");
        }
    }
}
