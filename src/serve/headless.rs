//! Headless mode: the driver's loop (`serve::driver`) with one line per event on stdout and a
//! summary table at the end. Ctrl-C (or TERM, or HUP) stops the run (tasks in flight go back to
//! `retryable`); a second one kills the agents at once. The control socket works here as in the
//! dashboard; `batch.stop` counts as a first Ctrl-C. The printing goes through a `Console`: a
//! reader that leaves (`| head`) ends only the printing, never the run.

use color_eyre::eyre::Result;

use super::driver::{self, Asked, Asks, Driver, Face, Stop};
use super::summary;
use crate::run::clock::Now;
use crate::run::console::Console;
use crate::run::engine::command::Command;
use crate::run::engine::{BatchView, Engine, EngineEvent};
use crate::run::event_text::describe;
use crate::run::jobs::Outbox;

/// Runs the batch to the end; returns herd's exit code.
pub async fn run(mut engine: Engine, mut driver: Driver) -> Result<i32> {
    let mut face = Headless {
        out: Console::stdout(),
        interrupts: 0,
    };
    driver::run(&mut engine, &mut driver, &mut face).await?;
    face.out.text(&format!(
        "\n{}",
        summary::table(engine.view(), summary::stdout_width())
    ));
    Ok(engine.view().exit_code())
}

/// The headless face: its stdout, and how many times it was asked to stop.
struct Headless {
    out: Console<std::io::Stdout>,
    interrupts: u32,
}

impl Headless {
    /// The first stop ends the running agents, any later one kills them.
    fn stop(&mut self, now: Now) -> Vec<Asked<()>> {
        self.interrupts += 1;
        let command = if self.interrupts == 1 {
            self.out.line(&format!(
                "{}  stopping: ending running agents (Ctrl-C again to kill them now)",
                clock(now)
            ));
            Command::Stop
        } else {
            Command::KillAll
        };
        vec![Asked { command, note: () }]
    }
}

impl Face for Headless {
    /// Headless reads nothing of its own, and starts no worker.
    type Input = ();
    type Note = ();
    type Reply = ();

    fn start(&mut self, _batch: &dyn BatchView, _replies: Outbox<()>, _now: Now) -> Asks<Self> {
        vec![Asked {
            command: Command::FillSlots,
            note: (),
        }]
    }

    /// TERM and HUP (a closed terminal, a supervisor stopping herd) stop the run like Ctrl-C;
    /// `batch.stop` through the control socket counts as a first Ctrl-C, never a second.
    fn on_stop(&mut self, _batch: &dyn BatchView, stop: Stop, now: Now) -> Asks<Self> {
        match stop == Stop::Asked && self.interrupts > 0 {
            true => Vec::new(),
            false => self.stop(now),
        }
    }

    fn show(&mut self, _batch: &dyn BatchView, events: &[EngineEvent], now: Now) -> Result<()> {
        for event in events {
            if let Some(line) = describe(event) {
                self.out.line(&format!("{}  {line}", clock(now)));
            }
        }
        Ok(())
    }

    fn leaves(&self, batch: &dyn BatchView) -> bool {
        batch.is_done()
    }
}

/// `now` as the local time of day, for the start of each line.
fn clock(now: Now) -> String {
    now.wall
        .to_zoned(jiff::tz::TimeZone::system())
        .strftime("%H:%M:%S")
        .to_string()
}
