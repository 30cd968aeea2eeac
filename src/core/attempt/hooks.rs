//! The attempt's side of the CLI's hooks (`core::hook`): every tool call judged by the guard
//! with the task's rules and switches, answered allow or deny there (and recorded with the
//! `hook` channel), or left to the CLI's own dialog; the end of a turn on an API error ends the
//! attempt with the failure its error class names.
//!
//! A refusal is final: the agent is told why and the request never runs. Headless, the
//! attempt ends `failed_permission_blocked` with the request and the reason, as a refused
//! dialog on screen would; with the operator present the agent goes on, told why.

use std::time::Duration;

use serde_json::Value;

use super::{Attempt, Effect, Note};
use crate::core::approval::{self, AnsweredBy, Approval, Channel};
use crate::core::classify::EndCause;
use crate::core::guard::{self, Decision, Policy, Request};
use crate::core::hook::{self, HookCall, ToolStage};

/// The rule name a hook's answer is recorded under (it has no screen rule).
pub(super) const HOOK_RULE: &str = "hook";

impl Attempt {
    pub(super) fn on_hook(&mut self, input: &Value, now: Duration, effects: &mut Vec<Effect>) {
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
            self.hooks_seen = true;
        }
        let output = match call {
            HookCall::Tool { stage, request } => self.on_tool_hook(stage, request, now, effects),
            HookCall::TurnFailed { error, details } => {
                if let Some(failure) = hook::failure_of(&error) {
                    let evidence = match details {
                        Some(details) => format!("StopFailure {error}: {details}"),
                        None => format!("StopFailure {error}"),
                    };
                    self.begin_ending(EndCause::HopelessRetry { failure, evidence }, now, effects);
                }
                None
            }
            HookCall::TurnEnded | HookCall::Other { .. } => None,
        };
        effects.push(Effect::HookReply {
            output: output.map_or_else(|| hook::NO_DECISION.to_string(), |v| v.to_string()),
        });
    }

    /// The guard's decision on a tool call, in the CLI's words (`None`: no decision).
    fn on_tool_hook(
        &mut self,
        stage: ToolStage,
        request: Request,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) -> Option<Value> {
        let decision = guard::decide(&request, &self.hook_policy(), &self.setup.guard.context);
        let answer = hook::tool_answer(stage, &decision)?;
        let refused = match &decision {
            Decision::Refuse { reason } => Some(format!("{request}: {reason}")),
            _ => None,
        };
        let option = match decision {
            Decision::Allow { .. } => "allow",
            _ => "deny",
        };
        let record = Approval {
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
        self.approvals.push(record.clone());
        effects.push(Effect::Note(Note::Approval(Box::new(record))));
        if let Some(evidence) = refused
            && self.setup.permission_wait.is_some()
        {
            let evidence = format!("refused through the hook: {evidence}");
            self.begin_ending_after_hook_answer(
                EndCause::PermissionBlocked { evidence },
                now,
                effects,
            );
        }
        Some(answer)
    }

    /// The task's rules, and the switch of its plain "yes" rule (or its "don't ask again"
    /// rule) when herd may answer that by itself: what the guard allows through the hook is
    /// what it would let herd answer on screen.
    pub(super) fn hook_policy(&self) -> Policy {
        let prompts = &self.setup.profile.prompts;
        let switch_on = |name: &str| {
            prompts
                .iter()
                .position(|p| p.guarded && p.name == name)
                .is_some_and(|i| self.is_auto(i))
                .then(|| format!("auto_{name}"))
        };
        Policy {
            rules: self.setup.guard.rules.clone(),
            allow_unless_refused: switch_on(approval::ONCE_RULE).or_else(|| switch_on("press_p")),
        }
    }

    /// The CLI has called herd's hooks in this attempt.
    pub fn hooks_seen(&self) -> bool {
        self.hooks_seen
    }
}
