//! The dashboard's event loop: the headless loop's shape (the driver's PTY reports and control
//! commands, the engine's next wakeup, signals; `run::driver` owns the shared turn) plus the
//! keyboard and a frame timer. It waits on channels and timers only, and draws only when
//! something visible changed: at most once per frame interval for the operator's keys, the
//! focused pane and the run's events, at most once per `TILE_FRAME` when only the tiles' output
//! changed (a fleet's tiles would otherwise redraw the whole dashboard at the full frame rate).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use crossterm::event::{Event as TermEvent, EventStream};
use futures::StreamExt;
use ratatui::layout::Rect;
use tokio::signal::unix::{SignalKind, signal};

use super::actions;
use super::engine_events::on_engine_event;
use super::frame;
use super::layout;
use super::state::{Leaving, Mode, UiState};
use crate::run::clock::Now;
use crate::run::driver::{Driver, Input};
use crate::run::engine::Engine;
use crate::run::engine::inbox::EngineInbox;
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
        tasks = engine.store().file().tasks().len(),
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
            engine.abandon(&format!("{error:#}"), Now::read());
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

async fn next_event(events: &mut Option<EventStream>) -> Option<std::io::Result<TermEvent>> {
    match events {
        Some(stream) => stream.next().await,
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

async fn drive(engine: &mut Engine, driver: &mut Driver, session: &mut Session) -> Result<i32> {
    // Dropped when the terminal is gone: its reader thread would spin on a hung-up terminal.
    let mut events = Some(EventStream::new());
    let listen = |kind| signal(kind).wrap_err("cannot listen for signals");
    let (mut interrupt, mut terminate) = (
        listen(SignalKind::interrupt())?,
        listen(SignalKind::terminate())?,
    );
    let mut hangup = listen(SignalKind::hangup())?;
    // The time of each turn, read once when it starts, for the engine and the dashboard alike.
    let mut clock = Now::read();
    let mut state = UiState::new(clock.at);
    // https://no-color.org: set and not empty.
    state.no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    state.background = crate::run::background::in_background();
    let mut visible: HashSet<usize> = HashSet::new();
    // The task whose pane is focused, when it shows.
    let mut focused: Option<usize> = None;
    // Something to draw at the full frame rate; only tiles to draw, at `TILE_FRAME`.
    let mut dirty = true;
    let mut tiles_dirty = false;
    let mut last_draw: Option<Instant> = None;
    let size = session.terminal.size().unwrap_or_default();
    start_at_pane_sizes(engine, Rect::new(0, 0, size.width, size.height), clock)?;
    loop {
        let now = clock.at;
        let expiry = state.expire(now);
        let ticking = state.finished.is_none() && state.leaving != Leaving::Now;
        let tick = ticking.then(|| state.next_second(now));
        let redraw_at = [expiry, tick].into_iter().flatten().min();
        // After a hang-up there is no terminal to draw on; the agents are still stopped properly.
        let frame_at = next_frame(dirty, tiles_dirty, last_draw, now).filter(|_| events.is_some());
        let replay_at = state.replay.as_ref().and_then(|r| r.view.next_wakeup(now));
        let wake = [engine.next_wakeup(now), replay_at]
            .into_iter()
            .flatten()
            .min();
        // In this order when several are ready: a signal, the operator's key, then output, so
        // a fleet's output never keeps a key waiting for more than one turn of the loop.
        let woke = tokio::select! {
            biased;
            _ = interrupt.recv() => Woke::Signal,
            _ = terminate.recv() => Woke::Signal,
            _ = hangup.recv() => Woke::HangUp,
            event = next_event(&mut events) => Woke::Terminal(event),
            input = driver.next() => Woke::Driver(input),
            () = sleep_until(wake) => Woke::Timer,
            () = sleep_until(redraw_at) => Woke::Redraw,
            () = sleep_until(frame_at) => Woke::Timer,
        };
        clock = Now::read();
        let now = clock.at;
        match woke {
            Woke::Driver(input) => {
                let taken = driver.take(engine, input, clock, |engine, report| {
                    match on_report(engine, &mut state, report, &visible, focused, clock)? {
                        Redraw::Now => dirty = true,
                        Redraw::Tile => tiles_dirty = true,
                        Redraw::No => {}
                    }
                    Ok(())
                })?;
                dirty |= taken.changed;
                // `batch.stop` through the control socket: as the operator's confirmed stop.
                if taken.stop && state.leaving == Leaving::No {
                    stop_for_good(engine, &mut state, clock)?;
                }
            }
            Woke::Terminal(event) => {
                // The pointer moving over the dashboard changes nothing on it.
                let moved = matches!(
                    &event,
                    Some(Ok(TermEvent::Mouse(m))) if m.kind == crossterm::event::MouseEventKind::Moved
                );
                match event {
                    Some(Ok(event)) => {
                        on_terminal_event(engine, &mut state, session, event, clock)?;
                    }
                    // The terminal is gone: stop as if the operator had confirmed.
                    Some(Err(error)) => {
                        tracing::warn!("cannot read the keyboard: {error}");
                        events = None;
                        stop_for_good(engine, &mut state, clock)?;
                    }
                    None => {
                        events = None;
                        stop_for_good(engine, &mut state, clock)?;
                    }
                }
                dirty |= !moved;
            }
            Woke::Timer => {}
            Woke::Redraw => dirty = true,
            Woke::Signal => stop_for_good(engine, &mut state, clock)?,
            Woke::HangUp => {
                events = None;
                stop_for_good(engine, &mut state, clock)?;
            }
        }
        let engine_events = driver.end_turn(engine, clock)?;
        if let Some(replay) = state.replay.as_mut()
            && replay.view.tick(now)
        {
            dirty = true;
        }
        for event in engine_events {
            on_engine_event(engine, &mut state, session, &event, now)?;
            dirty = true;
        }
        // A task waiting for the operator's answers is not done: the clock runs on and the
        // bar says what it waits for.
        if engine.is_done() && !engine.any_needs_input() && state.leaving == Leaving::No {
            if state.finished.is_none() {
                state.finished = Some(now);
                tracing::info!("batch finished");
                dirty = true;
            }
            // Nobody may be looking: a background dashboard ends with its batch, as headless
            // does; attached terminals are told so.
            if state.background {
                state.leaving = Leaving::Now;
            }
        } else if state.finished.take().is_some() {
            dirty = true;
        }
        match state.leaving {
            Leaving::Now => break,
            Leaving::Stopping if engine.is_done() => break,
            _ => {}
        }
        let frame_due = next_frame(dirty, tiles_dirty, last_draw, now).is_some_and(|at| now >= at);
        if events.is_some() && frame_due {
            // Laid out first: the engine gets the layout's sizes, then the frame is drawn from
            // what it reads.
            let drawn = match frame::lay_out(&session.terminal, engine, &mut state, clock) {
                Ok(layout) => {
                    // Resizing panes can change what the detectors see (a prompt redrawn).
                    for event in driver.drain(engine) {
                        on_engine_event(engine, &mut state, session, &event, now)?;
                    }
                    let first = layout.visible.first().copied();
                    frame::draw(&mut session.terminal, engine, &mut state, &layout, now)
                        .map(|shown| (first, shown))
                }
                Err(error) => Err(error),
            };
            match drawn {
                Ok((first, shown)) => {
                    focused = first.filter(|t| shown.contains(t));
                    visible = shown;
                }
                // Mostly a terminal that hung up before its signal arrived: without a screen,
                // the run stops the way the operator would stop it.
                Err(error) => {
                    tracing::warn!("{error:#}; stopping the run");
                    events = None;
                    stop_for_good(engine, &mut state, clock)?;
                }
            }
            dirty = false;
            tiles_dirty = false;
            last_draw = Some(now);
        }
    }
    tracing::info!(code = engine.exit_code(), "dashboard left");
    engine.settle_writes(Now::read(), crate::run::engine::LAST_WRITE_WAIT)?;
    Ok(engine.exit_code())
}

/// Starts the first agents together, each at the size of the pane it will be drawn in once
/// they all run (the first one focused, the others tiled in start order).
pub(super) fn start_at_pane_sizes(engine: &mut Engine, area: Rect, clock: Now) -> Result<()> {
    let now = clock.at;
    let tasks = engine.store().file().tasks();
    let startable = engine
        .scoped_tasks()
        .into_iter()
        .filter(|&i| tasks[i].status.is_runnable() && engine.retry_at(i).is_none_or(|at| at <= now))
        .count();
    let panes = startable.min(engine.concurrency());
    engine.set_launch_sizes(layout::first_launch_sizes(area, false, panes));
    engine.fill_slots(clock)
}

/// Feeds a PTY report to the engine; says how soon the screen should show it.
fn on_report(
    engine: &mut Engine,
    state: &mut UiState,
    report: EngineInbox,
    visible: &HashSet<usize>,
    focused: Option<usize>,
    clock: Now,
) -> Result<Redraw> {
    let task = engine.task_of_report(&report);
    let output = matches!(report, EngineInbox::Output { .. });
    // The attempt may conclude on this report, and its screen go with it.
    if !output && let Some(live) = task.and_then(|t| engine.live_for_task(t)) {
        state.keep_final_screen(live.task, live.number, live.attempt.screen().vt());
    }
    engine.on_report(report, clock)?;
    Ok(redraw_for(output, task, visible, focused))
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
        engine.kill_all();
    } else if engine.is_done() {
        state.leaving = Leaving::Now;
    } else {
        state.mode = Mode::Normal;
        engine.stop(clock)?;
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
