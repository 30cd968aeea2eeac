//! What the control socket asks of the engine beyond the dashboard's actions (`control`):
//! the prompts waiting for the operator by id and their answers, a task added or its operator
//! fields changed (validated like the file, then written by the tasks file's writer like any
//! change), a task brought into the run and started, a pane's screen as text.
//!
//! An answer names the prompt it answers by its id (`core::prompt_id`): it goes to that
//! dialog only while that very wait lasts, never to whatever shows in its place.

use color_eyre::eyre::Result;
use serde_json::{Map, Value};

use super::Engine;
use super::control::{ControlOutcome, done, refused};
use crate::core::attempt::{Attempt, Event, WaitingPrompt};
use crate::core::dialog;
use crate::core::guard::Decision;
use crate::core::taskfile::{HERD_OWNED, TaskFile};
use crate::run::clock::Now;
use crate::run::validate;

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

impl Engine {
    /// The prompt waiting for the operator in task `index`'s attempt, if one waits.
    pub(super) fn waiting_prompt(&self, index: usize) -> Option<PromptInfo> {
        let live = self.live_for_task(index)?;
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

    /// Every prompt waiting for the operator, in task order.
    pub(super) fn waiting_prompts(&self) -> Vec<PromptInfo> {
        let mut tasks: Vec<usize> = self.attempts.live().map(|(_, l)| l.task).collect();
        tasks.sort_unstable();
        tasks
            .into_iter()
            .filter_map(|t| self.waiting_prompt(t))
            .collect()
    }

    /// Answers the prompt `prompt_id` if it still waits (recorded as the API's answer).
    pub fn answer_prompt(
        &mut self,
        prompt_id: &str,
        answer: ApiAnswer,
        now: Now,
    ) -> Result<std::result::Result<String, AnswerRefused>> {
        let now = self.turn(now);
        let stale = || {
            Ok(Err(AnswerRefused::Stale(format!(
                "no prompt {prompt_id} waits: it was answered or went away (prompts.list shows \
                 what waits now)"
            ))))
        };
        let Some(live) = self
            .attempts
            .live()
            .map(|(_, live)| live)
            .find(|l| l.prompts.is_current(prompt_id) && l.attempt.waiting().is_some())
        else {
            return stale();
        };
        let (index, task_id) = (live.task, live.task_id.clone());
        let Some((_, keys)) = offered(&live.attempt)
            .into_iter()
            .find(|(a, _)| *a == answer)
        else {
            return Ok(Err(AnswerRefused::NotOffered(format!(
                "prompt {prompt_id} does not offer {}",
                answer.as_str()
            ))));
        };
        let event = match keys {
            Keys::Rule(rule) => Event::ApiAnswer {
                rule: Some(rule),
                name: String::new(),
                keys: Vec::new(),
            },
            Keys::Reply { name, bytes } => Event::ApiAnswer {
                rule: None,
                name: name.to_string(),
                keys: bytes.to_vec(),
            },
        };
        tracing::info!(
            task_id,
            prompt_id,
            answer = answer.as_str(),
            "answered through the control socket"
        );
        self.send(index, event, now)?;
        Ok(Ok(format!("{prompt_id} answered: {}", answer.as_str())))
    }

    /// Adds `task` (a task object, as in the file) at the end of the tasks file: checked like
    /// the file (`herd validate`'s problems of that task refuse it), then taken in like an
    /// operator's edit and written by the writer. A run limited by `--only` takes it in.
    pub fn add_task(&mut self, task: Map<String, Value>, now: Now) -> Result<Added> {
        let now = self.turn(now);
        if let Some(problem) = self.tasks_file_problem() {
            return Ok(Added::Refused(format!(
                "the tasks file does not parse ({problem}); fix it, then add the task"
            )));
        }
        let task_id = task
            .get("task_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !task_id.is_empty() && self.tasks.store.file().task_index(&task_id).is_some() {
            return Ok(Added::Invalid(vec![format!(
                "task_id {task_id:?} is already in the tasks file"
            )]));
        }
        let text = self.tasks.store.text_with_task(&Value::Object(task));
        let problems = match TaskFile::parse(&text) {
            Ok(candidate) => self.problems_of(&candidate, &task_id),
            Err(problems) => problems.iter().map(ToString::to_string).collect(),
        };
        if !problems.is_empty() || task_id.is_empty() {
            let mut problems = problems;
            if problems.is_empty() {
                problems.push("the task has no task_id".to_string());
            }
            return Ok(Added::Invalid(problems));
        }
        match self.tasks.store.merge_own(&text) {
            Ok(merged) => {
                // Asked for by name: a run limited by `--only` takes it in.
                if !self.tasks.opts.only.is_empty() {
                    self.tasks.opts.only.push(task_id.clone());
                }
                tracing::info!(task_id, "task added through the control socket");
                self.out.events.push(super::EngineEvent::TasksFileChanged {
                    summary: merged.to_string(),
                });
                self.carry_out(&merged)?;
                self.fill(now)?;
                Ok(Added::Added { task_id })
            }
            Err(problems) => Ok(Added::Invalid(
                problems.iter().map(ToString::to_string).collect(),
            )),
        }
    }

    /// `herd validate`'s problems of task `task_id` in `file` (a version of the file that is
    /// not on disk), one line each, without a place in the file: the lines and columns would be
    /// those of that version.
    fn problems_of(&self, file: &TaskFile, task_id: &str) -> Vec<String> {
        let checks = validate::Checks {
            profiles: Some(&self.tasks.profiles),
            hosts: self.hosts.set(),
            base_dir: self.tasks.store.base_dir(),
            runs_dir: &self.tasks.opts.runs_dir,
        };
        let path = self.tasks.store.path();
        validate::check(file, &checks)
            .iter()
            .filter(|p| p.task_id().is_none_or(|id| id == task_id))
            .map(|p| without_place(&p.line(path), path))
            .collect()
    }

    /// Changes task `index`'s operator fields (any field but `task_id` and those herd writes as
    /// it runs; `prompt` stands for `prompt_template`): checked like the file, then written like
    /// any change. They apply from the task's next attempt.
    pub fn update_task(
        &mut self,
        index: usize,
        patch: &Map<String, Value>,
    ) -> Result<std::result::Result<ControlOutcome, Vec<String>>> {
        let Some((task_id, _)) = self.task_label(index) else {
            return Ok(Ok(ControlOutcome::Refused("no such task".into())));
        };
        fn field(key: &str) -> &str {
            if key == "prompt" {
                "prompt_template"
            } else {
                key
            }
        }
        let owned: Vec<&str> = patch
            .keys()
            .map(|k| field(k))
            .filter(|k| *k == "task_id" || *k == "ran_on" || HERD_OWNED.contains(k))
            .collect();
        if !owned.is_empty() {
            return Ok(Ok(ControlOutcome::Refused(format!(
                "{} {} herd's to write, not an operator field",
                owned.join(", "),
                if owned.len() == 1 { "is" } else { "are" }
            ))));
        }
        // The task as it would be, checked on its own like a file holding only it.
        let mut object = self
            .tasks
            .store
            .file()
            .task_object(index)
            .cloned()
            .unwrap_or_default();
        for (key, value) in patch {
            match value {
                Value::Null => object.shift_remove(field(key)),
                other => object.insert(field(key).to_string(), other.clone()),
            };
        }
        let defaults = Value::Object(self.tasks.store.file().defaults());
        let alone = serde_json::json!({ "defaults": defaults, "tasks": [Value::Object(object)] })
            .to_string();
        let problems = match TaskFile::parse(&alone) {
            Ok(candidate) => self.problems_of(&candidate, &task_id),
            Err(problems) => problems.iter().map(ToString::to_string).collect(),
        };
        if !problems.is_empty() {
            return Ok(Err(problems));
        }
        let file = self.tasks.store.file_mut();
        for (key, value) in patch {
            let value = (!value.is_null()).then(|| value.clone());
            file.set_field_unseen(index, field(key), value);
        }
        // A start not launched yet goes with the task as it is now.
        self.withdraw_starts(Some(index));
        let when = if self.attempts.has_task(index) {
            "from its next attempt"
        } else {
            "for its next attempt"
        };
        let names: Vec<&str> = patch.keys().map(|k| field(k)).collect();
        tracing::info!(
            task_id,
            fields = names.join(","),
            "task changed through the control socket"
        );
        Ok(Ok(ControlOutcome::Done(format!(
            "{task_id}: {} saved {when}",
            names.join(", ")
        ))))
    }

    /// Brings task `index` into this run and starts it when a slot is free: a run limited by
    /// `--only` takes it in, a disabled task is enabled, a failed or cancelled one is pending
    /// again (`retry_now`).
    pub fn run_task(&mut self, index: usize, now: Now) -> Result<ControlOutcome> {
        let Some((task_id, _)) = self.task_label(index) else {
            return refused("no such task");
        };
        if self.tasks.store.file().is_removed(index) {
            return refused(format!("{task_id} was removed from the tasks file"));
        }
        let mut notes = Vec::new();
        if !self.tasks.opts.only.is_empty() && !self.tasks.opts.only.contains(&task_id) {
            self.tasks.opts.only.push(task_id.clone());
            notes.push("taken into this run");
        }
        if !self.tasks.store.file().tasks()[index].enabled {
            self.tasks
                .store
                .file_mut()
                .set_field(index, "enabled", Value::Bool(true));
            notes.push("enabled");
        }
        if self.attempts.has_task(index) {
            return done(format!("{task_id} is running"));
        }
        let outcome = self.retry_now(index, now)?;
        match (outcome, notes.is_empty()) {
            (outcome, true) => Ok(outcome),
            (ControlOutcome::Done(m), false) => done(format!("{m} ({})", notes.join(", "))),
            (ControlOutcome::Refused(m) | ControlOutcome::Stale(m), false) => {
                refused(format!("{m} ({})", notes.join(", ")))
            }
        }
    }

    /// Task `index`'s pane as text: (rows, cols, the visible rows joined by newlines), while an
    /// attempt of it runs.
    pub(super) fn screen_text(&self, index: usize) -> Option<(u16, u16, String)> {
        let live = self.live_for_task(index)?;
        let screen = live.attempt.screen();
        let (rows, cols) = screen.size();
        let text = screen
            .visible_rows()
            .iter()
            .map(|r| r.trim_end())
            .collect::<Vec<_>>()
            .join("\n");
        Some((rows, cols, text))
    }
}

/// `FILE:LINE:COL: message` (or `FILE: message`) as `message`.
pub(super) fn without_place(line: &str, path: &std::path::Path) -> String {
    let Some(rest) = line.strip_prefix(&path.display().to_string()) else {
        return line.to_string();
    };
    let rest = rest.trim_start_matches(|c: char| c == ':' || c.is_ascii_digit());
    rest.trim_start().to_string()
}
