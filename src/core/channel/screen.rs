//! The screen as an approval channel: which dialogs the agent draws, what they ask, whether
//! herd may answer them by itself (the guard, through `approval`), typing the answer or
//! holding the dialog for the operator, recording every answer, and sending an untaken answer
//! again. Owns what it knows of the dialogs; reads the screen the attempt owns. Pure.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use super::app_server::AppServerChannel;
use super::effects::{AutoInput, Effect, InputReason, Note, WaitingPrompt};
use super::{Judge, record};
use crate::core::approval::{self, AnsweredBy, Approval, Channel};
use crate::core::classify::EndCause;
use crate::core::guard::{Decision, Request};
use crate::core::profile::{Profile, PromptAnchor, PromptRule};
use crate::core::screen::detect::{self, PromptSighting, ScreenView};
use crate::core::screen::{Screen, Snapshot};

/// A prompt must stay off the screen this long to count as gone: TUIs erase a dialog in one
/// write and draw it again in the next, which is not a new appearance.
pub const PROMPT_SETTLE: Duration = Duration::from_millis(300);
/// An automatic answer the agent did not take (the same dialog still showing this long after)
/// is sent again, up to `MAX_RESENDS` times; it counts as one answer.
pub const RESEND_AFTER: Duration = Duration::from_secs(2);
pub const MAX_RESENDS: u32 = 2;
/// An operator's answer whose dialog is still on screen this long after (the agent did not
/// take the key: Enter on a question that highlights nothing) leaves the dialog waiting for the
/// operator again, instead of the task looking busy until its timeout.
pub const ANSWER_RECHECK: Duration = Duration::from_secs(2);

/// An automatic answer not yet seen taken: its dialog has not left the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Unconfirmed {
    rule: usize,
    appearance: u64,
    sent_at: Duration,
    resends: u32,
}

/// An operator's answer not yet seen taken: the dialog it answered, by rule and appearance.
#[derive(Debug, Clone, PartialEq, Eq)]
struct OperatorAnswered {
    rule: usize,
    appearance: u64,
    /// What the operator sent ("Enter", "press_1"), for the note when it was not taken.
    name: String,
    sent_at: Duration,
}

/// A prompt rule's current appearance on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Showing {
    appearance: u64,
    /// When it left the screen, if it did; it is gone once `PROMPT_SETTLE` has passed.
    gone_since: Option<Duration>,
    /// When this appearance was first seen.
    since: Duration,
    /// Its rule's `wait_sec` has not passed yet: herd has not looked at answering it.
    pending: bool,
}

impl Showing {
    fn new(appearance: u64, now: Duration, wait: Duration) -> Showing {
        Showing {
            appearance,
            gone_since: None,
            since: now,
            pending: !wait.is_zero(),
        }
    }
}

/// What herd knows of the dialogs on the agent's screen.
#[derive(Debug, Clone, Default)]
pub struct ScreenChannel {
    /// Per rule: the appearance currently on screen, if any.
    showing: Vec<Option<Showing>>,
    /// Cursor-anchored questions already handled, by (rule, absolute row): a question the cursor
    /// left and came back to is not asked again.
    handled_rows: HashSet<(usize, u64)>,
    /// Prompts matching the screen at its last read.
    sightings: Vec<PromptSighting>,
    waiting: Option<WaitingPrompt>,
    answers_by_key: BTreeMap<String, u32>,
    auto_inputs: Vec<AutoInput>,
    unconfirmed: Option<Unconfirmed>,
    operator_answered: Option<OperatorAnswered>,
}

/// What the screen channel reads of the attempt, and where its answers and effects go, for
/// one call.
#[derive(Debug)]
pub struct DialogContext<'a> {
    pub judge: Judge<'a>,
    /// Automatic answers per key before a prompt that keeps coming back blocks the attempt.
    pub answer_cap: u32,
    pub screen: &'a Screen,
    /// The attempt is running (not ending): herd answers nothing while it ends.
    pub running: bool,
    pub app_server: &'a AppServerChannel,
    /// A structured channel decides tool calls (`Channels::tool_dialogs_decided_elsewhere`).
    pub decided_elsewhere: bool,
    /// The channel the operator's answers are recorded with.
    pub operator_channel: Channel,
    /// Every answer of the attempt, whatever its channel.
    pub approvals: &'a mut Vec<Approval>,
    pub effects: &'a mut Vec<Effect>,
}

impl ScreenChannel {
    pub fn new(rules: usize) -> ScreenChannel {
        ScreenChannel {
            showing: vec![None; rules],
            ..ScreenChannel::default()
        }
    }

    /// Prompts matching the screen now.
    pub fn sightings(&self) -> &[PromptSighting] {
        &self.sightings
    }

    /// The prompt held for the operator, if any.
    pub fn waiting(&self) -> Option<&WaitingPrompt> {
        self.waiting.as_ref()
    }

    /// Every automatic answer typed so far.
    pub fn auto_inputs(&self) -> &[AutoInput] {
        &self.auto_inputs
    }

    /// How many automatic answers herd typed with `keys`.
    pub fn answers_with(&self, keys: &str) -> u32 {
        self.answers_by_key.get(keys).copied().unwrap_or(0)
    }

    /// The attempt begins to end: nothing is held or awaited any more.
    pub fn stop_waiting(&mut self) {
        self.waiting = None;
        self.unconfirmed = None;
    }

    /// The earliest moment one of the dialogs needs looking at again: the held prompt's wait
    /// (`permission_wait`, headless), a resend, a recheck, a dialog settling away or its
    /// rule's wait passing (`connected`: herd is a client of the app server).
    pub fn next_deadline(
        &self,
        profile: &Profile,
        connected: bool,
        permission_wait: Option<Duration>,
    ) -> Option<Duration> {
        let held = self
            .waiting
            .as_ref()
            .zip(permission_wait)
            .map(|(w, wait)| w.since + wait);
        let resend = self.unconfirmed.as_ref().map(|u| u.sent_at + RESEND_AFTER);
        let recheck = self
            .operator_answered
            .as_ref()
            .map(|a| a.sent_at + ANSWER_RECHECK);
        let settled = self
            .showing
            .iter()
            .flatten()
            .filter_map(|s| s.gone_since)
            .min();
        [
            held,
            resend,
            recheck,
            settled.map(|gone| gone + PROMPT_SETTLE),
        ]
        .into_iter()
        .flatten()
        .chain(self.prompt_due_at(profile, connected))
        .min()
    }

    /// A request left to the operator by a structured channel (`request`, with the guard's
    /// `decision`) whose dialog the TUI drew before herd read the request (and which was let go
    /// as the one herd had just answered): held for the operator now.
    pub fn hold_drawn_dialog(
        &mut self,
        (request, decision): (Request, Decision),
        profile: &Profile,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        if self.waiting.is_some() {
            return;
        }
        let prompts = &profile.prompts;
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
            approval::describe(Some(&request), Some(&decision))
        );
        let name = prompts[sighting.rule].name.clone();
        let asked = (Some(request), Some(decision));
        self.hold(sighting, (name, text), asked, now, effects);
    }

    /// Holds `sighting`'s dialog for the operator (noted as `rule`'s, with `text`), with what
    /// it asks and why herd did not answer it.
    fn hold(
        &mut self,
        sighting: PromptSighting,
        (rule, text): (String, String),
        (request, decision): (Option<Request>, Option<Decision>),
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        effects.push(Effect::Note(Note::WaitingForOperator { rule, text }));
        self.waiting = Some(WaitingPrompt {
            rule: sighting.rule,
            since: now,
            sighting,
            request,
            decision,
        });
    }

    /// Which dialogs the screen shows (`snapshot`, read at this change), and what to do about
    /// those that appeared.
    pub fn update_prompts(
        &mut self,
        snapshot: &Snapshot,
        now: Duration,
        cx: &mut DialogContext<'_>,
    ) -> Option<EndCause> {
        let view = ScreenView {
            rows: &snapshot.rows,
            cursor_row: snapshot.cursor_row,
            first_row_number: snapshot.first_row_number,
        };
        self.sightings = detect::find_prompts(cx.judge.profile, view);
        let was_showing: Vec<bool> = self
            .showing
            .iter()
            // A dialog still waiting out its rule's wait was not looked at yet: it is not one
            // another rule's sighting of the same dialog has already handled.
            .map(|s| s.is_some_and(|s| s.gone_since.is_none() && !s.pending))
            .collect();
        let mut appeared = self.track_sightings(now, cx);
        self.expire_gone_prompts(now);
        appeared.retain(|s| !self.handled_already(s, &was_showing, &cx.judge.profile.prompts));
        if appeared.is_empty() || !cx.running {
            return None;
        }
        self.answer_appeared(appeared, &snapshot.rows, now, cx)
    }

    /// Each rule's dialog followed as it shows, stays and goes (`showing`), from this read's
    /// sightings; returns those due to be looked at now: new ones, and those whose rule's
    /// wait has just passed.
    fn track_sightings(&mut self, now: Duration, cx: &DialogContext<'_>) -> Vec<PromptSighting> {
        let mut appeared = Vec::new();
        for rule in 0..self.showing.len() {
            let current = self.sightings.iter().find(|s| s.rule == rule).cloned();
            let wait = prompt_wait(cx.judge.profile, cx.app_server.connected(), rule);
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
    fn handled_already(
        &self,
        sighting: &PromptSighting,
        was_showing: &[bool],
        prompts: &[PromptRule],
    ) -> bool {
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
        cx: &mut DialogContext<'_>,
    ) -> Option<EndCause> {
        // What the dialog asks: exactly, from the app server's request that herd left to the
        // operator, when that is where it comes from.
        let guarded_dialog = appeared
            .iter()
            .find(|s| cx.judge.profile.prompts[s.rule].guarded);
        let from_app_server = guarded_dialog.and_then(|_| cx.app_server.undecided_request());
        if let Some(dialog) = guarded_dialog
            && from_app_server.is_none()
            && cx.app_server.answered_just_now(now)
        {
            let rule = cx.judge.profile.prompts[dialog.rule].name.clone();
            let text = format!("{} [answered through the app server]", dialog.text);
            cx.effects
                .push(Effect::Note(Note::PromptShown { rule, text }));
            return None;
        }
        let request = match &from_app_server {
            Some((request, _)) => Some(request.clone()),
            None => guarded_dialog.and_then(|s| {
                approval::read_request(
                    cx.judge.profile,
                    rows,
                    usize::from(cx.screen.size().1),
                    s.rows,
                )
            }),
        };
        let judged: Vec<(bool, Option<Decision>)> = appeared
            .iter()
            .map(|s| judge_sighting(s, request.as_ref(), cx))
            .collect();
        let (chosen, decision) = choose_rule(&judged);
        let sighting = appeared.swap_remove(chosen.unwrap_or(0));
        if cx.judge.profile.prompts[sighting.rule].anchor == PromptAnchor::Cursor {
            self.handled_rows
                .insert((sighting.rule, sighting.appearance));
        }
        let auto = chosen.is_some();
        self.prompt_appeared(sighting, auto, (request, decision), now, cx)
    }

    /// When the next dialog on screen whose rule has a `wait_sec` is due to be looked at
    /// (`connected`: herd is a client of the agent's app server).
    pub fn prompt_due_at(&self, profile: &Profile, connected: bool) -> Option<Duration> {
        self.showing
            .iter()
            .enumerate()
            .filter_map(|(rule, s)| {
                let s = (*s)?;
                let wait = prompt_wait(profile, connected, rule);
                (s.pending && s.gone_since.is_none()).then(|| s.since + wait)
            })
            .min()
    }

    /// Forgets prompts that have stayed off the screen for the settle time.
    pub fn expire_gone_prompts(&mut self, now: Duration) {
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

    fn prompt_appeared(
        &mut self,
        sighting: PromptSighting,
        auto: bool,
        (request, decision): (Option<Request>, Option<Decision>),
        now: Duration,
        cx: &mut DialogContext<'_>,
    ) -> Option<EndCause> {
        let rule = &cx.judge.profile.prompts[sighting.rule];
        let name = rule.name.clone();
        let keys = rule.send.clone();
        let guard_note = approval::describe(request.as_ref(), decision.as_ref());
        let with_note = |text: &str| match guard_note.is_empty() {
            true => text.to_string(),
            false => format!("{text} [{guard_note}]"),
        };
        cx.effects.push(Effect::Note(Note::PromptShown {
            rule: name.clone(),
            text: with_note(&sighting.text),
        }));
        if !auto {
            let text = with_note(&sighting.text);
            self.hold(sighting, (name, text), (request, decision), now, cx.effects);
            return None;
        }
        let count = self.answers_by_key.entry(keys.clone()).or_insert(0);
        if *count >= cx.answer_cap {
            let evidence = format!(
                "prompt {name} kept coming back after {} automatic answers: {}",
                cx.answer_cap, sighting.text
            );
            return Some(EndCause::PermissionBlocked { evidence });
        }
        *count += 1;
        self.auto_inputs.push(AutoInput {
            at: now,
            rule: name.clone(),
            keys: keys.clone(),
        });
        let approval = Approval {
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
        record(approval, cx.approvals, cx.effects);
        self.unconfirmed = Some(Unconfirmed {
            rule: sighting.rule,
            appearance: sighting.appearance,
            sent_at: now,
            resends: 0,
        });
        cx.effects.push(Effect::Write {
            bytes: keys.clone().into_bytes(),
            reason: InputReason::AutoAnswer { rule: name.clone() },
        });
        cx.effects
            .push(Effect::Note(Note::AutoAnswered { rule: name, keys }));
        None
    }

    pub fn on_operator_answer(
        &mut self,
        rule: usize,
        by: AnsweredBy,
        now: Duration,
        cx: &mut DialogContext<'_>,
    ) {
        let Some(prompt) = cx.judge.profile.prompts.get(rule) else {
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
                let rows = cx.screen.visible_rows();
                let sighting = self.sightings.iter().find(|s| s.rule == rule);
                let request = sighting.and_then(|s| {
                    approval::read_request(
                        cx.judge.profile,
                        &rows,
                        usize::from(cx.screen.size().1),
                        s.rows,
                    )
                });
                (request, None)
            }
        };
        self.record_operator_answer(name, keys, by, (request, decision), now, cx);
    }

    /// The operator answered the held prompt with keys no rule sends (Enter, Esc): the same
    /// record as `on_operator_answer`, under the keys' name.
    pub fn on_operator_reply(
        &mut self,
        name: String,
        keys: Vec<u8>,
        by: AnsweredBy,
        now: Duration,
        cx: &mut DialogContext<'_>,
    ) {
        let Some(waiting) = self.waiting.take() else {
            cx.effects.push(Effect::Write {
                bytes: keys,
                reason: InputReason::Operator,
            });
            return;
        };
        self.watch_operator_answer(waiting.rule, &name, now);
        let text = String::from_utf8_lossy(&keys).into_owned();
        let asked = (waiting.request, waiting.decision);
        self.record_operator_answer(name, text, by, asked, now, cx);
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
        cx: &mut DialogContext<'_>,
    ) {
        let approval = Approval {
            at: now,
            by,
            channel: cx.operator_channel,
            rule: name.clone(),
            keys: keys.clone(),
            request,
            decision,
            option: None,
            title: None,
        };
        record(approval, cx.approvals, cx.effects);
        cx.effects.push(Effect::Write {
            bytes: keys.clone().into_bytes(),
            reason: InputReason::OperatorAnswer { rule: name.clone() },
        });
        cx.effects
            .push(Effect::Note(Note::OperatorAnswered { rule: name, keys }));
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
    pub fn recheck_operator_answer(&mut self, now: Duration, cx: &mut DialogContext<'_>) {
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
        let prompt = &cx.judge.profile.prompts[answered.rule];
        let text = format!(
            "{} (still on screen after your answer {})",
            sighting.text, answered.name
        );
        let last = cx.approvals.last().and_then(|a| a.request.clone());
        let reason = format!("the dialog stayed after your answer {}", answered.name);
        let asked = (last, Some(Decision::Ask { reason }));
        self.hold(
            sighting,
            (prompt.name.clone(), text),
            asked,
            now,
            cx.effects,
        );
    }

    /// Sends an automatic answer again when its dialog is still there (the agent did not take
    /// the keys); after `MAX_RESENDS` the dialog waits for the operator like any other.
    pub fn resend_untaken_answer(
        &mut self,
        now: Duration,
        cx: &mut DialogContext<'_>,
    ) -> Option<EndCause> {
        let u = self.unconfirmed.clone()?;
        if !self.still_showing(u.rule, u.appearance) {
            self.unconfirmed = None;
            if cx.running {
                cx.effects.push(Effect::Note(Note::AnswerTaken {
                    rule: cx.judge.profile.prompts[u.rule].name.clone(),
                }));
            }
            return None;
        }
        if now < u.sent_at + RESEND_AFTER {
            return None;
        }
        let Some(sighting) = self.sightings.iter().find(|s| s.rule == u.rule).cloned() else {
            self.unconfirmed = None;
            return None;
        };
        // The agent may have drawn its next dialog in the same place: a different request is a
        // new question for the guard, never a resend.
        let name = &cx.judge.profile.prompts[u.rule].name;
        let rows = cx.screen.visible_rows();
        let cols = usize::from(cx.screen.size().1);
        let shown = approval::read_request(cx.judge.profile, &rows, cols, sighting.rows);
        let answered = cx
            .approvals
            .iter()
            .rev()
            .find(|a| &a.rule == name)
            .and_then(|a| a.request.clone());
        if shown.as_ref().map(|r| &r.kind) != answered.as_ref().map(|r| &r.kind) {
            self.unconfirmed = None;
            let (auto, decision) = approval::judge_rule(
                cx.judge.profile,
                u.rule,
                cx.judge.is_auto(u.rule),
                shown.as_ref(),
                cx.judge.guard,
            );
            return self.prompt_appeared(sighting, auto, (shown, decision), now, cx);
        }
        if u.resends >= MAX_RESENDS {
            self.unconfirmed = None;
            self.hold_untaken_answer(u.rule, sighting, now, cx);
            return None;
        }
        self.resend_answer(u, now, cx);
        None
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
        cx: &mut DialogContext<'_>,
    ) {
        let prompt = &cx.judge.profile.prompts[rule];
        let text = format!(
            "{} (the answer {:?} was not taken)",
            sighting.text, prompt.send
        );
        let last = cx.approvals.iter().rev().find(|a| a.rule == prompt.name);
        let reason = format!(
            "the agent did not take the answer {:?} ({} tries)",
            prompt.send,
            MAX_RESENDS + 1
        );
        let asked = (
            last.and_then(|a| a.request.clone()),
            Some(Decision::Ask { reason }),
        );
        self.hold(
            sighting,
            (prompt.name.clone(), text),
            asked,
            now,
            cx.effects,
        );
    }

    /// The automatic answer `u` sent again.
    fn resend_answer(&mut self, u: Unconfirmed, now: Duration, cx: &mut DialogContext<'_>) {
        let prompt = &cx.judge.profile.prompts[u.rule];
        cx.effects.push(Effect::Note(Note::AnswerResent {
            rule: prompt.name.clone(),
            keys: prompt.send.clone(),
            resend: u.resends + 1,
        }));
        cx.effects.push(Effect::Write {
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

/// Whether herd may answer `sighting`'s dialog by itself, and the guard's decision on
/// `request`.
fn judge_sighting(
    sighting: &PromptSighting,
    request: Option<&Request>,
    cx: &DialogContext<'_>,
) -> (bool, Option<Decision>) {
    let (auto, decision) = approval::judge_rule(
        cx.judge.profile,
        sighting.rule,
        cx.judge.is_auto(sighting.rule),
        request,
        cx.judge.guard,
    );
    // Once the CLI asks herd through its hooks (or herd is a client of its app server), a
    // tool dialog on screen is one that channel left to the operator: a key from herd would
    // answer it a second time.
    let hook_owned = cx.decided_elsewhere && cx.judge.profile.prompts[sighting.rule].guarded;
    (auto && !hook_owned, decision)
}

/// How long a dialog of rule `rule` must stay before herd looks at it: its `wait_sec`; for a
/// tool dialog while herd is a client of the app server (`connected`), at least
/// `PROMPT_SETTLE`, so that the server's request (sent to the TUI and to herd at once) is read
/// first: the dialog of a request herd answers goes away unseen, one it leaves to the operator
/// is held with the exact request.
fn prompt_wait(profile: &Profile, connected: bool, rule: usize) -> Duration {
    let prompt = &profile.prompts[rule];
    if connected && prompt.guarded {
        prompt.wait.max(PROMPT_SETTLE)
    } else {
        prompt.wait
    }
}
