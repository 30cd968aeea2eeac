//! One attempt as a state machine: `handle(event, now) -> effects`.
//!
//! Owns the agent's screen and every decision made while the agent runs: answering terminal
//! queries, answering or holding permission prompts, seeing the completion marker, the idle end,
//! the timeout, ending the agent (exit keys, grace, TERM, KILL) and the final verdict. Time comes
//! in as the elapsed time since the attempt started; effects go out as values. No I/O here.
//!
//! This file holds the state and the dispatch; `events` the vocabulary, `observe` what the agent
//! shows, `prompts` its dialogs, `end` how it ends.

use std::collections::BTreeMap;
use std::time::Duration;

use super::agent_log::{AgentLogFacts, AgentLogParser, RetryWatch};
use super::approval::{Approval, GuardSetup};
use super::classify::{EndCause, Verdict};
use super::deciding_event::EndingScene;
use super::detect::PromptSighting;
use super::marker::MarkerWatch;
use super::profile::{OutputKind, Profile};
use super::screen::{Screen, Snapshot};
use super::screen_retry::ScreenRetryWatch;
use super::signal_file::{SignalFile, SignalFileError};
use super::stream::{StreamFacts, StreamParser};
use super::task::Completion;

/// Automatic answers per key before a prompt that keeps coming back blocks the attempt.
pub const DEFAULT_ANSWER_CAP: u32 = 5;
/// Headless wait for an operator answer before the attempt fails as blocked.
pub const DEFAULT_PERMISSION_WAIT_SEC: f64 = 60.0;
/// Between TERM and KILL to the process group.
pub const KILL_AFTER: Duration = Duration::from_secs(3);
/// How long a CLI is given to take herd's refusal through a hook before herd stops it.
pub const HOOK_SETTLE: Duration = Duration::from_secs(2);
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
/// An operator's answer whose dialog is still on screen this long after (the agent did not
/// take the key: Enter on a question that highlights nothing) leaves the dialog waiting for the
/// operator again, instead of the task looking busy until its timeout.
pub const ANSWER_RECHECK: Duration = Duration::from_secs(2);

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EndStage {
    /// herd refused a tool call through a hook at `at` and waits for the CLI to take that
    /// answer before any signal: a hook killed before it answers is no decision, and the CLI
    /// would go on with the call (Gemini in yolo mode runs it).
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

pub struct Attempt {
    setup: AttemptSetup,
    screen: Screen,
    watch: MarkerWatch,
    phase: Phase,
    marker_seen: bool,
    /// The screen as the detectors last read it (`after_screen_change`).
    snapshot: Snapshot,
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
    operator_answered: Option<OperatorAnswered>,
    /// The screen's tail when the agent was found idle (before the exit keys changed it).
    idle_tail: Option<Vec<String>>,
    /// A structured agent's events, parsed from its output.
    stream: Option<StreamParser>,
    /// herd has acted to end the agent (exit keys written or a signal sent): an exit from now
    /// on is herd's doing, not the agent's own.
    herd_ended: bool,
    signal: Option<Result<SignalFile, SignalFileError>>,
    /// The agent's own log, read live (the profile's `agent_log`).
    agent_log: Option<AgentLogParser>,
    log_retries: RetryWatch,
    screen_retries: ScreenRetryWatch,
    /// The agent waits for input below an auth or quota text: the idle end comes at this time
    /// (`PROMPT_SETTLE` after it was first seen, so the screen is whole), not `idle_sec` later.
    hopeless_idle_at: Option<Duration>,
    /// The CLI has called herd's hooks in this attempt: its tool calls are decided there, and
    /// a tool dialog still on screen is one the hook left to the operator.
    hooks_seen: bool,
    /// What herd knows of Codex's app server requests (`app_server`).
    app_server: app_server::AppServerState,
    /// What the attempt was doing when herd began to end it (`end`): the morning's "why".
    ending_scene: Option<EndingScene>,
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
    pub fn new(mut setup: AttemptSetup) -> Attempt {
        let rules = setup.profile.prompts.len();
        if setup.profile.protocol == super::profile::Protocol::Acp {
            // herd's ACP client draws a dialog only for what its own guard, on the exact
            // request, left to the operator: a reading of that dialog is never answered by
            // herd itself, whatever the task's switches (the client applies those).
            setup.auto_rules = vec![false; rules];
        }
        Attempt {
            screen: Screen::new(setup.rows, setup.cols),
            watch: MarkerWatch::new(&setup.marker, &setup.prompt),
            phase: Phase::Running,
            marker_seen: false,
            snapshot: Snapshot::default(),
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
            operator_answered: None,
            idle_tail: None,
            stream: (setup.profile.output == OutputKind::StreamJson).then(StreamParser::new),
            signal: None,
            agent_log: setup.profile.agent_log.map(AgentLogParser::new),
            log_retries: RetryWatch::default(),
            screen_retries: ScreenRetryWatch::default(),
            hopeless_idle_at: None,
            herd_ended: false,
            hooks_seen: false,
            app_server: app_server::AppServerState::default(),
            ending_scene: None,
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
    pub fn signal(&self) -> Option<&Result<SignalFile, SignalFileError>> {
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

    /// What the attempt was doing when herd began to end it, if herd did.
    pub fn ending_scene(&self) -> Option<&EndingScene> {
        self.ending_scene.as_ref()
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
        // An ACP client's switches are read at its launch; its dialogs stay the operator's.
        if self.setup.profile.protocol == super::profile::Protocol::Acp {
            return;
        }
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
                EndStage::Settle { at } => Some(*at + HOOK_SETTLE),
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
                if let Some(a) = &self.operator_answered {
                    next = next.min(a.sent_at + ANSWER_RECHECK);
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
                if let Some(due) = self.prompt_due_at() {
                    next = next.min(due);
                }
                if let Some(due) = self.app_server_request_due_at() {
                    next = next.min(due);
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
            if matches!(event, Event::Hook(_)) {
                effects.push(Effect::HookReply {
                    output: crate::core::hook::NO_DECISION.to_string(),
                });
            }
            return effects;
        }
        match event {
            Event::Output(bytes) => self.on_output(bytes, now, &mut effects),
            Event::Tick => self.on_tick(now, &mut effects),
            Event::Exited(status) => self.on_exit(status, &mut effects),
            Event::OperatorAnswer { rule } => self.on_operator_answer(
                rule,
                crate::core::approval::AnsweredBy::Operator,
                now,
                &mut effects,
            ),
            Event::OperatorReply { name, keys } => self.on_operator_reply(
                name,
                keys,
                crate::core::approval::AnsweredBy::Operator,
                now,
                &mut effects,
            ),
            Event::ApiAnswer {
                rule: Some(rule), ..
            } => self.on_operator_answer(
                rule,
                crate::core::approval::AnsweredBy::Api,
                now,
                &mut effects,
            ),
            Event::ApiAnswer {
                rule: None,
                name,
                keys,
            } => self.on_operator_reply(
                name,
                keys,
                crate::core::approval::AnsweredBy::Api,
                now,
                &mut effects,
            ),
            Event::OperatorKeys(bytes) => effects.push(Effect::Write {
                bytes,
                reason: InputReason::Operator,
            }),
            Event::OperatorMessage(bytes) => effects.push(Effect::Write {
                bytes,
                reason: InputReason::OperatorMessage,
            }),
            Event::Resize { rows, cols } => {
                self.screen.resize(rows, cols);
                self.after_screen_change(now, &mut effects);
            }
            Event::Cancel => self.begin_ending(EndCause::Cancelled, now, &mut effects),
            Event::SignalFile(read) => self.on_signal_file(read, now, &mut effects),
            Event::AgentLog(bytes) => self.on_agent_log(bytes, now, &mut effects),
            Event::Hook(input) => self.on_hook(input, now, &mut effects),
            Event::AppServerConnected => self.on_app_server_connected(),
            Event::AppServer(message) => self.on_app_server(message, now, &mut effects),
        }
        effects
    }
}

mod app_server;
mod end;
mod events;
mod hooks;
mod observe;
mod prompts;

pub use events::{AutoInput, Effect, Event, InputReason, Note, StopSignal, WaitingPrompt};
pub use observe::signal_status;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod app_server_tests;
#[cfg(test)]
mod end_tests;
#[cfg(test)]
mod guard_tests;
#[cfg(test)]
mod hooks_tests;
