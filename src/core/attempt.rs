//! One attempt as a state machine: `handle(event, now) -> effects`.
//!
//! Owns the agent's screen and every decision made while the agent runs: answering terminal
//! queries, answering or holding permission prompts, seeing the completion marker, the idle end,
//! the timeout, ending the agent (exit keys, grace, TERM, KILL) and the final verdict. Time comes
//! in as the elapsed time since the attempt started; effects go out as values. No I/O here.

use std::collections::BTreeMap;
use std::time::Duration;

use super::agent_log::{AgentLogFacts, AgentLogParser, RetryWatch};
use super::approval::{self, Approval, GuardSetup};
use super::classify::{EndCause, EndFacts, ExitStatus, Verdict, classify};
use super::detect::{self, PromptSighting};
use super::guard::{Decision, Request};
use super::marker::{CONTEXT_ROWS, MarkerWatch};
use super::profile::{OutputKind, Profile};
use super::screen::Screen;
use super::screen_retry::ScreenRetryWatch;
use super::signal_file::SignalFile;
use super::stream::{self, StreamFacts, StreamParser};
use super::task::{Completion, FailureType};

/// Automatic answers per key before a prompt that keeps coming back blocks the attempt.
pub const DEFAULT_ANSWER_CAP: u32 = 5;
/// Headless wait for an operator answer before the attempt fails as blocked.
pub const DEFAULT_PERMISSION_WAIT_SEC: f64 = 60.0;
/// Between TERM and KILL to the process group.
pub const KILL_AFTER: Duration = Duration::from_secs(3);
/// After the marker, an interactive agent's turn is over once its `ready` screen has stayed
/// unchanged this long (or `idle_sec`, if shorter): only then are its exit keys sent.
pub const TURN_SETTLE: Duration = Duration::from_secs(1);
/// A prompt must stay off the screen this long to count as gone: TUIs erase a dialog in one
/// write and draw it again in the next, which is not a new appearance.
pub const PROMPT_SETTLE: Duration = Duration::from_millis(300);
/// An automatic answer the agent did not take (the same dialog still showing this long after)
/// is sent again, up to `MAX_RESENDS` times; it counts as one answer.
pub const RESEND_AFTER: Duration = Duration::from_secs(2);
pub const MAX_RESENDS: u32 = 2;

/// What the attempt needs to know up front.
#[derive(Debug, Clone)]
pub struct AttemptSetup {
    pub profile: Profile,
    pub marker: String,
    pub prompt: String,
    pub rows: u16,
    pub cols: u16,
    pub timeout: Duration,
    pub idle: Duration,
    /// `None`: wait for the operator as long as the timeout allows (the dashboard).
    pub permission_wait: Option<Duration>,
    /// Per prompt rule of the profile: herd may answer it by itself.
    pub auto_rules: Vec<bool>,
    pub answer_cap: u32,
    pub completion: Completion,
    /// The marker must be seen too (always for `Completion::Marker`).
    pub marker_required: bool,
    /// The task's permission rules and where it runs, for the guard.
    pub guard: GuardSetup,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event<'a> {
    Output(&'a [u8]),
    /// The process ended (and its output was drained).
    Exited(ExitStatus),
    /// A deadline passed (see `next_deadline`).
    Tick,
    /// The operator answered the prompt of rule `rule` with its keys.
    OperatorAnswer {
        rule: usize,
    },
    /// The operator answered the waiting prompt with keys of no rule of its own (Enter for the
    /// option the dialog highlights, Esc for no): recorded with the prompt's request like any
    /// answer. Without a waiting prompt, the keys are typed into the agent.
    OperatorReply {
        /// What the keys mean, for the record ("Enter", "Esc").
        name: String,
        keys: Vec<u8>,
    },
    /// The operator typed or pasted into the agent.
    OperatorKeys(Vec<u8>),
    Resize {
        rows: u16,
        cols: u16,
    },
    Cancel,
    /// The signal file as the shell read it: a valid signal ends the attempt; a file that is
    /// not valid (yet: the agent may be writing it) is only remembered.
    SignalFile(Result<SignalFile, String>),
    /// Bytes the agent added to its own log (the profile's `agent_log`) since the last read.
    AgentLog(&'a [u8]),
}

/// Why herd writes to the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputReason {
    QueryReply,
    AutoAnswer { rule: String },
    OperatorAnswer { rule: String },
    ExitKeys,
    Operator,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Term,
    Kill,
}

/// Things worth recording and showing, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    PromptShown {
        rule: String,
        text: String,
    },
    AutoAnswered {
        rule: String,
        keys: String,
    },
    OperatorAnswered {
        rule: String,
        keys: String,
    },
    WaitingForOperator {
        rule: String,
        text: String,
    },
    MarkerSeen,
    /// A structured agent's final result event.
    ResultEvent {
        success: bool,
    },
    /// The agent's signal file was read: its status.
    SignalRead {
        status: String,
    },
    Ending {
        reason: String,
    },
    Verdict(Verdict),
    Bell,
    /// An answer to a prompt with what it approved and why.
    Approval(Approval),
    /// An automatic answer was taken: its dialog left the screen.
    AnswerTaken {
        rule: String,
    },
    /// An automatic answer was not taken (its dialog still showed `RESEND_AFTER` later) and is
    /// sent again: `resend` of `MAX_RESENDS`.
    AnswerResent {
        rule: String,
        keys: String,
        resend: u32,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Write { bytes: Vec<u8>, reason: InputReason },
    Signal(StopSignal),
    Note(Note),
}

/// One automatic answer, for the attempt's facts.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoInput {
    pub at: Duration,
    pub rule: String,
    pub keys: String,
}

/// A prompt waiting for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingPrompt {
    pub rule: usize,
    pub since: Duration,
    pub sighting: PromptSighting,
    /// What the prompt asks, when herd could read it.
    pub request: Option<Request>,
    /// Why herd did not answer by itself (the guard's refusal or doubt), for guarded prompts.
    pub decision: Option<Decision>,
}

impl WaitingPrompt {
    /// `Bash(rm -rf ~) — refuse: …`, or empty when there is nothing to say.
    pub fn guard_note(&self) -> String {
        approval::describe(self.request.as_ref(), self.decision.as_ref())
    }
}

/// An automatic answer not yet seen taken: its dialog has not left the screen.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Unconfirmed {
    rule: usize,
    appearance: u64,
    sent_at: Duration,
    resends: u32,
}

/// A prompt rule's current appearance on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Showing {
    appearance: u64,
    /// When it left the screen, if it did; it is gone once `PROMPT_SETTLE` has passed.
    gone_since: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EndStage {
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

pub struct Attempt {
    setup: AttemptSetup,
    screen: Screen,
    watch: MarkerWatch,
    phase: Phase,
    marker_seen: bool,
    last_text: String,
    last_change: Duration,
    ready: bool,
    busy: bool,
    /// Per rule: the appearance currently on screen, if any.
    showing: Vec<Option<Showing>>,
    /// Cursor-anchored questions already handled, by (rule, absolute row): a question the cursor
    /// left and came back to is not asked again.
    handled_rows: std::collections::HashSet<(usize, u64)>,
    sightings: Vec<PromptSighting>,
    waiting: Option<WaitingPrompt>,
    answers_by_key: BTreeMap<String, u32>,
    auto_inputs: Vec<AutoInput>,
    /// Every answer given, automatic or by the operator.
    approvals: Vec<Approval>,
    unconfirmed: Option<Unconfirmed>,
    /// The screen's tail when the agent was found idle (before the exit keys changed it).
    idle_tail: Option<Vec<String>>,
    /// A structured agent's events, parsed from its output.
    stream: Option<StreamParser>,
    /// herd has acted to end the agent (exit keys written or a signal sent): an exit from now
    /// on is herd's doing, not the agent's own.
    herd_ended: bool,
    signal: Option<Result<SignalFile, String>>,
    /// The agent's own log, read live (the profile's `agent_log`).
    agent_log: Option<AgentLogParser>,
    log_retries: RetryWatch,
    screen_retries: ScreenRetryWatch,
    /// The agent waits for input below an auth or quota text: the idle end comes at this time
    /// (`PROMPT_SETTLE` after it was first seen, so the screen is whole), not `idle_sec` later.
    hopeless_idle_at: Option<Duration>,
}

impl std::fmt::Debug for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attempt")
            .field("phase", &self.phase)
            .field("marker_seen", &self.marker_seen)
            .finish()
    }
}

impl Attempt {
    pub fn new(setup: AttemptSetup) -> Attempt {
        let rules = setup.profile.prompts.len();
        Attempt {
            screen: Screen::new(setup.rows, setup.cols),
            watch: MarkerWatch::new(&setup.marker, &setup.prompt),
            phase: Phase::Running,
            marker_seen: false,
            last_text: String::new(),
            last_change: Duration::ZERO,
            ready: false,
            busy: false,
            showing: vec![None; rules],
            handled_rows: std::collections::HashSet::new(),
            sightings: Vec::new(),
            waiting: None,
            answers_by_key: BTreeMap::new(),
            auto_inputs: Vec::new(),
            approvals: Vec::new(),
            unconfirmed: None,
            idle_tail: None,
            stream: (setup.profile.output == OutputKind::StreamJson).then(StreamParser::new),
            signal: None,
            agent_log: setup.profile.agent_log.map(AgentLogParser::new),
            log_retries: RetryWatch::default(),
            screen_retries: ScreenRetryWatch::default(),
            hopeless_idle_at: None,
            herd_ended: false,
            setup,
        }
    }

    /// A structured agent's events so far.
    pub fn stream_facts(&self) -> Option<&StreamFacts> {
        self.stream.as_ref().map(StreamParser::facts)
    }

    /// What the agent's own log said so far.
    pub fn agent_log_facts(&self) -> Option<&AgentLogFacts> {
        self.agent_log.as_ref().map(AgentLogParser::facts)
    }

    /// The signal file as last read.
    pub fn signal(&self) -> Option<&Result<SignalFile, String>> {
        self.signal.as_ref()
    }

    /// The screen's marker ends the attempt only when the marker is the completion rule of a
    /// screen agent; a structured agent's marker is looked for in its result's text.
    fn watches_screen_marker(&self) -> bool {
        self.setup.completion == Completion::Marker && self.stream.is_none()
    }

    pub fn screen(&self) -> &Screen {
        &self.screen
    }

    pub fn screen_mut(&mut self) -> &mut Screen {
        &mut self.screen
    }

    pub fn profile(&self) -> &Profile {
        &self.setup.profile
    }

    pub fn marker_seen(&self) -> bool {
        self.marker_seen
    }

    pub fn waiting(&self) -> Option<&WaitingPrompt> {
        self.waiting.as_ref()
    }

    /// Prompts matching the screen now.
    pub fn sightings(&self) -> &[PromptSighting] {
        &self.sightings
    }

    pub fn verdict(&self) -> Option<&Verdict> {
        match &self.phase {
            Phase::Done(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_ending(&self) -> bool {
        matches!(self.phase, Phase::Ending { .. })
    }

    pub fn auto_inputs(&self) -> &[AutoInput] {
        &self.auto_inputs
    }

    /// Every answer given so far, with its request and the guard's decision.
    pub fn approvals(&self) -> &[Approval] {
        &self.approvals
    }

    /// Whether herd may answer rule `rule` by itself in this attempt.
    pub fn is_auto(&self, rule: usize) -> bool {
        self.setup.auto_rules.get(rule).copied().unwrap_or(false)
    }

    pub fn set_auto(&mut self, rule: usize, auto: bool) {
        if let Some(slot) = self.setup.auto_rules.get_mut(rule) {
            *slot = auto;
        }
    }

    /// `[(key, count)]` for every rule herd may answer by itself, as `result.auto_inputs`.
    pub fn auto_input_counts(&self) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> = Vec::new();
        for (i, rule) in self.setup.profile.prompts.iter().enumerate() {
            if self.is_auto(i) && !out.iter().any(|(k, _)| *k == rule.send) {
                let count = self.answers_by_key.get(&rule.send).copied().unwrap_or(0);
                out.push((rule.send.clone(), count));
            }
        }
        out
    }

    /// When `Tick` should come next, if ever.
    pub fn next_deadline(&self) -> Option<Duration> {
        match &self.phase {
            Phase::Done(_) => None,
            Phase::Ending { stage, .. } => match stage {
                EndStage::Grace { at } => {
                    Some(*at + Duration::from_secs_f64(self.setup.profile.exit_grace_sec))
                }
                EndStage::Term { at } => Some(*at + KILL_AFTER),
                EndStage::Kill => None,
            },
            Phase::Running => {
                let mut next = self.setup.timeout;
                if let (Some(w), Some(wait)) = (&self.waiting, self.setup.permission_wait) {
                    next = next.min(w.since + wait);
                }
                if self.could_be_idle() {
                    next = next.min(self.last_change + self.setup.idle);
                }
                if let Some(at) = self.hopeless_idle_at {
                    next = next.min(at);
                }
                if let Some(u) = &self.unconfirmed {
                    next = next.min(u.sent_at + RESEND_AFTER);
                }
                if let Some(settle) = self.turn_settle() {
                    next = next.min(self.last_change + settle);
                }
                if let Some(gone) = self
                    .showing
                    .iter()
                    .flatten()
                    .filter_map(|s| s.gone_since)
                    .min()
                {
                    next = next.min(gone + PROMPT_SETTLE);
                }
                Some(next)
            }
        }
    }

    fn could_be_idle(&self) -> bool {
        self.ready && !self.busy && self.sightings.is_empty()
    }

    /// The marker was seen on an interactive agent's screen and herd waits for its turn to be
    /// over before sending the exit keys.
    fn waits_for_turn_end(&self) -> bool {
        self.marker_seen
            && self.phase == Phase::Running
            && self.setup.profile.exit_keys.is_some()
            && self.watches_screen_marker()
    }

    /// How long the screen must stay unchanged for the turn to be over, now: `TURN_SETTLE` on
    /// the profile's `ready` screen; `idle_sec` on any quiet screen (a profile whose `ready`
    /// pattern no longer matches the CLI's input prompt still ends); never while it is busy or
    /// a prompt shows.
    fn turn_settle(&self) -> Option<Duration> {
        if !self.waits_for_turn_end() || self.busy || !self.sightings.is_empty() {
            return None;
        }
        Some(if self.ready {
            TURN_SETTLE.min(self.setup.idle)
        } else {
            self.setup.idle
        })
    }

    pub fn handle(&mut self, event: Event<'_>, now: Duration) -> Vec<Effect> {
        let mut effects = Vec::new();
        if matches!(self.phase, Phase::Done(_)) {
            return effects;
        }
        match event {
            Event::Output(bytes) => self.on_output(bytes, now, &mut effects),
            Event::Tick => self.on_tick(now, &mut effects),
            Event::Exited(status) => self.on_exit(status, &mut effects),
            Event::OperatorAnswer { rule } => self.on_operator_answer(rule, now, &mut effects),
            Event::OperatorReply { name, keys } => {
                self.on_operator_reply(name, keys, now, &mut effects)
            }
            Event::OperatorKeys(bytes) => effects.push(Effect::Write {
                bytes,
                reason: InputReason::Operator,
            }),
            Event::Resize { rows, cols } => {
                self.screen.resize(rows, cols);
                self.after_screen_change(now, &mut effects);
            }
            Event::Cancel => self.begin_ending(EndCause::Cancelled, now, &mut effects),
            Event::SignalFile(read) => self.on_signal_file(read, now, &mut effects),
            Event::AgentLog(bytes) => self.on_agent_log(bytes, now, &mut effects),
        }
        effects
    }

    fn on_signal_file(
        &mut self,
        read: Result<SignalFile, String>,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        if self.setup.completion != Completion::SignalFile {
            return;
        }
        let valid = read.is_ok();
        if let Ok(file) = &read {
            let already = matches!(&self.signal, Some(Ok(old)) if old == file);
            if !already {
                effects.push(Effect::Note(Note::SignalRead {
                    status: signal_status(&file.signal).to_string(),
                }));
            }
        }
        self.signal = Some(read);
        if valid {
            self.begin_ending(EndCause::AfterSignal, now, effects);
        }
    }

    fn feed_stream(&mut self, bytes: &[u8], now: Duration, effects: &mut Vec<Effect>) {
        let Some(parser) = self.stream.as_mut() else {
            return;
        };
        let had_result = parser.facts().result.is_some();
        parser.feed(bytes);
        if had_result {
            return;
        }
        if let Some((failure, evidence)) = stream::hopeless_retry(parser.facts()) {
            self.begin_ending(EndCause::HopelessRetry { failure, evidence }, now, effects);
            return;
        }
        if let Some(result) = &parser.facts().result {
            effects.push(Effect::Note(Note::ResultEvent {
                success: result.success,
            }));
            // herd's ACP client's record of its answers is exact (the request as data, the
            // option sent): it replaces what the screen read of the dialogs it drew.
            if let Some(client) = &parser.facts().client_approvals {
                for approval in client {
                    effects.push(Effect::Note(Note::Approval(approval.clone())));
                }
                self.approvals.clone_from(client);
            }
            if self.setup.completion != Completion::SignalFile {
                self.begin_ending(EndCause::AfterResult, now, effects);
            }
        }
    }

    /// The agent's log grew: a request it keeps retrying in vain (a rejected key from the first
    /// retry, a spent quota from the second in a row, server errors for `SERVER_ERROR_PATIENCE`)
    /// ends the attempt now; refusals are kept for the verdict.
    fn on_agent_log(&mut self, bytes: &[u8], now: Duration, effects: &mut Vec<Effect>) {
        let Some(parser) = self.agent_log.as_mut() else {
            return;
        };
        parser.feed(bytes);
        if self.marker_seen {
            return;
        }
        if let Some((failure, evidence)) = self.log_retries.check(&parser.facts().retries, now) {
            self.begin_ending(EndCause::HopelessRetry { failure, evidence }, now, effects);
        }
    }

    fn on_output(&mut self, bytes: &[u8], now: Duration, effects: &mut Vec<Effect>) {
        let outcome = self.screen.feed(bytes, CONTEXT_ROWS);
        if !outcome.replies.is_empty() {
            effects.push(Effect::Write {
                bytes: outcome.replies,
                reason: InputReason::QueryReply,
            });
        }
        if outcome.bell {
            effects.push(Effect::Note(Note::Bell));
        }
        self.feed_stream(bytes, now, effects);
        if self.watches_screen_marker()
            && !self.marker_seen
            && self
                .watch
                .find(&outcome.scrolled_rows, outcome.context_rows)
                .is_some()
        {
            self.saw_marker(now, effects);
        }
        self.after_screen_change(now, effects);
    }

    fn after_screen_change(&mut self, now: Duration, effects: &mut Vec<Effect>) {
        let text = self.screen.text();
        if text == self.last_text {
            return;
        }
        self.last_change = now;
        self.ready = detect::is_ready(&self.setup.profile, &text);
        self.busy = detect::is_busy(&self.setup.profile, &text);
        self.last_text = text;
        if self.watches_screen_marker() && !self.marker_seen {
            let rows = self.screen.rows_with_history(CONTEXT_ROWS);
            let history = rows.len() - usize::from(self.screen.size().0);
            if self.watch.find(&rows, history).is_some() {
                self.saw_marker(now, effects);
            }
        }
        self.update_prompts(now, effects);
        self.judge_screen_retries(now, effects);
    }

    /// Errors that do not heal by waiting, on screen: the agent waits for input below an auth
    /// or quota text (the idle end comes at once: waiting `idle_sec` would give the same verdict,
    /// and a spinner left running beside a question would keep it from ever coming); or it
    /// retries a failed request beside the cause (the profile's `retrying` texts): auth, quota
    /// or lasting server errors end the attempt now.
    fn judge_screen_retries(&mut self, now: Duration, effects: &mut Vec<Effect>) {
        let profile = &self.setup.profile;
        if self.marker_seen || self.phase != Phase::Running {
            return;
        }
        let hopeless_idle = self.could_be_idle() && {
            let tail = detect::tail_rows(&self.screen.visible_rows(), profile.tail_rows);
            super::classify::failure_text(&tail, profile)
                .is_some_and(|(f, _)| matches!(f, FailureType::Auth | FailureType::Quota))
        };
        if !hopeless_idle {
            self.hopeless_idle_at = None;
        } else if self.hopeless_idle_at.is_none() {
            self.hopeless_idle_at = Some(now + PROMPT_SETTLE);
        }
        if profile.retrying.is_empty() {
            return;
        }
        let rows = self.screen.rows_with_history(profile.tail_rows);
        let tail = detect::tail_rows(&rows, profile.tail_rows);
        if let Some((failure, evidence)) = self.screen_retries.check(profile, &tail, now) {
            self.begin_ending(EndCause::HopelessRetry { failure, evidence }, now, effects);
        }
    }

    /// SPEC: success is the marker AND a normal end. An interactive agent (a profile with exit
    /// keys) is ended by herd once its turn is over (see `on_tick`); any other agent is left to
    /// finish by itself, up to the timeout.
    fn saw_marker(&mut self, _now: Duration, effects: &mut Vec<Effect>) {
        self.marker_seen = true;
        effects.push(Effect::Note(Note::MarkerSeen));
    }

    fn on_tick(&mut self, now: Duration, effects: &mut Vec<Effect>) {
        self.expire_gone_prompts(now);
        if self.phase == Phase::Running {
            self.resend_untaken_answer(now, effects);
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
                    EndStage::Grace { .. } => {
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

    fn begin_ending(&mut self, cause: EndCause, now: Duration, effects: &mut Vec<Effect>) {
        if !matches!(self.phase, Phase::Running) {
            return;
        }
        effects.push(Effect::Note(Note::Ending {
            reason: describe_cause(&cause),
        }));
        let gentle = matches!(
            cause,
            EndCause::AfterMarker | EndCause::Idle | EndCause::AfterResult | EndCause::AfterSignal
        );
        let stage = if gentle {
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

    fn on_exit(&mut self, exit: ExitStatus, effects: &mut Vec<Effect>) {
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
        let verdict = classify(&facts, &self.setup.profile);
        effects.push(Effect::Note(Note::Verdict(verdict.clone())));
        self.phase = Phase::Done(verdict);
    }
}

/// The signal's `status` as the agent wrote it.
pub fn signal_status(signal: &super::signal_file::Signal) -> &'static str {
    use super::signal_file::Signal;
    match signal {
        Signal::Done { .. } => "done",
        Signal::Questions { .. } => "questions",
        Signal::Error { .. } => "error",
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

#[path = "attempt_prompts.rs"]
mod prompts;

#[cfg(test)]
#[path = "attempt_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "attempt_end_tests.rs"]
mod end_tests;
#[cfg(test)]
#[path = "attempt_guard_tests.rs"]
mod guard_tests;
