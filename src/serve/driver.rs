//! The turn every frontend shares: the headless loop and the dashboard wait on the driver (the
//! engine's inbox and the control socket's commands) beside their own sources (signals, keys, timers),
//! hand what woke them to `take`, and end each turn with `end_turn`, which ticks the engine and
//! hands back its events — published to the control socket's subscribers on the way. So the
//! socket works in every frontend and no frontend repeats the drain block.

use std::sync::Arc;

use color_eyre::eyre::Result;
use serde_json::json;
use tokio::sync::mpsc;

use crate::run::clock::Now;
use crate::run::control::{self, ControlLink, Request};
use crate::run::engine::inbox::EngineInbox;
use crate::run::engine::{BatchView, Engine, EngineEvent};

/// What woke the driver.
#[derive(Debug)]
pub enum Input {
    /// Reports waiting together, each terminal's output in one piece (`engine::inbox::coalesce`).
    Reports(Vec<EngineInbox>),
    /// A command from the control socket.
    Control(Request),
}

/// What a turn's input asked of the frontend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Taken {
    /// A control command changed something (redraw).
    pub changed: bool,
    /// `batch.stop`: stop the run as on the first Ctrl-C.
    pub stop: bool,
}

pub struct Driver {
    reports: mpsc::Receiver<EngineInbox>,
    control: Option<ControlLink>,
    /// `batch_done` was published and the batch has not started anything since.
    said_done: bool,
}

impl Driver {
    /// `control`: the run's control socket, when it has one.
    pub fn new(reports: mpsc::Receiver<EngineInbox>, control: Option<ControlLink>) -> Driver {
        Driver {
            reports,
            control,
            said_done: false,
        }
    }

    /// Waits for reports or a control command.
    pub async fn next(&mut self) -> Input {
        let control = async {
            match self.control.as_mut() {
                Some(link) => link.requests.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            report = self.reports.recv() => {
                // Take everything already waiting before drawing conclusions.
                let mut batch: Vec<EngineInbox> = report.into_iter().collect();
                while !batch.is_empty()
                    && batch.len() < crate::run::engine::inbox::BATCH_MAX
                    && let Ok(report) = self.reports.try_recv()
                {
                    batch.push(report);
                }
                Input::Reports(batch)
            }
            Some(request) = control => Input::Control(request),
        }
    }

    /// Carries out what woke the driver: each report is fed to the engine (`on_report`), after
    /// the frontend had a look at it (`look`: the attempt it ends may go with it); a command is
    /// carried out and answered.
    pub fn take(
        &mut self,
        engine: &mut Engine,
        input: Input,
        now: Now,
        mut look: impl FnMut(&Engine, &EngineInbox),
    ) -> Result<Taken> {
        match input {
            Input::Reports(batch) => {
                for report in crate::run::engine::inbox::coalesce(batch) {
                    look(engine, &report);
                    engine.on_report(report, now)?;
                }
                Ok(Taken::default())
            }
            Input::Control(request) => {
                let hello = self
                    .control
                    .as_ref()
                    .map_or(serde_json::Value::Null, |c| c.hello.clone());
                let handled = control::handle::handle(engine, request.command, &hello, now);
                // The caller may have gone; nothing to answer then.
                let _ = request.reply.send(handled.reply);
                Ok(Taken {
                    changed: true,
                    stop: handled.stop,
                })
            }
        }
    }

    /// The end of a turn: the engine's deadlines and writes (`on_tick`), then its events, for
    /// the frontend to show (and published to subscribers).
    pub fn end_turn(&mut self, engine: &mut Engine, now: Now) -> Result<Vec<EngineEvent>> {
        engine.on_tick(now)?;
        Ok(self.drain(engine))
    }

    /// The engine's events since the last drain, published to subscribers.
    pub fn drain(&mut self, engine: &mut Engine) -> Vec<EngineEvent> {
        let events = engine.drain_events();
        self.publish(engine, &events);
        events
    }

    fn publish(&mut self, batch: &dyn BatchView, events: &[EngineEvent]) {
        let Some(link) = &self.control else {
            return;
        };
        let mut lines: Vec<serde_json::Value> = Vec::new();
        if link.events.receiver_count() > 0 {
            lines.extend(
                events
                    .iter()
                    .filter_map(|e| control::events::to_json(batch, e)),
            );
        }
        let done = batch.is_done() && !batch.any_needs_input();
        if done && !self.said_done {
            lines.push(json!({"event": "batch_done", "exit_code": batch.exit_code()}));
        }
        self.said_done = done;
        for line in lines {
            let line: Arc<str> = control::protocol::event_line(&line).into();
            // No subscriber: nobody to tell.
            let _ = link.events.send(line);
        }
    }
}
