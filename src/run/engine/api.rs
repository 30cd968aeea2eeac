//! What the control socket asks of the engine beyond the dashboard's actions (`control`):
//! the prompts waiting for the operator by id and their answers, a task added or its operator
//! fields changed (validated like the file, then written by the tasks file's writer like any
//! change), a task brought into the run and started, a pane's screen as text.
//!
//! An answer names the prompt it answers by its id (`core::prompt_id`): it goes to that
//! dialog only while that very wait lasts, never to whatever shows in its place.

use super::attempts::{Attempts, LiveAttempt};
use crate::core::approval::AnsweredBy;
use crate::core::attempt::{Attempt, Event, WaitingPrompt};
use crate::core::guard::Decision;
use crate::core::guard::dialog;

/// A prompt waiting for the operator, as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInfo {
    pub prompt_id: String,
    pub task_id: String,
    pub attempt: u32,
    /// What it asks (`Bash(npm test)`), or `a prompt herd could not read`.
    pub request: String,
    /// The guard's decision (`ask`, `refuse`) and why; `None` for prompts that approve nothing.
    pub guard: Option<(String, String)>,
    /// The answers it takes: `approve`, `approve_always`, `deny`.
    pub options: Vec<ApiAnswer>,
    /// When it began to wait, RFC 3339.
    pub since: String,
}

/// An answer the API can give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiAnswer {
    /// Yes, this once (the profile's `press_1` rule).
    Approve,
    /// Yes, and don't ask again (the profile's `press_p` rule).
    ApproveAlways,
    /// No (Esc, or `n` on a typed yes/no question).
    Deny,
}

impl ApiAnswer {
    pub fn as_str(self) -> &'static str {
        match self {
            ApiAnswer::Approve => "approve",
            ApiAnswer::ApproveAlways => "approve_always",
            ApiAnswer::Deny => "deny",
        }
    }

    pub fn parse(text: &str) -> Option<ApiAnswer> {
        [
            ApiAnswer::Approve,
            ApiAnswer::ApproveAlways,
            ApiAnswer::Deny,
        ]
        .into_iter()
        .find(|a| a.as_str() == text)
    }
}

/// Why an answer by id was not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerRefused {
    /// No prompt with this id waits now: it was answered, went away, or never was.
    Stale(String),
    /// It waits, but does not take this answer.
    NotOffered(String),
}

/// What adding a task came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    Added {
        task_id: String,
    },
    /// The task was not added: each problem as `herd validate` words it.
    Invalid(Vec<String>),
    /// Not now: the tasks file on disk does not parse (the operator's edit would lose it).
    Refused(String),
}

/// The keys an answer sends to the waiting dialog: a rule of the profile, or keys of no rule.
enum Keys {
    Rule(usize),
    Reply {
        name: &'static str,
        bytes: &'static [u8],
    },
}

/// The answers the waiting prompt of `attempt` takes, each with its keys; the dashboard's rules
/// (`ui::prompt`): the profile's `press_1` / `press_p` rules matching the dialog now, and No
/// (Esc, or `n` Enter on a typed yes/no question).
fn offered(attempt: &Attempt) -> Vec<(ApiAnswer, Keys)> {
    let Some(waiting) = attempt.waiting() else {
        return Vec::new();
    };
    let profile = attempt.profile();
    let mut rules: Vec<usize> = attempt.sightings().iter().map(|s| s.rule).collect();
    rules.push(waiting.rule);
    let rule_named = |name: &str| {
        rules
            .iter()
            .copied()
            .find(|&r| profile.prompts.get(r).is_some_and(|p| p.name == name))
    };
    let mut out = Vec::new();
    if let Some(rule) = rule_named(crate::core::approval::ONCE_RULE) {
        out.push((ApiAnswer::Approve, Keys::Rule(rule)));
    }
    if let Some(rule) = rule_named("press_p") {
        out.push((ApiAnswer::ApproveAlways, Keys::Rule(rule)));
    }
    let no = if typed_yes_no(attempt, waiting) {
        Keys::Reply {
            name: "No (n)",
            bytes: b"n\r",
        }
    } else {
        Keys::Reply {
            name: "No (Esc)",
            bytes: b"\x1b",
        }
    };
    out.push((ApiAnswer::Deny, no));
    out
}

/// Whether the waiting prompt is a typed `(Y)es/(N)o` question (it takes `n` Enter, not Esc).
fn typed_yes_no(attempt: &Attempt, waiting: &WaitingPrompt) -> bool {
    let rows = attempt.screen().visible_rows();
    let spans = attempt
        .sightings()
        .iter()
        .map(|s| s.rows)
        .chain([waiting.sighting.rows]);
    let first = spans.clone().map(|r| r.0).min().unwrap_or(0);
    let last = spans.map(|r| r.1).max().unwrap_or(first);
    let below = (last + dialog::ROWS_BELOW).min(rows.len().saturating_sub(1));
    let shown = rows
        .get(first.saturating_sub(dialog::ROWS_ABOVE)..=below)
        .unwrap_or_default();
    dialog::read(shown).typed_yes_no
}

impl PromptInfo {
    /// The prompt waiting for the operator in `live`, if one waits.
    pub(super) fn of(live: &LiveAttempt) -> Option<PromptInfo> {
        let waiting = live.attempt.waiting()?;
        let prompt_id = live.prompts.current()?.to_string();
        let request = waiting.request.as_ref().map_or_else(
            || "a prompt herd could not read".to_string(),
            ToString::to_string,
        );
        let guard = waiting.decision.as_ref().map(|d| {
            let why = match d {
                Decision::Allow { rule } => rule.clone(),
                Decision::Ask { reason } | Decision::Refuse { reason } => reason.clone(),
            };
            (d.name().to_string(), why)
        });
        let since = jiff::SignedDuration::try_from(waiting.since)
            .ok()
            .and_then(|d| live.started_at.checked_add(d).ok())
            .unwrap_or(live.started_at);
        Some(PromptInfo {
            prompt_id,
            task_id: live.task_id.clone(),
            attempt: live.number,
            request,
            guard,
            options: offered(&live.attempt).into_iter().map(|(a, _)| a).collect(),
            since: since.to_string(),
        })
    }
}

/// The event that gives `answer` to the prompt `prompt_id`, if it still waits and takes that
/// answer (recorded as the API's), with the task it goes to.
pub(super) fn answer_event(
    attempts: &Attempts,
    prompt_id: &str,
    answer: ApiAnswer,
    by: AnsweredBy,
) -> Result<(usize, Event<'static>), AnswerRefused> {
    let Some(live) = (attempts.live().map(|(_, live)| live))
        .find(|l| l.prompts.is_current(prompt_id) && l.attempt.waiting().is_some())
    else {
        return Err(AnswerRefused::Stale(format!(
            "no prompt {prompt_id} waits: it was answered or went away (prompts.list shows \
             what waits now)"
        )));
    };
    let Some((_, keys)) = offered(&live.attempt)
        .into_iter()
        .find(|(a, _)| *a == answer)
    else {
        return Err(AnswerRefused::NotOffered(format!(
            "prompt {prompt_id} does not offer {}",
            answer.as_str()
        )));
    };
    let event = match keys {
        Keys::Rule(rule) => Event::ApiAnswer {
            by,
            rule: Some(rule),
            name: String::new(),
            keys: Vec::new(),
        },
        Keys::Reply { name, bytes } => Event::ApiAnswer {
            by,
            rule: None,
            name: name.to_string(),
            keys: bytes.to_vec(),
        },
    };
    let task_id = &live.task_id;
    let answer = answer.as_str();
    tracing::info!(
        task_id,
        prompt_id,
        answer,
        by = by.as_str(),
        "answered by prompt id"
    );
    Ok((live.task, event))
}

/// `FILE:LINE:COL: message` (or `FILE: message`) as `message`.
pub(super) fn without_place(line: &str, path: &std::path::Path) -> String {
    let Some(rest) = line.strip_prefix(&path.display().to_string()) else {
        return line.to_string();
    };
    let rest = rest.trim_start_matches(|c: char| c == ':' || c.is_ascii_digit());
    rest.trim_start().to_string()
}
