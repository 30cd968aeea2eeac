//! How an attempt ends: the deadlines (timeout, unanswered prompt, turn over, idle), the gentle
//! or hard stop (exit keys, grace, TERM, KILL) and the verdict once the agent exited. A child of
//! `attempt` so it shares its state; it does not read the agent's output (`observe`).

use std::time::Duration;

use super::{Attempt, Effect, EndStage, InputReason, Note, Phase, StopSignal};
use crate::core::agent_log::AgentLogParser;
use crate::core::classify::{EndCause, EndFacts, ExitStatus, Verdict, classify};
use crate::core::deciding_event::{EndingScene, Unanswered};
use crate::core::detect;
use crate::core::stream::{self, StreamParser};
use crate::core::task::FailureType;

impl Attempt {
    pub(super) fn on_tick(&mut self, now: Duration, effects: &mut Vec<Effect>) {
        self.expire_gone_prompts(now);
        if self.phase == Phase::Running {
            self.resend_untaken_answer(now, effects);
            self.recheck_operator_answer(now, effects);
            if self.prompt_due_at().is_some_and(|due| now >= due) {
                let snapshot = self.screen.snapshot();
                self.update_prompts(&snapshot, now, effects);
            }
        }
        match self.phase.clone() {
            Phase::Running => {
                if now >= self.setup.timeout {
                    let cause = EndCause::Timeout {
                        after_sec: self.setup.timeout.as_secs(),
                    };
                    self.begin_ending(cause, now, effects);
                } else if let (Some(w), Some(wait)) = (&self.waiting, self.setup.permission_wait)
                    && now >= w.since + wait
                {
                    let name = &self.setup.profile.prompts[w.rule].name;
                    let note = w.guard_note();
                    let evidence = if note.is_empty() {
                        format!(
                            "prompt {name} unanswered for {} s: {}",
                            wait.as_secs(),
                            w.sighting.text
                        )
                    } else {
                        let dialog = w.sighting.text.lines().next().unwrap_or_default().trim();
                        format!(
                            "prompt {name} unanswered for {} s: {note} (the dialog: {dialog})",
                            wait.as_secs()
                        )
                    };
                    self.begin_ending(EndCause::PermissionBlocked { evidence }, now, effects);
                } else if let Some(evidence) = self.overdue_app_server_request(now) {
                    self.begin_ending(EndCause::PermissionBlocked { evidence }, now, effects);
                } else if self
                    .turn_settle()
                    .is_some_and(|settle| now >= self.last_change + settle)
                {
                    self.begin_ending(EndCause::AfterMarker, now, effects);
                } else if self.could_be_idle()
                    && (now >= self.last_change + self.setup.idle
                        || self.hopeless_idle_at.is_some_and(|at| now >= at))
                {
                    let rows = self.screen.visible_rows();
                    self.idle_tail = Some(detect::tail_rows(&rows, self.setup.profile.tail_rows));
                    self.begin_ending(EndCause::Idle, now, effects);
                }
            }
            Phase::Ending { cause, stage } => {
                let Some(deadline) = self.next_deadline() else {
                    return;
                };
                if now < deadline {
                    return;
                }
                self.herd_ended = true;
                let next = match stage {
                    EndStage::Settle { .. } | EndStage::Grace { .. } => {
                        effects.push(Effect::Signal(StopSignal::Term));
                        EndStage::Term { at: now }
                    }
                    EndStage::Term { .. } => {
                        effects.push(Effect::Signal(StopSignal::Kill));
                        EndStage::Kill
                    }
                    EndStage::Kill => EndStage::Kill,
                };
                self.phase = Phase::Ending { cause, stage: next };
            }
            Phase::Done(_) => {}
        }
    }

    pub(super) fn begin_ending(
        &mut self,
        cause: EndCause,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        self.start_ending(cause, now, false, effects);
    }

    /// Ends the attempt after a refusal given through a hook, which the CLI has yet to read:
    /// nothing is sent to it before `HOOK_SETTLE` (see `EndStage::Settle`).
    pub(super) fn begin_ending_after_hook_answer(
        &mut self,
        cause: EndCause,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        self.start_ending(cause, now, true, effects);
    }

    fn start_ending(
        &mut self,
        cause: EndCause,
        now: Duration,
        settle: bool,
        effects: &mut Vec<Effect>,
    ) {
        if !matches!(self.phase, Phase::Running) {
            return;
        }
        self.ending_scene = Some(self.scene_at(now));
        effects.push(Effect::Note(Note::Ending {
            reason: describe_cause(&cause),
        }));
        let gentle = matches!(
            cause,
            EndCause::AfterMarker | EndCause::Idle | EndCause::AfterResult | EndCause::AfterSignal
        );
        let stage = if settle {
            self.herd_ended = true;
            EndStage::Settle { at: now }
        } else if gentle {
            if let Some(keys) = &self.setup.profile.exit_keys {
                effects.push(Effect::Write {
                    bytes: keys.clone().into_bytes(),
                    reason: InputReason::ExitKeys,
                });
                self.herd_ended = true;
            }
            EndStage::Grace { at: now }
        } else {
            self.herd_ended = true;
            effects.push(Effect::Signal(StopSignal::Term));
            EndStage::Term { at: now }
        };
        self.waiting = None;
        self.unconfirmed = None;
        self.phase = Phase::Ending { cause, stage };
    }

    pub(super) fn on_exit(&mut self, exit: ExitStatus, effects: &mut Vec<Effect>) {
        // An agent that exits by itself before herd wrote its exit keys or sent a signal ended
        // on its own: its exit status counts, whatever herd was about to do.
        let cause = match &self.phase {
            Phase::Ending { cause, .. } if self.herd_ended => cause.clone(),
            Phase::Ending {
                cause: cause @ EndCause::Idle,
                ..
            } => cause.clone(),
            _ => EndCause::Exited,
        };
        let tail = match (&cause, &self.idle_tail) {
            (EndCause::Idle, Some(tail)) => tail.clone(),
            _ => detect::tail_rows(&self.screen.visible_rows(), self.setup.profile.tail_rows),
        };
        if let Some(parser) = self.stream.as_mut() {
            parser.finish();
        }
        let stream_facts = self.stream.as_ref().map(StreamParser::facts);
        if let Some(facts) = stream_facts {
            self.marker_seen = stream::result_has_marker(facts, &self.setup.marker);
        }
        let facts = EndFacts {
            cause,
            marker_seen: self.marker_seen,
            exit,
            tail: &tail,
            completion: self.setup.completion,
            marker_required: self.setup.marker_required,
            stream: stream_facts,
            signal: self.signal.as_ref(),
            agent_log: self.agent_log.as_ref().map(AgentLogParser::facts),
        };
        let mut verdict = classify(&facts, &self.setup.profile);
        self.name_the_operator_s_refusal(&mut verdict);
        effects.push(Effect::Note(Note::Verdict(verdict.clone())));
        self.phase = Phase::Done(verdict);
    }
}

impl Attempt {
    /// An attempt that failed after the operator's last answer said No to the agent ended
    /// because of it: the evidence says so first (`the operator refused Bash(npm test) (Esc);
    /// no completion marker …`), where it read as a bare `failed_incomplete`.
    fn name_the_operator_s_refusal(&self, verdict: &mut Verdict) {
        let after_refusal = matches!(
            verdict.failure,
            Some(FailureType::Incomplete | FailureType::Process | FailureType::PermissionBlocked)
        );
        let Some(refusal) = self
            .approvals
            .last()
            .filter(|a| after_refusal && a.is_operator_refusal())
        else {
            return;
        };
        let refused = refusal.refusal_text();
        verdict.evidence = Some(match verdict.evidence.take() {
            Some(evidence) => format!("{refused}; {evidence}"),
            None => refused,
        });
    }
}

impl Attempt {
    /// The prompt left waiting (and for how long) and the agent's last line, at `now`.
    fn scene_at(&self, now: Duration) -> EndingScene {
        let unanswered = self.waiting.as_ref().map(|w| Unanswered {
            asks: w.asks(),
            waited: now.saturating_sub(w.since),
        });
        EndingScene::of(&self.screen.visible_rows(), &self.setup.prompt, unanswered)
    }
}

fn describe_cause(cause: &EndCause) -> String {
    match cause {
        EndCause::Exited => "exited".into(),
        EndCause::AfterMarker => "completion marker seen".into(),
        EndCause::AfterResult => "the final result event came".into(),
        EndCause::AfterSignal => "the signal file was written".into(),
        EndCause::Idle => "idle at the input prompt".into(),
        EndCause::Timeout { after_sec } => format!("timeout after {after_sec} s"),
        EndCause::PermissionBlocked { evidence } => format!("permission blocked: {evidence}"),
        EndCause::HopelessRetry { evidence, .. } => format!("retrying in vain: {evidence}"),
        EndCause::Cancelled => "cancelled by the operator".into(),
    }
}
