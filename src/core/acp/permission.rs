//! `session/request_permission` as the guard's request, and which of the offered options herd
//! picks by itself.
//!
//! Owns reading the tool call an agent asks about into a [`Request`] (its kind, the exact
//! command, path or URL from the structured input) and mapping the guard's decision onto the
//! agent's options: allow → `allow_once` (`allow_always` only under `auto_press_p`, which the
//! guard grants only for what it does not refuse), refuse → `reject_once`, ask → the operator.
//! Pure: no I/O, no clock.

use agent_client_protocol_schema::v1::{
    RequestPermissionOutcome, RequestPermissionResponse, SelectedPermissionOutcome,
};
use serde_json::{Value, json};

use super::wire::to_json;

use crate::core::approval::GuardSetup;
use crate::core::guard::{self, Decision, Policy, Request, RequestKind};

/// The policy switch that allows what the guard does not refuse, answering "once".
pub const ONCE_SWITCH: &str = "auto_press_1";
/// The switch that allows the same, answering "always" where the agent offers it.
pub const ALWAYS_SWITCH: &str = "auto_press_p";

/// One option the agent offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionOption {
    pub id: String,
    pub name: String,
    /// `allow_once`, `allow_always`, `reject_once`, `reject_always` (or another the agent uses).
    pub kind: String,
}

/// The guard's setup plus the task's switches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionPolicy {
    pub guard: GuardSetup,
    pub auto_once: bool,
    pub auto_always: bool,
}

/// What herd does with one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Answer with this option now.
    Select(PermissionOption),
    /// The guard refused and the agent offers no way to reject: the request is cancelled.
    Cancel,
    /// Wait for the operator.
    Wait,
}

/// The options in the order herd shows them (allow once, allow always, reject once, reject
/// always, then any other), so the operator's keys mean the same for every agent.
pub fn ordered(options: &[PermissionOption]) -> Vec<PermissionOption> {
    let rank = |kind: &str| match kind {
        "allow_once" => 0,
        "allow_always" => 1,
        "reject_once" => 2,
        "reject_always" => 3,
        _ => 4,
    };
    let mut sorted = options.to_vec();
    sorted.sort_by_key(|o| rank(&o.kind));
    sorted
}

/// The options of a `session/request_permission`'s params.
pub fn options_of(params: &Value) -> Vec<PermissionOption> {
    let list = params.get("options").and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .filter_map(|option| {
            let text = |key: &str| option.get(key).and_then(Value::as_str).map(str::to_string);
            Some(PermissionOption {
                id: text("optionId")?,
                name: text("name").unwrap_or_default(),
                kind: text("kind").unwrap_or_default(),
            })
        })
        .collect()
}

/// The request a tool call asks about; `None` when nothing in it says what it would do.
pub fn request_of(tool_call: &Value) -> Option<Request> {
    let text = |value: Option<&Value>, key: &str| {
        value
            .and_then(|v| v.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
            .filter(|s| !s.trim().is_empty())
    };
    let raw = tool_call.get("rawInput");
    let kind = tool_call
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("other");
    let title = text(Some(tool_call), "title");
    let location = tool_call
        .get("locations")
        .and_then(Value::as_array)
        .and_then(|l| l.first())
        .and_then(|l| l.get("path"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let path = || {
        ["file_path", "path", "absolute_path", "notebook_path"]
            .iter()
            .find_map(|key| text(raw, key))
            .or_else(|| location.clone())
    };
    let kind = match kind {
        // Gemini CLI sends no rawInput for its shell tool; its title is the command itself.
        "execute" => command_of(raw)
            .or_else(|| {
                raw.is_none()
                    .then(|| title.clone())
                    .flatten()
                    .map(|t| unquoted(&t))
            })
            .map(|command| RequestKind::Shell { command }),
        "edit" | "delete" | "move" => path().map(|path| RequestKind::Edit { path }),
        "read" => path().map(|path| RequestKind::Read { path }),
        "fetch" => text(raw, "url").map(|url| RequestKind::Fetch { url }),
        _ => None,
    };
    let kind = kind.or_else(|| {
        // A tool herd has no kind for: its name (the title) and first text input.
        let name = title.clone()?;
        let input = raw
            .and_then(Value::as_object)
            .and_then(|o| o.values().find_map(Value::as_str).map(str::to_string))
            .unwrap_or_default();
        Some(RequestKind::Tool { name, input })
    })?;
    Some(Request::new(kind))
}

/// The command of an `execute` call: a string, or an argv (Codex's `["bash", "-lc", "…"]` is
/// the script itself).
fn command_of(raw: Option<&Value>) -> Option<String> {
    let command = raw?.get("command").or_else(|| raw?.get("cmd"))?;
    match command {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Array(parts) => {
            let parts: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            match parts.as_slice() {
                [shell, flag, script] if is_shell(shell) && flag.ends_with('c') => {
                    Some((*script).to_string())
                }
                [] => None,
                parts => Some(parts.iter().map(|p| quote(p)).collect::<Vec<_>>().join(" ")),
            }
        }
        _ => None,
    }
}

/// A title in backticks (`` `npm test` ``) without them.
fn unquoted(title: &str) -> String {
    let trimmed = title.trim();
    trimmed
        .strip_prefix('`')
        .and_then(|t| t.strip_suffix('`'))
        .unwrap_or(trimmed)
        .to_string()
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(name, "bash" | "sh" | "zsh" | "dash")
}

fn quote(part: &str) -> String {
    let plain = !part.is_empty()
        && part
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        part.to_string()
    } else {
        format!("'{}'", part.replace('\'', r"'\''"))
    }
}

/// The guard's decision on a request (an unreadable one is the operator's), and what herd
/// answers.
pub fn decide(
    request: Option<&Request>,
    options: &[PermissionOption],
    policy: &PermissionPolicy,
) -> (Decision, Choice) {
    let Some(request) = request else {
        let reason = "the agent's request names no command, path or tool herd could judge";
        return (
            Decision::Ask {
                reason: reason.into(),
            },
            Choice::Wait,
        );
    };
    let switch = if policy.auto_always {
        Some(ALWAYS_SWITCH)
    } else if policy.auto_once {
        Some(ONCE_SWITCH)
    } else {
        None
    };
    let guard_policy = Policy {
        rules: policy.guard.rules.clone(),
        allow_unless_refused: switch.map(str::to_string),
    };
    let decision = guard::decide(request, &guard_policy, &policy.guard.context);
    let find = |kind: &str| options.iter().find(|o| o.kind == kind).cloned();
    let choice = match &decision {
        Decision::Allow { .. } => {
            let always = policy.auto_always.then(|| find("allow_always")).flatten();
            match always.or_else(|| find("allow_once")) {
                Some(option) => Choice::Select(option),
                None => Choice::Wait,
            }
        }
        Decision::Refuse { .. } => find("reject_once")
            .or_else(|| find("reject_always"))
            .map_or(Choice::Cancel, Choice::Select),
        Decision::Ask { .. } => Choice::Wait,
    };
    (decision, choice)
}

/// The answer to the agent's request.
pub fn selected(option_id: &str) -> Value {
    let outcome = SelectedPermissionOutcome::new(option_id.to_string());
    to_json(&RequestPermissionResponse::new(
        RequestPermissionOutcome::Selected(outcome),
    ))
}

/// The answer when no option is taken (the turn is being cancelled).
pub fn cancelled() -> Value {
    to_json(&RequestPermissionResponse::new(
        RequestPermissionOutcome::Cancelled,
    ))
}

/// A request as Claude's `permission_denials` entry (`tool_name` + `tool_input`), which the
/// stream reader turns back into the same request.
pub fn as_denial(request: &Request) -> Value {
    let (tool, input) = match &request.kind {
        RequestKind::Shell { command } => ("Bash", json!({"command": command})),
        RequestKind::Edit { path } => ("Edit", json!({"file_path": path})),
        RequestKind::Write { path } => ("Write", json!({"file_path": path})),
        RequestKind::Read { path } => ("Read", json!({"file_path": path})),
        RequestKind::Fetch { url } => ("WebFetch", json!({"url": url})),
        RequestKind::Tool { name, input } => (name.as_str(), json!({"input": input})),
        RequestKind::Unknown => ("tool", json!({})),
    };
    json!({"tool_name": tool, "tool_input": input})
}

#[cfg(test)]
#[path = "permission_tests.rs"]
mod tests;
