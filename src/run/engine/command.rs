//! What a frontend asks of the batch, as one typed `Command`, and the one entry point that
//! carries it out: `Engine::apply(command, now) -> ControlOutcome`. The dashboard's keys and the
//! control socket's requests both become commands, so every frontend steers the batch the same
//! way and none reaches into the engine's other methods to change it.
//!
//! Each command checks what it may do where the engine decides (`control`, `session`, `api`,
//! `interrupted`, `sizes`): this file only says which. The outcome is the status line's words;
//! the frontend decides how to show them.

use color_eyre::eyre::Result;

use super::Engine;
use super::api::{AnswerRefused, ApiAnswer};
use super::control::ControlOutcome;
use crate::core::attempt::Event;
use crate::run::clock::Now;

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

impl Engine {
    /// Carries out `command` in the turn of `now`; what it did, in words.
    pub fn apply(&mut self, command: Command, now: Now) -> Result<ControlOutcome> {
        let done = |text: &str| Ok(ControlOutcome::Done(text.to_string()));
        match command {
            Command::Pause => Ok(self.pause(true)),
            Command::Resume => Ok(self.pause(false)),
            Command::SetConcurrency(n) => Ok(self.concurrency_of(n)),
            Command::FillSlots => {
                self.fill_slots(now)?;
                done("free slots filled")
            }
            Command::SetLaunchSizes(sizes) => {
                self.set_launch_sizes(sizes);
                done("launch sizes set")
            }
            Command::Stop => {
                self.stop(now)?;
                done("stopping: ending the running agents")
            }
            Command::KillAll => {
                self.kill_all();
                done("killing the agents' process groups")
            }
            Command::Abandon { reason } => {
                self.abandon(&reason, now);
                done(&format!("abandoned: {reason}"))
            }
            Command::Cancel { task } => self.cancel_task(task, now),
            Command::RetryNow { task } => self.retry_now(task, now),
            Command::Run { task } => self.run_task(task, now),
            Command::SetAutoAnswer { task, rule, on } => self.set_auto_answer(task, rule, on, now),
            Command::SetPromptTemplate { task, text } => self.set_prompt_template(task, &text),
            Command::SendMessage { task, text } => self.send_message(task, &text, now),
            Command::ResumeWithMessage { task, text } => self.resume_with_message(task, &text, now),
            Command::Answer { task, reply } => {
                self.send_to_agent(task, reply.into_event(), now, "answer sent")
            }
            Command::AnswerPrompt { prompt_id, answer } => {
                Ok(match self.answer_prompt(&prompt_id, answer, now)? {
                    Ok(message) => ControlOutcome::Done(message),
                    Err(AnswerRefused::Stale(message)) => ControlOutcome::Stale(message),
                    Err(AnswerRefused::NotOffered(message)) => ControlOutcome::Refused(message),
                })
            }
            Command::TypeKeys { task, bytes } => {
                self.send_to_agent(task, Event::OperatorKeys(bytes), now, "keys sent")
            }
            Command::ResizePane { task, rows, cols } => {
                let said = format!("resized to {rows}x{cols}");
                self.send_to_agent(task, Event::Resize { rows, cols }, now, &said)
            }
        }
    }

    /// Hands `event` to task `task`'s running attempt; nothing to hand it to when none runs.
    fn send_to_agent(
        &mut self,
        task: usize,
        event: Event<'_>,
        now: Now,
        said: &str,
    ) -> Result<ControlOutcome> {
        if self.live_for_task(task).is_none() {
            return Ok(ControlOutcome::Refused(match self.tasks.label(task) {
                Some((task_id, _)) => format!("{task_id} is not running"),
                None => "no such task".to_string(),
            }));
        }
        self.send_to_task(task, event, now)?;
        Ok(ControlOutcome::Done(said.to_string()))
    }

    fn pause(&mut self, paused: bool) -> ControlOutcome {
        self.set_paused(paused);
        let message = match paused {
            true => "queue paused: running agents go on, nothing new starts",
            false => "queue resumed",
        };
        ControlOutcome::Done(message.into())
    }

    fn concurrency_of(&mut self, n: usize) -> ControlOutcome {
        self.set_concurrency(n);
        let n = self.tasks.opts.concurrency;
        let noun = if n == 1 { "agent" } else { "agents" };
        ControlOutcome::Done(format!("{n} {noun} at once"))
    }
}

impl DialogReply {
    fn into_event(self) -> Event<'static> {
        match self {
            DialogReply::Rule(rule) => Event::OperatorAnswer { rule },
            DialogReply::Keys { name, bytes } => Event::OperatorReply { name, keys: bytes },
        }
    }
}
