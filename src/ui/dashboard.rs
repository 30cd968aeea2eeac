//! The dashboard as a face of the driver's loop (`serve::driver`): its input is the terminal, its
//! wakeups the frame timer and the clock. It draws only when something visible changed, tiles'
//! output alone at most once per `TILE_FRAME` (a fleet's tiles would otherwise redraw it at the
//! full rate), and asks the batch for what it wants as `Command`s.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use crossterm::event::Event as TermEvent;
use ratatui::layout::Rect;

use super::act;
use super::actions;
use super::asks::{self, Ask, Told, silently};
use super::engine_events::on_engine_event;
use super::frame;
use super::keyboard::Keyboard;
use super::layout;
use super::reads::{FileRead, FileReadDone};
use super::settle::FrameLayout;
use super::state::{Leaving, Mode, UiState};
use crate::run::clock::Now;
use crate::run::engine::command::Command;
use crate::run::engine::control::ControlOutcome;
use crate::run::engine::inbox::EngineInbox;
use crate::run::engine::{BatchView, Engine, EngineEvent};
use crate::run::jobs::{self, Outbox};
use crate::serve::driver::{self, Driver, Face, Input, Stop};
use crate::term::Session;

/// At most ~60 frames a second.
pub const FRAME: Duration = Duration::from_millis(16);
/// Output in the tiles alone redraws at most 5 times a second: enough to follow a spinner.
pub const TILE_FRAME: Duration = Duration::from_millis(200);

/// What a report asks of the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Redraw {
    /// Nothing visible changed.
    No,
    /// A tile's agent printed: drawn within `TILE_FRAME`.
    Tile,
    /// The focused pane's agent printed, or the run changed: drawn within `FRAME`.
    Now,
}

/// Runs the batch in the dashboard until the operator leaves; returns herd's exit code.
/// `mouse`: clicks and the wheel go to the dashboard.
pub async fn run(mut engine: Engine, mut driver: Driver, mouse: bool) -> Result<i32> {
    tracing::info!(
        tasks = engine.view().file().tasks().len(),
        "dashboard started"
    );
    let mut session = Session::enter(mouse)?;
    let outcome = drive(&mut engine, &mut driver, &mut session).await;
    session.restore();
    match &outcome {
        // Back on the operator's screen: what the run did, as headless mode ends.
        Ok(()) => print!(
            "{}",
            crate::serve::summary::table(engine.view(), crate::serve::summary::stdout_width())
        ),
        Err(error) => tracing::error!("dashboard failed: {error:#}"),
    }
    outcome.map(|()| engine.view().exit_code())
}

async fn drive(engine: &mut Engine, driver: &mut Driver, session: &mut Session) -> Result<()> {
    let keyboard = Keyboard::start().wrap_err("cannot read the keyboard")?;
    let mut state = UiState::new(Now::read().at);
    // https://no-color.org: set and not empty.
    state.no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    state.background = crate::serve::background::in_background();
    state.web = driver.web_url().map(str::to_string);
    let mut dashboard = Dashboard {
        session,
        state,
        keyboard: Some(keyboard),
        frames: Frames {
            dirty: true,
            ..Frames::default()
        },
        layout: None,
        redraw_at: None,
        reads: None,
    };
    driver::run(engine, driver, &mut dashboard).await?;
    tracing::info!(code = engine.view().exit_code(), "dashboard left");
    Ok(())
}

/// What the screen shows and owes: the panes drawn last, and what changed since.
#[derive(Default)]
struct Frames {
    /// The tasks whose panes were drawn.
    visible: HashSet<usize>,
    /// The task whose pane is focused, when it shows.
    focused: Option<usize>,
    /// Something to draw at the full frame rate.
    dirty: bool,
    /// Only tiles to draw, at `TILE_FRAME`.
    tiles_dirty: bool,
    last_draw: Option<Instant>,
}

impl Frames {
    /// When the next frame may be drawn, seen at `now` (`next_frame`).
    fn next_at(&self, now: Instant) -> Option<Instant> {
        next_frame(self.dirty, self.tiles_dirty, self.last_draw, now)
    }

    /// A frame was drawn (or could not be) at `now`: nothing is owed.
    fn drawn(&mut self, now: Instant) {
        self.dirty = false;
        self.tiles_dirty = false;
        self.last_draw = Some(now);
    }
}

/// One dashboard: its terminal, its own state and what its screen owes.
struct Dashboard<'a> {
    session: &'a mut Session,
    state: UiState,
    /// The terminal's events; none once the terminal is gone (hung up, unreadable).
    keyboard: Option<Keyboard>,
    frames: Frames,
    /// The frame laid out in this turn, to draw.
    layout: Option<FrameLayout>,
    /// When the status bar's clock or a message's expiry redraws.
    redraw_at: Option<Instant>,
    /// Where the workers reading files for it hand back what they read (given at the start).
    reads: Option<Outbox<FileReadDone>>,
}

impl Face for Dashboard<'_> {
    type Input = Option<std::io::Result<TermEvent>>;
    type Note = Told;
    type Reply = FileReadDone;

    async fn next_input(&mut self) -> Self::Input {
        match &mut self.keyboard {
            Some(keyboard) => keyboard.next().await,
            None => std::future::pending().await,
        }
    }

    fn next_wakeup(&mut self, now: Instant) -> Option<Instant> {
        let state = &mut self.state;
        let expiry = state.expire(now);
        let ticking = state.finished.is_none() && state.leaving != Leaving::Now;
        let tick = ticking.then(|| state.next_second(now));
        self.redraw_at = [expiry, tick].into_iter().flatten().min();
        // After a hang-up there is no terminal to draw on; the agents are still stopped properly.
        let frame_at = self.frames.next_at(now).filter(|_| self.keyboard.is_some());
        let replay_at = state.replay.as_ref().and_then(|r| r.view.next_wakeup(now));
        [self.redraw_at, frame_at, replay_at]
            .into_iter()
            .flatten()
            .min()
    }

    /// The first agents start at the sizes of the panes they will be drawn in.
    fn start(
        &mut self,
        batch: &dyn BatchView,
        replies: Outbox<FileReadDone>,
        now: Now,
    ) -> Vec<Ask> {
        self.reads = Some(replies);
        let size = self.session.terminal.size().unwrap_or_default();
        let area = Rect::new(0, 0, size.width, size.height);
        let commands = start_at_pane_sizes(batch, area, now.at);
        commands.into_iter().map(silently).collect()
    }

    fn on_timer(&mut self, now: Instant) {
        if self.redraw_at.is_some_and(|at| now >= at) {
            self.frames.dirty = true;
        }
    }

    /// Each report says how soon it shows.
    fn look(&mut self, batch: &dyn BatchView, report: &EngineInbox, task: Option<usize>) {
        let frames = &mut self.frames;
        let seen = (&frames.visible, frames.focused);
        match look_at_report(batch, &mut self.state, report, task, seen) {
            Redraw::Now => frames.dirty = true,
            Redraw::Tile => frames.tiles_dirty = true,
            Redraw::No => {}
        }
    }

    /// A key, a paste or the mouse; or what a worker read: the window the operator asked for.
    fn on_input(&mut self, batch: &dyn BatchView, input: Input<Self>, now: Now) -> Vec<Ask> {
        let asked = match input {
            Input::Own(event) => self.on_terminal(batch, event, now.at),
            Input::Reply(read) => {
                act::opened(&mut self.state, read, now.at);
                self.frames.dirty = true;
                Vec::new()
            }
        };
        if let Some(read) = self.state.to_read.take() {
            self.read(read, now.at);
        }
        asked
    }

    fn on_control(&mut self) {
        self.frames.dirty = true;
    }

    /// `batch.stop` through the control socket: as the operator's confirmed stop.
    fn on_stop(&mut self, batch: &dyn BatchView, stop: Stop, _now: Now) -> Vec<Ask> {
        match stop {
            Stop::Interrupt => stop_for_good(batch, &mut self.state),
            Stop::HangUp => self.lose_terminal(batch),
            Stop::Asked if self.state.leaving == Leaving::No => {
                stop_for_good(batch, &mut self.state)
            }
            Stop::Asked => Vec::new(),
        }
    }

    fn told(&mut self, told: Told, outcome: &ControlOutcome, now: Instant) {
        asks::tell(&mut self.state, told, outcome, now);
    }

    /// The engine's events shown, the replay's clock, and whether the batch finished.
    fn show(&mut self, batch: &dyn BatchView, events: &[EngineEvent], now: Now) -> Result<()> {
        let now = now.at;
        if let Some(replay) = self.state.replay.as_mut()
            && replay.view.tick(now)
        {
            self.frames.dirty = true;
        }
        for event in events {
            on_engine_event(batch, &mut self.state, self.session, event, now)?;
            self.frames.dirty = true;
        }
        self.notice_finished(batch, now);
        Ok(())
    }

    fn leaves(&self, batch: &dyn BatchView) -> bool {
        match self.state.leaving {
            Leaving::Now => true,
            Leaving::Stopping => batch.is_done(),
            Leaving::No => false,
        }
    }

    /// Lays the frame out when one is due; the layout's commands go before it is drawn.
    fn lay_out(&mut self, batch: &dyn BatchView, now: Now) -> Vec<Ask> {
        let now = now.at;
        let frame_due = self.frames.next_at(now).is_some_and(|at| now >= at);
        if self.keyboard.is_none() || !frame_due {
            return Vec::new();
        }
        match frame::lay_out(&self.session.terminal, batch, &mut self.state, now) {
            Ok(layout) => {
                let asked = layout.commands().into_iter().map(silently).collect();
                self.layout = Some(layout);
                asked
            }
            Err(error) => self.cannot_draw(batch, &error, now),
        }
    }

    /// Draws the frame laid out, from what it reads: the first pane in order, and the panes shown.
    fn draw(&mut self, batch: &dyn BatchView, now: Now) -> Vec<Ask> {
        let now = now.at;
        let Some(layout) = self.layout.take() else {
            return Vec::new();
        };
        let first = layout.visible.first().copied();
        let terminal = &mut self.session.terminal;
        match frame::draw(terminal, batch, &mut self.state, &layout, now) {
            Ok(shown) => {
                self.frames.focused = first.filter(|t| shown.contains(t));
                self.frames.visible = shown;
                self.frames.drawn(now);
                Vec::new()
            }
            Err(error) => self.cannot_draw(batch, &error, now),
        }
    }
}

impl Dashboard<'_> {
    /// Hands `read` to a worker; what it read comes back through `on_reply`.
    fn read(&mut self, read: FileRead, now: Instant) {
        let Some(replies) = self.reads.clone() else {
            return;
        };
        if let Err(not) = jobs::spawn_job("dashboard-read", replies, read) {
            tracing::warn!("{not}");
            self.state.say(format!("cannot read the files: {not}"), now);
        }
    }

    /// A key, a paste or the mouse; or the terminal gone.
    fn on_terminal(
        &mut self,
        batch: &dyn BatchView,
        event: Option<std::io::Result<TermEvent>>,
        now: Instant,
    ) -> Vec<Ask> {
        // The pointer moving over the dashboard changes nothing on it.
        let moved = matches!(
            &event,
            Some(Ok(TermEvent::Mouse(m))) if m.kind == crossterm::event::MouseEventKind::Moved
        );
        let size = self.session.terminal.size().unwrap_or_default();
        let area = Rect::new(0, 0, size.width, size.height);
        let asked = match event {
            Some(Ok(event)) => on_terminal_event(batch, &mut self.state, event, area, now),
            // The terminal is gone: stop as if the operator had confirmed.
            Some(Err(error)) => {
                tracing::warn!("cannot read the keyboard: {error}");
                self.lose_terminal(batch)
            }
            None => self.lose_terminal(batch),
        };
        self.frames.dirty |= !moved;
        asked
    }

    /// No terminal any more: the run stops the way the operator would stop it.
    fn lose_terminal(&mut self, batch: &dyn BatchView) -> Vec<Ask> {
        self.keyboard = None;
        stop_for_good(batch, &mut self.state)
    }

    /// The frame cannot be laid out or drawn (mostly a terminal that hung up).
    fn cannot_draw(
        &mut self,
        batch: &dyn BatchView,
        error: &color_eyre::Report,
        now: Instant,
    ) -> Vec<Ask> {
        tracing::warn!("{error:#}; stopping the run");
        self.frames.drawn(now);
        self.lose_terminal(batch)
    }

    /// A task waiting for the operator's answers is not done: the clock runs on.
    fn notice_finished(&mut self, batch: &dyn BatchView, now: Instant) {
        let state = &mut self.state;
        if batch.is_done() && !batch.any_needs_input() && state.leaving == Leaving::No {
            if state.finished.is_none() {
                state.finished = Some(now);
                tracing::info!("batch finished");
                self.frames.dirty = true;
            }
            // A background dashboard ends with its batch, as headless does.
            if state.background {
                state.leaving = Leaving::Now;
            }
        } else if state.finished.take().is_some() {
            self.frames.dirty = true;
        }
    }
}

/// Starts the first agents together, each at the size of the pane it will be drawn in once
/// they all run.
pub(super) fn start_at_pane_sizes(batch: &dyn BatchView, area: Rect, now: Instant) -> Vec<Command> {
    let tasks = batch.file().tasks();
    let startable = batch
        .scoped_tasks()
        .into_iter()
        .filter(|&i| tasks[i].status.is_runnable() && batch.retry_at(i).is_none_or(|at| at <= now))
        .count();
    let panes = startable.min(batch.concurrency());
    let sizes = layout::first_launch_sizes(area, false, panes);
    vec![Command::SetLaunchSizes(sizes), Command::FillSlots]
}

/// Looks at a PTY report before the engine takes it (the attempt may conclude on it); says how
/// soon the screen should show it. `(visible, focused)`: the panes drawn last.
fn look_at_report(
    batch: &dyn BatchView,
    state: &mut UiState,
    report: &EngineInbox,
    task: Option<usize>,
    (visible, focused): (&HashSet<usize>, Option<usize>),
) -> Redraw {
    let output = matches!(report, EngineInbox::Output { .. });
    if !output && let Some(live) = task.and_then(|t| batch.live_attempt(t)) {
        state.keep_final_screen(live.task(), live.number(), live.attempt().screen().vt());
    }
    redraw_for(output, task, visible, focused)
}

/// How soon a report of `task` shows: output in a tile at the tiles' rate, hidden output never,
/// anything else at once.
fn redraw_for(
    output: bool,
    task: Option<usize>,
    visible: &HashSet<usize>,
    focused: Option<usize>,
) -> Redraw {
    match task {
        _ if !output => Redraw::Now,
        Some(t) if focused == Some(t) => Redraw::Now,
        Some(t) if visible.contains(&t) => Redraw::Tile,
        _ => Redraw::No,
    }
}

/// When the next frame may be drawn: `FRAME` after the last one when the operator's view changed,
/// `TILE_FRAME` when only tiles did, never with nothing to draw.
fn next_frame(
    dirty: bool,
    tiles_dirty: bool,
    last_draw: Option<Instant>,
    now: Instant,
) -> Option<Instant> {
    let interval = match (dirty, tiles_dirty) {
        (true, _) => FRAME,
        (false, true) => TILE_FRAME,
        (false, false) => return None,
    };
    Some(last_draw.map_or(now, |t| t + interval))
}

/// A signal or a lost keyboard: stop as if the operator had confirmed; a second time kills.
fn stop_for_good(batch: &dyn BatchView, state: &mut UiState) -> Vec<Ask> {
    if state.leaving == Leaving::Stopping {
        vec![silently(Command::KillAll)]
    } else if batch.is_done() {
        state.leaving = Leaving::Now;
        Vec::new()
    } else {
        state.mode = Mode::Normal;
        state.leaving = Leaving::Stopping;
        vec![silently(Command::Stop)]
    }
}

/// A key, a paste or the mouse, in a terminal of `area`; what it asks of the batch.
fn on_terminal_event(
    batch: &dyn BatchView,
    state: &mut UiState,
    event: TermEvent,
    area: Rect,
    now: Instant,
) -> Vec<Ask> {
    match event {
        TermEvent::Key(key) if super::keys::is_press(&key) => {
            actions::on_key(batch, state, &key, area, now)
        }
        TermEvent::Paste(text) => actions::on_paste(batch, state, &text),
        TermEvent::Mouse(mouse) => {
            super::mouse::on_mouse(batch, state, &mouse, area, now);
            Vec::new()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_redraws_at_once_only_in_the_focused_pane() {
        let visible: HashSet<usize> = [1, 2].into();
        let focused = Some(1);
        // (output?, task) -> how soon
        let table = [
            (true, Some(1), Redraw::Now),
            (true, Some(2), Redraw::Tile),
            (true, Some(3), Redraw::No),
            (true, None, Redraw::No),
            (false, Some(3), Redraw::Now),
            (false, None, Redraw::Now),
        ];
        for (output, task, expected) in table {
            assert_eq!(
                redraw_for(output, task, &visible, focused),
                expected,
                "output {output}, task {task:?}"
            );
        }
    }

    #[test]
    fn tiles_alone_wait_for_the_tile_frame() {
        let now = Instant::now();
        let last = now - Duration::from_millis(20);
        assert_eq!(next_frame(false, false, Some(last), now), None);
        assert_eq!(next_frame(true, false, Some(last), now), Some(last + FRAME));
        assert_eq!(next_frame(true, true, Some(last), now), Some(last + FRAME));
        assert_eq!(
            next_frame(false, true, Some(last), now),
            Some(last + TILE_FRAME)
        );
        assert_eq!(next_frame(false, true, None, now), Some(now));
        assert!(last + FRAME <= now && now < last + TILE_FRAME);
    }
}
