//! The dashboard's view model: plain data for one frame, filled from the batch's read-only view
//! and the dashboard's state. `draw` only reads it, so frames can be snapshotted without any
//! process running.

pub mod agent;
mod detail;
mod fill;
mod overlay;
mod status;
mod tasks;

pub use detail::detail;
pub use fill::dashboard;
pub use overlay::{auto_menu, message_target};
#[cfg(test)]
pub(crate) use status::status_message;
pub use tasks::{
    failure_of, filter_counts, is_listed, live_tasks, matching, max_attempts, pane_order,
    row_status, step_through, task_name, waiting_tasks, window_offset,
};

use std::collections::HashMap;
use std::time::Duration;

use ratatui_textarea::TextArea;

use crate::core::task::FailureType;

/// How a task shows in the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowStatus {
    Pending,
    Running,
    /// Running, with a prompt waiting for the operator.
    Waiting,
    Completed,
    Retryable,
    Failed,
    Cancelled,
    /// The agent asked questions and waits for the operator's answers.
    NeedsInput,
    /// Not part of this run (disabled, or not picked by `--only`).
    Skipped,
}

/// One queue row.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    pub task_id: String,
    pub agent: String,
    pub status: RowStatus,
    pub attempts: u32,
    pub max_attempts: u32,
    pub elapsed: Option<Duration>,
    pub failure: Option<FailureType>,
    /// A short note: the waiting rule, a retry countdown, an automatic answer just given.
    pub note: Option<String>,
    /// How many questions a task that needs input asks (0 for other tasks).
    pub questions: usize,
    /// The task's cost over its attempts, a running one's included.
    pub cost_usd: Option<f64>,
    /// Turns of the running attempt, else of the last one, when its agent reports them.
    pub turns: Option<u64>,
}

/// The visible window of the queue.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueueView {
    pub filter: &'static str,
    /// The search the queue is narrowed by (`/`), when there is one.
    pub search: Option<String>,
    /// Tasks in the file, and how many pass the filter.
    pub total: usize,
    pub matching: usize,
    /// Position of `rows[0]` among the matching tasks.
    pub offset: usize,
    /// Position of the selected task among the matching tasks.
    pub selected: Option<usize>,
    pub rows: Vec<TaskRow>,
}

/// One key that answers a waiting prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub key: String,
    pub label: String,
}

/// A prompt waiting for the operator in a pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptView {
    pub rule: String,
    /// Visible rows of the agent's screen to highlight (first, last).
    pub rows: (usize, usize),
    pub choices: Vec<Choice>,
    /// What the prompt asks and why herd did not answer it (the guard's refusal or doubt).
    pub guard: Option<String>,
    /// The guard refused the request (or could not read it): its note comes before the keys.
    pub guard_objects: bool,
}

/// One agent pane.
pub struct PaneView<'a> {
    pub task_id: String,
    pub attempt: u32,
    pub max_attempts: u32,
    pub elapsed: Duration,
    pub screen: &'a vt100::Screen,
    pub focused: bool,
    /// The task is the queue's selected one: only then does a dialog in the focused pane take
    /// its keys.
    pub selected: bool,
    pub prompt: Option<PromptView>,
    /// A brief note (an automatic answer just given).
    pub note: Option<String>,
    /// How far the view is scrolled back into history (0: live).
    pub scrolled: usize,
    pub ending: bool,
    /// The host the agent runs on, when not here.
    pub host: Option<String>,
}

/// Details of the selected task.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DetailView {
    pub task_id: String,
    /// The questions of a task that needs input, shown first and prominently.
    pub questions: Vec<String>,
    /// (label, value); a value wraps to a few rows at most.
    pub lines: Vec<(String, String)>,
}

/// One retry waiting for its time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryView {
    pub task_id: String,
    pub remaining: Duration,
    /// When it comes, as the status bar says it: `7s`, or the clock time of a longer wait.
    pub when: String,
}

/// The status bar.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatusView {
    /// (label, count, status) for each status with tasks, in a fixed order.
    pub counts: Vec<(RowStatus, usize)>,
    pub failures: Vec<(FailureType, usize)>,
    pub retries: Vec<RetryView>,
    pub clock: Duration,
    pub paused: bool,
    pub concurrency: usize,
    pub finished: bool,
    pub stopping: bool,
    /// The batch's cost so far, running attempts included.
    pub cost_usd: Option<f64>,
    /// The last action's result, shown for a few seconds.
    pub message: Option<String>,
    /// Hosts out of rotation (name, seconds until they are tried again): always shown.
    pub hosts_out: Vec<(String, u64)>,
    /// (key, what it does) for the keys that matter now.
    pub keys: Vec<(String, String)>,
}

/// The auto-answer switches of one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoMenu {
    pub task_id: String,
    pub rules: Vec<AutoRule>,
}

/// One prompt rule in the auto-answer window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoRule {
    /// The key that switches it (`toggle_keys`).
    pub key: char,
    pub name: String,
    pub label: String,
    pub on: bool,
}

/// The recorded attempts of one task, to pick one to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptsMenu {
    pub task_id: String,
    /// (attempt number, its verdict in a few words), newest first.
    pub rows: Vec<(u32, String)>,
    pub selected: usize,
}

/// A window over the dashboard.
pub enum Overlay<'a> {
    Help {
        offset: usize,
        /// A background run: `q` and the detach key say what they do there.
        background: bool,
        /// The run's web view, where it listens.
        web: Option<&'a str>,
    },
    /// The selected task's details in a window, scrolled down by `offset` rows.
    Details {
        offset: usize,
    },
    /// A task's answered prompts (`answers::lines`).
    Answers {
        task_id: String,
        lines: &'a [String],
        offset: usize,
    },
    ConfirmQuit {
        running: usize,
    },
    /// `q` in a background run: detach or stop the batch.
    ConfirmLeave {
        running: usize,
    },
    ConfirmCancel {
        task_id: String,
    },
    Auto(AutoMenu),
    Attempts(AttemptsMenu),
    /// A task's changes (`diff_view`), over the whole screen.
    Diff(&'a crate::ui::diff_view::DiffView),
    EditPrompt {
        task_id: String,
        editor: &'a TextArea<'static>,
    },
    Message {
        task_id: String,
        target: MessageTarget,
        editor: &'a TextArea<'static>,
    },
}

/// Where an operator's message goes, which the message editor's title says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageTarget {
    /// Typed into the running agent.
    Running,
    /// Answers to the questions of a task that needs input (its session resumed when it has one).
    Answers { questions: Vec<String> },
    /// A follow-up that continues the task's agent session.
    Session { id: String },
    /// No session to continue: a fresh attempt gets the message in its prompt.
    FreshAttempt,
}

/// The panes as the frame's layout settled them: their order (the focused one first) and the
/// screens of those scrolled back.
#[derive(Default)]
pub struct PaneSetup {
    pub order: Vec<usize>,
    pub scrolled: HashMap<usize, vt100::Screen>,
}

/// Everything one frame shows.
pub struct Dashboard<'a> {
    pub queue: QueueView,
    /// In slot order: the focused pane first, then the tiles.
    pub panes: Vec<PaneView<'a>>,
    /// Running agents without a visible pane.
    pub hidden_panes: usize,
    pub zoomed: bool,
    pub takeover: bool,
    pub detail: Option<DetailView>,
    /// The selected task's screen as its last attempt left it, shown while no agent runs.
    pub final_screen: Option<FinalScreen<'a>>,
    pub status: StatusView,
    pub overlay: Option<Overlay<'a>>,
}

/// A finished attempt's last screen.
pub struct FinalScreen<'a> {
    pub task_id: String,
    pub attempt: u32,
    pub screen: &'a vt100::Screen,
}
