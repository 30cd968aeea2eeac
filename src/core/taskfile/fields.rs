//! Reading one task object into a `TaskSpec`, with a `Problem` for every field that is missing or
//! of the wrong kind, each pointing at the offending value.
//!
//! Checks only what one task says about itself; what needs the whole file (unique `task_id`s,
//! repeated keys) is `taskfile`'s. Must not stop at the first problem: a wrong field is reported
//! and its default used, so every problem of a file is listed in one go.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Location, Problem};
use crate::core::json_pos::{PositionIndex, pointer_token};
use crate::core::task::{
    Completion, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SEC, FailureType, MAX_ATTEMPTS,
    MAX_RETRIES_LIMIT, MAX_TIMEOUT_SEC, MAX_WAIT_SEC, PermissionRules, RetryMode, TaskSpec,
    TaskStatus,
};
use crate::core::template;

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
    let prompt_template = r.string("prompt_template", "a string", true);
    r.template("prompt_template", prompt_template.as_deref());
    let prompt_file = r.string(
        "prompt_file",
        "a string (the path of a file holding the prompt)",
        false,
    );
    match (
        object.contains_key("prompt_template"),
        object.contains_key("prompt_file"),
    ) {
        (false, false) => r.missing(
            "prompt_template",
            "missing \"prompt_template\": give the prompt to send, or \"prompt_file\" with the \
             path of a file holding it",
        ),
        (true, true) => r.at_field(
            "prompt_file",
            "has both \"prompt_template\" and \"prompt_file\": keep only one of them".into(),
        ),
        _ => {}
    }
    let args = r.args();
    if !args.is_empty() && !object.contains_key("prompt_file") {
        r.at_field(
            "args",
            "\"args\" fills $ARGUMENTS, $1, $2... of a \"prompt_file\"; this task has no \
             prompt_file (use \"inputs\" and {placeholders} with prompt_template)"
                .into(),
        );
    }
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
        timeout_sec: r
            .whole(
                "timeout_sec",
                1,
                MAX_TIMEOUT_SEC,
                &format!("a whole number of seconds from 1 to {MAX_TIMEOUT_SEC} (30 days)"),
            )
            .unwrap_or(DEFAULT_TIMEOUT_SEC),
        max_retries: r
            .count(
                "max_retries",
                MAX_RETRIES_LIMIT,
                &format!("a whole number from 0 to {MAX_RETRIES_LIMIT}"),
            )
            .unwrap_or(DEFAULT_MAX_RETRIES),
        permission_policy,
        permission_rules,
        inputs: r
            .map(
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
            .unwrap_or_default(),
        prompt_template,
        prompt_file,
        args,
        command,
        env: r.env(),
        completion_marker,
        completion,
        retry_mode,
        resume_message,
        retry_on: r.retry_on(),
        idle_sec: r.seconds("idle_sec"),
        permission_wait_sec: r.seconds("permission_wait_sec"),
        wait_for_quota_reset: r.boolean("wait_for_quota_reset").unwrap_or(false),
        worktree: r.boolean("worktree").unwrap_or(false),
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
        attempts: r
            .count(
                "attempts",
                MAX_ATTEMPTS,
                &format!("a whole number from 0 to {MAX_ATTEMPTS}"),
            )
            .unwrap_or(0),
        result: r.result(),
        retry_at: r.timestamp("retry_at"),
    };
    (spec, r.problems)
}

struct Reader<'a> {
    ctx: &'a TaskContext<'a>,
    object: &'a Map<String, Value>,
    problems: Vec<Problem>,
}

impl Reader<'_> {
    fn location(&self, pointer: &str) -> Option<Location> {
        let positions = self.ctx.positions;
        positions
            .value(pointer)
            .or_else(|| positions.value(self.ctx.pointer))
    }

    /// `pointer`: where in the document the problem is; the task's field it names is kept.
    fn push(&mut self, pointer: &str, location: Option<Location>, message: String) {
        let field = pointer
            .strip_prefix(self.ctx.pointer)
            .and_then(|rest| rest.strip_prefix('/'))
            .and_then(|rest| rest.split('/').next())
            .filter(|key| !key.is_empty())
            .map(|key| key.replace("~1", "/").replace("~0", "~"));
        self.problems.push(Problem {
            location,
            task_id: self.ctx.task_id.map(str::to_string),
            field,
            message: format!("{}: {message}", self.ctx.label),
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

    /// An object whose every value passes `item`.
    fn map<T>(
        &mut self,
        key: &str,
        expected: &str,
        item_expected: &str,
        item: impl Fn(&Value) -> Option<T>,
    ) -> Option<BTreeMap<String, T>> {
        let value = self.object.get(key)?;
        let Some(members) = value.as_object() else {
            self.wrong_field(key, expected, value);
            return None;
        };
        let mut out = BTreeMap::new();
        for (name, member) in members {
            match item(member) {
                Some(v) => {
                    out.insert(name.clone(), v);
                }
                None => {
                    let pointer = format!(
                        "{}/{}/{}",
                        self.ctx.pointer,
                        pointer_token(key),
                        pointer_token(name)
                    );
                    self.wrong(
                        &pointer,
                        &format!("\"{key}.{name}\""),
                        item_expected,
                        member,
                    );
                }
            }
        }
        Some(out)
    }

    /// Environment values are templates too (`launch` renders them).
    fn env(&mut self) -> BTreeMap<String, String> {
        let env = self.map(
            "env",
            "an object of strings like {\"NAME\": \"value\"}",
            "a string",
            |v| v.as_str().map(str::to_string),
        );
        let env = env.unwrap_or_default();
        for (name, value) in &env {
            if let Err(error) = template::placeholders(value) {
                let pointer = format!("{}/env/{}", self.ctx.pointer, pointer_token(name));
                let location = self.location(&pointer);
                self.push(&pointer, location, format!("\"env.{name}\": {error}"));
            }
        }
        env
    }

    /// `auto_<rule>` switches and `allow`/`ask`/`deny` rule lists; anything else is a problem.
    fn permission_policy(&mut self) -> (BTreeMap<String, bool>, PermissionRules) {
        let mut switches = BTreeMap::new();
        let mut rules = PermissionRules::default();
        let Some(value) = self.object.get("permission_policy") else {
            return (switches, rules);
        };
        let Some(members) = value.as_object() else {
            self.wrong_field(
                "permission_policy",
                "an object of switches like {\"auto_press_1\": true}",
                value,
            );
            return (switches, rules);
        };
        for (name, member) in members {
            let pointer = format!(
                "{}/permission_policy/{}",
                self.ctx.pointer,
                pointer_token(name)
            );
            let list = match name.as_str() {
                "allow" => Some(&mut rules.allow),
                "ask" => Some(&mut rules.ask),
                "deny" => Some(&mut rules.deny),
                _ => None,
            };
            if let Some(list) = list {
                let items: Option<Vec<String>> = member.as_array().and_then(|items| {
                    items
                        .iter()
                        .map(|i| i.as_str().map(str::to_string))
                        .collect()
                });
                let Some(items) = items else {
                    self.wrong(
                        &pointer,
                        &format!("\"permission_policy.{name}\""),
                        "a list of rules like [\"Bash(npm test:*)\", \"Edit(src/**)\"]",
                        member,
                    );
                    continue;
                };
                let mut problems = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    if let Err(e) = crate::core::guard::Rule::parse(item) {
                        problems.push((format!("{pointer}/{i}"), e.to_string()));
                    }
                }
                *list = items;
                for (at, message) in problems {
                    let location = self.location(&at);
                    self.push(
                        &at,
                        location,
                        format!("\"permission_policy.{name}\": {message}"),
                    );
                }
                continue;
            }
            if !name.starts_with("auto_") {
                let location = self
                    .ctx
                    .positions
                    .key(&pointer)
                    .or_else(|| self.location(&pointer));
                self.push(
                    &pointer,
                    location,
                    format!(
                        "\"permission_policy\" switch \"{name}\" does nothing: switches are named \
                         \"auto_<prompt rule>\", e.g. \"auto_press_1\", and rule lists \
                         \"allow\", \"ask\", \"deny\""
                    ),
                );
                // Kept (it is reported) so rewriting the policy does not lose it.
                if let Some(b) = member.as_bool() {
                    switches.insert(name.clone(), b);
                }
                continue;
            }
            match member.as_bool() {
                Some(b) => {
                    switches.insert(name.clone(), b);
                }
                None => self.wrong(
                    &pointer,
                    &format!("\"permission_policy.{name}\""),
                    "true or false",
                    member,
                ),
            }
        }
        (switches, rules)
    }

    /// A list whose every item passes `item`; `None` if the field is absent or not a list.
    fn list<T>(
        &mut self,
        key: &str,
        expected: &str,
        item_expected: &str,
        item: impl Fn(&Value) -> Option<T>,
    ) -> Option<Vec<Option<T>>> {
        let value = self.object.get(key)?;
        let Some(items) = value.as_array() else {
            self.wrong_field(key, expected, value);
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, element) in items.iter().enumerate() {
            let parsed = item(element);
            if parsed.is_none() {
                let pointer = format!("{}/{}/{i}", self.ctx.pointer, pointer_token(key));
                let shown = format!("\"{key}\" item {}", i + 1);
                self.wrong(&pointer, &shown, item_expected, element);
            }
            out.push(parsed);
        }
        Some(out)
    }

    fn command(&mut self) -> Option<Vec<String>> {
        let expected = "a non-empty list of strings like [\"mycli\", \"{rendered_prompt}\"]";
        let items = self.list("command", expected, "a string", |v| {
            v.as_str().map(str::to_string)
        })?;
        if items.is_empty()
            && let Some(value) = self.object.get("command")
        {
            self.wrong_field("command", expected, value);
            return None;
        }
        for (i, arg) in items.iter().enumerate() {
            if let Some(Err(error)) = arg.as_deref().map(template::placeholders) {
                let pointer = format!("{}/command/{i}", self.ctx.pointer);
                let location = self.location(&pointer);
                self.push(
                    &pointer,
                    location,
                    format!("\"command\" item {}: {error}", i + 1),
                );
            }
        }
        items.into_iter().collect()
    }

    /// `args`: strings for a command file's `$ARGUMENTS` and `$1`, `$2`, ...
    fn args(&mut self) -> Vec<String> {
        let items = self.list(
            "args",
            "a list of strings like [\"src/lib.rs\", \"fix the panic\"]",
            "a string",
            |v| v.as_str().map(str::to_string),
        );
        items.unwrap_or_default().into_iter().flatten().collect()
    }

    fn completion(&mut self) -> Option<Completion> {
        let value = self.object.get("completion")?;
        let completion = value.as_str().and_then(Completion::parse);
        if completion.is_none() {
            let names = Completion::ALL
                .map(|c| format!("\"{}\"", c.as_str()))
                .join(", ");
            self.wrong_field("completion", &format!("one of {names}"), value);
        }
        completion
    }

    fn retry_mode(&mut self) -> RetryMode {
        let Some(value) = self.object.get("retry_mode") else {
            return RetryMode::default();
        };
        match value.as_str().and_then(RetryMode::parse) {
            Some(mode) => mode,
            None => {
                self.wrong_field("retry_mode", "\"restart\" or \"resume\"", value);
                RetryMode::default()
            }
        }
    }

    fn retry_on(&mut self) -> Option<Vec<FailureType>> {
        let names = FailureType::ALL.map(FailureType::as_str).join(", ");
        let items = self.list(
            "retry_on",
            &format!("a list of failure types from {names}"),
            &format!("one of {names}"),
            |v| v.as_str().and_then(FailureType::parse),
        )?;
        items.into_iter().collect()
    }

    fn status(&mut self) -> Option<TaskStatus> {
        let value = self.object.get("status")?;
        let status = value.as_str().and_then(TaskStatus::parse);
        if status.is_none() {
            let names = TaskStatus::ALL.map(TaskStatus::as_str).join(", ");
            self.wrong_field("status", &format!("one of {names}"), value);
        }
        status
    }

    fn result(&mut self) -> Option<Value> {
        match self.object.get("result")? {
            Value::Null => None,
            value @ Value::Object(_) => Some(value.clone()),
            value => {
                self.wrong_field("result", "an object or null", value);
                None
            }
        }
    }
}

#[cfg(test)]
#[path = "bounds_tests.rs"]
mod bounds_tests;
