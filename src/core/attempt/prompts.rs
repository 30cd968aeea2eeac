//! The prompt half of an attempt: which dialogs are on screen, what they ask, whether herd may
//! answer them by itself (the guard, through `approval`), holding the rest for the operator,
//! recording every answer, and sending an untaken answer again. A child of `attempt` so it
//! shares its state; pure like it.

use std::time::Duration;

use super::{
    ANSWER_RECHECK, Attempt, Effect, InputReason, MAX_RESENDS, Note, OperatorAnswered,
    PROMPT_SETTLE, Phase, RESEND_AFTER, Showing, Unconfirmed, WaitingPrompt,
};
use crate::core::approval::{self, AnsweredBy, Approval, Channel};
use crate::core::attempt::AutoInput;
use crate::core::classify::EndCause;
use crate::core::detect::{self, PromptSighting, ScreenView};
use crate::core::guard::{Decision, Request};
use crate::core::profile::PromptAnchor;
use crate::core::screen::Snapshot;

impl Attempt {
    /// Which dialogs the screen shows (`snapshot`, read at this change), and what to do about
    /// those that appeared.
    pub(super) fn update_prompts(
        &mut self,
        snapshot: &Snapshot,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        let view = ScreenView {
            rows: &snapshot.rows,
            cursor_row: snapshot.cursor_row,
            first_row_number: snapshot.first_row_number,
        };
        self.sightings = detect::find_prompts(&self.setup.profile, view);
        let was_showing: Vec<bool> = self
            .showing
            .iter()
            // A dialog still waiting out its rule's wait was not looked at yet: it is not one
            // another rule's sighting of the same dialog has already handled.
            .map(|s| s.is_some_and(|s| s.gone_since.is_none() && !s.pending))
            .collect();
        let mut appeared = self.track_sightings(now);
        self.expire_gone_prompts(now);
        appeared.retain(|s| !self.handled_already(s, &was_showing));
        if appeared.is_empty() || self.phase != Phase::Running {
            return;
        }
        self.answer_appeared(appeared, &snapshot.rows, now, effects);
    }

    /// Each rule's dialog followed as it shows, stays and goes (`showing`), from this read's
    /// sightings; returns those due to be looked at now: new ones, and those whose rule's
    /// wait has just passed.
    fn track_sightings(&mut self, now: Duration) -> Vec<PromptSighting> {
        let mut appeared = Vec::new();
        for rule in 0..self.showing.len() {
            let current = self.sightings.iter().find(|s| s.rule == rule).cloned();
            let wait = self.prompt_wait(rule);
            match (self.showing[rule], current) {
                (Some(showing), Some(sighting)) if showing.appearance == sighting.appearance => {
                    let settled_away = showing
                        .gone_since
                        .is_some_and(|gone| now >= gone + PROMPT_SETTLE);
                    if settled_away {
                        self.showing[rule] = Some(Showing::new(sighting.appearance, now, wait));
                        if wait.is_zero() {
                            appeared.push(sighting);
                        }
                    } else {
                        // A rule with `wait_sec` is looked at once its dialog stayed that long.
                        let due = showing.pending && now >= showing.since + wait;
                        self.showing[rule] = Some(Showing {
                            gone_since: None,
                            pending: showing.pending && !due,
                            ..showing
                        });
                        if due {
                            appeared.push(sighting);
                        }
                    }
                }
                (_, Some(sighting)) => {
                    self.showing[rule] = Some(Showing::new(sighting.appearance, now, wait));
                    if wait.is_zero() {
                        appeared.push(sighting);
                    }
                }
                (Some(showing), None) if showing.gone_since.is_none() => {
                    self.showing[rule] = Some(Showing {
                        gone_since: Some(now),
                        ..showing
                    });
                }
                _ => {}
            }
        }
        appeared
    }

    /// Whether the dialog of `sighting` was handled already: a cursor-anchored dialog in the
    /// same place, or a bottom dialog another rule already matched (option 2 drawn a read after
    /// option 1 is the same dialog). `was_showing`: the rules whose dialog was showing, and
    /// looked at, before this read.
    fn handled_already(&self, sighting: &PromptSighting, was_showing: &[bool]) -> bool {
        let prompts = &self.setup.profile.prompts;
        match prompts[sighting.rule].anchor {
            PromptAnchor::Cursor => self
                .handled_rows
                .contains(&(sighting.rule, sighting.appearance)),
            PromptAnchor::Bottom => (0..was_showing.len()).any(|other| {
                other != sighting.rule
                    && was_showing[other]
                    && self.sightings.iter().any(|s| s.rule == other)
                    && prompts[other].anchor == PromptAnchor::Bottom
            }),
        }
    }

    /// The dialog that `appeared` (one or more rules' sightings of it, in profile order):
    /// what it asks, read once for all of them, and whether herd answers it or holds it.
    fn answer_appeared(
        &mut self,
        mut appeared: Vec<PromptSighting>,
        rows: &[String],
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        // What the dialog asks: exactly, from the app server's request that herd left to the
        // operator, when that is where it comes from.
        let guarded_dialog = appeared
            .iter()
            .find(|s| self.setup.profile.prompts[s.rule].guarded);
        let from_app_server = guarded_dialog
            .filter(|_| self.app_server.connected)
            .and_then(|_| self.undecided_app_server_request());
        if let Some(dialog) = guarded_dialog
            && from_app_server.is_none()
            && self.dialog_answered_through_app_server(now)
        {
            let rule = self.setup.profile.prompts[dialog.rule].name.clone();
            let text = format!("{} [answered through the app server]", dialog.text);
            effects.push(Effect::Note(Note::PromptShown { rule, text }));
            return;
        }
        let request = match &from_app_server {
            Some((request, _)) => Some(request.clone()),
            None => guarded_dialog.and_then(|s| {
                approval::read_request(
                    &self.setup.profile,
                    rows,
                    usize::from(self.screen.size().1),
                    s.rows,
                )
            }),
        };
        let judged: Vec<(bool, Option<Decision>)> = appeared
            .iter()
            .map(|s| self.judge_sighting(s, request.as_ref()))
            .collect();
        let (chosen, decision) = choose_rule(&judged);
        let sighting = appeared.swap_remove(chosen.unwrap_or(0));
        if self.setup.profile.prompts[sighting.rule].anchor == PromptAnchor::Cursor {
            self.handled_rows
                .insert((sighting.rule, sighting.appearance));
        }
        let auto = chosen.is_some();
        self.prompt_appeared(sighting, auto, request, decision, now, effects);
    }

    /// Whether herd may answer `sighting`'s dialog by itself, and the guard's decision on
    /// `request`.
    fn judge_sighting(
        &self,
        sighting: &PromptSighting,
        request: Option<&Request>,
    ) -> (bool, Option<Decision>) {
        let (auto, decision) = approval::judge_rule(
            &self.setup.profile,
            sighting.rule,
            self.is_auto(sighting.rule),
            request,
            &self.setup.guard,
        );
        // Once the CLI asks herd through its hooks (or herd is a client of its app server), a
        // tool dialog on screen is one that channel left to the operator: a key from herd would
        // answer it a second time.
        let hook_owned = (self.hooks_seen || self.app_server.connected)
            && self.setup.profile.prompts[sighting.rule].guarded;
        (auto && !hook_owned, decision)
    }

    /// How long a dialog of rule `rule` must stay before herd looks at it: its `wait_sec`; for
    /// a tool dialog while herd is a client of the app server, at least `PROMPT_SETTLE`, so
    /// that the server's request (sent to the TUI and to herd at once) is read first: the
    /// dialog of a request herd answers goes away unseen, one it leaves to the operator is held
    /// with the exact request.
    fn prompt_wait(&self, rule: usize) -> Duration {
        let prompt = &self.setup.profile.prompts[rule];
        if self.app_server.connected && prompt.guarded {
            prompt.wait.max(PROMPT_SETTLE)
        } else {
            prompt.wait
        }
    }

    /// When the next dialog on screen whose rule has a `wait_sec` is due to be looked at.
    pub(super) fn prompt_due_at(&self) -> Option<Duration> {
        self.showing
            .iter()
            .enumerate()
            .filter_map(|(rule, s)| {
                let s = (*s)?;
                (s.pending && s.gone_since.is_none()).then(|| s.since + self.prompt_wait(rule))
            })
            .min()
    }

    /// Forgets prompts that have stayed off the screen for the settle time.
    pub(super) fn expire_gone_prompts(&mut self, now: Duration) {
        for rule in 0..self.showing.len() {
            if let Some(Showing {
                gone_since: Some(gone),
                ..
            }) = self.showing[rule]
                && now >= gone + PROMPT_SETTLE
            {
                self.showing[rule] = None;
                if self.waiting.as_ref().is_some_and(|w| w.rule == rule) {
                    self.waiting = None;
                }
                // The dialog the operator answered went away: the answer was taken (a dialog
                // drawn there later is a new one, judged as such).
                if self
                    .operator_answered
                    .as_ref()
                    .is_some_and(|a| a.rule == rule)
                {
                    self.operator_answered = None;
                }
            }
        }
    }

    pub(super) fn prompt_appeared(
        &mut self,
        sighting: PromptSighting,
        auto: bool,
        request: Option<Request>,
        decision: Option<Decision>,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        let rule = &self.setup.profile.prompts[sighting.rule];
        let name = rule.name.clone();
        let keys = rule.send.clone();
        let guard_note = approval::describe(request.as_ref(), decision.as_ref());
        let with_note = |text: &str| match guard_note.is_empty() {
            true => text.to_string(),
            false => format!("{text} [{guard_note}]"),
        };
        effects.push(Effect::Note(Note::PromptShown {
            rule: name.clone(),
            text: with_note(&sighting.text),
        }));
        if !auto {
            effects.push(Effect::Note(Note::WaitingForOperator {
                rule: name,
                text: with_note(&sighting.text),
            }));
            self.waiting = Some(WaitingPrompt {
                rule: sighting.rule,
                since: now,
                sighting,
                request,
                decision,
            });
            return;
        }
        let count = self.answers_by_key.entry(keys.clone()).or_insert(0);
        if *count >= self.setup.answer_cap {
            let evidence = format!(
                "prompt {name} kept coming back after {} automatic answers: {}",
                self.setup.answer_cap, sighting.text
            );
            self.begin_ending(EndCause::PermissionBlocked { evidence }, now, effects);
            return;
        }
        *count += 1;
        self.auto_inputs.push(AutoInput {
            at: now,
            rule: name.clone(),
            keys: keys.clone(),
        });
        let record = Approval {
            at: now,
            by: AnsweredBy::Herd,
            channel: Channel::Screen,
            rule: name.clone(),
            keys: keys.clone(),
            request,
            decision,
            option: None,
            title: None,
        };
        self.approvals.push(record.clone());
        effects.push(Effect::Note(Note::Approval(Box::new(record))));
        self.unconfirmed = Some(Unconfirmed {
            rule: sighting.rule,
            appearance: sighting.appearance,
            sent_at: now,
            resends: 0,
        });
        effects.push(Effect::Write {
            bytes: keys.clone().into_bytes(),
            reason: InputReason::AutoAnswer { rule: name.clone() },
        });
        effects.push(Effect::Note(Note::AutoAnswered { rule: name, keys }));
    }

    pub(super) fn on_operator_answer(
        &mut self,
        rule: usize,
        by: AnsweredBy,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        let Some(prompt) = self.setup.profile.prompts.get(rule) else {
            return;
        };
        let (name, keys) = (prompt.name.clone(), prompt.send.clone());
        // The operator answers the dialog on screen: the one held, else whatever shows now.
        // Every key the dashboard offers answers the held dialog, whichever of its rules.
        let (request, decision) = match self.waiting.take() {
            Some(w) => {
                self.watch_operator_answer(w.rule, &name, now);
                (w.request, w.decision)
            }
            None => {
                self.watch_operator_answer(rule, &name, now);
                let rows = self.screen.visible_rows();
                let sighting = self.sightings.iter().find(|s| s.rule == rule);
                let request = sighting.and_then(|s| {
                    approval::read_request(
                        &self.setup.profile,
                        &rows,
                        usize::from(self.screen.size().1),
                        s.rows,
                    )
                });
                (request, None)
            }
        };
        self.record_operator_answer(name, keys, by, (request, decision), now, effects);
    }

    /// The operator answered the held prompt with keys no rule sends (Enter, Esc): the same
    /// record as `on_operator_answer`, under the keys' name.
    pub(super) fn on_operator_reply(
        &mut self,
        name: String,
        keys: Vec<u8>,
        by: AnsweredBy,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        let Some(waiting) = self.waiting.take() else {
            effects.push(Effect::Write {
                bytes: keys,
                reason: InputReason::Operator,
            });
            return;
        };
        self.watch_operator_answer(waiting.rule, &name, now);
        let text = String::from_utf8_lossy(&keys).into_owned();
        let asked = (waiting.request, waiting.decision);
        self.record_operator_answer(name, text, by, asked, now, effects);
    }

    /// The operator's answer `keys` (under `name`): recorded with what the prompt asked and the
    /// guard's decision, then typed.
    fn record_operator_answer(
        &mut self,
        name: String,
        keys: String,
        by: AnsweredBy,
        (request, decision): (Option<Request>, Option<Decision>),
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        // On an ACP agent the dialog is herd's ACP client's: the keys pick the option it sends.
        let channel = if self.setup.profile.protocol == crate::core::profile::Protocol::Acp {
            Channel::Acp
        } else {
            Channel::Screen
        };
        let record = Approval {
            at: now,
            by,
            channel,
            rule: name.clone(),
            keys: keys.clone(),
            request,
            decision,
            option: None,
            title: None,
        };
        self.approvals.push(record.clone());
        effects.push(Effect::Note(Note::Approval(Box::new(record))));
        effects.push(Effect::Write {
            bytes: keys.clone().into_bytes(),
            reason: InputReason::OperatorAnswer { rule: name.clone() },
        });
        effects.push(Effect::Note(Note::OperatorAnswered { rule: name, keys }));
    }

    /// Remembers the dialog of rule `rule` on screen now as answered by the operator with
    /// `name`, to see whether the agent takes the answer.
    fn watch_operator_answer(&mut self, rule: usize, name: &str, now: Duration) {
        self.operator_answered = self
            .showing
            .get(rule)
            .copied()
            .flatten()
            .filter(|s| s.gone_since.is_none())
            .map(|s| OperatorAnswered {
                rule,
                appearance: s.appearance,
                name: name.to_string(),
                sent_at: now,
            });
    }

    /// The dialog the operator answered is still on screen `ANSWER_RECHECK` later: the agent
    /// did not take the answer, and the dialog waits for the operator again (never resent: the
    /// operator chooses again).
    pub(super) fn recheck_operator_answer(&mut self, now: Duration, effects: &mut Vec<Effect>) {
        let Some(answered) = self.operator_answered.clone() else {
            return;
        };
        if now < answered.sent_at + ANSWER_RECHECK {
            return;
        }
        self.operator_answered = None;
        let still_there = self
            .showing
            .get(answered.rule)
            .copied()
            .flatten()
            .is_some_and(|s| s.appearance == answered.appearance && s.gone_since.is_none());
        let sighting = self
            .sightings
            .iter()
            .find(|s| s.rule == answered.rule)
            .cloned();
        // Held again, or answered by herd since: nothing to do.
        let settled = self.waiting.is_some() || self.unconfirmed.is_some();
        let (true, Some(sighting), false) = (still_there, sighting, settled) else {
            return;
        };
        let prompt = &self.setup.profile.prompts[answered.rule];
        let text = format!(
            "{} (still on screen after your answer {})",
            sighting.text, answered.name
        );
        effects.push(Effect::Note(Note::WaitingForOperator {
            rule: prompt.name.clone(),
            text,
        }));
        let last = self.approvals.last().and_then(|a| a.request.clone());
        self.waiting = Some(WaitingPrompt {
            rule: answered.rule,
            since: now,
            request: last,
            decision: Some(Decision::Ask {
                reason: format!("the dialog stayed after your answer {}", answered.name),
            }),
            sighting,
        });
    }

    /// Sends an automatic answer again when its dialog is still there (the agent did not take
    /// the keys); after `MAX_RESENDS` the dialog waits for the operator like any other.
    pub(super) fn resend_untaken_answer(&mut self, now: Duration, effects: &mut Vec<Effect>) {
        let Some(u) = self.unconfirmed.clone() else {
            return;
        };
        if !self.still_showing(u.rule, u.appearance) {
            self.unconfirmed = None;
            if self.phase == Phase::Running {
                effects.push(Effect::Note(Note::AnswerTaken {
                    rule: self.setup.profile.prompts[u.rule].name.clone(),
                }));
            }
            return;
        }
        if now < u.sent_at + RESEND_AFTER {
            return;
        }
        let Some(sighting) = self.sightings.iter().find(|s| s.rule == u.rule).cloned() else {
            self.unconfirmed = None;
            return;
        };
        // The agent may have drawn its next dialog in the same place: a different request is a
        // new question for the guard, never a resend.
        let name = &self.setup.profile.prompts[u.rule].name;
        let rows = self.screen.visible_rows();
        let cols = usize::from(self.screen.size().1);
        let shown = approval::read_request(&self.setup.profile, &rows, cols, sighting.rows);
        let answered = self
            .approvals
            .iter()
            .rev()
            .find(|a| &a.rule == name)
            .and_then(|a| a.request.clone());
        if shown.as_ref().map(|r| &r.kind) != answered.as_ref().map(|r| &r.kind) {
            self.unconfirmed = None;
            let (auto, decision) = approval::judge_rule(
                &self.setup.profile,
                u.rule,
                self.is_auto(u.rule),
                shown.as_ref(),
                &self.setup.guard,
            );
            self.prompt_appeared(sighting, auto, shown, decision, now, effects);
            return;
        }
        if u.resends >= MAX_RESENDS {
            self.unconfirmed = None;
            self.hold_untaken_answer(u.rule, sighting, now, effects);
            return;
        }
        self.resend_answer(u, now, effects);
    }

    /// Whether the dialog of rule `rule` that appeared as `appearance` is still on screen.
    fn still_showing(&self, rule: usize, appearance: u64) -> bool {
        self.showing
            .get(rule)
            .copied()
            .flatten()
            .is_some_and(|s| s.appearance == appearance && s.gone_since.is_none())
    }

    /// The dialog of rule `rule`, whose automatic answer the agent did not take after every
    /// resend, held for the operator.
    fn hold_untaken_answer(
        &mut self,
        rule: usize,
        sighting: PromptSighting,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        let prompt = &self.setup.profile.prompts[rule];
        let text = format!(
            "{} (the answer {:?} was not taken)",
            sighting.text, prompt.send
        );
        effects.push(Effect::Note(Note::WaitingForOperator {
            rule: prompt.name.clone(),
            text,
        }));
        let last = self.approvals.iter().rev().find(|a| a.rule == prompt.name);
        self.waiting = Some(WaitingPrompt {
            rule,
            since: now,
            request: last.and_then(|a| a.request.clone()),
            decision: Some(Decision::Ask {
                reason: format!(
                    "the agent did not take the answer {:?} ({} tries)",
                    prompt.send,
                    MAX_RESENDS + 1
                ),
            }),
            sighting,
        });
    }

    /// The automatic answer `u` sent again.
    fn resend_answer(&mut self, u: Unconfirmed, now: Duration, effects: &mut Vec<Effect>) {
        let prompt = &self.setup.profile.prompts[u.rule];
        effects.push(Effect::Note(Note::AnswerResent {
            rule: prompt.name.clone(),
            keys: prompt.send.clone(),
            resend: u.resends + 1,
        }));
        effects.push(Effect::Write {
            bytes: prompt.send.clone().into_bytes(),
            reason: InputReason::AutoAnswer {
                rule: prompt.name.clone(),
            },
        });
        self.unconfirmed = Some(Unconfirmed {
            sent_at: now,
            resends: u.resends + 1,
            ..u
        });
    }
}

/// Which of the rules matching one dialog herd answers it with, from each rule's judgement
/// (`judged`, in profile order: may herd answer, the guard's decision), and the decision to
/// record. Several rules can match one dialog (`1. Yes` and `don't ask again`): it is answered
/// once, with the first rule herd may answer (`Some` of its index), else the first is held for
/// the operator (`None`) with the guard's strongest objection.
fn choose_rule(judged: &[(bool, Option<Decision>)]) -> (Option<usize>, Option<Decision>) {
    let chosen = judged.iter().position(|(auto, _)| *auto);
    let decision = match chosen {
        Some(i) => judged[i].1.clone(),
        None => judged
            .iter()
            .filter_map(|(_, d)| d.clone())
            .find(|d| matches!(d, Decision::Refuse { .. }))
            .or_else(|| judged.iter().find_map(|(_, d)| d.clone())),
    };
    (chosen, decision)
}
