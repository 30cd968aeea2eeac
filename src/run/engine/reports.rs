//! What comes in while attempts run: PTY output, exits and closes, timers, signal files and
//! operator input are fed to the attempts' state machines, and their effects carried out.

use std::time::{Duration, Instant};

use color_eyre::eyre::Result;

use super::Engine;
use super::event::{EngineEvent, note_label};
use super::executor::end_input;

use crate::core::attempt::{Effect, Event, InputReason};
use crate::core::batch::{EndInput, Input};
use crate::run::attempt_files::{FilesReport, SignalText};
use crate::run::clock::Now;
use crate::run::engine::inbox::EngineInbox;
use crate::run::hygiene;

impl Engine {
    /// Handles one report of the engine's inbox (a terminal's, a worker's, the writer's).
    pub fn on_report(&mut self, report: EngineInbox, now: Now) -> Result<()> {
        let now = self.turn(now);
        match report {
            EngineInbox::Output { key, bytes } => {
                let Some(live) = self.attempts.get_live_mut(key) else {
                    return Ok(());
                };
                let at = now.saturating_duration_since(live.started);
                live.recorder.output(at, &bytes)?;
                if let Some(remote) = &mut live.remote {
                    remote.scan(&bytes);
                }
                let effects = live.attempt.handle(Event::Output(&bytes), at);
                self.apply_effects(key, effects, at)?;
            }
            EngineInbox::Exited { key, status } => {
                self.drive(end_input(key, EndInput::Exited(status)), now)?;
            }
            EngineInbox::Swept { key, ended } => {
                if let Some(live) = self.attempts.get_live_mut(key) {
                    for process in &ended {
                        tracing::info!(task = %live.task_id, attempt = live.number, "ended a leftover process: {}", hygiene::describe(process));
                    }
                    live.swept = ended;
                }
                self.drive(end_input(key, EndInput::Swept), now)?;
            }
            EngineInbox::Gathered { key, gathered } => {
                if let Some(live) = self.attempts.get_ending_mut(key) {
                    live.gathered = Some(gathered);
                }
                self.drive(end_input(key, EndInput::Gathered), now)?;
            }
            EngineInbox::Files { key, report } => self.on_files(key, report, now)?,
            EngineInbox::Prepared { key, preparation } => {
                self.on_prepared(key, *preparation, now)?;
            }
            EngineInbox::Closed { key } => {
                self.drive(end_input(key, EndInput::TerminalClosed), now)?;
            }
            EngineInbox::TasksFileWritten { .. } => self.take_writes(now)?,
            EngineInbox::Hook { key, input, reply } => self.on_hook(key, &input, &reply, now)?,
            EngineInbox::AppServer { key, report } => self.on_app_server(key, report, now)?,
        }
        Ok(())
    }

    /// A hook call of attempt `key`'s CLI: its attempt decides, the answer goes back at once
    /// (no decision when the attempt is gone).
    fn on_hook(
        &mut self,
        key: u64,
        input: &serde_json::Value,
        reply: &std::sync::mpsc::Sender<String>,
        now: Instant,
    ) -> Result<()> {
        let Some(live) = self.attempts.get_live_mut(key) else {
            let _ = reply.send(crate::core::hook::NO_DECISION.to_string());
            return Ok(());
        };
        let at = now.saturating_duration_since(live.started);
        let mut effects = live.attempt.handle(Event::Hook(input), at);
        effects.retain(|effect| match effect {
            Effect::HookReply { output } => {
                let _ = reply.send(output.clone());
                false
            }
            _ => true,
        });
        self.apply_effects(key, effects, at)
    }

    /// What herd's client of attempt `key`'s Codex app server saw: handed to the attempt,
    /// whose answers go back through the link (`Effect::AppServerSend` in `apply`).
    fn on_app_server(
        &mut self,
        key: u64,
        report: crate::core::app_server::AppServerReport,
        now: Instant,
    ) -> Result<()> {
        use crate::core::app_server::AppServerReport;
        let Some(live) = self.attempts.get_live_mut(key) else {
            return Ok(());
        };
        let at = now.saturating_duration_since(live.started);
        let effects = match &report {
            AppServerReport::Connected => {
                tracing::info!(task = %live.task_id, attempt = live.number, "connected to the Codex app server: its approvals are decided there");
                live.attempt.handle(Event::AppServerConnected, at)
            }
            AppServerReport::Message(message) => live.attempt.handle(Event::AppServer(message), at),
            AppServerReport::Closed(_) => Vec::new(),
        };
        self.apply_effects(key, effects, at)
    }

    pub(super) fn apply_effects(
        &mut self,
        key: u64,
        effects: Vec<Effect>,
        at: Duration,
    ) -> Result<()> {
        let Some(live) = self.attempts.get_live_mut(key) else {
            return Ok(());
        };
        for effect in effects {
            match effect {
                Effect::Write { bytes, reason } => {
                    if reason == InputReason::Operator && !self.tasks.opts.record_input {
                        live.recorder.operator_typed(at, &bytes)?;
                    } else {
                        live.recorder.input(at, &bytes)?;
                    }
                    live.process.write(bytes);
                }
                Effect::Signal(signal) => {
                    if self.batch.end(key).is_none_or(|end| end.exit().is_none()) {
                        super::processes::remember_descendants(live);
                    }
                    if let Some(remote) = &mut live.remote {
                        remote.signalled = true;
                    }
                    live.process.signal(signal);
                }
                Effect::Note(note) => {
                    live.recorder.marker(at, &note_label(&note))?;
                    self.out.events.push(EngineEvent::Note {
                        task_id: live.task_id.clone(),
                        note,
                    });
                }
                // Carried back to the waiting call by `on_hook`; no call waits for any other.
                Effect::HookReply { .. } => {}
                Effect::AppServerSend { text } => {
                    if let Some(link) = &live.app_server {
                        link.send(text);
                    }
                }
            }
        }
        // Every wait for the operator gets its id as it begins (`core::prompt_id`).
        if let Some(id) = live.prompts.sync(live.attempt.waiting()) {
            tracing::info!(
                task_id = live.task_id,
                prompt_id = id,
                "a prompt waits for the operator"
            );
        }
        Ok(())
    }

    /// Deadlines that passed: attempt timers, drains, retries; then this turn's changes go to
    /// the tasks file's writer (`commit`).
    pub fn on_tick(&mut self, now: Now) -> Result<()> {
        let now = self.turn(now);
        // Writes the writer finished whose wakeup is still queued behind other reports.
        self.take_writes(now)?;
        // One pass over the live attempts (this runs on every wakeup, so once per output burst):
        // the attempts whose deadline passed are noted; only those are looked up again, and
        // handed the tick if an earlier one's effects did not move their deadline meanwhile.
        // When one recording's flush is due, every recording flushes what it holds: a fleet's
        // flushes share one wakeup instead of one each at scattered times.
        let flush_all = self.attempts.live().any(|(_, live)| {
            let at = now.saturating_duration_since(live.started);
            live.recorder.flush_due().is_some_and(|due| due <= at)
        });
        let mut due = Vec::new();
        for (key, live) in self.attempts.live_mut() {
            let at = now.saturating_duration_since(live.started);
            if flush_all {
                live.recorder.flush_pending(at)?;
            }
            if live.attempt.next_deadline().is_some_and(|d| d <= at) {
                due.push(key);
            }
        }
        for key in due {
            let Some(live) = self.attempts.get_live_mut(key) else {
                continue;
            };
            let at = now.saturating_duration_since(live.started);
            if live.attempt.next_deadline().is_some_and(|d| d <= at) {
                let effects = live.attempt.handle(Event::Tick, at);
                self.apply_effects(key, effects, at)?;
            }
        }
        if self.hosts.any_unswept() {
            self.hosts.sweep_back(self.batch.queue(), now);
        }
        // The drains that are over, then the slots and the write (`core::batch`).
        self.drive(Input::Tick, now)
    }

    /// What the worker read of attempt `key`'s signal file and agent log (`attempt_files`).
    fn on_files(&mut self, key: u64, report: FilesReport, now: Instant) -> Result<()> {
        match report {
            FilesReport::Signal(text) => self.take_signal(key, text, now, false),
            FilesReport::AgentLog(bytes) => self.take_agent_log(key, &bytes, now),
            FilesReport::Last {
                signal,
                log,
                trouble,
            } => {
                let Some(live) = self.attempts.get_live_mut(key) else {
                    return Ok(());
                };
                live.files = None;
                let mut lost = None;
                match trouble {
                    // Without its signal file the attempt has no verdict: its host's trouble.
                    Some(why) if live.plan.signal_file.is_some() => {
                        lost = Some(why.to_string());
                    }
                    _ => {
                        if let Some(text) = signal {
                            self.take_signal(key, text, now, true)?;
                        }
                        // The last lines of the agent's log (a Codex refusal the model talked
                        // past).
                        if !log.is_empty() {
                            self.take_agent_log(key, &log, now)?;
                        }
                    }
                }
                self.drive(end_input(key, EndInput::LastFilesRead { lost }), now)
            }
        }
    }

    /// Hands attempt `key` its signal file's text when it changed. While the agent runs only a
    /// valid file counts (it may be half written); `last` (the agent exited) hands over
    /// whatever is there.
    fn take_signal(&mut self, key: u64, text: SignalText, now: Instant, last: bool) -> Result<()> {
        let Some(live) = self.attempts.get_live_mut(key) else {
            return Ok(());
        };
        let (read, raw) = match text {
            SignalText::Text(raw) => (crate::core::signal_file::parse(&raw), raw),
            SignalText::TooLarge(bytes) => {
                let problem = crate::core::signal_file::SignalFileError::TooLarge { bytes };
                let raw = problem.to_string();
                (Err(problem), raw)
            }
        };
        if live.signal_text.as_deref() == Some(raw.as_str()) || (read.is_err() && !last) {
            return Ok(());
        }
        live.signal_text = Some(raw);
        let at = now.saturating_duration_since(live.started);
        let effects = live.attempt.handle(Event::SignalFile(read), at);
        self.apply_effects(key, effects, at)
    }

    /// Hands attempt `key` what its agent added to its own log.
    fn take_agent_log(&mut self, key: u64, bytes: &[u8], now: Instant) -> Result<()> {
        let Some(live) = self.attempts.get_live_mut(key) else {
            return Ok(());
        };
        let at = now.saturating_duration_since(live.started);
        let effects = live.attempt.handle(Event::AgentLog(bytes), at);
        self.apply_effects(key, effects, at)
    }

    /// When `on_tick` should run next, seen at `now`.
    pub fn next_wakeup(&self, now: Instant) -> Option<Instant> {
        let attempts = self.attempts.live().filter_map(|(_, live)| {
            let attempt = live.attempt.next_deadline().map(|d| live.started + d);
            let flush = live.recorder.flush_due().map(|d| live.started + d);
            attempt.into_iter().chain(flush).min()
        });
        // Drains, retries, holds, rests, hosts' returns.
        attempts
            .chain(self.batch.next_deadline(now))
            .chain(self.gives_up_on_file_at())
            .min()
    }

    /// Sends an event to a live attempt (operator answers, keys, cancel, resize).
    pub fn send_to_task(&mut self, index: usize, event: Event<'_>, now: Now) -> Result<()> {
        let now = self.turn(now);
        self.send(index, event, now)
    }

    /// `send_to_task` within a turn.
    pub(super) fn send(&mut self, index: usize, event: Event<'_>, now: Instant) -> Result<()> {
        let Some((key, live)) = self.attempts.live_of_task_mut(index) else {
            return Ok(());
        };
        let at = now.saturating_duration_since(live.started);
        if let Event::Resize { rows, cols } = event {
            live.process.resize(rows, cols)?;
            live.recorder.resize(at, cols, rows)?;
        }
        let effects = live.attempt.handle(event, at);
        self.apply_effects(key, effects, at)
    }
}
