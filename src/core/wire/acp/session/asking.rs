//! The agent's permission requests: each judged and answered at once or kept for the operator,
//! every answer recorded, refusals kept as denials.

use std::time::Duration;

use serde_json::Value;

use super::{Action, Answer, Session, Waiting};
use crate::core::guard::{Decision, Request};
use crate::core::wire::acp::permission::{self, Choice, PermissionOption};
use crate::core::wire::acp::rpc;
use crate::core::wire::acp::transcript::Shown;

impl Session {
    pub(super) fn on_permission(&mut self, id: Value, params: &Value, at: Duration) -> Vec<Action> {
        let tool_call = params.get("toolCall").cloned().unwrap_or(Value::Null);
        if let Some(id) = tool_call.get("toolCallId").and_then(Value::as_str) {
            self.watch.asked(id);
        }
        let request = Some(permission::request_of(&tool_call));
        let options = permission::ordered(&permission::options_of(params));
        let (decision, choice) = permission::decide(request.as_ref(), &options, &self.setup.policy);
        let title = tool_call
            .get("title")
            .and_then(Value::as_str)
            .map(str::to_string);
        match choice {
            Choice::Select(option) => {
                let asking = Asking { id, request, title };
                self.answer(asking, decision, Some(option), "auto", at)
            }
            Choice::Cancel => {
                let asking = Asking { id, request, title };
                self.answer(asking, decision, None, "auto", at)
            }
            Choice::Wait => {
                let mut actions = Vec::new();
                if let Some(old) = self.waiting.take() {
                    // A new request replaces the one waiting: that one is answered `cancelled`.
                    let (asking, decision) = old.into_parts();
                    actions.extend(self.answer(asking, decision, None, "auto", at));
                }
                let shown = Shown::Permission {
                    request: describe(request.as_ref(), &tool_call),
                    decision: decision.to_string(),
                    options: options.iter().map(option_label).collect(),
                };
                self.waiting = Some(Waiting {
                    id,
                    request,
                    decision,
                    options,
                    title,
                });
                actions.push(Action::Show(shown));
                actions
            }
        }
    }

    /// The operator's Enter on a waiting request: its `allow_once`, never a broader option.
    pub fn operator_accept(&mut self, at: Duration) -> Vec<Action> {
        let Some(waiting) = self
            .waiting
            .take_if(|w| w.options.iter().any(|o| o.kind == "allow_once"))
        else {
            return Vec::new();
        };
        let once = waiting
            .options
            .iter()
            .find(|o| o.kind == "allow_once")
            .cloned();
        let (asking, decision) = waiting.into_parts();
        self.answer(asking, decision, once, "operator", at)
    }

    pub(super) fn answer(
        &mut self,
        asking: Asking,
        decision: Decision,
        option: Option<PermissionOption>,
        by: &'static str,
        at: Duration,
    ) -> Vec<Action> {
        let Asking { id, request, title } = asking;
        let reply = match &option {
            Some(option) => permission::selected(&option.id),
            None => permission::cancelled(),
        };
        let kind = option.as_ref().map_or("cancelled", |o| o.kind.as_str());
        let answer = format!("{by}: {kind} — {decision}");
        let record = Answer {
            at,
            by,
            request: request.clone(),
            decision,
            option: kind.to_string(),
            title,
        };
        if let (Some(_), Some(request)) = (record.refusal(), &request) {
            self.denials.push(request.clone());
        }
        self.answers.push(record);
        let request = request.map_or_else(|| "(unread request)".to_string(), |r| r.to_string());
        vec![
            Action::Send(rpc::response(&id, reply)),
            Action::Show(Shown::Answered { request, answer }),
        ]
    }
}

impl Answer {
    /// Why the request was refused: the guard's refusal, or the operator's reject option.
    pub fn refusal(&self) -> Option<String> {
        match (self.by, &self.decision) {
            ("auto", Decision::Refuse { .. }) => Some(self.decision.to_string()),
            ("operator", _) if self.option.starts_with("reject") => {
                Some(format!("{} by the operator", self.option))
            }
            _ => None,
        }
    }
}

/// A request being answered: its JSON-RPC id, what herd read in it and the agent's title.
pub(super) struct Asking {
    pub(super) id: Value,
    pub(super) request: Option<Request>,
    pub(super) title: Option<String>,
}

impl Waiting {
    /// The request and the guard's decision on it, to answer it.
    pub(super) fn into_parts(self) -> (Asking, Decision) {
        let asking = Asking {
            id: self.id,
            request: self.request,
            title: self.title,
        };
        (asking, self.decision)
    }
}

/// The request as the dialog shows it: the guard's reading, else the agent's title.
fn describe(request: Option<&Request>, tool_call: &Value) -> String {
    match request {
        // Written as a tool call, so that the dialog's reading is the same unread request.
        Some(request) if !request.is_read() => format!(
            "{}({})",
            crate::core::guard::tool_use::UNREAD_TOOL,
            request.unread_part().unwrap_or_default()
        ),
        Some(request) => request.to_string(),
        None => tool_call
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or("(a request herd cannot read)")
            .to_string(),
    }
}

/// `Allow once (Allow)`: herd's name for the kind, then the agent's.
fn option_label(option: &PermissionOption) -> String {
    let ours = match option.kind.as_str() {
        "allow_once" => "Allow once",
        "allow_always" => "Allow always",
        "reject_once" => "Reject once",
        "reject_always" => "Reject always",
        other => other,
    };
    format!("{ours} ({})", option.name)
}
