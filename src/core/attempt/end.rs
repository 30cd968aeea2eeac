//! How an attempt ends, as a part of it: the phase, the gentle or hard stop (exit keys, grace,
//! TERM, KILL), who ended it and what the attempt was doing then.

use std::time::Duration;

use crate::core::approval::Approval;
use crate::core::channel::effects::{Effect, InputReason, Note, StopSignal};
use crate::core::classify::{EndCause, Verdict};
use crate::core::operator::deciding_event::EndingScene;
use crate::core::task::FailureType;

/// Between TERM and KILL to the process group.
pub const KILL_AFTER: Duration = Duration::from_secs(3);
/// How long a CLI is given to take herd's refusal through a hook before herd stops it.
pub const HOOK_SETTLE: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EndStage {
    /// herd refused a tool call through a hook at `at` and waits for the CLI to take that
    /// answer before any signal: a hook killed before it answers is no decision.
    Settle {
        at: Duration,
    },
    /// Exit keys sent (or a natural exit awaited) at `at`.
    Grace {
        at: Duration,
    },
    Term {
        at: Duration,
    },
    Kill,
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Running,
    Ending { cause: EndCause, stage: EndStage },
    Done(Verdict),
}

/// The attempt's end, from running to its verdict.
#[derive(Debug, Clone)]
pub(super) struct Ending {
    phase: Phase,
    /// herd has acted to end the agent: an exit from now on is herd's doing.
    herd_ended: bool,
    /// The screen's tail when the agent was found idle (before the exit keys changed it).
    idle_tail: Option<Vec<String>>,
    /// What the attempt was doing when herd began to end it: the morning's "why".
    scene: Option<EndingScene>,
}

impl Ending {
    pub(super) fn new() -> Ending {
        Ending {
            phase: Phase::Running,
            herd_ended: false,
            idle_tail: None,
            scene: None,
        }
    }

    pub(super) fn running(&self) -> bool {
        self.phase == Phase::Running
    }

    pub(super) fn is_ending(&self) -> bool {
        matches!(self.phase, Phase::Ending { .. })
    }

    pub(super) fn verdict(&self) -> Option<&Verdict> {
        match &self.phase {
            Phase::Done(v) => Some(v),
            _ => None,
        }
    }

    pub(super) fn scene(&self) -> Option<&EndingScene> {
        self.scene.as_ref()
    }

    pub(super) fn idle_tail(&self) -> Option<&Vec<String>> {
        self.idle_tail.as_ref()
    }

    /// The screen's tail as the agent was found idle, kept for the verdict.
    pub(super) fn keep_idle_tail(&mut self, tail: Vec<String>) {
        self.idle_tail = Some(tail);
    }

    /// When the stop goes on to its next step, if it does.
    pub(super) fn deadline(&self, exit_grace: Duration) -> Option<Duration> {
        match &self.phase {
            Phase::Ending { stage, .. } => match stage {
                EndStage::Grace { at } => Some(*at + exit_grace),
                EndStage::Settle { at } => Some(*at + HOOK_SETTLE),
                EndStage::Term { at } => Some(*at + KILL_AFTER),
                EndStage::Kill => None,
            },
            Phase::Running | Phase::Done(_) => None,
        }
    }

    /// Begins the stop for `cause`: exit keys for a gentle end, TERM otherwise, nothing yet
    /// after a hook's refusal.
    pub(super) fn begin(
        &mut self,
        (cause, settle): (EndCause, bool),
        now: Duration,
        (scene, exit_keys): (EndingScene, Option<&str>),
        effects: &mut Vec<Effect>,
    ) {
        self.scene = Some(scene);
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
            if let Some(keys) = exit_keys {
                effects.push(Effect::Write {
                    bytes: keys.as_bytes().to_vec(),
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
        self.phase = Phase::Ending { cause, stage };
    }

    /// The stop's next step once its deadline passed: TERM, then KILL.
    pub(super) fn escalate(
        &mut self,
        now: Duration,
        exit_grace: Duration,
        effects: &mut Vec<Effect>,
    ) {
        let Phase::Ending { cause, stage } = &self.phase else {
            return;
        };
        if self
            .deadline(exit_grace)
            .is_none_or(|deadline| now < deadline)
        {
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
        self.phase = Phase::Ending {
            cause: cause.clone(),
            stage: next,
        };
    }

    /// Why the agent exited: before herd acted, it ended on its own and its status counts.
    pub(super) fn cause_at_exit(&self) -> EndCause {
        match &self.phase {
            Phase::Ending { cause, .. } if self.herd_ended => cause.clone(),
            Phase::Ending {
                cause: cause @ EndCause::Idle,
                ..
            } => cause.clone(),
            _ => EndCause::Exited,
        }
    }

    pub(super) fn finish(&mut self, verdict: Verdict) {
        self.phase = Phase::Done(verdict);
    }
}

/// An attempt that failed after the operator said No: the evidence says so first, where it read
/// as a bare `failed_incomplete`.
pub(super) fn name_the_operator_s_refusal(approvals: &[Approval], verdict: &mut Verdict) {
    let after_refusal = matches!(
        verdict.failure,
        Some(FailureType::Incomplete | FailureType::Process | FailureType::PermissionBlocked)
    );
    let Some(refusal) = approvals
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
