//! `session/request_permission` as the guard's request, and the option herd picks: allow →
//! `allow_once` (`allow_always` only under `auto_press_p`), refuse → `reject_once`, ask → the
//! operator. Pure.

use agent_client_protocol_schema::v1::{
    RequestPermissionOutcome, RequestPermissionResponse, SelectedPermissionOutcome,
};
use serde_json::{Value, json};

use super::wire::to_json;

use crate::core::approval::GuardSetup;
use crate::core::guard::tool_use::{self, UNREAD_TOOL};
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

/// The options in herd's order, so the operator's keys mean the same for every agent.
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

pub use super::tool_call::request_of;

/// The guard's decision on a request, and what herd answers.
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

/// A request written by `as_denial`, read back as it was (a tool herd could not judge stays that
/// tool).
pub fn from_denial(tool_name: &str, tool_input: Option<&Value>) -> Request {
    let input = tool_input
        .and_then(|i| i.get("input"))
        .and_then(Value::as_str);
    match (Request::parse(tool_name), input) {
        (
            Some(Request {
                kind: RequestKind::Tool { .. },
                ..
            })
            | None,
            Some(input),
        ) => Request::new(RequestKind::Tool {
            name: tool_name.to_string(),
            input: input.to_string(),
        }),
        _ => tool_use::read(tool_name, tool_input),
    }
}

/// A request as Claude's `permission_denials` entry, which the stream reader reads back.
pub fn as_denial(request: &Request) -> Value {
    let (tool, input) = match &request.kind {
        RequestKind::Shell { command } => ("Bash", json!({"command": command})),
        RequestKind::Edit { path } => ("Edit", json!({"file_path": path})),
        RequestKind::Write { path } => ("Write", json!({"file_path": path})),
        RequestKind::Read { path } => ("Read", json!({"file_path": path})),
        RequestKind::Fetch { url } => ("WebFetch", json!({"url": url})),
        RequestKind::Tool { name, input } => (name.as_str(), json!({"input": input})),
        RequestKind::Unread { what } => (UNREAD_TOOL, json!({"what": what})),
    };
    json!({"tool_name": tool, "tool_input": input})
}

#[cfg(test)]
#[path = "permission_tests.rs"]
mod tests;
