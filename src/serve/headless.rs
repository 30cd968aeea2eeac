//! Headless mode: the engine's event loop with one line per event on stdout and a summary table
//! at the end. Ctrl-C (or TERM, or HUP) stops the run (tasks in flight go back to `retryable`);
//! a second one kills the agents at once. The turn itself is the driver's (`run::driver`), so
//! the control socket works here as in the dashboard; `batch.stop` counts as a first Ctrl-C.
//! The printing goes through a `Console`: a reader that leaves (`| head`) ends only the
//! printing, never the run.

use std::time::Instant;

use color_eyre::eyre::Result;
use tokio::signal::unix::{Signal, SignalKind, signal};

use super::driver::Driver;
use super::summary;
use crate::run::clock::Now;
use crate::run::console::Console;
use crate::run::engine::command::Command;
use crate::run::engine::{Engine, EngineEvent};
pub use crate::run::event_text::describe;

/// Runs the batch to the end; returns herd's exit code.
pub async fn run(mut engine: Engine, driver: Driver) -> Result<i32> {
    let outcome = drive(&mut engine, driver).await;
    if let Err(error) = &outcome {
        tracing::error!("herd cannot go on: {error:#}");
        let reason = format!("{error:#}");
        // Abandoning carries out no effect that can fail.
        if let Err(error) = engine.apply(Command::Abandon { reason }, Now::read()) {
            tracing::error!("cannot abandon the run: {error:#}");
        }
    }
    outcome
}

async fn drive(engine: &mut Engine, mut driver: Driver) -> Result<i32> {
    let mut out = Console::stdout();
    let mut interrupts = 0u32;
    // TERM and HUP (a closed terminal, a supervisor stopping herd) stop the run like Ctrl-C.
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    // The time of each turn, read once when it starts.
    let mut now = Now::read();
    engine.apply(Command::FillSlots, now)?;
    print_events(&driver.drain(engine), &mut out, now);
    while !engine.view().is_done() {
        let wake = engine.next_wakeup(now.at);
        let woke = tokio::select! {
            input = driver.next() => Some(Some(input)),
            () = sleep_until(wake) => Some(None),
            _ = stop_signal(&mut interrupt, &mut terminate, &mut hangup) => None,
        };
        now = Now::read();
        let stop = match woke {
            Some(Some(input)) => {
                let taken = driver.take(engine, input, now, |_, _| {})?;
                // `batch.stop` through the control socket: as a first Ctrl-C, never a second.
                taken.stop && interrupts == 0
            }
            Some(None) => false,
            None => true,
        };
        if stop {
            interrupts += 1;
            if interrupts == 1 {
                out.line(&format!(
                    "{}  stopping: ending running agents (Ctrl-C again to kill them now)",
                    clock(now)
                ));
                engine.apply(Command::Stop, now)?;
            } else {
                engine.apply(Command::KillAll, now)?;
            }
        }
        let events = driver.end_turn(engine, now)?;
        print_events(&events, &mut out, now);
    }
    // The summary shows what is on disk.
    let now = Now::read();
    engine.settle_writes(now, crate::run::engine::LAST_WRITE_WAIT)?;
    print_events(&driver.drain(engine), &mut out, now);
    out.text(&format!(
        "\n{}",
        summary::table(engine, summary::stdout_width())
    ));
    Ok(engine.view().exit_code())
}

/// Ctrl-C, TERM or HUP, whichever comes first.
/// The listeners live for the whole run: a fresh `ctrl_c()` per turn of the loop would miss a
/// Ctrl-C that arrives while the loop is busy between two waits.
async fn stop_signal(interrupt: &mut Signal, terminate: &mut Signal, hangup: &mut Signal) {
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
        _ = hangup.recv() => {}
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending::<()>().await,
    }
}

/// `now` as the local time of day, for the start of each line.
fn clock(now: Now) -> String {
    now.wall
        .to_zoned(jiff::tz::TimeZone::system())
        .strftime("%H:%M:%S")
        .to_string()
}

fn print_events(events: &[EngineEvent], out: &mut Console<std::io::Stdout>, now: Now) {
    for event in events {
        if let Some(line) = describe(event) {
            out.line(&format!("{}  {line}", clock(now)));
        }
    }
}
