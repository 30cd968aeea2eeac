//! When to tell the operator: the `notify` command's events, decided from what the engine shows
//! each turn. Each wait is told once (one that went away and came back is new), the batch's end
//! once. Pure; `command_problem` checks the tasks file's `notify` value.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::core::task::{FailureType, TaskStatus};

/// One prompt waiting for the operator, as the engine sees it this turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitFact {
    pub task_id: String,
    pub attempt: u32,
    /// The prompt rule's name (`press_1`).
    pub rule: String,
    /// When the wait began: with the rule, what tells one wait from the next.
    pub since: Duration,
    /// What the prompt asks, when herd could read it (`Bash(npm test)`).
    pub request: Option<String>,
    /// `ask` or `refuse`: why herd did not answer by itself, when the guard judged it.
    pub decision: Option<&'static str>,
    pub reason: Option<String>,
    /// The prompt as it shows on the screen.
    pub prompt: String,
    /// Its id for an answer by id (`prompts.answer`, the web view), and the answers it takes.
    pub prompt_id: Option<String>,
    pub answers: Vec<&'static str>,
}

impl WaitFact {
    fn key(&self) -> WaitKey {
        (
            self.task_id.clone(),
            self.attempt,
            self.rule.clone(),
            self.since,
        )
    }
}

type WaitKey = (String, u32, String, Duration);

/// An attempt that ended this turn, with what it left its task in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndFact {
    pub task_id: String,
    pub attempt: u32,
    pub status: TaskStatus,
    pub failure: Option<FailureType>,
    pub evidence: Option<String>,
    /// The event that decided it, when it says more than the evidence.
    pub why: Option<String>,
    /// The agent's questions, when the task needs the operator's input.
    pub questions: Vec<String>,
    /// What the attempt changed, in words (`3 files +120 −14`), where herd recorded it.
    pub changes: Option<String>,
}

/// The batch as it ended: how many tasks of the run are in each status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchEnd {
    pub counts: BTreeMap<String, usize>,
    pub exit_code: i32,
}

/// What the engine shows in one turn.
#[derive(Debug, Clone, Default)]
pub struct Turn<'a> {
    pub waits: &'a [WaitFact],
    pub ends: &'a [EndFact],
    /// `Some` while nothing runs and nothing is left to start.
    pub batch_end: Option<BatchEnd>,
}

/// One event for the `notify` command: the JSON on its stdin (the shell adds time and file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum NotifyEvent {
    /// A prompt waits for the operator's answer.
    PromptWaiting {
        task_id: String,
        attempt: u32,
        waits_for: &'static str,
        rule: String,
        request: Option<String>,
        decision: Option<&'static str>,
        reason: Option<String>,
        prompt: String,
        /// The id that answers it (`prompts.answer`), and the answers it takes.
        #[serde(skip_serializing_if = "Option::is_none")]
        prompt_id: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        answers: Vec<&'static str>,
        message: String,
    },
    /// The agent asked questions and the task waits for the operator's answers.
    NeedsInput {
        task_id: String,
        attempt: u32,
        waits_for: &'static str,
        questions: Vec<String>,
        /// What the attempt changed (`core::facts::changes`), where herd recorded it.
        #[serde(skip_serializing_if = "Option::is_none")]
        changes: Option<String>,
        message: String,
    },
    /// The task failed for good: no retry is left or its failure is not retried.
    TaskFailed {
        task_id: String,
        attempt: u32,
        failure_type: Option<&'static str>,
        evidence: Option<String>,
        /// What decided it, or the evidence.
        why: Option<String>,
        /// What the attempt changed (`core::facts::changes`), where herd recorded it.
        #[serde(skip_serializing_if = "Option::is_none")]
        changes: Option<String>,
        message: String,
    },
    /// Nothing runs and nothing is left to start.
    BatchEnded {
        counts: BTreeMap<String, usize>,
        exit_code: i32,
        message: String,
    },
}

/// What has been told: the waits still waiting that were told, and whether the batch's end was.
#[derive(Debug, Clone, Default)]
pub struct Notifications {
    told_waits: BTreeSet<WaitKey>,
    end_told: bool,
}

impl Notifications {
    /// Whether `wait` is one not told yet (what the next `observe` will tell of it).
    pub fn is_new(&self, wait: &WaitFact) -> bool {
        !self.told_waits.contains(&wait.key())
    }

    /// The events of one turn, in order: new waits, ended attempts, then the batch's end.
    pub fn observe(&mut self, turn: Turn<'_>) -> Vec<NotifyEvent> {
        let mut events = Vec::new();
        let waiting: BTreeSet<WaitKey> = turn.waits.iter().map(WaitFact::key).collect();
        for wait in turn.waits {
            if !self.told_waits.contains(&wait.key()) {
                events.push(prompt_waiting(wait));
            }
        }
        // A wait that ended is forgotten: the same prompt coming back is a new wait.
        self.told_waits = waiting;
        events.extend(turn.ends.iter().filter_map(ended));
        match turn.batch_end {
            Some(end) if !self.end_told => {
                self.end_told = true;
                events.push(batch_ended(end));
            }
            Some(_) => {}
            // Work started again (a retry, an added task): its end is a new one.
            None => self.end_told = false,
        }
        events
    }
}

fn prompt_waiting(wait: &WaitFact) -> NotifyEvent {
    let asks = wait.request.as_deref().unwrap_or("a prompt");
    let why = wait
        .reason
        .as_deref()
        .map(|r| format!(" ({r})"))
        .unwrap_or_default();
    NotifyEvent::PromptWaiting {
        task_id: wait.task_id.clone(),
        attempt: wait.attempt,
        waits_for: "permission",
        rule: wait.rule.clone(),
        request: wait.request.clone(),
        decision: wait.decision,
        reason: wait.reason.clone(),
        prompt: wait.prompt.clone(),
        prompt_id: wait.prompt_id.clone(),
        answers: wait.answers.clone(),
        message: format!("herd: {} waits for you: {asks}{why}", wait.task_id),
    }
}

/// The event for an attempt's end, if it is one to tell: questions, or a failure that stays.
fn ended(end: &EndFact) -> Option<NotifyEvent> {
    match end.status {
        TaskStatus::NeedsInput => Some(NotifyEvent::NeedsInput {
            task_id: end.task_id.clone(),
            attempt: end.attempt,
            waits_for: "answers",
            questions: end.questions.clone(),
            changes: end.changes.clone(),
            message: format!(
                "herd: {} needs your input: {}",
                end.task_id,
                match end.questions.as_slice() {
                    [] => "the agent asked for it".to_string(),
                    [one] => one.clone(),
                    [first, rest @ ..] => format!("{first} (+{} more)", rest.len()),
                }
            ),
        }),
        TaskStatus::Failed => {
            let failure_type = end.failure.map(FailureType::as_str);
            let why = end.why.clone().or_else(|| end.evidence.clone());
            let said = why.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
            Some(NotifyEvent::TaskFailed {
                task_id: end.task_id.clone(),
                attempt: end.attempt,
                failure_type,
                evidence: end.evidence.clone(),
                why,
                changes: end.changes.clone(),
                message: format!(
                    "herd: {} failed ({}){said}",
                    end.task_id,
                    failure_type.unwrap_or("failed")
                ),
            })
        }
        _ => None,
    }
}

fn batch_ended(end: BatchEnd) -> NotifyEvent {
    let counts: Vec<String> = end.counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    let message = format!("herd: the batch ended: {}", counts.join(", "));
    NotifyEvent::BatchEnded {
        counts: end.counts,
        exit_code: end.exit_code,
        message,
    }
}

/// What is wrong with a `notify` value: it must be an argv of strings, or null.
pub fn command_problem(value: &Value) -> Option<String> {
    let example = "like [\"sh\", \"-c\", \"curl -d @- ntfy.sh/my-topic\"]";
    match value {
        Value::Null => None,
        Value::Array(items) => {
            if let Some(bad) = items.iter().find(|i| !i.is_string()) {
                return Some(format!(
                    "\"notify\" must list strings only, {example}; found {bad}"
                ));
            }
            match items.first().and_then(Value::as_str) {
                None => Some(format!(
                    "\"notify\" is empty: give the command to run, {example}"
                )),
                Some(program) if program.trim().is_empty() => Some(format!(
                    "\"notify\" must start with the program to run, {example}"
                )),
                Some(_) => None,
            }
        }
        other => Some(format!(
            "\"notify\" must be a command as a list of strings, {example}; got {other}"
        )),
    }
}

/// The argv of a valid `notify` value, `None` when absent, null or not valid.
pub fn command(value: Option<&Value>) -> Option<Vec<String>> {
    let value = value?;
    if command_problem(value).is_some() {
        return None;
    }
    let items = value.as_array()?;
    Some(
        items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
    )
}

#[cfg(test)]
#[path = "notify_tests.rs"]
mod tests;
