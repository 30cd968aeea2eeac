//! Tool calls that ran without asking herd: when a reported call has run (`completed` or
//! `failed`, not `in_progress`, which codex-acp reports before asking) with no permission
//! request, it is judged as the request would have been. One the policy would not have allowed
//! by itself ends the session; read-only kinds pass unless refused or named by a rule.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{Action, Session};
use crate::core::guard::{self, Decision, Policy};
use crate::core::wire::acp::outcome::Outcome;
use crate::core::wire::acp::permission;

/// The outcome kind of a session stopped for a tool call that ran without asking.
pub const UNASKED: &str = "tool_ran_without_asking";

/// Tool call kinds that change nothing: herd's policy lets them run unasked.
const READ_ONLY_KINDS: [&str; 3] = ["read", "search", "think"];

/// The session's tool calls as the agent reported them, by id, and which it asked about.
#[derive(Debug, Default)]
pub(super) struct ToolWatch {
    calls: HashMap<String, Watched>,
}

#[derive(Debug, Default)]
struct Watched {
    /// The call's fields, later updates over earlier ones.
    fields: Map<String, Value>,
    asked: bool,
    judged: bool,
}

impl ToolWatch {
    /// The agent asked about this call (`session/request_permission`'s `toolCall.toolCallId`).
    pub(super) fn asked(&mut self, tool_call_id: &str) {
        self.calls
            .entry(tool_call_id.to_string())
            .or_default()
            .asked = true;
    }

    /// A `tool_call` or `tool_call_update` merged into its call; the call's fields are returned
    /// once it has run unasked.
    pub(super) fn saw(&mut self, update: &Value) -> Option<Value> {
        let kind = update.get("sessionUpdate").and_then(Value::as_str)?;
        if kind != "tool_call" && kind != "tool_call_update" {
            return None;
        }
        let id = update.get("toolCallId").and_then(Value::as_str)?;
        let watched = self.calls.entry(id.to_string()).or_default();
        for (key, value) in update.as_object()? {
            if !value.is_null() {
                watched.fields.insert(key.clone(), value.clone());
            }
        }
        let status = watched.fields.get("status").and_then(Value::as_str);
        let ran = matches!(status, Some("completed" | "failed"));
        if !ran || watched.asked || watched.judged {
            return None;
        }
        watched.judged = true;
        Some(Value::Object(watched.fields.clone()))
    }
}

impl Session {
    /// A tool call that ran unasked: nothing when the policy would have allowed it, else the
    /// session ends with it as evidence.
    pub(super) fn on_unasked_tool(&mut self, call: &Value) -> Vec<Action> {
        let request = permission::request_of(call);
        let kind = call.get("kind").and_then(Value::as_str).unwrap_or("other");
        let read_only = READ_ONLY_KINDS.contains(&kind);
        let policy = self.unasked_policy(read_only);
        let decision = guard::decide(&request, &policy, &self.setup.policy.guard.context);
        // The agent's own reading and planning is often in a shape herd does not read.
        let own_work =
            read_only && !request.is_read() && !matches!(decision, Decision::Refuse { .. });
        if decision.is_allow() || own_work {
            return Vec::new();
        }
        let what = if request.is_read() {
            request.to_string()
        } else {
            call.get("title")
                .and_then(Value::as_str)
                .map_or_else(|| request.to_string(), |t| format!("{t:?}"))
        };
        let message =
            format!("the agent ran {what} without asking: its permission mode is not herd's");
        self.unasked.push(message.clone());
        let mut outcome = Outcome::failed(UNASKED, &message);
        // A number in the command (`sleep 500`) is no HTTP status.
        outcome.status = None;
        let mut actions = self.cancel();
        actions.push(self.finish(outcome));
        actions
    }

    /// The policy for an unasked call: the task's, read-only kinds as if its switch were on.
    fn unasked_policy(&self, read_only: bool) -> Policy {
        let policy = &self.setup.policy;
        let switch = if policy.auto_always {
            Some(permission::ALWAYS_SWITCH)
        } else if policy.auto_once {
            Some(permission::ONCE_SWITCH)
        } else if read_only {
            Some("read-only")
        } else {
            None
        };
        Policy {
            rules: policy.guard.rules.clone(),
            allow_unless_refused: switch.map(str::to_string),
        }
    }
}
