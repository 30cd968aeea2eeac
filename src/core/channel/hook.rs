//! The CLI's hooks (`core::hook`) as an approval channel: every tool call judged by the guard
//! with the task's rules and switches, answered allow or deny there (and recorded with the
//! `hook` channel), or left to the CLI's own dialog; the end of a turn on an API error ends the
//! attempt with the failure its error class names.
//!
//! A refusal is final: the agent is told why and the request never runs. Headless, the
//! attempt ends `failed_permission_blocked` with the request and the reason, as a refused
//! dialog on screen would; with the operator present the agent goes on, told why.

use std::time::Duration;

use serde_json::Value;

use super::effects::Effect;
use super::{EndRequest, Judge, record};
use crate::core::approval::{AnsweredBy, Approval, Channel};
use crate::core::classify::EndCause;
use crate::core::guard::{self, Decision, Request};
use crate::core::wire::hook::{self, HookCall, ToolStage};

/// The rule name a hook's answer is recorded under (it has no screen rule).
pub const HOOK_RULE: &str = "hook";

/// What herd knows of the CLI's hooks in this attempt.
#[derive(Debug, Clone, Default)]
pub struct HookChannel {
    /// The CLI has called herd's hooks: its tool calls are decided there, and a tool dialog
    /// still on screen is one the hook left to the operator.
    seen: bool,
}

/// herd's answer to one hook call, and what it means for the attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct HookAnswer {
    /// The JSON text to answer the call with (`{}`: no decision).
    pub output: String,
    pub end: Option<EndRequest>,
}

impl HookChannel {
    /// The CLI has called herd's hooks in this attempt.
    pub fn seen(&self) -> bool {
        self.seen
    }

    /// One hook call: judged, recorded in `approvals` when herd answered it.
    pub fn handle(
        &mut self,
        input: &Value,
        judge: Judge<'_>,
        now: Duration,
        approvals: &mut Vec<Approval>,
        effects: &mut Vec<Effect>,
    ) -> HookAnswer {
        let call = hook::read(input);
        // A CLI whose hooks decide approvals (Claude's): its dialogs on screen are the ones the
        // hook left to the operator. Gemini's hook only refuses; its approvals stay on screen.
        if !matches!(
            call,
            HookCall::Tool {
                stage: ToolStage::BeforeTool,
                ..
            }
        ) {
            self.seen = true;
        }
        let (output, end) = match call {
            HookCall::Tool { stage, request } => {
                tool_call(stage, request, judge, now, approvals, effects)
            }
            HookCall::TurnFailed { error, details } => {
                let end = hook::failure_of(&error).map(|failure| {
                    let evidence = match details {
                        Some(details) => format!("StopFailure {error}: {details}"),
                        None => format!("StopFailure {error}"),
                    };
                    EndRequest::Now(EndCause::HopelessRetry { failure, evidence })
                });
                (None, end)
            }
            HookCall::TurnEnded | HookCall::Other { .. } => (None, None),
        };
        HookAnswer {
            output: output.map_or_else(|| hook::NO_DECISION.to_string(), |v| v.to_string()),
            end,
        }
    }
}

/// The guard's decision on a tool call, in the CLI's words (`None`: no decision), and the end
/// a refusal brings headless.
fn tool_call(
    stage: ToolStage,
    request: Request,
    judge: Judge<'_>,
    now: Duration,
    approvals: &mut Vec<Approval>,
    effects: &mut Vec<Effect>,
) -> (Option<Value>, Option<EndRequest>) {
    let decision = guard::decide(&request, &judge.policy(), &judge.guard.context);
    let Some(answer) = hook::tool_answer(stage, &decision) else {
        return (None, None);
    };
    let refused = match &decision {
        Decision::Refuse { reason } => Some(format!("{request}: {reason}")),
        _ => None,
    };
    let option = match decision {
        Decision::Allow { .. } => "allow",
        _ => "deny",
    };
    let approval = Approval {
        at: now,
        by: AnsweredBy::Herd,
        channel: Channel::Hook,
        rule: HOOK_RULE.to_string(),
        keys: String::new(),
        request: Some(request),
        decision: Some(decision),
        option: Some(option.to_string()),
        title: Some(stage.as_str().to_string()),
    };
    record(approval, approvals, effects);
    let end = refused.filter(|_| judge.headless).map(|evidence| {
        let evidence = format!("refused through the hook: {evidence}");
        EndRequest::AfterAnswer(EndCause::PermissionBlocked { evidence })
    });
    (Some(answer), end)
}
