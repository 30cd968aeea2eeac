//! The dashboard's event loop: the headless loop's shape (the driver's PTY reports and control
//! commands, the engine's next wakeup, signals; `run::driver` owns the shared turn) plus the
//! keyboard and a frame timer. It waits on channels and timers only, and draws only when
//! something visible changed: at most once per frame interval for the operator's keys, the
//! focused pane and the run's events, at most once per `TILE_FRAME` when only the tiles' output
//! changed (a fleet's tiles would otherwise redraw the whole dashboard at the full frame rate).
//! What it asks of the batch goes as `Command`s through `Engine::apply`.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use crossterm::event::Event as TermEvent;
use ratatui::layout::Rect;
use tokio::signal::unix::{Signal, SignalKind, signal};

use super::actions;
use super::engine_events::on_engine_event;
use super::frame;
use super::keyboard::Keyboard;
use super::layout;
use super::state::{Leaving, Mode, UiState};
use crate::run::clock::Now;
use crate::run::driver::{Driver, Input};
use crate::run::engine::command::Command;
use crate::run::engine::inbox::EngineInbox;
use crate::run::engine::{BatchView, Engine};
use crate::term::Session;

/// At most ~60 frames a second.
pub const FRAME: Duration = Duration::from_millis(16);
/// Output in the tiles (every pane but the focused one) alone redraws at most 5 times a
/// second: enough to follow a spinner or a progress line at a glance, a twelfth of the frames.
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
/// `mouse`: clicks and the wheel go to the dashboard (the terminal's own selection then needs
/// its modifier, Shift in most terminals).
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
        Ok(_) => print!(
            "{}",
            crate::run::summary::table(&engine, crate::run::summary::stdout_width())
        ),
        Err(error) => {
            tracing::error!("dashboard failed: {error:#}");
            let reason = format!("{error:#}");
            // Abandoning carries out no effect that can fail.
            if let Err(error) = engine.apply(Command::Abandon { reason }, Now::read()) {
                tracing::error!("cannot abandon the run: {error:#}");
            }
        }
    }
    outcome
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending::<()>().await,
    }
}

async fn next_event(events: &mut Option<Keyboard>) -> Option<std::io::Result<TermEvent>> {
    match events {
        Some(keyboard) => keyboard.next().await,
        None => std::future::pending().await,
    }
}

/// What woke a turn of the loop.
enum Woke {
    /// PTY reports or a control command (`run::driver`).
    Driver(Input),
    Terminal(Option<std::io::Result<TermEvent>>),
    /// The engine's next wakeup, or a frame to draw.
    Timer,
    /// The status bar's clock or a message's expiry.
    Redraw,
    /// INT or TERM.
    Signal,
    HangUp,
}

/// The signals the dashboard stops on.
struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Signals {
    fn listen() -> Result<Signals> {
        let listen = |kind| signal(kind).wrap_err("cannot listen for signals");
        Ok(Signals {
            interrupt: listen(SignalKind::interrupt())?,
            terminate: listen(SignalKind::terminate())?,
            hangup: listen(SignalKind::hangup())?,
        })
    }
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
}

/// One dashboard's loop: the engine and driver it steers, its terminal and its own state.
struct Dashboard<'a> {
    engine: &'a mut Engine,
    driver: &'a mut Driver,
    session: &'a mut Session,
    state: UiState,
    /// Dropped when the terminal is gone (its reader thread stops).
    events: Option<Keyboard>,
    /// The time of each turn, read once when it starts, for the engine and the dashboard alike.
    clock: Now,
    frames: Frames,
}

async fn drive(engine: &mut Engine, driver: &mut Driver, session: &mut Session) -> Result<i32> {
    let events = Some(Keyboard::start().wrap_err("cannot read the keyboard")?);
    let mut signals = Signals::listen()?;
    let clock = Now::read();
    let mut state = UiState::new(clock.at);
    // https://no-color.org: set and not empty.
    state.no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    state.background = crate::run::background::in_background();
    let size = session.terminal.size().unwrap_or_default();
    start_at_pane_sizes(engine, Rect::new(0, 0, size.width, size.height), clock)?;
    let mut dashboard = Dashboard {
        engine,
        driver,
        session,
        state,
        events,
        clock,
        frames: Frames {
            dirty: true,
            ..Frames::default()
        },
    };
    loop {
        let woke = dashboard.wait(&mut signals).await;
        dashboard.clock = Now::read();
        dashboard.on_woke(woke)?;
        dashboard.end_turn()?;
        if dashboard.leaves() {
            break;
        }
        dashboard.draw_if_due()?;
    }
    let engine = dashboard.engine;
    tracing::info!(code = engine.view().exit_code(), "dashboard left");
    engine.settle_writes(Now::read(), crate::run::engine::LAST_WRITE_WAIT)?;
    Ok(engine.view().exit_code())
}

impl Dashboard<'_> {
    /// Waits for what wakes the next turn, seen from the last turn's time.
    async fn wait(&mut self, signals: &mut Signals) -> Woke {
        let now = self.clock.at;
        let state = &mut self.state;
        let expiry = state.expire(now);
        let ticking = state.finished.is_none() && state.leaving != Leaving::Now;
        let tick = ticking.then(|| state.next_second(now));
        let redraw_at = [expiry, tick].into_iter().flatten().min();
        // After a hang-up there is no terminal to draw on; the agents are still stopped properly.
        let frame_at = self.frames.next_at(now).filter(|_| self.events.is_some());
        let replay_at = state.replay.as_ref().and_then(|r| r.view.next_wakeup(now));
        let wake = [self.engine.next_wakeup(now), replay_at]
            .into_iter()
            .flatten()
            .min();
        // In this order when several are ready: a signal, the operator's key, then output, so
        // a fleet's output never keeps a key waiting for more than one turn of the loop.
        tokio::select! {
            biased;
            _ = signals.interrupt.recv() => Woke::Signal,
            _ = signals.terminate.recv() => Woke::Signal,
            _ = signals.hangup.recv() => Woke::HangUp,
            event = next_event(&mut self.events) => Woke::Terminal(event),
            input = self.driver.next() => Woke::Driver(input),
            () = sleep_until(wake) => Woke::Timer,
            () = sleep_until(redraw_at) => Woke::Redraw,
            () = sleep_until(frame_at) => Woke::Timer,
        }
    }

    /// Carries out what woke the turn.
    fn on_woke(&mut self, woke: Woke) -> Result<()> {
        match woke {
            Woke::Driver(input) => self.on_driver(input)?,
            Woke::Terminal(event) => self.on_terminal(event)?,
            Woke::Timer => {}
            Woke::Redraw => self.frames.dirty = true,
            Woke::Signal => stop_for_good(self.engine, &mut self.state, self.clock)?,
            Woke::HangUp => self.lose_terminal()?,
        }
        Ok(())
    }

    /// PTY reports (each says how soon it shows) or a control command.
    fn on_driver(&mut self, input: Input) -> Result<()> {
        let clock = self.clock;
        let (state, frames) = (&mut self.state, &mut self.frames);
        let taken =
            self.driver.take(
                self.engine,
                input,
                clock,
                |engine, report| match look_at_report(
                    engine,
                    state,
                    report,
                    &frames.visible,
                    frames.focused,
                ) {
                    Redraw::Now => frames.dirty = true,
                    Redraw::Tile => frames.tiles_dirty = true,
                    Redraw::No => {}
                },
            )?;
        self.frames.dirty |= taken.changed;
        // `batch.stop` through the control socket: as the operator's confirmed stop.
        if taken.stop && self.state.leaving == Leaving::No {
            stop_for_good(self.engine, &mut self.state, self.clock)?;
        }
        Ok(())
    }

    /// A key, a paste or the mouse; or the terminal gone.
    fn on_terminal(&mut self, event: Option<std::io::Result<TermEvent>>) -> Result<()> {
        // The pointer moving over the dashboard changes nothing on it.
        let moved = matches!(
            &event,
            Some(Ok(TermEvent::Mouse(m))) if m.kind == crossterm::event::MouseEventKind::Moved
        );
        match event {
            Some(Ok(event)) => {
                on_terminal_event(
                    self.engine,
                    &mut self.state,
                    self.session,
                    event,
                    self.clock,
                )?;
            }
            // The terminal is gone: stop as if the operator had confirmed.
            Some(Err(error)) => {
                tracing::warn!("cannot read the keyboard: {error}");
                self.lose_terminal()?;
            }
            None => self.lose_terminal()?,
        }
        self.frames.dirty |= !moved;
        Ok(())
    }

    /// No terminal any more (hung up, unreadable, undrawable): the run stops the way the
    /// operator would stop it.
    fn lose_terminal(&mut self) -> Result<()> {
        self.events = None;
        stop_for_good(self.engine, &mut self.state, self.clock)
    }

    /// The end of the turn: the engine's tick and events shown, the replay's clock, and whether
    /// the batch finished.
    fn end_turn(&mut self) -> Result<()> {
        let now = self.clock.at;
        let engine_events = self.driver.end_turn(self.engine, self.clock)?;
        if let Some(replay) = self.state.replay.as_mut()
            && replay.view.tick(now)
        {
            self.frames.dirty = true;
        }
        for event in engine_events {
            on_engine_event(self.engine, &mut self.state, self.session, &event, now)?;
            self.frames.dirty = true;
        }
        self.notice_finished(now);
        Ok(())
    }

    /// A task waiting for the operator's answers is not done: the clock runs on and the bar
    /// says what it waits for.
    fn notice_finished(&mut self, now: Instant) {
        let state = &mut self.state;
        if self.engine.view().is_done()
            && !self.engine.view().any_needs_input()
            && state.leaving == Leaving::No
        {
            if state.finished.is_none() {
                state.finished = Some(now);
                tracing::info!("batch finished");
                self.frames.dirty = true;
            }
            // Nobody may be looking: a background dashboard ends with its batch, as headless
            // does; attached terminals are told so.
            if state.background {
                state.leaving = Leaving::Now;
            }
        } else if state.finished.take().is_some() {
            self.frames.dirty = true;
        }
    }

    /// Whether the loop ends now.
    fn leaves(&self) -> bool {
        match self.state.leaving {
            Leaving::Now => true,
            Leaving::Stopping => self.engine.view().is_done(),
            Leaving::No => false,
        }
    }

    /// Draws a frame when one is due and there is a terminal to draw on.
    fn draw_if_due(&mut self) -> Result<()> {
        let now = self.clock.at;
        let frame_due = self.frames.next_at(now).is_some_and(|at| now >= at);
        if self.events.is_none() || !frame_due {
            return Ok(());
        }
        match self.draw()? {
            Ok((first, shown)) => {
                self.frames.focused = first.filter(|t| shown.contains(t));
                self.frames.visible = shown;
            }
            // Mostly a terminal that hung up before its signal arrived.
            Err(error) => {
                tracing::warn!("{error:#}; stopping the run");
                self.lose_terminal()?;
            }
        }
        self.frames.dirty = false;
        self.frames.tiles_dirty = false;
        self.frames.last_draw = Some(now);
        Ok(())
    }

    /// Lays the frame out (the engine gets the layout's sizes), then draws it from what it
    /// reads: the first pane in order, and the panes shown. The inner error is the terminal's
    /// (it cannot be drawn on); the outer one ends the dashboard.
    fn draw(&mut self) -> Result<Result<(Option<usize>, HashSet<usize>)>> {
        let now = self.clock.at;
        let terminal = &self.session.terminal;
        let layout = match frame::lay_out(terminal, self.engine, &mut self.state, self.clock) {
            Ok(layout) => layout,
            Err(error) => return Ok(Err(error)),
        };
        // Resizing panes can change what the detectors see (a prompt redrawn).
        for event in self.driver.drain(self.engine) {
            on_engine_event(self.engine, &mut self.state, self.session, &event, now)?;
        }
        let first = layout.visible.first().copied();
        let terminal = &mut self.session.terminal;
        let shown = frame::draw(terminal, self.engine, &mut self.state, &layout, now);
        Ok(shown.map(|shown| (first, shown)))
    }
}

/// Starts the first agents together, each at the size of the pane it will be drawn in once
/// they all run (the first one focused, the others tiled in start order).
pub(super) fn start_at_pane_sizes(engine: &mut Engine, area: Rect, clock: Now) -> Result<()> {
    let now = clock.at;
    let tasks = engine.view().file().tasks();
    let startable = engine
        .scoped_tasks()
        .into_iter()
        .filter(|&i| {
            tasks[i].status.is_runnable() && engine.view().retry_at(i).is_none_or(|at| at <= now)
        })
        .count();
    let panes = startable.min(engine.view().concurrency());
    let sizes = layout::first_launch_sizes(area, false, panes);
    engine.apply(Command::SetLaunchSizes(sizes), clock)?;
    engine.apply(Command::FillSlots, clock)?;
    Ok(())
}

/// Looks at a PTY report before the engine takes it (the attempt may conclude on it, and its
/// screen go with it); says how soon the screen should show it.
fn look_at_report(
    engine: &Engine,
    state: &mut UiState,
    report: &EngineInbox,
    visible: &HashSet<usize>,
    focused: Option<usize>,
) -> Redraw {
    let task = engine.task_of_report(report);
    let output = matches!(report, EngineInbox::Output { .. });
    if !output && let Some(live) = task.and_then(|t| engine.view().live_attempt(t)) {
        state.keep_final_screen(live.task(), live.number(), live.attempt().screen().vt());
    }
    redraw_for(output, task, visible, focused)
}

/// How soon a report of `task` shows: output in the focused pane and every other report (an
/// exit, a prompt's end) at once, output in a tile at the tiles' rate, hidden output never.
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

/// When the next frame may be drawn, seen at `now`: `FRAME` after the last one when the
/// operator's view changed (`dirty`), `TILE_FRAME` after it when only tiles did, never with
/// nothing to draw.
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

/// A signal (INT, TERM, HUP) or a lost keyboard: stop the run as if the operator had confirmed;
/// a second time kills the agents at once.
fn stop_for_good(engine: &mut Engine, state: &mut UiState, clock: Now) -> Result<()> {
    if state.leaving == Leaving::Stopping {
        engine.apply(Command::KillAll, clock)?;
    } else if engine.view().is_done() {
        state.leaving = Leaving::Now;
    } else {
        state.mode = Mode::Normal;
        engine.apply(Command::Stop, clock)?;
        state.leaving = Leaving::Stopping;
    }
    Ok(())
}

fn on_terminal_event(
    engine: &mut Engine,
    state: &mut UiState,
    session: &mut Session,
    event: TermEvent,
    clock: Now,
) -> Result<()> {
    let now = clock.at;
    match event {
        TermEvent::Key(key) if super::keys::is_press(&key) => {
            let size = session.terminal.size().unwrap_or_default();
            let area = Rect::new(0, 0, size.width, size.height);
            actions::on_key(engine, state, &key, area, clock)
        }
        TermEvent::Paste(text) => actions::on_paste(engine, state, &text, clock),
        TermEvent::Mouse(mouse) => {
            let size = session.terminal.size().unwrap_or_default();
            let area = Rect::new(0, 0, size.width, size.height);
            super::mouse::on_mouse(engine, state, &mouse, area, now);
            Ok(())
        }
        _ => Ok(()),
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
