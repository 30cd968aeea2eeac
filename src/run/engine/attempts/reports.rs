//! What comes in while an attempt runs, handed to its state machine (its PTY's output, its
//! CLI's hook calls, its app server's messages, its signal file and agent log, the operator's
//! events, ticks), and the machine's effects carried out on the attempt's process, recording
//! and handles. Each hand-over returns the effects with the attempt's time; what they ask of
//! the other parts (an event for the frontends) is passed in by the engine.

use std::time::{Duration, Instant};

use color_eyre::eyre::Result;

use super::{Attempts, LiveAttempt};
use crate::core::app_server::AppServerReport;
use crate::core::attempt::{Effect, Event, InputReason};
use crate::run::attempt_files::SignalText;
use crate::run::engine::event::{EngineEvent, note_label};
use crate::run::engine::outgoing::Outgoing;
use crate::run::hygiene::{self, EndedProcess};

/// An attempt's effects, with its time (since it started) when they arose.
pub(in crate::run::engine) type Effects = (Vec<Effect>, Duration);

impl Attempts {
    /// Output of live attempt `key`'s terminal: recorded, scanned for its launcher's words,
    /// handed to the attempt.
    pub(in crate::run::engine) fn output(
        &mut self,
        key: u64,
        bytes: &[u8],
        now: Instant,
    ) -> Result<Option<Effects>> {
        let Some(live) = self.get_live_mut(key) else {
            return Ok(None);
        };
        let at = now.saturating_duration_since(live.started);
        live.recorder.output(at, bytes)?;
        if let Some(remote) = &mut live.remote {
            remote.scan(bytes);
        }
        Ok(Some((live.attempt.handle(Event::Output(bytes), at), at)))
    }

    /// A hook call of attempt `key`'s CLI: its attempt decides, the answer goes back at once
    /// (no decision when the attempt is gone).
    pub(in crate::run::engine) fn hook(
        &mut self,
        key: u64,
        input: &serde_json::Value,
        reply: &std::sync::mpsc::Sender<String>,
        now: Instant,
    ) -> Option<Effects> {
        let Some(live) = self.get_live_mut(key) else {
            let _ = reply.send(crate::core::hook::NO_DECISION.to_string());
            return None;
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
        Some((effects, at))
    }

    /// What herd's client of attempt `key`'s Codex app server saw: handed to the attempt,
    /// whose answers go back through the link (`Effect::AppServerSend`).
    pub(in crate::run::engine) fn app_server(
        &mut self,
        key: u64,
        report: AppServerReport,
        now: Instant,
    ) -> Option<Effects> {
        let live = self.get_live_mut(key)?;
        let at = now.saturating_duration_since(live.started);
        let effects = match &report {
            AppServerReport::Connected => {
                tracing::info!(task = %live.task_id, attempt = live.number, "connected to the Codex app server: its approvals are decided there");
                live.attempt.handle(Event::AppServerConnected, at)
            }
            AppServerReport::Message(message) => live.attempt.handle(Event::AppServer(message), at),
            AppServerReport::Closed(_) => Vec::new(),
        };
        Some((effects, at))
    }

    /// Hands attempt `key` its signal file's text when it changed. While the agent runs only a
    /// valid file counts (it may be half written); `last` (the agent exited) hands over
    /// whatever is there.
    pub(in crate::run::engine) fn signal(
        &mut self,
        key: u64,
        text: SignalText,
        last: bool,
        now: Instant,
    ) -> Option<Effects> {
        let live = self.get_live_mut(key)?;
        let (read, raw) = match text {
            SignalText::Text(raw) => (crate::core::signal_file::parse(&raw), raw),
            SignalText::TooLarge(bytes) => {
                let problem = crate::core::signal_file::SignalFileError::TooLarge { bytes };
                let raw = problem.to_string();
                (Err(problem), raw)
            }
        };
        if live.signal_text.as_deref() == Some(raw.as_str()) || (read.is_err() && !last) {
            return None;
        }
        live.signal_text = Some(raw);
        let at = now.saturating_duration_since(live.started);
        Some((live.attempt.handle(Event::SignalFile(read), at), at))
    }

    /// Hands attempt `key` what its agent added to its own log.
    pub(in crate::run::engine) fn agent_log(
        &mut self,
        key: u64,
        bytes: &[u8],
        now: Instant,
    ) -> Option<Effects> {
        let live = self.get_live_mut(key)?;
        let at = now.saturating_duration_since(live.started);
        Some((live.attempt.handle(Event::AgentLog(bytes), at), at))
    }

    /// Hands task `index`'s live attempt an event (operator answers, keys, cancel, resize); its
    /// key, with what it does.
    pub(in crate::run::engine) fn send(
        &mut self,
        index: usize,
        event: Event<'_>,
        now: Instant,
    ) -> Result<Option<(u64, Effects)>> {
        let Some((key, live)) = self.live_of_task_mut(index) else {
            return Ok(None);
        };
        let at = now.saturating_duration_since(live.started);
        if let Event::Resize { rows, cols } = event {
            live.process.resize(rows, cols)?;
            live.recorder.resize(at, cols, rows)?;
        }
        Ok(Some((key, (live.attempt.handle(event, at), at))))
    }

    /// What the sweep of live attempt `key` ended, said in the log and kept for its record.
    pub(in crate::run::engine) fn swept(&mut self, key: u64, ended: Vec<EndedProcess>) {
        if let Some(live) = self.get_live_mut(key) {
            for process in &ended {
                tracing::info!(task = %live.task_id, attempt = live.number, "ended a leftover process: {}", hygiene::describe(process));
            }
            live.swept = ended;
        }
    }

    /// The live attempts whose deadline passed at `now`, by key. One pass (this runs on every
    /// wakeup, so once per output burst); when one recording's flush is due, every recording
    /// flushes what it holds: a fleet's flushes share one wakeup instead of one each at
    /// scattered times.
    pub(in crate::run::engine) fn due(&mut self, now: Instant) -> Result<Vec<u64>> {
        let flush_all = self.live().any(|(_, live)| {
            let at = now.saturating_duration_since(live.started);
            live.recorder.flush_due().is_some_and(|due| due <= at)
        });
        let mut due = Vec::new();
        for (key, live) in self.live_mut() {
            let at = now.saturating_duration_since(live.started);
            if flush_all {
                live.recorder.flush_pending(at)?;
            }
            if live.attempt.next_deadline().is_some_and(|d| d <= at) {
                due.push(key);
            }
        }
        Ok(due)
    }

    /// The tick of live attempt `key`, if its deadline still passed at `now` (an earlier
    /// attempt's effects may have moved it meanwhile).
    pub(in crate::run::engine) fn tick(&mut self, key: u64, now: Instant) -> Option<Effects> {
        let live = self.get_live_mut(key)?;
        let at = now.saturating_duration_since(live.started);
        let due = live.attempt.next_deadline().is_some_and(|d| d <= at);
        due.then(|| (live.attempt.handle(Event::Tick, at), at))
    }

    /// The earliest of the live attempts' deadlines and recordings' flushes.
    pub(in crate::run::engine) fn next_deadline(&self) -> Option<Instant> {
        let deadlines = self.live().filter_map(|(_, live)| {
            let attempt = live.attempt.next_deadline().map(|d| live.started + d);
            let flush = live.recorder.flush_due().map(|d| live.started + d);
            attempt.into_iter().chain(flush).min()
        });
        deadlines.min()
    }
}

impl LiveAttempt {
    /// Carries out its state machine's `effects` (at `at`): keys written and recorded
    /// (`record_input`: the operator's keys too, else only that they typed), signals sent
    /// (its descendants noted first unless it `exited`), notes recorded and told to `out`,
    /// messages to its app server. A wait for the operator gets its id as it begins.
    pub(in crate::run::engine) fn apply(
        &mut self,
        (effects, at): Effects,
        (record_input, exited): (bool, bool),
        out: &mut Outgoing,
    ) -> Result<()> {
        for effect in effects {
            match effect {
                Effect::Write { bytes, reason } => {
                    if reason == InputReason::Operator && !record_input {
                        self.recorder.operator_typed(at, &bytes)?;
                    } else {
                        self.recorder.input(at, &bytes)?;
                    }
                    self.process.write(bytes);
                }
                Effect::Signal(signal) => {
                    if !exited {
                        crate::run::engine::processes::remember_descendants(self);
                    }
                    if let Some(remote) = &mut self.remote {
                        remote.signalled = true;
                    }
                    self.process.signal(signal);
                }
                Effect::Note(note) => {
                    self.recorder.marker(at, &note_label(&note))?;
                    let task_id = self.task_id.clone();
                    out.events.push(EngineEvent::Note { task_id, note });
                }
                // Carried back to the waiting call by `hook`; no call waits for any other.
                Effect::HookReply { .. } => {}
                Effect::AppServerSend { text } => {
                    if let Some(link) = &self.app_server {
                        link.send(text);
                    }
                }
            }
        }
        // Every wait for the operator gets its id as it begins (`core::prompt_id`).
        if let Some(id) = self.prompts.sync(self.attempt.waiting()) {
            tracing::info!(
                task_id = self.task_id,
                prompt_id = id,
                "a prompt waits for the operator"
            );
        }
        Ok(())
    }
}
