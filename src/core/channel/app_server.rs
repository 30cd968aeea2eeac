//! Codex's app server (`core::app_server`) as an approval channel: every approval the server
//! asks of its clients is judged by the guard with the task's rules and switches, as a hook
//! call is: what the floor or a deny rule refuses is declined, what the task allows is
//! accepted (both recorded with the `app_server` channel), the rest gets no answer from herd
//! and the TUI's own dialog stays for the operator. Once herd is connected, the TUI's dialogs
//! are the structured channel's: herd never types an answer into one (`prompts`). A final
//! API error with a class ends the attempt with the failure it names.
//!
//! A refusal is final: Codex is told no and the request never runs. Headless, the attempt
//! ends `failed_permission_blocked` with the request and the reason, as a refused dialog on
//! screen would; with the operator present the agent goes on. Pure, like the attempt.

use std::time::Duration;

use serde_json::Value;

use super::effects::Effect;
use super::{EndRequest, Judge, record};
use crate::core::approval::{self, AnsweredBy, Approval, Channel};
use crate::core::classify::EndCause;
use crate::core::guard::{self, Decision, Request, RequestKind};
use crate::core::wire::app_server::{self, Answer, ServerMessage};

/// The rule name an app server answer is recorded under (it has no screen rule).
pub const APP_SERVER_RULE: &str = "app_server";

/// Why herd leaves an edit whose files it did not see to the operator.
const UNSEEN_FILES: &str = "herd did not see which files this edit changes";

/// Why herd gives no answer to a request of another kind (permissions, user input).
const NOT_HERDS: &str = "herd answers command and edit approvals only";

/// How long after herd's answer a dialog drawn by the TUI is the one herd answered.
const ANSWERED_DIALOG_WINDOW: Duration = Duration::from_secs(1);

/// What herd knows of the app server's requests in this attempt.
#[derive(Debug, Clone, Default)]
pub struct AppServerChannel {
    /// herd is connected and subscribed: the TUI's dialogs are this channel's.
    connected: bool,
    /// The files of each `fileChange` item seen starting, by item id.
    file_changes: std::collections::HashMap<String, Vec<Request>>,
    /// Requests left to the operator and not resolved yet.
    undecided: Vec<Undecided>,
    /// When herd last answered a request: the TUI draws that request's dialog a moment after
    /// (it got the request when herd did) and takes it down once the server says resolved.
    last_answer_at: Option<Duration>,
}

/// A request of the server herd left to the operator.
#[derive(Debug, Clone)]
struct Undecided {
    id: Value,
    request: Request,
    decision: Decision,
    since: Duration,
}

/// What one message of the server means for the attempt.
#[derive(Debug, Clone, PartialEq)]
pub enum AppServerOutcome {
    Nothing,
    End(EndRequest),
    /// A request left to the operator: the TUI's dialog of it, if already drawn, is held.
    LeftToOperator {
        request: Request,
        decision: Decision,
    },
}

impl AppServerChannel {
    /// herd's client of the app server is connected (initialized and subscribing).
    pub fn connect(&mut self) {
        self.connected = true;
    }

    /// herd is connected and subscribed: the TUI's dialogs are this channel's.
    pub fn connected(&self) -> bool {
        self.connected
    }

    /// One message of the server: a request judged (answered, recorded in `approvals`, or left
    /// to the operator), a file change or resolution remembered, a final API error's end.
    pub fn handle(
        &mut self,
        message: &Value,
        judge: Judge<'_>,
        now: Duration,
        approvals: &mut Vec<Approval>,
        effects: &mut Vec<Effect>,
    ) -> AppServerOutcome {
        let (id, method, requests) = match app_server::read(message) {
            ServerMessage::CommandApproval { id, request, .. } => {
                (id, app_server::COMMAND_APPROVAL, vec![request])
            }
            ServerMessage::FileChangeApproval { id, item_id } => {
                let changes = self.file_changes.get(&item_id).cloned();
                (
                    id,
                    app_server::FILE_CHANGE_APPROVAL,
                    changes.unwrap_or_default(),
                )
            }
            ServerMessage::FileChangeStarted { item_id, changes } => {
                self.file_changes.insert(item_id, changes);
                return AppServerOutcome::Nothing;
            }
            ServerMessage::Resolved { id } => {
                self.undecided.retain(|u| u.id != id);
                return AppServerOutcome::Nothing;
            }
            ServerMessage::OtherQuestion { id, method } => {
                let request = Request::new(RequestKind::Tool {
                    name: method,
                    input: String::new(),
                });
                let decision = Decision::Ask {
                    reason: NOT_HERDS.to_string(),
                };
                self.undecided.push(Undecided {
                    id,
                    request,
                    decision,
                    since: now,
                });
                return AppServerOutcome::Nothing;
            }
            ServerMessage::Failed {
                class: Some(failure),
                evidence,
            } => {
                let cause = EndCause::HopelessRetry { failure, evidence };
                return AppServerOutcome::End(EndRequest::Now(cause));
            }
            ServerMessage::Failed { class: None, .. } | ServerMessage::Other => {
                return AppServerOutcome::Nothing;
            }
        };
        self.judge_request((&id, method, &requests), judge, now, approvals, effects)
    }

    /// The guard's decision on a request about `requests` (a command, or each file of an
    /// edit): accepted, declined, or left to the TUI's dialog.
    fn judge_request(
        &mut self,
        (id, method, requests): (&Value, &str, &[Request]),
        judge: Judge<'_>,
        now: Duration,
        approvals: &mut Vec<Approval>,
        effects: &mut Vec<Effect>,
    ) -> AppServerOutcome {
        let (request, decision) = judge_all(requests, |r| {
            guard::decide(r, &judge.policy(), &judge.guard.context)
        });
        let answer = match &decision {
            Decision::Allow { .. } => Answer::Accept,
            Decision::Refuse { .. } => Answer::Decline,
            Decision::Ask { .. } => {
                self.undecided.push(Undecided {
                    id: id.clone(),
                    request: request.clone(),
                    decision: decision.clone(),
                    since: now,
                });
                return AppServerOutcome::LeftToOperator { request, decision };
            }
        };
        self.last_answer_at = Some(now);
        effects.push(Effect::AppServerSend {
            text: app_server::answer(id, answer).to_string(),
        });
        let refused = match &decision {
            Decision::Refuse { reason } => Some(format!("{request}: {reason}")),
            _ => None,
        };
        let approval = Approval {
            at: now,
            by: AnsweredBy::Herd,
            channel: Channel::AppServer,
            rule: APP_SERVER_RULE.to_string(),
            keys: String::new(),
            request: Some(request),
            decision: Some(decision),
            option: Some(answer.as_str().to_string()),
            title: Some(method.to_string()),
        };
        record(approval, approvals, effects);
        match refused.filter(|_| judge.headless) {
            Some(evidence) => {
                let evidence = format!("refused through the app server: {evidence}");
                AppServerOutcome::End(EndRequest::AfterAnswer(EndCause::PermissionBlocked {
                    evidence,
                }))
            }
            None => AppServerOutcome::Nothing,
        }
    }

    /// A guarded dialog on screen now is the one herd just answered through the server (none
    /// of its requests waits for the operator): it goes away by itself, and is not held.
    pub fn answered_just_now(&self, now: Duration) -> bool {
        self.connected
            && self.undecided.is_empty()
            && self
                .last_answer_at
                .is_some_and(|at| now <= at + ANSWERED_DIALOG_WINDOW)
    }

    /// The server's request herd left to the operator, the latest first: what the TUI's
    /// dialog on screen asks, exactly (only while herd is connected).
    pub fn undecided_request(&self) -> Option<(Request, Decision)> {
        let last = self.undecided.last().filter(|_| self.connected)?;
        Some((last.request.clone(), last.decision.clone()))
    }

    /// Headless (`wait`), when the first request herd left to the operator is due to end the
    /// attempt (`wait` after it came), unless a dialog on screen holds it (`held`: then that
    /// dialog's own wait counts): a request whose dialog no screen rule knows still ends.
    pub fn request_due_at(&self, wait: Option<Duration>, held: bool) -> Option<Duration> {
        let wait = wait.filter(|_| !held)?;
        self.undecided.first().map(|u| u.since + wait)
    }

    /// The evidence of the request nobody answered (see `request_due_at`).
    pub fn overdue_request(
        &self,
        wait: Option<Duration>,
        held: bool,
        now: Duration,
    ) -> Option<String> {
        let due = self.request_due_at(wait, held)?;
        let first = self.undecided.first()?;
        (now >= due).then(|| {
            format!(
                "{} unanswered for {} s through the app server",
                approval::describe(Some(&first.request), Some(&first.decision)),
                wait.unwrap_or_default().as_secs()
            )
        })
    }
}

/// One decision for a request about several things (the files of one edit): the first
/// refusal stands, else the first doubt, else the allowance; the request it is about is
/// recorded with it. Nothing to judge (an edit whose files herd did not see) is asked.
fn judge_all(requests: &[Request], decide: impl Fn(&Request) -> Decision) -> (Request, Decision) {
    let judged: Vec<(Request, Decision)> =
        requests.iter().map(|r| (r.clone(), decide(r))).collect();
    let first = |pick: fn(&Decision) -> bool| judged.iter().find(|(_, d)| pick(d)).cloned();
    first(|d| matches!(d, Decision::Refuse { .. }))
        .or_else(|| first(|d| matches!(d, Decision::Ask { .. })))
        .or_else(|| judged.first().cloned())
        .unwrap_or_else(|| {
            (
                Request::unread(""),
                Decision::Ask {
                    reason: UNSEEN_FILES.to_string(),
                },
            )
        })
}
