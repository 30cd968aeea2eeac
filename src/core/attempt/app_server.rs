//! The attempt's side of Codex's app server (`core::app_server`): every approval the server
//! asks of its clients is judged by the guard with the task's rules and switches, as a hook
//! call is: what the floor or a deny rule refuses is declined, what the task allows is
//! accepted (both recorded with the `app_server` channel), the rest gets no answer from herd
//! and the TUI's own dialog stays for the operator. Once herd is connected, the TUI's dialogs
//! are the structured channel's: herd never types an answer into one (`prompts`). A final
//! API error with a class ends the attempt with the failure it names.
//!
//! A refusal is final: Codex is told no and the request never runs. Headless, the attempt
//! ends `failed_permission_blocked` with the request and the reason, as a refused dialog on
//! screen would; with the operator present the agent goes on. Pure, like `attempt`.

use std::time::Duration;

use serde_json::Value;

use super::{Attempt, Effect, Note};
use crate::core::app_server::{self, Answer, ServerMessage};
use crate::core::approval::{AnsweredBy, Approval, Channel};
use crate::core::classify::EndCause;
use crate::core::guard::{self, Decision, Request, RequestKind};

/// The rule name an app server answer is recorded under (it has no screen rule).
pub(super) const APP_SERVER_RULE: &str = "app_server";

/// Why herd leaves an edit whose files it did not see to the operator.
const UNSEEN_FILES: &str = "herd did not see which files this edit changes";

/// What herd knows of the app server's requests in this attempt.
#[derive(Debug, Clone, Default)]
pub(super) struct AppServerState {
    /// herd is connected and subscribed: the TUI's dialogs are this channel's.
    pub(super) connected: bool,
    /// The files of each `fileChange` item seen starting, by item id.
    file_changes: std::collections::HashMap<String, Vec<Request>>,
    /// Requests left to the operator and not resolved yet.
    pub(super) undecided: Vec<Undecided>,
    /// When herd last answered a request: the TUI draws that request's dialog a moment after
    /// (it got the request when herd did) and takes it down once the server says resolved.
    last_answer_at: Option<Duration>,
}

/// A request of the server herd left to the operator.
#[derive(Debug, Clone)]
pub(super) struct Undecided {
    id: Value,
    request: Request,
    decision: Decision,
    since: Duration,
}

/// Why herd gives no answer to a request of another kind (permissions, user input).
const NOT_HERDS: &str = "herd answers command and edit approvals only";

/// How long after herd's answer a dialog drawn by the TUI is the one herd answered.
const ANSWERED_DIALOG_WINDOW: Duration = Duration::from_secs(1);

impl Attempt {
    /// herd's client of the app server is connected (initialized and subscribing).
    pub(super) fn on_app_server_connected(&mut self) {
        self.app_server.connected = true;
    }

    pub(super) fn on_app_server(
        &mut self,
        message: &Value,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        match app_server::read(message) {
            ServerMessage::CommandApproval { id, request, .. } => {
                self.judge_app_server_request(
                    &id,
                    app_server::COMMAND_APPROVAL,
                    &[request],
                    now,
                    effects,
                );
            }
            ServerMessage::FileChangeApproval { id, item_id } => {
                let changes = self
                    .app_server
                    .file_changes
                    .get(&item_id)
                    .cloned()
                    .unwrap_or_default();
                self.judge_app_server_request(
                    &id,
                    app_server::FILE_CHANGE_APPROVAL,
                    &changes,
                    now,
                    effects,
                );
            }
            ServerMessage::FileChangeStarted { item_id, changes } => {
                self.app_server.file_changes.insert(item_id, changes);
            }
            ServerMessage::Resolved { id } => {
                self.app_server.undecided.retain(|u| u.id != id);
            }
            ServerMessage::OtherQuestion { id, method } => {
                self.app_server.undecided.push(Undecided {
                    id,
                    request: Request::new(RequestKind::Tool {
                        name: method,
                        input: String::new(),
                    }),
                    decision: Decision::Ask {
                        reason: NOT_HERDS.to_string(),
                    },
                    since: now,
                });
            }
            ServerMessage::Failed {
                class: Some(failure),
                evidence,
            } => self.begin_ending(EndCause::HopelessRetry { failure, evidence }, now, effects),
            ServerMessage::Failed { class: None, .. } | ServerMessage::Other => {}
        }
    }

    /// The guard's decision on a request about `requests` (a command, or each file of an
    /// edit): accepted, declined, or left to the TUI's dialog.
    fn judge_app_server_request(
        &mut self,
        id: &Value,
        method: &str,
        requests: &[Request],
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        let (request, decision) = judge_all(requests, |r| {
            guard::decide(r, &self.hook_policy(), &self.setup.guard.context)
        });
        let answer = match &decision {
            Decision::Allow { .. } => Answer::Accept,
            Decision::Refuse { .. } => Answer::Decline,
            Decision::Ask { .. } => {
                self.app_server.undecided.push(Undecided {
                    id: id.clone(),
                    request: request.clone(),
                    decision: decision.clone(),
                    since: now,
                });
                self.hold_drawn_dialog(request, decision, now, effects);
                return;
            }
        };
        self.app_server.last_answer_at = Some(now);
        effects.push(Effect::AppServerSend {
            text: app_server::answer(id, answer).to_string(),
        });
        let refused = match &decision {
            Decision::Refuse { reason } => Some(format!("{request}: {reason}")),
            _ => None,
        };
        let record = Approval {
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
        self.approvals.push(record.clone());
        effects.push(Effect::Note(Note::Approval(Box::new(record))));
        if let Some(evidence) = refused
            && self.setup.permission_wait.is_some()
        {
            let evidence = format!("refused through the app server: {evidence}");
            self.begin_ending_after_hook_answer(
                EndCause::PermissionBlocked { evidence },
                now,
                effects,
            );
        }
    }

    /// A guarded dialog on screen now is the one herd just answered through the server (none
    /// of its requests waits for the operator): it goes away by itself, and is not held.
    pub(super) fn dialog_answered_through_app_server(&self, now: Duration) -> bool {
        self.app_server.connected
            && self.app_server.undecided.is_empty()
            && self
                .app_server
                .last_answer_at
                .is_some_and(|at| now <= at + ANSWERED_DIALOG_WINDOW)
    }

    /// A request left to the operator whose dialog the TUI drew before herd read the request
    /// (and which was let go as the one herd had just answered): held for the operator now.
    fn hold_drawn_dialog(
        &mut self,
        request: Request,
        decision: Decision,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        if self.waiting.is_some() {
            return;
        }
        let prompts = &self.setup.profile.prompts;
        let Some(sighting) = self
            .sightings
            .iter()
            .find(|s| prompts[s.rule].guarded)
            .cloned()
        else {
            return;
        };
        let text = format!(
            "{} [{}]",
            sighting.text,
            crate::core::approval::describe(Some(&request), Some(&decision))
        );
        effects.push(Effect::Note(Note::WaitingForOperator {
            rule: prompts[sighting.rule].name.clone(),
            text,
        }));
        self.waiting = Some(super::WaitingPrompt {
            rule: sighting.rule,
            since: now,
            sighting,
            request: Some(request),
            decision: Some(decision),
        });
    }

    /// The app server's request herd left to the operator, the latest first: what the TUI's
    /// dialog on screen asks, exactly.
    pub(super) fn undecided_app_server_request(&self) -> Option<(Request, Decision)> {
        self.app_server
            .undecided
            .last()
            .map(|u| (u.request.clone(), u.decision.clone()))
    }

    /// Headless, when the first request herd left to the operator is due to end the attempt
    /// (`permission_wait` after it came), unless a dialog on screen holds it (then that
    /// dialog's own wait counts): a request whose dialog no screen rule knows still ends.
    pub(super) fn app_server_request_due_at(&self) -> Option<Duration> {
        let wait = self.setup.permission_wait?;
        if self.waiting.is_some() {
            return None;
        }
        self.app_server.undecided.first().map(|u| u.since + wait)
    }

    /// The evidence of the request nobody answered (see `app_server_request_due_at`).
    pub(super) fn overdue_app_server_request(&self, now: Duration) -> Option<String> {
        let due = self.app_server_request_due_at()?;
        let first = self.app_server.undecided.first()?;
        let wait = self.setup.permission_wait?;
        (now >= due).then(|| {
            format!(
                "{} unanswered for {} s through the app server",
                crate::core::approval::describe(Some(&first.request), Some(&first.decision)),
                wait.as_secs()
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
