//! Reading one task object into a `TaskSpec`, with a `Problem` for every wrong field (its default
//! used, so every problem of a file is listed in one go). Whole-file checks are `taskfile`'s;
//! `values` reads maps, lists and enumerations.

use serde_json::{Map, Value};

use super::{Location, Problem, defaults};
use crate::core::task::{
    DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SEC, MAX_ATTEMPTS, MAX_RETRIES_LIMIT, MAX_TIMEOUT_SEC,
    MAX_WAIT_SEC, TaskSpec, TaskStatus,
};
use crate::core::taskfile::json_pos::{PositionIndex, pointer_token};
use crate::core::taskfile::template;

/// Where one task is, and what to call it in messages.
pub(super) struct TaskContext<'a> {
    /// JSON pointer of the task object, e.g. `/tasks/3`.
    pub pointer: &'a str,
    /// `task "x"`, or `task #4` while its id is unknown.
    pub label: &'a str,
    /// The accepted id; `None` when the task cannot be represented.
    pub task_id: Option<&'a str>,
    pub positions: &'a PositionIndex,
}

/// A short, readable rendering of a wrong value for "got ..." in messages.
pub(super) fn describe(value: &Value) -> String {
    const MAX_CHARS: usize = 40;
    match value {
        Value::Array(items) if items.is_empty() => "an empty list".into(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
        Value::String(s) if s.chars().count() > MAX_CHARS => {
            let head: String = s.chars().take(MAX_CHARS).collect();
            format!("{}…", Value::String(head))
        }
        other => other.to_string(),
    }
}

/// Reads the task object `object`; the spec has defaults wherever a field is wrong or missing.
pub(super) fn read_task(
    ctx: &TaskContext<'_>,
    object: &Map<String, Value>,
) -> (TaskSpec, Vec<Problem>) {
    let mut r = Reader {
        ctx,
        object,
        problems: Vec::new(),
    };
    let agent = r.string(
        "agent",
        "a string naming an agent profile, e.g. \"claude\"",
        false,
    );
    if !object.contains_key("agent") {
        r.missing("agent", "missing \"agent\": name the agent profile that runs this task, e.g. \"agent\": \"claude\"");
    }
    let (prompt_template, prompt_file, args) = r.prompt();
    let completion = r.completion();
    let retry_mode = r.retry_mode();
    let resume_message = r.string("resume_message", "a non-empty string", false);
    let command = r.command();
    let completion_marker = r.string("completion_marker", "a non-empty string", false);
    r.template("completion_marker", completion_marker.as_deref());
    let (permission_policy, permission_rules) = r.permission_policy();
    let spec = TaskSpec {
        task_id: ctx.task_id.unwrap_or_default().to_string(),
        agent: agent.unwrap_or_default(),
        enabled: r.boolean("enabled").unwrap_or(true),
        cwd: r.string("cwd", "a non-empty string (a folder path)", false),
        timeout_sec: r.timeout_sec(),
        max_retries: r.max_retries(),
        permission_policy,
        permission_rules,
        inputs: r.inputs(),
        prompt_template,
        prompt_file,
        args,
        command,
        env: r.env(),
        completion_marker,
        completion,
        marker_instruction: r.boolean("marker_instruction").unwrap_or(true),
        retry_mode,
        resume_message,
        retry_on: r.retry_on(),
        idle_sec: r.seconds("idle_sec"),
        permission_wait_sec: r.seconds("permission_wait_sec"),
        wait_for_quota_reset: r.boolean("wait_for_quota_reset").unwrap_or(false),
        trust_folder: r.boolean("trust_folder"),
        acp_mode: r.string(
            "acp_mode",
            "a non-empty string (a session mode the ACP agent offers, e.g. \"default\")",
            false,
        ),
        worktree: r.boolean("worktree").unwrap_or(false),
        on_complete: r.on_complete(),
        host: r.string("host", "a host or group name of the hosts file", false),
        ran_on: r.string(
            "ran_on",
            "the name of the host the latest attempt ran on",
            false,
        ),
        lost_on: r.string(
            "lost_on",
            "the name of a host herd lost the connection to",
            false,
        ),
        status: r.status().unwrap_or(TaskStatus::Pending),
        attempts: r.attempt_count("attempts"),
        attempts_before_retry: r.attempt_count("attempts_before_retry"),
        result: r.result(),
        retry_at: r.timestamp("retry_at"),
    };
    (spec, r.problems)
}

impl Reader<'_> {
    /// The prompt: `prompt_template` or `prompt_file`, and a prompt file's `args`.
    fn prompt(&mut self) -> (Option<String>, Option<String>, Vec<String>) {
        let prompt_template = self.string("prompt_template", "a string", true);
        self.template("prompt_template", prompt_template.as_deref());
        let prompt_file = self.string(
            "prompt_file",
            "a string (the path of a file holding the prompt)",
            false,
        );
        match (
            self.object.contains_key("prompt_template"),
            self.object.contains_key("prompt_file"),
        ) {
            (false, false) => self.missing(
                "prompt_template",
                "missing \"prompt_template\": give the prompt to send, or \"prompt_file\" with the \
                 path of a file holding it",
            ),
            (true, true) => self.at_field(
                "prompt_file",
                "has both \"prompt_template\" and \"prompt_file\": keep only one of them".into(),
            ),
            _ => {}
        }
        let args = self.args();
        if !args.is_empty() && !self.object.contains_key("prompt_file") {
            self.at_field(
                "args",
                "\"args\" fills $ARGUMENTS, $1, $2... of a \"prompt_file\"; this task has no \
                 prompt_file (use \"inputs\" and {placeholders} with prompt_template)"
                    .into(),
            );
        }
        (prompt_template, prompt_file, args)
    }

    fn timeout_sec(&mut self) -> u64 {
        self.whole(
            "timeout_sec",
            1,
            MAX_TIMEOUT_SEC,
            &format!("a whole number of seconds from 1 to {MAX_TIMEOUT_SEC} (30 days)"),
        )
        .unwrap_or(DEFAULT_TIMEOUT_SEC)
    }

    fn max_retries(&mut self) -> u32 {
        self.count(
            "max_retries",
            MAX_RETRIES_LIMIT,
            &format!("a whole number from 0 to {MAX_RETRIES_LIMIT}"),
        )
        .unwrap_or(DEFAULT_MAX_RETRIES)
    }

    /// `inputs`: placeholder values, numbers and true/false read as their text.
    fn inputs(&mut self) -> std::collections::BTreeMap<String, String> {
        self.map(
            "inputs",
            "an object of placeholder values like {\"doc_url\": \"https://...\"}",
            "a string, a number or true/false",
            |v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            },
        )
        .unwrap_or_default()
    }

    /// `attempts` or `attempts_before_retry`: 0 when missing or wrong.
    fn attempt_count(&mut self, key: &str) -> u32 {
        self.count(
            key,
            MAX_ATTEMPTS,
            &format!("a whole number from 0 to {MAX_ATTEMPTS}"),
        )
        .unwrap_or(0)
    }
}

struct Reader<'a> {
    ctx: &'a TaskContext<'a>,
    object: &'a Map<String, Value>,
    problems: Vec<Problem>,
}

impl Reader<'_> {
    /// Where the value at `pointer` is: in the task, else in `defaults`, else the task's `{`.
    fn location(&self, pointer: &str) -> Option<Location> {
        let positions = self.ctx.positions;
        positions
            .value(pointer)
            .or_else(|| self.location_in_defaults(pointer))
            .or_else(|| positions.value(self.ctx.pointer))
    }

    /// Where the value at `pointer` is written in `defaults`, when the task does not write it.
    fn location_in_defaults(&self, pointer: &str) -> Option<Location> {
        let positions = self.ctx.positions;
        if positions.value(pointer).is_some() {
            return None;
        }
        defaults::pointer_in_defaults(self.ctx.pointer, pointer)
            .and_then(|in_defaults| positions.value(&in_defaults))
    }

    /// `pointer`: where in the document the problem is; the task's field it names is kept.
    fn push(&mut self, pointer: &str, location: Option<Location>, message: String) {
        let field = pointer
            .strip_prefix(self.ctx.pointer)
            .and_then(|rest| rest.strip_prefix('/'))
            .and_then(|rest| rest.split('/').next())
            .filter(|key| !key.is_empty())
            .map(|key| key.replace("~1", "/").replace("~0", "~"));
        // A wrong default is said once, of `defaults`.
        let from_defaults = location.is_some() && location == self.location_in_defaults(pointer);
        let label = if from_defaults {
            defaults::DEFAULTS_KEY
        } else {
            self.ctx.label
        };
        self.problems.push(Problem {
            location,
            task_id: self.ctx.task_id.map(str::to_string),
            field,
            message: format!("{label}: {message}"),
        });
    }

    /// A problem about the whole task, at its `{`: `key` is missing.
    fn missing(&mut self, key: &str, message: &str) {
        let location = self.ctx.positions.value(self.ctx.pointer);
        let pointer = format!("{}/{}", self.ctx.pointer, pointer_token(key));
        self.push(&pointer, location, message.to_string());
    }

    /// A problem at the value of `key`.
    fn at_field(&mut self, key: &str, message: String) {
        let pointer = format!("{}/{}", self.ctx.pointer, pointer_token(key));
        let location = self.location(&pointer);
        self.push(&pointer, location, message);
    }

    /// A problem at `pointer` inside the task, named `shown` (`"inputs.url"`, `"command" item 2`).
    fn wrong(&mut self, pointer: &str, shown: &str, expected: &str, got: &Value) {
        let location = self.location(pointer);
        self.push(
            pointer,
            location,
            format!("{shown} must be {expected}, got {}", describe(got)),
        );
    }

    fn wrong_field(&mut self, key: &str, expected: &str, got: &Value) {
        let pointer = format!("{}/{}", self.ctx.pointer, pointer_token(key));
        self.wrong(&pointer, &format!("\"{key}\""), expected, got);
    }

    fn string(&mut self, key: &str, expected: &str, allow_empty: bool) -> Option<String> {
        let value = self.object.get(key)?;
        match value.as_str() {
            Some(s) if allow_empty || !s.is_empty() => Some(s.to_string()),
            _ => {
                self.wrong_field(key, expected, value);
                None
            }
        }
    }

    /// An RFC 3339 time such as `2026-02-24T12:00:00Z`.
    fn timestamp(&mut self, key: &str) -> Option<jiff::Timestamp> {
        let expected = "a time like \"2026-02-24T12:00:00Z\"";
        let text = self.string(key, expected, false)?;
        match text.parse::<jiff::Timestamp>() {
            Ok(at) => Some(at),
            Err(_) => {
                let value = Value::String(text);
                self.wrong_field(key, expected, &value);
                None
            }
        }
    }

    fn template(&mut self, key: &str, text: Option<&str>) {
        if let Some(Err(error)) = text.map(template::placeholders) {
            self.at_field(key, format!("\"{key}\": {error}"));
        }
    }

    fn boolean(&mut self, key: &str) -> Option<bool> {
        let value = self.object.get(key)?;
        let b = value.as_bool();
        if b.is_none() {
            self.wrong_field(key, "true or false", value);
        }
        b
    }

    fn whole(&mut self, key: &str, min: u64, max: u64, expected: &str) -> Option<u64> {
        let value = self.object.get(key)?;
        let n = value.as_u64().filter(|n| (min..=max).contains(n));
        if n.is_none() {
            self.wrong_field(key, expected, value);
        }
        n
    }

    fn count(&mut self, key: &str, max: u32, expected: &str) -> Option<u32> {
        self.whole(key, 0, u64::from(max), expected)
            .and_then(|n| u32::try_from(n).ok())
    }

    /// A wait in seconds: above 0, at most `MAX_WAIT_SEC`.
    fn seconds(&mut self, key: &str) -> Option<f64> {
        let value = self.object.get(key)?;
        let n = value
            .as_f64()
            .filter(|n| n.is_finite() && *n > 0.0 && *n <= MAX_WAIT_SEC);
        if n.is_none() {
            self.wrong_field(
                key,
                &format!("a number of seconds above 0 and at most {MAX_WAIT_SEC} (30 days)"),
                value,
            );
        }
        n
    }
}

mod values;

#[cfg(test)]
mod bounds_tests;
