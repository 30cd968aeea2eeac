//! One attempt as a state machine: `handle(event, now) -> effects`. Owns the agent's screen and
//! every decision while it runs (queries, the marker, idle, timeout, the end, the verdict). Time
//! comes in as elapsed time; effects go out as values. Its approval channels and its `end` are
//! parts of it.

pub mod prompt_id;

use std::time::Duration;

use super::approval::{AnsweredBy, Approval, Channel, GuardSetup};
use super::channel::acp::AcpChannel;
use super::channel::app_server::AppServerOutcome;
use super::channel::screen::{DialogContext, ScreenChannel};
use super::channel::stream::{StreamChannel, StreamNews};
use super::channel::{Channels, EndRequest, Judge};
use super::classify::{EndCause, EndFacts, ExitStatus, Verdict, classify};
use super::profile::Profile;
use super::screen::{Screen, Snapshot};
use super::task::{Completion, FailureType};
use crate::core::facts::agent_log::{AgentLogFacts, AgentLogParser, RetryWatch};
use crate::core::facts::signal_file::{SignalFile, SignalFileError};
use crate::core::operator::deciding_event::{EndingScene, Unanswered};
use crate::core::screen::detect::{self, PromptSighting};
use crate::core::screen::marker::{CONTEXT_ROWS, MarkerWatch};
use crate::core::screen::screen_retry::ScreenRetryWatch;
use crate::core::wire::stream::StreamFacts;

/// Automatic answers per key before a prompt that keeps coming back blocks the attempt.
pub const DEFAULT_ANSWER_CAP: u32 = 5;
/// Headless wait for an operator answer before the attempt fails as blocked.
pub const DEFAULT_PERMISSION_WAIT_SEC: f64 = 60.0;
/// After the marker, an interactive agent's turn is over once its `ready` screen stayed unchanged
/// this long (or `idle_sec`): only then are its exit keys sent.
pub const TURN_SETTLE: Duration = Duration::from_secs(1);
pub use super::channel::screen::{ANSWER_RECHECK, MAX_RESENDS, PROMPT_SETTLE, RESEND_AFTER};
pub use end::{HOOK_SETTLE, KILL_AFTER};

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

impl AttemptSetup {
    /// The task's rules as the channels judge requests with them.
    fn judge(&self) -> Judge<'_> {
        Judge {
            profile: &self.profile,
            auto_rules: &self.auto_rules,
            guard: &self.guard,
            headless: self.permission_wait.is_some(),
        }
    }
}

pub struct Attempt {
    setup: AttemptSetup,
    screen: Screen,
    watch: MarkerWatch,
    marker_seen: bool,
    /// The screen as the detectors last read it (`after_screen_change`).
    snapshot: Snapshot,
    last_change: Duration,
    ready: bool,
    busy: bool,
    /// Every answer given, automatic or by the operator, through any channel.
    approvals: Vec<Approval>,
    signal: Option<Result<SignalFile, SignalFileError>>,
    /// The agent's own log, read live (the profile's `agent_log`).
    agent_log: Option<AgentLogParser>,
    log_retries: RetryWatch,
    screen_retries: ScreenRetryWatch,
    /// The agent waits for input below an auth or quota text: the idle end comes at this time
    /// (`PROMPT_SETTLE` after it was seen), not `idle_sec` later.
    hopeless_idle_at: Option<Duration>,
    /// The approval channels the profile uses.
    channels: Channels,
    end: end::Ending,
}

impl std::fmt::Debug for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attempt")
            .field("end", &self.end)
            .field("marker_seen", &self.marker_seen)
            .finish()
    }
}

impl Attempt {
    pub fn new(mut setup: AttemptSetup) -> Attempt {
        let channels = Channels::for_profile(&setup.profile);
        if let Some(acp) = channels.acp {
            setup.auto_rules = acp.auto_rules(setup.profile.prompts.len());
        }
        Attempt {
            screen: Screen::new(setup.rows, setup.cols),
            watch: MarkerWatch::new(&setup.marker, &setup.prompt),
            marker_seen: false,
            snapshot: Snapshot::default(),
            last_change: Duration::ZERO,
            ready: false,
            busy: false,
            approvals: Vec::new(),
            signal: None,
            agent_log: setup.profile.agent_log.map(AgentLogParser::new),
            log_retries: RetryWatch::default(),
            screen_retries: ScreenRetryWatch::default(),
            hopeless_idle_at: None,
            channels,
            end: end::Ending::new(),
            setup,
        }
    }

    /// A structured agent's events so far.
    pub fn stream_facts(&self) -> Option<&StreamFacts> {
        self.channels.stream.as_ref().map(StreamChannel::facts)
    }

    /// What the agent's own log said so far.
    pub fn agent_log_facts(&self) -> Option<&AgentLogFacts> {
        self.agent_log.as_ref().map(AgentLogParser::facts)
    }

    /// The signal file as last read.
    pub fn signal(&self) -> Option<&Result<SignalFile, SignalFileError>> {
        self.signal.as_ref()
    }

    /// The screen's marker ends only a screen agent; a structured one's is read in its result.
    fn watches_screen_marker(&self) -> bool {
        self.setup.completion == Completion::Marker && self.channels.stream.is_none()
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
        self.channels.screen.waiting()
    }

    /// Prompts matching the screen now.
    pub fn sightings(&self) -> &[PromptSighting] {
        self.channels.screen.sightings()
    }

    /// What the attempt was doing when herd began to end it, if herd did.
    pub fn ending_scene(&self) -> Option<&EndingScene> {
        self.end.scene()
    }

    pub fn verdict(&self) -> Option<&Verdict> {
        self.end.verdict()
    }

    pub fn is_ending(&self) -> bool {
        self.end.is_ending()
    }

    pub fn auto_inputs(&self) -> &[AutoInput] {
        self.channels.screen.auto_inputs()
    }

    /// Every answer given so far, with its request and the guard's decision.
    pub fn approvals(&self) -> &[Approval] {
        &self.approvals
    }

    /// The CLI has called herd's hooks in this attempt.
    pub fn hooks_seen(&self) -> bool {
        self.channels.hook.seen()
    }

    /// Whether herd may answer rule `rule` by itself in this attempt.
    pub fn is_auto(&self, rule: usize) -> bool {
        self.setup.judge().is_auto(rule)
    }

    pub fn set_auto(&mut self, rule: usize, auto: bool) {
        // An ACP client's switches are read at its launch; its dialogs stay the operator's.
        if self.channels.acp.is_some() {
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
                out.push((
                    rule.send.clone(),
                    self.channels.screen.answers_with(&rule.send),
                ));
            }
        }
        out
    }

    /// When `Tick` should come next, if ever.
    pub fn next_deadline(&self) -> Option<Duration> {
        if !self.end.running() {
            let grace = Duration::from_secs_f64(self.setup.profile.exit_grace_sec);
            return self.end.deadline(grace);
        }
        let (wait, connected) = (
            self.setup.permission_wait,
            self.channels.app_server.connected(),
        );
        let dialogs = &self.channels.screen;
        let held = dialogs.waiting().is_some();
        [
            Some(self.setup.timeout),
            self.could_be_idle()
                .then(|| self.last_change + self.setup.idle),
            self.hopeless_idle_at,
            self.turn_settle().map(|settle| self.last_change + settle),
            dialogs.next_deadline(&self.setup.profile, connected, wait),
            self.channels.app_server.request_due_at(wait, held),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn could_be_idle(&self) -> bool {
        self.ready && !self.busy && self.sightings().is_empty()
    }

    /// The marker was seen and herd waits for the turn to be over before sending exit keys.
    fn waits_for_turn_end(&self) -> bool {
        self.marker_seen
            && self.end.running()
            && self.setup.profile.exit_keys.is_some()
            && self.watches_screen_marker()
    }

    /// How long the screen must stay unchanged for the turn to be over: `TURN_SETTLE` on the
    /// `ready` screen, `idle_sec` on any quiet one; never while busy or a prompt shows.
    fn turn_settle(&self) -> Option<Duration> {
        if !self.waits_for_turn_end() || self.busy || !self.sightings().is_empty() {
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
        if self.end.verdict().is_some() {
            if matches!(event, Event::Hook(_)) {
                effects.push(Effect::HookReply {
                    output: crate::core::wire::hook::NO_DECISION.to_string(),
                });
            }
            return effects;
        }
        match event {
            Event::Output(bytes) => self.on_output(bytes, now, &mut effects),
            Event::Tick => self.on_tick(now, &mut effects),
            Event::Exited(status) => self.on_exit(status, &mut effects),
            Event::OperatorAnswer { rule } => {
                self.on_answer(AnsweredBy::Operator, (Some(rule), None), now, &mut effects);
            }
            Event::OperatorReply { name, keys } => {
                let reply = (None, Some((name, keys)));
                self.on_answer(AnsweredBy::Operator, reply, now, &mut effects);
            }
            Event::ApiAnswer {
                by,
                rule,
                name,
                keys,
            } => {
                let answer = (rule, Some((name, keys)));
                self.on_answer(by, answer, now, &mut effects);
            }
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
            Event::AppServerConnected => self.channels.app_server.connect(),
            Event::AppServer(message) => self.on_app_server(message, now, &mut effects),
        }
        effects
    }

    /// The screen channel at work on one call, with what it reads of the attempt.
    fn with_dialogs<R>(
        &mut self,
        effects: &mut Vec<Effect>,
        act: impl FnOnce(&mut ScreenChannel, &mut DialogContext<'_>) -> R,
    ) -> R {
        let channels = &mut self.channels;
        let decided_elsewhere = channels.tool_dialogs_decided_elsewhere();
        let mut cx = DialogContext {
            judge: self.setup.judge(),
            answer_cap: self.setup.answer_cap,
            screen: &self.screen,
            running: self.end.running(),
            app_server: &channels.app_server,
            decided_elsewhere,
            operator_channel: channels.acp.map_or(Channel::Screen, AcpChannel::channel),
            approvals: &mut self.approvals,
            effects,
        };
        act(&mut channels.screen, &mut cx)
    }

    /// An operator's answer to the dialog on screen: a rule's keys (`rule`) or keys of no rule
    /// (`reply`).
    fn on_answer(
        &mut self,
        by: AnsweredBy,
        (rule, reply): (Option<usize>, Option<(String, Vec<u8>)>),
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        self.with_dialogs(effects, |dialogs, cx| match (rule, reply) {
            (Some(rule), _) => dialogs.on_operator_answer(rule, by, now, cx),
            (None, Some((name, keys))) => dialogs.on_operator_reply(name, keys, by, now, cx),
            (None, None) => {}
        });
    }

    /// A channel's end, if it asks for one.
    fn end_as_asked(&mut self, end: Option<EndRequest>, now: Duration, effects: &mut Vec<Effect>) {
        match end {
            Some(EndRequest::Now(cause)) => self.start_ending(cause, now, false, effects),
            Some(EndRequest::AfterAnswer(cause)) => self.start_ending(cause, now, true, effects),
            None => {}
        }
    }

    fn on_hook(&mut self, input: &serde_json::Value, now: Duration, effects: &mut Vec<Effect>) {
        let judge = self.setup.judge();
        let answer = self
            .channels
            .hook
            .handle(input, judge, now, &mut self.approvals, effects);
        self.end_as_asked(answer.end, now, effects);
        effects.push(Effect::HookReply {
            output: answer.output,
        });
    }

    fn on_app_server(
        &mut self,
        message: &serde_json::Value,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        let judge = self.setup.judge();
        let app_server = &mut self.channels.app_server;
        match app_server.handle(message, judge, now, &mut self.approvals, effects) {
            AppServerOutcome::Nothing => {}
            AppServerOutcome::End(end) => self.end_as_asked(Some(end), now, effects),
            AppServerOutcome::LeftToOperator { request, decision } => {
                let asked = (request, decision);
                let profile = &self.setup.profile;
                self.channels
                    .screen
                    .hold_drawn_dialog(asked, profile, now, effects);
            }
        }
    }

    fn on_signal_file(
        &mut self,
        read: Result<SignalFile, SignalFileError>,
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

    /// A structured agent's output: a request retried in vain or its result ends the attempt;
    /// herd's ACP client's record of its answers replaces what the screen read.
    fn feed_stream(&mut self, bytes: &[u8], now: Duration, effects: &mut Vec<Effect>) {
        let Some(stream) = self.channels.stream.as_mut() else {
            return;
        };
        match stream.feed(bytes) {
            StreamNews::Nothing => {}
            StreamNews::HopelessRetry(cause) => self.begin_ending(cause, now, effects),
            StreamNews::Result { success } => {
                effects.push(Effect::Note(Note::ResultEvent { success }));
                let client = stream.facts().client_approvals.as_ref();
                if let (Some(acp), Some(client)) = (self.channels.acp, client) {
                    acp.take_record(client, &mut self.approvals, effects);
                }
                if self.setup.completion != Completion::SignalFile {
                    self.begin_ending(EndCause::AfterResult, now, effects);
                }
            }
        }
    }

    /// The agent's log grew: a request it retries in vain ends the attempt now; refusals are
    /// kept for the verdict.
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

    /// The agent's output, fed to the screen and to the stream, if it has one.
    fn on_output(&mut self, bytes: &[u8], now: Duration, effects: &mut Vec<Effect>) {
        let fed = self.screen.feed_counted(bytes);
        if !fed.replies.is_empty() {
            effects.push(Effect::Write {
                bytes: fed.replies,
                reason: InputReason::QueryReply,
            });
        }
        if fed.bell {
            effects.push(Effect::Note(Note::Bell));
        }
        self.feed_stream(bytes, now, effects);
        // The rows above a scrolled-off marker line are read only when it has the marker's text.
        if fed.scrolled > 0 && self.watches_screen_marker() && !self.marker_seen {
            let (scrolled, _) = self.screen.scrolled_rows(fed.scrolled, 0);
            if self.watch.may_be_on(&scrolled) {
                let (rows, context) = self.screen.scrolled_rows(fed.scrolled, CONTEXT_ROWS);
                if self.watch.find(&rows, context).is_some() {
                    self.saw_marker(effects);
                }
            }
        }
        self.after_screen_change(now, effects);
    }

    /// The screen changed: the snapshot is updated, and when its text or the cursor's row changed,
    /// every detector reads it.
    fn after_screen_change(&mut self, now: Duration, effects: &mut Vec<Effect>) {
        let mut snapshot = std::mem::take(&mut self.snapshot);
        let changed = self.screen.update(&mut snapshot);
        if !changed {
            self.snapshot = snapshot;
            return;
        }
        self.last_change = now;
        self.ready = detect::is_ready(&self.setup.profile, &snapshot.text);
        self.busy = detect::is_busy_rows(&self.setup.profile, &snapshot.rows);
        // Only a screen with the marker's text can show the marker line.
        if self.watches_screen_marker() && !self.marker_seen && self.watch.may_be_on(&snapshot.rows)
        {
            let (rows, history) = snapshot.with_history(self.screen.history_tail(CONTEXT_ROWS));
            if self.watch.find(&rows, history).is_some() {
                self.saw_marker(effects);
            }
        }
        let end = self.with_dialogs(effects, |d, cx| d.update_prompts(&snapshot, now, cx));
        self.end_as_asked(end.map(EndRequest::Now), now, effects);
        self.judge_screen_retries(&snapshot, now, effects);
        self.snapshot = snapshot;
    }

    /// Errors that do not heal by waiting: input awaited below an auth or quota text ends the
    /// attempt at once; retries beside the cause are judged as they happen.
    fn judge_screen_retries(
        &mut self,
        snapshot: &Snapshot,
        now: Duration,
        effects: &mut Vec<Effect>,
    ) {
        let profile = &self.setup.profile;
        if self.marker_seen || !self.end.running() {
            return;
        }
        let hopeless_idle = self.could_be_idle() && {
            let tail = detect::tail_rows(&snapshot.rows, profile.tail_rows);
            crate::core::classify::failure_text(&tail, profile)
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
        let (rows, _) = snapshot.with_history(self.screen.history_tail(profile.tail_rows));
        let tail = detect::tail_rows(&rows, profile.tail_rows);
        if let Some((failure, evidence)) = self.screen_retries.check(profile, &tail, now) {
            self.begin_ending(EndCause::HopelessRetry { failure, evidence }, now, effects);
        }
    }

    /// SPEC: success is the marker AND a normal end. herd ends an interactive agent once its
    /// turn is over; any other finishes by itself, up to the timeout.
    fn saw_marker(&mut self, effects: &mut Vec<Effect>) {
        self.marker_seen = true;
        effects.push(Effect::Note(Note::MarkerSeen));
    }

    fn on_tick(&mut self, now: Duration, effects: &mut Vec<Effect>) {
        self.channels.screen.expire_gone_prompts(now);
        if self.end.running() {
            let end = self.with_dialogs(effects, |d, cx| d.resend_untaken_answer(now, cx));
            self.end_as_asked(end.map(EndRequest::Now), now, effects);
            self.with_dialogs(effects, |d, cx| d.recheck_operator_answer(now, cx));
            let connected = self.channels.app_server.connected();
            let due = self
                .channels
                .screen
                .prompt_due_at(&self.setup.profile, connected);
            if due.is_some_and(|due| now >= due) {
                let snapshot = self.screen.snapshot();
                let end = self.with_dialogs(effects, |d, cx| d.update_prompts(&snapshot, now, cx));
                self.end_as_asked(end.map(EndRequest::Now), now, effects);
            }
        }
        if self.end.running() {
            if let Some(cause) = self.due_end(now) {
                self.begin_ending(cause, now, effects);
            }
        } else {
            let grace = Duration::from_secs_f64(self.setup.profile.exit_grace_sec);
            self.end.escalate(now, grace, effects);
        }
    }

    /// The end whose deadline has come: timeout, unanswered prompt, turn over, idle.
    fn due_end(&mut self, now: Duration) -> Option<EndCause> {
        let wait = self.setup.permission_wait;
        let held = self.waiting().is_some();
        if now >= self.setup.timeout {
            let after_sec = self.setup.timeout.as_secs();
            return Some(EndCause::Timeout { after_sec });
        }
        let unanswered = self
            .unanswered_prompt(now)
            .or_else(|| self.channels.app_server.overdue_request(wait, held, now));
        if let Some(evidence) = unanswered {
            return Some(EndCause::PermissionBlocked { evidence });
        }
        if self
            .turn_settle()
            .is_some_and(|settle| now >= self.last_change + settle)
        {
            return Some(EndCause::AfterMarker);
        }
        let idle = now >= self.last_change + self.setup.idle
            || self.hopeless_idle_at.is_some_and(|at| now >= at);
        if !(self.could_be_idle() && idle) {
            return None;
        }
        let rows = self.screen.visible_rows();
        self.end
            .keep_idle_tail(detect::tail_rows(&rows, self.setup.profile.tail_rows));
        Some(EndCause::Idle)
    }

    /// The evidence of the prompt held for the operator past `permission_wait`, headless.
    fn unanswered_prompt(&self, now: Duration) -> Option<String> {
        let (w, wait) = self.waiting().zip(self.setup.permission_wait)?;
        if now < w.since + wait {
            return None;
        }
        let name = &self.setup.profile.prompts[w.rule].name;
        let note = w.guard_note();
        Some(if note.is_empty() {
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
        })
    }

    fn begin_ending(&mut self, cause: EndCause, now: Duration, effects: &mut Vec<Effect>) {
        self.start_ending(cause, now, false, effects);
    }

    /// Begins the end if the attempt still runs (`settle`: nothing is sent before `HOOK_SETTLE`
    /// after a hook's refusal).
    fn start_ending(
        &mut self,
        cause: EndCause,
        now: Duration,
        settle: bool,
        effects: &mut Vec<Effect>,
    ) {
        if !self.end.running() {
            return;
        }
        let unanswered = self.waiting().map(|w| Unanswered {
            asks: w.asks(),
            waited: now.saturating_sub(w.since),
        });
        let scene = EndingScene::of(&self.screen.visible_rows(), &self.setup.prompt, unanswered);
        let exit_keys = self.setup.profile.exit_keys.as_deref();
        self.end
            .begin((cause, settle), now, (scene, exit_keys), effects);
        self.channels.screen.stop_waiting();
    }

    fn on_exit(&mut self, exit: ExitStatus, effects: &mut Vec<Effect>) {
        let cause = self.end.cause_at_exit();
        let tail = match (&cause, self.end.idle_tail()) {
            (EndCause::Idle, Some(tail)) => tail.clone(),
            _ => detect::tail_rows(&self.screen.visible_rows(), self.setup.profile.tail_rows),
        };
        if let Some(stream) = self.channels.stream.as_mut() {
            self.marker_seen = stream.finish(&self.setup.marker);
        }
        let facts = EndFacts {
            cause,
            marker_seen: self.marker_seen,
            exit,
            tail: &tail,
            completion: self.setup.completion,
            marker_required: self.setup.marker_required,
            stream: self.stream_facts(),
            signal: self.signal.as_ref(),
            agent_log: self.agent_log_facts(),
        };
        let mut verdict = classify(&facts, &self.setup.profile);
        end::name_the_operator_s_refusal(&self.approvals, &mut verdict);
        effects.push(Effect::Note(Note::Verdict(verdict.clone())));
        self.end.finish(verdict);
    }
}

mod end;
mod events;

pub use super::channel::effects::{
    AutoInput, Effect, InputReason, Note, StopSignal, WaitingPrompt,
};
pub use events::{Event, signal_status};

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod table_tests;

#[cfg(test)]
mod app_server_tests;
#[cfg(test)]
mod end_tests;
#[cfg(test)]
mod guard_tests;
#[cfg(test)]
mod hooks_tests;
