//! Operator actions on the engine: what the dashboard's keys and the control socket's requests
//! do to tasks and agents, reached through `Engine::apply` (`command`).
//!
//! Cancel, retry now (or skip a retry's wait), auto-answer switches, prompt edits and messages to
//! a running agent. Each action checks the status transition against `TaskStatus::can_become`,
//! changes the document (the loop's turn hands it to the tasks file's writer, like every other
//! engine change: `commit`), and says what it did in a `ControlOutcome` for the status line.
//! Nothing here draws or waits.

use std::path::Path;

use color_eyre::eyre::Result;
use serde_json::{Value, json};

use super::attempts::LiveAttempt;
use crate::core::attempt::Event;
use crate::core::batch::Input;
use crate::core::rerun::RetryReset;
use crate::core::task::TaskStatus;
use crate::run::clock::Now;
use crate::run::engine::inbox::EngineInbox;

/// What an operator action did, in words for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlOutcome {
    Done(String),
    Refused(String),
    /// An answer for a prompt that no longer waits: it was answered or went away.
    Stale(String),
}

impl ControlOutcome {
    pub fn message(&self) -> &str {
        match self {
            ControlOutcome::Done(m) | ControlOutcome::Refused(m) | ControlOutcome::Stale(m) => m,
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self, ControlOutcome::Done(_))
    }
}

pub(super) fn refused(text: impl Into<String>) -> Result<ControlOutcome> {
    Ok(ControlOutcome::Refused(text.into()))
}

pub(super) fn done(text: impl Into<String>) -> Result<ControlOutcome> {
    Ok(ControlOutcome::Done(text.into()))
}

/// The bytes that deliver `text` to an agent as one message, then submit it: a bracketed paste
/// when the agent asked for that mode (so newlines stay inside the message), otherwise typed
/// line by line.
pub fn message_bytes(text: &str, bracketed_paste: bool) -> Vec<u8> {
    let body = text
        .trim_end_matches(['\n', '\r'])
        .replace("\r\n", "\n")
        .replace('\n', "\r");
    let mut out = Vec::with_capacity(body.len() + 16);
    if bracketed_paste {
        out.extend_from_slice(b"\x1b[200~");
        out.extend_from_slice(body.as_bytes());
        out.extend_from_slice(b"\x1b[201~");
    } else {
        out.extend_from_slice(body.as_bytes());
    }
    out.push(b'\r');
    out
}

impl super::Engine {
    /// Where attempts are recorded (and the dashboard writes its log).
    pub fn runs_dir(&self) -> &Path {
        &self.tasks.opts.runs_dir
    }

    /// Whether task `index` belongs to this run (enabled, and picked by `--only` if given).
    pub(super) fn task_in_scope(&self, index: usize) -> bool {
        index < self.tasks.store.file().tasks().len() && self.tasks.in_scope(index)
    }

    /// The task an inbox report is about, while its attempt is live.
    pub fn task_of_report(&self, report: &EngineInbox) -> Option<usize> {
        let key = report.key()?;
        self.attempts.get_live(key).map(|live| live.task)
    }

    fn live_mut(&mut self, index: usize) -> Option<&mut LiveAttempt> {
        self.attempts.live_of_task_mut(index).map(|(_, live)| live)
    }

    pub(super) fn task_label(&self, index: usize) -> Option<(String, TaskStatus)> {
        let task = self.tasks.store.file().tasks().get(index)?;
        Some((task.task_id.clone(), task.status))
    }

    /// Cancels a task: a running agent is ended (its process group gets TERM, then KILL) and the
    /// task becomes `cancelled` when it is gone; a pending or retryable task is cancelled now.
    pub fn cancel_task(&mut self, index: usize, now: Now) -> Result<ControlOutcome> {
        let now = self.turn(now);
        // Its agent has not launched yet: the start is withdrawn and the task cancelled.
        self.withdraw_starts(Some(index));
        let Some((task_id, status)) = self.task_label(index) else {
            return refused("no such task");
        };
        if let Some(live) = self.live_for_task(index) {
            if live.attempt.is_ending() {
                return refused(format!("{task_id} is already ending"));
            }
            self.send(index, Event::Cancel, now)?;
            return done(format!("cancelling {task_id}: ending its agent"));
        }
        if !status.can_become(TaskStatus::Cancelled) {
            return refused(format!("{task_id} is {status}; it cannot be cancelled"));
        }
        self.batch
            .handle(Input::RetryCleared { task: index }, self.clock.at);
        self.tasks
            .store
            .file_mut()
            .set_status(index, TaskStatus::Cancelled);
        done(format!("{task_id} cancelled"))
    }

    /// Runs a task again as soon as there is room, as `herd run --retry TASK_ID` does: a
    /// failed, cancelled or retryable task goes back to `pending` with a fresh retry budget
    /// (its attempts so far set aside) and without its retry wait.
    pub fn retry_now(&mut self, index: usize, now: Now) -> Result<ControlOutcome> {
        let now = self.turn(now);
        let Some((task_id, status)) = self.task_label(index) else {
            return refused("no such task");
        };
        if self.attempts.has_task(index) {
            return refused(format!("{task_id} is running"));
        }
        if !self.tasks.in_scope(index) {
            return refused(format!(
                "{task_id} is not part of this run (disabled or not --only)"
            ));
        }
        if self.batch.queue().is_stopping() {
            return refused("herd is stopping; nothing new starts");
        }
        let message = match status {
            // What `herd run --retry TASK_ID` does: a fresh retry budget, the wait dropped.
            TaskStatus::Retryable | TaskStatus::Failed | TaskStatus::Cancelled => {
                self.batch
                    .handle(Input::RetryCleared { task: index }, self.clock.at);
                let reset = RetryReset::of(index, &self.tasks.store.file().tasks()[index]);
                reset.apply(self.tasks.store.file_mut());
                tracing::info!(task = %task_id, "retry now: {}", reset.describe());
                reset.describe()
            }
            TaskStatus::Pending => {
                self.batch
                    .handle(Input::RetryCleared { task: index }, self.clock.at);
                format!("{task_id} is already queued")
            }
            _ if status.can_become(TaskStatus::Pending) => {
                self.batch
                    .handle(Input::RetryCleared { task: index }, self.clock.at);
                self.tasks
                    .store
                    .file_mut()
                    .set_status(index, TaskStatus::Pending);
                format!("{task_id} is pending again")
            }
            _ => return refused(format!("{task_id} is {status}; it does not run again")),
        };
        self.fill(now)?;
        let started = self.attempts.has_task(index);
        let suffix = if started {
            "; started"
        } else if self.batch.queue().is_paused() {
            "; the queue is paused"
        } else {
            "; it starts when a slot is free"
        };
        done(format!("{message}{suffix}"))
    }

    /// Whether herd answers prompt rule `rule` (an index into the task's profile's prompts) by
    /// itself for this task: for the running attempt at once, and in the task's
    /// `permission_policy` so later attempts keep it. Turning it on while that prompt waits for
    /// the operator answers it now.
    pub fn set_auto_answer(
        &mut self,
        index: usize,
        rule: usize,
        auto: bool,
        now: Now,
    ) -> Result<ControlOutcome> {
        let now = self.turn(now);
        let Some(task) = self.tasks.store.file().tasks().get(index) else {
            return refused("no such task");
        };
        let task_id = task.task_id.clone();
        let Some(name) = self
            .tasks
            .profiles
            .get(&task.agent)
            .and_then(|p| p.prompts.get(rule))
            .map(|r| r.name.clone())
        else {
            return refused(format!("{task_id}: its profile has no prompt rule {rule}"));
        };
        // Key order inside the policy object follows the typed map (sorted by name).
        let mut policy: serde_json::Map<String, Value> = task
            .permission_policy
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        policy.insert(format!("auto_{name}"), json!(auto));
        // The rule lists stay as they are.
        let rules = &task.permission_rules;
        for (key, list) in [
            ("allow", &rules.allow),
            ("ask", &rules.ask),
            ("deny", &rules.deny),
        ] {
            if !list.is_empty() {
                policy.insert(key.to_string(), json!(list));
            }
        }
        let mut answered = false;
        if let Some(live) = self.live_mut(index) {
            live.attempt.set_auto(rule, auto);
            // Never for a request the guard refused: the switch allows only what it does not.
            answered = auto
                && live.attempt.waiting().is_some_and(|w| {
                    w.rule == rule
                        && !matches!(
                            w.decision,
                            Some(crate::core::guard::Decision::Refuse { .. })
                        )
                });
        }
        if answered {
            self.send(index, Event::OperatorAnswer { rule }, now)?;
        }
        self.tasks
            .store
            .file_mut()
            .set_field(index, "permission_policy", Value::Object(policy));
        let state = if auto { "on" } else { "off" };
        let extra = if answered {
            "; the waiting prompt was answered"
        } else {
            ""
        };
        done(format!("{task_id}: auto_{name} {state}{extra}"))
    }

    /// Replaces a task's `prompt_template`; it takes effect from the task's next attempt.
    pub fn set_prompt_template(&mut self, index: usize, text: &str) -> Result<ControlOutcome> {
        let Some((task_id, status)) = self.task_label(index) else {
            return refused("no such task");
        };
        if status == TaskStatus::Completed {
            return refused(format!("{task_id} is completed; it never runs again"));
        }
        self.tasks
            .store
            .file_mut()
            .set_field(index, "prompt_template", json!(text));
        let when = if self.attempts.has_task(index) {
            "from its next attempt"
        } else {
            "for its next attempt"
        };
        done(format!("{task_id}: prompt saved {when}"))
    }

    /// Types a (multi-line) message into a running agent and submits it.
    pub fn send_message(&mut self, index: usize, text: &str, now: Now) -> Result<ControlOutcome> {
        let now = self.turn(now);
        let Some((task_id, _)) = self.task_label(index) else {
            return refused("no such task");
        };
        let Some(live) = self.live_for_task(index) else {
            return refused(format!("{task_id} is not running"));
        };
        if text.trim().is_empty() {
            return refused("empty message not sent");
        }
        let bytes = message_bytes(text, live.attempt.screen().vt().bracketed_paste());
        self.send(index, Event::OperatorMessage(bytes), now)?;
        done(format!("message sent to {task_id}"))
    }
}
