//! What a frontend asks of the batch, as one typed `Command`, and the one entry point that
//! carries it out: `Engine::apply(command, now) -> ControlOutcome` (in the engine's root). The dashboard's keys and the
//! control socket's requests both become commands, so every frontend steers the batch the same
//! way and none reaches into the engine's other methods to change it.
//!
//! Each command checks what it may do where the engine decides (`control`, `session`, `api`,
//! `interrupted`, `sizes`): `apply` only says which. The outcome is the status line's words;
//! the frontend decides how to show them.

use super::api::{AnswerRefused, ApiAnswer};
use super::control::ControlOutcome;
use crate::core::approval::AnsweredBy;
use crate::core::attempt::Event;

/// What the operator's answer key sends to the dialog waiting in a task's pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogReply {
    /// The keys of the task's profile's prompt rule (recorded under the rule's name).
    Rule(usize),
    /// Keys of no rule (an option's own key, Enter, Esc), recorded under `name`.
    Keys { name: String, bytes: Vec<u8> },
}

/// One thing a frontend asks of the batch. Tasks are named by their index in the tasks file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Nothing new starts; running agents go on.
    Pause,
    Resume,
    /// How many agents run at once (kept within 1 ..= `Engine::MAX_CONCURRENCY`).
    SetConcurrency(usize),
    /// Starts what can start now, as many as there are free slots.
    FillSlots,
    /// The sizes (rows, cols) the next agents start at, by how many run when each starts.
    SetLaunchSizes(Vec<(u16, u16)>),
    /// Ends every running agent (its task goes back to `retryable`); nothing new starts.
    Stop,
    /// Kills every agent's process group at once (a second Ctrl-C, leaving for good).
    KillAll,
    /// herd cannot go on: every agent is killed and its task written back as `retryable`.
    Abandon {
        reason: String,
    },
    /// Cancels a task: its running agent is ended, a waiting task is cancelled now.
    Cancel {
        task: usize,
    },
    /// Runs a task again as soon as there is room (`herd run --retry`).
    RetryNow {
        task: usize,
    },
    /// Brings a task into this run (enabling it) and starts it when a slot is free.
    Run {
        task: usize,
    },
    /// Whether herd answers the task's prompt rule `rule` by itself.
    SetAutoAnswer {
        task: usize,
        rule: usize,
        on: bool,
    },
    /// A new `prompt_template` for the task's next attempt.
    SetPromptTemplate {
        task: usize,
        text: String,
    },
    /// A message typed into the task's running agent and submitted.
    SendMessage {
        task: usize,
        text: String,
    },
    /// A message to the task's session once its attempt ended: its next attempt resumes it.
    ResumeWithMessage {
        task: usize,
        text: String,
    },
    /// The operator's answer to the dialog waiting in the task's pane, as the dashboard's
    /// answer keys bind it (`ui::answer_target`).
    Answer {
        task: usize,
        reply: DialogReply,
    },
    /// An answer to the prompt `prompt_id`, given only while that very prompt waits.
    AnswerPrompt {
        prompt_id: String,
        answer: ApiAnswer,
        /// Who answers: the API's (control socket, MCP) or the web view's.
        by: AnsweredBy,
    },
    /// Keys typed or pasted into the task's agent (take-over mode).
    TypeKeys {
        task: usize,
        bytes: Vec<u8>,
    },
    /// The task's agent's terminal takes the size of the pane it is drawn in.
    ResizePane {
        task: usize,
        rows: u16,
        cols: u16,
    },
}

/// What pausing or resuming the queue did, in words.
pub(super) fn paused(paused: bool) -> ControlOutcome {
    let message = match paused {
        true => "queue paused: running agents go on, nothing new starts",
        false => "queue resumed",
    };
    ControlOutcome::Done(message.into())
}

/// What setting the concurrency to `n` did, in words.
pub(super) fn concurrency(n: usize) -> ControlOutcome {
    let noun = if n == 1 { "agent" } else { "agents" };
    ControlOutcome::Done(format!("{n} {noun} at once"))
}

/// What an answer by prompt id came to.
pub(super) fn answered(answer: std::result::Result<String, AnswerRefused>) -> ControlOutcome {
    match answer {
        Ok(message) => ControlOutcome::Done(message),
        Err(AnswerRefused::Stale(message)) => ControlOutcome::Stale(message),
        Err(AnswerRefused::NotOffered(message)) => ControlOutcome::Refused(message),
    }
}

impl DialogReply {
    pub(super) fn into_event(self) -> Event<'static> {
        match self {
            DialogReply::Rule(rule) => Event::OperatorAnswer { rule },
            DialogReply::Keys { name, bytes } => Event::OperatorReply { name, keys: bytes },
        }
    }
}
